"""Element-wise selection and comparisons: maximum, minimum, clip, where, equal, less, ...

Broadcasting follows numpy. The gradient of `maximum` / `minimum` goes to
the chosen operand (split evenly on a tie); comparisons have none.
"""

import autograd.numpy as anp
import numpy as np
from autograd.extend import defvjp, primitive
from autograd.tracer import getval

from minikeras.engine.broadcast import unbroadcast
from minikeras.engine.gradient_select import select_gradient
from minikeras.engine.primitive import call_primitive
from minikeras.engine.tensor import Tensor
from minikeras.ops.core import (
    apply_binary,
    apply_unary,
    array_of,
    as_float,
    op_error,
    promote,
    promote_operands,
    value_of,
    wrap,
)
from minikeras.ops.operands import operand_values, operand_values_list

__all__ = [
    "clip",
    "equal",
    "greater",
    "greater_equal",
    "less",
    "less_equal",
    "maximum",
    "minimum",
    "not_equal",
    "where",
]


def _float(x):
    return as_float(value_of(x))


@primitive
def _maximum(a, b):
    return np.maximum(a, b)


@primitive
def _minimum(a, b):
    return np.minimum(a, b)


def _chooser_vjps():
    """Gradient goes to the chosen operand; ties split it evenly (float32-safe)."""

    def make(argnum):
        def vjp_maker(ans, a, b):
            target = a if argnum == 0 else b
            other = b if argnum == 0 else a

            def vjp(g):
                mine = anp.equal(target, ans)
                tie = anp.equal(other, ans)
                return g * mine - 0.5 * g * (mine * tie)

            return lambda g: unbroadcast(vjp(g), target)

        return vjp_maker

    return make(0), make(1)


defvjp(_maximum, *_chooser_vjps())
defvjp(_minimum, *_chooser_vjps())


def maximum(x1, x2):
    """Element-wise maximum; on a tie the gradient is split evenly.

    Args:
        x1: Tensor or array-like.
        x2: Tensor or array-like, broadcastable with `x1`.

    Returns:
        A Tensor.

    Raises:
        ValueError: if the shapes do not broadcast.

    Example:
        >>> mk.ops.maximum([1.0, 5.0], 3).numpy()
        array([3., 5.], dtype=float32)
    """
    return apply_binary("maximum", _maximum, x1, x2)


def minimum(x1, x2):
    """Element-wise minimum; on a tie the gradient is split evenly.

    Args:
        x1: Tensor or array-like.
        x2: Tensor or array-like, broadcastable with `x1`.

    Returns:
        A Tensor.

    Raises:
        ValueError: if the shapes do not broadcast.

    Example:
        >>> mk.ops.minimum([1.0, 5.0], 3).numpy()
        array([1., 3.], dtype=float32)
    """
    return apply_binary("minimum", _minimum, x1, x2)


def clip(x, x_min, x_max):
    """Limits values to `[x_min, x_max]`; the gradient is zero outside.

    Bounds that are numbers clip in one op, whose gradient is also zero at
    a bound. Bounds that are arrays or Tensors (a learned threshold) may
    broadcast `x` and take gradients themselves: they clip as
    `minimum(maximum(x, x_min), x_max)`, as Keras's JAX backend does, which
    splits the gradient half and half where `x` equals a bound.

    Args:
        x: Tensor or array-like.
        x_min: the lower bound: a number, or an array or Tensor that
            broadcasts with `x`.
        x_max: the upper bound, likewise.

    Returns:
        A Tensor, of the shape `x` and the bounds broadcast to.

    Raises:
        ValueError: if `x_min > x_max` anywhere, or the shapes do not broadcast.

    Example:
        >>> mk.ops.clip([-1.0, 0.5, 2.0], 0, 1).numpy()
        array([0. , 0.5, 1. ], dtype=float32)
    """
    # (numpy float64 bounds beside a Tensor x take its precision, as binary ops' operands do)
    lo, hi = operand_values(x, x_min)[1], operand_values(x, x_max)[1]
    if np.any(np.asarray(getval(lo)) > np.asarray(getval(hi))):
        raise ValueError(f"clip: x_min ({x_min}) must not exceed x_max ({x_max})")
    if not (_is_number(lo) and _is_number(hi)):
        # All three read together first: a numpy float64 x beside a Tensor bound
        # takes the bound's precision, which `maximum(x, 0.5)` alone would lose.
        x, x_min, x_max = operand_values_list((x, x_min, x_max))
        return minimum(maximum(x, x_min), x_max)
    value = array_of(x)
    if _is_float(lo) or _is_float(hi):
        value = as_float(value)  # integers clipped to float bounds become floatx, not float64
    return apply_unary("clip", anp.clip, value, lo, hi)


def _is_float(bound):
    """A Python float or a floating numpy number or 0-d array."""
    return isinstance(bound, float) or np.dtype(getattr(bound, "dtype", int)).kind == "f"


def _is_number(value):
    """A Python or numpy number, or a plain 0-d array: a bound that takes no gradient."""
    return isinstance(value, (int, float, np.generic)) or (
        type(value) is np.ndarray and value.ndim == 0
    )


@primitive
def _where(condition, x1, x2):
    return np.where(condition, x1, x2)


