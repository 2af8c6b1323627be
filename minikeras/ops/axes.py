"""Along axes: `broadcast_to`, `repeat`, `moveaxis`, `swapaxes`, the triangles `tril`
and `triu`, and the running sum `cumsum`.

autograd's own primitives where it has them, with its gradients: a repeat's
sums each group of copies, moving axes moves them back, a triangle's is the
same triangle of the incoming gradient. Two are ours: `broadcast_to`, which
copies (numpy's broadcast is a read-only view) and sums its gradient back
over the broadcast axes, and `cumsum`, which keeps integer dtypes as Keras
does (numpy sums them in int64; booleans give int32), its gradient the
running sum from the other end. `axis=None` sums the flattened values.
"""

import autograd.numpy as anp
import numpy as np
from autograd.extend import defvjp, primitive

from minikeras.engine.broadcast import unbroadcast
from minikeras.ops.core import apply_unary, array_of
from minikeras.ops.creation import cast

__all__ = ["broadcast_to", "cumsum", "moveaxis", "repeat", "swapaxes", "tril", "triu"]


@primitive
def _broadcast_to(x, shape):
    return np.array(np.broadcast_to(x, shape))  # (a copy: a view would be read-only)


defvjp(_broadcast_to, lambda ans, x, shape: lambda g: unbroadcast(g, x))


# Ours, not autograd's: numpy sums integers in int64 (Keras keeps their dtype, and
# gives booleans int32).
@primitive
def _cumsum(x, axis):
    return np.cumsum(x, axis=axis, dtype=np.int32 if x.dtype == np.bool_ else x.dtype)


def _cumsum_vjp(ans, x, axis):
    def vjp(g):
        # The running sum from the other end: the total, less what came before.
        if axis is None:  # (a flattened running sum: the gradient comes back in x's shape)
            return anp.reshape(anp.sum(g) - anp.cumsum(g) + g, anp.shape(x))
        return anp.sum(g, axis=axis, keepdims=True) - anp.cumsum(g, axis=axis) + g

    return vjp


defvjp(_cumsum, _cumsum_vjp)


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
    return apply_unary("repeat", anp.repeat, array_of(x), int(repeats), axis)


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
    return apply_unary("moveaxis", anp.moveaxis, array_of(x), source, destination)


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


def tril(x, k=0):
    """The lower triangle of the last two axes; the rest is zero.

    Args:
        x: Tensor or array-like of rank 2 or more.
        k: the diagonal above which values are zeroed (0: the main one,
            -1: below it, 1: above it).

    Returns:
        A Tensor of `x`'s shape and dtype.

    Raises:
        ValueError: if `x` has fewer than 2 axes.

    Example:
        >>> mk.ops.tril(np.ones((3, 3), "float32")).numpy()
        array([[1., 0., 0.],
               [1., 1., 0.],
               [1., 1., 1.]], dtype=float32)
    """
    return _triangle("tril", anp.tril, x, k)


def triu(x, k=0):
    """The upper triangle of the last two axes; the rest is zero.

    Args:
        x: Tensor or array-like of rank 2 or more.
        k: the diagonal below which values are zeroed (0: the main one,
            1: above it, -1: below it).

    Returns:
        A Tensor of `x`'s shape and dtype.

    Raises:
        ValueError: if `x` has fewer than 2 axes.

    Example:
        >>> mk.ops.triu(np.ones((2, 3), "float32"), k=1).numpy()
        array([[0., 1., 1.],
               [0., 0., 1.]], dtype=float32)
    """
    return _triangle("triu", anp.triu, x, k)


def _triangle(op, function, x, k):
    value = array_of(x)
    if np.ndim(value) < 2:
        raise ValueError(f"{op}: x needs 2 or more axes, got shape {np.shape(value)}")
    return apply_unary(op, function, value, int(k))


def cumsum(x, axis=None, dtype=None):
    """Running sums along `axis` (of the flattened values when `axis` is None).

    Args:
        x: Tensor or array-like.
        axis: the axis, or None to sum the flattened values.
        dtype: the result's dtype, or None: `x`'s (int32 for booleans, as
            in Keras).

    Returns:
        A Tensor.

    Raises:
        ValueError: if `axis` is out of range.

    Example:
        >>> mk.ops.cumsum(np.array([[1, 2], [3, 4]], "int32"), axis=1).numpy()
        array([[1, 3],
               [3, 7]], dtype=int32)
    """
    value = array_of(x) if dtype is None else array_of(cast(x, dtype))
    return apply_unary("cumsum", _cumsum, value, axis)
