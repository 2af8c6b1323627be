"""Undoing broadcasting in gradients: the one helper every broadcasting VJP uses.

A binary op broadcasts its operands to a common shape; its VJP receives a
gradient of that shape and must hand each operand a gradient of the
operand's own shape, summed over the axes broadcasting added or stretched.
`unbroadcast` does that, and returns the gradient untouched (no call, no
copy) when no broadcasting happened, the common case in a model.
`bias_gradient` is the same sum for a bias added along the last axis (dense,
conv). Plain arrays are summed with numpy; a gradient an outer tape records
(an autograd box) with autograd's numpy, so it stays differentiable.
"""

import autograd.numpy as anp
import numpy as np
from autograd.tracer import getval

__all__ = ["bias_gradient", "unbroadcast"]


def _shape(value):
    value = getval(value)
    return value.shape if type(value) is np.ndarray else np.shape(value)


def unbroadcast(g, target):
    """Sums `g` down to the shape of `target`, the operand it is the gradient of.

    Args:
        g: the gradient of a broadcast result (array or autograd box).
        target: the operand (array, box or Python number) whose gradient is
            wanted; only its shape is used.

    Returns:
        `g` itself if the shapes already agree, else `g` summed over the
        broadcast axes and reshaped to `target`'s shape.

    Example:
        >>> mk.engine.broadcast.unbroadcast(np.ones((2, 3)), np.zeros((1, 3)))
        array([[2., 2., 2.]])
        >>> g = np.ones((2, 2))
        >>> mk.engine.broadcast.unbroadcast(g, np.zeros((2, 2))) is g
        True
    """
    if type(g) is np.ndarray and type(target) is np.ndarray and g.shape == target.shape:
        return g  # the usual case, without further calls
    shape = _shape(target)
    g_shape = _shape(g)
    if g_shape == shape:
        return g
    extra = len(g_shape) - len(shape)
    axes = tuple(range(extra)) + tuple(
        extra + i for i, size in enumerate(shape) if size == 1 and g_shape[extra + i] != 1
    )
    if type(g) is np.ndarray:
        return np.sum(g, axis=axes).reshape(shape)
    return anp.reshape(anp.sum(g, axis=axes), shape)


def bias_gradient(g):
    """The gradient of a bias added along the last axis: `g` summed over the others.

    Args:
        g: the gradient of `y = z + bias`, shape `(..., units)`.

    Returns:
        An array (or box) of shape `(units,)`.

    Example:
        >>> mk.engine.broadcast.bias_gradient(np.ones((4, 5, 3)))
        array([20., 20., 20.])
    """
    if type(g) is np.ndarray:
        rows = g if g.ndim == 2 else g.reshape(-1, g.shape[-1])
        count = rows.shape[0]
        if count > 1:
            # A row of ones times `rows`, BLAS's gemv: numpy reduces over axis 0 row by
            # row, slower at every size of two rows or more: 1.3 against 2.4 µs at
            # (32, 64), 2.5 against 8 µs at (256, 4), 76 against 725 µs at a
            # convolution's (43264, 32).
            ones = _ONES.get((count, rows.dtype.char))
            if ones is not None:
                return np.matmul(ones, rows)
            if rows.dtype.char in "fd":
                return np.matmul(_ones(count, rows.dtype), rows)
        return np.add.reduce(rows, axis=0)
    return anp.sum(anp.reshape(g, (-1, _shape(g)[-1])), axis=0)


def _ones(count, dtype):
    """A read-only row of `count` ones, made once per length and dtype, in native byte order.

    Keyed by the dtype's character, which byte order does not change: the row
    is made native, so a big-endian gradient does not leave a row that every
    later native one must convert.
    """
    key = (count, np.dtype(dtype).char)
    ones = _ONES.get(key)
    if ones is None:
        if len(_ONES) > 64:
            _ONES.clear()
        ones = _ONES[key] = np.ones(count, key[1])
        ones.flags.writeable = False
    return ones


_ONES = {}
