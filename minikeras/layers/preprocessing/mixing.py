"""Augmentations that replace or blend parts of images: `RandomErasing`, `MixUp` and `CutMix`.

Like the other random image layers (see `augmentation`), each changes images
unless called with `training=False`, drawing from its own seed generator.
`MixUp` and `CutMix` blend each image with another of the same batch (a
random permutation); given a dict `{"images": ..., "labels": ...}`, they mix
the (one-hot) labels in the same proportions, as Keras does.

A box covers the pixel centres `x0 <= col < x1`, `y0 <= row < y1`, with
`x1 - x0 = ratio * cols` and `x0` drawn uniformly in `[0, cols - (x1 - x0)]`
(likewise for rows), as Keras draws them.
"""

import numpy as np

from minikeras.engine.context import state as _state
from minikeras.engine.tensor import Tensor
from minikeras.layers.preprocessing.augmentation import RandomImageLayer
from minikeras.layers.preprocessing.random_color import probability_range, sorted_value_range

__all__ = ["CutMix", "MixUp", "RandomErasing", "random_boxes"]


def random_boxes(rng, images_shape, ratio_x, ratio_y):
    """A boolean mask `(batch, rows, cols, 1)` of one random box per image (see the module).

    Args:
        rng: the `numpy.random.Generator` to draw from.
        images_shape: `(batch, rows, cols, channels)`.
        ratio_x: the boxes' widths as fractions of `cols`, one per image.
        ratio_y: their heights as fractions of `rows`.

    Returns:
        The mask and the boxes' areas as fractions of the image, `(batch,)`.

    Example:
        >>> from minikeras.layers.preprocessing.mixing import random_boxes
        >>> mask, area = random_boxes(np.random.default_rng(0), (1, 4, 4, 1), [1.0], [0.5])
        >>> int(mask.sum()), area.tolist()
        (8, [0.5])
    """
    batch, rows, cols = images_shape[:3]
    width = np.asarray(ratio_x, np.float64) * cols
    height = np.asarray(ratio_y, np.float64) * rows
    x0 = rng.random(batch) * (cols - width)
    y0 = rng.random(batch) * (rows - height)
    x1, y1 = x0 + width, y0 + height
    grid_y, grid_x = np.meshgrid(np.arange(rows), np.arange(cols), indexing="ij")
    grid_x, grid_y = grid_x[None, :, :, None], grid_y[None, :, :, None]

    def per_image(value):
        return value[:, None, None, None]

    mask = (
        (grid_x >= per_image(x0)) & (grid_x < per_image(x1))
        & (grid_y >= per_image(y0)) & (grid_y < per_image(y1))
    )  # fmt: skip
    return mask, (x1 - x0) * (y1 - y0) / (rows * cols)


class _LabelMixing(RandomImageLayer):
    """Takes images, or a dict of `images` and `labels`, and mixes labels as the images."""

    def _keep_draw(self, order, weight):
        # The draw goes from `augment` to `call` through the thread's own state, not the
        # layer: two threads calling one layer must not read each other's permutation.
        _state.__dict__.setdefault("mixing_draws", {})[id(self)] = (order, weight)

    def _take_draw(self):
        return _state.__dict__.setdefault("mixing_draws", {}).pop(id(self), None)

    def build(self, input_shape):
        super().build(input_shape["images"] if isinstance(input_shape, dict) else input_shape)

    def call(self, inputs, training=True):
        if not isinstance(inputs, dict):
            images = super().call(inputs, training)
            self._take_draw()  # (no labels to mix)
            return images
        unknown = sorted(set(inputs) - {"images", "labels"})
        if "images" not in inputs or unknown:
            raise ValueError(
                f"{type(self).__name__} '{self.name}' takes images, or a dict with 'images' and "
                f"optionally 'labels', got a dict with keys {sorted(inputs)} (minikeras has no "
                "bounding boxes or segmentation masks)"
            )
        self._take_draw()  # (none left from a call that failed)
        outputs = {**inputs, "images": super().call(inputs["images"], training)}
        batched = len(inputs["images"].shape) == 4  # (one image has nothing to mix with)
        draw = self._take_draw()
        if "labels" in inputs and draw is not None and batched:
            order, weight = draw
            labels = inputs["labels"].numpy().astype(self.dtype)
            weight = weight.reshape(-1, *[1] * (labels.ndim - 1)).astype(self.dtype)
            outputs["labels"] = Tensor(labels * weight + labels[order] * (1 - weight))
        return outputs

    def compute_output_shape(self, input_shape):
        if isinstance(input_shape, dict):
            return {**input_shape, "images": super().compute_output_shape(input_shape["images"])}
        return super().compute_output_shape(input_shape)


