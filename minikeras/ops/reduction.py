"""Reductions over axes, each with `axis` and `keepdims`.

autograd's own gradients of mean, max and min divide by numpy integers, which
under numpy 2 promotion turns float32 gradients into float64; ours stay in the
input's dtype.
"""

import builtins
import math

import autograd.numpy as anp
import numpy as np
from autograd.extend import defvjp, primitive
from autograd.tracer import getval, isbox

from minikeras.engine.primitive import call_primitive
from minikeras.ops.core import apply_unary, array_of, as_float, op_error, shape_of, value_of, wrap

__all__ = ["logsumexp", "max", "mean", "min", "std", "sum", "var"]


def _norm_axis(op, value, axis):
    """Checks `axis` against the rank; returns it as None, int or tuple of ints."""
    ndim = np.ndim(getval(value))
    axes = (axis,) if isinstance(axis, (int, np.integer)) else axis
    if axes is None:
        return None
    try:
        axes = tuple(int(a) for a in axes)
    except TypeError:
        raise TypeError(
            f"{op}: axis must be an int, a tuple of ints or None, got {axis!r}"
        ) from None
    for a in axes:
        if not -ndim <= a < builtins.max(ndim, 1):
            raise op_error(op, f"axis {a} is out of range for a {ndim}-d input", value)
    if len({a % builtins.max(ndim, 1) for a in axes}) != len(axes):
        raise op_error(op, f"axis {axis!r} names an axis twice", value)
    return axes[0] if isinstance(axis, (int, np.integer)) else axes


def _count(shape, axis):
    if axis is None:
        return math.prod(shape)
    axes = (axis,) if isinstance(axis, int) else axis
    return math.prod(shape[a] for a in axes)


def _kept_shape(shape, axis):
    """The shape of a reduction over `axis` of `shape` with `keepdims=True`."""
    if axis is None:
        return (1,) * len(shape)
    axes = (axis,) if isinstance(axis, int) else axis
    kept = list(shape)
    for a in axes:
        kept[a] = 1
    return tuple(kept)


def _expand(g, shape, axis, keepdims):
    """Reshapes a reduced gradient so that it broadcasts back over `shape`."""
    if keepdims or axis is None:
        return g
    return anp.reshape(g, _kept_shape(shape, axis))


# Keras's (and jax's) accumulator for small integers: booleans and integers
# narrower than 32 bits sum to 32 bits, where numpy would give 64.
_SUM_DTYPES = {
    np.dtype("bool"): np.dtype("int32"),
    np.dtype("int8"): np.dtype("int32"),
    np.dtype("int16"): np.dtype("int32"),
    np.dtype("uint8"): np.dtype("uint32"),
    np.dtype("uint16"): np.dtype("uint32"),
}


def sum(x, axis=None, keepdims=False):  # noqa: A001 (Keras's name)
    """Sum of elements over `axis`.

    The result keeps the input's dtype, as in Keras: a float32 sum is float32,
    an int32 or int64 sum stays so (wrapping around on overflow). Booleans and
    integers narrower than 32 bits give int32 (uint32 when unsigned).

    Args:
        x: Tensor or array-like.
        axis: None (all), an int or a tuple of ints.
        keepdims: keep reduced axes with size 1.

    Returns:
        A Tensor.

    Raises:
        ValueError: if an axis is out of range.

    Example:
        >>> mk.ops.sum([[1.0, 2.0], [3.0, 4.0]], axis=0).numpy()
        array([4., 6.], dtype=float32)
        >>> mk.ops.sum(np.array([True, True, False])).numpy()
        array(2, dtype=int32)
    """
    value = array_of(x)
    axis = _norm_axis("sum", value, axis)
    dtype = getattr(getval(value), "dtype", None)
    if dtype is not None and dtype.kind == "f":
        # The mean's primitive with scale 1 (an int: float32 stays float32): its
        # VJP fills one buffer, and call_primitive records it cheaply.
        return wrap(call_primitive(_mean, value, axis, keepdims, 1))
    if dtype is not None and dtype.kind in "iub":
        # No gradient to keep: plain numpy, accumulated in the result's dtype.
        total = np.sum(
            getval(value), axis=axis, keepdims=keepdims, dtype=_SUM_DTYPES.get(dtype, dtype)
        )
        return wrap(np.asarray(total))
    return wrap(anp.sum(value, axis=axis, keepdims=keepdims))


