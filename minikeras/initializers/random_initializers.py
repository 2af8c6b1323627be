"""Random initializers: normal, uniform, truncated normal, orthogonal (see variance_scaling)."""

import numpy as np

from minikeras.initializers.initializer import (
    Initializer,
    _check_float_dtype,
    _check_seed,
    _check_shape,
    _generator,
    _standard_normal,
    _truncated_standard_normal,
    _uniform,
)

# (moved to variance_scaling.py; still found here, where code imported them from)
from minikeras.initializers.variance_scaling import (
    GlorotNormal,
    GlorotUniform,
    HeNormal,
    HeUniform,
    LecunNormal,
    LecunUniform,
    VarianceScaling,
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
