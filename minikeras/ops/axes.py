"""Moving and repeating axes: `broadcast_to`, `repeat`, `moveaxis`, `swapaxes`.

Each with its gradient beside it, written with autograd's numpy (so a
gradient of a gradient can be taken): a broadcast's gradient sums back over
the broadcast axes, a repeat's sums each group of copies, and moving axes
moves them back.
"""

import autograd.numpy as anp
import numpy as np
from autograd.extend import defvjp, primitive

from minikeras.engine.broadcast import unbroadcast
from minikeras.ops.core import apply_unary, array_of

__all__ = ["broadcast_to", "moveaxis", "repeat", "swapaxes"]


@primitive
def _broadcast_to(x, shape):
    return np.array(np.broadcast_to(x, shape))  # (a copy: a view would be read-only)


defvjp(_broadcast_to, lambda ans, x, shape: lambda g: unbroadcast(g, x))


@primitive
def _repeat(x, repeats, axis):
    return np.repeat(x, repeats, axis=axis)


def _repeat_vjp(ans, x, repeats, axis):
    shape = np.shape(x)

    def vjp(g):
        if axis is None:  # (flattened: each value's copies sit side by side)
            return anp.reshape(anp.sum(anp.reshape(g, (-1, repeats)), axis=1), shape)
        where = axis % len(shape)
        split = (*shape[:where], shape[where], repeats, *shape[where + 1 :])
        return anp.sum(anp.reshape(g, split), axis=where + 1)

    return vjp


defvjp(_repeat, _repeat_vjp)


@primitive
def _moveaxis(x, source, destination):
    return np.moveaxis(x, source, destination)


defvjp(
    _moveaxis, lambda ans, x, source, destination: lambda g: anp.moveaxis(g, destination, source)
)


def broadcast_to(x, shape):
    """`x` broadcast to `shape`, as numpy broadcasts (a copy, not a view).

    Args:
        x: Tensor or array-like.
        shape: the target shape.

    Returns:
        A Tensor of `shape`.

    Raises:
        ValueError: if `x` does not broadcast to `shape`.

    Example:
        >>> mk.ops.broadcast_to([1.0, 2.0], (2, 2)).numpy()
        array([[1., 2.],
               [1., 2.]], dtype=float32)
    """
    return apply_unary("broadcast_to", _broadcast_to, array_of(x), tuple(shape))


def repeat(x, repeats, axis=None):
    """Each value repeated `repeats` times along `axis` (of the flattened values if None).

    Args:
        x: Tensor or array-like.
        repeats: a positive int (a list of counts is not supported here).
        axis: the axis, or None to repeat the flattened values.

    Returns:
        A Tensor.

    Raises:
        ValueError: for `repeats` that is not a positive int, or a bad axis.

    Example:
        >>> mk.ops.repeat(np.array([[1, 2]], "int32"), 2, axis=1).numpy()
        array([[1, 1, 2, 2]], dtype=int32)
    """
    if isinstance(repeats, bool) or not isinstance(repeats, (int, np.integer)) or repeats < 1:
        raise ValueError(f"repeat: repeats must be a positive int, got {repeats!r}")
    return apply_unary("repeat", _repeat, array_of(x), int(repeats), axis)


def moveaxis(x, source, destination):
    """`x` with axis (or axes) `source` moved to `destination`, the others in order.

    Args:
        x: Tensor or array-like.
        source: an int or a tuple of ints.
        destination: an int or a tuple of ints, as many as `source`.

    Returns:
        A Tensor.

    Raises:
        ValueError: for axes out of range or not matching in number.

    Example:
        >>> mk.ops.moveaxis(np.ones((2, 3, 4)), 0, -1).shape
        (3, 4, 2)
    """
    return apply_unary("moveaxis", _moveaxis, array_of(x), source, destination)


def swapaxes(x, axis1, axis2):
    """`x` with two axes exchanged.

    Args:
        x: Tensor or array-like.
        axis1: an axis.
        axis2: another axis.

    Returns:
        A Tensor.

    Raises:
        ValueError: for an axis out of range.

    Example:
        >>> mk.ops.swapaxes(np.ones((2, 3, 4)), 0, 2).shape
        (4, 3, 2)
    """
    ndim = np.ndim(array_of(x))
    order = list(range(ndim))
    try:
        order[axis1], order[axis2] = order[axis2], order[axis1]
    except IndexError:
        raise ValueError(
            f"swapaxes: axes {axis1} and {axis2} for an array of {ndim} axes"
        ) from None
    return moveaxis(x, tuple(range(ndim)), tuple(order))
