"""Truth values: `logical_and`, `logical_or`, `logical_xor`, `logical_not`, `any`, `all`,
and the tests `isnan`, `isinf`, `isfinite`.

As in Keras, each takes any values, reads them as truth values (non-zero is
True) or tests them, and gives a boolean Tensor; none has a gradient.
Tensors and symbolic tensors take the first four as operators too: `a & b`,
`a | b`, `a ^ b`, `~a`.
"""

import numpy as np

from minikeras.engine.tensor import getval
from minikeras.ops.core import op_error, value_of, wrap

__all__ = [
    "all",
    "any",
    "isfinite",
    "isinf",
    "isnan",
    "logical_and",
    "logical_not",
    "logical_or",
    "logical_xor",
]


def _logic(op, function, *operands, **options):
    """`function` of the operands' values, untraced (logic has no gradient), as a Tensor."""
    values = [getval(value_of(operand)) for operand in operands]
    try:
        return wrap(np.asarray(function(*values, **options)))
    except ValueError:
        raise op_error(op, "shapes cannot be broadcast together", *values) from None
    except np.exceptions.AxisError as error:
        raise op_error(op, f"invalid axis: {error}", *values) from None


def logical_and(x1, x2):
    """Element-wise `x1 and x2` of truth values, as a boolean Tensor (`x1 & x2`).

    Args:
        x1: Tensor or array-like (non-zero is True).
        x2: Tensor or array-like, broadcastable with `x1`.

    Returns:
        A boolean Tensor.

    Raises:
        ValueError: if the shapes do not broadcast.

    Example:
        >>> mk.ops.logical_and([True, True, False], [1, 0, 1]).numpy()
        array([ True, False, False])
    """
    return _logic("logical_and", np.logical_and, x1, x2)


def logical_or(x1, x2):
    """Element-wise `x1 or x2` of truth values, as a boolean Tensor (`x1 | x2`).

    Args:
        x1: Tensor or array-like (non-zero is True).
        x2: Tensor or array-like, broadcastable with `x1`.

    Returns:
        A boolean Tensor.

    Raises:
        ValueError: if the shapes do not broadcast.

    Example:
        >>> mk.ops.logical_or([True, False, False], [0, 0, 2]).numpy()
        array([ True, False,  True])
    """
    return _logic("logical_or", np.logical_or, x1, x2)


def logical_xor(x1, x2):
    """Element-wise exclusive or of truth values, as a boolean Tensor (`x1 ^ x2`).

    Args:
        x1: Tensor or array-like (non-zero is True).
        x2: Tensor or array-like, broadcastable with `x1`.

    Returns:
        A boolean Tensor.

    Raises:
        ValueError: if the shapes do not broadcast.

    Example:
        >>> mk.ops.logical_xor([True, True, False], [True, False, False]).numpy()
        array([False,  True, False])
    """
    return _logic("logical_xor", np.logical_xor, x1, x2)


def logical_not(x):
    """Element-wise `not x` of truth values, as a boolean Tensor (`~x`).

    Args:
        x: Tensor or array-like (non-zero is True).

    Returns:
        A boolean Tensor.

    Example:
        >>> mk.ops.logical_not([True, False, 0, 3]).numpy()
        array([False,  True,  True, False])
    """
    return _logic("logical_not", np.logical_not, x)


def any(x, axis=None, keepdims=False):  # noqa: A001 (Keras's name)
    """Whether any value is true (non-zero), over `axis` (all axes by default).

    Args:
        x: Tensor or array-like.
        axis: an int, a tuple of ints, or None for every axis.
        keepdims: keep the reduced axes with size 1.

    Returns:
        A boolean Tensor.

    Raises:
        ValueError: if `axis` is out of range.

    Example:
        >>> mk.ops.any([[0, 2], [0, 0]], axis=1).numpy()
        array([ True, False])
    """
    return _logic("any", np.any, x, axis=axis, keepdims=keepdims)


def all(x, axis=None, keepdims=False):  # noqa: A001 (Keras's name)
    """Whether every value is true (non-zero), over `axis` (all axes by default).

    Args:
        x: Tensor or array-like.
        axis: an int, a tuple of ints, or None for every axis.
        keepdims: keep the reduced axes with size 1.

    Returns:
        A boolean Tensor.

    Raises:
        ValueError: if `axis` is out of range.

    Example:
        >>> mk.ops.all([[1, 2], [0, 3]], axis=1).numpy()
        array([ True, False])
    """
    return _logic("all", np.all, x, axis=axis, keepdims=keepdims)


def isnan(x):
    """Element-wise: whether a value is NaN, as a boolean Tensor.

    Args:
        x: Tensor or array-like.

    Returns:
        A boolean Tensor (all False for integers).

    Example:
        >>> mk.ops.isnan([1.0, float("nan"), float("inf")]).numpy()
        array([False,  True, False])
    """
    return _logic("isnan", np.isnan, x)


def isinf(x):
    """Element-wise: whether a value is infinite (either sign), as a boolean Tensor.

    Args:
        x: Tensor or array-like.

    Returns:
        A boolean Tensor (all False for integers).

    Example:
        >>> mk.ops.isinf([1.0, float("nan"), -float("inf")]).numpy()
        array([False, False,  True])
    """
    return _logic("isinf", np.isinf, x)


def isfinite(x):
    """Element-wise: whether a value is neither NaN nor infinite, as a boolean Tensor.

    Args:
        x: Tensor or array-like.

    Returns:
        A boolean Tensor (all True for integers).

    Example:
        >>> mk.ops.isfinite([1.0, float("nan"), float("inf")]).numpy()
        array([ True, False, False])
    """
    return _logic("isfinite", np.isfinite, x)
