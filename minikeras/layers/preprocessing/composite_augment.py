"""Augmentation policies built from the other layers: `RandAugment` and `AugMix`.

Both change images unless called with `training=False`, drawing all their
choices, and their steps' parameters, from their own seed generator. The steps
are the layers of those names, made with the policy's `factor` (Keras 3's
choices): shear, translation and rotation (`factor` of the image, of a turn),
posterization (`max(1, int(8 upper))` bits), solarization, auto contrast,
equalization, and in `RandAugment` (and `AugMix` with `all_ops`) brightness,
colour degeneration, contrast and sharpness.
"""

import numpy as np

from minikeras.engine.tensor import Tensor
from minikeras.layers.preprocessing.augmentation import RandomImageLayer, keras_factor
from minikeras.layers.preprocessing.color_filters import (
    Equalization,
    RandomColorDegeneration,
    RandomSharpness,
)
from minikeras.layers.preprocessing.encoding import check_choice
from minikeras.layers.preprocessing.image import check_size
from minikeras.layers.preprocessing.random_affine import RandomRotation, RandomTranslation
from minikeras.layers.preprocessing.random_color import (
    AutoContrast,
    RandomPosterization,
    Solarization,
    sorted_value_range,
)
from minikeras.layers.preprocessing.random_geometry import RandomShear
from minikeras.layers.preprocessing.random_image import RandomBrightness, RandomContrast

__all__ = ["AugMix", "RandAugment", "augmentation_steps"]


def augmentation_steps(factor, value_range, interpolation, colour_ops=True):
    """The steps the policies choose from, by Keras's names, in Keras's order (AugMix's).

    Args:
        factor: the pair `(lower, upper)` in `[0, 1]` every step is made with.
        value_range: `(low, high)` of the pixel values.
        interpolation: `"bilinear"` or `"nearest"`, for the warps.
        colour_ops: also brightness, colour degeneration, contrast and sharpness.

    Returns:
        A dict from name to a channels-last layer.

    Example:
        >>> from minikeras.layers.preprocessing.composite_augment import augmentation_steps
        >>> steps = augmentation_steps((0.0, 0.5), (0, 255), "bilinear", colour_ops=False)
        >>> len(steps), list(steps)[:3]
        (7, ['random_shear', 'random_translation', 'random_rotation'])
    """
    shared = {"seed": 0, "data_format": "channels_last"}  # (the policy draws for them)
    steps = {
        "random_shear": RandomShear(factor, factor, interpolation=interpolation, **shared),
        "random_translation": RandomTranslation(
            factor, factor, interpolation=interpolation, **shared
        ),
        "random_rotation": RandomRotation(factor, interpolation=interpolation, **shared),
        "random_posterization": RandomPosterization(
            max(1, int(8 * factor[1])), value_range=value_range, **shared
        ),
        "solarization": Solarization(factor, factor, value_range=value_range, **shared),
        "auto_contrast": AutoContrast(value_range=value_range, data_format="channels_last"),
        "equalization": Equalization(value_range=value_range, data_format="channels_last"),
    }
    if colour_ops:
        for name, kind in (
            ("random_brightness", RandomBrightness),
            ("random_color_degeneration", RandomColorDegeneration),
            ("random_contrast", RandomContrast),
            ("random_sharpness", RandomSharpness),
        ):
            steps[name] = kind(factor, value_range=value_range, **shared)
    return steps


def _apply(step, images, rng):
    """One step on channels-last numpy images, drawing from `rng`."""
    if isinstance(step, RandomImageLayer):
        return np.asarray(step.augment(images, rng), images.dtype)
    return step.transform(Tensor(images), True).numpy()


def _check_count(layer_class, argument, value):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
        raise ValueError(f"{layer_class}: `{argument}` must be an int >= 0, got {value!r}")
    return int(value)


# RandAugment's order of its steps, as Keras lists them
_RAND_AUGMENT_ORDER = (
    "random_shear", "random_translation", "random_rotation", "random_brightness",
    "random_color_degeneration", "random_contrast", "random_sharpness", "random_posterization",
    "solarization", "auto_contrast", "equalization",
)  # fmt: skip


