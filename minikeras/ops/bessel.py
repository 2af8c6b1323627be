"""The modified Bessel function of the first kind of order 0, element-wise: `i0`.

Its forward is numpy's `np.i0`; its gradient is `i1`, the function of order
1, which numpy lacks: ours (private), computed in float64 from its power
series below 20 and its asymptotic expansion above, with its own VJP
(`i1' = i0 - i1 / x`), so that `i0` differentiates twice and more.
"""

import autograd.numpy as anp
import numpy as np
from autograd.extend import defvjp, primitive

from minikeras.engine.primitive import call_primitive
from minikeras.ops.core import as_float, value_of, wrap

__all__ = ["i0"]

_SERIES_END = 20.0  # below: the power series (about 40 terms); above: the asymptotic expansion


@primitive
def _i0(x):
    return np.i0(x)


@primitive
def _i1(x):
    x64 = np.asarray(x, np.float64)
    size = np.abs(x64)
    # I1(x) = sum_k (x/2)^(2k+1) / (k! (k+1)!), all terms positive: no cancellation.
    half = np.minimum(size, _SERIES_END) / 2
    term = half
    series = half
    for k in range(1, 60):
        term = term * half * half / (k * (k + 1))
        series = series + term
    # I1(x) ~ e^x / sqrt(2 pi x) * sum_k c_k / x^k, c_k = c_(k-1) * -(4 - (2k-1)^2) / (8k),
    # whose terms still shrink at k = 30 for x >= 20.
    far = np.maximum(size, _SERIES_END)
    with np.errstate(over="ignore"):  # (past 713, I1 is inf, as i0 is)
        coefficient, expansion = 1.0, np.ones_like(far)
        for k in range(1, 30):
            coefficient *= -(4.0 - (2 * k - 1) ** 2) / (8.0 * k)
            expansion = expansion + coefficient / far**k
        asymptotic = np.exp(far) / np.sqrt(2 * np.pi * far) * expansion
    value = np.sign(x64) * np.where(size < _SERIES_END, series, asymptotic)
    return value.astype(np.result_type(x), copy=False)


def _i1_vjp(ans, x):
    # I1'(x) = I0(x) - I1(x) / x, and 1/2 at 0.
    def vjp(g):
        at_zero = x == 0
        safe = anp.where(at_zero, 1.0, x)
        return g * anp.where(at_zero, 0.5, _i0(x) - ans / safe)

    return vjp


defvjp(_i0, lambda ans, x: lambda g: g * _i1(x))
defvjp(_i1, _i1_vjp)


def i0(x):
    """Element-wise modified Bessel function of the first kind of order 0; integers become floatx.

    `i0(x) = sum_k (x/2)^(2k) / (k!)^2`: even, 1 at 0, growing like
    `e^|x| / sqrt(2 pi |x|)` (infinite past about 713 in float64, 88 in float32).

    Args:
        x: Tensor or array-like.

    Returns:
        A Tensor.

    Example:
        >>> mk.ops.i0([0.0, 1.0, -2.0]).numpy().round(4)
        array([1.    , 1.2661, 2.2796], dtype=float32)
    """
    return wrap(call_primitive(_i0, as_float(value_of(x))))
