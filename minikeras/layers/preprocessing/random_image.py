"""Random augmentations without resampling: `RandomFlip`, `RandomCrop`, `RandomContrast`
and `RandomBrightness`."""

import numpy as np

from minikeras.layers.preprocessing.augmentation import RandomImageLayer, factor_range
from minikeras.layers.preprocessing.encoding import check_choice
from minikeras.layers.preprocessing.image import check_size, crop_to_aspect, resize_images

__all__ = ["RandomBrightness", "RandomContrast", "RandomCrop", "RandomFlip"]

FLIP_MODES = ("horizontal", "vertical", "horizontal_and_vertical")


class RandomFlip(RandomImageLayer):
    """Flips each image left-right and/or up-down with probability 1/2 while training.

    Args:
        mode: `"horizontal"` (left-right), `"vertical"` (up-down) or
            `"horizontal_and_vertical"` (default; each drawn separately).
        seed: an int for reproducible draws, or None.
        data_format: `"channels_last"` or `"channels_first"`; None (the default)
            means `mk.config.image_data_format()` when the layer is made.
        **kwargs: `name`, `trainable`, `dtype`.

    Input shape:
        `(batch, rows, cols, channels)` or `(rows, cols, channels)`.

    Output shape:
        The inputs' shape.

    Raises:
        ValueError: for an unknown `mode`.

    Example:
        >>> images = np.tile(np.arange(3.0).reshape(1, 1, 3, 1), (100, 1, 1, 1))
        >>> out = mk.layers.RandomFlip("horizontal", seed=1)(images, training=True).numpy()
        >>> sorted({tuple(row) for row in out[:, 0, :, 0].tolist()})
        [(0.0, 1.0, 2.0), (2.0, 1.0, 0.0)]
    """

    def __init__(self, mode="horizontal_and_vertical", seed=None, data_format=None, **kwargs):
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        self.mode = check_choice("RandomFlip", "mode", mode, FLIP_MODES)

    def augment(self, images, rng):
        batch = len(images)
        if self.mode != "vertical":
            flip = rng.random(batch) < 0.5
            images = np.where(flip[:, None, None, None], images[:, :, ::-1], images)
        if self.mode != "horizontal":
            flip = rng.random(batch) < 0.5
            images = np.where(flip[:, None, None, None], images[:, ::-1], images)
        return images

    def get_config(self):
        return {**super().get_config(), "mode": self.mode}


class RandomCrop(RandomImageLayer):
    """Crops a random `(height, width)` window of the images while training.

    One window position is drawn per batch, as in Keras. At inference, and
    when an image is not larger than the window on both sides, the images
    are instead cropped to the window's aspect ratio at their center and
    resized (bilinear) to `(height, width)`, as Keras documents (the Keras
    source of this version returns inference inputs unchanged).

    Args:
        height: the output's number of rows.
        width: the output's number of columns.
        seed: an int for reproducible draws, or None.
        data_format: `"channels_last"` or `"channels_first"`; None (the default)
            means `mk.config.image_data_format()` when the layer is made.
        **kwargs: `name`, `trainable`, `dtype`.

    Input shape:
        `(batch, rows, cols, channels)` or `(rows, cols, channels)`.

    Output shape:
        `(batch, height, width, channels)` or `(height, width, channels)`.

    Raises:
        ValueError: for bad sizes.

    Example:
        >>> image = np.arange(16.0).reshape(1, 4, 4, 1)
        >>> mk.layers.RandomCrop(2, 2)(image, training=False).numpy()[0, :, :, 0]  # resized
        array([[ 2.5,  4.5],
               [10.5, 12.5]], dtype=float32)
    """

    def __init__(self, height, width, seed=None, data_format=None, **kwargs):
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        self.height = check_size("RandomCrop", "height", height)
        self.width = check_size("RandomCrop", "width", width)

    def transform(self, images, training):
        rows, cols = images.shape[1], images.shape[2]
        if training and rows > self.height and cols > self.width:
            rng = self.generator.generator
            top = int(rng.integers(0, rows - self.height + 1))
            left = int(rng.integers(0, cols - self.width + 1))
            return images[:, top : top + self.height, left : left + self.width, :]
        cropped = crop_to_aspect(images, self.height, self.width)
        if cropped.shape[1:3] == (self.height, self.width):
            return cropped
        return resize_images(cropped, self.height, self.width, "bilinear")

    def compute_output_shape(self, input_shape):
        return self._with_size(input_shape, self.height, self.width)

    def get_config(self):
        return {**super().get_config(), "height": self.height, "width": self.width}


