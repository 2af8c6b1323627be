"""Colour augmentations, pixel by pixel: `RandomGrayscale`, `RandomInvert`, `Solarization`,
`RandomPosterization`, and the deterministic `AutoContrast`.

Like the other random image layers (see `augmentation`), each changes images
unless called with `training=False`, drawing from its own seed generator.
The pixel values are expected within `value_range` (default `(0, 255)`);
`Solarization`, `RandomPosterization` and `AutoContrast` work on the values
mapped linearly to `[0, 255]` and map them back, as Keras does.
"""

import numpy as np

from minikeras.engine.tensor import Tensor
from minikeras.layers.preprocessing.augmentation import RandomImageLayer
from minikeras.layers.preprocessing.image import ImageLayer
from minikeras.ops.image_color import rgb_to_grayscale

__all__ = [
    "AutoContrast",
    "RandomGrayscale",
    "RandomInvert",
    "RandomPosterization",
    "Solarization",
    "probability_range",
    "sorted_value_range",
]


def probability_range(layer_class, argument, factor, low=0.0, high=1.0):
    """Keras's reading of a `factor` in `[low, high]`: `f` means `(low, f)`, a pair is sorted.

    Args:
        layer_class: the layer's name, for errors.
        argument: the argument's name, for errors.
        factor: a number or a pair of numbers.
        low: the least value allowed.
        high: the greatest value allowed.

    Returns:
        The pair `(lower, upper)`, floats.

    Raises:
        ValueError: for anything else, or values outside `[low, high]`.

    Example:
        >>> from minikeras.layers.preprocessing.random_color import probability_range
        >>> probability_range("RandomInvert", "factor", 0.3)
        (0.0, 0.3)
        >>> probability_range("RandomPosterization", "factor", (6, 2), low=1, high=8)
        (2.0, 6.0)
    """
    if isinstance(factor, (int, float, np.number)) and not isinstance(factor, bool):
        pair = (float(low), float(factor))
    elif isinstance(factor, (list, tuple)) and len(factor) == 2:
        pair = tuple(sorted(float(f) for f in factor))
    else:
        pair = None
    if pair is None or not low <= pair[0] <= pair[1] <= high:
        raise ValueError(
            f"{layer_class}: `{argument}` must be a number or a pair of numbers in "
            f"[{low}, {high}], got {factor!r}"
        )
    return pair


def sorted_value_range(layer_class, value_range):
    """`value_range` as the sorted list `[low, high]`, checked (low < high).

    Args:
        layer_class: the layer's name, for errors.
        value_range: a pair of numbers.

    Returns:
        A list of two floats.

    Raises:
        ValueError: for anything but two different numbers.

    Example:
        >>> from minikeras.layers.preprocessing.random_color import sorted_value_range
        >>> sorted_value_range("AutoContrast", (1, 0))
        [0.0, 1.0]
    """
    try:
        low, high = sorted(float(v) for v in value_range)
    except (TypeError, ValueError):
        low = high = None
    if low is None or not low < high:
        raise ValueError(
            f"{layer_class}: `value_range` must be a pair (low, high) of two different "
            f"numbers, got {value_range!r}"
        )
    return [low, high]


def _to_255(images, value_range):
    low, high = value_range
    return images if (low, high) == (0, 255) else (images - low) * (255.0 / (high - low))


def _from_255(images, value_range):
    low, high = value_range
    return images if (low, high) == (0, 255) else images * ((high - low) / 255.0) + low


class RandomGrayscale(RandomImageLayer):
    """Turns each image to grayscale with probability `factor` while training.

    A chosen image's channels all become its luma
    `0.2989 R + 0.5870 G + 0.1140 B`; the number of channels stays. Images
    with one channel are left as they are.

    Args:
        factor: the probability, in `[0, 1]`, that an image is turned.
        data_format: `"channels_last"` or `"channels_first"`; None (the default)
            means `mk.config.image_data_format()` when the layer is made.
        seed: an int for reproducible draws, or None.
        **kwargs: `name`, `trainable`, `dtype`.

    Input shape:
        `(batch, rows, cols, channels)` or `(rows, cols, channels)`, with 1 or 3 channels.

    Output shape:
        The inputs' shape.

    Raises:
        ValueError: for a `factor` outside `[0, 1]`; while training, for images
            whose channels are neither 1 nor 3.

    Example:
        >>> image = np.array([[[[255.0, 0.0, 0.0]]]])
        >>> mk.layers.RandomGrayscale(factor=1.0)(image, training=True).numpy().ravel().round(2)
        array([76.22, 76.22, 76.22], dtype=float32)
    """

    def __init__(self, factor=0.5, data_format=None, seed=None, **kwargs):
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        if isinstance(factor, bool) or not isinstance(factor, (int, float)) or not 0 <= factor <= 1:
            raise ValueError(
                f"RandomGrayscale: `factor` must be a number in [0, 1], got {factor!r}"
            )
        self.factor = factor

    def augment(self, images, rng):
        channels = images.shape[-1]
        if channels not in (1, 3):
            raise ValueError(
                f"RandomGrayscale '{self.name}' needs images with 1 or 3 channels, got "
                f"{channels} (images of shape {images.shape}, channels last)"
            )
        chosen = rng.random(len(images)) < self.factor
        if channels == 1:
            return images
        gray = rgb_to_grayscale(images, "channels_last").numpy()
        return np.where(chosen[:, None, None, None], gray, images)

    def get_config(self):
        return {**super().get_config(), "factor": self.factor}


