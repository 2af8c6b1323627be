"""More noise layers active only while training: `AlphaDropout`, `GaussianDropout`,
`SpatialDropout1D` and `SpatialDropout3D`, and the base the spatial dropouts share
(`SpatialDropout2D` and `GaussianNoise` are in `regularization.py`)."""

import math

import numpy as np

from minikeras import ops, random
from minikeras.config import standardize_data_format
from minikeras.layers.dropout import Dropout
from minikeras.layers.layer import Layer

__all__ = ["AlphaDropout", "GaussianDropout", "SpatialDropout1D", "SpatialDropout3D"]

# SELU's constants: alpha_p = -scale * alpha is where SELU saturates.
_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _check_rate(layer, rate):
    if isinstance(rate, bool) or not isinstance(rate, (int, float)) or not 0 <= rate < 1:
        raise ValueError(f"{layer}: `rate` must be a number in [0, 1), got {rate!r}")
    return float(rate)


class _Noise(Layer):
    """Shared by the noise layers: a rate, a seed and its generator; shape and mask pass."""

    supports_masking = True

    def __init__(self, rate, seed=None, **kwargs):
        super().__init__(**kwargs)
        self.rate = _check_rate(type(self).__name__, rate)
        self.seed = seed
        self._generator = None if seed is None else np.random.default_rng(seed)

    def _draw(self):
        return self._generator or random.generator()

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        return {**super().get_config(), "rate": self.rate, "seed": self.seed}


class GaussianDropout(_Noise):
    """Multiplies the inputs by Gaussian noise of mean 1 while training.

    The noise's standard deviation is `sqrt(rate / (1 - rate))`, that of the
    scaling `Dropout(rate)` applies, so the expected output is the input.
    Outside training (`training` false or None) it does nothing.

    Args:
        rate: a number in `[0, 1)` (Keras also takes 1, an infinite spread).
        seed: an int for a reproducible noise stream of this layer; by default
            the global generator (`minikeras.utils.set_random_seed`) is used.
        **kwargs: `name`, `trainable`, `dtype`.

    Input shape:
        Any shape.

    Output shape:
        The inputs' shape; a mask passes through.

    Raises:
        ValueError: if `rate` is not in `[0, 1)`.

    Example:
        >>> layer = mk.layers.GaussianDropout(0.5, seed=0)
        >>> out = layer(np.ones((1000, 100)), training=True).numpy()
        >>> round(float(out.mean()), 1), round(float(out.std()), 1)
        (1.0, 1.0)
        >>> layer(np.ones((1, 2))).numpy()
        array([[1., 1.]], dtype=float32)
    """

    def call(self, inputs, training=None):
        if not training or self.rate == 0:
            return inputs
        stddev = math.sqrt(self.rate / (1.0 - self.rate))
        noise = self._draw().standard_normal(inputs.shape, dtype=np.float32)
        noise = (noise * np.float32(stddev) + np.float32(1.0)).astype(inputs.dtype, copy=False)
        return ops.multiply(inputs, noise)


class AlphaDropout(_Noise):
    """Dropout that keeps the mean and variance of its inputs, for SELU networks.

    Dropped entries are set to SELU's saturation value `alpha_p = -scale *
    alpha` (about -1.758) rather than 0, and then every entry is mapped by
    `a * x + b` with

        a = ((1 - rate) * (1 + rate * alpha_p ** 2)) ** -0.5
        b = -a * alpha_p * rate

    so that inputs of mean 0 and variance 1 keep them (Klambauer et al.,
    2017). Outside training (`training` false or None) it does nothing.

    Args:
        rate: the fraction to drop, a number in `[0, 1)`.
        noise_shape: optional shape of the keep mask, broadcast over the
            inputs (`None` entries take the inputs' size).
        seed: an int for a reproducible mask stream of this layer; by default
            the global generator is used.
        **kwargs: `name`, `trainable`, `dtype`.

    Input shape:
        Any shape.

    Output shape:
        The inputs' shape; a mask passes through.

    Raises:
        ValueError: if `rate` is not in `[0, 1)`.

    Example:
        >>> layer = mk.layers.AlphaDropout(0.2, seed=0)
        >>> out = layer(np.random.default_rng(0).standard_normal((500, 200)), training=True)
        >>> round(float(out.numpy().mean()), 1), round(float(out.numpy().std()), 1)
        (0.0, 1.0)
    """

    def __init__(self, rate, noise_shape=None, seed=None, **kwargs):
        super().__init__(rate, seed=seed, **kwargs)
        self.noise_shape = None if noise_shape is None else tuple(noise_shape)

    def call(self, inputs, training=None):
        if not training or self.rate == 0:
            return inputs
        shape = inputs.shape
        if self.noise_shape is not None:
            shape = tuple(s if n is None else n for n, s in zip(self.noise_shape, shape))
        keep = self._draw().random(shape, dtype=np.float32) >= self.rate
        alpha_p = -_SELU_ALPHA * _SELU_SCALE
        a = ((1 - self.rate) * (1 + self.rate * alpha_p**2)) ** -0.5
        b = -a * alpha_p * self.rate
        dtype = inputs.dtype
        # a * (x * keep + alpha_p * (1 - keep)) + b, with the constant parts folded.
        scale = (keep * a).astype(dtype)
        shift = (np.where(keep, 0.0, a * alpha_p) + b).astype(dtype)
        return ops.add(ops.multiply(inputs, scale), shift)

    def get_config(self):
        return {**super().get_config(), "noise_shape": self.noise_shape}