class MixUp(_LabelMixing):
    """Blends each image with another of its batch while training (Zhang et al., 2018).

        images = w * images + (1 - w) * images[permutation]
        labels = w * labels + (1 - w) * labels[permutation]

    with `w` drawn from Beta(`alpha`, `alpha`) per image and one random
    permutation of the batch per call.

    Args:
        alpha: the Beta distribution's parameter, > 0; small values keep the
            images mostly whole.
        data_format: `"channels_last"` or `"channels_first"`; None (the default)
            means `mk.config.image_data_format()` when the layer is made.
        seed: an int for reproducible draws, or None.
        **kwargs: `name`, `trainable`, `dtype`.

    Input shape:
        `(batch, rows, cols, channels)` or `(rows, cols, channels)`, or a dict
        of those `images` and `(batch, classes)` `labels`.

    Output shape:
        The inputs' shapes (a dict for a dict).

    Raises:
        ValueError: for `alpha` not positive, or a dict with other keys.

    Example:
        >>> images = np.stack([np.zeros((2, 2, 1)), np.ones((2, 2, 1))])
        >>> data = {"images": images, "labels": np.array([[1.0, 0.0], [0.0, 1.0]])}
        >>> out = mk.layers.MixUp(alpha=0.5, seed=0)(data, training=True)
        >>> means = out["images"].numpy().mean(axis=(1, 2, 3))
        >>> bool(np.allclose(out["labels"].numpy()[:, 1], means))  # label = share of image 1
        True
    """

    def __init__(self, alpha=0.2, data_format=None, seed=None, **kwargs):
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not alpha > 0:
            raise ValueError(f"MixUp: `alpha` must be a number > 0, got {alpha!r}")
        self.alpha = alpha

    def augment(self, images, rng):
        order = rng.permutation(len(images))
        weight = rng.beta(self.alpha, self.alpha, len(images))
        self._keep_draw(order, weight)
        w = weight[:, None, None, None]
        return w * images + (1.0 - w) * images[order]

    def get_config(self):
        return {**super().get_config(), "alpha": self.alpha}


class CutMix(_LabelMixing):
    """Pastes a random box of another image of the batch into each image while training.

    Per call, `alpha` is drawn uniformly from `factor` (`f` means `[0, f]`,
    plus 1e-6); per image, `w` from Beta(`alpha`, `alpha`), a box of
    `sqrt(1 - w)` of the width and height (see the module), and the box of
    the image at its place in a random permutation of the batch is pasted
    in. Labels mix by the box's area (a fraction of the image, computed from
    its real-valued sides as Keras does, so within a pixel row and column of
    the pasted pixels' share): `labels = (1 - area) * labels + area *
    labels[permutation]`. A single image (no batch axis) is left as it is.

    Args:
        factor: a number or a pair `(lower, upper)` in `[0, 1]`.
        seed: an int for reproducible draws, or None.
        data_format: `"channels_last"` or `"channels_first"`; None (the default)
            means `mk.config.image_data_format()` when the layer is made.
        **kwargs: `name`, `trainable`, `dtype`.

    Input shape:
        `(batch, rows, cols, channels)` or `(rows, cols, channels)`, or a dict
        of those `images` and `(batch, classes)` `labels`.

    Output shape:
        The inputs' shapes (a dict for a dict).

    Raises:
        ValueError: for a bad `factor`, or a dict with other keys.

    Example:
        >>> images = np.stack([np.zeros((8, 8, 1)), np.ones((8, 8, 1))])
        >>> data = {"images": images, "labels": np.array([[1.0, 0.0], [0.0, 1.0]])}
        >>> out = mk.layers.CutMix(seed=3)(data, training=True)
        >>> out["images"].shape, out["labels"].numpy().sum(axis=1).round(6).tolist()
        ((2, 8, 8, 1), [1.0, 1.0])
    """

    def __init__(self, factor=1.0, seed=None, data_format=None, **kwargs):
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        self._range = probability_range("CutMix", "factor", factor)
        self.factor = factor

    def augment(self, images, rng):
        batch = len(images)
        alpha = rng.uniform(*self._range) + 1e-6
        ratio = np.sqrt(1.0 - rng.beta(alpha, alpha, batch))
        mask, area = random_boxes(rng, images.shape, ratio, ratio)
        order = rng.permutation(batch)
        self._keep_draw(order, 1.0 - area)
        return np.where(mask, images[order], images)

    def get_config(self):
        return {**super().get_config(), "factor": self.factor}


