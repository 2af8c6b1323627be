"""Random initializers: normal, uniform, truncated normal, variance scaling, orthogonal."""

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
    "Orthogonal",
    "RandomNormal",
    "RandomUniform",
    "TruncatedNormal",
    "VarianceScaling",
]


class RandomNormal(Initializer):
    """Draws from a normal distribution: `mean + stddev * N(0, 1)`.

    Args:
        mean: the mean.
        stddev: the standard deviation, non-negative.
        seed: None (draw from `minikeras.random`) or an int (same values
            on every call).

    Raises:
        ValueError: for a negative `stddev` or a bad `seed`.

    Example:
        >>> values = mk.initializers.RandomNormal(stddev=1.0, seed=0)((1000,))
        >>> values.dtype, bool(abs(values.std() - 1.0) < 0.1)
        (dtype('float32'), True)
    """

    def __init__(self, mean=0.0, stddev=0.05, seed=None):
        if stddev < 0:
            raise ValueError(f"RandomNormal: stddev must be non-negative, got {stddev}")
        self.mean, self.stddev = mean, stddev
        self.seed = _check_seed("RandomNormal", seed)

    def __call__(self, shape, dtype=None):
        shape = _check_shape("RandomNormal", shape)
        dtype = _check_float_dtype("RandomNormal", dtype)
        values = _standard_normal(_generator(self.seed), shape, dtype)
        values *= self.stddev
        values += self.mean
        return values.astype(dtype, copy=False)

    def get_config(self):
        return {"mean": self.mean, "stddev": self.stddev, "seed": self.seed}


class RandomUniform(Initializer):
    """Draws uniformly from `[minval, maxval)`.

    Args:
        minval: the lower bound.
        maxval: the upper bound, greater than `minval`.
        seed: None (draw from `minikeras.random`) or an int (same values
            on every call).

    Raises:
        ValueError: if `minval >= maxval`, or for a bad `seed`.

    Example:
        >>> values = mk.initializers.RandomUniform(-1.0, 1.0, seed=0)((1000,))
        >>> bool(values.min() >= -1.0 and values.max() < 1.0)
        True
    """

    def __init__(self, minval=-0.05, maxval=0.05, seed=None):
        if not minval < maxval:
            raise ValueError(
                f"RandomUniform: minval must be less than maxval, got minval={minval}, "
                f"maxval={maxval}"
            )
        self.minval, self.maxval = minval, maxval
        self.seed = _check_seed("RandomUniform", seed)

    def __call__(self, shape, dtype=None):
        shape = _check_shape("RandomUniform", shape)
        dtype = _check_float_dtype("RandomUniform", dtype)
        values = _uniform(_generator(self.seed), shape, dtype, self.minval, self.maxval)
        return values.astype(dtype, copy=False)

    def get_config(self):
        return {"minval": self.minval, "maxval": self.maxval, "seed": self.seed}


class TruncatedNormal(Initializer):
    """Draws from a normal distribution, redrawing values beyond 2 stddev of the mean.

    The result lies in `[mean - 2 * stddev, mean + 2 * stddev]`; its standard
    deviation is about `0.88 * stddev`.

    Args:
        mean: the mean.
        stddev: the standard deviation before truncation, non-negative.
        seed: None (draw from `minikeras.random`) or an int (same values
            on every call).

    Raises:
        ValueError: for a negative `stddev` or a bad `seed`.

    Example:
        >>> values = mk.initializers.TruncatedNormal(stddev=1.0, seed=0)((1000,))
        >>> bool(np.abs(values).max() <= 2.0)
        True
    """

    def __init__(self, mean=0.0, stddev=0.05, seed=None):
        if stddev < 0:
            raise ValueError(f"TruncatedNormal: stddev must be non-negative, got {stddev}")
        self.mean, self.stddev = mean, stddev
        self.seed = _check_seed("TruncatedNormal", seed)

    def __call__(self, shape, dtype=None):
        shape = _check_shape("TruncatedNormal", shape)
        dtype = _check_float_dtype("TruncatedNormal", dtype)
        values = _truncated_standard_normal(_generator(self.seed), shape, dtype)
        values *= self.stddev
        values += self.mean
        return values.astype(dtype, copy=False)

    def get_config(self):
        return {"mean": self.mean, "stddev": self.stddev, "seed": self.seed}


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

    Raises:
        ValueError: for a non-positive `scale`, an unknown `mode` or
            `distribution`, or a bad `seed`.

    Example:
        >>> init = mk.initializers.VarianceScaling(
        ...     scale=2.0, mode="fan_in", distribution="uniform", seed=0
        ... )
        >>> values = init((200, 100))
        >>> bool(np.abs(values).max() <= np.sqrt(3 * 2.0 / 200))
        True
    """

    def __init__(self, scale=1.0, mode="fan_in", distribution="truncated_normal", seed=None):
        name = type(self).__name__
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
        fan_in, fan_out = compute_fans(shape)
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
        return {
            "scale": self.scale,
            "mode": self.mode,
            "distribution": self.distribution,
            "seed": self.seed,
        }


class _PresetVarianceScaling(VarianceScaling):
    """A VarianceScaling whose scale, mode and distribution are fixed by its class."""

    _preset = {}

    def __init__(self, seed=None):
        super().__init__(seed=seed, **self._preset)

    def get_config(self):
        return {"seed": self.seed}


class GlorotUniform(_PresetVarianceScaling):
    """Glorot (Xavier) uniform: `U(-limit, limit)`, `limit = sqrt(6 / (fan_in + fan_out))`.

    Args:
        seed: None (draw from `minikeras.random`) or an int (same values
            on every call).

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

    Example:
        >>> bool(np.abs(mk.initializers.LecunUniform(seed=0)((12, 8))).max() <= 0.5)
        True
    """

    _preset = {"scale": 1.0, "mode": "fan_in", "distribution": "uniform"}


class Orthogonal(Initializer):
    """A (semi-)orthogonal matrix times `gain`, from the QR decomposition of a normal draw.

    The shape is flattened to `(prod(shape[:-1]), shape[-1])`. For a normal
    matrix `A = QR`, `Q * sign(diag(R))` is uniformly distributed over
    orthogonal matrices; its rows (or columns, whichever are fewer) are
    orthonormal: `Q^T Q = I`.

    Args:
        gain: the factor applied to the orthogonal matrix.
        seed: None (draw from `minikeras.random`) or an int (same values
            on every call).

    Raises:
        ValueError: at call time, for a shape with fewer than two axes.

    Example:
        >>> q = mk.initializers.Orthogonal(seed=0)((4, 4))
        >>> np.allclose(q.T @ q, np.eye(4), atol=1e-6)
        True
    """

    def __init__(self, gain=1.0, seed=None):
        self.gain = gain
        self.seed = _check_seed("Orthogonal", seed)

    def __call__(self, shape, dtype=None):
        shape = _check_shape("Orthogonal", shape)
        dtype = _check_float_dtype("Orthogonal", dtype)
        if len(shape) < 2:
            raise ValueError(
                f"Orthogonal: needs a shape with at least two axes, got {shape} with {len(shape)}"
            )
        rows, columns = int(np.prod(shape[:-1])), shape[-1]
        flat_shape = (max(rows, columns), min(rows, columns))
        matrix = _standard_normal(_generator(self.seed), flat_shape, dtype)
        q, r = np.linalg.qr(matrix)
        q *= np.sign(np.diag(r))
        if rows < columns:
            q = q.T
        return (self.gain * q).reshape(shape).astype(dtype, copy=False)

    def get_config(self):
        return {"gain": self.gain, "seed": self.seed}
