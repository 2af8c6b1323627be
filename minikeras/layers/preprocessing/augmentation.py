"""The base of the random image augmentation layers, and the affine resampling they share.

An augmentation layer changes images unless called with `training=False`
(which `predict` and `evaluate` pass), as in Keras: a direct call
`layer(images)`, or a model called without `training`, augments; with
`training=False` it returns them unchanged (RandomCrop excepted: it must
still give its output size). Its draws come from its own `SeedGenerator`: two layers
made with the same `seed` give the same sequence of outputs; without a seed,
the generator is seeded from the global one, so
`minikeras.utils.set_random_seed` makes runs reproducible.

`affine_transform` follows `keras.ops.image.affine_transform`: each output
pixel `(x, y)` samples the input at `(a0 x + a1 y + a2, b0 x + b1 y + b2)`,
with `fill_mode` saying what lies outside the image: `"reflect"`
(d c b a | a b c d | d c b a), `"wrap"` (a b c d | a b c d), `"nearest"`
(a a | a b c d | d d) or `"constant"` (`fill_value`).
"""

import numpy as np

from minikeras.engine.tensor import Tensor
from minikeras.layers.preprocessing.encoding import check_choice
from minikeras.layers.preprocessing.image import ImageLayer
from minikeras.ops import image_transforms
from minikeras.ops.image_sampling import sample
from minikeras.random import SeedGenerator, rng_for

__all__ = [
    "FILL_MODES",
    "RandomImageLayer",
    "TransformImageLayer",
    "affine_transform",
    "factor_range",
    "keras_factor",
    "resample",
]

FILL_MODES = ("reflect", "wrap", "constant", "nearest")


def factor_range(layer_class, argument, factor, low=-1.0, high=1.0):
    """`(lower, upper)` from a number `f` (meaning `(-f, f)`) or a pair, each in `[low, high]`."""
    if isinstance(factor, (int, float, np.number)) and not isinstance(factor, bool):
        pair = (-abs(float(factor)), abs(float(factor)))
    elif isinstance(factor, (list, tuple)) and len(factor) == 2:
        pair = (float(factor[0]), float(factor[1]))
    else:
        raise ValueError(
            f"{layer_class}: `{argument}` must be a number or a pair (lower, upper), got {factor!r}"
        )
    if not (low <= pair[0] <= pair[1] <= high):
        raise ValueError(
            f"{layer_class}: `{argument}` must give lower <= upper within [{low}, {high}], got "
            f"{factor!r}"
        )
    return pair


def keras_factor(layer_class, argument, factor, low=0.0, high=1.0, pair_low=None):
    """Keras 3's reading of a `factor`: a number `f` means `(max(-f, low), f)`, a pair is sorted.

    Args:
        layer_class: the layer's name, for errors.
        argument: the argument's name, for errors.
        factor: a number in `[low, high]`, or a pair of them.
        low: the least value allowed.
        high: the greatest value allowed.
        pair_low: the least value allowed in a pair, if not `low` (to read
            back what Keras writes for a number, `(-f, f)`).

    Returns:
        The pair `(lower, upper)`, floats.

    Raises:
        ValueError: for anything else, or values outside the bounds.

    Example:
        >>> from minikeras.layers.preprocessing.augmentation import keras_factor
        >>> keras_factor("RandomHue", "factor", 0.3)
        (0.0, 0.3)
        >>> keras_factor("RandomSaturation", "factor", 0.3, low=-1.0)
        (-0.3, 0.3)
    """
    pair_low = low if pair_low is None else pair_low
    number = isinstance(factor, (int, float, np.number)) and not isinstance(factor, bool)
    if number and low <= factor <= high:
        return (max(-abs(float(factor)), float(low)), abs(float(factor)))
    if (
        isinstance(factor, (list, tuple))
        and len(factor) == 2
        and all(isinstance(f, (int, float, np.number)) and not isinstance(f, bool) for f in factor)
        and all(pair_low <= f <= high for f in factor)
    ):
        lower, upper = sorted(float(f) for f in factor)
        return (lower, upper)
    raise ValueError(
        f"{layer_class}: `{argument}` must be a number in [{low}, {high}] or a pair of numbers "
        f"in [{pair_low}, {high}], got {factor!r}"
    )


def affine_transform(images, matrices, interpolation="bilinear", fill_mode="reflect",
                     fill_value=0.0):  # fmt: skip
    """`ops.image.affine_transform` on channels-last numpy images, one map per image.

    Args:
        images: a float array `(batch, height, width, channels)`.
        matrices: `(batch, 6)` rows `[a0, a1, a2, b0, b1, b2]` (see the module),
            or `(batch, 8)` rows with `c0, c1` after them: then the sampled point is
            divided by `c0 x + c1 y + 1`, as `keras.ops.image.affine_transform` documents.
        interpolation: `"bilinear"` or `"nearest"`.
        fill_mode: `"reflect"`, `"wrap"`, `"constant"`, `"nearest"` or `"mirror"`.
        fill_value: the value outside the image with `"constant"`.

    Returns:
        A float array of the images' shape and dtype.

    Example:
        >>> from minikeras.layers.preprocessing.augmentation import affine_transform
        >>> image = np.arange(3.0).reshape(1, 1, 3, 1)
        >>> shift = np.array([[1.0, 0, 1, 0, 1, 0]])  # samples x + 1: moves content left
        >>> affine_transform(image, shift, fill_mode="constant")[0, 0, :, 0]
        array([1., 2., 0.])
    """
    matrices = np.asarray(matrices, dtype=np.float64)
    if matrices.shape[1] == 6:
        matrices = np.pad(matrices, [(0, 0), (0, 2)])
    warped = image_transforms.affine_transform(
        images, matrices, interpolation, fill_mode, fill_value, "channels_last"
    )
    return warped.numpy()


