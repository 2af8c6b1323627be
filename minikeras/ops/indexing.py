"""Picking values by position: `diag`, `diagflat`, `take_along_axis`.

Each is our primitive with its gradient beside it, and each gradient is
the other half of a pair: taking a diagonal and placing values on one,
taking values along an axis and adding values back along it. Each half's
gradient is the other, so gradients of gradients work. (autograd's `diag`
gives a square gradient for a non-square matrix, and it has no
`take_along_axis`.)
"""

import numpy as np
from autograd.extend import defvjp, primitive
from autograd.tracer import getval

from minikeras.engine.primitive import call_primitive
from minikeras.ops.axes import broadcast_to
from minikeras.ops.core import array_of, normalize_axis, op_error, value_of, wrap
from minikeras.ops.reordering import ravel

__all__ = ["diag", "diagflat", "take_along_axis"]


@primitive
def _diag(x, k):
    return np.diag(x, k)


@primitive
def _place_diagonal(values, k, shape):
    """Zeros of 2-d `shape` with `values` on the `k`-th diagonal."""
    out = np.zeros(shape, values.dtype)
    rows = np.arange(len(values)) + max(-k, 0)
    out[rows, rows + k] = values
    return out


def _diag_vjp(ans, x, k):
    if np.ndim(x) == 1:  # a matrix was made: its diagonal's gradient comes back
        return lambda g: _diag(g, k)
    return lambda g: _place_diagonal(g, k, np.shape(x))


defvjp(_diag, _diag_vjp)
defvjp(_place_diagonal, lambda ans, values, k, shape: lambda g: _diag(g, k))


@primitive
def _take_along(x, indices, axis):
    return np.take_along_axis(x, indices, axis)


@primitive
def _add_along(values, indices, axis, shape):
    """Zeros of `shape` with `values` added at `indices` along `axis` (repeats add up)."""
    out = np.zeros(shape, values.dtype)
    position = list(np.ix_(*(np.arange(size) for size in indices.shape)))
    position[axis] = indices
    np.add.at(out, tuple(position), values)
    return out


defvjp(_take_along, lambda ans, x, indices, axis: lambda g: _add_along(g, indices, axis, x.shape))
defvjp(
    _add_along, lambda ans, values, indices, axis, shape: lambda g: _take_along(g, indices, axis)
)


def diag(x, k=0):
    """The `k`-th diagonal of a matrix, or a square matrix with a vector on its `k`-th diagonal.

    Args:
        x: a 1-d or 2-d Tensor or array-like.
        k: the diagonal (0: the main one, positive: above it, negative: below it).

    Returns:
        A 1-d Tensor for a 2-d `x`; a 2-d Tensor for a 1-d `x`.

    Raises:
        ValueError: if `x` is not 1-d or 2-d.

    Example:
        >>> mk.ops.diag(np.array([[1, 2], [3, 4]], "int32")).numpy()
        array([1, 4], dtype=int32)
        >>> mk.ops.diag(np.array([1.0, 2.0], "float32"), k=1).numpy()
        array([[0., 1., 0.],
               [0., 0., 2.],
               [0., 0., 0.]], dtype=float32)
    """
    value = array_of(x)
    if np.ndim(value) not in (1, 2):
        raise op_error("diag", "x must have 1 or 2 axes", value)
    return wrap(call_primitive(_diag, value, int(k)))


def diagflat(x, k=0):
    """A square matrix with the flattened `x` on its `k`-th diagonal: `diag(ravel(x), k)`.

    Args:
        x: Tensor or array-like.
        k: the diagonal (0: the main one, positive: above it, negative: below it).

    Returns:
        A 2-d Tensor of side `x.size + abs(k)`.

    Example:
        >>> mk.ops.diagflat(np.array([[1, 2]], "int32")).numpy()
        array([[1, 0],
               [0, 2]], dtype=int32)
    """
    return diag(ravel(x), k)


def take_along_axis(x, indices, axis=None):
    """The values of `x` at `indices` along `axis`, matched position by position.

    `indices` has `x`'s number of axes; off `axis`, the two shapes broadcast
    together. Negative indices count from the end.

    Args:
        x: Tensor or array-like.
        indices: integer Tensor or array-like.
        axis: the axis to pick along, or None to pick from the flattened `x`
            (then `indices` is 1-d).

    Returns:
        A Tensor of `x`'s dtype, `indices`'s length along `axis`.

    Raises:
        ValueError: for non-integer indices, a bad axis, or shapes that do not fit.
        IndexError: for an index out of range, naming the range.

    Example:
        >>> x = np.array([[10, 30, 20], [60, 40, 50]], "int32")
        >>> mk.ops.take_along_axis(x, np.argsort(x, axis=1), axis=1).numpy()
        array([[10, 20, 30],
               [40, 50, 60]], dtype=int32)
    """
    value = array_of(x)
    index = np.asarray(getval(value_of(indices)))
    if index.dtype.kind not in "iu":
        raise ValueError(f"take_along_axis: indices must be integers, got dtype {index.dtype}")
    if axis is None:
        value, axis = value_of(ravel(value)), 0
    if np.ndim(index) != np.ndim(value):
        raise op_error(
            "take_along_axis", "indices must have as many axes as x (1 when axis is None)",
            value, index,
        )  # fmt: skip
    axis = normalize_axis("take_along_axis", axis, np.ndim(value), value, index)
    length = np.shape(value)[axis]
    if index.size and (index.min() < -length or index.max() >= length):
        raise IndexError(
            f"take_along_axis: indices must lie in [{-length}, {length}) along axis {axis}, "
            f"got {index.min()} to {index.max()}; x shape {np.shape(value)}"
        )
    try:
        off_axis = np.broadcast_shapes(*(_without(np.shape(v), axis) for v in (value, index)))
    except ValueError:
        raise op_error(
            "take_along_axis", f"shapes must broadcast off axis {axis}", value, index
        ) from None
    if _without(np.shape(value), axis) != off_axis:
        value = value_of(broadcast_to(value, _with(off_axis, axis, length)))
    if _without(index.shape, axis) != off_axis:
        index = np.broadcast_to(index, _with(off_axis, axis, index.shape[axis]))
    return wrap(call_primitive(_take_along, value, index % max(length, 1), axis))


def _without(shape, axis):
    return shape[:axis] + (1,) + shape[axis + 1 :]


def _with(shape, axis, size):
    return shape[:axis] + (size,) + shape[axis + 1 :]