class RandomInvert(RandomImageLayer):
    """Inverts each image's values, `value_range[1] - x`, with a random probability while training.

    For each image a probability `p` is drawn uniformly from `factor`
    (`f` means `[0, f]`), and the image is inverted with probability `p`.

    Args:
        factor: a number or a pair `(lower, upper)` in `[0, 1]`.
        value_range: `(low, high)` of the pixel values; `high` is what inversion
            subtracts from (default `(0, 255)`).
        seed: an int for reproducible draws, or None.
        data_format: `"channels_last"` or `"channels_first"`; None (the default)
            means `mk.config.image_data_format()` when the layer is made.
        **kwargs: `name`, `trainable`, `dtype`.

    Input shape:
        `(batch, rows, cols, channels)` or `(rows, cols, channels)`.

    Output shape:
        The inputs' shape.

    Raises:
        ValueError: for a bad `factor`.

    Example:
        >>> layer = mk.layers.RandomInvert(factor=(1.0, 1.0), value_range=(0, 1))
        >>> layer(np.array([[[[0.25]], [[1.0]]]]), training=True).numpy().ravel()
        array([0.75, 0.  ], dtype=float32)
    """

    def __init__(self, factor=1.0, value_range=(0, 255), seed=None, data_format=None, **kwargs):
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        self._range = probability_range("RandomInvert", "factor", factor)
        sorted_value_range("RandomInvert", value_range)  # (checked; Keras keeps its order)
        self.factor = factor
        self.value_range = list(value_range)

    def augment(self, images, rng):
        probability = rng.uniform(*self._range, len(images))
        chosen = rng.random(len(images)) < probability
        return np.where(chosen[:, None, None, None], self.value_range[1] - images, images)

    def get_config(self):
        return {**super().get_config(), "factor": self.factor, "value_range": self.value_range}


class Solarization(RandomImageLayer):
    """Inverts pixels at or above a random threshold, after a random addition, while training.

    On values mapped to `[0, 255]`, per image:

        x = clip(x + addition, 0, 255)
        x = x if x < threshold else 255 - x

    with `addition` drawn uniformly from `[a0, 255 a1]` and `threshold` from
    `[t0, 255 t1]`, where `(a0, a1)` and `(t0, t1)` are the factors (`f`
    means `(0, f)`; as in Keras, the lower bound is not scaled by 255). The
    defaults (both 0) invert every pixel.

    Args:
        addition_factor: a number or a pair in `[0, 1]`.
        threshold_factor: a number or a pair in `[0, 1]`.
        value_range: `(low, high)` of the pixel values (default `(0, 255)`).
        seed: an int for reproducible draws, or None.
        **kwargs: `name`, `trainable`, `dtype`, `data_format`.

    Input shape:
        `(batch, rows, cols, channels)` or `(rows, cols, channels)`.

    Output shape:
        The inputs' shape.

    Raises:
        ValueError: for a bad factor or `value_range`.

    Example:
        >>> images = np.array([[[[0.5]], [[200.0]]]])
        >>> mk.layers.Solarization()(images, training=True).numpy().ravel()  # all inverted
        array([254.5,  55. ], dtype=float32)
        >>> layer = mk.layers.Solarization(threshold_factor=(1.0, 1.0))  # threshold in [1, 255]
        >>> layer(np.array([[[[0.5]], [[255.0]]]]), training=True).numpy().ravel()
        array([0.5, 0. ], dtype=float32)
    """

    def __init__(self, addition_factor=0.0, threshold_factor=0.0, value_range=(0, 255),
                 seed=None, **kwargs):  # fmt: skip
        super().__init__(seed=seed, **kwargs)
        self._addition = probability_range("Solarization", "addition_factor", addition_factor)
        self._threshold = probability_range("Solarization", "threshold_factor", threshold_factor)
        self.addition_factor = addition_factor
        self.threshold_factor = threshold_factor
        self.value_range = sorted_value_range("Solarization", value_range)

    def augment(self, images, rng):
        shape = (len(images), 1, 1, 1)
        additions = rng.uniform(self._addition[0], self._addition[1] * 255, shape)
        thresholds = rng.uniform(self._threshold[0], self._threshold[1] * 255, shape)
        results = np.clip(_to_255(images, self.value_range) + additions, 0, 255)
        results = np.where(results < thresholds, results, 255 - results)
        return _from_255(results, self.value_range)

    def get_config(self):
        return {
            **super().get_config(),
            "addition_factor": self.addition_factor,
            "threshold_factor": self.threshold_factor,
            "value_range": self.value_range,
        }


