"""Keras's geometric image ops: affine_transform, perspective_transform, elastic_transform.

Each output pixel reads the input image at a point its transform gives, by
`image_sampling.sample`: the nearest pixel (`"nearest"`, halves rounded away
from zero) or a bilinear mix of the four around it (`"bilinear"`), with
`fill_mode` saying what lies outside the image (`"constant"` with
`fill_value`, `"nearest"`, `"wrap"`, `"reflect"`, `"mirror"`; see
`image_sampling`). The transforms map output pixels to input points (the
inverse of moving the image). All are differentiable with respect to the
images, not the transforms, as in Keras.

    >>> image = np.arange(3.0, dtype="float32").reshape(1, 3, 1)
    >>> shift = np.array([1.0, 0, 1, 0, 1, 0, 0, 0])  # reads x + 1: moves content left
    >>> mk.ops.image.affine_transform(image, shift)[..., 0].numpy()
    array([[1., 2., 0.]], dtype=float32)
"""

import numpy as np

from minikeras import config
from minikeras.ops.core import shape_of
from minikeras.ops.creation import convert_to_tensor
from minikeras.ops.image_filters import gaussian_blur
from minikeras.ops.image_sampling import FILL_MODES, check_choice, host_values, sample
from minikeras.ops.shape import expand_dims, squeeze, transpose

__all__ = ["affine_transform", "elastic_transform", "homographies", "perspective_transform"]

INTERPOLATIONS = {"nearest": 0, "bilinear": 1}


def _batch_last(op, images, data_format):
    """`images` as a channels-last 4-D Tensor, and how to give a result back in their layout."""
    shape = shape_of(images)
    if len(shape) not in (3, 4):
        raise ValueError(
            f"{op}: images must be 3-D (one image) or 4-D (a batch), got shape {tuple(shape)}"
        )
    first = config.standardize_data_format(data_format, op) == "channels_first"
    x = convert_to_tensor(images)
    single = len(shape) == 3
    x = expand_dims(x, 0) if single else x
    x = transpose(x, (0, 2, 3, 1)) if first else x

    def back(result):
        result = transpose(result, (0, 3, 1, 2)) if first else result
        return squeeze(result, 0) if single else result

    return x, back


def _per_image(op, name, values, batch, width):
    """`(batch, width)` rows from one row or one per image."""
    values = values.reshape(1, -1) if values.ndim == 1 else values
    if values.ndim != 2 or values.shape[1] != width or len(values) not in (1, batch):
        raise ValueError(
            f"{op}: {name} must be ({width},) or (batch, {width}) for a batch of {batch} "
            f"images, got shape {values.shape}"
        )
    return np.broadcast_to(values, (batch, width))


def _warp(images, rows, cols, interpolation, fill_mode, fill_value):
    return sample(images, [rows, cols], INTERPOLATIONS[interpolation], fill_mode, fill_value, True)


def _projective_points(transforms, height, width):
    """The input `(rows, cols)` each output pixel reads, by rows `[a0 a1 a2 b0 b1 b2 c0 c1]`."""
    t = transforms[:, :, None, None]
    ys, xs = np.meshgrid(np.arange(height), np.arange(width), indexing="ij")
    scale = t[:, 6] * xs + t[:, 7] * ys + 1.0
    cols = (t[:, 0] * xs + t[:, 1] * ys + t[:, 2]) / scale
    rows = (t[:, 3] * xs + t[:, 4] * ys + t[:, 5]) / scale
    return rows, cols


