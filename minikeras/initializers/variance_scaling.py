"""`VarianceScaling` and its presets: Glorot, He and LeCun, uniform and normal.

The variance of the draws is a scale over a fan of the weight (`compute_fans`),
taken from given axes when a layer knows which of its kernel's axes are
inputs and which outputs (Keras 3.15's `input_axes` / `output_axes`).
"""

import copy

import numpy as np

from minikeras.initializers.initializer import (
    _TRUNCATED_STDDEV,
    Initializer,
    _check_float_dtype,
    _check_seed,
    _check_shape,
    _generator,
    _standard_normal,
    _truncated_standard_normal,
    _uniform,
    compute_fans,
)

__all__ = [
    "GlorotNormal",
    "GlorotUniform",
    "HeNormal",
    "HeUniform",
    "LecunNormal",
    "LecunUniform",
    "VarianceScaling",
]

_MODES = ("fan_in", "fan_out", "fan_avg")
_DISTRIBUTIONS = ("truncated_normal", "untruncated_normal", "uniform")


class VarianceScaling(Initializer):
    """Draws values whose variance is `scale / n`, with `n` the fan of the weight.

    `n` is `fan_in`, `fan_out` or `(fan_in + fan_out) / 2` (`mode`), from
    `compute_fans`. Then, by `distribution`:

        truncated_normal:   TruncatedNormal(0, sqrt(scale / n) / .87962566103423978)
        untruncated_normal: RandomNormal(0, sqrt(scale / n))
        uniform:            RandomUniform(-limit, limit), limit = sqrt(3 * scale / n)

    Args:
        scale: positive float.
        mode: `"fan_in"`, `"fan_out"` or `"fan_avg"`.
        distribution: `"truncated_normal"` (`"normal"` is the same),
            `"untruncated_normal"` or `"uniform"`.
        seed: None (draw from `minikeras.random`) or an int (same values
            on every call).
        input_axes: None, or a list of the axes of a weight that count for
            `fan_in` (see `compute_fans`); Keras 3.15's `EinsumDense` and
            `MultiHeadAttention` set them for their kernels.
        output_axes: None, or the axes that count for `fan_out`.

    Raises:
        ValueError: for a non-positive `scale`, an unknown `mode` or
            `distribution`, a bad `seed`, or axes that are not lists of ints.

    Example:
        >>> init = mk.initializers.VarianceScaling(
        ...     scale=2.0, mode="fan_in", distribution="uniform", seed=0
        ... )
        >>> values = init((200, 100))
        >>> bool(np.abs(values).max() <= np.sqrt(3 * 2.0 / 200))
        True
    """

    def __init__(
        self,
        scale=1.0,
        mode="fan_in",
        distribution="truncated_normal",
        seed=None,
        input_axes=None,
        output_axes=None,
    ):
        name = type(self).__name__
        self.input_axes = _check_axes(name, "input_axes", input_axes)
        self.output_axes = _check_axes(name, "output_axes", output_axes)
        if not scale > 0:
            raise ValueError(f"{name}: scale must be positive, got {scale}")
        if mode not in _MODES:
            raise ValueError(f"{name}: mode must be one of {', '.join(_MODES)}, got {mode!r}")
        distribution = distribution.lower() if isinstance(distribution, str) else distribution
        if distribution == "normal":
            distribution = "truncated_normal"
        if distribution not in _DISTRIBUTIONS:
            raise ValueError(
                f"{name}: distribution must be one of {', '.join(_DISTRIBUTIONS)}, "
                f"got {distribution!r}"
            )
        self.scale, self.mode, self.distribution = scale, mode, distribution
        self.seed = _check_seed(name, seed)

    def __call__(self, shape, dtype=None):
        name = type(self).__name__
        shape = _check_shape(name, shape)
        dtype = _check_float_dtype(name, dtype)
        fan_in, fan_out = compute_fans(shape, self.input_axes, self.output_axes)
        fan = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2}[self.mode]
        variance = self.scale / max(1.0, fan)
        rng = _generator(self.seed)
        if self.distribution == "uniform":
            limit = np.sqrt(3.0 * variance)
            values = _uniform(rng, shape, dtype, -limit, limit)
        elif self.distribution == "truncated_normal":
            values = _truncated_standard_normal(rng, shape, dtype)
            values *= np.sqrt(variance) / _TRUNCATED_STDDEV
        else:
            values = _standard_normal(rng, shape, dtype)
            values *= np.sqrt(variance)
        return values.astype(dtype, copy=False)

    def get_config(self):
        config = {
            "scale": self.scale,
            "mode": self.mode,
            "distribution": self.distribution,
            "seed": self.seed,
        }
        return {**config, **self._axes_config()}

    def _axes_config(self):
        # Only when set: Keras before 3.15 refuses the keys in a config.
        axes = {"input_axes": self.input_axes, "output_axes": self.output_axes}
        return {key: value for key, value in axes.items() if value is not None}

    def with_fan_axes(self, input_axes, output_axes):
        """This initializer, with its fans taken from these axes unless it has both already.

        What Keras 3.15's `EinsumDense` does to a variance-scaling kernel
        initializer (a private step there; the method is minikeras's own): a
        kernel such as `(dim, heads, key_dim)` is not a convolution kernel,
        so its fans are `dim` and `heads * key_dim`. An initializer given
        only one of `input_axes` and `output_axes` gets both replaced, as in
        Keras.

        Args:
            input_axes: the kernel's axes that count for `fan_in`.
            output_axes: the axes that count for `fan_out`.

        Returns:
            A copy of this initializer with those axes, or this one if it was
            given both `input_axes` and `output_axes`. (Keras rebuilds it with
            `from_config`, which fails for a subclass whose `__init__` does not
            take the axes; the copy keeps such a subclass working.)

        Example:
            >>> init = mk.initializers.GlorotUniform(seed=0).with_fan_axes([0], [1, 2])
            >>> values = init((32, 4, 16))
            >>> bool(np.abs(values).max() <= np.sqrt(6 / (32 + 64)))
            True
        """
        if self.input_axes is not None and self.output_axes is not None:
            return self
        clone = copy.copy(self)  # (not from_config: a subclass's __init__ may not take axes)
        clone.input_axes = _check_axes(type(self).__name__, "input_axes", input_axes)
        clone.output_axes = _check_axes(type(self).__name__, "output_axes", output_axes)
        return clone


