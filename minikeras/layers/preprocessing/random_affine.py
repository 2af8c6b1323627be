"""Random affine augmentations: `RandomRotation`, `RandomTranslation` and `RandomZoom`.

Each draws one transformation per image (Keras 3's matrices) and resamples
with `affine_transform`; outside training they return the images unchanged.
"""

import math

import numpy as np

from minikeras.layers.preprocessing.augmentation import (
    RandomImageLayer,
    affine_transform,
    check_fill,
    factor_range,
)

__all__ = ["RandomRotation", "RandomTranslation", "RandomZoom"]


class _RandomAffine(RandomImageLayer):
    """Shared arguments and resampling of the affine augmentations."""

    def __init__(self, fill_mode, interpolation, seed, fill_value, data_format, **kwargs):
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        check_fill(type(self).__name__, fill_mode, interpolation)
        self.fill_mode = fill_mode
        self.interpolation = interpolation
        self.fill_value = float(fill_value)

    def augment(self, images, rng):
        matrices = self._matrices(images.shape[0], images.shape[1], images.shape[2], rng)
        return affine_transform(
            images, matrices, self.interpolation, self.fill_mode, self.fill_value
        )

    def get_config(self):
        return {
            **super().get_config(),
            "fill_mode": self.fill_mode,
            "interpolation": self.interpolation,
            "fill_value": self.fill_value,
        }


class RandomRotation(_RandomAffine):
    """Rotates each image by a random angle while training (counter-clockwise for positive).

    The angle is drawn uniformly from `factor * 360` degrees: a number `f`
    means `[-f, f]`, a pair `(lower, upper)` that range, as fractions of a
    full turn. The rotation is about the image's center.

    Args:
        factor: a number or a pair, fractions of a full turn (0.25 is 90 degrees).
        fill_mode: `"reflect"` (default), `"wrap"`, `"constant"` or `"nearest"`.
        interpolation: `"bilinear"` (default) or `"nearest"`.
        seed: an int for reproducible draws, or None.
        fill_value: the value outside the image with `fill_mode="constant"`.
        data_format: `"channels_last"` or `"channels_first"`; None (the default)
            means `mk.config.image_data_format()` when the layer is made.
        **kwargs: `name`, `trainable`, `dtype`.

    Input shape:
        `(batch, rows, cols, channels)` or `(rows, cols, channels)`.

    Output shape:
        The inputs' shape.

    Raises:
        ValueError: for a bad factor, fill mode or interpolation.

    Example:
        >>> image = np.array([[0.0, 1.0], [2.0, 3.0]]).reshape(1, 2, 2, 1)
        >>> quarter = mk.layers.RandomRotation((0.25, 0.25), interpolation="nearest")
        >>> quarter(image, training=True).numpy()[0, :, :, 0]
        array([[1., 3.],
               [0., 2.]], dtype=float32)
    """

    def __init__(
        self,
        factor,
        fill_mode="reflect",
        interpolation="bilinear",
        seed=None,
        fill_value=0.0,
        data_format=None,
        **kwargs,
    ):
        super().__init__(fill_mode, interpolation, seed, fill_value, data_format, **kwargs)
        self.factor = factor
        self._range = factor_range("RandomRotation", "factor", factor, -math.inf, math.inf)

    def _matrices(self, batch, height, width, rng):
        angle = np.deg2rad(rng.uniform(self._range[0], self._range[1], batch) * 360.0)
        cos, sin = np.cos(angle), np.sin(angle)
        cx, cy = (width - 1) / 2, (height - 1) / 2
        # Keras's matrix: input point = R(angle) (output point - center) + center.
        return np.stack(
            [cos, -sin, cx - cx * cos + cy * sin, sin, cos, cy - cx * sin - cy * cos], axis=1
        )

    def get_config(self):
        return {**super().get_config(), "factor": self.factor}


