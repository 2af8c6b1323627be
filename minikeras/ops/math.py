"""Arithmetic, element-wise: + - * / // % **, unary minus and square; numpy broadcasting.

The elementary functions (exp, log, sqrt, tanh, ...) are in `ops.elementary`;
they are re-exported here, where they were first written.
"""

from contextlib import suppress

import autograd.numpy as anp
import numpy as np
from autograd.extend import defvjp, defvjp_argnums, primitive
from autograd.tracer import getval

from minikeras.engine.broadcast import unbroadcast
from minikeras.engine.primitive import call_primitive
from minikeras.ops.core import (
    apply_binary,
    array_of,
    as_float,
    plain_kind,
    promote,
    same_float_operands,
    value_of,
    wrap,
)
from minikeras.ops.elementary import abs, exp, log, log1p, sign, sqrt, tanh
from minikeras.ops.operands import narrowed

__all__ = [
    "add",
    "divide",
    "floor_divide",
    "mod",
    "multiply",
    "negative",
    "power",
    "square",
    "subtract",
    "true_divide",
    # re-exported from ops.elementary
    "abs",
    "exp",
    "log",
    "log1p",
    "sign",
    "sqrt",
    "tanh",
]


# The four arithmetic primitives, each with its VJP beside it. Ours rather
# than autograd's `anp.add` and friends: `call_primitive` records them without
# autograd's generic wrapper, and `unbroadcast` returns the gradient itself
# when no broadcasting happened (autograd's VJPs always go through its
# broadcasting bookkeeping).


@primitive
def _add(a, b):
    return a + b


defvjp_argnums(
    _add,
    lambda argnums, ans, args, kwargs: lambda g: [unbroadcast(g, args[i]) for i in argnums],
)


@primitive
def _subtract(a, b):
    return a - b


def _subtract_vjp(argnums, ans, args, kwargs):
    a, b = args
    return lambda g: [unbroadcast(g, a) if i == 0 else unbroadcast(-g, b) for i in argnums]


defvjp_argnums(_subtract, _subtract_vjp)


@primitive
def _multiply(a, b):
    return a * b


def _multiply_vjp(argnums, ans, args, kwargs):
    a, b = args
    return lambda g: [unbroadcast(g * b, a) if i == 0 else unbroadcast(g * a, b) for i in argnums]


defvjp_argnums(_multiply, _multiply_vjp)


@primitive
def _divide(a, b):
    return a / b


def _divide_vjp(argnums, ans, args, kwargs):
    a, b = args

    def vjp(g):
        g_over_b = g / b
        return [
            unbroadcast(g_over_b, a) if i == 0 else unbroadcast(-g_over_b * ans, b) for i in argnums
        ]

    return vjp


defvjp_argnums(_divide, _divide_vjp)


def add(x1, x2):
    """Element-wise `x1 + x2`.

    Args:
        x1: Tensor or array-like.
        x2: Tensor or array-like, broadcastable with `x1`.

    Returns:
        A Tensor.

    Raises:
        ValueError: if the shapes do not broadcast.

    Example:
        >>> mk.ops.add([1.0, 2.0], 1).numpy()
        array([2., 3.], dtype=float32)
    """
    return apply_binary("add", _add, x1, x2)


def subtract(x1, x2):
    """Element-wise `x1 - x2`.

    Args:
        x1: Tensor or array-like.
        x2: Tensor or array-like, broadcastable with `x1`.

    Returns:
        A Tensor.

    Raises:
        ValueError: if the shapes do not broadcast.

    Example:
        >>> mk.ops.subtract([3.0], [1.0]).numpy()
        array([2.], dtype=float32)
    """
    return apply_binary("subtract", _subtract, x1, x2)


def multiply(x1, x2):
    """Element-wise `x1 * x2`.

    Args:
        x1: Tensor or array-like.
        x2: Tensor or array-like, broadcastable with `x1`.

    Returns:
        A Tensor.

    Raises:
        ValueError: if the shapes do not broadcast.

    Example:
        >>> mk.ops.multiply([2.0, 3.0], 2).numpy()
        array([4., 6.], dtype=float32)
    """
    return apply_binary("multiply", _multiply, x1, x2)


def divide(x1, x2):
    """Element-wise true division `x1 / x2`; integers divide to floats.

    Args:
        x1: Tensor or array-like.
        x2: Tensor or array-like, broadcastable with `x1`.

    Returns:
        A Tensor.

    Raises:
        ValueError: if the shapes do not broadcast.

    Example:
        >>> mk.ops.divide([1.0], [4.0]).numpy()
        array([0.25], dtype=float32)
    """
    a, b = value_of(x1), value_of(x2)
    if same_float_operands(a, b):
        with suppress(ValueError):  # (the general path below says what went wrong)
            return wrap(_divide.fun(a, b))
    a, b = narrowed(x1, x2, a, b)  # (a numpy float64 array beside a Tensor: see ops.operands)
    return apply_binary("divide", _divide, _float_if_ints(a, b), b)


