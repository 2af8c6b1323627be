"""Keras's namespace `keras.ops.image`: patches, padding and cropping here, the rest by concept.

Vision models written for Keras 3 cut images into patches
(`ops.image.extract_patches`), resize them (`ops.image.resize`) and shift
them by cropping and padding (`crop_images`, `pad_images`) inside their
layers; these run here, differentiably, in Keras's layouts. The other
functions of Keras's namespace are defined in their own modules and
re-exported here: `image_resize` (resize, scale_and_translate),
`image_color` (rgb_to_grayscale, rgb_to_hsv, hsv_to_rgb), `image_filters`
(gaussian_blur, sobel_edges, ssim), `image_sampling` (map_coordinates) and
`image_transforms` (affine_transform, perspective_transform, elastic_transform).

`extract_patches` gives each patch as one vector, its pixels in row order,
each pixel's channels together (what a convolution with an identity kernel
gives, as Keras computes it).

    >>> mk.ops.image.extract_patches(np.ones((2, 8, 8, 3)), 4).shape
    (2, 2, 2, 48)
"""

import itertools

import numpy as np

from minikeras import config
from minikeras.ops.conv import conv
from minikeras.ops.core import shape_of
from minikeras.ops.creation import convert_to_tensor
from minikeras.ops.image_color import hsv_to_rgb, rgb_to_grayscale, rgb_to_hsv
from minikeras.ops.image_filters import gaussian_blur, sobel_edges, ssim
from minikeras.ops.image_resize import interpolation_matrix, resize, scale_and_translate
from minikeras.ops.image_sampling import map_coordinates
from minikeras.ops.image_transforms import (
    affine_transform,
    elastic_transform,
    perspective_transform,
)
from minikeras.ops.shape import expand_dims, pad, reshape, squeeze, stack, transpose
from minikeras.ops.symbolic import SymbolicValueError

__all__ = ["crop_images", "extract_patches", "extract_patches_3d", "interpolation_matrix"]
__all__ += ["pad_images", "resize", "scale_and_translate"]
# Keras's ops.image functions defined in their own modules, by concept
__all__ += ["hsv_to_rgb", "rgb_to_grayscale", "rgb_to_hsv"]  # (image_color)
__all__ += ["gaussian_blur", "sobel_edges", "ssim"]  # (image_filters)
__all__ += ["map_coordinates"]  # (image_sampling)
__all__ += ["affine_transform", "elastic_transform", "perspective_transform"]  # (image_transforms)
__all__ += ["KERAS_OPS"]

# Keras's ops.image functions minikeras has (each records one op node on symbolic tensors).
# (extract_patches_3d is extract_patches with three sizes: it records that op, as in Keras)
_NOT_OPS = ("KERAS_OPS", "extract_patches_3d", "interpolation_matrix")
KERAS_OPS = tuple(name for name in __all__ if name not in _NOT_OPS)


def _channels_last(op, data_format):
    return config.standardize_data_format(data_format, op) == "channels_last"


def _sizes(op, name, value, rank):
    sizes = (value,) * rank if isinstance(value, (int, np.integer)) else tuple(value)
    if len(sizes) != rank or any(isinstance(v, bool) or int(v) != v or v < 1 for v in sizes):
        raise ValueError(f"{op}: {name} must be an int or {rank} ints >= 1, got {value!r}")
    return tuple(int(v) for v in sizes)


