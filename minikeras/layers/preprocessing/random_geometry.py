"""Random warps beyond rotation, translation and zoom: `RandomShear`, `RandomPerspective`
and `RandomElasticTransform`.

Each draws its parameters per call (Keras 3's, see `get_random_transformation`)
and resamples with `augmentation.resample`; outside training they return the
images unchanged. Pixel `(x, y)` is column `x`, row `y`, from the top left.
"""

import numpy as np

from minikeras.layers.preprocessing.augmentation import (
    FILL_MODES,
    TransformImageLayer,
    affine_transform,
    check_fill,
    keras_factor,
    resample,
)
from minikeras.layers.preprocessing.encoding import check_choice
from minikeras.layers.preprocessing.random_color import sorted_value_range
from minikeras.ops.image_filters import gaussian_blur

__all__ = ["RandomElasticTransform", "RandomPerspective", "RandomShear", "homography"]


class RandomShear(TransformImageLayer):
    """Shears each image along both axes by random amounts while training.

    Per image, `s_x` is drawn uniformly from `x_factor` and `s_y` from
    `y_factor` (a number `f` means `[-f, f]`), and both change sign together
    with probability 1/2; output pixel `(x, y)` then samples the input at
    `(x + s_x y, s_y x + y)`: a shear about the top left corner, as Keras's.

    Args:
        x_factor: a number in `[0, 1]` or a pair `(lower, upper)` in `[-1, 1]`
            (Keras takes pairs in `[0, 1]` only, and so cannot read back the
            `(-f, f)` it saves for a number `f`).
        y_factor: the same, for the rows.
        interpolation: `"bilinear"` (default) or `"nearest"`.
        fill_mode: `"reflect"` (default), `"wrap"`, `"constant"` or `"nearest"`.
        fill_value: the value outside the image with `fill_mode="constant"`.
        data_format: `"channels_last"` or `"channels_first"`; None (the default)
            means `mk.config.image_data_format()` when the layer is made.
        seed: an int for reproducible draws, or None.
        **kwargs: `name`, `trainable`, `dtype`.

    Input shape:
        `(batch, rows, cols, channels)` or `(rows, cols, channels)`.

    Output shape:
        The inputs' shape.

    Raises:
        ValueError: for bad factors, fill mode or interpolation.

    Example:
        >>> image = np.arange(4.0).reshape(1, 2, 2, 1)
        >>> layer = mk.layers.RandomShear(x_factor=(1.0, 1.0), fill_mode="constant")
        >>> shear = {"shear_factor": np.array([[1.0, 0.0]])}  # s_x = 1: row y moves y left
        >>> layer.transform_images(image, shear)[0, :, :, 0]
        array([[0., 1.],
               [3., 0.]])
    """

    def __init__(self, x_factor=0.0, y_factor=0.0, interpolation="bilinear", fill_mode="reflect",
                 fill_value=0.0, data_format=None, seed=None, **kwargs):  # fmt: skip
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        self._x_range = keras_factor("RandomShear", "x_factor", x_factor, pair_low=-1.0)
        self._y_range = keras_factor("RandomShear", "y_factor", y_factor, pair_low=-1.0)
        check_fill("RandomShear", fill_mode, interpolation)
        self.x_factor = x_factor
        self.y_factor = y_factor
        self.interpolation = interpolation
        self.fill_mode = fill_mode
        self.fill_value = float(fill_value)

    def get_random_transformation(self, images, rng):
        batch = len(images)
        sign = np.where(rng.random((batch, 1)) > 0.5, -1.0, 1.0)
        shear_y = rng.uniform(*self._y_range, (batch, 1))
        shear_x = rng.uniform(*self._x_range, (batch, 1))
        return {"shear_factor": np.concatenate([shear_x, shear_y], axis=1) * sign}

    def transform_images(self, images, transformation):
        shear = np.asarray(transformation["shear_factor"], np.float64)
        ones, zeros = np.ones(len(shear)), np.zeros(len(shear))
        matrices = np.stack([ones, shear[:, 0], zeros, shear[:, 1], ones, zeros], axis=1)
        return affine_transform(
            images, matrices, self.interpolation, self.fill_mode, self.fill_value
        )

    def get_config(self):
        return {
            **super().get_config(),
            "x_factor": self.x_factor,
            "y_factor": self.y_factor,
            "interpolation": self.interpolation,
            "fill_mode": self.fill_mode,
            "fill_value": self.fill_value,
        }


