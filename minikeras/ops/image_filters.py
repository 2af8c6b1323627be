"""Keras's filtering ops of `keras.ops.image`: gaussian_blur, sobel_edges and ssim, and the
Gaussian kernel they and the blur layers use.

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
from minikeras.ops.creation import cast, convert_to_tensor
from minikeras.ops.reduction import mean
from minikeras.ops.shape import expand_dims, reshape, squeeze, transpose

__all__ = ["gaussian_blur", "gaussian_kernel", "sobel_edges", "ssim"]


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


# The Sobel kernels, each output's (dy, dx) pair: rows of dy, columns of dx.
_SOBEL = np.stack(
    [
        [[-1.0, -2.0, -1.0], [0.0, 0.0, 0.0], [1.0, 2.0, 1.0]],
        [[-1.0, 0.0, 1.0], [-2.0, 0.0, 2.0], [-1.0, 0.0, 1.0]],
    ],
    axis=-1,
)


def sobel_edges(images, data_format=None):
    """The Sobel gradients of images, as `keras.ops.image.sobel_edges`.

    Each channel is correlated with the 3 x 3 Sobel kernels over zeros past
    the border: `dy` (the rows below minus those above, weights 1, 2, 1) and
    `dx` (the columns right minus left), stacked on a new last axis.
    Differentiable with respect to `images`.

    Args:
        images: a 4-D batch `(batch, height, width, channels)` (channels
            first with `data_format="channels_first"`).
        data_format: `"channels_last"`, `"channels_first"`, or None (default:
            `mk.config.image_data_format()`).

    Returns:
        A Tensor `images.shape + (2,)` of the images' dtype, `[dy, dx]` last.

    Raises:
        ValueError: if `images` is not 4-D.

    Example:
        >>> image = np.zeros((1, 3, 4, 1), "float32"); image[0, :, 2:] = 1.0
        >>> mk.ops.image.sobel_edges(image)[0, 1, :, 0, 1].numpy()  # dx: the step
        array([ 0.,  4.,  4., -4.], dtype=float32)
    """
    op = "sobel_edges"
    shape = shape_of(images)
    if len(shape) != 4:
        raise ValueError(f"{op}: images must be 4-D (a batch), got shape {tuple(shape)}")
    data_format = config.standardize_data_format(data_format, op)
    images = convert_to_tensor(images)
    dtype = np.dtype(images.dtype)
    floats = images if dtype.kind == "f" else cast(images, config.floatx())
    channels = shape[-1 if data_format == "channels_last" else 1]
    kernel = np.broadcast_to(_SOBEL[:, :, None, :], (3, 3, channels, 2)).astype(floats.dtype)
    edges = depthwise_conv(floats, kernel, padding="same", data_format=data_format)
    # (depthwise outputs: channel c's two filters side by side, as c * 2 + m)
    if data_format == "channels_last":
        edges = reshape(edges, (*edges.shape[:-1], channels, 2))
    else:
        edges = transpose(reshape(edges, (-1, channels, 2, *edges.shape[2:])), (0, 1, 3, 4, 2))
    return edges if dtype.kind == "f" else cast(edges, dtype)


def ssim(image1, image2, max_val=1.0, filter_size=11, filter_sigma=1.5, k1=0.01, k2=0.03,
         data_format=None):  # fmt: skip
    """The structural similarity of two images, as `keras.ops.image.ssim`.

    Local means `mu`, variances `s` and covariance `s12` come from a Gaussian
    window (`filter_size` taps, deviation `filter_sigma`) at every position
    where it fits inside the image; the SSIM map
    `(2 mu1 mu2 + c1)(2 s12 + c2) / ((mu1² + mu2² + c1)(s1 + s2 + c2))`, with
    `c1 = (k1 max_val)²`, `c2 = (k2 max_val)²`, is averaged over the positions
    and the channels. Differentiable with respect to both images.

    Args:
        image1: a 4-D batch `(batch, height, width, channels)` or one 3-D
            image (channels first with `data_format="channels_first"`).
        image2: the images to compare, the same shape.
        max_val: the range of the pixel values (1.0 or 255, say).
        filter_size: the window's size, an int >= 1 (at most the image's).
        filter_sigma: the window's deviation, > 0.
        k1: the mean term's constant.
        k2: the variance term's constant.
        data_format: `"channels_last"`, `"channels_first"`, or None (default:
            `mk.config.image_data_format()`).

    Returns:
        A Tensor `(batch,)` (a scalar for one image) of `image1`'s dtype.

    Raises:
        ValueError: if the images are not 3-D or 4-D or differ in shape, or
            the window does not fit them.

    Example:
        >>> images = np.random.default_rng(0).random((2, 16, 16, 3)).astype("float32")
        >>> mk.ops.image.ssim(images, images).numpy()  # the same images: 1
        array([1., 1.], dtype=float32)
    """
    op = "ssim"
    first, second = shape_of(image1), shape_of(image2)
    if len(first) not in (3, 4) or tuple(first) != tuple(second):
        raise ValueError(
            f"{op}: image1 and image2 must be 3-D or 4-D images of one shape, got "
            f"{tuple(first)} and {tuple(second)}"
        )
    size = int(filter_size)
    sigma = float(filter_sigma)
    if isinstance(filter_size, bool) or size != filter_size or size < 1 or not sigma > 0:
        raise ValueError(
            f"{op}: filter_size must be an int >= 1 and filter_sigma > 0, got {filter_size!r} "
            f"and {filter_sigma!r}"
        )
    last = config.standardize_data_format(data_format, op) == "channels_last"
    rows, cols = (first[-3], first[-2]) if last else (first[-2], first[-1])
    if size > rows or size > cols:
        raise ValueError(f"{op}: a window of {size} does not fit images of shape {tuple(first)}")
    image1, image2 = convert_to_tensor(image1), convert_to_tensor(image2)
    dtype = np.dtype(image1.dtype)
    compute = dtype if dtype.kind == "f" else np.dtype(config.floatx())
    x, y = cast(image1, compute), cast(image2, compute)
    channels = first[-1] if last else first[-3]
    # The window is the outer product of one 1-D Gaussian with itself: a pass down the
    # columns, then one along the rows (2 x size taps a pixel, not size x size).
    taps = np.asarray(gaussian_kernel(size, sigma), dtype=compute)
    down = np.broadcast_to(taps[:, None, None, None], (size, 1, channels, 1))
    along = np.broadcast_to(taps[None, :, None, None], (1, size, channels, 1))

    def local_mean(z):
        z = depthwise_conv(z, down, padding="valid", data_format="channels_last")
        return depthwise_conv(z, along, padding="valid", data_format="channels_last")

    if len(first) == 3:
        x, y = expand_dims(x, 0), expand_dims(y, 0)
    if not last:
        x, y = transpose(x, (0, 2, 3, 1)), transpose(y, (0, 2, 3, 1))
    mu1, mu2 = local_mean(x), local_mean(y)
    var1, var2 = local_mean(x * x) - mu1 * mu1, local_mean(y * y) - mu2 * mu2
    covariance = local_mean(x * y) - mu1 * mu2
    c1, c2 = (k1 * max_val) ** 2, (k2 * max_val) ** 2
    numerator = (2.0 * mu1 * mu2 + c1) * (2.0 * covariance + c2)
    denominator = (mu1 * mu1 + mu2 * mu2 + c1) * (var1 + var2 + c2)
    result = mean(numerator / denominator, axis=(1, 2, 3))
    result = squeeze(result, 0) if len(first) == 3 else result
    return result if dtype.kind == "f" else cast(result, dtype)
