"""`tril` and `triu` (a matrix's lower or upper triangle) and `cumsum` (running sums).

Each with its gradient beside it: a triangle's gradient is the same triangle
of the incoming one; a running sum's is the running sum of the incoming
gradient taken from the other end. As in Keras, `cumsum` keeps its input's
dtype (booleans give int32), and `axis=None` sums the flattened values.
"""

import autograd.numpy as anp
import numpy as np
from autograd.extend import defvjp, primitive

from minikeras.ops.core import apply_unary, array_of
from minikeras.ops.creation import cast

__all__ = ["cumsum", "tril", "triu"]


@primitive
def _tril(x, k):
    return np.tril(x, k)


defvjp(_tril, lambda ans, x, k: lambda g: anp.tril(g, k))


@primitive
def _triu(x, k):
    return np.triu(x, k)


defvjp(_triu, lambda ans, x, k: lambda g: anp.triu(g, k))


@primitive
def _cumsum(x, axis):
    return np.cumsum(x, axis=axis, dtype=_sum_dtype(x.dtype))


def _cumsum_vjp(ans, x, axis):
    def vjp(g):
        # The running sum from the other end: the total, less what came before.
        if axis is None:  # (a flattened running sum: the gradient comes back in x's shape)
            return anp.reshape(anp.sum(g) - anp.cumsum(g) + g, anp.shape(x))
        return anp.sum(g, axis=axis, keepdims=True) - anp.cumsum(g, axis=axis) + g

    return vjp


defvjp(_cumsum, _cumsum_vjp)


def _sum_dtype(dtype):
    """Keras's: booleans are summed as int32; other dtypes keep theirs."""
    return np.int32 if dtype.kind == "b" else dtype


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
    return _triangle("tril", _tril, x, k)


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
    return _triangle("triu", _triu, x, k)


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
