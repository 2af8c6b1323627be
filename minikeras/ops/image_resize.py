"""Keras's `keras.ops.image.resize`: nearest, bilinear, bicubic and Lanczos, antialiased or
not, to the target's aspect ratio by cropping or padding first.

A resize is separable: each spatial axis is multiplied by an `(out, in)`
matrix (`interpolation_matrix`), as jax's `jax.image.resize` (Keras's jax
backend) computes it. Output pixel `i` is centered on input position
`s = (i + 0.5) * in / out - 0.5` (half-pixel centers); input pixel `j`
weighs `kernel(|s - j| / k)`, the weights of a row divided by their sum (so
the border renormalizes), where the kernel is the triangle `1 - |x|`
(`"bilinear"`), Keys's cubic with `a = -0.5` (`"bicubic"`) or the Lanczos
window of radius 3 or 5, and `k` is 1, or with `antialias` the shrink factor
`in / out` when shrinking (a wider kernel, which averages the pixels it
skips). `"nearest"` takes input pixel `floor((i + 0.5) * in / out)`.

    >>> mk.ops.image_resize.interpolation_matrix(2, 4, "bilinear", antialias=True)
    array([[0.42857143, 0.42857143, 0.14285715, 0.        ],
           [0.        , 0.14285715, 0.42857143, 0.42857143]], dtype=float32)
"""

import numpy as np

from minikeras import config
from minikeras.ops.axes import moveaxis
from minikeras.ops.comparison import clip
from minikeras.ops.core import shape_of
from minikeras.ops.creation import cast, convert_to_tensor
from minikeras.ops.elementary import round
from minikeras.ops.matrix_products import einsum, tensordot
from minikeras.ops.shape import pad

__all__ = [
    "INTERPOLATIONS",
    "aspect_window",
    "interpolation_matrix",
    "resize",
    "scale_and_translate",
]

INTERPOLATIONS = ("bilinear", "nearest", "bicubic", "lanczos3", "lanczos5")


def _cubic(x):  # Keys (1981), a = -0.5
    near = ((1.5 * x - 2.5) * x) * x + 1.0
    far = ((-0.5 * x + 2.5) * x - 4.0) * x + 2.0
    return np.where(x >= 2.0, 0.0, np.where(x >= 1.0, far, near))


def _lanczos(radius):
    def kernel(x):
        with np.errstate(divide="ignore", invalid="ignore"):
            y = radius * np.sin(np.pi * x) * np.sin(np.pi * x / radius) / (np.pi * x) ** 2
        return np.where(x > radius, 0.0, np.where(x > 1e-3, y, 1.0))

    return kernel


_KERNELS = {
    "bilinear": lambda x: np.maximum(0.0, 1.0 - x),
    "bicubic": _cubic,
    "lanczos3": _lanczos(3),
    "lanczos5": _lanczos(5),
}


def interpolation_matrix(out_size, in_size, interpolation, antialias=False, scale=None,
                         translation=0.0):  # fmt: skip
    """The `(out_size, in_size)` matrix that resizes one axis (see the module docstring).

    With `scale` and `translation` (as `scale_and_translate` takes them),
    output pixel `i` is centered on `(i + 0.5 - translation) / scale - 0.5`
    instead, and an output centered outside the input is 0.

    Args:
        out_size: the new size.
        in_size: the old size.
        interpolation: one of `INTERPOLATIONS`.
        antialias: whether a shrink widens the kernel (not for `"nearest"`).
        scale: None (`out_size / in_size`) or the scale, > 0.
        translation: the translation, in output pixels.

    Returns:
        A float32 array; its rows sum to 1 (or 0, outside the input).

    Example:
        >>> mk.ops.image.interpolation_matrix(4, 2, "bilinear")
        array([[1.  , 0.  ],
               [0.75, 0.25],
               [0.25, 0.75],
               [0.  , 1.  ]], dtype=float32)
    """
    rows = np.arange(out_size)
    if interpolation == "nearest":
        matrix = np.zeros((out_size, in_size), dtype=np.float32)
        source = np.floor((rows + 0.5) * in_size / out_size).astype(int)
        matrix[rows, np.minimum(source, in_size - 1)] = 1.0
        return matrix
    shrink = in_size / out_size if scale is None else 1.0 / float(scale)
    width = max(shrink, 1.0) if antialias else 1.0
    centers = (rows + 0.5 - translation) * shrink - 0.5
    weights = _KERNELS[interpolation](np.abs(centers[:, None] - np.arange(in_size)) / width)
    total = weights.sum(axis=1, keepdims=True)
    tiny = np.abs(total) <= 1000 * np.finfo(np.float32).eps  # (no weight at all: zeros, as jax)
    weights = np.where(tiny, 0.0, weights / np.where(total == 0, 1.0, total))
    inside = (centers >= -0.5) & (centers <= in_size - 0.5)
    return np.where(inside[:, None], weights, 0.0).astype(np.float32)


