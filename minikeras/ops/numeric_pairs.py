"""Numeric functions of two tensors, element-wise: hypot, logaddexp, logaddexp2, divide_no_nan,
fmod, fmax, fmin, heaviside, ldexp and nextafter.

The operands broadcast and go through `apply_binary` (`ops.core`), so they
follow the shared promotion rule; as in Keras, two integer operands give
floatx where the result is a real number (all but `fmod`, `fmax`, `fmin`,
which keep numpy's integer dtypes). Each VJP hands every operand a gradient
of its own shape through `unbroadcast`, the helper `add` and `multiply` use
(autograd's `logaddexp` and `logaddexp2` do the same with autograd's own).
`nextafter` has no gradient (Keras on JAX has none either).
"""

import autograd.numpy as anp
import numpy as np
from autograd.extend import defvjp, defvjp_argnums, primitive

from minikeras.engine.broadcast import unbroadcast
from minikeras.engine.primitive import call_primitive
from minikeras.engine.tensor import getval
from minikeras.ops.bitwise import booleans_as_int32
from minikeras.ops.comparison import _chooser_vjps
from minikeras.ops.core import (
    apply_binary,
    as_float,
    broadcastable,
    dtype_of,
    op_error,
    value_of,
    wrap,
)
from minikeras.ops.math import _float_if_ints
from minikeras.ops.operands import operand_values

__all__ = [
    "divide_no_nan",
    "fmax",
    "fmin",
    "fmod",
    "heaviside",
    "hypot",
    "ldexp",
    "logaddexp",
    "logaddexp2",
    "nextafter",
]


def _floats(op, fn, x1, x2):
    """`fn` of the operands by `apply_binary`, two integer operands made floatx first."""
    a, b = operand_values(x1, x2)  # (a numpy float64 array beside a Tensor: narrowed)
    return apply_binary(op, fn, _float_if_ints(a, b), b)


@primitive
def _hypot(a, b):
    return np.hypot(a, b)


def _hypot_vjp(argnums, ans, args, kwargs):
    # Ours: autograd's divides by `ans`, NaN at the origin; there we give 0 (a subgradient).
    def vjp(g):
        at_origin = ans == 0
        scale = g / anp.where(at_origin, 1.0, ans)
        return [unbroadcast(anp.where(at_origin, 0.0, scale * args[i]), args[i]) for i in argnums]

    return vjp


defvjp_argnums(_hypot, _hypot_vjp)


def hypot(x1, x2):
    """Element-wise `sqrt(x1 ** 2 + x2 ** 2)`, without overflow for large operands.

    Integer operands give floatx. The gradient at the origin is 0.

    Args:
        x1: Tensor or array-like.
        x2: Tensor or array-like, broadcastable with `x1`.

    Returns:
        A Tensor.

    Raises:
        ValueError: if the shapes do not broadcast.

    Example:
        >>> mk.ops.hypot([3.0, 1e30], [4.0, 1e30]).numpy()
        array([5.0000000e+00, 1.4142135e+30], dtype=float32)
    """
    return _floats("hypot", _hypot, x1, x2)


def logaddexp(x1, x2):
    """Element-wise `log(exp(x1) + exp(x2))`, without overflow; integers give floatx.

    Args:
        x1: Tensor or array-like.
        x2: Tensor or array-like, broadcastable with `x1`.

    Returns:
        A Tensor.

    Raises:
        ValueError: if the shapes do not broadcast.

    Example:
        >>> mk.ops.logaddexp([0.0, 1000.0], [0.0, 1000.0]).numpy() - np.log(2.0).astype("float32")
        array([   0., 1000.], dtype=float32)
    """
    return _floats("logaddexp", anp.logaddexp, x1, x2)


def logaddexp2(x1, x2):
    """Element-wise `log2(2 ** x1 + 2 ** x2)`, without overflow; integers give floatx.

    Args:
        x1: Tensor or array-like.
        x2: Tensor or array-like, broadcastable with `x1`.

    Returns:
        A Tensor.

    Raises:
        ValueError: if the shapes do not broadcast.

    Example:
        >>> mk.ops.logaddexp2([1.0, 3.0], [1.0, 3.0]).numpy()
        array([2., 4.], dtype=float32)
    """
    return _floats("logaddexp2", anp.logaddexp2, x1, x2)


