"""Ops that move elements around: reshape, transpose, join, split, index, pad."""

import autograd.numpy as anp
import numpy as np
from autograd.extend import defvjp, primitive
from autograd.tracer import getval

from minikeras import config
from minikeras.engine.tensor import Tensor
from minikeras.ops.core import (
    apply_unary,
    array_of,
    normalize_axis,
    op_error,
    same_float,
    value_of,
    wrap,
)
from minikeras.ops.operands import operand_values_list

__all__ = [
    "concatenate",
    "expand_dims",
    "getitem",
    "one_hot",
    "pad",
    "reshape",
    "split",
    "squeeze",
    "stack",
    "take",
    "tile",
    "transpose",
]


def reshape(x, newshape):
    """Gives `x` a new shape with the same number of elements; -1 is inferred.

    Args:
        x: Tensor or array-like.
        newshape: a tuple of ints (or an int), at most one of them -1.

    Returns:
        A Tensor.

    Raises:
        ValueError: if the sizes do not match.

    Example:
        >>> mk.ops.reshape(mk.ops.arange(6), (2, -1)).shape
        (2, 3)
    """
    value = array_of(x)
    try:
        return wrap(anp.reshape(value, newshape))
    except ValueError:
        shape = (newshape,) if isinstance(newshape, (int, np.integer)) else tuple(newshape)
        raise op_error("reshape", f"cannot reshape into {shape}", value) from None


def transpose(x, axes=None):
    """Permutes axes; by default reverses them.

    Args:
        x: Tensor or array-like.
        axes: None or a permutation of `range(x.ndim)`.

    Returns:
        A Tensor.

    Raises:
        ValueError: if `axes` is not a permutation of the axes.

    Example:
        >>> mk.ops.transpose(mk.ops.ones((2, 3, 4)), (2, 0, 1)).shape
        (4, 2, 3)
    """
    return apply_unary("transpose", anp.transpose, x, axes)


def expand_dims(x, axis):
    """Inserts an axis of size 1 at `axis`.

    Args:
        x: Tensor or array-like.
        axis: where the new axis goes.

    Returns:
        A Tensor.

    Raises:
        ValueError: if `axis` is out of range.

    Example:
        >>> mk.ops.expand_dims(mk.ops.ones((2, 3)), -1).shape
        (2, 3, 1)
    """
    return apply_unary("expand_dims", anp.expand_dims, x, axis)


def squeeze(x, axis=None):
    """Removes axes of size 1 (all of them, or the one at `axis`).

    Args:
        x: Tensor or array-like.
        axis: None or an int (or tuple) naming axes of size 1.

    Returns:
        A Tensor.

    Raises:
        ValueError: if a named axis does not have size 1.

    Example:
        >>> mk.ops.squeeze(mk.ops.ones((2, 1, 3))).shape
        (2, 3)
    """
    return apply_unary("squeeze", anp.squeeze, x, axis)


def tile(x, repeats):
    """Repeats `x` `repeats[i]` times along axis i (numpy's `tile`).

    Args:
        x: Tensor or array-like.
        repeats: an int or a sequence of ints; a shorter sequence applies to
            the last axes, a longer one adds leading axes.

    Returns:
        A Tensor.

    Raises:
        ValueError: if a repeat is negative.

    Example:
        >>> mk.ops.tile(mk.ops.ones((2, 1)), [1, 3]).shape
        (2, 3)
    """
    return apply_unary("tile", anp.tile, x, tuple(np.atleast_1d(getval(repeats)).tolist()))


def _joinable(op, xs):
    if isinstance(xs, Tensor) or not isinstance(xs, (list, tuple)) or not xs:
        raise ValueError(f"{op}: expected a non-empty list or tuple of tensors, got {xs!r}")
    return same_float(operand_values_list(xs, array_of))


