"""Counting and binning: `searchsorted`, `digitize`, `bincount`, `histogram`, `unique`.

None of these is differentiable, except `bincount` in its `weights` (a
segment sum of the weights by value). Indices and counts are int32, as in
Keras. `unique` and `bincount` give results whose length depends on the
values: on symbolic tensors `unique` needs a fixed `size`, and `bincount` is
refused (Keras records nodes of unknown length).
"""

import numpy as np

from minikeras import config
from minikeras.engine.tensor import getval
from minikeras.ops.core import array_of, op_error, wrap
from minikeras.ops.segments import segment_sum
from minikeras.ops.shape import reshape
from minikeras.ops.symbolic import SymbolicValueError

__all__ = ["bincount", "digitize", "histogram", "searchsorted", "unique"]


def _plain(x):
    return np.asarray(getval(array_of(x)))


def searchsorted(sorted_sequence, values, side="left"):
    """Where each of `values` would go in `sorted_sequence` to keep it sorted.

    Args:
        sorted_sequence: 1-D Tensor or array-like, sorted ascending.
        values: Tensor or array-like of any shape.
        side: "left" (the first such place) or "right" (the last).

    Returns:
        An int32 Tensor of `values`'s shape.

    Raises:
        ValueError: if `sorted_sequence` is not 1-D or `side` is neither.

    Example:
        >>> mk.ops.searchsorted([1.0, 3.0, 5.0], [3.0, 4.0]).numpy()
        array([1, 2], dtype=int32)
    """
    sequence, points = _plain(sorted_sequence), _plain(values)
    if sequence.ndim != 1:
        raise op_error("searchsorted", "sorted_sequence must be 1-D", sequence)
    if side not in ("left", "right"):
        raise ValueError(f"searchsorted: side must be 'left' or 'right', got {side!r}")
    return wrap(np.searchsorted(sequence, points, side=side).astype(np.int32))


def digitize(x, bins):
    """The index of the bin each value of `x` falls in: `bins[i-1] <= x < bins[i]`.

    Args:
        x: Tensor or array-like.
        bins: 1-D, increasing or decreasing bin edges.

    Returns:
        An int32 Tensor of `x`'s shape: 0 below the first edge,
        `len(bins)` above the last.

    Raises:
        ValueError: if `bins` is not 1-D and monotonic.

    Example:
        >>> mk.ops.digitize([0.0, 3.0, 6.0], [1.0, 3.0, 5.0]).numpy()
        array([0, 2, 3], dtype=int32)
    """
    value, edges = _plain(x), _plain(bins)
    try:
        return wrap(np.digitize(value, edges).astype(np.int32))
    except ValueError as error:
        raise op_error("digitize", f"bins must be 1-D and monotonic ({error})", edges) from None


def bincount(x, weights=None, minlength=0, sparse=False):
    """How often each non-negative integer occurs in `x` (or the sum of its weights).

    Args:
        x: 1-D non-negative integers, or 2-D (one count per row).
        weights: None, or weights of `x`'s shape: each occurrence adds its
            weight instead of 1. Gradients flow to them.
        minlength: the least length of the counts.
        sparse: must be False (minikeras has no sparse tensors).

    Returns:
        A Tensor of length `max(max(x) + 1, minlength)` along its last axis:
        int32 counts, or sums in the weights' dtype.

    Raises:
        TypeError: on a symbolic tensor: the length depends on the values
            (where Keras records a node of unknown length).
        ValueError: for negative or non-integer `x`, a rank above 2, weights
            of another shape, or `sparse=True`.

    Example:
        >>> mk.ops.bincount([0, 1, 1, 3]).numpy()
        array([1, 2, 0, 1], dtype=int32)
        >>> mk.ops.bincount([0, 1, 1], weights=[0.5, 1.0, 2.0]).numpy()
        array([0.5, 3. ], dtype=float32)
    """
    if sparse:
        raise ValueError("bincount: sparse=True is not supported (minikeras has no sparse tensors)")
    try:
        value = _plain(x)
    except SymbolicValueError:
        raise TypeError(
            "bincount: needs values, not a symbolic tensor (an Input): its length depends "
            "on them (Keras records a node of unknown length; call it on data instead)"
        ) from None
    if value.dtype.kind not in "iub" or value.ndim not in (1, 2) or np.any(value < 0):
        raise op_error("bincount", "x must be 1-D or 2-D non-negative integers", value)
    length = max(int(value.max()) + 1 if value.size else 0, int(minlength))
    rows = value[None] if value.ndim == 1 else value  # (one row; an empty x too)
    ids = (rows.astype(np.intp) + length * np.arange(rows.shape[0])[:, None]).reshape(-1)
    if weights is None:
        counts = np.bincount(ids, minlength=length * rows.shape[0]).astype(np.int32)
        return wrap(counts.reshape(value.shape[:-1] + (length,)))
    weight = array_of(weights)
    if np.shape(getval(weight)) != value.shape:
        raise op_error("bincount", "weights must have x's shape", value, getval(weight))
    if getval(weight).dtype == np.bool_:
        weight = getval(weight).astype(np.int32)
    total = segment_sum(reshape(weight, (-1,)), ids, length * rows.shape[0])
    return reshape(total, value.shape[:-1] + (length,))