@primitive
def _divide_no_nan(a, b):
    zero = b == 0
    return np.where(zero, 0, a / (b + zero))  # (b + zero: 1 where b is 0, b's dtype kept)


def _divide_no_nan_vjp(argnums, ans, args, kwargs):
    # Zero where the divisor is 0, for both operands, as Keras's (a `where` on JAX).
    a, b = args

    def vjp(g):
        zero = b == 0
        g_over_b = anp.where(zero, 0.0, g / (b + zero))
        return [
            unbroadcast(g_over_b, a) if i == 0 else unbroadcast(-g_over_b * ans, b) for i in argnums
        ]

    return vjp


defvjp_argnums(_divide_no_nan, _divide_no_nan_vjp)


def divide_no_nan(x1, x2):
    """Element-wise `x1 / x2`, and 0 where `x2` is 0 (so never NaN nor infinite from that).

    Integer operands give floatx. The gradient is zero, for both operands,
    where `x2` is 0.

    Args:
        x1: Tensor or array-like, the numerator.
        x2: Tensor or array-like, the denominator, broadcastable with `x1`.

    Returns:
        A Tensor.

    Raises:
        ValueError: if the shapes do not broadcast.

    Example:
        >>> mk.ops.divide_no_nan([1.0, 1.0, 0.0], [4.0, 0.0, 0.0]).numpy()
        array([0.25, 0.  , 0.  ], dtype=float32)
    """
    return _floats("divide_no_nan", _divide_no_nan, x1, x2)


@primitive
def _fmod(a, b):
    return np.fmod(a, b)


def _fmod_vjp(argnums, ans, args, kwargs):
    # fmod(a, b) = a - trunc(a / b) * b, where trunc's derivative is 0.
    a, b = args

    def vjp(g):
        quotient = np.trunc(getval(a) / getval(b))
        return [unbroadcast(g, a) if i == 0 else unbroadcast(-g * quotient, b) for i in argnums]

    return vjp


defvjp_argnums(_fmod, _fmod_vjp)


def fmod(x1, x2):
    """Element-wise remainder of `x1 / x2` with the sign of `x1` (C's fmod, unlike `mod`).

    Integers keep an integer dtype; booleans give int32, as in Keras.

    Args:
        x1: Tensor or array-like, the dividend.
        x2: Tensor or array-like, the divisor, broadcastable with `x1`.

    Returns:
        A Tensor.

    Raises:
        ValueError: if the shapes do not broadcast.

    Example:
        >>> mk.ops.fmod([-7, 7], 3).numpy()
        array([-1,  1], dtype=int32)
    """
    a, b = booleans_as_int32(*operand_values(x1, x2), with_booleans=True)
    return apply_binary("fmod", _fmod, a, b)


@primitive
def _fmax(a, b):
    return np.fmax(a, b)


@primitive
def _fmin(a, b):
    return np.fmin(a, b)


defvjp(_fmax, *_chooser_vjps())
defvjp(_fmin, *_chooser_vjps())


def fmax(x1, x2):
    """Element-wise maximum that ignores NaN: NaN only where both operands are NaN.

    The gradient goes to the chosen operand, split evenly on a tie, as `maximum`'s.

    Args:
        x1: Tensor or array-like.
        x2: Tensor or array-like, broadcastable with `x1`.

    Returns:
        A Tensor.

    Raises:
        ValueError: if the shapes do not broadcast.

    Example:
        >>> mk.ops.fmax([1.0, np.nan, np.nan], [np.nan, 2.0, np.nan]).numpy()
        array([ 1.,  2., nan], dtype=float32)
    """
    return apply_binary("fmax", _fmax, x1, x2)


