"""`Dropout`: zeroes a random fraction of inputs while training."""

import numpy as np

from minikeras.layers.layer import Layer
from minikeras.ops.dropout_mask import dropout_mask

__all__ = ["Dropout"]


class Dropout(Layer):
    """Sets each input to 0 with probability `rate` while training.

    Kept values are scaled by `1 / (1 - rate)` so that the expected sum is
    unchanged; outside training (`training` false or None) it does nothing.

    Args:
        rate: the fraction to drop, in `[0, 1)`.
        noise_shape: optional shape of the mask, broadcast over the inputs
            (`None` entries take the inputs' size).
        seed: an int for a reproducible mask stream of this layer; by default
            the global generator (`minikeras.utils.set_random_seed`) is used.
        **kwargs: `name`, `trainable`, `dtype`.

    Input shape:
        Any shape.

    Output shape:
        The input's shape.

    Raises:
        ValueError: if `rate` is not in `[0, 1)`.

    Example:
        >>> layer = mk.layers.Dropout(0.5, seed=0)
        >>> out = layer(np.ones((2, 4)), training=True).numpy()
        >>> sorted(set(out.ravel().tolist()))
        [0.0, 2.0]
        >>> layer(np.ones((2, 4))).numpy().sum()
        np.float32(8.0)
    """

    # A mask (e.g. from Embedding(mask_zero=True)) passes through unchanged, as in Keras.
    supports_masking = True

    def __init__(self, rate, noise_shape=None, seed=None, **kwargs):
        super().__init__(**kwargs)
        if not 0 <= rate < 1:
            raise ValueError(f"Dropout: `rate` must be in [0, 1), got {rate!r}")
        self.rate = float(rate)
        self.noise_shape = None if noise_shape is None else tuple(noise_shape)
        self.seed = seed
        self._generator = None if seed is None else np.random.default_rng(seed)

    def call(self, inputs, training=None):
        if not training or self.rate == 0:
            return inputs
        shape = inputs.shape
        if self.noise_shape is not None:
            shape = tuple(s if n is None else n for n, s in zip(self.noise_shape, shape))
        # The mask is drawn inside the op (from this layer's generator, or the
        # thread's default one): a compiled training step draws a fresh one each step.
        return dropout_mask(inputs, self.rate, shape, self._generator)

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        return {
            **super().get_config(),
            "rate": self.rate,
            "noise_shape": self.noise_shape,
            "seed": self.seed,
        }