def concatenate(xs, axis=0):
    """Joins a sequence of Tensors along an existing axis.

    Args:
        xs: a list or tuple of Tensors or array-likes.
        axis: the axis to join along.

    Returns:
        A Tensor.

    Raises:
        ValueError: if `xs` is empty or the shapes differ off `axis`.

    Example:
        >>> mk.ops.concatenate([mk.ops.ones((2, 3)), mk.ops.zeros((1, 3))]).shape
        (3, 3)
    """
    values = _joinable("concatenate", xs)
    try:
        return wrap(anp.concatenate(values, axis=axis))
    except (ValueError, IndexError):
        raise op_error("concatenate", f"shapes must match except on axis {axis}", *values) from None


def stack(x, axis=0):
    """Joins a sequence of equal-shaped Tensors along a new axis.

    Args:
        x: a list or tuple of Tensors or array-likes.
        axis: where the new axis goes.

    Returns:
        A Tensor.

    Raises:
        ValueError: if `x` is empty, the shapes differ, or `axis` is out of range.
        TypeError: if `axis` is not an int.

    Example:
        >>> mk.ops.stack([mk.ops.ones(3), mk.ops.zeros(3)], axis=1).shape
        (3, 2)
    """
    values = _joinable("stack", x)
    shapes = {np.shape(value) for value in values}
    if len(shapes) != 1:
        raise op_error("stack", "all inputs must have the same shape", *values)
    axis = normalize_axis("stack", axis, len(shapes.pop()) + 1, *values)
    # Each input with the new axis, joined: autograd's `stack` would first pass every
    # input through `anp.array`, a node whose arguments a recorded step cannot replay.
    return wrap(anp.concatenate([anp.expand_dims(value, axis) for value in values], axis=axis))


def split(x, indices_or_sections, axis=0):
    """Splits into equal sections, or at the given indices, along `axis`.

    Args:
        x: Tensor or array-like.
        indices_or_sections: the number of equal parts, or a list of indices.
        axis: the axis to split.

    Returns:
        A list of Tensors.

    Raises:
        ValueError: if the axis cannot be split into equal parts.

    Example:
        >>> [t.shape for t in mk.ops.split(mk.ops.ones((4, 2)), 2)]
        [(2, 2), (2, 2)]
    """
    value = array_of(x)
    try:
        parts = anp.split(value, indices_or_sections, axis=axis)
    except (ValueError, IndexError):
        raise op_error(
            "split", f"cannot split into {indices_or_sections} on axis {axis}", value
        ) from None
    return [wrap(part) for part in parts]


def _index_value(index):
    if isinstance(index, tuple):
        return tuple(_index_value(i) for i in index)
    if isinstance(index, Tensor):
        return np.asarray(index)
    if isinstance(index, list):
        return np.asarray(index)
    return index


def getitem(x, key):
    """`x[index]`: basic slicing, integer-array and boolean-mask indexing.

    Also `mk.ops.get_item`, Keras's name for it (the same function).

    Args:
        x: Tensor or array-like.
        key: an int, slice, Ellipsis, None, integer or boolean array (or
            Tensor), or a tuple of these.

    Returns:
        A Tensor.

    Raises:
        IndexError: if an index is out of bounds, naming the shape.

    Example:
        >>> x = mk.ops.arange(6).reshape((2, 3))
        >>> mk.ops.getitem(x, (slice(None), [0, 2])).numpy()
        array([[0, 2],
               [3, 5]], dtype=int32)
    """
    value = array_of(x)
    try:
        return wrap(value[_index_value(key)])
    except IndexError as error:
        raise IndexError(f"getitem: {error}; indexing shape {np.shape(value)}") from None