class RandAugment(RandomImageLayer):
    """Applies `num_ops` steps chosen at random from eleven, in turn, while training
    (Cubuk et al., 2019).

    Per call, `num_ops` steps are drawn uniformly (with repetition) from shear,
    translation, rotation, brightness, colour degeneration, contrast,
    sharpness, posterization, solarization, auto contrast and equalization,
    each made with `factor` (see the module), and applied in turn to the whole
    batch, each step drawing its own parameters. Keras draws one set of
    parameters per step and call, so a step chosen twice repeats them;
    minikeras draws them again.

    Args:
        value_range: `(low, high)` of the pixel values (default `(0, 255)`).
        num_ops: the number of steps per call, an int >= 0 (default 2).
        factor: the strength, a number `f` in `[0, 1]` (meaning `[0, f]`) or a
            pair (default 0.5).
        interpolation: `"bilinear"` (default) or `"nearest"`, for the warps.
        seed: an int for reproducible draws, or None.
        data_format: `"channels_last"` or `"channels_first"`; None (the default)
            means `mk.config.image_data_format()` when the layer is made.
        **kwargs: `name`, `trainable`, `dtype`.

    Input shape:
        `(batch, rows, cols, channels)` or `(rows, cols, channels)`; 1 or 3
        channels (colour degeneration).

    Output shape:
        The inputs' shape.

    Raises:
        ValueError: for a bad `factor`, `num_ops`, `value_range` or interpolation.

    Example:
        >>> images = np.random.default_rng(0).uniform(0, 255, (4, 8, 8, 3))
        >>> out = mk.layers.RandAugment(seed=1)(images, training=True).numpy()
        >>> out.shape, bool(out.min() >= 0 and out.max() <= 255)
        ((4, 8, 8, 3), True)
    """

    def __init__(self, value_range=(0, 255), num_ops=2, factor=0.5, interpolation="bilinear",
                 seed=None, data_format=None, **kwargs):  # fmt: skip
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        self.value_range = list(value_range)
        sorted_value_range("RandAugment", value_range)
        self.num_ops = _check_count("RandAugment", "num_ops", num_ops)
        check_choice("RandAugment", "interpolation", interpolation, ("nearest", "bilinear"))
        self.factor = factor
        self.interpolation = interpolation
        steps = augmentation_steps(
            keras_factor("RandAugment", "factor", factor), value_range, interpolation
        )
        self._steps = tuple(steps[name] for name in _RAND_AUGMENT_ORDER)

    def augment(self, images, rng):
        for index in rng.integers(0, len(self._steps), self.num_ops):
            images = _apply(self._steps[index], images, rng)
        return images

    def get_config(self):
        return {
            **super().get_config(),
            "value_range": self.value_range,
            "num_ops": self.num_ops,
            "factor": self.factor,
            "interpolation": self.interpolation,
        }


class AugMix(RandomImageLayer):
    """Blends each batch with `num_chains` randomly augmented copies of itself while training
    (Hendrycks et al., 2020).

    Per call: chain weights `w` from a Dirichlet(`alpha`, ..., `alpha`), a
    weight `m` from Beta(`alpha`, `alpha`), and for each chain `chain_depth`
    draws, each a step (see the module) or nothing, uniformly. Each chain
    applies its steps in turn to a copy of the images; then

        images = clip(m images + (1 - m) sum_i w_i chain_i, value_range)

    The draws are shared by the batch, as in Keras (which picks the steps with
    Python's unseeded `random`; minikeras draws them from the layer's seed).

    Args:
        value_range: `(low, high)` of the pixel values (default `(0, 255)`).
        num_chains: the number of augmented copies, an int >= 1 (default 3).
        chain_depth: the most steps in a chain, an int >= 0 (default 3).
        factor: the steps' strength, a number `f` in `[0, 1]` (meaning `[0, f]`)
            or a pair (default 0.3).
        alpha: the Dirichlet and Beta parameter, > 0 (default 1.0).
        all_ops: also brightness, colour degeneration, contrast and sharpness
            (default True).
        interpolation: `"bilinear"` (default) or `"nearest"`, for the warps.
        seed: an int for reproducible draws, or None.
        data_format: `"channels_last"` or `"channels_first"`; None (the default)
            means `mk.config.image_data_format()` when the layer is made.
        **kwargs: `name`, `trainable`, `dtype`.

    Input shape:
        `(batch, rows, cols, channels)` or `(rows, cols, channels)`; 1 or 3
        channels with `all_ops`.

    Output shape:
        The inputs' shape.

    Raises:
        ValueError: for a bad `factor`, `alpha`, count, `value_range` or interpolation.

    Example:
        >>> images = np.random.default_rng(0).uniform(0, 255, (4, 8, 8, 3))
        >>> out = mk.layers.AugMix(seed=1)(images, training=True).numpy()
        >>> out.shape, bool(out.min() >= 0 and out.max() <= 255)
        ((4, 8, 8, 3), True)
    """

    def __init__(self, value_range=(0, 255), num_chains=3, chain_depth=3, factor=0.3, alpha=1.0,
                 all_ops=True, interpolation="bilinear", seed=None, data_format=None,
                 **kwargs):  # fmt: skip
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        self.value_range = sorted_value_range("AugMix", value_range)
        self.num_chains = check_size("AugMix", "num_chains", num_chains)
        self.chain_depth = _check_count("AugMix", "chain_depth", chain_depth)
        check_choice("AugMix", "interpolation", interpolation, ("nearest", "bilinear"))
        if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not alpha > 0:
            raise ValueError(f"AugMix: `alpha` must be a number > 0, got {alpha!r}")
        self.factor = factor
        self.alpha = alpha
        self.all_ops = bool(all_ops)
        self.interpolation = interpolation
        steps = augmentation_steps(
            keras_factor("AugMix", "factor", factor), value_range, interpolation, self.all_ops
        )
        self._steps = tuple(steps.values())

    def augment(self, images, rng):
        chain_weights = rng.dirichlet(np.full(self.num_chains, float(self.alpha)))
        keep = rng.beta(self.alpha, self.alpha)
        mixed = np.zeros(images.shape, np.float64)
        for weight in chain_weights:
            chain = images
            for choice in rng.integers(0, len(self._steps) + 1, self.chain_depth):
                if choice < len(self._steps):  # (the last choice is no step)
                    chain = _apply(self._steps[choice], chain, rng)
            mixed += weight * chain
        return np.clip(keep * images + (1.0 - keep) * mixed, *self.value_range)

    def get_config(self):
        return {
            **super().get_config(),
            "value_range": self.value_range,
            "num_chains": self.num_chains,
            "chain_depth": self.chain_depth,
            "factor": self.factor,
            "alpha": self.alpha,
            "all_ops": self.all_ops,
            "interpolation": self.interpolation,
        }