class RandomErasing(RandomImageLayer):
    """Fills a random box of each image with noise or a value, with a random probability,
    while training (Zhong et al., 2017).

    Per image: a box whose width and height are `sqrt(s)` of the image's,
    `s` drawn uniformly from `scale` for each side (see the module), and an
    erasing probability drawn uniformly from `factor` (`f` means `[0, f]`).
    The box is filled with `fill_value`, or, if None, Gaussian noise times
    `value_range[1]`; either is clipped to `value_range`.

    Args:
        factor: a number or a pair `(lower, upper)` in `[0, 1]`.
        scale: a number or a pair in `[0, 1]`, the range of each side's
            squared fraction.
        fill_value: None (noise), a number, or one number per channel (3).
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
        ValueError: for a bad `factor`, `scale`, `fill_value` or `value_range`.

    Example:
        >>> layer = mk.layers.RandomErasing(factor=(1.0, 1.0), scale=(0.25, 0.25), fill_value=0)
        >>> out = layer(np.ones((1, 4, 4, 1)), training=True).numpy()
        >>> int((out == 0).sum())  # a box of half the width and half the height
        4
    """

    def __init__(self, factor=1.0, scale=(0.02, 0.33), fill_value=None, value_range=(0, 255),
                 seed=None, data_format=None, **kwargs):  # fmt: skip
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        self._range = probability_range("RandomErasing", "factor", factor)
        self._scale = probability_range("RandomErasing", "scale", scale)
        fills = fill_value if isinstance(fill_value, (list, tuple)) else [fill_value]
        if fill_value is not None and (
            len(fills) not in (1, 3)
            or any(isinstance(f, bool) or not isinstance(f, (int, float)) for f in fills)
        ):
            raise ValueError(
                "RandomErasing: `fill_value` must be None, a number or 3 numbers (one per "
                f"channel), got {fill_value!r}"
            )
        sorted_value_range("RandomErasing", value_range)  # (checked; Keras keeps its order)
        self.factor = factor
        self.scale = scale
        self.fill_value = list(fill_value) if isinstance(fill_value, tuple) else fill_value
        self.value_range = list(value_range)

    def augment(self, images, rng):
        batch = len(images)
        ratio = np.sqrt(rng.uniform(*self._scale, (batch, 2)))
        mask, _ = random_boxes(rng, images.shape, ratio[:, 0], ratio[:, 1])
        probability = rng.uniform(*self._range, batch)
        chosen = rng.random(batch) < probability
        if self.fill_value is None:
            fill = rng.standard_normal(images.shape) * self.value_range[1]
        elif isinstance(self.fill_value, list):
            if images.shape[-1] != len(self.fill_value):
                raise ValueError(
                    f"RandomErasing '{self.name}' has {len(self.fill_value)} fill values, one "
                    f"per channel, but images of {images.shape[-1]} channels"
                )
            fill = np.broadcast_to(np.asarray(self.fill_value, np.float64), images.shape)
        else:
            fill = np.full(images.shape, float(self.fill_value))
        fill = np.clip(fill, self.value_range[0], self.value_range[1]).astype(images.dtype)
        return np.where(mask & chosen[:, None, None, None], fill, images)

    def get_config(self):
        return {
            **super().get_config(),
            "factor": self.factor,
            "scale": self.scale,
            "fill_value": self.fill_value,
            "value_range": self.value_range,
        }