def fmin(x1, x2):
    """Element-wise minimum that ignores NaN: NaN only where both operands are NaN.

    The gradient goes to the chosen operand, split evenly on a tie, as `minimum`'s.

    Args:
        x1: Tensor or array-like.
        x2: Tensor or array-like, broadcastable with `x1`.

    Returns:
        A Tensor.

    Raises:
        ValueError: if the shapes do not broadcast.

    Example:
        >>> mk.ops.fmin([1.0, np.nan], [np.nan, 2.0]).numpy()
        array([1., 2.], dtype=float32)
    """
    return apply_binary("fmin", _fmin, x1, x2)


@primitive
def _heaviside(a, b):
    return np.heaviside(a, b)


def _heaviside_vjp(argnums, ans, args, kwargs):
    # A step: no slope in x1; where x1 is 0 the result is x2 itself.
    a, b = args

    def vjp(g):
        at_zero = getval(a) == 0
        return [
            unbroadcast(anp.zeros_like(g), a)
            if i == 0
            else unbroadcast(anp.where(at_zero, g, 0.0), b)
            for i in argnums
        ]

    return vjp


defvjp_argnums(_heaviside, _heaviside_vjp)


def heaviside(x1, x2):
    """Element-wise step function: 0 where `x1 < 0`, 1 where `x1 > 0`, `x2` where `x1 == 0`.

    Integer operands give floatx. The gradient is zero for `x1` and passes to
    `x2` where `x1` is 0.

    Args:
        x1: Tensor or array-like, the input.
        x2: Tensor or array-like, the value at 0, broadcastable with `x1`.

    Returns:
        A Tensor.

    Raises:
        ValueError: if the shapes do not broadcast.

    Example:
        >>> mk.ops.heaviside([-1.5, 0.0, 2.0], 0.5).numpy()
        array([0. , 0.5, 1. ], dtype=float32)
    """
    return _floats("heaviside", _heaviside, x1, x2)


@primitive
def _ldexp(a, b):
    return np.ldexp(a, b)


# Linear in `a`: the gradient is `g * 2 ** b`, computed by ldexp itself (exact, same dtype).
defvjp(_ldexp, lambda ans, a, b: lambda g: unbroadcast(_ldexp(g, b), a))


def ldexp(x1, x2):
    """Element-wise `x1 * 2 ** x2`, for an integer exponent `x2`.

    Integers in `x1` become floatx; the gradient flows to `x1` only.

    Args:
        x1: Tensor or array-like, the mantissas.
        x2: integer Tensor or array-like, the exponents, broadcastable with `x1`.

    Returns:
        A Tensor.

    Raises:
        TypeError: if `x2` is not of an integer dtype.
        ValueError: if the shapes do not broadcast.

    Example:
        >>> mk.ops.ldexp([1.5, 3.0], np.array([2, -1])).numpy()
        array([6. , 1.5], dtype=float32)
    """
    a, b = value_of(x1), value_of(x2)
    b_dtype = dtype_of(b)
    if isinstance(b, float) or (b_dtype is not None and b_dtype.kind not in "iu"):
        kind = b_dtype if b_dtype is not None else type(b).__name__
        raise TypeError(f"ldexp: x2 must be integers (the exponents), got {kind}")
    a = as_float(a)
    if not broadcastable(a, b):
        raise op_error("ldexp", "shapes cannot be broadcast together", a, b)
    return wrap(call_primitive(_ldexp, a, getval(b)))


def nextafter(x1, x2):
    """Element-wise next representable float after `x1` in the direction of `x2`.

    Integer operands give floatx. It has no gradient (neither has Keras's on JAX).

    Args:
        x1: Tensor or array-like, the starting values.
        x2: Tensor or array-like, the directions, broadcastable with `x1`.

    Returns:
        A Tensor.

    Raises:
        ValueError: if the shapes do not broadcast.

    Example:
        >>> float(mk.ops.nextafter(np.float32(1.0), 2.0)) - 1.0 == float(np.finfo("float32").eps)
        True
    """
    a, b = operand_values(x1, x2)
    return _floats("nextafter", anp.nextafter, getval(a), getval(b))
