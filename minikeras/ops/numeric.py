"""Numeric functions of one tensor, element-wise: fabs, reciprocal, cbrt, exp2, erfc, erfinv, trunc,
nan_to_num and copy (`absolute` is `ops.abs` under Keras's other name).

Each is one primitive called through `call_primitive`: autograd's where its
VJP keeps float32 (`fabs`, `reciprocal`), ours beside it where autograd has
none (`cbrt`, `erfc`, `erfinv`: autograd's need scipy) or its own would change the
result (`exp2`'s VJP multiplies by a float64 `log(2)`; `trunc` is not
traced by autograd, and Keras gives it a zero gradient; `nan_to_num` takes
arguments autograd's VJP does not). Integers become floatx in the
transcendental ones, as in Keras; `trunc`, `nan_to_num` and `copy` keep them.
"""

import autograd.numpy as anp
import numpy as np
from autograd.extend import defvjp, primitive

from minikeras.engine.primitive import call_primitive
from minikeras.ops.activation_functions import (
    _TWO_OVER_SQRT_PI,
    _erf,
    _erf_near_zero,
    _erfc_far,
    _widened,
)
from minikeras.ops.core import array_of, wrap
from minikeras.ops.elementary import _LN2, _float, _zero

__all__ = ["cbrt", "copy", "erfc", "erfinv", "exp2", "fabs", "nan_to_num", "reciprocal", "trunc"]


def fabs(x):
    """Element-wise absolute value as a float: integers become floatx (unlike `abs`).

    Args:
        x: Tensor or array-like.

    Returns:
        A Tensor.

    Example:
        >>> mk.ops.fabs(np.array([-2, 3], "int32")).numpy()
        array([2., 3.], dtype=float32)
    """
    return wrap(call_primitive(anp.fabs, _float(x)))


def reciprocal(x):
    """Element-wise `1 / x`; integers become floatx (numpy would divide them as integers).

    Args:
        x: Tensor or array-like.

    Returns:
        A Tensor.

    Example:
        >>> mk.ops.reciprocal([2.0, -0.25]).numpy()
        array([ 0.5, -4. ], dtype=float32)
    """
    return wrap(call_primitive(anp.reciprocal, _float(x)))


@primitive
def _cbrt(x):
    # Through float64: numpy's float32 cube root is off by an ulp on exact cubes (27 -> 2.9999998).
    return np.cbrt(np.asarray(x, np.float64)).astype(np.result_type(x), copy=False)


# From the output, so that it differentiates again: d x^(1/3) = 1 / (3 x^(2/3)).
defvjp(_cbrt, lambda ans, x: lambda g: g / (3.0 * ans * ans))


def cbrt(x):
    """Element-wise real cube root (negative for negative `x`); integers become floatx.

    Args:
        x: Tensor or array-like.

    Returns:
        A Tensor.

    Example:
        >>> mk.ops.cbrt([-8.0, 27.0]).numpy()
        array([-2.,  3.], dtype=float32)
    """
    return wrap(call_primitive(_cbrt, _float(x)))


@primitive
def _exp2(x):
    return np.exp2(x)


# Ours: autograd's VJP multiplies by `np.log(2)`, a float64 scalar that widens float32.
defvjp(_exp2, lambda ans, x: lambda g: g * ans * _LN2)


def exp2(x):
    """Element-wise `2 ** x`; integers become floatx.

    Args:
        x: Tensor or array-like.

    Returns:
        A Tensor.

    Example:
        >>> mk.ops.exp2([3, -1]).numpy()
        array([8. , 0.5], dtype=float32)
    """
    return wrap(call_primitive(_exp2, _float(x)))


@primitive
def _erfc(x):
    # From erf's own approximations (ops.activation_functions): 1 - erf(x) near zero, and
    # erf's tail itself above 1, so that erfc(10) is 2e-45 and not 0. Past 28 it is 0 in
    # float64.
    wide = _widened(x)
    z = np.minimum(np.abs(wide), 28.0)
    near_zero = 1.0 - _erf_near_zero(np.where(z < 1.0, wide, 0.0))
    tail = _erfc_far(np.maximum(z, 1.0))
    result = np.where(z < 1.0, near_zero, np.where(wide > 0, tail, 2.0 - tail))
    return result.astype(x.dtype, copy=False)


defvjp(_erfc, lambda ans, x: lambda g: -g * _TWO_OVER_SQRT_PI * anp.exp(-x * x))


def erfc(x):
    """Element-wise complementary error function, `1 - erf(x)`, accurate where erf is near 1.

    Integers become floatx.

    Args:
        x: Tensor or array-like.

    Returns:
        A Tensor.

    Example:
        >>> mk.ops.erfc([0.0, 5.0]).numpy()
        array([1.0000000e+00, 1.5374598e-12], dtype=float32)
    """
    return wrap(call_primitive(_erfc, _float(x)))


