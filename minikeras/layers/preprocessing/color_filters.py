"""Augmentations that mix each pixel with its image or its neighbours: `Equalization`,
`RandomColorDegeneration`, `RandomSharpness` and `RandomGaussianBlur`.

Like the other random image layers (see `augmentation`), each changes images
unless called with `training=False`, drawing from its own seed generator
(`Equalization` draws nothing but, as in Keras, also passes images through at
inference). The filters pad the images with zeros, as Keras's depthwise
convolution with `padding="same"` does, so the border pixels darken a little.
"""

import numpy as np

from minikeras.engine.tensor import Tensor
from minikeras.layers.preprocessing.augmentation import TransformImageLayer, keras_factor
from minikeras.layers.preprocessing.image import ImageLayer, check_size
from minikeras.layers.preprocessing.random_color import sorted_value_range
from minikeras.ops.image_color import rgb_to_grayscale
from minikeras.ops.image_filters import gaussian_blur

__all__ = [
    "Equalization",
    "RandomColorDegeneration",
    "RandomGaussianBlur",
    "RandomSharpness",
    "filter_2d",
]


def filter_2d(images, rows_kernel, cols_kernel=None):
    """Correlates each channel of channels-last images with a kernel, zero-padded ("same").

    Args:
        images: a float array `(batch, rows, cols, channels)`.
        rows_kernel: a 2-D kernel `(k_rows, k_cols)` with odd sides, or, with
            `cols_kernel`, the 1-D kernel along the rows of a separable one.
        cols_kernel: None, or the 1-D kernel along the columns.

    Returns:
        A float array of the images' shape and dtype.

    Example:
        >>> from minikeras.layers.preprocessing.color_filters import filter_2d
        >>> filter_2d(np.ones((1, 1, 3, 1)), np.array([[1.0, 1.0, 1.0]]))[0, 0, :, 0]
        array([2., 3., 2.])
    """
    kernel = np.asarray(rows_kernel, np.float64)
    if cols_kernel is not None:
        kernel = np.outer(kernel, cols_kernel)
    k_rows, k_cols = kernel.shape
    rows, cols = images.shape[1], images.shape[2]
    padded = np.pad(
        images.astype(np.float64),
        [(0, 0), (k_rows // 2, k_rows // 2), (k_cols // 2, k_cols // 2), (0, 0)],
    )
    out = np.zeros(images.shape, np.float64)
    for i in range(k_rows):
        for j in range(k_cols):
            if kernel[i, j]:
                out += kernel[i, j] * padded[:, i : i + rows, j : j + cols]
    return out.astype(images.dtype)


def _equalize(channel, bins):
    """One channel, values in [0, 255], equalized as Keras does (a 255-level lookup table)."""
    indices = np.clip(np.trunc(channel * ((bins - 1) / 255.0)), 0, bins - 1).astype(int)
    histogram = np.bincount(indices.ravel(), minlength=bins)
    if np.count_nonzero(histogram) <= 1:
        return channel
    cdf = np.cumsum(histogram)
    cdf_min = cdf[np.nonzero(cdf)[0][0]]
    denominator = max(cdf[-1] - cdf_min, 1)
    table = np.clip(np.round((cdf - cdf_min) * 255.0 / denominator), 0, 255)
    return table[indices]


class Equalization(ImageLayer):
    """Equalizes each channel's histogram, spreading its values over `value_range`.

    On values mapped to `[0, 255]`, per image and channel: a histogram of
    `bins` bins, its cumulative counts `cdf`, and each value replaced by
    `round(255 (cdf[bin] - cdf_min) / (cdf[-1] - cdf_min))` of its bin; a
    channel with a single bin used is left as it is. As in Keras it applies
    only when `training` is not False (the default of a call is True). Keras
    counts the histogram over the whole batch; minikeras over each image, so an
    image's result does not depend on the others of its batch.

    Args:
        value_range: `(low, high)` of the pixel values (default `(0, 255)`).
        bins: the number of histogram bins, an int >= 1 (default 256).
        data_format: `"channels_last"` or `"channels_first"`; None (the default)
            means `mk.config.image_data_format()` when the layer is made.
        **kwargs: `name`, `trainable`, `dtype`.

    Input shape:
        `(batch, rows, cols, channels)` or `(rows, cols, channels)`.

    Output shape:
        The inputs' shape.

    Raises:
        ValueError: for a bad `value_range` or `bins`.

    Example:
        >>> image = np.array([[[0.1], [0.2], [0.2], [0.3]]])
        >>> mk.layers.Equalization(value_range=(0, 1))(image).numpy().ravel().round(3)
        array([0.   , 0.667, 0.667, 1.   ], dtype=float32)
    """

    def __init__(self, value_range=(0, 255), bins=256, data_format=None, **kwargs):
        super().__init__(data_format=data_format, **kwargs)
        self.value_range = sorted_value_range("Equalization", value_range)
        self.bins = check_size("Equalization", "bins", bins)

    def call(self, inputs, training=True):
        # (True by default, as Keras's: a call without `training` equalizes)
        return super().call(inputs, training)

    def transform(self, images, training):
        if not training:
            return images
        low, high = self.value_range
        values = (images.numpy().astype(np.float64) - low) * (255.0 / (high - low))
        out = np.empty_like(values)
        for image in range(values.shape[0]):
            for channel in range(values.shape[-1]):
                out[image, ..., channel] = _equalize(values[image, ..., channel], self.bins)
        return Tensor((out * ((high - low) / 255.0) + low).astype(images.dtype))

    def get_config(self):
        return {**super().get_config(), "bins": self.bins, "value_range": self.value_range}


class RandomColorDegeneration(TransformImageLayer):
    """Blends each image toward its grayscale version by a random amount while training.

    Per image `f` is drawn uniformly from `factor`, and
    `x + f (gray - x)`, clipped to `value_range`, where `gray` is the luma
    `0.2989 R + 0.5870 G + 0.1140 B`: `f = 1` gives the grayscale image, a
    negative `f` more colourful. As in Keras's code, a number `f` means
    `[-f, f]` (its docstring says `[0, f]`). One-channel images stay as they are.

    Args:
        factor: a number or a pair `(lower, upper)` in `[-1, 1]`.
        value_range: `(low, high)` of the pixel values (default `(0, 255)`).
        data_format: `"channels_last"` or `"channels_first"`; None (the default)
            means `mk.config.image_data_format()` when the layer is made.
        seed: an int for reproducible draws, or None.
        **kwargs: `name`, `trainable`, `dtype`.

    Input shape:
        `(batch, rows, cols, channels)` or `(rows, cols, channels)`, 1 or 3 channels.

    Output shape:
        The inputs' shape.

    Raises:
        ValueError: for a bad `factor` or `value_range`; while training, for
            images whose channels are neither 1 nor 3.

    Example:
        >>> layer = mk.layers.RandomColorDegeneration((0.5, 0.5))
        >>> layer(np.array([[[[255.0, 0.0, 0.0]]]]), training=True).numpy().ravel().round(2)
        array([165.61,  38.11,  38.11], dtype=float32)
    """

    def __init__(self, factor, value_range=(0, 255), data_format=None, seed=None, **kwargs):
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        self._range = keras_factor("RandomColorDegeneration", "factor", factor, low=-1.0)
        self.factor = factor
        self.value_range = sorted_value_range("RandomColorDegeneration", value_range)

    def get_random_transformation(self, images, rng):
        return {"factor": rng.uniform(*self._range, (len(images), 1, 1, 1))}

    def transform_images(self, images, transformation):
        channels = images.shape[-1]
        if channels not in (1, 3):
            raise ValueError(
                f"RandomColorDegeneration '{self.name}' needs images with 1 or 3 channels, got "
                f"{channels} (images of shape {images.shape}, channels last)"
            )
        if channels == 1:
            return images
        gray = rgb_to_grayscale(images, "channels_last").numpy()
        factor = np.asarray(transformation["factor"], images.dtype).reshape(-1, 1, 1, 1)
        return np.clip(images + factor * (gray - images), *self.value_range)

    def get_config(self):
        return {**super().get_config(), "factor": self.factor, "value_range": self.value_range}


_SMOOTH = np.array([[1.0, 1.0, 1.0], [1.0, 5.0, 1.0], [1.0, 1.0, 1.0]]) / 13.0


class RandomSharpness(TransformImageLayer):
    """Blurs or sharpens each image by a random amount while training.

    Per image `f` is drawn uniformly from `factor` (`f` means `[0, f]`), and
    `x + (1 - 2f) (smooth - x)`, clipped to `value_range`, where `smooth` is
    the image filtered with `[[1, 1, 1], [1, 5, 1], [1, 1, 1]] / 13` (zero
    padding): `f = 0` gives the smoothed image, `0.5` the image itself, `1`
    sharpens it as much as `0` smooths.

    Args:
        factor: a number or a pair `(lower, upper)` in `[0, 1]`.
        value_range: `(low, high)` of the pixel values (default `(0, 255)`).
        data_format: `"channels_last"` or `"channels_first"`; None (the default)
            means `mk.config.image_data_format()` when the layer is made.
        seed: an int for reproducible draws, or None.
        **kwargs: `name`, `trainable`, `dtype`.

    Input shape:
        `(batch, rows, cols, channels)` or `(rows, cols, channels)`.

    Output shape:
        The inputs' shape.

    Raises:
        ValueError: for a bad `factor` or `value_range`.

    Example:
        >>> image = np.zeros((1, 3, 3, 1))
        >>> image[0, 1, 1, 0] = 130.0
        >>> smooth = mk.layers.RandomSharpness((0.0, 0.0))
        >>> smooth(image, training=True).numpy()[0, :, :, 0]
        array([[10., 10., 10.],
               [10., 50., 10.],
               [10., 10., 10.]], dtype=float32)
    """

    def __init__(self, factor, value_range=(0, 255), data_format=None, seed=None, **kwargs):
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        self._range = keras_factor("RandomSharpness", "factor", factor)
        self.factor = factor
        self.value_range = sorted_value_range("RandomSharpness", value_range)

    def get_random_transformation(self, images, rng):
        return {"factor": rng.uniform(*self._range, len(images))}

    def transform_images(self, images, transformation):
        sharpness = np.asarray(transformation["factor"], images.dtype).reshape(-1, 1, 1, 1) * 2
        smoothed = filter_2d(images, _SMOOTH)
        return np.clip(images + (1.0 - sharpness) * (smoothed - images), *self.value_range)

    def get_config(self):
        return {**super().get_config(), "factor": self.factor, "value_range": self.value_range}


def _odd_sizes(kernel_size):
    sizes = kernel_size if isinstance(kernel_size, (list, tuple)) else (kernel_size,) * 2
    if len(sizes) != 2 or any(
        isinstance(s, bool) or not isinstance(s, (int, np.integer)) or s < 1 or s % 2 == 0
        for s in sizes
    ):
        raise ValueError(
            f"RandomGaussianBlur: `kernel_size` must be an odd int >= 1 or a pair of them, got "
            f"{kernel_size!r}"
        )
    return (int(sizes[0]), int(sizes[1]))


class RandomGaussianBlur(TransformImageLayer):
    """Blurs images with a Gaussian kernel, each with a random probability, while training.

    Per image a probability is drawn uniformly from `factor` (`f` means
    `[0, f]`) and the image is blurred with that probability. Per call, the
    standard deviations along the columns and the rows are drawn uniformly
    from `sigma` (`s` means `[0, s]`), plus 1e-6, and shared by the batch, as
    in Keras. The result is clipped to `value_range`.

    Args:
        factor: a number or a pair `(lower, upper)` in `[0, 1]` (default 1.0).
        kernel_size: an odd int, or a pair `(columns, rows)` of them (default 3).
        sigma: a number `s` >= 0 (Keras takes only `s <= 1`), or a pair of
            numbers >= 0 (default 1.0).
        value_range: `(low, high)` of the pixel values (default `(0, 255)`).
        data_format: `"channels_last"` or `"channels_first"`; None (the default)
            means `mk.config.image_data_format()` when the layer is made.
        seed: an int for reproducible draws, or None.
        **kwargs: `name`, `trainable`, `dtype`.

    Input shape:
        `(batch, rows, cols, channels)` or `(rows, cols, channels)`.

    Output shape:
        The inputs' shape.

    Raises:
        ValueError: for a bad `factor`, `kernel_size`, `sigma` or `value_range`.

    Example:
        >>> image = np.zeros((1, 1, 3, 1))
        >>> image[0, 0, 1, 0] = 100.0
        >>> blur = mk.layers.RandomGaussianBlur(factor=(1.0, 1.0), kernel_size=(3, 1), sigma=(1, 1))
        >>> blur(image, training=True).numpy().ravel().round(2)
        array([27.41, 45.19, 27.41], dtype=float32)
    """

    def __init__(self, factor=1.0, kernel_size=3, sigma=1.0, value_range=(0, 255),
                 data_format=None, seed=None, **kwargs):  # fmt: skip
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        self._range = keras_factor("RandomGaussianBlur", "factor", factor)
        self.factor = factor
        self.kernel_size = _odd_sizes(kernel_size)
        # (stored as Keras stores it, the pair; Keras refuses one number above 1)
        self.sigma = keras_factor("RandomGaussianBlur", "sigma", sigma, high=np.inf)
        self.value_range = sorted_value_range("RandomGaussianBlur", value_range)

    def get_random_transformation(self, images, rng):
        probability = rng.uniform(*self._range, len(images))
        return {
            "should_apply_blur": rng.random(len(images)) < probability,
            "blur_factor": rng.uniform(*self.sigma, 2) + 1e-6,
        }

    def transform_images(self, images, transformation):
        sigma_cols, sigma_rows = np.asarray(transformation["blur_factor"], np.float64)
        blurred = gaussian_blur(
            images, self.kernel_size, (sigma_cols, sigma_rows), "channels_last"
        ).numpy()
        chosen = np.asarray(transformation["should_apply_blur"], bool)[:, None, None, None]
        return np.clip(np.where(chosen, blurred, images), *self.value_range)

    def get_config(self):
        return {
            **super().get_config(),
            "factor": self.factor,
            "kernel_size": self.kernel_size,
            "sigma": self.sigma,
            "value_range": self.value_range,
        }
