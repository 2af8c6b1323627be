"""Diagonals: `diagonal` picks one out of two axes, `trace` sums it.

The two axes are moved to the end and flattened, and the diagonal's flat
positions picked by integer index: autograd's indexing gradient puts each
value's gradient back on the diagonal, in the input's dtype, to any order
(autograd's own `diagonal` gradient takes only the last two axes and no
offset, and its `trace` gradient is float64).
"""

import numpy as np

from minikeras.engine.tensor import getval
from minikeras.ops.axes import moveaxis
from minikeras.ops.core import array_of, normalize_axis, op_error, wrap
from minikeras.ops.reduction import sum
from minikeras.ops.shape import getitem, reshape

__all__ = ["diagonal", "trace"]


def diagonal(x, offset=0, axis1=0, axis2=1):
    """The diagonal of `x` over axes `axis1` and `axis2`, as a new last axis.

    Args:
        x: Tensor or array-like of rank 2 or more.
        offset: which diagonal: 0 the main one, positive above it (towards
            larger `axis2` indices), negative below it.
        axis1: the first axis (the diagonal's rows).
        axis2: the second axis (its columns).

    Returns:
        A Tensor of `x`'s dtype: the other axes in order, then the diagonal.

    Raises:
        ValueError: if `x` has fewer than 2 axes, or the axes are out of range
            or the same.

    Example:
        >>> mk.ops.diagonal(np.arange(9).reshape(3, 3), offset=1).numpy()
        array([1, 5])
    """
    value = array_of(x)
    plain = getval(value)
    if plain.ndim < 2:
        raise op_error("diagonal", "x needs 2 or more axes", plain)
    first = normalize_axis("diagonal", axis1, plain.ndim, plain)
    second = normalize_axis("diagonal", axis2, plain.ndim, plain)
    if first == second:
        raise op_error("diagonal", f"axis1 and axis2 are the same axis ({axis1}, {axis2})", plain)
    if plain.dtype.kind != "f":  # no gradient: numpy's (a copy; its own is a read-only view)
        return wrap(np.diagonal(plain, offset, first, second).copy())
    rows, columns = plain.shape[first], plain.shape[second]
    row, column = max(-offset, 0), max(offset, 0)
    steps = np.arange(max(0, min(rows - row, columns - column)))
    moved = moveaxis(value, (first, second), (-2, -1))
    flat = reshape(moved, moved.shape[:-2] + (rows * columns,))
    return getitem(flat, (Ellipsis, (row + steps) * columns + column + steps))


def trace(x, offset=0, axis1=0, axis2=1):
    """The sum of `diagonal(x, offset, axis1, axis2)`, over its last axis.

    Args:
        x: Tensor or array-like of rank 2 or more.
        offset: which diagonal (see `diagonal`).
        axis1: the first axis.
        axis2: the second axis.

    Returns:
        A Tensor of the other axes' shape; `sum`'s dtype (booleans and small
        integers give int32, uint32 when unsigned), as in Keras.

    Raises:
        ValueError: as `diagonal`.

    Example:
        >>> mk.ops.trace(np.arange(9).reshape(3, 3)).numpy()
        array(12)
    """
    value = array_of(x)
    if np.ndim(getval(value)) < 2:  # (named here, not as `diagonal`'s error)
        raise op_error("trace", "x needs 2 or more axes", value)
    return sum(diagonal(value, offset, axis1, axis2), axis=-1)
