"""Writing values at positions: `scatter`, `scatter_update`, and the box-shaped `slice`
and `slice_update`.

Indices here are Keras's (and `tf.gather_nd`'s): the last axis of `indices`
holds a position's first `k` coordinates, so each index row picks one value
(`k` = rank) or one slice (`k` < rank). Our primitives come in pairs, each
half the other's gradient: picking values at positions and adding values at
positions; cutting a box out and placing values in one. An update's gradient
is the incoming gradient at its positions (only the last of repeated
positions counts, as only its value is kept); the updated tensor's is the
incoming gradient with the overwritten positions zeroed. Positions and
boxes are plain values, not differentiable (Keras also takes tensors there).
"""

import builtins

import numpy as np
from autograd.extend import defvjp, primitive
from autograd.tracer import getval

from minikeras.engine.primitive import call_primitive
from minikeras.ops.core import array_of, op_error, value_of, wrap
from minikeras.ops.creation import cast
from minikeras.ops.operands import narrowed_operands

__all__ = ["scatter", "scatter_update", "slice", "slice_update"]

_REDUCTIONS = {"add": np.add, "max": np.maximum, "min": np.minimum, "mul": np.multiply}


def _coordinates(index):
    return tuple(np.moveaxis(index, -1, 0))


@primitive
def _gather(x, index):
    return x[_coordinates(index)]


@primitive
def _scatter_add(values, index, shape):
    out = np.zeros(shape, values.dtype)
    np.add.at(out, _coordinates(index), values)
    return out


defvjp(_gather, lambda ans, x, index: lambda g: _scatter_add(g, index, np.shape(x)))
defvjp(_scatter_add, lambda ans, values, index, shape: lambda g: _gather(g, index))


@primitive
def _scatter_update(inputs, index, updates, reduction):
    out = np.array(inputs)
    if reduction is None:
        out[_coordinates(index)] = updates  # (repeated positions: the last one stays)
    else:
        _REDUCTIONS[reduction].at(out, _coordinates(index), updates)
    return out


def _last_of_each_position(index, shape):
    """1 for the index rows whose value is kept (the last of repeated positions), else 0."""
    dims = shape[: index.shape[-1]]
    flat = np.ravel_multi_index(_coordinates(index % np.array(dims)), dims).reshape(-1)
    last = np.zeros(flat.size, bool)
    last[flat.size - 1 - np.unique(flat[::-1], return_index=True)[1]] = True
    return last.reshape(index.shape[:-1])


def _scatter_update_vjp(argnum):
    def maker(ans, inputs, index, updates, reduction):
        if reduction not in (None, "add"):
            raise NotImplementedError(
                f"scatter_update: no gradient for reduction={reduction!r} (only None and 'add')"
            )
        if argnum == 0:
            if reduction == "add":
                return lambda g: g
            nothing = np.zeros(np.shape(updates), ans.dtype)
            return lambda g: _scatter_update(g, index, nothing, None)
        if reduction == "add":
            return lambda g: _gather(g, index)
        kept = _last_of_each_position(index, np.shape(inputs)).astype(ans.dtype)
        kept = kept.reshape(kept.shape + (1,) * (np.ndim(updates) - kept.ndim))
        return lambda g: _gather(g, index) * kept

    return maker


defvjp(_scatter_update, _scatter_update_vjp(0), None, _scatter_update_vjp(2))


def _box(start, size):
    return tuple(builtins.slice(begin, begin + length) for begin, length in zip(start, size))


@primitive
def _cut(x, start, size):
    return x[_box(start, size)]


@primitive
def _slice_update(inputs, start, updates):
    out = np.array(inputs)
    out[_box(start, np.shape(updates))] = updates
    return out


def _slice_update_vjp(argnum):
    def maker(ans, inputs, start, updates):
        if argnum == 0:
            nothing = np.zeros(np.shape(updates), ans.dtype)
            return lambda g: _slice_update(g, start, nothing)
        return lambda g: _cut(g, start, np.shape(updates))

    return maker


def _cut_vjp(ans, x, start, size):
    zeros = np.zeros(np.shape(x), ans.dtype)
    return lambda g: _slice_update(zeros, start, g)


defvjp(_cut, _cut_vjp)
defvjp(_slice_update, _slice_update_vjp(0), None, _slice_update_vjp(2))


def _positions(op, indices, shape):
    """`indices` as an integer array of rows of coordinates, checked against `shape`."""
    index = np.asarray(getval(value_of(indices)))
    if index.dtype.kind not in "iu":
        raise ValueError(f"{op}: indices must be integers, got dtype {index.dtype}")
    if index.ndim < 1 or not 1 <= index.shape[-1] <= len(shape):
        raise ValueError(
            f"{op}: indices must have a last axis of 1 to {len(shape)} coordinates "
            f"(the rank of the target), got indices of shape {index.shape}"
        )
    dims = np.array(shape[: index.shape[-1]])
    if index.size and (np.any(index < -dims) or np.any(index >= dims)):
        raise IndexError(f"{op}: indices out of range for shape {tuple(shape)}")
    return index


def _check_updates(op, index, shape, updates, name):
    expected = index.shape[:-1] + tuple(shape[index.shape[-1] :])
    if np.shape(updates) != expected:
        raise ValueError(
            f"{op}: {name} must have shape {expected} (indices {index.shape} into "
            f"{tuple(shape)}), got {np.shape(updates)}"
        )


