"""Moving values within a tensor: `roll`, `ravel`, `fliplr`, `flipud`, `rot90`, and the
differences of neighbours, `diff`.

`roll`, `rot90` and `diff` are our primitives, each with its gradient beside
it: autograd's `roll` cannot undo a tuple of shifts, its `rot90` forgets the
`axes` argument, and its `diff` makes float64 zeros when the differences run
out. Rolling back, turning back, and the running differences the other way
round are the gradients; each is written with these primitives or autograd's
numpy, so it has a gradient too. `fliplr` and `flipud` are `flip` on an axis.
"""

import autograd.numpy as anp
import numpy as np
from autograd.extend import defvjp, primitive

from minikeras.engine.primitive import call_primitive
from minikeras.ops.core import array_of, normalize_axis, op_error, wrap
from minikeras.ops.gather import flip

__all__ = ["diff", "fliplr", "flipud", "ravel", "roll", "rot90"]


@primitive
def _roll(x, shift, axis):
    return np.roll(x, shift, axis)


def _negated(shift):
    return tuple(-s for s in shift) if isinstance(shift, tuple) else -shift


defvjp(_roll, lambda ans, x, shift, axis: lambda g: _roll(g, _negated(shift), axis))


@primitive
def _rot90(x, k, axes):
    return np.rot90(x, k, axes)


defvjp(_rot90, lambda ans, x, k, axes: lambda g: _rot90(g, -k, axes))


@primitive
def _diff(x, n, axis):
    return np.diff(x, n=n, axis=axis)


def _undiff(g, axis):
    """The gradient through one difference along `axis`: (m - 1) values back to m."""
    first = [slice(None)] * anp.ndim(g)
    last = list(first)
    first[axis], last[axis] = slice(None, 1), slice(-1, None)
    return anp.concatenate([-g[tuple(first)], -_diff(g, 1, axis), g[tuple(last)]], axis=axis)


def _diff_vjp(ans, x, n, axis):
    shape, dtype = np.shape(x), ans.dtype

    def vjp(g):
        if n >= shape[axis]:  # nothing is left of x's values: none has a gradient
            return np.zeros(shape, dtype)
        for _ in range(n):
            g = _undiff(g, axis)
        return g

    return vjp


defvjp(_diff, _diff_vjp)


def roll(x, shift, axis=None):
    """Shifts values along `axis` by `shift`, those passing the end coming in at the start.

    Args:
        x: Tensor or array-like.
        shift: an int, or a tuple of ints, one per axis of `axis`.
        axis: an int, a tuple of ints, or None to roll the flattened values
            (the shape is kept).

    Returns:
        A Tensor of `x`'s shape and dtype.

    Raises:
        ValueError: for an axis out of range, or `shift` and `axis` of
            different lengths.

    Example:
        >>> mk.ops.roll(np.array([1, 2, 3, 4], "int32"), 1).numpy()
        array([4, 1, 2, 3], dtype=int32)
    """
    value = array_of(x)
    shift = tuple(int(s) for s in shift) if isinstance(shift, (list, tuple)) else int(shift)
    if isinstance(axis, list):
        axis = tuple(axis)
    try:
        return wrap(call_primitive(_roll, value, shift, axis))
    except (ValueError, np.exceptions.AxisError) as error:
        raise op_error("roll", f"invalid shift={shift!r}, axis={axis!r}: {error}", value) from None


def ravel(x):
    """`x` flattened to one axis (a scalar gives one value).

    Args:
        x: Tensor or array-like.

    Returns:
        A 1-d Tensor.

    Example:
        >>> mk.ops.ravel(np.array([[1, 2], [3, 4]], "int32")).numpy()
        array([1, 2, 3, 4], dtype=int32)
    """
    return wrap(anp.ravel(array_of(x)))


def fliplr(x):
    """`x` with its columns reversed: `flip(x, axis=1)`.

    Args:
        x: Tensor or array-like of 2 or more axes.

    Returns:
        A Tensor.

    Raises:
        ValueError: if `x` has fewer than 2 axes.

    Example:
        >>> mk.ops.fliplr(np.array([[1, 2], [3, 4]], "int32")).numpy()
        array([[2, 1],
               [4, 3]], dtype=int32)
    """
    value = array_of(x)
    if np.ndim(value) < 2:
        raise op_error("fliplr", "x needs 2 or more axes", value)
    return flip(value, axis=1)


def flipud(x):
    """`x` with its rows reversed: `flip(x, axis=0)`.

    Args:
        x: Tensor or array-like of 1 or more axes.

    Returns:
        A Tensor.

    Raises:
        ValueError: if `x` is a scalar.

    Example:
        >>> mk.ops.flipud(np.array([[1, 2], [3, 4]], "int32")).numpy()
        array([[3, 4],
               [1, 2]], dtype=int32)
    """
    value = array_of(x)
    if np.ndim(value) < 1:
        raise op_error("flipud", "x needs 1 or more axes", value)
    return flip(value, axis=0)


def rot90(array, k=1, axes=(0, 1)):
    """`array` turned by 90 degrees `k` times, from the first of `axes` towards the second.

    Args:
        array: Tensor or array-like of 2 or more axes.
        k: the number of quarter turns (negative: the other way).
        axes: the two axes of the plane to turn in.

    Returns:
        A Tensor.

    Raises:
        ValueError: for fewer than 2 axes, or `axes` not two different axes.

    Example:
        >>> mk.ops.rot90(np.array([[1, 2], [3, 4]], "int32")).numpy()
        array([[2, 4],
               [1, 3]], dtype=int32)
    """
    value = array_of(array)
    ndim = np.ndim(value)
    if ndim < 2:
        raise op_error("rot90", "array needs 2 or more axes", value)
    if len(axes) != 2:
        raise ValueError(f"rot90: axes must be two axes, got {axes!r}")
    plane = tuple(normalize_axis("rot90", axis, ndim, value) for axis in axes)
    if plane[0] == plane[1]:
        raise op_error("rot90", f"axes must differ, got {tuple(axes)}", value)
    return wrap(call_primitive(_rot90, value, int(k), plane))


def diff(a, n=1, axis=-1):
    """The `n`-th differences of neighbours along `axis`: `a[1:] - a[:-1]`, `n` times.

    Args:
        a: Tensor or array-like of 1 or more axes.
        n: the number of times to take differences (0 returns `a`).
        axis: the axis.

    Returns:
        A Tensor whose `axis` is `n` shorter (empty when `n` reaches its length).
        Booleans give booleans: whether neighbours differ, as in numpy.

    Raises:
        ValueError: for a scalar, a negative `n` or an axis out of range.

    Example:
        >>> mk.ops.diff(np.array([1, 4, 9, 16], "int32")).numpy()
        array([3, 5, 7], dtype=int32)
    """
    value = array_of(a)
    if np.ndim(value) < 1:
        raise op_error("diff", "a needs 1 or more axes", value)
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
        raise ValueError(f"diff: n must be a non-negative int, got {n!r}")
    axis = normalize_axis("diff", axis, np.ndim(value), value)
    if n == 0:
        return wrap(value)
    return wrap(call_primitive(_diff, value, int(n), axis))