def homography(start_points, end_points):
    """The projective maps taking `end_points` to `start_points`, as Keras computes them.

    Args:
        start_points: `(batch, 4, 2)` points `(x, y)`.
        end_points: `(batch, 4, 2)`, where each start point goes.

    Returns:
        `(batch, 8)` rows `[a0, a1, a2, b0, b1, b2, c0, c1]` for
        `affine_transform`: output pixel `end` samples the input at `start`.

    Example:
        >>> from minikeras.layers.preprocessing.random_geometry import homography
        >>> square = np.array([[[0.0, 0.0], [1, 0], [0, 1], [1, 1]]])
        >>> homography(square, square + 2).round(6)  # a shift by (2, 2), undone
        array([[ 1.,  0., -2.,  0.,  1., -2.,  0.,  0.]])
    """
    start = np.asarray(start_points, np.float64)
    end = np.asarray(end_points, np.float64)
    sx, sy, ex, ey = start[..., 0], start[..., 1], end[..., 0], end[..., 1]
    zeros, ones = np.zeros_like(ex), np.ones_like(ex)
    x_rows = np.stack([ex, ey, ones, zeros, zeros, zeros, -sx * ex, -sx * ey], axis=-1)
    y_rows = np.stack([zeros, zeros, zeros, ex, ey, ones, -sy * ex, -sy * ey], axis=-1)
    coefficients = np.concatenate([x_rows, y_rows], axis=1)
    targets = np.concatenate([sx, sy], axis=-1)[..., None]
    return np.linalg.solve(coefficients, targets)[..., 0]


class RandomPerspective(TransformImageLayer):
    """Warps each image's perspective by moving its corners, with a random probability,
    while training.

    Per image a probability is drawn uniformly from `factor` (`f` means
    `[0, f]`) and the image is warped with that probability: each corner
    `(x, y)` (of `(0, 0)`, `(w - 1, 0)`, `(0, h - 1)`, `(w - 1, h - 1)`) moves to
    `(x (1 + d_x), y (1 + d_y))`, the `d` drawn uniformly from
    `[-scale / 2, scale / 2]` (so, as in Keras, the top left corner stays), and
    the image follows the projective map between them. Outside the image is
    `fill_value`.

    Args:
        factor: a number or a pair `(lower, upper)` in `[0, 1]` (default 1.0).
        scale: a number in `[0, 1]`, how far the corners move (default 1.0).
        interpolation: `"bilinear"` (default) or `"nearest"`.
        fill_value: the value outside the image.
        seed: an int for reproducible draws, or None.
        data_format: `"channels_last"` or `"channels_first"`; None (the default)
            means `mk.config.image_data_format()` when the layer is made.
        **kwargs: `name`, `trainable`, `dtype`.

    Input shape:
        `(batch, rows, cols, channels)` or `(rows, cols, channels)`.

    Output shape:
        The inputs' shape.

    Raises:
        ValueError: for a bad `factor`, `scale` or interpolation.

    Example:
        >>> image = np.arange(9.0).reshape(1, 3, 3, 1)
        >>> layer = mk.layers.RandomPerspective()
        >>> corners = np.array([[[0.0, 0.0], [2, 0], [0, 2], [2, 2]]])
        >>> wider = {"start_points": corners, "end_points": corners * [2.0, 1.0],
        ...          "apply_perspective": np.array([True])}  # stretched to twice the width
        >>> layer.transform_images(image, wider)[0, :, :, 0]
        array([[0. , 0.5, 1. ],
               [3. , 3.5, 4. ],
               [6. , 6.5, 7. ]])
    """

    def __init__(self, factor=1.0, scale=1.0, interpolation="bilinear", fill_value=0.0,
                 seed=None, data_format=None, **kwargs):  # fmt: skip
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        self._range = keras_factor("RandomPerspective", "factor", factor)
        if isinstance(scale, bool) or not isinstance(scale, (int, float)) or not 0 <= scale <= 1:
            raise ValueError(
                f"RandomPerspective: `scale` must be a number in [0, 1], got {scale!r}"
            )
        check_choice("RandomPerspective", "interpolation", interpolation, ("nearest", "bilinear"))
        self.factor = factor
        self.scale = scale
        self.interpolation = interpolation
        self.fill_value = float(fill_value)

    def get_random_transformation(self, images, rng):
        batch, height, width = images.shape[:3]
        probability = rng.uniform(*self._range, batch)
        apply = rng.random(batch) < probability
        moves = rng.uniform(-0.5 * self.scale, 0.5 * self.scale, (batch, 4, 2))
        corners = [[0.0, 0.0], [width - 1, 0.0], [0.0, height - 1], [width - 1, height - 1]]
        start = np.repeat(np.array([corners]), batch, axis=0)
        end = np.where(apply[:, None, None], start + start * moves, start)
        return {"apply_perspective": apply, "start_points": start, "end_points": end}

    def transform_images(self, images, transformation):
        matrices = homography(transformation["start_points"], transformation["end_points"])
        warped = affine_transform(images, matrices, self.interpolation, "constant", self.fill_value)
        apply = np.asarray(transformation["apply_perspective"], bool)[:, None, None, None]
        return np.where(apply, warped, images)

    def get_config(self):
        return {
            **super().get_config(),
            "factor": self.factor,
            "scale": self.scale,
            "interpolation": self.interpolation,
            "fill_value": self.fill_value,
        }