def _patches(op, images, rank, size, strides, dilation_rate, padding, data_format):
    """The patches of `rank`-D images (2: images, 3: volumes), each flattened."""
    shape = shape_of(images)
    if len(shape) not in (rank + 1, rank + 2):
        raise ValueError(
            f"{op}: {'images' if rank == 2 else 'volumes'} must be {rank + 1}-D (one) or "
            f"{rank + 2}-D (a batch), got shape {tuple(shape)}"
        )
    last = _channels_last(op, data_format)
    patch = _sizes(op, "size", size, rank)
    step = patch if strides is None else _sizes(op, "strides", strides, rank)
    dilation = _sizes(op, "dilation_rate", dilation_rate, rank)
    if padding not in ("valid", "same"):
        raise ValueError(f"{op}: padding must be 'valid' or 'same', got {padding!r}")
    x = convert_to_tensor(images)
    # Integer images keep their dtype and every value, as in Keras.
    exact = not np.issubdtype(np.dtype(x.dtype), np.floating)
    single = len(shape) == rank + 1
    if single:
        x = expand_dims(x, 0)
    if not last:
        x = transpose(x, (0, *range(2, rank + 2), 1))
    spatial, channels = x.shape[1:-1], x.shape[-1]
    depth = int(np.prod(patch)) * channels
    if padding == "valid" and step == patch and dilation == (1,) * rank:
        # Side by side: a reshape and a transpose, not a convolution.
        counts = [n // p for n, p in zip(spatial, patch)]
        x = x[(slice(None), *(slice(c * p) for c, p in zip(counts, patch)))]
        x = reshape(x, (-1, *[n for pair in zip(counts, patch) for n in pair], channels))
        order = (0, *range(1, 2 * rank, 2), *range(2, 2 * rank + 1, 2), 2 * rank + 1)
        x = reshape(transpose(x, order), (-1, *counts, depth))
    elif exact:  # (a convolution would round integers: copied by strided slices instead)
        x = _sliced_patches(x, patch, step, dilation, padding, depth)
    else:
        kernel = np.eye(depth, dtype=x.dtype).reshape(*patch, channels, depth)
        x = conv(x, kernel, strides=step, padding=padding, dilation_rate=dilation)
    if not last:
        x = transpose(x, (0, rank + 1, *range(1, rank + 1)))
    return squeeze(x, 0) if single else x


def _sliced_patches(x, patch, step, dilation, padding, depth):
    """The patches of channels-last `x` as a convolution with an identity kernel gives them,
    by one strided slice per pixel of a patch (exact for any dtype)."""
    spatial = x.shape[1:-1]
    if padding == "same":  # (as the convolution pads: the extra pixel after)
        totals = [
            max((-(-n // s) - 1) * s + (p - 1) * d + 1 - n, 0)
            for n, p, s, d in zip(spatial, patch, step, dilation)
        ]
        x = pad(x, [(0, 0), *((t // 2, t - t // 2) for t in totals), (0, 0)])
        spatial = [n + t for n, t in zip(spatial, totals)]
    counts = [
        max((n - (p - 1) * d - 1) // s + 1, 0) for n, p, s, d in zip(spatial, patch, step, dilation)
    ]
    pieces = [
        x[(slice(None), *(slice(o * d, o * d + (c - 1) * s + 1, s)
                          for o, d, c, s in zip(offset, dilation, counts, step)), slice(None))]
        for offset in itertools.product(*(range(p) for p in patch))
    ]  # fmt: skip
    return reshape(stack(pieces, axis=-2), (-1, *counts, depth))


def extract_patches(images, size, strides=None, dilation_rate=1, padding="valid", data_format=None):
    """The patches of images, each flattened, as `keras.ops.image.extract_patches`.

    Patch `(i, j)` starts at row `i * strides[0]` and column `j * strides[1]`
    (after the zero padding `"same"` adds); its vector lists its pixels in
    row order, each pixel's channels together: entry `(r * size[1] + c) *
    channels + k` is channel `k` of the patch's pixel `(r, c)`.

    A `size` of three ints cuts volumes instead (see `extract_patches_3d`).

    Args:
        images: a 4-D batch `(batch, height, width, channels)` or one 3-D
            image (channels first with `data_format="channels_first"`).
        size: the patch size, an int or `(rows, columns)`.
        strides: the step between patches, an int or a pair; None (default)
            means `size` (patches side by side).
        dilation_rate: the step between a patch's pixels, an int or a pair.
        padding: `"valid"` (whole patches only) or `"same"`.
        data_format: `"channels_last"` (default, also None) or `"channels_first"`.

    Returns:
        A Tensor of the images' dtype `(batch, rows of patches, columns of patches,
        size[0] * size[1] * channels)` (the patch axis before the spatial
        ones for channels first; no batch axis for one image).

    Raises:
        ValueError: if `images` is not 3-D or 4-D, or an argument is not valid.

    Example:
        >>> image = np.arange(16.0).reshape(1, 4, 4, 1)
        >>> mk.ops.image.extract_patches(image, 2)[0, 0, 1].numpy()
        array([2., 3., 6., 7.])
    """
    rank = 3 if np.ndim(size) == 1 and len(size) == 3 else 2
    return _patches(
        "extract_patches", images, rank, size, strides, dilation_rate, padding, data_format
    )


def extract_patches_3d(
    volumes, size, strides=None, dilation_rate=1, padding="valid", data_format=None
):
    """The patches of volumes, each flattened, as `keras.ops.image.extract_patches_3d`.

    Patch `(i, j, k)` starts at depth `i * strides[0]`, row `j * strides[1]`
    and column `k * strides[2]`; its vector lists its voxels in order (depth,
    then row, then column), each voxel's channels together. It is
    `extract_patches` with a `size` of three, and records that op on
    symbolic tensors, as Keras does.

    Args:
        volumes: a 5-D batch `(batch, depth, height, width, channels)` or
            one 4-D volume (channels first with `data_format="channels_first"`).
        size: the patch size, an int or `(depth, rows, columns)`.
        strides: the step between patches, an int or three; None (default)
            means `size` (patches side by side).
        dilation_rate: the step between a patch's voxels, an int or three.
        padding: `"valid"` (whole patches only) or `"same"`.
        data_format: `"channels_last"`, `"channels_first"`, or None (default:
            `mk.config.image_data_format()`).

    Returns:
        A Tensor of the volumes' dtype `(batch, patches along depth, along rows, along
        columns, size[0] * size[1] * size[2] * channels)` (the patch axis
        before the spatial ones for channels first; no batch axis for one volume).

    Raises:
        ValueError: if `volumes` is not 4-D or 5-D, or an argument is not valid.

    Example:
        >>> volume = np.arange(8.0).reshape(2, 2, 2, 1)
        >>> mk.ops.image.extract_patches_3d(volume, 2)[0, 0, 0].numpy()
        array([0., 1., 2., 3., 4., 5., 6., 7.])
    """
    size = (size,) * 3 if isinstance(size, (int, np.integer)) else size
    if np.ndim(size) != 1 or len(size) != 3:
        raise ValueError(f"extract_patches_3d: size must be an int or 3 ints >= 1, got {size!r}")
    return extract_patches(volumes, size, strides, dilation_rate, padding, data_format)


def _spatial(op, images, data_format):
    shape = shape_of(images)
    if len(shape) not in (3, 4):
        raise ValueError(
            f"{op}: images must be 3-D (one image) or 4-D (a batch), got shape {tuple(shape)}"
        )
    last = _channels_last(op, data_format)
    rows, cols = (len(shape) - 3, len(shape) - 2) if last else (len(shape) - 2, len(shape) - 1)
    return shape, rows, cols


def _two_of(op, names, values, size, grow):
    """`(before, after)` along an axis of `size` from exactly two of (before, after, target)."""
    if sum(value is None for value in values) != 1:
        raise ValueError(
            f"{op}: give exactly two of {', '.join(names)}; got "
            + ", ".join(f"{n}={v}" for n, v in zip(names, values))
        )
    for name, value in zip(names, values):
        if value is not None and (isinstance(value, bool) or int(value) != value or value < 0):
            raise ValueError(f"{op}: {name} must be an int >= 0, got {value!r}")
    before, after, target = values
    if size is None and (before is None or after is None):
        # (a symbolic axis of unknown size: the widths follow the data, so the op is
        # recorded as one node, traced on placeholder data, rather than as a fixed pad)
        raise SymbolicValueError(f"{op}: the widths depend on an axis of unknown size")
    change = None if target is None else (target - size if grow else size - target)
    before = change - after if before is None else before
    after = change - before if after is None else after
    if before < 0 or after < 0:
        raise ValueError(
            f"{op}: {', '.join(f'{n}={v}' for n, v in zip(names, values) if v is not None)} "
            f"do not fit an axis of size {size}"
        )
    return int(before), int(after)


def pad_images(
    images,
    top_padding=None,
    left_padding=None,
    bottom_padding=None,
    right_padding=None,
    target_height=None,
    target_width=None,
    data_format=None,
):
    """Pads images with zeros, as `keras.ops.image.pad_images`.

    Along each axis give exactly two of the padding before, the padding
    after and the size wanted: `top_padding`, `bottom_padding`,
    `target_height` for the rows, `left_padding`, `right_padding`,
    `target_width` for the columns.

    Args:
        images: a 4-D batch `(batch, height, width, channels)` or one 3-D
            image (channels first with `data_format="channels_first"`).
        top_padding: rows of zeros above, an int >= 0.
        left_padding: columns of zeros on the left.
        bottom_padding: rows of zeros below.
        right_padding: columns of zeros on the right.
        target_height: the padded height.
        target_width: the padded width.
        data_format: `"channels_last"` (default, also None) or `"channels_first"`.

    Returns:
        A Tensor of the images' dtype.

    Raises:
        ValueError: if `images` is not 3-D or 4-D, not exactly two of an
            axis's arguments are given, or they would pad by less than 0.

    Example:
        >>> mk.ops.image.pad_images(np.ones((1, 2, 1)), top_padding=1, target_height=4,
        ...                         left_padding=0, right_padding=1)[..., 0].numpy()
        array([[0., 0., 0.],
               [1., 1., 0.],
               [0., 0., 0.],
               [0., 0., 0.]])
    """
    op = "pad_images"
    shape, rows, cols = _spatial(op, images, data_format)
    widths = [(0, 0)] * len(shape)
    names = ("top_padding", "bottom_padding", "target_height")
    values = (top_padding, bottom_padding, target_height)
    widths[rows] = _two_of(op, names, values, shape[rows], True)
    names = ("left_padding", "right_padding", "target_width")
    values = (left_padding, right_padding, target_width)
    widths[cols] = _two_of(op, names, values, shape[cols], True)
    return pad(convert_to_tensor(images), widths)


def crop_images(
    images,
    top_cropping=None,
    left_cropping=None,
    bottom_cropping=None,
    right_cropping=None,
    target_height=None,
    target_width=None,
    data_format=None,
):
    """Crops images, as `keras.ops.image.crop_images`.

    Along each axis give exactly two of the rows (or columns) cut before,
    those cut after and the size wanted: `top_cropping`, `bottom_cropping`,
    `target_height` for the rows, `left_cropping`, `right_cropping`,
    `target_width` for the columns.

    Args:
        images: a 4-D batch `(batch, height, width, channels)` or one 3-D
            image (channels first with `data_format="channels_first"`).
        top_cropping: rows cut from the top, an int >= 0.
        left_cropping: columns cut from the left.
        bottom_cropping: rows cut from the bottom.
        right_cropping: columns cut from the right.
        target_height: the cropped height.
        target_width: the cropped width.
        data_format: `"channels_last"` (default, also None) or `"channels_first"`.

    Returns:
        A Tensor of the images' dtype.

    Raises:
        ValueError: if `images` is not 3-D or 4-D, not exactly two of an
            axis's arguments are given, or the crop does not fit the image.

    Example:
        >>> image = np.arange(9.0).reshape(3, 3, 1)
        >>> mk.ops.image.crop_images(image, top_cropping=1, target_height=2,
        ...                          left_cropping=1, right_cropping=0)[..., 0].numpy()
        array([[4., 5.],
               [7., 8.]])
    """
    op = "crop_images"
    shape, rows, cols = _spatial(op, images, data_format)
    names = ("top_cropping", "bottom_cropping", "target_height")
    values = (top_cropping, bottom_cropping, target_height)
    top, bottom = _two_of(op, names, values, shape[rows], False)
    names = ("left_cropping", "right_cropping", "target_width")
    values = (left_cropping, right_cropping, target_width)
    left, right = _two_of(op, names, values, shape[cols], False)
    if top + bottom > shape[rows] or left + right > shape[cols]:
        raise ValueError(
            f"{op}: cutting {top} + {bottom} rows and {left} + {right} columns does not fit "
            f"images of shape {tuple(shape)}"
        )
    key = [slice(None)] * len(shape)
    key[rows] = slice(top, shape[rows] - bottom)
    key[cols] = slice(left, shape[cols] - right)
    return convert_to_tensor(images)[tuple(key)]
