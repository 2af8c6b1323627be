"""Choosing among values and finding positions: `select`, `nonzero`, `unravel_index`.

`select` is a chain of `where`s (its gradient goes to the chosen values);
`nonzero` and `unravel_index` give int32 positions, as Keras does, and have
no gradient.
"""

import numpy as np

from minikeras.engine.tensor import getval
from minikeras.ops.comparison import where
from minikeras.ops.core import value_of, wrap
from minikeras.ops.operands import narrowed_operands

__all__ = ["nonzero", "select", "unravel_index"]


def select(condlist, choicelist, default=0):
    """Per element, the value of the first choice whose condition holds, else `default`.

    Args:
        condlist: a list of boolean Tensors or array-likes.
        choicelist: a list of as many Tensors or array-likes; all broadcast
            with the conditions.
        default: the value where no condition holds.

    Returns:
        A Tensor of the choices' dtype (a Python number `default` does not
        change it).

    Raises:
        ValueError: for lists of different lengths, or empty ones.

    Example:
        >>> x = np.array([1.0, 2.0, 3.0], "float32")
        >>> mk.ops.select([x < 2, x > 2], [x, -x]).numpy()
        array([ 1.,  0., -3.], dtype=float32)
    """
    if not isinstance(condlist, (list, tuple)) or not isinstance(choicelist, (list, tuple)):
        raise ValueError("select: condlist and choicelist must be lists")
    if len(condlist) != len(choicelist) or not condlist:
        raise ValueError(
            f"select: condlist and choicelist must be non-empty and of one length, got "
            f"{len(condlist)} and {len(choicelist)}"
        )
    # Read together (`ops.operands`): a numpy float64 choice beside a Tensor one takes
    # its precision wherever it stands in the list.
    *choicelist, default = narrowed_operands(*choicelist, default)
    result = default
    for condition, choice in zip(reversed(condlist), reversed(choicelist)):
        condition = np.asarray(getval(value_of(condition)))
        if condition.dtype != np.bool_:
            raise ValueError(f"select: conditions must be booleans, got dtype {condition.dtype}")
        result = where(condition, choice, result)
    return result


def nonzero(x):
    """The positions of the non-zero values of `x`: one int32 Tensor of coordinates per axis.

    Args:
        x: Tensor or array-like.

    Returns:
        A tuple of `x.ndim` 1-d int32 Tensors.

    Example:
        >>> rows, columns = mk.ops.nonzero(np.array([[0, 1], [2, 0]]))
        >>> rows.numpy(), columns.numpy()
        (array([0, 1], dtype=int32), array([1, 0], dtype=int32))
    """
    value = np.asarray(getval(value_of(x)))
    return tuple(wrap(coordinates.astype(np.int32)) for coordinates in np.nonzero(value))


def unravel_index(indices, shape):
    """The coordinates in an array of `shape` of flat positions `indices`.

    Args:
        indices: integer Tensor or array-like of flat positions.
        shape: the array's shape.

    Returns:
        A tuple of `len(shape)` int32 Tensors of `indices`'s shape.

    Raises:
        ValueError: for non-integer indices, or one not below the size of `shape`.

    Example:
        >>> [t.numpy() for t in mk.ops.unravel_index(np.array([5, 1]), (2, 3))]
        [array([1, 0], dtype=int32), array([2, 1], dtype=int32)]
    """
    index = np.asarray(getval(value_of(indices)))
    if index.dtype.kind not in "iu":
        raise ValueError(f"unravel_index: indices must be integers, got dtype {index.dtype}")
    shape = tuple(int(size) for size in shape)
    try:
        coordinates = np.unravel_index(index, shape)
    except ValueError as error:
        raise ValueError(f"unravel_index: {error} (shape {shape})") from None
    return tuple(wrap(np.asarray(c, dtype=np.int32)) for c in coordinates)
