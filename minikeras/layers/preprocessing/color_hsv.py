"""Colour augmentations through hue, saturation and value: `RandomHue`, `RandomSaturation`,
and `RandomColorJitter`, which chains them after `RandomBrightness` and `RandomContrast`.

Like the other random image layers (see `augmentation`), each changes images
unless called with `training=False`, drawing from its own seed generator. The
conversions follow `keras.ops.image.rgb_to_hsv` and `hsv_to_rgb`: hue, saturation
and value in `[0, 1]` for RGB values in `[0, 1]` (saturation and hue do not
depend on the scale of the values, value is their maximum).
"""

import numpy as np

from minikeras.layers.preprocessing.augmentation import (
    RandomImageLayer,
    TransformImageLayer,
    keras_factor,
)
from minikeras.layers.preprocessing.random_color import sorted_value_range
from minikeras.layers.preprocessing.random_image import RandomBrightness, RandomContrast
from minikeras.ops import image_color

__all__ = ["RandomColorJitter", "RandomHue", "RandomSaturation"]


def _rgb_to_hsv(images):
    """Channels-last RGB images (a numpy array) to HSV by `ops.image.rgb_to_hsv`, as an array."""
    return image_color.rgb_to_hsv(images, "channels_last").numpy()


def _hsv_to_rgb(images):
    """Channels-last HSV images (a numpy array) to RGB by `ops.image.hsv_to_rgb`, as an array."""
    return image_color.hsv_to_rgb(images, "channels_last").numpy()


def _check_rgb(layer, images):
    if images.shape[-1] != 3:
        raise ValueError(
            f"{type(layer).__name__} '{layer.name}' needs RGB images (3 channels), got "
            f"{images.shape[-1]} (images of shape {images.shape}, channels last)"
        )


class RandomHue(TransformImageLayer):
    """Turns each image's hue by a random amount while training.

    Per image, `u` is drawn uniformly from `factor` (`f` means `[0, f]`) and
    a sign at random; the hue (a fraction of a turn, on values mapped to
    `[0, 1]`) moves by `± u / 2` and wraps around, so `factor=1` turns by up
    to half a turn either way. The result is clipped to `value_range`.

    Args:
        factor: a number or a pair `(lower, upper)` in `[0, 1]`.
        value_range: `(low, high)` of the pixel values (default `(0, 255)`).
        data_format: `"channels_last"` or `"channels_first"`; None (the default)
            means `mk.config.image_data_format()` when the layer is made.
        seed: an int for reproducible draws, or None.
        **kwargs: `name`, `trainable`, `dtype`.

    Input shape:
        `(batch, rows, cols, 3)` or `(rows, cols, 3)` (RGB).

    Output shape:
        The inputs' shape.

    Raises:
        ValueError: for a bad `factor` or `value_range`; while training, for
            images without 3 channels.

    Example:
        >>> red = np.array([[[[255.0, 0.0, 0.0]]]])
        >>> out = mk.layers.RandomHue((1.0, 1.0), seed=0)(red, training=True)
        >>> out.numpy().ravel()  # half a turn, either way: cyan
        array([  0., 255., 255.], dtype=float32)
    """

    def __init__(self, factor, value_range=(0, 255), data_format=None, seed=None, **kwargs):
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        self._range = keras_factor("RandomHue", "factor", factor)
        self.factor = factor
        self.value_range = sorted_value_range("RandomHue", value_range)

    def get_random_transformation(self, images, rng):
        sign = np.where(rng.random(len(images)) > 0.5, -1.0, 1.0)
        return {"factor": sign * rng.uniform(*self._range, len(images)) * 0.5}

    def transform_images(self, images, transformation):
        _check_rgb(self, images)
        low, high = self.value_range
        hsv = _rgb_to_hsv((images - low) / (high - low))
        shift = np.asarray(transformation["factor"], hsv.dtype)[:, None, None]
        hue = hsv[..., 0] + shift
        hue = np.where(hue > 1.0, hue - 1.0, np.where(hue < 0.0, hue + 1.0, hue))
        rgb = np.clip(_hsv_to_rgb(np.stack([hue, hsv[..., 1], hsv[..., 2]], axis=-1)), 0.0, 1.0)
        return (rgb * (high - low) + low).astype(images.dtype)

    def get_config(self):
        return {**super().get_config(), "factor": self.factor, "value_range": self.value_range}


