"""Keras's `keras.ops.image.gaussian_blur`, and the Gaussian kernel it and the blur layers use.

The blur correlates each channel with the outer product of two normalized
1-D Gaussian kernels, zero-padded so the images keep their size (`"same"`
padding: an even kernel has one more tap after its center than before, as
in Keras). As in Keras's code, `kernel_size[0]` and `sigma[0]` are along the
columns (the width) and `kernel_size[1]`, `sigma[1]` along the rows;
Keras's docstring says "height and width".

    >>> image = np.zeros((1, 3, 1), "float32"); image[0, 1] = 1.0
    >>> mk.ops.image.gaussian_blur(image, (3, 1)).numpy()[..., 0].round(4)
    array([[0.2741, 0.4519, 0.2741]], dtype=float32)
"""

import numpy as np

from minikeras import config
from minikeras.ops.conv import depthwise_conv
from minikeras.ops.core import shape_of
from minikeras.ops.creation import convert_to_tensor
from minikeras.ops.shape import expand_dims, squeeze

__all__ = ["gaussian_blur", "gaussian_kernel"]


def gaussian_kernel(size, sigma):
    """The normalized 1-D Gaussian kernel of `size` taps, as `keras.ops.image.gaussian_blur`'s.

    Tap `i` weighs `exp(-((i - (size - 1) / 2) / sigma) ** 2 / 2)`, all of
    them divided by their sum.

    Args:
        size: the number of taps, an int >= 1.
        sigma: the standard deviation, in pixels, > 0.

    Returns:
        A float64 numpy array `(size,)` summing to 1.

    Example:
        >>> mk.ops.image_filters.gaussian_kernel(3, 1.0).round(4)
        array([0.2741, 0.4519, 0.2741])
    """
    taps = np.arange(size, dtype=np.float64) - (size - 1) / 2
    kernel = np.exp(-0.5 * (taps / float(sigma)) ** 2)
    return kernel / kernel.sum()


def _pair(op, name, value, kind):
    pair = (value, value) if np.ndim(value) == 0 else tuple(value)
    valid = len(pair) == 2 and all(
        not isinstance(v, bool) and (int(v) == v and v >= 1 if kind is int else v > 0) for v in pair
    )
    if not valid:
        what = "ints >= 1" if kind is int else "numbers > 0"
        raise ValueError(f"{op}: {name} must be a pair of {what} (or one), got {value!r}")
    return tuple(kind(v) for v in pair)


def gaussian_blur(images, kernel_size=(3, 3), sigma=(1.0, 1.0), data_format=None):
    """Blurs images with a Gaussian kernel, as `keras.ops.image.gaussian_blur`.

    Each channel is correlated with `outer(rows_kernel, cols_kernel)`, each a
    `gaussian_kernel`, over zeros past the border (see the module docstring).
    Differentiable with respect to `images`.

    Differs from Keras: a single number for `kernel_size` or `sigma` means
    both axes (Keras takes pairs); `data_format=None` is the configured
    layout (Keras's jax backend reads None as channels first when called
    eagerly); float64 images stay float64 (jax computes float32).

    Args:
        images: float images, a 4-D batch `(batch, height, width, channels)`
            or one 3-D image (channels first with `data_format="channels_first"`).
        kernel_size: `(columns, rows)` of the kernel, ints >= 1.
        sigma: the standard deviations `(along columns, along rows)`, > 0.
        data_format: `"channels_last"`, `"channels_first"`, or None (default:
            `mk.config.image_data_format()`).

    Returns:
        A Tensor of the images' shape and dtype.

    Raises:
        ValueError: if `images` is not 3-D or 4-D or not of a float dtype, or
            `kernel_size` or `sigma` is not valid.

    Example:
        >>> images = np.ones((2, 5, 5, 3), "float32")
        >>> blurred = mk.ops.image.gaussian_blur(images, kernel_size=(3, 3), sigma=(1.0, 1.0))
        >>> blurred.shape, round(float(blurred[0, 2, 2, 0]), 6)  # inside, a constant stays
        ((2, 5, 5, 3), 1.0)
    """
    op = "gaussian_blur"
    shape = shape_of(images)
    if len(shape) not in (3, 4):
        raise ValueError(
            f"{op}: images must be 3-D (one image) or 4-D (a batch), got shape {tuple(shape)}"
        )
    columns, rows = _pair(op, "kernel_size", kernel_size, int)
    sigma_columns, sigma_rows = _pair(op, "sigma", sigma, float)
    data_format = config.standardize_data_format(data_format, op)
    images = convert_to_tensor(images)
    if not np.issubdtype(np.dtype(images.dtype), np.floating):
        raise ValueError(f"{op}: images must have a float dtype, got {images.dtype}")
    channels = shape[-1 if data_format == "channels_last" else -3]
    plane = np.outer(gaussian_kernel(rows, sigma_rows), gaussian_kernel(columns, sigma_columns))
    kernel = np.broadcast_to(plane[:, :, None, None], (rows, columns, channels, 1))
    kernel = kernel.astype(images.dtype)
    single = len(shape) == 3
    batch = expand_dims(images, 0) if single else images
    blurred = depthwise_conv(batch, kernel, padding="same", data_format=data_format)
    return squeeze(blurred, 0) if single else blurred
