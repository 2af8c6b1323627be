"""Keras's colour-space ops of `keras.ops.image`: rgb_to_grayscale, rgb_to_hsv, hsv_to_rgb.

Each works on one 3-D image or a 4-D batch, the channels last or (with
`data_format="channels_first"`) first; `data_format=None` reads
`mk.config.image_data_format()`. They are compositions of differentiable
ops, so gradients flow through them (through `rgb_to_hsv`'s max and min, to
the channel that wins).

Grayscale is the luma `0.2989 R + 0.5870 G + 0.1140 B` (the weights of
`tf.image.rgb_to_grayscale`, which Keras uses). Hue, saturation and value
follow Keras (after dm_pix): for RGB in `[0, 1]` all three are in `[0, 1]`,
hue `0` red, `1/3` green, `2/3` blue; value is the largest channel,
saturation `(max - min) / max`.

    >>> mk.ops.image.rgb_to_hsv(np.array([[[0.0, 0.5, 0.5]]])).numpy()  # cyan: hue 1/2
    array([[[0.5, 1. , 0.5]]])
"""

import numpy as np

from minikeras import config
from minikeras.ops.comparison import clip, maximum, minimum, where
from minikeras.ops.core import shape_of
from minikeras.ops.creation import cast, convert_to_tensor
from minikeras.ops.elementary import abs
from minikeras.ops.math import mod
from minikeras.ops.matrix_products import tensordot
from minikeras.ops.shape import expand_dims, stack, take

__all__ = ["LUMA", "hsv_to_rgb", "rgb_to_grayscale", "rgb_to_hsv"]

LUMA = (0.2989, 0.5870, 0.1140)  # tf.image.rgb_to_grayscale's weights, as Keras's


def channels_axis(op, images, data_format):
    """The channel axis (-1 or -3) of 3-D or 4-D `images` in `data_format` (None: the config).

    Args:
        op: the op's name, for errors.
        images: the images (only their shape is read).
        data_format: None, `"channels_last"` or `"channels_first"`.

    Returns:
        `-1` for channels last, `-3` for channels first.

    Raises:
        ValueError: if `images` is not 3-D or 4-D, or `data_format` is not a layout.

    Example:
        >>> mk.ops.image_color.channels_axis("rgb_to_hsv", np.ones((2, 3, 4, 4)), "channels_first")
        -3
    """
    shape = shape_of(images)
    if len(shape) not in (3, 4):
        raise ValueError(
            f"{op}: images must be 3-D (one image) or 4-D (a batch), got shape {tuple(shape)}"
        )
    return -1 if config.standardize_data_format(data_format, op) == "channels_last" else -3


def _rgb_planes(op, images, data_format, allowed=(3,)):
    axis = channels_axis(op, images, data_format)
    images = convert_to_tensor(images)
    channels = shape_of(images)[axis]
    if channels is not None and channels not in allowed:
        raise ValueError(
            f"{op}: images must have {' or '.join(map(str, allowed))} channels on axis {axis}, "
            f"got shape {tuple(shape_of(images))}"
        )
    return images, axis


def _float_only(op, images):
    if not np.issubdtype(np.dtype(images.dtype), np.floating):
        raise ValueError(f"{op}: images must have a float dtype, got {images.dtype}")


def rgb_to_grayscale(images, data_format=None):
    """RGB images to grayscale, as `keras.ops.image.rgb_to_grayscale`.

    Each pixel becomes `0.2989 R + 0.5870 G + 0.1140 B`, one channel; images
    with one channel are returned as they are. Integer images keep their
    dtype (the weighted sum truncated toward zero, as Keras's cast does).

    Args:
        images: a 4-D batch `(batch, height, width, 3)` or one 3-D image
            (the channels on axis -3 with `data_format="channels_first"`).
        data_format: `"channels_last"`, `"channels_first"`, or None (default:
            `mk.config.image_data_format()`).

    Returns:
        A Tensor of the images' dtype with one channel.

    Raises:
        ValueError: if `images` is not 3-D or 4-D or has neither 1 nor 3 channels.

    Example:
        >>> mk.ops.image.rgb_to_grayscale(np.array([[[1.0, 1.0, 1.0]]], "float32")).numpy().round(4)
        array([[[0.9999]]], dtype=float32)
    """
    images, axis = _rgb_planes("rgb_to_grayscale", images, data_format, allowed=(1, 3))
    if shape_of(images)[axis] == 1:
        return images
    dtype = np.dtype(images.dtype)
    floats = images if dtype.kind == "f" else cast(images, config.floatx())
    weights = np.asarray(LUMA, dtype=floats.dtype)
    gray = expand_dims(tensordot(floats, weights, axes=([axis], [0])), axis)
    return gray if dtype.kind == "f" else cast(gray, dtype)