def aspect_window(rows, cols, height, width, pad_to_aspect_ratio):
    """Where the image sits in the window of aspect `height : width` it is cut or padded to.

    Cropping keeps the largest central window of that aspect; padding adds
    the same number of rows (or columns) before and after, as Keras does
    (`int(missing / 2)` each, so one fewer in all when the missing count is odd).

    Args:
        rows: the image's rows.
        cols: the image's columns.
        height: the target height.
        width: the target width.
        pad_to_aspect_ratio: pad (True) rather than crop (False).

    Returns:
        `(top, left, new_rows, new_cols)`: cropping, the window's first row and
        column in the image and its size; padding, the rows and columns added
        on each side and 0, 0.

    Example:
        >>> mk.ops.image_resize.aspect_window(4, 8, 2, 2, False)  # the central 4 x 4
        (0, 2, 4, 4)
        >>> mk.ops.image_resize.aspect_window(4, 8, 2, 2, True)  # 2 rows above and below
        (2, 0, 0, 0)
    """
    if pad_to_aspect_ratio:
        padded_rows = max(rows, int(float(cols * height) / width))
        padded_cols = max(cols, int(float(rows * width) / height))
        top, left = int((padded_rows - rows) / 2), int((padded_cols - cols) / 2)
        return (top, 0, 0, 0) if top > 0 else (0, left, 0, 0)
    new_rows = max(min(rows, int(float(cols * height) / width)), 1)
    new_cols = max(min(cols, int(float(rows * width) / height)), 1)
    return int((rows - new_rows) / 2), int((cols - new_cols) / 2), new_rows, new_cols


def resize(
    images,
    size,
    interpolation="bilinear",
    antialias=False,
    crop_to_aspect_ratio=False,
    pad_to_aspect_ratio=False,
    fill_mode="constant",
    fill_value=0.0,
    data_format=None,
):
    """Resizes images to `size`, as `keras.ops.image.resize` (see the module docstring).

    With `crop_to_aspect_ratio` the largest central window of the target's
    aspect ratio is resized; with `pad_to_aspect_ratio` the image is first
    padded with `fill_value` on both sides of its short axis (`aspect_window`).
    Differentiable with respect to `images`.

    Args:
        images: a 4-D batch `(batch, height, width, channels)` or one 3-D
            image (channels first with `data_format="channels_first"`).
        size: the new `(height, width)`.
        interpolation: `"bilinear"` (default), `"nearest"`, `"bicubic"`,
            `"lanczos3"` or `"lanczos5"`.
        antialias: whether shrinking averages the pixels it skips (a wider
            kernel); default False.
        crop_to_aspect_ratio: crop to the target's aspect ratio first.
        pad_to_aspect_ratio: pad to the target's aspect ratio first.
        fill_mode: `"constant"`, the only mode (as in Keras).
        fill_value: the value of the padding.
        data_format: `"channels_last"`, `"channels_first"`, or None (default:
            `mk.config.image_data_format()`).

    Returns:
        A Tensor of the images' dtype (integers rounded and clipped to their
        range, as Keras does).

    Raises:
        ValueError: if `images` is not 3-D or 4-D, `size` is not two positive
            ints, both aspect options are set, or an option is not valid.

    Example:
        >>> mk.ops.image.resize(np.ones((2, 4, 4, 3)), (2, 6)).shape
        (2, 2, 6, 3)
        >>> row = np.array([[0.0, 1.0, 2.0, 3.0]], "float32").reshape(1, 4, 1)
        >>> mk.ops.image.resize(row, (1, 2), antialias=True)[..., 0].numpy()  # 5/7, 16/7
        array([[0.71428573, 2.2857141 ]], dtype=float32)
    """
    op = "resize"
    shape = shape_of(images)
    if len(shape) not in (3, 4):
        raise ValueError(
            f"{op}: images must be 3-D (one image) or 4-D (a batch), got shape {tuple(shape)}"
        )
    if len(size) != 2 or any(isinstance(s, bool) or int(s) != s or s < 1 for s in size):
        raise ValueError(f"{op}: size must be two positive ints (height, width), got {size!r}")
    if interpolation not in INTERPOLATIONS:
        raise ValueError(
            f"{op}: interpolation must be one of {INTERPOLATIONS}, got {interpolation!r}"
        )
    if fill_mode != "constant":
        raise ValueError(f"{op}: fill_mode must be 'constant' (the only mode), got {fill_mode!r}")
    if crop_to_aspect_ratio and pad_to_aspect_ratio:
        raise ValueError(f"{op}: give at most one of crop_to_aspect_ratio and pad_to_aspect_ratio")
    last = config.standardize_data_format(data_format, op) == "channels_last"
    height, width = int(size[0]), int(size[1])
    images = convert_to_tensor(images)
    dtype = np.dtype(images.dtype)
    axes = [len(shape) - 3, len(shape) - 2] if last else [len(shape) - 2, len(shape) - 1]
    if crop_to_aspect_ratio or pad_to_aspect_ratio:
        rows, cols = shape[axes[0]], shape[axes[1]]
        top, left, new_rows, new_cols = aspect_window(
            rows, cols, height, width, pad_to_aspect_ratio
        )
        if crop_to_aspect_ratio:
            key = [slice(None)] * len(shape)
            key[axes[0]], key[axes[1]] = slice(top, top + new_rows), slice(left, left + new_cols)
            images = images[tuple(key)]
        else:
            widths = [(0, 0)] * len(shape)
            widths[axes[0]], widths[axes[1]] = (top, top), (left, left)
            images = pad(images, widths, constant_values=fill_value)
        shape = shape_of(images)
    floats = images if dtype.kind == "f" else cast(images, config.floatx())
    float_dtype = floats.dtype
    rows = interpolation_matrix(height, shape[axes[0]], interpolation, antialias).astype(
        float_dtype
    )
    cols = interpolation_matrix(width, shape[axes[1]], interpolation, antialias).astype(float_dtype)
    formula = "hr,...rwc,vw->...hvc" if last else "hr,...rw,vw->...hv"
    resized = einsum(formula, rows, floats, cols)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        resized = cast(clip(round(resized), info.min, info.max), dtype)
    return resized


