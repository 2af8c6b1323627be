"""Index-picking ops: `embedding_lookup` (rows by integer ids) and `flip`.

The forward pass is `table[ids]`. The gradient adds each picked row's output
gradient back into its row of the table; ids repeat (a character, a frequent
word), so the rows of one id must be summed. autograd's generic `take` does
that with `np.add.at`, which is several times slower than sorting: we sort
the ids once, gather the output gradients in that order, and sum each run of
equal ids with one `np.add.reduceat`.
"""

import autograd.numpy as anp
import numpy as np
from autograd.extend import defvjp, primitive
from autograd.tracer import getval, isbox

from minikeras.engine.replay import replay_guard
from minikeras.ops.core import array_of, normalize_axis, op_error, value_of, wrap

__all__ = ["check_ids", "embedding_lookup", "flip", "scatter_rows"]

# Padding, in elements, of the rows `reduceat` sums: its inner loop walks down a
# column, and a row stride of a power-of-two size (128 float32 = 512 bytes) maps
# every few rows to the same cache set, which makes it ten times slower.
_ROW_PADDING_BYTES = 64


@primitive
def _lookup(table, ids):
    return np.take(table, ids, axis=0)


def scatter_rows(gradient, ids, rows):
    """Sums the rows of `gradient` into a `(rows, ...)` table at `ids` (repeats add up).

    Equal to `np.add.at(out, ids, gradient)` on zeros, without `np.add.at`.

    Args:
        gradient: an array of shape `ids.shape + row_shape`.
        ids: integer array of row numbers in `[0, rows)`.
        rows: the number of rows of the result.

    Returns:
        An array of shape `(rows, *row_shape)` and `gradient`'s dtype.

    Example:
        >>> mk.ops.gather.scatter_rows(np.ones((3, 2), "float32"), np.array([1, 0, 1]), 3)
        array([[1., 1.],
               [2., 2.],
               [0., 0.]], dtype=float32)
    """
    flat_ids = ids.reshape(-1)
    row_shape = gradient.shape[ids.ndim :]
    width = int(np.prod(row_shape))
    values = gradient.reshape(flat_ids.size, width)
    out = np.zeros((rows, width), dtype=gradient.dtype)
    if flat_ids.size:
        order = np.argsort(flat_ids, kind="stable")
        sorted_ids = flat_ids[order]
        starts = np.flatnonzero(np.r_[True, sorted_ids[1:] != sorted_ids[:-1]])
        padding = _ROW_PADDING_BYTES // gradient.itemsize
        padded = np.empty((flat_ids.size, width + padding), dtype=gradient.dtype)
        ordered = padded[:, :width]
        np.take(values, order, axis=0, out=ordered, mode="clip")  # clip: unbuffered
        out[sorted_ids[starts]] = np.add.reduceat(ordered, starts, axis=0)
    return out.reshape((rows, *row_shape))


def _lookup_vjp(ans, table, ids):
    rows = np.shape(table)[0]

    def vjp(g):
        if isbox(g):
            # An outer tape records this gradient: the same sum as a traced matmul.
            one_hot = (ids.reshape(-1, 1) == np.arange(rows)).astype(ans.dtype)
            flat = anp.reshape(g, (ids.size, -1))
            return anp.reshape(anp.dot(one_hot.T, flat), np.shape(table))
        return scatter_rows(g, ids, rows)

    return vjp


defvjp(_lookup, _lookup_vjp, None)


def _ids_in_range(args):
    """Whether a replayed lookup's ids are rows of its table (else the eager step raises)."""
    table, ids = args
    return ids.size == 0 or bool(ids.min() >= 0 and ids.max() < np.shape(table)[0])


replay_guard(_lookup, _ids_in_range)  # a compiled step checks every batch's ids, as eagerly


def embedding_lookup(embeddings, ids):
    """The rows of `embeddings` at integer `ids`: `take(embeddings, ids, axis=0)`.

    One primitive whose gradient sums the output gradients of repeated ids
    by sorting (see the module docstring), not with `np.add.at`.

    Args:
        embeddings: Tensor of shape `(rows, ...)`, usually `(input_dim, output_dim)`.
        ids: integer Tensor or array-like of any shape, values in `[0, rows)`.

    Returns:
        A Tensor of shape `ids.shape + embeddings.shape[1:]`.

    Raises:
        ValueError: if `ids` are not integers (integral floats are accepted)
            or fall outside `[0, rows)`, or `embeddings` is a scalar.

    Example:
        >>> table = mk.Variable([[0.0, 1.0], [2.0, 3.0]])
        >>> with mk.GradientTape() as tape:
        ...     rows = mk.ops.embedding_lookup(table, [[1, 1, 0]])
        ...     total = mk.ops.sum(rows)
        >>> rows.shape
        (1, 3, 2)
        >>> tape.gradient(total, table).numpy()
        array([[1., 1.],
               [2., 2.]], dtype=float32)
    """
    table = value_of(embeddings)
    index = check_ids("embedding_lookup", ids, np.shape(table)[0] if np.ndim(table) else 0)
    if np.ndim(table) < 1:
        raise op_error("embedding_lookup", "embeddings must have at least one axis", table)
    return wrap(_lookup(table, index))


def check_ids(owner, ids, rows):
    """`ids` as an integer numpy array, checked to lie in `[0, rows)`.

    Args:
        owner: who is asking, for messages (`"Embedding 'embedding'"`).
        ids: integer (or integral float) Tensor or array-like.
        rows: the number of rows the ids index.

    Returns:
        An integer numpy array (int64 unless it already was an integer type).

    Raises:
        ValueError: for non-integral values, or ids outside `[0, rows)`.

    Example:
        >>> mk.ops.gather.check_ids("demo", [1.0, 2.0], 3)
        array([1, 2])
    """
    index = np.asarray(getval(value_of(ids)))
    if index.dtype.kind not in "iu":
        with np.errstate(invalid="ignore"):  # inf and nan are not whole numbers
            whole = index.dtype.kind in "fb" and np.all(np.mod(index, 1) == 0)
        if not whole:
            raise ValueError(
                f"{owner} expects integer ids, got {index.dtype} values of shape {index.shape}"
                + (" that are not whole numbers" if index.dtype.kind == "f" else "")
            )
        index = index.astype(np.int64)
    if index.size:
        low, high = index.min(), index.max()
        if low < 0 or high >= rows:
            raise ValueError(
                f"{owner} expects ids in [0, {rows}), got ids from {low} to {high} "
                f"in inputs of shape {index.shape}"
            )
    return index


@primitive
def _flip(x, axis):
    return np.flip(x, axis)


defvjp(_flip, lambda ans, x, axis: lambda g: _flip(g, axis))


def flip(x, axis=None):
    """Reverses the order of elements along `axis` (all axes if None), as `np.flip`.

    Its gradient is the flipped gradient, where slicing with `[::-1]` would
    scatter it back with the slow `np.add.at`.

    Args:
        x: Tensor or array-like.
        axis: an int or None.

    Returns:
        A Tensor (a reversed view).

    Raises:
        ValueError: if `axis` is out of range.

    Example:
        >>> mk.ops.flip([[1, 2, 3]], axis=1).numpy()
        array([[3, 2, 1]], dtype=int32)
    """
    value = array_of(x)
    if axis is not None:
        axis = normalize_axis("flip", axis, np.ndim(value), value)
    return wrap(_flip(value, axis))
