"""Products: `prod` over axes and the running product `cumprod`.

Ours, not autograd's: autograd's gradient of a product is `ans / x`, which is
nan where `x` holds a zero. Ours divides only when the input has no zero;
otherwise it multiplies the values before and after each element (exclusive
running products), which is exact with zeros, to every order. Integers keep
Keras's dtypes: a product of booleans or small integers is int32 (uint32
when unsigned), a running product keeps the input's dtype (int32 for
booleans).
"""

import autograd.numpy as anp
import numpy as np
from autograd.extend import defvjp, primitive
from autograd.tracer import getval

from minikeras.ops.along_axis import from_last, to_last
from minikeras.ops.core import apply_unary, array_of, op_error, wrap
from minikeras.ops.creation import cast
from minikeras.ops.gather import _flip
from minikeras.ops.reduction import _SUM_DTYPES, _expand, _norm_axis

__all__ = ["cumprod", "prod"]


def _has_zero(x):
    return not np.all(getval(x))


def _exclusive_cumprod(flat, reverse=False):
    """Products of the values before each (after each, if `reverse`) along the last axis."""
    if reverse:
        return _flip(_exclusive_cumprod(_flip(flat, -1)), -1)
    ones = np.ones(anp.shape(flat)[:-1] + (1,), getval(flat).dtype)
    return _cumprod(anp.concatenate([ones, flat[..., :-1]], axis=-1), -1)


@primitive
def _prod(x, axis, keepdims):
    return np.prod(x, axis=axis, keepdims=keepdims)


def _prod_vjp(ans, x, axis, keepdims):
    shape = np.shape(x)
    ndim = len(shape)
    axes = range(ndim) if axis is None else (axis,) if np.ndim(axis) == 0 else axis
    axes = tuple(a % ndim for a in axes)

    def vjp(g):
        g = _expand(g, shape, axis, keepdims)
        if not _has_zero(x):
            return g * _expand(ans, shape, axis, keepdims) / x
        # The product of all the others, for each element: before it times after it.
        flat, moved_shape = to_last(x, axes)
        others = _exclusive_cumprod(flat) * _exclusive_cumprod(flat, reverse=True)
        return g * from_last(others, moved_shape, axes)

    return vjp


defvjp(_prod, _prod_vjp)


@primitive
def _cumprod(x, axis):
    return np.cumprod(x, axis=axis)


def _cumprod_vjp(ans, x, axis):
    def vjp(g):
        if not _has_zero(x):
            # d ans_i / d x_j = ans_i / x_j for i >= j: a running sum from the end.
            return _flip(anp.cumsum(_flip(g * ans, axis), axis), axis) / x
        # With zeros: d ans_i / d x_j = (product before j) * (product of x over (j, i]),
        # the second a running product of an (n, n) matrix per row: O(n^2), taken only
        # when a zero is there.
        flat, moved_shape = to_last(x, (axis,))
        g_flat = to_last(g, (axis,))[0]
        n, dtype = anp.shape(flat)[-1], getval(flat).dtype
        # (masks multiply rather than `where`: autograd's `where` does not unbroadcast)
        later = (np.arange(n)[None, :] > np.arange(n)[:, None]).astype(dtype)  # [j, k]: k > j
        spans = _cumprod(anp.expand_dims(flat, -2) * later + (1 - later), -1)  # x over (j, i]
        reached = (np.arange(n)[None, :] >= np.arange(n)[:, None]).astype(dtype)  # i >= j
        after = anp.sum(anp.expand_dims(g_flat, -2) * spans * reached, axis=-1)
        return from_last(_exclusive_cumprod(flat) * after, moved_shape, (axis,))

    return vjp


defvjp(_cumprod, _cumprod_vjp)


def prod(x, axis=None, keepdims=False, dtype=None):
    """Product of elements over `axis`; its gradient is exact where `x` holds zeros.

    Args:
        x: Tensor or array-like.
        axis: None (all), an int or a tuple of ints.
        keepdims: keep reduced axes with size 1.
        dtype: the dtype to compute and return in, or None: `x`'s, except
            that booleans and integers narrower than 32 bits give int32
            (uint32 when unsigned), as in Keras.

    Returns:
        A Tensor.

    Raises:
        ValueError: if an axis is out of range.

    Example:
        >>> mk.ops.prod([[1.0, 2.0], [3.0, 4.0]], axis=1).numpy()
        array([ 2., 12.], dtype=float32)
        >>> mk.ops.prod(np.array([2, 3], "int8")).numpy()
        array(6, dtype=int32)
    """
    value = array_of(x) if dtype is None else array_of(cast(x, dtype))
    axis = _norm_axis("prod", value, axis)
    kind = getval(value).dtype
    if kind.kind in "iub":  # no gradient: plain numpy, in Keras's accumulator dtype
        total = np.prod(
            getval(value), axis=axis, keepdims=keepdims, dtype=_SUM_DTYPES.get(kind, kind)
        )
        return wrap(np.asarray(total))
    return apply_unary("prod", _prod, value, axis, keepdims)


def cumprod(x, axis=None, dtype=None):
    """Running products along `axis` (of the flattened values when `axis` is None).

    The gradient is exact where `x` holds zeros (autograd's divides by `x`).

    Args:
        x: Tensor or array-like.
        axis: the axis, or None for the flattened values.
        dtype: the result's dtype, or None: `x`'s (int32 for booleans, as in
            Keras).

    Returns:
        A Tensor.

    Raises:
        ValueError: if `axis` is out of range.

    Example:
        >>> mk.ops.cumprod([[1.0, 2.0, 3.0]], axis=1).numpy()
        array([[1., 2., 6.]], dtype=float32)
    """
    value = array_of(x) if dtype is None else array_of(cast(x, dtype))
    if getval(value).dtype == np.bool_:
        value = getval(value).astype(np.int32)
    if axis is None:
        value = anp.reshape(value, (-1,))
        axis = 0
    ndim = np.ndim(getval(value))
    if not isinstance(axis, (int, np.integer)) or not -ndim <= axis < max(ndim, 1):
        raise op_error("cumprod", f"axis {axis!r} is out of range", value)
    if getval(value).dtype.kind in "iu":
        return wrap(np.cumprod(getval(value), axis=axis, dtype=getval(value).dtype))
    return apply_unary("cumprod", _cumprod, value, int(axis) % max(ndim, 1))