def true_divide(x1, x2):
    """Element-wise true division `x1 / x2`: Keras's alias of `divide`.

    On symbolic tensors, `x / y` records this op (Keras's `TrueDivide` node).

    Args:
        x1: Tensor or array-like.
        x2: Tensor or array-like, broadcastable with `x1`.

    Returns:
        A Tensor.

    Raises:
        ValueError: if the shapes do not broadcast.

    Example:
        >>> mk.ops.true_divide([3], [2]).numpy()
        array([1.5], dtype=float32)
    """
    return divide(x1, x2)


def _float_if_ints(a, b):
    """Integer / integer gives float32 (Keras), not numpy's float64."""
    if _is_integer(a) and _is_integer(b):
        return as_float(a)
    return a


def _is_integer(value):
    """Whether `value` is an integer or boolean array or Python number."""
    if isinstance(value, (bool, int)):
        return True
    return getattr(value, "dtype", np.dtype("f")).kind in "iub"


def floor_divide(x1, x2):
    """Element-wise floor division `x1 // x2` (not differentiable).

    Args:
        x1: Tensor or array-like.
        x2: Tensor or array-like, broadcastable with `x1`.

    Returns:
        A Tensor.

    Raises:
        ValueError: if the shapes do not broadcast.

    Example:
        >>> mk.ops.floor_divide([7, -7], 2).numpy()
        array([ 3, -4], dtype=int32)
    """
    return apply_binary("floor_divide", anp.floor_divide, x1, x2)


def mod(x1, x2):
    """Element-wise remainder `x1 % x2`, with the sign of `x2` as in numpy.

    Args:
        x1: Tensor or array-like.
        x2: Tensor or array-like, broadcastable with `x1`.

    Returns:
        A Tensor.

    Raises:
        ValueError: if the shapes do not broadcast.

    Example:
        >>> mk.ops.mod([7.0, -7.0], 3).numpy()
        array([1., 2.], dtype=float32)
    """
    return apply_binary("mod", anp.mod, x1, x2)


def power(x1, x2):
    """Element-wise `x1 ** x2`.

    Args:
        x1: Tensor or array-like, the base.
        x2: Tensor or array-like, the exponent.

    Returns:
        A Tensor.

    Raises:
        ValueError: if the shapes do not broadcast.

    Example:
        >>> mk.ops.power([2.0, 3.0], 2).numpy()
        array([4., 9.], dtype=float32)
    """
    a, b = value_of(x1), value_of(x2)
    if same_float_operands(a, b):  # (a scalar would meet the array's dtype below: it has it)
        with suppress(ValueError):
            return wrap(anp.power.fun(a, b))
    a, b = promote(*narrowed(x1, x2, a, b))
    # autograd's gradient turns a scalar into a float64 array, which would widen
    # float32 gradients; give the scalar the other operand's float dtype.
    a_dtype, b_dtype = getattr(a, "dtype", None), getattr(b, "dtype", None)
    if _is_scalar(b) and a_dtype is not None and a_dtype.kind == "f" and not _is_scalar(a):
        # The exponent stays a Python number: a constant a recording keeps (`fit`'s
        # compiled step), where an array made of it here would be data from nowhere.
        return wrap(call_primitive(_power_by, a, b.item() if isinstance(b, np.generic) else b))
    if _is_scalar(a) and b_dtype is not None and b_dtype.kind == "f" and not _is_scalar(b):
        a = np.asarray(a, dtype=b_dtype)
    return apply_binary("power", anp.power, a, b)


@primitive
def _power_by(x, exponent):
    """`x ** exponent` for a float array and a Python-number exponent, in `x`'s dtype."""
    return np.power(x, np.asarray(exponent, dtype=x.dtype))


def _power_by_vjp(ans, x, exponent):
    # autograd's VJP of `power` with the exponent as the 0-d array it used to be given:
    # the same products in the same order, so the same gradients to the last bit.
    y = np.asarray(exponent, dtype=getval(x).dtype)
    return lambda g: g * y * x ** anp.where(y, y - 1, 1.0)


defvjp(_power_by, _power_by_vjp)


def _is_scalar(value):
    """A Python number or numpy scalar (which `value_of` turns into a Python float)."""
    return issubclass(plain_kind(value), (bool, int, float, np.generic))


def negative(x):
    """Element-wise `-x`.

    Args:
        x: Tensor or array-like.

    Returns:
        A Tensor.

    Example:
        >>> mk.ops.negative([1.0, -2.0]).numpy()
        array([-1.,  2.], dtype=float32)
    """
    return wrap(call_primitive(anp.negative, array_of(x)))


def square(x):
    """Element-wise `x * x`.

    Args:
        x: Tensor or array-like.

    Returns:
        A Tensor.

    Example:
        >>> mk.ops.square([3.0]).numpy()
        array([9.], dtype=float32)
    """
    value = array_of(x)
    return wrap(call_primitive(_multiply, value, value))