@primitive
def _mean(x, axis, keepdims, scale):
    return x.sum(axis=axis, keepdims=keepdims) * scale


def _mean_vjp(ans, x, axis, keepdims, scale):
    """Every element gets `g * scale`, in the input's dtype."""
    value = getval(x)
    shape, dtype = (
        (value.shape, value.dtype)
        if type(value) is np.ndarray
        else (np.shape(value), np.result_type(value))
    )

    def vjp(g):
        if isbox(g):  # an outer tape records this gradient: stay differentiable
            return _expand(g, shape, axis, keepdims) * scale + np.zeros(shape, dtype)
        # Plain numpy otherwise: one buffer filled in one pass, where the traced
        # version costs three autograd calls.
        out = np.empty(shape, dtype)
        if axis is None and not keepdims:
            out.fill(g * scale)
        else:
            np.multiply(np.reshape(g, _kept_shape(shape, axis)), scale, out=out)
        return out

    return vjp


defvjp(_mean, _mean_vjp)


def mean(x, axis=None, keepdims=False):
    """Arithmetic mean over `axis`; integer input gives float32.

    Args:
        x: Tensor or array-like.
        axis: None (all), an int or a tuple of ints.
        keepdims: keep reduced axes with size 1.

    Returns:
        A Tensor.

    Raises:
        ValueError: if an axis is out of range.

    Example:
        >>> mk.ops.mean([[1.0, 2.0], [3.0, 4.0]], axis=1).numpy()
        array([1.5, 3.5], dtype=float32)
    """
    value = as_float(value_of(x))
    if axis is not None:
        axis = _norm_axis("mean", value, axis)
    count = _count(shape_of(value), axis)
    # Python float scale: weak under numpy 2 promotion, so float32 stays float32.
    # The mean of nothing is nan, as in numpy, but without its warning.
    scale = 1.0 / count if count else float("nan")
    return wrap(call_primitive(_mean, value, axis, keepdims, scale))


def var(x, axis=None, keepdims=False):
    """Population variance (`ddof=0`) over `axis`.

    Args:
        x: Tensor or array-like.
        axis: None (all), an int or a tuple of ints.
        keepdims: keep reduced axes with size 1.

    Returns:
        A Tensor.

    Raises:
        ValueError: if an axis is out of range.

    Example:
        >>> mk.ops.var([1.0, 2.0, 3.0, 4.0]).numpy()
        array(1.25, dtype=float32)
    """
    value = as_float(value_of(x))
    axis = _norm_axis("var", value, axis)
    half = getval(value).dtype == np.float16  # (squares overflow float16: in float32, as Keras)
    wide = value.astype(np.float32) if half else value
    centered = wide - mean(wide, axis=axis, keepdims=True)._value
    result = mean(centered * centered, axis=axis, keepdims=keepdims)._value
    return wrap(result.astype(np.float16) if half else result)


def std(x, axis=None, keepdims=False):
    """Population standard deviation over `axis`.

    Args:
        x: Tensor or array-like.
        axis: None (all), an int or a tuple of ints.
        keepdims: keep reduced axes with size 1.

    Returns:
        A Tensor.

    Raises:
        ValueError: if an axis is out of range.

    Example:
        >>> mk.ops.std([1.0, 3.0]).numpy()
        array(1., dtype=float32)
    """
    value = as_float(value_of(x))
    axis = _norm_axis("std", value, axis)
    return wrap(anp.sqrt(var(value, axis=axis, keepdims=keepdims)._value))


@primitive
def _max(x, axis, keepdims):
    return np.max(x, axis=axis, keepdims=keepdims)


@primitive
def _min(x, axis, keepdims):
    return np.min(x, axis=axis, keepdims=keepdims)