def histogram(x, bins=10, range=None):  # noqa: A002 (Keras's name)
    """Counts of the values of `x` in `bins` equal bins over `range`, and the bin edges.

    Args:
        x: 1-D Tensor or array-like.
        bins: the number of bins, a positive int.
        range: `(lower, upper)` of the bins, or None for `(min(x), max(x))`.

    Returns:
        A tuple `(counts, edges)`: `bins` counts and `bins + 1` edges, both
        floatx for integer input, else `x`'s dtype, as in Keras.

    Raises:
        ValueError: if `x` is not 1-D, or `bins` or `range` is invalid.

    Example:
        >>> counts, edges = mk.ops.histogram([1.0, 2.0, 2.0, 5.0], bins=2)
        >>> counts.numpy(), edges.numpy()
        (array([3., 1.], dtype=float32), array([1., 3., 5.], dtype=float32))
    """
    value = _plain(x)
    if value.ndim != 1:
        raise op_error("histogram", "x must be 1-D", value)
    if isinstance(bins, bool) or not isinstance(bins, (int, np.integer)) or bins < 1:
        raise ValueError(f"histogram: bins must be a positive int, got {bins!r}")
    dtype = value.dtype if value.dtype.kind == "f" else np.dtype(config.floatx())
    try:
        counts, edges = np.histogram(value.astype(dtype), bins=int(bins), range=range)
    except ValueError as error:
        raise op_error("histogram", f"invalid range {range!r} ({error})", value) from None
    return wrap(counts.astype(dtype)), wrap(edges.astype(dtype))


def unique(
    x,
    sorted=True,  # noqa: A002 (Keras's name)
    return_index=False,
    return_inverse=False,
    return_counts=False,
    axis=None,
    size=None,
    fill_value=None,
):
    """The distinct values of `x`, sorted, with where they are and how often.

    Its length depends on the values: on a symbolic tensor (an `Input`) it
    needs `size`, which fixes it (Keras records a node of unknown length).
    Each NaN is a value of its own (NaN != NaN), as in Keras, placed last;
    numpy's `unique` merges them by default.

    Args:
        x: Tensor or array-like.
        sorted: accepted for Keras's signature; the values come sorted anyway,
            as Keras's jax and torch backends give them.
        return_index: also return the index of each value's first occurrence.
        return_inverse: also return, for each element of `x`, the index of
            its value among the unique ones.
        return_counts: also return how often each value occurs.
        axis: None (the flattened values), or the axis whose slices are
            compared whole.
        size: None, or the result's fixed length: cut, or padded with
            `fill_value` (the values), the first occurrence (indices) and 0
            (counts), as in Keras's jax backend.
        fill_value: the values' padding; None: the smallest unique value.

    Returns:
        The unique values (`x`'s dtype), or a tuple of them and the int32
        indices, inverse and counts asked for, in that order.

    Raises:
        TypeError: on a symbolic tensor without `size`.
        ValueError: if `axis` is out of range or `size` is negative.

    Example:
        >>> values, counts = mk.ops.unique([3, 1, 1, 2], return_counts=True)
        >>> values.numpy(), counts.numpy()
        (array([1, 2, 3], dtype=int32), array([2, 1, 1], dtype=int32))
    """
    try:
        value = _plain(x)
    except SymbolicValueError:
        if size is not None:
            raise  # (a known length: a graph node, as in Keras)
        raise TypeError(
            "unique: on a symbolic tensor (an Input) it needs `size`: without it, its "
            "length depends on the values, which a symbolic tensor has not"
        ) from None
    try:
        # Each NaN apart (NaN != NaN), as Keras's backends keep them; numpy merges by default.
        found = np.unique(value, True, True, True, axis=axis, equal_nan=False)
    except (ValueError, np.exceptions.AxisError) as error:
        raise op_error("unique", f"invalid axis {axis!r} ({error})", value) from None
    values, index, inverse, counts = found[0], *(a.astype(np.int32) for a in found[1:])
    inverse = inverse.reshape(-1) if axis is not None else inverse.reshape(value.shape)
    if size is not None:
        if size < 0:
            raise ValueError(f"unique: size must be 0 or more, got {size}")
        where = 0 if axis is None else axis
        pad = max(int(size) - values.shape[where], 0)
        fill = values.take([0], axis=where) if fill_value is None else fill_value
        widths = [(0, 0)] * values.ndim
        widths[where] = (0, pad)
        values = np.pad(values.take(np.arange(min(size, len(index))), axis=where), widths)
        if pad:
            slices = [slice(None)] * values.ndim
            slices[where] = slice(values.shape[where] - pad, None)
            values[tuple(slices)] = fill
        index = np.pad(index[:size], (0, pad), constant_values=index[0] if index.size else 0)
        counts = np.pad(counts[:size], (0, pad))
    results = [values] + [
        extra
        for extra, wanted in ((index, return_index), (inverse, return_inverse),
                              (counts, return_counts))
        if wanted
    ]  # fmt: skip
    return wrap(results[0]) if len(results) == 1 else tuple(wrap(r) for r in results)