# erfinv: Giles's single-precision approximation ("Approximating the erfinv
# function", GPU Computing Gems, 2011), then two Newton steps on erf(y) = x
# in float64, which bring it to float64 precision.
_CENTRAL = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 2.1858087e-04,
            -1.25372503e-03, -4.17768164e-03, 0.246640727, 1.50140941)  # fmt: skip
_TAIL = (-2.00214257e-04, 1.00950558e-04, 1.34934322e-03, -3.67342844e-03, 5.73950773e-03,
         -7.6224613e-03, 9.43887047e-03, 1.00167406, 2.83297682)  # fmt: skip
_SQRT_PI_OVER_2 = float(np.sqrt(np.pi) / 2)


@primitive
def _erfinv(x):
    x64 = np.asarray(x, dtype=np.float64)
    inside = np.abs(x64) < 1
    safe = np.where(inside, x64, 0.0)
    w = -np.log((1.0 - safe) * (1.0 + safe))
    central, tail = w - 2.5, np.sqrt(w) - 3.0
    p_central, p_tail = np.zeros_like(w), np.zeros_like(w)
    for c, t in zip(_CENTRAL, _TAIL):
        p_central, p_tail = p_central * central + c, p_tail * tail + t
    y = np.where(w < 5.0, p_central, p_tail) * safe
    for _ in range(2):
        y = y - (_erf(y) - safe) * _SQRT_PI_OVER_2 * np.exp(y * y)
    # +-1 give +-inf, and |x| > 1 (or NaN) gives NaN, as in Keras.
    y = np.where(inside, y, np.where(np.abs(x64) == 1, np.copysign(np.inf, x64), np.nan))
    return y.astype(np.result_type(x), copy=False)


# From the output, so that it differentiates again: d erfinv(x) = sqrt(pi) / 2 * exp(erfinv(x)^2).
defvjp(_erfinv, lambda ans, x: lambda g: g * _SQRT_PI_OVER_2 * anp.exp(ans * ans))


def erfinv(x):
    """Element-wise inverse error function: `y` with `erf(y) = x`, for `x` in `[-1, 1]`.

    Computed in float64 (to float64 precision) and given back in `x`'s float
    dtype; integers become floatx. `+-1` give `+-inf`, and values outside
    `[-1, 1]` give NaN.

    Args:
        x: Tensor or array-like.

    Returns:
        A Tensor.

    Example:
        >>> mk.ops.erfinv([0.0, 0.5, 1.0]).numpy().round(4)
        array([0.    , 0.4769,    inf], dtype=float32)
    """
    return wrap(call_primitive(_erfinv, _float(x)))


@primitive
def _trunc(x):
    return np.trunc(x)


defvjp(_trunc, _zero)


def trunc(x):
    """Element-wise rounding toward zero; integers keep their dtype. Its gradient is zero.

    Args:
        x: Tensor or array-like.

    Returns:
        A Tensor.

    Example:
        >>> mk.ops.trunc([-1.7, 1.7]).numpy()
        array([-1.,  1.], dtype=float32)
    """
    return wrap(call_primitive(_trunc, array_of(x)))


@primitive
def _nan_to_num(x, nan, posinf, neginf):
    return np.nan_to_num(x, nan=nan, posinf=posinf, neginf=neginf)


# Ours: autograd's VJP takes `x` alone. The gradient passes where x was finite.
defvjp(_nan_to_num, lambda ans, x, *replacements: lambda g: anp.where(anp.isfinite(x), g, 0.0))


def nan_to_num(x, nan=0.0, posinf=None, neginf=None):
    """Replaces NaN and infinities element-wise; integers and booleans come back unchanged.

    The gradient passes where `x` is finite and is zero where a value was replaced.

    Args:
        x: Tensor or array-like.
        nan: the value for NaN.
        posinf: the value for `inf`; None means the dtype's largest finite value.
        neginf: the value for `-inf`; None means the dtype's lowest finite value.

    Returns:
        A Tensor of `x`'s dtype.

    Example:
        >>> mk.ops.nan_to_num([np.nan, np.inf, -1.0], nan=0.5, posinf=9.0).numpy()
        array([ 0.5,  9. , -1. ], dtype=float32)
    """
    value = array_of(x)
    return wrap(call_primitive(_nan_to_num, value, nan, posinf, neginf))


@primitive
def _copy(x):
    return np.array(x, copy=True)


defvjp(_copy, lambda ans, x: lambda g: g)


def copy(x):
    """A copy of `x`, of the same dtype (the gradient passes through).

    Args:
        x: Tensor or array-like.

    Returns:
        A Tensor holding its own copy of the values.

    Example:
        >>> mk.ops.copy(np.array([1, 2], "int8")).numpy()
        array([1, 2], dtype=int8)
    """
    return wrap(call_primitive(_copy, array_of(x)))