def _chooser_vjp(ans, x, axis, keepdims):
    """The gradient goes to the extreme elements, split evenly among ties."""
    shape = np.shape(x)

    def vjp(g):
        chosen = anp.equal(x, _expand(ans, shape, axis, keepdims))
        ties = anp.sum(chosen, axis=axis, keepdims=True).astype(x.dtype)
        return _expand(g, shape, axis, keepdims) * chosen / ties

    return vjp


defvjp(_max, _chooser_vjp)
defvjp(_min, _chooser_vjp)


def max(x, axis=None, keepdims=False, initial=None):  # noqa: A001 (Keras's name)
    """Largest element over `axis`; tied maxima share the gradient.

    Args:
        x: Tensor or array-like.
        axis: None (all), an int or a tuple of ints.
        keepdims: keep reduced axes with size 1.
        initial: None, or a number (in `x`'s dtype) also taken into the
            reduction, as numpy's: the result of an empty reduction, and a
            floor of the others (no gradient reaches `x` where it wins).

    Returns:
        A Tensor.

    Raises:
        ValueError: if an axis is out of range, or the input is empty and
            `initial` is None.

    Example:
        >>> mk.ops.max([[1.0, 5.0], [3.0, 2.0]], axis=1).numpy()
        array([5., 3.], dtype=float32)
    """
    return _extreme("max", _max, np.max, anp.maximum, x, axis, keepdims, initial)


def min(x, axis=None, keepdims=False, initial=None):  # noqa: A001 (Keras's name)
    """Smallest element over `axis`; tied minima share the gradient.

    Args:
        x: Tensor or array-like.
        axis: None (all), an int or a tuple of ints.
        keepdims: keep reduced axes with size 1.
        initial: None, or a number (in `x`'s dtype) also taken into the
            reduction, as numpy's: the result of an empty reduction, and a
            ceiling of the others (no gradient reaches `x` where it wins).

    Returns:
        A Tensor.

    Raises:
        ValueError: if an axis is out of range, or the input is empty and
            `initial` is None.

    Example:
        >>> mk.ops.min([[1.0, 5.0], [3.0, 2.0]], axis=1).numpy()
        array([1., 2.], dtype=float32)
    """
    return _extreme("min", _min, np.min, anp.minimum, x, axis, keepdims, initial)


def _extreme(name, reduce, empty_reduce, combine, x, axis, keepdims, initial):
    """`max`/`min`: the reduction, with numpy's `initial` taken in after it (if any)."""
    value = array_of(x)
    axis = _norm_axis(name, value, axis)
    if initial is None:
        return apply_unary(name, reduce, value, axis, keepdims)
    initial = np.asarray(initial, dtype=np.result_type(getval(value)))
    if np.size(getval(value)) == 0:
        return wrap(empty_reduce(getval(value), axis=axis, keepdims=keepdims, initial=initial))
    return wrap(combine(value_of(apply_unary(name, reduce, value, axis, keepdims)), initial))


@primitive
def _logsumexp(x, axis, keepdims):
    peak = np.max(x, axis=axis, keepdims=True)
    peak = np.where(np.isfinite(peak), peak, 0)
    with np.errstate(divide="ignore"):  # all -inf gives log(0) = -inf, the right answer
        out = np.log(np.sum(np.exp(x - peak), axis=axis, keepdims=True)) + peak
    return out if keepdims else np.squeeze(out, axis=axis)


def _logsumexp_vjp(ans, x, axis, keepdims):
    shape = np.shape(x)
    return lambda g: (
        _expand(g, shape, axis, keepdims) * anp.exp(x - _expand(ans, shape, axis, keepdims))
    )


defvjp(_logsumexp, _logsumexp_vjp)


def logsumexp(x, axis=None, keepdims=False):
    """`log(sum(exp(x)))` over `axis`, computed without overflow.

    Args:
        x: Tensor or array-like.
        axis: None (all), an int or a tuple of ints.
        keepdims: keep reduced axes with size 1.

    Returns:
        A Tensor.

    Raises:
        ValueError: if an axis is out of range.

    Example:
        >>> mk.ops.logsumexp([1000.0, 1000.0]).numpy()
        array(1000.6932, dtype=float32)
    """
    value = as_float(value_of(x))
    return wrap(_logsumexp(value, _norm_axis("logsumexp", value, axis), keepdims))