def rgb_to_hsv(images, data_format=None):
    """RGB images to hue, saturation and value, as `keras.ops.image.rgb_to_hsv`.

    For RGB in `[0, 1]` all three are in `[0, 1]` (see the module docstring);
    values nearer zero than the dtype's epsilon count as zero, as in Keras.

    Args:
        images: float images, a 4-D batch `(batch, height, width, 3)` or one
            3-D image (the channels on axis -3 with `data_format="channels_first"`).
        data_format: `"channels_last"`, `"channels_first"`, or None (default:
            `mk.config.image_data_format()`).

    Returns:
        A Tensor of the images' shape and dtype.

    Raises:
        ValueError: if `images` is not 3-D or 4-D, has not 3 channels, or is
            not of a float dtype.

    Example:
        >>> mk.ops.image.rgb_to_hsv(np.array([[[1.0, 0.0, 0.0]]], "float32")).numpy()  # red
        array([[[0., 1., 1.]]], dtype=float32)
    """
    op = "rgb_to_hsv"
    images, axis = _rgb_planes(op, images, data_format)
    _float_only(op, images)
    images = where(abs(images) < np.finfo(images.dtype).eps, 0.0, images)
    red, green, blue = (take(images, k, axis=axis) for k in range(3))
    value = maximum(maximum(red, green), blue)
    spread = value - minimum(minimum(red, green), blue)
    saturation = where(value > 0, spread / where(value > 0, value, 1.0), 0.0)
    norm = 1.0 / (6.0 * where(spread > 0, spread, 1.0))
    hue = where(value == green, norm * (blue - red) + 2.0 / 6.0, norm * (red - green) + 4.0 / 6.0)
    hue = where(value == red, norm * (green - blue), hue)
    hue = where(spread > 0, hue, 0.0) + cast(hue < 0.0, images.dtype)
    return stack([hue, saturation, value], axis=axis)


def hsv_to_rgb(images, data_format=None):
    """Hue, saturation and value back to RGB, as `keras.ops.image.hsv_to_rgb`.

    The inverse of `rgb_to_hsv`; the hue wraps around (`mod 1`).

    Args:
        images: float HSV images, a 4-D batch `(batch, height, width, 3)` or
            one 3-D image (the channels on axis -3 with
            `data_format="channels_first"`).
        data_format: `"channels_last"`, `"channels_first"`, or None (default:
            `mk.config.image_data_format()`).

    Returns:
        A Tensor of the images' shape and dtype.

    Raises:
        ValueError: if `images` is not 3-D or 4-D, has not 3 channels, or is
            not of a float dtype.

    Example:
        >>> mk.ops.image.hsv_to_rgb(np.array([[[0.5, 1.0, 0.5]]], "float32")).numpy()
        array([[[0. , 0.5, 0.5]]], dtype=float32)
    """
    op = "hsv_to_rgb"
    images, axis = _rgb_planes(op, images, data_format)
    _float_only(op, images)
    hue, saturation, value = (take(images, k, axis=axis) for k in range(3))
    sector = mod(hue, 1.0) * 6.0
    parts = (
        clip(abs(sector - 3.0) - 1.0, 0.0, 1.0),
        clip(2.0 - abs(sector - 2.0), 0.0, 1.0),
        clip(2.0 - abs(sector - 4.0), 0.0, 1.0),
    )
    planes = [value * (1.0 - saturation + saturation * part) for part in parts]
    return stack(planes, axis=axis)
