"""Sorting and finding: `sort`, `argsort`, `argpartition`, `top_k`, `in_top_k`, `argmax`, `argmin`.

A sort moves values; its gradient moves each value's gradient back to where
the value came from (`along_axis.put_along` at the sorting permutation).
Indices are int32, as in Keras, and ties keep their order (a stable sort):
`top_k` puts the lower index first among equal values, as Keras's jax backend
does.
"""

import autograd.numpy as anp
import numpy as np
from autograd.extend import defvjp, primitive
from autograd.tracer import getval

from minikeras.ops.along_axis import put_along, take_along
from minikeras.ops.core import apply_unary, array_of, normalize_axis, op_error, value_of, wrap
from minikeras.ops.reduction import _norm_axis

__all__ = ["argmax", "argmin", "argpartition", "argsort", "in_top_k", "sort", "top_k"]


@primitive
def _sort(x, axis):
    return np.sort(x, axis=axis, kind="stable")


def _sort_vjp(ans, x, axis):
    order = np.argsort(getval(x), axis=axis, kind="stable")
    return lambda g: put_along(g, order, axis, np.shape(x))


defvjp(_sort, _sort_vjp)


@primitive
def _partition(x, kth):
    """`x` partitioned along its last axis: the values at `kth` are those of a sort."""
    return np.partition(x, kth, axis=-1)


def _partition_vjp(ans, x, kth):
    order = np.argpartition(getval(x), kth, axis=-1)
    return lambda g: put_along(g, order, np.ndim(x) - 1, np.shape(x))


defvjp(_partition, _partition_vjp)


def _axis(op, value, axis):
    """`axis` checked against the rank of `value` and made non-negative."""
    return normalize_axis(op, axis, np.ndim(getval(value)), value)


def sort(x, axis=-1):
    """The values of `x` sorted in ascending order along `axis`.

    Its gradient goes back to each value's place in `x`.

    Args:
        x: Tensor or array-like.
        axis: the axis to sort along, or None to sort the flattened values.

    Returns:
        A Tensor of `x`'s dtype.

    Raises:
        ValueError: if `axis` is out of range.

    Example:
        >>> mk.ops.sort([[3.0, 1.0, 2.0]]).numpy()
        array([[1., 2., 3.]], dtype=float32)
    """
    value = array_of(x)
    if axis is None:
        value, axis = anp.reshape(value, (-1,)), 0
    axis = _axis("sort", value, axis)
    if getval(value).dtype.kind != "f":
        return wrap(np.sort(getval(value), axis=axis, kind="stable"))
    return apply_unary("sort", _sort, value, axis)


def argsort(x, axis=-1):
    """The int32 indices that sort `x` along `axis` (a stable sort; not differentiable).

    Args:
        x: Tensor or array-like.
        axis: the axis, or None for the flattened values.

    Returns:
        An int32 Tensor of `x`'s shape (flattened if `axis` is None).

    Raises:
        ValueError: if `axis` is out of range.

    Example:
        >>> mk.ops.argsort([3.0, 1.0, 2.0]).numpy()
        array([1, 2, 0], dtype=int32)
    """
    value = getval(array_of(x))
    if axis is None:
        value, axis = value.reshape(-1), 0
    axis = _axis("argsort", value, axis)
    return wrap(np.argsort(value, axis=axis, kind="stable").astype(np.int32))


def argpartition(x, kth, axis=-1):
    """int32 indices that put the `kth` smallest value of `x` at position `kth` along `axis`.

    Smaller values come before it and larger after, each part in no
    particular order (which may differ from Keras's backends; the partition
    property is the same). Not differentiable.

    Args:
        x: Tensor or array-like.
        kth: an int (or a sequence of ints) position along `axis`.
        axis: the axis.

    Returns:
        An int32 Tensor of `x`'s shape.

    Raises:
        ValueError: if `kth` or `axis` is out of range.

    Example:
        >>> x = np.array([3.0, 4.0, 2.0, 1.0], "float32")
        >>> index = mk.ops.argpartition(x, 1).numpy()
        >>> index.dtype, float(x[index[1]])
        (dtype('int32'), 2.0)
    """
    value = getval(array_of(x))
    axis = _axis("argpartition", value, axis)
    return apply_unary("argpartition", _int32_partition, value, kth, axis)


def _int32_partition(value, kth, axis):
    return np.argpartition(value, kth, axis=axis).astype(np.int32)


def _top_indices(value, k):
    """int32 indices of the `k` largest values along the last axis, largest first.

    Stable among ties (the lower index first). A few of many values (`k` well
    below the axis, no nan): a partition finds the `k`-th largest, the values
    above it and the first of those equal to it are kept, and only those `k`
    are sorted. Otherwise a stable sort of the whole axis.
    """
    n = value.shape[-1]
    if 4 * k > n or k == 0 or (value.dtype.kind == "f" and np.isnan(value).any()):
        return _descending(value)[..., :k].astype(np.int32)
    rows = value.reshape(-1, n)
    threshold = np.partition(rows, n - k, axis=-1)[:, n - k : n - k + 1]
    above, equal = rows > threshold, rows == threshold
    # Of the values equal to the threshold, as many as are missing, lowest index first.
    missing = k - above.sum(axis=-1, keepdims=True)
    kept = above | (equal & (np.cumsum(equal, axis=-1) <= missing))
    chosen = np.nonzero(kept)[1].reshape(-1, k)  # (k per row, in index order)
    order = _descending(np.take_along_axis(rows, chosen, axis=-1))
    return (
        np.take_along_axis(chosen, order, axis=-1).reshape(value.shape[:-1] + (k,)).astype(np.int32)
    )


