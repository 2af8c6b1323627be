"""Element-wise logic: `logical_and`, `logical_or`, `logical_xor`, `logical_not`.

As in Keras, each takes any values, reads them as truth values (non-zero is
True) and gives a boolean Tensor; none has a gradient. Tensors and symbolic
tensors take them as operators too: `a & b`, `a | b`, `a ^ b`, `~a`.
"""

import numpy as np

from minikeras.engine.tensor import getval
from minikeras.ops.core import op_error, value_of, wrap

__all__ = ["logical_and", "logical_not", "logical_or", "logical_xor"]


def _logic(op, function, *operands):
    """`function` of the operands' values, untraced (logic has no gradient), as a Tensor."""
    values = [getval(value_of(operand)) for operand in operands]
    try:
        return wrap(function(*values))
    except ValueError:
        raise op_error(op, "shapes cannot be broadcast together", *values) from None


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
