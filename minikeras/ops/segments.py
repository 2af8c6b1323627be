"""Segment reductions: `segment_sum`, `segment_max`, `segment_min`, `segment_prod`.

Row `i` of `data` belongs to segment `segment_ids[i]`; each op reduces the
rows of every segment into one. Ids outside `[0, num_segments)` are dropped,
as in Keras; an empty segment holds the reduction's identity (0, the dtype's
lowest or highest value, 1). Results keep `data`'s dtype (booleans: a sum is
their `any`, a product their `all`, as Keras's torch backend gives).

The gradient of a segment sum picks each row's segment of the incoming
gradient (`_pick`), and that of a pick is a segment sum: a pair, so any order
of gradient follows. The extremes send theirs to the rows that reached them,
shared among ties; a product sends each row the product of the others
(exact with zeros, as `prod`'s).
"""

import autograd.numpy as anp
import numpy as np
from autograd.extend import defvjp, primitive
from autograd.tracer import getval

from minikeras.engine.primitive import call_primitive
from minikeras.ops.along_axis import from_last, to_last
from minikeras.ops.core import array_of, op_error, value_of, wrap
from minikeras.ops.gather import scatter_rows
from minikeras.ops.product_reductions import _exclusive_cumprod

__all__ = ["segment_max", "segment_min", "segment_prod", "segment_sum"]


@primitive
def _segment_sum(data, ids, count):
    return scatter_rows(data, ids, count)


@primitive
def _pick(values, ids):
    return np.take(values, ids, axis=0)


defvjp(_segment_sum, lambda ans, data, ids, count: lambda g: _pick(g, ids))
defvjp(_pick, lambda ans, values, ids: lambda g: _segment_sum(g, ids, np.shape(values)[0]))


def _lowest(dtype):
    if dtype == np.bool_:
        return False
    return -np.inf if dtype.kind == "f" else np.iinfo(dtype).min


def _highest(dtype):
    if dtype == np.bool_:
        return True
    return np.inf if dtype.kind == "f" else np.iinfo(dtype).max


@primitive
def _segment_extreme(data, ids, count, largest):
    fill = (_lowest if largest else _highest)(data.dtype)
    out = np.full((count,) + data.shape[1:], fill, data.dtype)
    (np.maximum if largest else np.minimum).at(out, ids, data)
    return out


def _segment_extreme_vjp(ans, data, ids, count, largest):
    reached = getval(data) == np.take(getval(ans), ids, axis=0)
    ties = scatter_rows(reached.astype(getval(data).dtype), ids, count)
    share = reached / np.take(np.maximum(ties, 1), ids, axis=0)
    return lambda g: _pick(g, ids) * share.astype(getval(data).dtype)


defvjp(_segment_extreme, _segment_extreme_vjp)


@primitive
def _segment_prod(data, ids, count):
    out = np.ones((count,) + data.shape[1:], data.dtype)
    np.multiply.at(out, ids, data)
    return out


def _segment_prod_vjp(ans, data, ids, count):
    """Each row gets the product of the other rows of its segment.

    Without a zero that is `ans / data`. With zeros, the rows are laid out
    one segment per row of a table (padded with ones), and each gets the
    product of those before it times those after it, as `prod`'s gradient
    does: exact with zeros, to every order.
    """
    if np.all(getval(data)):
        return lambda g: _pick(g * ans, ids) / data
    rows = len(ids)
    order = np.argsort(ids, kind="stable")
    sizes = np.bincount(ids, minlength=count)
    starts = np.cumsum(sizes) - sizes
    slot = np.empty(rows, np.intp)
    slot[order] = np.arange(rows) - starts[ids[order]]  # each row's place in its segment
    width = int(sizes.max())
    table = np.full((count, width), rows)  # (rows: the padding row of ones)
    table[ids, slot] = np.arange(rows)
    row_shape = np.shape(data)[1:]
    ones = np.ones((1,) + row_shape, getval(data).dtype)
    laid_out = _pick(anp.concatenate([data, ones]), table.reshape(-1))
    flat, moved_shape = to_last(anp.reshape(laid_out, (count, width) + row_shape), (1,))
    others = _exclusive_cumprod(flat) * _exclusive_cumprod(flat, reverse=True)
    others = anp.reshape(from_last(others, moved_shape, (1,)), (count * width,) + row_shape)
    others = _pick(others, ids * width + slot)
    return lambda g: _pick(g, ids) * others


defvjp(_segment_prod, _segment_prod_vjp)