def resample(images, source_x, source_y, interpolation="bilinear", fill_mode="reflect",
             fill_value=0.0):  # fmt: skip
    """Samples channels-last numpy images at a point per output pixel (`ops.image_sampling`).

    Args:
        images: a float array `(batch, height, width, channels)`.
        source_x: the column sampled by each output pixel, `(batch, height, width)`.
        source_y: the row sampled by each output pixel, the same shape.
        interpolation: `"bilinear"` or `"nearest"`.
        fill_mode: `"reflect"`, `"wrap"`, `"constant"`, `"nearest"` or `"mirror"`.
        fill_value: the value outside the image with `"constant"`.

    Returns:
        A float array of the images' shape and dtype.

    Example:
        >>> from minikeras.layers.preprocessing.augmentation import resample
        >>> image = np.arange(3.0).reshape(1, 1, 3, 1)
        >>> resample(image, np.array([[[0.5, 1.0, 2.5]]]), np.zeros((1, 1, 3)))[0, 0, :, 0]
        array([0.5, 1. , 2. ])
    """
    order = image_transforms.INTERPOLATIONS[interpolation]
    points = [np.asarray(source_y), np.asarray(source_x)]
    return sample(images, points, order, fill_mode, fill_value, batched=True).numpy()


class RandomImageLayer(ImageLayer):
    """Base of the random augmentation layers: active unless `training=False`, seedable.

    Subclasses write `augment(images, rng)` on channels-last 4-D float numpy
    arrays, drawing from the numpy generator `rng`.

    Args:
        seed: an int for a reproducible stream of draws, or None.
        data_format: `"channels_last"` or `"channels_first"`; None (the default)
            means `mk.config.image_data_format()` when the layer is made.
        **kwargs: `name`, `trainable`, `dtype`.

    Example:
        >>> layer = mk.layers.RandomFlip(seed=0)
        >>> image = np.arange(4.0).reshape(1, 2, 2, 1)
        >>> bool(np.array_equal(layer(image, training=False).numpy(), image))
        True
    """

    def __init__(self, seed=None, data_format=None, **kwargs):
        super().__init__(data_format=data_format, **kwargs)
        self.seed = seed
        self.generator = SeedGenerator(seed, name=f"{self.name}_seed_generator")

    def call(self, inputs, training=True):
        # (True by default, as Keras's: a call without `training` augments)
        return super().call(inputs, training)

    def transform(self, images, training):
        if not training:
            return images
        augmented = self.augment(images.numpy(), rng_for(self.generator))
        return Tensor(np.asarray(augmented, dtype=images.dtype))

    def augment(self, images, rng):
        """The random change, on channels-last 4-D numpy images (the base: none).

        Args:
            images: a float array `(batch, rows, cols, channels)`.
            rng: the `numpy.random.Generator` to draw from.

        Returns:
            The changed images, an array.

        Example:
            >>> layer = mk.layers.RandomFlip("horizontal")
            >>> layer.augment(np.zeros((1, 2, 2, 1)), np.random.default_rng(0)).shape
            (1, 2, 2, 1)
        """
        return images

    def get_config(self):
        return {**super().get_config(), "seed": self.seed}


class TransformImageLayer(RandomImageLayer):
    """A random augmentation in Keras's two steps: draw the transformation, then apply it.

    Subclasses write `get_random_transformation(images, rng)` (a dict of
    numpy arrays, keyed as in Keras) and `transform_images(images,
    transformation)`; both take channels-last 4-D float numpy images (Keras's
    take the layer's data format). Tests give `transform_images` fixed draws
    to compare with Keras's.

    Args:
        seed: an int for a reproducible stream of draws, or None.
        data_format: `"channels_last"` or `"channels_first"`; None (the default)
            means `mk.config.image_data_format()` when the layer is made.
        **kwargs: `name`, `trainable`, `dtype`.

    Example:
        >>> layer = mk.layers.RandomHue((0.5, 0.5), value_range=(0, 1))
        >>> red = np.array([[[[1.0, 0.0, 0.0]]]])
        >>> layer.transform_images(red, {"factor": np.array([0.5])})  # half a turn: cyan
        array([[[[0., 1., 1.]]]])
    """

    def augment(self, images, rng):
        return self.transform_images(images, self.get_random_transformation(images, rng))

    def get_random_transformation(self, images, rng):
        """Draws the random parameters of one call (the base: none).

        Args:
            images: a float array `(batch, rows, cols, channels)`.
            rng: the `numpy.random.Generator` to draw from.

        Returns:
            A dict of arrays, one entry per image along their first axis.

        Example:
            >>> layer = mk.layers.RandomHue(0.5)
            >>> layer.get_random_transformation(np.zeros((4, 2, 2, 3)), np.random.default_rng(0))[
            ...     "factor"].shape
            (4,)
        """
        return {}

    def transform_images(self, images, transformation):
        """Applies drawn parameters to channels-last 4-D images (the base: unchanged).

        Args:
            images: a float array `(batch, rows, cols, channels)`.
            transformation: what `get_random_transformation` returned.

        Returns:
            The changed images, an array of the same shape.

        Example:
            >>> layer = mk.layers.RandomHue((0.0, 0.0))
            >>> layer.transform_images(np.ones((1, 2, 2, 3)), {"factor": np.zeros(1)}).shape
            (1, 2, 2, 3)
        """
        return images


def check_fill(layer_class, fill_mode, interpolation):
    check_choice(layer_class, "fill_mode", fill_mode, FILL_MODES)
    check_choice(layer_class, "interpolation", interpolation, ("nearest", "bilinear"))
