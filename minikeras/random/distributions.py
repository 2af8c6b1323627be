"""Draws with parameters: `gamma`, `beta` and `binomial`, as `keras.random` has them.

Each returns a Tensor of `shape` and takes `seed=` as None, an int or a
`SeedGenerator` (see `minikeras.random`). The parameters are floats or arrays
that broadcast to `shape`; the result is `config.floatx()` (float32) unless
`dtype` says otherwise, for `binomial`'s counts too, as in Keras.
"""

import numpy as np

from minikeras.engine.tensor import Tensor
from minikeras.random.generators import rng_for
from minikeras.random.random import _float_dtype, _shape

__all__ = ["beta", "binomial", "gamma"]


def _parameter(where, name, value, shape, low, high=None, low_included=True):
    """`value` as a float64 array broadcastable to `shape`, within its bounds."""
    array = np.asarray(value.numpy() if isinstance(value, Tensor) else value, dtype=np.float64)
    try:
        if np.broadcast_shapes(array.shape, shape) != shape:
            raise ValueError
    except ValueError:
        raise ValueError(
            f"{where}: `{name}` of shape {array.shape} does not broadcast to `shape` {shape}"
        ) from None
    below = array < low if low_included else array <= low
    if np.any(below | np.isnan(array)):
        bound = ">=" if low_included else ">"
        raise ValueError(f"{where}: `{name}` must be {bound} {low}, got {value!r:.80}")
    if high is not None and np.any(array > high):
        raise ValueError(f"{where}: `{name}` must be <= {high}, got {value!r:.80}")
    return array


def gamma(shape, alpha, dtype=None, seed=None):
    """Draws from the Gamma distribution of shape `alpha` (and scale 1).

    The mean and the variance are both `alpha`. Keras returns nan for a
    negative `alpha`; minikeras raises.

    Args:
        shape: the shape of the result.
        alpha: the shape parameter, >= 0 (0 gives zeros): a float or an
            array that broadcasts to `shape`.
        dtype: a float dtype; `config.floatx()` by default.
        seed: None, an int or a `SeedGenerator` (see `minikeras.random`).

    Returns:
        A Tensor of `shape`.

    Raises:
        TypeError: for a bad `shape` or `seed`.
        ValueError: for a negative size, a non-float `dtype`, or an `alpha`
            that is negative or does not broadcast to `shape`.

    Example:
        >>> x = mk.random.gamma((20000,), alpha=3.0, seed=0).numpy()
        >>> x.dtype, round(float(x.mean()))
        (dtype('float32'), 3)
    """
    shape, dtype = _shape(shape, "gamma"), _float_dtype(dtype, "gamma")
    alpha = _parameter("gamma", "alpha", alpha, shape, low=0)
    return Tensor(rng_for(seed, "gamma").gamma(alpha, 1.0, shape).astype(dtype))


def beta(shape, alpha, beta, dtype=None, seed=None):
    """Draws from the Beta distribution with parameters `alpha` and `beta`.

    Values lie in `[0, 1]` with mean `alpha / (alpha + beta)`. Keras returns
    nan for parameters <= 0; minikeras raises.

    Args:
        shape: the shape of the result.
        alpha: the first parameter, > 0: a float or an array that broadcasts
            to `shape`.
        beta: the second parameter, > 0, likewise.
        dtype: a float dtype; `config.floatx()` by default.
        seed: None, an int or a `SeedGenerator` (see `minikeras.random`).

    Returns:
        A Tensor of `shape`.

    Raises:
        TypeError: for a bad `shape` or `seed`.
        ValueError: for a negative size, a non-float `dtype`, or a parameter
            that is not positive or does not broadcast to `shape`.

    Example:
        >>> x = mk.random.beta((20000,), alpha=2.0, beta=6.0, seed=0).numpy()
        >>> bool(0 <= x.min() and x.max() <= 1), round(float(x.mean()), 2)
        (True, 0.25)
    """
    shape, dtype = _shape(shape, "beta"), _float_dtype(dtype, "beta")
    a = _parameter("beta", "alpha", alpha, shape, low=0, low_included=False)
    b = _parameter("beta", "beta", beta, shape, low=0, low_included=False)
    return Tensor(rng_for(seed, "beta").beta(a, b, shape).astype(dtype))


def binomial(shape, counts, probabilities, dtype=None, seed=None):
    """Draws the number of successes in `counts` trials of success probability `probabilities`.

    The result is a float Tensor of whole numbers in `[0, counts]`, with mean
    `counts * probabilities`. Keras returns nan for a probability outside
    `[0, 1]`; minikeras raises.

    Args:
        shape: the shape of the result.
        counts: the number of trials, a whole number >= 0: a number or an
            array that broadcasts to `shape`.
        probabilities: the probability of success of one trial, in `[0, 1]`,
            likewise.
        dtype: a float dtype; `config.floatx()` by default (as in Keras).
        seed: None, an int or a `SeedGenerator` (see `minikeras.random`).

    Returns:
        A Tensor of `shape`.

    Raises:
        TypeError: for a bad `shape` or `seed`.
        ValueError: for a negative size, a non-float `dtype`, `counts` that
            are negative or not whole, `probabilities` outside `[0, 1]`, or a
            parameter that does not broadcast to `shape`.

    Example:
        >>> x = mk.random.binomial((4,), counts=10, probabilities=0.5, seed=0).numpy()
        >>> x.dtype, bool(np.all((x >= 0) & (x <= 10) & (x == np.round(x))))
        (dtype('float32'), True)
    """
    shape, dtype = _shape(shape, "binomial"), _float_dtype(dtype, "binomial")
    n = _parameter("binomial", "counts", counts, shape, low=0)
    if np.any(n != np.round(n)):
        raise ValueError(f"binomial: `counts` must be whole numbers, got {counts!r:.80}")
    p = _parameter("binomial", "probabilities", probabilities, shape, low=0, high=1)
    draws = rng_for(seed, "binomial").binomial(n.astype(np.int64), p, shape)
    return Tensor(draws.astype(dtype))