class _SpatialDropout(Dropout):
    """Drops whole channels: one keep-or-drop draw per (sample, channel), over `rank` axes."""

    rank = None

    def __init__(self, rate, data_format=None, seed=None, **kwargs):
        super().__init__(rate, seed=seed, **kwargs)
        if data_format is None and self.rank == 1:  # Keras's 1-D layer: always channels last
            data_format = "channels_last"
        self.data_format = standardize_data_format(data_format, type(self).__name__)
        ones = (1,) * self.rank
        if self.data_format == "channels_last":
            self.noise_shape = (None, *ones, None)
        else:
            self.noise_shape = (None, None, *ones)

    def build(self, input_shape):
        self.compute_output_shape(input_shape)

    def call(self, inputs, training=None):
        self.compute_output_shape(inputs.shape)
        return super().call(inputs, training=training)

    def compute_output_shape(self, input_shape):
        if len(input_shape) != self.rank + 2:
            raise ValueError(
                f"{type(self).__name__} '{self.name}' expects {self.rank + 2}-D inputs "
                f"(batch, {self.rank} spatial axes, channels), got shape {tuple(input_shape)}"
            )
        return tuple(input_shape)

    def get_config(self):
        # Keras's constructors take neither `trainable` nor (in 1-D) `data_format`:
        # leaving them out keeps the config loadable by Keras (they have no weights).
        config = super().get_config()
        del config["noise_shape"], config["trainable"]
        if self.rank > 1 or self.data_format != "channels_last":
            config["data_format"] = self.data_format
        return config


class SpatialDropout1D(_SpatialDropout):
    """Drops whole channels of sequences while training.

    One keep-or-drop draw per (sample, channel), shared by every step; kept
    channels are scaled by `1 / (1 - rate)`. Outside training it does nothing.
    Keras's SpatialDropout1D has no `data_format`; ours takes one for
    symmetry with the 2-D and 3-D layers (`"channels_last"` by default,
    whatever `mk.config.image_data_format()` says, as Keras's takes channels last).

    Args:
        rate: the fraction of channels to drop, in `[0, 1)`.
        data_format: `"channels_last"` (default) or `"channels_first"`.
        seed: an int for a reproducible mask stream of this layer.
        **kwargs: `name`, `trainable`, `dtype`.

    Input shape:
        `(batch, steps, channels)` (or `(batch, channels, steps)`).

    Output shape:
        The inputs' shape.

    Raises:
        ValueError: for a `rate` outside `[0, 1)`, an unknown `data_format`
            or inputs that are not 3-D.

    Example:
        >>> out = mk.layers.SpatialDropout1D(0.5, seed=1)(np.ones((1, 5, 4)), training=True).numpy()
        >>> [sorted(set(out[0, :, c].tolist())) in ([0.0], [2.0]) for c in range(4)]
        [True, True, True, True]
    """

    rank = 1


class SpatialDropout3D(_SpatialDropout):
    """Drops whole channels of volumes while training.

    One keep-or-drop draw per (sample, channel), shared by every voxel; kept
    channels are scaled by `1 / (1 - rate)`. Outside training it does nothing.

    Args:
        rate: the fraction of channels to drop, in `[0, 1)`.
        data_format: `"channels_last"` or `"channels_first"`; None (the default)
            means `mk.config.image_data_format()`.
        seed: an int for a reproducible mask stream of this layer.
        **kwargs: `name`, `trainable`, `dtype`.

    Input shape:
        `(batch, dim1, dim2, dim3, channels)` (or channels first).

    Output shape:
        The inputs' shape.

    Raises:
        ValueError: for a `rate` outside `[0, 1)`, an unknown `data_format`
            or inputs that are not 5-D.

    Example:
        >>> out = mk.layers.SpatialDropout3D(0.5, seed=1)(
        ...     np.ones((1, 2, 2, 2, 3)), training=True
        ... ).numpy()
        >>> [sorted(set(out[..., c].ravel().tolist())) in ([0.0], [2.0]) for c in range(3)]
        [True, True, True]
    """

    rank = 3
