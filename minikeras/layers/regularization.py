"""Noise layers active only while training: `SpatialDropout2D` and `GaussianNoise`."""

import math

import numpy as np

from minikeras import ops, random
from minikeras.layers.layer import Layer
from minikeras.layers.noise import _SpatialDropout

__all__ = ["GaussianNoise", "SpatialDropout2D"]


class SpatialDropout2D(_SpatialDropout):
    """Drops whole feature maps (channels) of images while training.

    Where `Dropout` drops single pixels, which neighbouring pixels of the same
    channel largely make up for, this drops a channel in all positions at once:
    one keep-or-drop draw per (sample, channel), kept channels scaled by
    `1 / (1 - rate)`. Outside training it does nothing.

    Args:
        rate: the fraction of channels to drop, in `[0, 1)`.
        data_format: `"channels_last"` (inputs `(batch, rows, cols, channels)`)
            or `"channels_first"`; None (the default) means
            `mk.config.image_data_format()` when the layer is made.
        seed: an int for a reproducible mask stream of this layer; by default
            the global generator is used.
        **kwargs: `name`, `trainable`, `dtype`.

    Input shape:
        `(batch, rows, cols, channels)` (`(batch, channels, rows, cols)` with
        `data_format="channels_first"`).

    Output shape:
        The input's shape.

    Returns:
        When called: a Tensor of the inputs' shape.

    Raises:
        ValueError: if `rate` is not in `[0, 1)`, for an unknown
            `data_format`, or for inputs that are not 4-D.

    Example:
        >>> layer = mk.layers.SpatialDropout2D(0.5, seed=1)
        >>> out = layer(np.ones((1, 3, 3, 4)), training=True).numpy()
        >>> [sorted(set(out[..., c].ravel().tolist())) in ([0.0], [2.0]) for c in range(4)]
        [True, True, True, True]
    """

    rank = 2


class GaussianNoise(Layer):
    """Adds zero-mean Gaussian noise of standard deviation `stddev` while training.

    A regularizer (and a form of data augmentation) for real-valued inputs;
    outside training (`training` false or None) it does nothing.

    Args:
        stddev: the standard deviation of the noise, a number `>= 0`.
        seed: an int for a reproducible noise stream of this layer; by default
            the global generator (`minikeras.utils.set_random_seed`) is used.
        **kwargs: `name`, `trainable`, `dtype`.

    Input shape:
        Any shape.

    Output shape:
        The input's shape.

    Returns:
        When called: a Tensor of the inputs' shape and dtype.

    Raises:
        ValueError: if `stddev` is negative or not finite.

    Example:
        >>> layer = mk.layers.GaussianNoise(0.1, seed=0)
        >>> noisy = layer(np.zeros((1000, 10)), training=True).numpy()
        >>> round(float(noisy.std()), 1), layer(np.zeros((1, 2))).numpy()
        (0.1, array([[0., 0.]], dtype=float32))
    """

    supports_masking = True  # (the mask passes through, as in Keras)

    def __init__(self, stddev, seed=None, **kwargs):
        super().__init__(**kwargs)
        if isinstance(stddev, bool) or not (
            isinstance(stddev, (int, float)) and math.isfinite(stddev) and stddev >= 0
        ):
            raise ValueError(f"GaussianNoise: `stddev` must be a number >= 0, got {stddev!r}")
        self.stddev = float(stddev)
        self.seed = seed
        self._generator = None if seed is None else np.random.default_rng(seed)

    def call(self, inputs, training=None):
        if not training or self.stddev == 0:
            return inputs
        generator = self._generator or random.generator()
        dtype = inputs.dtype if inputs.dtype.kind == "f" else np.dtype(self.dtype)
        # The generator draws float32 or float64 only.
        drawn = np.float64 if dtype == np.float64 else np.float32
        noise = generator.standard_normal(inputs.shape, dtype=drawn).astype(dtype, copy=False)
        noise *= dtype.type(self.stddev)
        return ops.add(inputs, noise)

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        return {**super().get_config(), "stddev": self.stddev, "seed": self.seed}