def _segments(op, data, segment_ids, num_segments):
    """The data, its valid ids and the number of segments, checked."""
    value = array_of(data)
    plain = getval(value)
    ids = np.asarray(getval(value_of(segment_ids)))
    if ids.dtype.kind not in "iu" or ids.ndim != 1 or plain.ndim == 0:
        raise op_error(op, "segment_ids must be 1-D integers, one per row of data", plain, ids)
    if ids.shape[0] != plain.shape[0]:
        raise op_error(op, "segment_ids must have one id per row of data", plain, ids)
    if num_segments is None:
        num_segments = int(ids.max()) + 1 if ids.size else 0
    if isinstance(num_segments, bool) or not isinstance(num_segments, (int, np.integer)):
        raise TypeError(f"{op}: num_segments must be an int or None, got {num_segments!r}")
    if num_segments < 0:
        raise ValueError(f"{op}: num_segments must be 0 or more, got {num_segments}")
    valid = (ids >= 0) & (ids < num_segments)
    if not np.all(valid):  # (rows of other segments are dropped, as in Keras)
        value, ids = value[valid], ids[valid]
    return value, ids.astype(np.intp), int(num_segments)


def _reduce(op, primitive_op, data, segment_ids, num_segments, *extra):
    value, ids, count = _segments(op, data, segment_ids, num_segments)
    if getval(value).dtype.kind != "f":  # no gradient: the forward alone
        return wrap(primitive_op.fun(getval(value), ids, count, *extra))
    return wrap(call_primitive(primitive_op, value, ids, count, *extra))


def segment_sum(data, segment_ids, num_segments=None, sorted=False):  # noqa: A002
    """Sums of the rows of `data` in each segment.

    Args:
        data: Tensor or array-like; its first axis is split into segments.
        segment_ids: 1-D integers, one per row of `data`; rows with an id
            outside `[0, num_segments)` are dropped.
        num_segments: the number of segments, or None for `max(segment_ids) + 1`.
        sorted: accepted for Keras's signature (whether the ids are sorted);
            the result does not depend on it.

    Returns:
        A Tensor of shape `(num_segments,) + data.shape[1:]` and `data`'s
        dtype; empty segments hold 0.

    Raises:
        ValueError: if `segment_ids` is not one id per row.
        TypeError: if `num_segments` is not an int or None.

    Example:
        >>> mk.ops.segment_sum([1.0, 2.0, 3.0], [0, 0, 2]).numpy()
        array([3., 0., 3.], dtype=float32)
    """
    if getval(array_of(data)).dtype == np.bool_:
        return segment_max(data, segment_ids, num_segments, sorted)
    return _reduce("segment_sum", _segment_sum, data, segment_ids, num_segments)


def segment_max(data, segment_ids, num_segments=None, sorted=False):  # noqa: A002
    """Largest row values in each segment; tied rows share the gradient.

    Args:
        data: Tensor or array-like.
        segment_ids: 1-D integers, one per row of `data` (see `segment_sum`).
        num_segments: the number of segments, or None for `max(segment_ids) + 1`.
        sorted: accepted for Keras's signature.

    Returns:
        A Tensor of `data`'s dtype; empty segments hold `-inf` (the lowest
        integer, or False).

    Raises:
        ValueError: if `segment_ids` is not one id per row.
        TypeError: if `num_segments` is not an int or None.

    Example:
        >>> mk.ops.segment_max([1.0, 5.0, 3.0], [0, 0, 1]).numpy()
        array([5., 3.], dtype=float32)
    """
    return _reduce("segment_max", _segment_extreme, data, segment_ids, num_segments, True)


def segment_min(data, segment_ids, num_segments=None, sorted=False):  # noqa: A002
    """Smallest row values in each segment; tied rows share the gradient.

    Args:
        data: Tensor or array-like.
        segment_ids: 1-D integers, one per row of `data` (see `segment_sum`).
        num_segments: the number of segments, or None for `max(segment_ids) + 1`.
        sorted: accepted for Keras's signature.

    Returns:
        A Tensor of `data`'s dtype; empty segments hold `inf` (the highest
        integer, or True).

    Raises:
        ValueError: if `segment_ids` is not one id per row.
        TypeError: if `num_segments` is not an int or None.

    Example:
        >>> mk.ops.segment_min([1.0, 5.0, 3.0], [0, 0, 1]).numpy()
        array([1., 3.], dtype=float32)
    """
    return _reduce("segment_min", _segment_extreme, data, segment_ids, num_segments, False)


def segment_prod(data, segment_ids, num_segments=None, sorted=False):  # noqa: A002
    """Products of the rows of `data` in each segment.

    The gradient is exact where a segment holds zeros, to every order.

    Args:
        data: Tensor or array-like.
        segment_ids: 1-D integers, one per row of `data` (see `segment_sum`).
        num_segments: the number of segments, or None for `max(segment_ids) + 1`.
        sorted: accepted for Keras's signature.

    Returns:
        A Tensor of `data`'s dtype; empty segments hold 1.

    Raises:
        ValueError: if `segment_ids` is not one id per row.
        TypeError: if `num_segments` is not an int or None.

    Example:
        >>> mk.ops.segment_prod([2.0, 3.0, 4.0], [0, 0, 1]).numpy()
        array([6., 4.], dtype=float32)
    """
    if getval(array_of(data)).dtype == np.bool_:
        return segment_min(data, segment_ids, num_segments, sorted)
    return _reduce("segment_prod", _segment_prod, data, segment_ids, num_segments)