class RandomTranslation(_RandomAffine):
    """Shifts each image by a random fraction of its height and width while training.

    The shifts are drawn uniformly: `height_factor` `f` means `[-f, f]` of the
    height (positive moves the content down), a pair `(lower, upper)` that
    range; likewise `width_factor` (positive moves it right).

    Args:
        height_factor: a number or a pair within `[-1, 1]`.
        width_factor: a number or a pair within `[-1, 1]`.
        fill_mode: `"reflect"` (default), `"wrap"`, `"constant"` or `"nearest"`.
        interpolation: `"bilinear"` (default) or `"nearest"`.
        seed: an int for reproducible draws, or None.
        fill_value: the value outside the image with `fill_mode="constant"`.
        data_format: `"channels_last"` or `"channels_first"`; None (the default)
            means `mk.config.image_data_format()` when the layer is made.
        **kwargs: `name`, `trainable`, `dtype`.

    Input shape:
        `(batch, rows, cols, channels)` or `(rows, cols, channels)`.

    Output shape:
        The inputs' shape.

    Raises:
        ValueError: for bad factors, fill mode or interpolation.

    Example:
        >>> image = np.arange(4.0).reshape(1, 1, 4, 1)
        >>> right = mk.layers.RandomTranslation(0.0, (0.5, 0.5), fill_mode="constant")
        >>> right(image, training=True).numpy().ravel()
        array([0., 0., 0., 1.], dtype=float32)
    """

    def __init__(
        self,
        height_factor,
        width_factor,
        fill_mode="reflect",
        interpolation="bilinear",
        seed=None,
        fill_value=0.0,
        data_format=None,
        **kwargs,
    ):
        super().__init__(fill_mode, interpolation, seed, fill_value, data_format, **kwargs)
        self.height_factor = height_factor
        self.width_factor = width_factor
        self._height_range = factor_range("RandomTranslation", "height_factor", height_factor)
        self._width_range = factor_range("RandomTranslation", "width_factor", width_factor)

    def _matrices(self, batch, height, width, rng):
        dy = rng.uniform(*self._height_range, batch) * height
        dx = rng.uniform(*self._width_range, batch) * width
        ones, zeros = np.ones(batch), np.zeros(batch)
        return np.stack([ones, zeros, -dx, zeros, ones, -dy], axis=1)

    def get_config(self):
        return {
            **super().get_config(),
            "height_factor": self.height_factor,
            "width_factor": self.width_factor,
        }


class RandomZoom(_RandomAffine):
    """Zooms each image in or out by a random amount while training.

    The zoom is `1 + z`, `z` drawn uniformly from `height_factor` (a number
    `f` means `[-f, f]`): positive `z` zooms out (the image shrinks, the
    border is filled), negative zooms in. `width_factor` draws the columns'
    zoom separately; None (default) keeps the aspect ratio.

    Args:
        height_factor: a number or a pair within `[-1, 1]`.
        width_factor: None, a number or a pair within `[-1, 1]`.
        fill_mode: `"reflect"` (default), `"wrap"`, `"constant"` or `"nearest"`.
        interpolation: `"bilinear"` (default) or `"nearest"`.
        seed: an int for reproducible draws, or None.
        fill_value: the value outside the image with `fill_mode="constant"`.
        data_format: `"channels_last"` or `"channels_first"`; None (the default)
            means `mk.config.image_data_format()` when the layer is made.
        **kwargs: `name`, `trainable`, `dtype`.

    Input shape:
        `(batch, rows, cols, channels)` or `(rows, cols, channels)`.

    Output shape:
        The inputs' shape.

    Raises:
        ValueError: for bad factors, fill mode or interpolation.

    Example:
        >>> image = np.arange(5.0).reshape(1, 1, 5, 1)
        >>> out = mk.layers.RandomZoom(0.0, (1.0, 1.0), fill_mode="constant")
        >>> out(image, training=True).numpy().ravel()  # column x samples 2 x - 2
        array([0., 0., 2., 4., 0.], dtype=float32)
    """

    def __init__(
        self,
        height_factor,
        width_factor=None,
        fill_mode="reflect",
        interpolation="bilinear",
        seed=None,
        fill_value=0.0,
        data_format=None,
        **kwargs,
    ):
        super().__init__(fill_mode, interpolation, seed, fill_value, data_format, **kwargs)
        self.height_factor = height_factor
        self.width_factor = width_factor
        self._height_range = factor_range("RandomZoom", "height_factor", height_factor)
        self._width_range = (
            None
            if width_factor is None
            else factor_range("RandomZoom", "width_factor", width_factor)
        )

    def _matrices(self, batch, height, width, rng):
        zoom_y = 1.0 + rng.uniform(*self._height_range, batch)
        zoom_x = (
            zoom_y if self._width_range is None else 1.0 + rng.uniform(*self._width_range, batch)
        )
        zeros = np.zeros(batch)
        # Keras's matrix: input point = zoom * (output point - center) + center.
        x_offset = (width - 1) / 2 * (1 - zoom_x)
        y_offset = (height - 1) / 2 * (1 - zoom_y)
        return np.stack([zoom_x, zeros, x_offset, zeros, zoom_y, y_offset], axis=1)

    def get_config(self):
        return {
            **super().get_config(),
            "height_factor": self.height_factor,
            "width_factor": self.width_factor,
        }
