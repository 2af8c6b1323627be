"""Helpers of the reductions along axes: picking values at indices and putting them back,
and laying chosen axes out last.

`take_along(x, indices, axis)` is `np.take_along_axis` and `put_along` its
gradient, adding values back at their indices: `ops.indexing`'s pair of
primitives (each the other's gradient), called without the checks of the public
`take_along_axis`, as the sorting ops and the quantiles have made their indices
themselves. `to_last` and `from_last` move axes to the end and back, on arrays
and autograd boxes alike (their `transpose` and `reshape` methods).
"""

import numpy as np

from minikeras.engine.primitive import call_primitive
from minikeras.ops.indexing import _add_along, _take_along

__all__ = ["from_last", "put_along", "take_along", "to_last"]


def take_along(x, indices, axis):
    """The values of `x` at `indices` along `axis` (`np.take_along_axis`), differentiably.

    Args:
        x: an array or autograd box.
        indices: a non-negative integer array of `x`'s rank, of `x`'s shape
            except along `axis`.
        axis: a non-negative int.

    Returns:
        An array (or box) of `indices`'s shape and `x`'s dtype.

    Example:
        >>> x = np.array([[3.0, 1.0, 2.0]], "float32")
        >>> mk.ops.along_axis.take_along(x, np.array([[1, 2]]), 1)
        array([[1., 2.]], dtype=float32)
    """
    return call_primitive(_take_along, x, indices, axis)


def put_along(values, indices, axis, shape):
    """Zeros of `shape` with `values` added at `indices` along `axis` (repeats add up).

    Args:
        values: an array or box of `indices`'s shape.
        indices: an integer array, as for `take_along`.
        axis: a non-negative int.
        shape: the result's shape.

    Returns:
        An array (or box) of `shape` and `values`'s dtype.

    Example:
        >>> values = np.array([[1.0, 2.0]], "float32")
        >>> mk.ops.along_axis.put_along(values, np.array([[2, 2]]), 1, (1, 3))
        array([[0., 0., 3.]], dtype=float32)
    """
    return call_primitive(_add_along, values, indices, axis, tuple(shape))


def to_last(x, axes):
    """`x` with `axes` moved to the end and flattened into one axis, differentiably.

    Args:
        x: an array or autograd box.
        axes: a tuple of distinct axes (negative ones count from the end).

    Returns:
        The pair `(flat, moved_shape)`: `flat` of shape `rest + (n,)`, and the
        shape before flattening, for `from_last`.

    Example:
        >>> flat, moved = mk.ops.along_axis.to_last(np.ones((2, 3, 4)), (0, 2))
        >>> flat.shape, moved
        ((3, 8), (3, 2, 4))
    """
    shape = np.shape(x)
    axes = tuple(a % len(shape) for a in axes)
    rest = tuple(a for a in range(len(shape)) if a not in axes)
    moved = x.transpose(rest + tuple(axes)) if hasattr(x, "transpose") else np.asarray(x)
    moved_shape = tuple(shape[a] for a in rest + tuple(axes))
    return moved.reshape(moved_shape[: len(rest)] + (-1,)), moved_shape


def from_last(flat, moved_shape, axes):
    """The inverse of `to_last`: `flat` unflattened and its axes moved back.

    Args:
        flat: an array or box of `to_last`'s first result's shape.
        moved_shape: `to_last`'s second result.
        axes: the axes given to `to_last`.

    Returns:
        An array or box of the original shape.

    Example:
        >>> x = np.arange(24.0).reshape(2, 3, 4)
        >>> flat, moved = mk.ops.along_axis.to_last(x, (0, 2))
        >>> bool(np.all(mk.ops.along_axis.from_last(flat, moved, (0, 2)) == x))
        True
    """
    ndim = len(moved_shape)
    axes = tuple(a % ndim for a in axes)
    rest = tuple(a for a in range(ndim) if a not in axes)
    order = rest + tuple(axes)  # (moved axis i holds original axis order[i])
    return flat.reshape(moved_shape).transpose(tuple(np.argsort(order)))
