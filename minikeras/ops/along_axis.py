"""Picking values along one axis by index, and the gradient that puts them back.

`take_along(x, indices, axis)` is `np.take_along_axis`; its gradient adds each
picked value's gradient back at the index it came from (`put_along`, repeats
adding up). Each is the other's gradient, so gradients of any order follow.
The sorting ops (`sort`, `top_k`) and the quantiles are built on them.
"""

import autograd.numpy as anp
import numpy as np
from autograd.extend import defvjp, primitive

from minikeras.engine.primitive import call_primitive

__all__ = ["from_last", "put_along", "take_along", "to_last"]


@primitive
def _take_along(x, indices, axis):
    return np.take_along_axis(x, indices, axis)


@primitive
def _put_along(values, indices, axis, shape):
    out = np.zeros(shape, values.dtype)
    # Every position of `indices` spelled out, `axis` replaced by the index: `add.at`
    # sums repeated indices, which a plain assignment would overwrite.
    where = list(np.indices(indices.shape, sparse=True))
    where[axis] = indices
    np.add.at(out, tuple(where), values)
    return out


defvjp(
    _take_along,
    lambda ans, x, indices, axis: lambda g: _put_along(g, indices, axis, np.shape(x)),
)
defvjp(
    _put_along,
    lambda ans, values, indices, axis, shape: lambda g: _take_along(g, indices, axis),
)


def take_along(x, indices, axis):
    """The values of `x` at `indices` along `axis` (`np.take_along_axis`), differentiably.

    Args:
        x: an array or autograd box.
        indices: an integer array of `x`'s rank, of `x`'s shape except along
            `axis`.
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
    return call_primitive(_put_along, values, indices, axis, tuple(shape))


def to_last(x, axes):
    """`x` with `axes` moved to the end and flattened into one axis, differentiably.

    Args:
        x: an array or autograd box.
        axes: a tuple of distinct non-negative axes.

    Returns:
        The pair `(flat, moved_shape)`: `flat` of shape `rest + (n,)`, and the
        shape before flattening, for `from_last`.

    Example:
        >>> flat, moved = mk.ops.along_axis.to_last(np.ones((2, 3, 4)), (0, 2))
        >>> flat.shape, moved
        ((3, 8), (3, 2, 4))
    """
    ndim = anp.ndim(x)
    moved = anp.moveaxis(x, axes, tuple(range(ndim - len(axes), ndim)))
    moved_shape = anp.shape(moved)
    return anp.reshape(moved, moved_shape[: ndim - len(axes)] + (-1,)), moved_shape


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
    return anp.moveaxis(anp.reshape(flat, moved_shape), tuple(range(ndim - len(axes), ndim)), axes)