def affine_transform(
    images, transform, interpolation="bilinear", fill_mode="constant", fill_value=0,
    data_format=None,
):  # fmt: skip
    """Resamples images through a projective map each, as `keras.ops.image.affine_transform`.

    With the row `[a0, a1, a2, b0, b1, b2, c0, c1]`, output pixel `(x, y)`
    (column, row) reads the input at `((a0 x + a1 y + a2) / k, (b0 x + b1 y +
    b2) / k)`, `k = c0 x + c1 y + 1`.

    Differs from Keras: `c0` and `c1` divide as written above, as Keras's
    TensorFlow backend does (its other backends ignore them); one transform
    row serves every image of a batch (Keras's jax backend wants one per
    image); float64 images stay float64.

    Args:
        images: a 4-D batch `(batch, height, width, channels)` or one 3-D
            image (channels first with `data_format="channels_first"`).
        transform: `(8,)` or `(batch, 8)` (see above); not differentiated.
        interpolation: `"bilinear"` (default) or `"nearest"`.
        fill_mode: `"constant"` (default), `"nearest"`, `"wrap"`, `"reflect"`
            or `"mirror"`.
        fill_value: the value outside the image with `"constant"` (default 0).
        data_format: `"channels_last"`, `"channels_first"`, or None (default:
            `mk.config.image_data_format()`).

    Returns:
        A Tensor of the images' shape and dtype (integers rounded).

    Raises:
        ValueError: if `images` is not 3-D or 4-D, `transform` has not 8
            entries per row (or not one row per image), or an option is not valid.

    Example:
        >>> image = np.arange(4.0, dtype="float32").reshape(2, 2, 1)
        >>> flip = np.array([-1.0, 0, 1, 0, 1, 0, 0, 0])  # reads column 1 - x
        >>> mk.ops.image.affine_transform(image, flip)[..., 0].numpy()
        array([[1., 0.],
               [3., 2.]], dtype=float32)
    """
    op = "affine_transform"
    check_choice(op, "interpolation", interpolation, tuple(INTERPOLATIONS))
    check_choice(op, "fill_mode", fill_mode, FILL_MODES)
    x, back = _batch_last(op, images, data_format)
    batch, height, width, _ = x.shape
    transforms = _per_image(op, "transform", host_values(op, "transform", transform), batch, 8)
    rows, cols = _projective_points(transforms, height, width)
    return back(_warp(x, rows, cols, interpolation, fill_mode, float(fill_value)))


def homographies(start_points, end_points):
    """The projective rows `[a0 .. c1]` mapping each `end_points` quad onto `start_points`.

    Solves, per batch item, the 8 equations `start = map(end)` of the four
    corners (as Keras's perspective_transform, in float64 here).

    Args:
        start_points: `(batch, 4, 2)` points `(x, y)` of the input image.
        end_points: `(batch, 4, 2)` points where they land in the output.

    Returns:
        A float64 numpy array `(batch, 8)`, rows for `affine_transform`.

    Example:
        >>> square = np.array([[[0.0, 0], [1, 0], [0, 1], [1, 1]]])
        >>> mk.ops.image_transforms.homographies(square, square + 2).round(6)
        array([[ 1.,  0., -2.,  0.,  1., -2.,  0.,  0.]])
    """
    start, end = np.asarray(start_points, np.float64), np.asarray(end_points, np.float64)
    sx, sy, ex, ey = start[..., 0], start[..., 1], end[..., 0], end[..., 1]
    zeros, ones = np.zeros_like(ex), np.ones_like(ex)
    x_rows = np.stack([ex, ey, ones, zeros, zeros, zeros, -sx * ex, -sx * ey], axis=-1)
    y_rows = np.stack([zeros, zeros, zeros, ex, ey, ones, -sy * ex, -sy * ey], axis=-1)
    system = np.concatenate([x_rows, y_rows], axis=1)
    targets = np.concatenate([sx, sy], axis=-1)[..., None]
    return np.linalg.solve(system, targets)[..., 0]


def perspective_transform(
    images, start_points, end_points, interpolation="bilinear", fill_value=0, data_format=None
):
    """Warps images so `start_points` land on `end_points`, as Keras's `perspective_transform`.

    The four `start_points` (corners of a quad, `(x, y)` each) of the input
    move to the four `end_points` of the output; other pixels follow the
    projective map between the quads (`homographies`), reading `fill_value`
    outside the input.

    Differs from Keras: one set of points serves every image of a batch;
    float64 images stay float64.

    Args:
        images: a 4-D batch `(batch, height, width, channels)` or one 3-D
            image (channels first with `data_format="channels_first"`).
        start_points: `(4, 2)` or `(batch, 4, 2)` points of the input.
        end_points: where they land, the same shape.
        interpolation: `"bilinear"` (default) or `"nearest"`.
        fill_value: the value outside the input (default 0).
        data_format: `"channels_last"`, `"channels_first"`, or None (default:
            `mk.config.image_data_format()`).

    Returns:
        A Tensor of the images' shape and dtype.

    Raises:
        ValueError: if `images` is not 3-D or 4-D, the points are not
            `(4, 2)` per image or differ in shape, or an option is not valid.

    Example:
        >>> image = np.arange(9.0, dtype="float32").reshape(3, 3, 1)
        >>> corners = np.array([[0.0, 0], [2, 0], [0, 2], [2, 2]])
        >>> mk.ops.image.perspective_transform(image, corners, corners[:, ::-1])[..., 0].numpy()
        array([[0., 3., 6.],
               [1., 4., 7.],
               [2., 5., 8.]], dtype=float32)
    """
    op = "perspective_transform"
    check_choice(op, "interpolation", interpolation, tuple(INTERPOLATIONS))
    start = host_values(op, "start_points", start_points)
    end = host_values(op, "end_points", end_points)
    for name, points in (("start_points", start), ("end_points", end)):
        if points.shape[-2:] != (4, 2) or points.ndim not in (2, 3):
            raise ValueError(f"{op}: {name} must be (4, 2) or (batch, 4, 2), got {points.shape}")
    if start.shape != end.shape:
        raise ValueError(
            f"{op}: start_points and end_points must have one shape, got {start.shape} and "
            f"{end.shape}"
        )
    x, back = _batch_last(op, images, data_format)
    batch, height, width, _ = x.shape
    transforms = homographies(start.reshape(-1, 4, 2), end.reshape(-1, 4, 2))
    transforms = _per_image(op, "start_points", transforms, batch, 8)
    rows, cols = _projective_points(transforms, height, width)
    return back(_warp(x, rows, cols, interpolation, "constant", float(fill_value)))