def scatter(indices, values, shape):
    """Zeros of `shape` with `values` added at `indices` (repeated positions add up).

    Args:
        indices: integer Tensor or array-like of shape `(..., k)`: each row
            the first `k` coordinates of a position in the result.
        values: Tensor of shape `indices.shape[:-1] + shape[k:]`.
        shape: the result's shape.

    Returns:
        A Tensor of `shape` and `values`'s dtype.

    Raises:
        ValueError: for non-integer indices or shapes that do not fit.
        IndexError: for an index out of range.

    Example:
        >>> mk.ops.scatter([[0, 1], [1, 1]], np.array([1.0, 2.0], "float32"), (2, 2)).numpy()
        array([[0., 1.],
               [0., 2.]], dtype=float32)
    """
    shape = tuple(int(size) for size in shape)
    index = _positions("scatter", indices, shape)
    value = array_of(values)
    _check_updates("scatter", index, shape, value, "values")
    return wrap(call_primitive(_scatter_add, value, index, shape))


def scatter_update(inputs, indices, updates, reduction=None):
    """`inputs` with `updates` written at `indices` (or combined there by `reduction`).

    Args:
        inputs: Tensor or array-like.
        indices: integer Tensor or array-like of shape `(..., k)`: each row
            the first `k` coordinates of a position in `inputs`.
        updates: Tensor of shape `indices.shape[:-1] + inputs.shape[k:]`, cast
            to `inputs`'s dtype.
        reduction: None (replace; of repeated positions the last stays),
            `"add"`, `"max"`, `"min"` or `"mul"`. Gradients flow for None and
            `"add"` only.

    Returns:
        A Tensor of `inputs`'s shape and dtype.

    Raises:
        ValueError: for an unknown `reduction`, non-integer indices or shapes
            that do not fit.
        IndexError: for an index out of range.

    Example:
        >>> mk.ops.scatter_update(np.zeros((2, 3), "float32"), [[0, 1], [1, 2]], [5.0, 6.0]).numpy()
        array([[0., 5., 0.],
               [0., 0., 6.]], dtype=float32)
    """
    if reduction is not None and reduction not in _REDUCTIONS:
        raise ValueError(
            f"scatter_update: reduction must be None, 'add', 'max', 'min' or 'mul', "
            f"got {reduction!r}"
        )
    # (a numpy float64 inputs beside Tensor updates takes their precision: ops.operands)
    inputs, updates = narrowed_operands(inputs, updates)
    value = array_of(inputs)
    index = _positions("scatter_update", indices, np.shape(value))
    update = value_of(cast(updates, value.dtype))
    _check_updates("scatter_update", index, np.shape(value), update, "updates")
    return wrap(call_primitive(_scatter_update, value, index, update, reduction))


def _start(op, start_indices, shape):
    start = tuple(int(i) for i in np.asarray(getval(value_of(start_indices))).reshape(-1))
    if len(start) != len(shape):
        raise ValueError(
            f"{op}: {len(shape)} start indices expected for shape {shape}, got {start}"
        )
    return start


def slice(inputs, start_indices, shape):  # noqa: A001 (Keras's name)
    """The box of `inputs` of `shape` starting at `start_indices`.

    Args:
        inputs: Tensor or array-like.
        start_indices: one int per axis of `inputs`.
        shape: one size per axis; -1 takes the rest of the axis.

    Returns:
        A Tensor.

    Raises:
        ValueError: if the box does not fit in `inputs` (Keras on jax moves
            its start back until it fits).

    Example:
        >>> mk.ops.slice(np.arange(12).reshape(3, 4), (1, 1), (2, -1)).numpy()
        array([[ 5,  6,  7],
               [ 9, 10, 11]])
    """
    value = array_of(inputs)
    start = _start("slice", start_indices, np.shape(value))
    size = tuple(
        dim - begin if int(length) == -1 else int(length)
        for dim, begin, length in zip(np.shape(value), start, shape)
    )
    _check_box("slice", start, size, value)
    return wrap(call_primitive(_cut, value, start, size))


def _check_box(op, start, size, value):
    if len(size) != np.ndim(value) or any(
        begin < 0 or length < 0 or begin + length > dim
        for begin, length, dim in zip(start, size, np.shape(value))
    ):
        raise op_error(op, f"a box of shape {size} at {start} does not fit", value)


def slice_update(inputs, start_indices, updates):
    """`inputs` with the box at `start_indices` replaced by `updates`.

    Args:
        inputs: Tensor or array-like.
        start_indices: one int per axis of `inputs`.
        updates: Tensor of `inputs`'s rank, cast to `inputs`'s dtype (Keras on
            jax refuses another dtype).

    Returns:
        A Tensor of `inputs`'s shape and dtype.

    Raises:
        ValueError: if the box does not fit in `inputs` (Keras on jax moves
            its start back until it fits).

    Example:
        >>> mk.ops.slice_update(np.zeros((2, 3), "int32"), (0, 1), np.ones((1, 2), "int32")).numpy()
        array([[0, 1, 1],
               [0, 0, 0]], dtype=int32)
    """
    # (a numpy float64 inputs beside Tensor updates takes their precision: ops.operands)
    inputs, updates = narrowed_operands(inputs, updates)
    value = array_of(inputs)
    start = _start("slice_update", start_indices, np.shape(value))
    update = value_of(cast(updates, value.dtype))
    _check_box("slice_update", start, np.shape(update), value)
    return wrap(call_primitive(_slice_update, value, start, update))