def _check_axes(owner, argument, axes):
    if axes is None:
        return None
    if isinstance(axes, (int, np.integer)) or not all(
        isinstance(axis, (int, np.integer)) and not isinstance(axis, bool) for axis in axes
    ):
        raise ValueError(f"{owner}: {argument} must be None or a list of ints, got {axes!r}")
    return [int(axis) for axis in axes]


class _PresetVarianceScaling(VarianceScaling):
    """A VarianceScaling whose scale, mode and distribution are fixed by its class."""

    _preset = {}

    def __init__(self, seed=None, input_axes=None, output_axes=None):
        super().__init__(seed=seed, input_axes=input_axes, output_axes=output_axes, **self._preset)

    def get_config(self):
        return {"seed": self.seed, **self._axes_config()}


class GlorotUniform(_PresetVarianceScaling):
    """Glorot (Xavier) uniform: `U(-limit, limit)`, `limit = sqrt(6 / (fan_in + fan_out))`.

    Args:
        seed: None (draw from `minikeras.random`) or an int (same values
            on every call).
        input_axes: None, or the axes that count for `fan_in` (see
            `VarianceScaling`).
        output_axes: None, or the axes that count for `fan_out`.

    Example:
        >>> values = mk.initializers.GlorotUniform(seed=0)((100, 50))
        >>> bool(np.abs(values).max() <= np.sqrt(6 / 150))
        True
    """

    _preset = {"scale": 1.0, "mode": "fan_avg", "distribution": "uniform"}


class GlorotNormal(_PresetVarianceScaling):
    """Glorot (Xavier) normal: truncated normal with `stddev = sqrt(2 / (fan_in + fan_out))`.

    The draw is truncated at 2 stddev and rescaled by 1 / .87962566103423978
    so that the values keep that standard deviation.

    Args:
        seed: None (draw from `minikeras.random`) or an int (same values
            on every call).
        input_axes: None, or the axes that count for `fan_in` (see
            `VarianceScaling`).
        output_axes: None, or the axes that count for `fan_out`.

    Example:
        >>> mk.initializers.GlorotNormal(seed=0)((3, 4)).shape
        (3, 4)
    """

    _preset = {"scale": 1.0, "mode": "fan_avg", "distribution": "truncated_normal"}


class HeNormal(_PresetVarianceScaling):
    """He normal: truncated normal with `stddev = sqrt(2 / fan_in)`, for relu layers.

    Args:
        seed: None (draw from `minikeras.random`) or an int (same values
            on every call).
        input_axes: None, or the axes that count for `fan_in` (see
            `VarianceScaling`).
        output_axes: None, or the axes that count for `fan_out`.

    Example:
        >>> mk.initializers.HeNormal(seed=0)((3, 3, 8, 16)).dtype
        dtype('float32')
    """

    _preset = {"scale": 2.0, "mode": "fan_in", "distribution": "truncated_normal"}


class HeUniform(_PresetVarianceScaling):
    """He uniform: `U(-limit, limit)` with `limit = sqrt(6 / fan_in)`.

    Args:
        seed: None (draw from `minikeras.random`) or an int (same values
            on every call).
        input_axes: None, or the axes that count for `fan_in` (see
            `VarianceScaling`).
        output_axes: None, or the axes that count for `fan_out`.

    Example:
        >>> bool(np.abs(mk.initializers.HeUniform(seed=0)((24, 8))).max() <= 0.5)
        True
    """

    _preset = {"scale": 2.0, "mode": "fan_in", "distribution": "uniform"}


class LecunNormal(_PresetVarianceScaling):
    """LeCun normal: truncated normal with `stddev = sqrt(1 / fan_in)`, for selu layers.

    Args:
        seed: None (draw from `minikeras.random`) or an int (same values
            on every call).
        input_axes: None, or the axes that count for `fan_in` (see
            `VarianceScaling`).
        output_axes: None, or the axes that count for `fan_out`.

    Example:
        >>> mk.initializers.LecunNormal(seed=0)((4,)).shape
        (4,)
    """

    _preset = {"scale": 1.0, "mode": "fan_in", "distribution": "truncated_normal"}


class LecunUniform(_PresetVarianceScaling):
    """LeCun uniform: `U(-limit, limit)` with `limit = sqrt(3 / fan_in)`.

    Args:
        seed: None (draw from `minikeras.random`) or an int (same values
            on every call).
        input_axes: None, or the axes that count for `fan_in` (see
            `VarianceScaling`).
        output_axes: None, or the axes that count for `fan_out`.

    Example:
        >>> bool(np.abs(mk.initializers.LecunUniform(seed=0)((12, 8))).max() <= 0.5)
        True
    """

    _preset = {"scale": 1.0, "mode": "fan_in", "distribution": "uniform"}