def _descending(value):
    """Indices sorting the last axis largest first, the lower index first among ties.

    An ascending stable sort of the reversed values, read from the end (nan
    counts as the largest).
    """
    n = value.shape[-1]
    return n - 1 - np.flip(np.argsort(np.flip(value, -1), axis=-1, kind="stable"), -1)


def top_k(x, k, sorted=True):  # noqa: A002 (Keras's name)
    """The `k` largest values along the last axis and their int32 indices.

    The values carry the gradient back to where they came from. Results are
    always sorted, largest first (`sorted=False` is accepted, as Keras's jax
    backend accepts it, and changes nothing); equal values keep the lower
    index first.

    Args:
        x: Tensor or array-like of rank 1 or more.
        k: how many values, at most the size of the last axis.
        sorted: accepted for Keras's signature; the results are sorted anyway.

    Returns:
        A tuple `(values, indices)`: Tensors of shape `x.shape[:-1] + (k,)`,
        the values of `x`'s dtype, the indices int32.

    Raises:
        ValueError: if `x` is 0-d or `k` is not in `[0, x.shape[-1]]`.

    Example:
        >>> values, indices = mk.ops.top_k([1.0, 4.0, 2.0, 4.0], k=3)
        >>> values.numpy(), indices.numpy()
        (array([4., 4., 2.], dtype=float32), array([1, 3, 2], dtype=int32))
    """
    value = array_of(x)
    plain = getval(value)
    if plain.ndim == 0:
        raise op_error("top_k", "x needs 1 or more axes", plain)
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 0 <= k <= plain.shape[-1]:
        raise op_error("top_k", f"k must be an int in [0, {plain.shape[-1]}], got {k!r}", plain)
    indices = _top_indices(plain, int(k))
    if plain.dtype.kind != "f":
        return wrap(np.take_along_axis(plain, indices, -1)), wrap(indices)
    return wrap(take_along(value, indices, plain.ndim - 1)), wrap(indices)


def in_top_k(targets, predictions, k):
    """Whether each target's prediction is among the `k` largest of its row.

    As in Keras: a target counts as in the top `k` when fewer than `k`
    predictions of its row are strictly larger (ties count in), and a nan
    prediction of the target is never in.

    Args:
        targets: integer Tensor or array-like of shape `(batch,)`, class ids.
        predictions: Tensor or array-like of shape `(batch, classes)`.
        k: an int.

    Returns:
        A bool Tensor of shape `(batch,)`.

    Raises:
        ValueError: if the shapes do not fit or a target is out of range.

    Example:
        >>> predictions = np.array([[0.1, 0.7, 0.2], [0.5, 0.3, 0.2]], "float32")
        >>> mk.ops.in_top_k(np.array([2, 1]), predictions, k=2).numpy()
        array([ True,  True])
    """
    target = np.asarray(getval(value_of(targets)))
    scores = np.asarray(getval(value_of(predictions)))
    if scores.ndim != 2 or target.shape != scores.shape[:1]:
        raise op_error("in_top_k", "expected targets (batch,) and predictions (batch, classes)",
                       target, scores)  # fmt: skip
    if target.dtype.kind not in "iu" or np.any((target < 0) | (target >= scores.shape[1])):
        raise op_error("in_top_k", f"targets must be integer ids in [0, {scores.shape[1]})",
                       target)  # fmt: skip
    chosen = np.take_along_axis(scores, target[:, None].astype(np.intp), axis=1)
    if scores.dtype.kind == "f":
        chosen = np.where(np.isnan(chosen), -np.inf, chosen)
    rank = 1 + np.sum(scores > chosen, axis=1)
    return wrap(rank <= k)


def _int32_index(value, find, axis, keepdims):
    """`find` (np.argmax or np.argmin) of a plain value, as an int32 array."""
    return np.asarray(find(getval(value), axis=axis, keepdims=keepdims), dtype=np.int32)


def argmax(x, axis=None, keepdims=False):
    """Index of the largest element along `axis` (not differentiable).

    The index is int32, as in Keras. Ties go to the first index, `-0.0` and
    `0.0` included (Keras's torch backend does the same; its jax and numpy
    backends count `-0.0` as the smaller).

    Args:
        x: Tensor or array-like.
        axis: None (flattened) or an int.
        keepdims: keep the reduced axis with size 1.

    Returns:
        An int32 Tensor.

    Raises:
        ValueError: if the axis is out of range.

    Example:
        >>> mk.ops.argmax([[1.0, 5.0], [3.0, 2.0]], axis=1).numpy()
        array([1, 0], dtype=int32)
    """
    value = array_of(x)
    axis = _norm_axis("argmax", value, axis)
    return apply_unary("argmax", _int32_index, value, np.argmax, axis=axis, keepdims=keepdims)


def argmin(x, axis=None, keepdims=False):
    """Index of the smallest element along `axis` (not differentiable).

    The index is int32, as in Keras. Ties go to the first index, `-0.0` and
    `0.0` included (Keras's torch backend does the same; its jax and numpy
    backends count `-0.0` as the smaller).

    Args:
        x: Tensor or array-like.
        axis: None (flattened) or an int.
        keepdims: keep the reduced axis with size 1.

    Returns:
        An int32 Tensor.

    Raises:
        ValueError: if the axis is out of range.

    Example:
        >>> mk.ops.argmin([[1.0, 5.0], [3.0, 2.0]], axis=1).numpy()
        array([0, 1], dtype=int32)
    """
    value = array_of(x)
    axis = _norm_axis("argmin", value, axis)
    return apply_unary("argmin", _int32_index, value, np.argmin, axis=axis, keepdims=keepdims)