class RandomSaturation(TransformImageLayer):
    """Scales each image's saturation by a random amount while training.

    Per image, `u` is drawn uniformly from `factor` and the saturation is
    multiplied by `u / (1 - u)`, then clipped to `[0, 1]`: `u = 0.5` keeps the
    image, `0` (or less) makes it gray, `1` fully saturated. As in Keras's code,
    a number `f` means `[-f, f]` (its docstring says `[0, f]`), so about half
    the draws make the image gray. Keras clips the saturation to
    `value_range` rather than `[0, 1]`, which gives values outside the image's
    range for `u > 0.5` with `value_range=(0, 255)`; minikeras clips to `[0, 1]`.

    Args:
        factor: a number in `[-1, 1]` or a pair `(lower, upper)` in `[-1, 1]`.
        value_range: `(low, high)` of the pixel values (default `(0, 255)`).
        data_format: `"channels_last"` or `"channels_first"`; None (the default)
            means `mk.config.image_data_format()` when the layer is made.
        seed: an int for reproducible draws, or None.
        **kwargs: `name`, `trainable`, `dtype`.

    Input shape:
        `(batch, rows, cols, 3)` or `(rows, cols, 3)` (RGB).

    Output shape:
        The inputs' shape.

    Raises:
        ValueError: for a bad `factor` or `value_range`; while training, for
            images without 3 channels.

    Example:
        >>> image = np.array([[[[200.0, 100.0, 100.0]]]])
        >>> gray = mk.layers.RandomSaturation((0.0, 0.0))
        >>> gray(image, training=True).numpy().ravel()
        array([200., 200., 200.], dtype=float32)
    """

    def __init__(self, factor, value_range=(0, 255), data_format=None, seed=None, **kwargs):
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        self._range = keras_factor("RandomSaturation", "factor", factor, low=-1.0)
        self.factor = factor
        self.value_range = sorted_value_range("RandomSaturation", value_range)

    def get_random_transformation(self, images, rng):
        drawn = rng.uniform(*self._range, len(images))
        return {"factor": drawn / (1.0 - drawn + 1e-7)}

    def transform_images(self, images, transformation):
        _check_rgb(self, images)
        hsv = _rgb_to_hsv(images)
        scale = np.asarray(transformation["factor"], hsv.dtype)[:, None, None]
        saturation = np.clip(hsv[..., 1] * scale, 0.0, 1.0)
        return _hsv_to_rgb(np.stack([hsv[..., 0], saturation, hsv[..., 2]], axis=-1))

    def get_config(self):
        return {**super().get_config(), "factor": self.factor, "value_range": self.value_range}


class RandomColorJitter(RandomImageLayer):
    """Changes brightness, contrast, saturation and hue in turn, each at random, while training.

    Each factor that is not None adds its step, in this order, drawn as the
    layer of that name does: `RandomBrightness(brightness_factor)`,
    `RandomContrast(contrast_factor)`, `RandomSaturation(saturation_factor)`,
    `RandomHue(hue_factor)`, all with `value_range`. With no factor given the
    images pass unchanged.

    Args:
        value_range: `(low, high)` of the pixel values (default `(0, 255)`).
        brightness_factor: None, or `RandomBrightness`'s `factor`.
        contrast_factor: None, or `RandomContrast`'s `factor`.
        saturation_factor: None, or `RandomSaturation`'s `factor`.
        hue_factor: None, or `RandomHue`'s `factor`.
        seed: an int for reproducible draws, or None.
        data_format: `"channels_last"` or `"channels_first"`; None (the default)
            means `mk.config.image_data_format()` when the layer is made.
        **kwargs: `name`, `trainable`, `dtype`.

    Input shape:
        `(batch, rows, cols, channels)` or `(rows, cols, channels)`; 3 channels
        (RGB) with a saturation or hue factor.

    Output shape:
        The inputs' shape.

    Raises:
        ValueError: for a bad factor or `value_range`.

    Example:
        >>> layer = mk.layers.RandomColorJitter(value_range=(0, 1), brightness_factor=(0.5, 0.5))
        >>> layer(np.full((1, 1, 1, 3), 0.25), training=True).numpy().ravel()
        array([0.75, 0.75, 0.75], dtype=float32)
    """

    def __init__(self, value_range=(0, 255), brightness_factor=None, contrast_factor=None,
                 saturation_factor=None, hue_factor=None, seed=None, data_format=None,
                 **kwargs):  # fmt: skip
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        sorted_value_range("RandomColorJitter", value_range)
        self.value_range = list(value_range)
        self.brightness_factor = brightness_factor
        self.contrast_factor = contrast_factor
        self.saturation_factor = saturation_factor
        self.hue_factor = hue_factor
        steps = (
            (RandomBrightness, brightness_factor),
            (RandomContrast, contrast_factor),
            (RandomSaturation, saturation_factor),
            (RandomHue, hue_factor),
        )
        # (kept in a tuple, not as sublayers: they hold no state, the jitter draws for them)
        self._steps = tuple(
            kind(factor, value_range=value_range, seed=0, data_format="channels_last")
            for kind, factor in steps
            if factor is not None
        )

    def augment(self, images, rng):
        for step in self._steps:
            images = step.augment(images, rng)
        return images

    def get_config(self):
        return {
            **super().get_config(),
            "value_range": self.value_range,
            "brightness_factor": self.brightness_factor,
            "contrast_factor": self.contrast_factor,
            "saturation_factor": self.saturation_factor,
            "hue_factor": self.hue_factor,
        }