class RandomPosterization(RandomImageLayer):
    """Keeps only the top `bits` bits of each 8-bit value, `bits` random per image, while training.

    On values mapped to `[0, 255]` and truncated to integers, per image
    `x = (x >> (8 - bits)) << (8 - bits)`, with `bits` drawn from the integers
    in `[lower, upper)` of `factor` (`f` means `[1, f)`; `lower` itself when
    the two are equal), then mapped back to `value_range`. Values outside
    `value_range` are clipped into it first (Keras leaves them to an unsigned cast).

    Args:
        factor: an int or a pair of ints in `[1, 8]`.
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
        >>> layer = mk.layers.RandomPosterization(factor=(2, 2))  # keep 2 bits: steps of 64
        >>> layer(np.array([[[[100.0]], [[255.0]]]]), training=True).numpy().ravel()
        array([ 64., 192.], dtype=float32)
    """

    def __init__(self, factor, value_range=(0, 255), data_format=None, seed=None, **kwargs):
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        pair = probability_range("RandomPosterization", "factor", factor, 1, 8)
        self._range = tuple(int(f) for f in pair)
        self.factor = factor
        self.value_range = sorted_value_range("RandomPosterization", value_range)

    def augment(self, images, rng):
        low, high = self._range
        bits = rng.integers(low, high, len(images)) if low != high else np.full(len(images), low)
        shift = (8 - bits).astype(np.uint8)[:, None, None, None]
        values = np.clip(_to_255(images, self.value_range), 0, 255).astype(np.uint8)
        values = np.left_shift(np.right_shift(values, shift), shift)
        return _from_255(values.astype(images.dtype), self.value_range)

    def get_config(self):
        return {**super().get_config(), "factor": self.factor, "value_range": self.value_range}


class AutoContrast(ImageLayer):
    """Stretches each image's channels to the full `value_range`, in training and inference.

    Per image and channel, `(x - min) / (max - min)` over the full range
    (on values mapped to `[0, 255]`, clipped there); a constant channel is
    left as it is. Not random: it applies whatever `training` is, as in Keras.

    Args:
        value_range: `(low, high)` of the pixel values (default `(0, 255)`).
        **kwargs: `name`, `trainable`, `dtype`, `data_format`.

    Input shape:
        `(batch, rows, cols, channels)` or `(rows, cols, channels)`.

    Output shape:
        The inputs' shape.

    Raises:
        ValueError: for a bad `value_range`.

    Example:
        >>> image = np.array([[[0.2], [0.4], [0.3]]])
        >>> mk.layers.AutoContrast(value_range=(0, 1))(image).numpy().ravel()
        array([0. , 1. , 0.5], dtype=float32)
    """

    def __init__(self, value_range=(0, 255), **kwargs):
        super().__init__(**kwargs)
        self.value_range = sorted_value_range("AutoContrast", value_range)

    def transform(self, images, training):
        original = images.numpy()
        values = _to_255(original.astype(np.float64), self.value_range)
        low = values.min(axis=(1, 2), keepdims=True)
        high = values.max(axis=(1, 2), keepdims=True)
        with np.errstate(divide="ignore", invalid="ignore"):
            scale = 255.0 / (high - low)
            stretched = np.clip(values * scale - low * scale, 0.0, 255.0)
        results = _from_255(stretched, self.value_range)
        results = np.where(np.isnan(results), original, results)
        return Tensor(results.astype(original.dtype))

    def get_config(self):
        return {**super().get_config(), "value_range": self.value_range}