class RandomElasticTransform(TransformImageLayer):
    """Distorts images with a smooth random displacement field, each with a random
    probability, while training.

    Per image a probability is drawn uniformly from `factor` (`f` means
    `[0, f]`) and the image distorted with that probability; per call a
    strength `s` is drawn uniformly from `scale` (`s` means `[0, s]`). With
    `alpha = 0.1 s max(h, w)` and `sigma = 0.05 s min(h, w)`, each pixel
    samples the input at its place plus `alpha` times a field of standard
    normal noise times `sigma`, blurred with a Gaussian of `sigma` (zero
    padding, `int(6 sigma) | 1` taps). The result is clipped to `value_range`.
    Keras's jax backend draws the column and row fields from the same key, so
    they are equal (a diagonal shift); minikeras draws them separately, as
    Keras's numpy backend does.

    Args:
        factor: a number or a pair `(lower, upper)` in `[0, 1]` (default 1.0).
        scale: a number or a pair in `[0, 1]` (default 1.0).
        interpolation: `"bilinear"` (default) or `"nearest"`.
        fill_mode: `"reflect"` (default), `"wrap"`, `"constant"`, `"nearest"`
            or `"mirror"` (`c d c b | a b c d | c b a b`).
        fill_value: the value outside the image with `fill_mode="constant"`.
        value_range: `(low, high)` of the pixel values (default `(0, 255)`).
        seed: an int for reproducible draws, or None.
        data_format: `"channels_last"` or `"channels_first"`; None (the default)
            means `mk.config.image_data_format()` when the layer is made.
        **kwargs: `name`, `trainable`, `dtype`.

    Input shape:
        `(batch, rows, cols, channels)` or `(rows, cols, channels)`.

    Output shape:
        The inputs' shape.

    Raises:
        ValueError: for a bad factor, fill mode, interpolation or `value_range`.

    Example:
        >>> images = np.random.default_rng(0).uniform(0, 255, (2, 20, 20, 3))
        >>> out = mk.layers.RandomElasticTransform(seed=1)(images, training=True).numpy()
        >>> out.shape, bool(out.min() >= 0 and out.max() <= 255)
        ((2, 20, 20, 3), True)
    """

    def __init__(self, factor=1.0, scale=1.0, interpolation="bilinear", fill_mode="reflect",
                 fill_value=0.0, value_range=(0, 255), seed=None, data_format=None,
                 **kwargs):  # fmt: skip
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        self._range = keras_factor("RandomElasticTransform", "factor", factor)
        self._scale = keras_factor("RandomElasticTransform", "scale", scale)
        check_choice("RandomElasticTransform", "fill_mode", fill_mode, (*FILL_MODES, "mirror"))
        check_choice(
            "RandomElasticTransform", "interpolation", interpolation, ("nearest", "bilinear")
        )
        self.factor = factor
        self.scale = scale
        self.interpolation = interpolation
        self.fill_mode = fill_mode
        self.fill_value = float(fill_value)
        self.value_range = sorted_value_range("RandomElasticTransform", value_range)

    def get_random_transformation(self, images, rng):
        if self._scale[1] == 0 or self._range[1] == 0:
            return None  # (nothing to do, as in Keras: not even the clipping)
        batch, height, width = images.shape[:3]
        probability = rng.uniform(*self._range, batch)
        return {
            "apply_transform": rng.random(batch) < probability,
            "distortion_factor": rng.uniform(*self._scale),
            "noise": rng.standard_normal((2, batch, height, width)),
        }

    def transform_images(self, images, transformation):
        if transformation is None:
            return images
        height, width = images.shape[1:3]
        strength = float(transformation["distortion_factor"])
        alpha = max(height, width) * 0.1 * strength
        sigma = min(height, width) * 0.05 * strength
        size = int(6 * sigma) | 1
        noise = np.asarray(transformation["noise"], np.float64).reshape(-1, height, width, 1)
        fields = gaussian_blur(noise * sigma, (size, size), (sigma, sigma), "channels_last")
        fields = fields.numpy().reshape(2, -1, height, width)
        rows, cols = np.meshgrid(np.arange(height), np.arange(width), indexing="ij")
        warped = resample(images, cols + alpha * fields[0], rows + alpha * fields[1],
                          self.interpolation, self.fill_mode, self.fill_value)  # fmt: skip
        apply = np.asarray(transformation["apply_transform"], bool)[:, None, None, None]
        return np.clip(np.where(apply, warped, images), *self.value_range)

    def get_config(self):
        return {
            **super().get_config(),
            "factor": self.factor,
            "scale": self.scale,
            "interpolation": self.interpolation,
            "fill_mode": self.fill_mode,
            "fill_value": self.fill_value,
            "value_range": self.value_range,
        }