def take(x, indices, axis=None):
    """Picks elements by integer index along `axis` (flattened if None).

    Args:
        x: Tensor or array-like.
        indices: integer Tensor or array-like.
        axis: the axis to pick from.

    Returns:
        A Tensor whose `axis` is replaced by the shape of `indices`.

    Raises:
        ValueError: if `axis` is out of range.
        IndexError: if an index is out of bounds.

    Example:
        >>> mk.ops.take(mk.ops.arange(6).reshape((2, 3)), [2, 0], axis=1).numpy()
        array([[2, 0],
               [5, 3]], dtype=int32)
    """
    value = array_of(x)
    if axis is None:
        value, axis = anp.reshape(value, (-1,)), 0
    index = np.asarray(getval(value_of(indices)))
    axis = normalize_axis("take", axis, np.ndim(value), value, index)
    try:
        return wrap(value[(slice(None),) * axis + (index,)])
    except IndexError as error:
        raise IndexError(f"take: {error}; got shape {np.shape(value)}, axis={axis}") from None


def one_hot(x, num_classes, axis=-1, dtype=None):
    """One-hot encodes integer class indices.

    Args:
        x: integer Tensor or array-like of class indices.
        num_classes: the number of classes.
        axis: where the class axis goes.
        dtype: the result dtype, float32 by default.

    Returns:
        A Tensor with one more axis than `x`.

    Raises:
        ValueError: if an index is negative or not below `num_classes`, or
            `axis` is out of range.

    Example:
        >>> mk.ops.one_hot([0, 2], 3).numpy()
        array([[1., 0., 0.],
               [0., 0., 1.]], dtype=float32)
    """
    indices = np.asarray(getval(value_of(x)))
    if indices.dtype.kind not in "iu":
        if indices.size and not np.all(np.mod(indices, 1) == 0):
            raise ValueError(f"one_hot: indices must be integers, got dtype {indices.dtype}")
        indices = indices.astype(np.int64)
    if indices.size and (indices.min() < 0 or indices.max() >= num_classes):
        raise op_error(
            "one_hot",
            f"indices must lie in [0, {num_classes}), but range from "
            f"{indices.min()} to {indices.max()}",
            indices,
        )
    axis = normalize_axis("one_hot", axis, indices.ndim + 1, indices)
    # (ones put into zeros: no num_classes x num_classes identity to index)
    out = np.zeros((*indices.shape, num_classes), dtype=config.standardize_dtype(dtype))
    np.put_along_axis(out, indices[..., None], 1, axis=-1)
    return wrap(np.moveaxis(out, -1, axis) if axis != indices.ndim else out)


@primitive
def _pad(x, pad_width, constant_values):
    return np.pad(x, pad_width, mode="constant", constant_values=constant_values)


def _pad_vjp(ans, x, pad_width, constant_values):
    interior = tuple(
        slice(before, before + size) for (before, _), size in zip(pad_width, np.shape(x))
    )
    return lambda g: g[interior]


defvjp(_pad, _pad_vjp)


def pad(x, pad_width, mode="constant", constant_values=None):
    """Pads with a constant value.

    Args:
        x: Tensor or array-like.
        pad_width: `((before, after), ...)` per axis, or one pair for all.
        mode: only `"constant"` is supported.
        constant_values: the fill value; None (Keras's default) means 0.

    Returns:
        A Tensor.

    Raises:
        ValueError: for another mode or a `pad_width` that does not fit `x`.

    Example:
        >>> mk.ops.pad(mk.ops.ones((1, 2)), ((0, 0), (1, 1))).numpy()
        array([[0., 1., 1., 0.]], dtype=float32)
    """
    if mode != "constant":
        raise ValueError(f"pad: only mode='constant' is supported, got mode={mode!r}")
    value = value_of(x)
    try:
        widths = np.broadcast_to(np.asarray(pad_width, dtype=int), (np.ndim(value), 2))
    except ValueError:
        raise op_error("pad", f"pad_width {pad_width!r} does not fit the input", value) from None
    if np.any(widths < 0):
        raise ValueError(f"pad: pad_width must not be negative, got {pad_width!r}")
    widths = tuple((int(a), int(b)) for a, b in widths)
    return wrap(_pad(value, widths, 0 if constant_values is None else constant_values))