def _value_range(layer_class, value_range):
    try:
        low, high = (float(v) for v in value_range)
    except (TypeError, ValueError):
        low = high = None
    if low is None or not low < high:
        raise ValueError(
            f"{layer_class}: `value_range` must be a pair (low, high) with low < high, got "
            f"{value_range!r}"
        )
    return [low, high]


class RandomContrast(RandomImageLayer):
    """Scales each image's contrast by a random factor while training.

    Each image (and channel) is moved away from or toward its mean:
    `(x - mean) * c + mean`, with `c` drawn uniformly from
    `[1 - lower, 1 + upper]` per image (`factor` `f` means `lower = upper = f`),
    then clipped to `value_range`.

    Args:
        factor: a number in `[0, 1]` or a pair `(lower, upper)` of them.
        value_range: the `(low, high)` the outputs are clipped to (default `(0, 255)`).
        seed: an int for reproducible draws, or None.
        **kwargs: `name`, `trainable`, `dtype`, `data_format`.

    Input shape:
        `(batch, rows, cols, channels)` or `(rows, cols, channels)`.

    Output shape:
        The inputs' shape.

    Raises:
        ValueError: for a bad `factor` or `value_range`.

    Example:
        >>> image = np.array([[10.0, 30.0]]).reshape(1, 1, 2, 1)
        >>> double = mk.layers.RandomContrast((0.0, 1.0))  # c in [1, 2]
        >>> out = double(image, training=True).numpy().ravel()
        >>> bool(out[0] <= 10.0 and out[1] >= 30.0 and out.mean() == 20.0)
        True
    """

    def __init__(self, factor, value_range=(0, 255), seed=None, **kwargs):
        super().__init__(seed=seed, **kwargs)
        single = isinstance(factor, (int, float)) and not isinstance(factor, bool)
        pair = (factor, factor) if single else factor
        if not (
            isinstance(pair, (list, tuple))
            and len(pair) == 2
            and all(isinstance(f, (int, float)) and 0 <= f <= 1 for f in pair)
        ):
            raise ValueError(
                f"RandomContrast: `factor` must be a number in [0, 1] or a pair of them, got "
                f"{factor!r}"
            )
        self._range = (1.0 - pair[0], 1.0 + pair[1])
        self.factor = factor
        self.value_range = _value_range("RandomContrast", value_range)

    def augment(self, images, rng):
        contrast = rng.uniform(*self._range, (len(images), 1, 1, 1))
        mean = images.mean(axis=(1, 2), keepdims=True)
        return np.clip((images - mean) * contrast + mean, *self.value_range)

    def get_config(self):
        return {**super().get_config(), "factor": self.factor, "value_range": self.value_range}


class RandomBrightness(RandomImageLayer):
    """Adds a random brightness offset to each image while training.

    The offset is `d * (high - low)` of `value_range`, `d` drawn uniformly
    per image from `factor` (`f` means `[-f, f]`; a pair gives the range,
    within `[-1, 1]`); outputs are clipped to `value_range`.

    Args:
        factor: a number or a pair `(lower, upper)` within `[-1, 1]`.
        value_range: the `(low, high)` of the pixel values (default `(0, 255)`).
        seed: an int for reproducible draws, or None.
        **kwargs: `name`, `trainable`, `dtype`, `data_format`.

    Input shape:
        `(batch, rows, cols, channels)` or `(rows, cols, channels)`.

    Output shape:
        The inputs' shape.

    Raises:
        ValueError: for a bad `factor` or `value_range`.

    Example:
        >>> brighter = mk.layers.RandomBrightness((0.5, 0.5), value_range=(0, 1))
        >>> brighter(np.array([[[[0.25], [0.75]]]]), training=True).numpy().ravel()
        array([0.75, 1.  ], dtype=float32)
    """

    def __init__(self, factor, value_range=(0, 255), seed=None, **kwargs):
        super().__init__(seed=seed, **kwargs)
        self._range = factor_range("RandomBrightness", "factor", factor)
        self.factor = factor
        self.value_range = _value_range("RandomBrightness", value_range)

    def augment(self, images, rng):
        low, high = self.value_range
        delta = rng.uniform(*self._range, (len(images), 1, 1, 1)) * (high - low)
        return np.clip(images + delta, low, high)

    def get_config(self):
        return {**super().get_config(), "factor": self.factor, "value_range": self.value_range}