def elastic_transform(
    images, alpha=20.0, sigma=5.0, interpolation="bilinear", fill_mode="reflect",
    fill_value=0.0, seed=None, data_format=None,
):  # fmt: skip
    """Warps images by a random smooth displacement field, as `keras.ops.image.elastic_transform`.

    Two fields of standard normal noise times `sigma`, one per axis and image,
    are blurred by `gaussian_blur` with a kernel of `int(6 * sigma) | 1`
    taps and deviation `sigma`; output pixel `(x, y)` reads the input at
    `(x + alpha * dx, y + alpha * dy)`.

    Differs from Keras: the noise is minikeras's (`seed` as in
    `mk.random`), so the values are not Keras's; the two fields are drawn
    independently (Keras's jax backend draws them from one key, so equal).

    Args:
        images: float images, a 4-D batch `(batch, height, width, channels)`
            or one 3-D image (channels first with `data_format="channels_first"`).
        alpha: the displacement's scale, in pixels per unit of blurred noise.
        sigma: the noise's scale and the blur's deviation, > 0.
        interpolation: `"bilinear"` (default) or `"nearest"`.
        fill_mode: `"reflect"` (default), `"constant"`, `"nearest"`, `"wrap"`
            or `"mirror"`.
        fill_value: the value outside the image with `"constant"`.
        seed: None, an int or a `mk.random.SeedGenerator`.
        data_format: `"channels_last"`, `"channels_first"`, or None (default:
            `mk.config.image_data_format()`).

    Returns:
        A Tensor of the images' shape and dtype.

    Raises:
        ValueError: if `images` is not 3-D or 4-D or not of a float dtype,
            `sigma` is not positive, or an option is not valid.

    Example:
        >>> images = np.random.default_rng(0).random((2, 8, 8, 3)).astype("float32")
        >>> mk.ops.image.elastic_transform(images, alpha=2.0, sigma=1.0, seed=1).shape
        (2, 8, 8, 3)
    """
    from minikeras.random import rng_for  # (random is above ops: reached at call time)

    op = "elastic_transform"
    check_choice(op, "interpolation", interpolation, tuple(INTERPOLATIONS))
    check_choice(op, "fill_mode", fill_mode, FILL_MODES)
    if isinstance(sigma, bool) or not float(sigma) > 0:
        raise ValueError(f"{op}: sigma must be a number > 0, got {sigma!r}")
    x, back = _batch_last(op, images, data_format)
    if not np.issubdtype(np.dtype(x.dtype), np.floating):
        raise ValueError(f"{op}: images must have a float dtype, got {x.dtype}")
    batch, height, width, _ = x.shape
    sigma, alpha = float(sigma), float(alpha)
    noise = rng_for(seed, op).standard_normal((batch, height, width, 2)) * sigma
    size = int(6 * sigma) | 1
    fields = gaussian_blur(noise, (size, size), (sigma, sigma), "channels_last").numpy()
    ys, xs = np.meshgrid(np.arange(height), np.arange(width), indexing="ij")
    cols, rows = xs + alpha * fields[..., 0], ys + alpha * fields[..., 1]
    return back(_warp(x, rows, cols, interpolation, fill_mode, float(fill_value)))