# scale_and_translate's method names -> the kernels'
_METHODS = {"linear": "bilinear", "bilinear": "bilinear", "trilinear": "bilinear"}
_METHODS |= {"cubic": "bicubic", "bicubic": "bicubic"}
_METHODS |= {"tricubic": "bicubic", "lanczos3": "lanczos3", "lanczos5": "lanczos5"}


def scale_and_translate(images, output_shape, scale, translation, spatial_dims, method,
                        antialias=True):  # fmt: skip
    """Scales and shifts images along some axes, as `keras.ops.image.scale_and_translate`.

    Along each axis `spatial_dims[k]`, the input point `x` (pixel `j` at
    `j + 0.5`) lands at `x * scale[k] + translation[k]` of the output; each
    output pixel samples back through that map with the kernel of `method`
    (see the module docstring and `interpolation_matrix`), 0 outside the
    input. Differentiable with respect to `images`.

    Args:
        images: float images of any layout.
        output_shape: the whole output shape; the axes not in `spatial_dims`
            keep the images' sizes (differs from Keras: their entries are not
            checked, so a batch of unknown size may be None or any number).
        scale: `K` scales, > 0, one per spatial axis.
        translation: `K` translations, in output pixels.
        spatial_dims: the `K` axes resampled.
        method: `"linear"` (also `"bilinear"`, `"trilinear"`),
            `"cubic"` (also `"bicubic"`, `"tricubic"`), `"lanczos3"` or `"lanczos5"`.
        antialias: whether shrinking widens the kernel (default True).

    Returns:
        A float Tensor of `output_shape` (integer images give floatx).

    Raises:
        ValueError: for an unknown `method`, sizes that do not match, or a
            scale that is not positive.

    Example:
        >>> image = np.arange(9.0, dtype="float32").reshape(3, 3)
        >>> mk.ops.image.scale_and_translate(image, (3, 3), [1.0, 1.0], [0.0, 1.0], (0, 1),
        ...                                  "linear").numpy()  # one column right
        array([[0., 0., 1.],
               [0., 3., 4.],
               [0., 6., 7.]], dtype=float32)
    """
    op = "scale_and_translate"
    if method not in _METHODS:
        raise ValueError(f"{op}: method must be one of {list(_METHODS)}, got {method!r}")
    images = convert_to_tensor(images)
    shape = shape_of(images)
    scale = np.asarray(scale, np.float64).reshape(-1)
    translation = np.asarray(translation, np.float64).reshape(-1)
    spatial_dims = [int(axis) % len(shape) for axis in np.reshape(spatial_dims, -1)]
    fits = len(output_shape) == len(shape) and len(scale) == len(translation) == len(spatial_dims)
    fits = fits and all(int(output_shape[axis]) >= 1 for axis in spatial_dims)
    if not fits or not (scale > 0).all():
        raise ValueError(
            f"{op}: output_shape {tuple(output_shape)} must have the rank of images "
            f"{tuple(shape)} and sizes >= 1 on spatial_dims {spatial_dims}, with one scale "
            f"(> 0) and translation each; got scale {scale.tolist()}, translation "
            f"{translation.tolist()}"
        )
    x = images if np.dtype(images.dtype).kind == "f" else cast(images, config.floatx())
    kernel = _METHODS[method]
    for axis, factor, shift in zip(spatial_dims, scale, translation):
        matrix = interpolation_matrix(int(output_shape[axis]), shape[axis], kernel, antialias,
                                      factor, shift).astype(x.dtype)  # fmt: skip
        x = moveaxis(tensordot(matrix, x, axes=([1], [axis])), 0, axis)
    return x