# Selects, as JAX's select: an inf gradient gives 0 to the branch not taken, not NaN.
defvjp(
    _where,
    None,
    lambda ans, c, x1, x2: lambda g: unbroadcast(select_gradient(c, g), x1),
    lambda ans, c, x1, x2: lambda g: unbroadcast(select_gradient(np.logical_not(c), g), x2),
)


def where(condition, x1=None, x2=None):
    """Picks `x1` where `condition` is true and `x2` elsewhere.

    With `condition` alone (`x1` and `x2` both None), as Keras and
    `np.nonzero`: the indices of its true (non-zero) elements, one int32
    Tensor per axis, in a tuple.

    Args:
        condition: boolean Tensor or array-like.
        x1: values where true.
        x2: values where false.

    Returns:
        A Tensor of the broadcast shape; or, without `x1` and `x2`, a tuple of
        int32 index Tensors.

    Raises:
        ValueError: if the shapes do not broadcast, or only one of `x1` and
            `x2` is given.

    Example:
        >>> mk.ops.where([True, False], [1.0, 2.0], 0.0).numpy()
        array([1., 0.], dtype=float32)
        >>> [i.numpy() for i in mk.ops.where([[0, 3], [4, 0]])]
        [array([0, 1], dtype=int32), array([1, 0], dtype=int32)]
    """
    if (x1 is None) != (x2 is None):
        raise ValueError(
            "where: `x1` and `x2` must both be given or both be None, got "
            f"x1={'None' if x1 is None else 'a value'}, x2={'None' if x2 is None else 'a value'}"
        )
    if x1 is None:
        return tuple(wrap(i.astype("int32")) for i in np.nonzero(getval(value_of(condition))))
    kind1, kind2 = type(x1), type(x2)
    if (kind1 is np.ndarray or kind2 is np.ndarray) and not (
        isinstance(x1, Tensor) or isinstance(x2, Tensor)
    ):
        # numpy float64 branches beside a Tensor condition only: the condition's
        # precision is floatx (`ops.operands`, a boolean Tensor), as Keras on JAX gives
        c, a, b = operand_values_list((condition, x1, x2))
        a, b = promote(a, b)
    else:
        c = value_of(condition)
        a, b = promote_operands(x1, x2)
    c = getval(c)
    c = c.astype(bool) if hasattr(c, "astype") else np.asarray(c, dtype=bool)
    try:
        return wrap(call_primitive(_where, c, a, b))
    except ValueError:
        raise op_error("where", "shapes cannot be broadcast together", c, a, b) from None


def equal(x1, x2):
    """Element-wise `x1 == x2`, as a boolean Tensor.

    Args:
        x1: Tensor or array-like.
        x2: Tensor or array-like.

    Returns:
        A boolean Tensor.

    Raises:
        ValueError: if the shapes do not broadcast.

    Example:
        >>> mk.ops.equal([1, 2], 2).numpy()
        array([False,  True])
    """
    return apply_binary("equal", anp.equal, x1, x2)


def not_equal(x1, x2):
    """Element-wise `x1 != x2`, as a boolean Tensor.

    Args:
        x1: Tensor or array-like.
        x2: Tensor or array-like.

    Returns:
        A boolean Tensor.

    Raises:
        ValueError: if the shapes do not broadcast.

    Example:
        >>> mk.ops.not_equal([1, 2], 2).numpy()
        array([ True, False])
    """
    return apply_binary("not_equal", anp.not_equal, x1, x2)


def less(x1, x2):
    """Element-wise `x1 < x2`, as a boolean Tensor.

    Args:
        x1: Tensor or array-like.
        x2: Tensor or array-like.

    Returns:
        A boolean Tensor.

    Raises:
        ValueError: if the shapes do not broadcast.

    Example:
        >>> mk.ops.less([1, 2], 2).numpy()
        array([ True, False])
    """
    return apply_binary("less", anp.less, x1, x2)


def less_equal(x1, x2):
    """Element-wise `x1 <= x2`, as a boolean Tensor.

    Args:
        x1: Tensor or array-like.
        x2: Tensor or array-like.

    Returns:
        A boolean Tensor.

    Raises:
        ValueError: if the shapes do not broadcast.

    Example:
        >>> mk.ops.less_equal([1, 3], 2).numpy()
        array([ True, False])
    """
    return apply_binary("less_equal", anp.less_equal, x1, x2)


def greater(x1, x2):
    """Element-wise `x1 > x2`, as a boolean Tensor.

    Args:
        x1: Tensor or array-like.
        x2: Tensor or array-like.

    Returns:
        A boolean Tensor.

    Raises:
        ValueError: if the shapes do not broadcast.

    Example:
        >>> mk.ops.greater([1, 3], 2).numpy()
        array([False,  True])
    """
    return apply_binary("greater", anp.greater, x1, x2)


def greater_equal(x1, x2):
    """Element-wise `x1 >= x2`, as a boolean Tensor.

    Args:
        x1: Tensor or array-like.
        x2: Tensor or array-like.

    Returns:
        A boolean Tensor.

    Raises:
        ValueError: if the shapes do not broadcast.

    Example:
        >>> mk.ops.greater_equal([1, 2], 2).numpy()
        array([False,  True])
    """
    return apply_binary("greater_equal", anp.greater_equal, x1, x2)
