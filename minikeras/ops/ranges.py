"""Evenly spaced values, windows and the constant matrices numpy builds: `linspace`,
`logspace`, `geomspace`, the windows `bartlett`, `blackman`, `hamming`, `hanning` and
`kaiser`, `tri`, `identity`.

`linspace` and `geomspace` are differentiable in `start` and `stop` (arrays
of them make one sequence per element). Their values are numpy's (the last
exactly `stop` when `endpoint`); the gradients sit beside them: a linspace
value is `start + (stop - start) * t` for the fractions `t`, a geomspace
value `start * (stop / start) ** t`. `logspace` is `base ** linspace`. The
windows are numpy's, in floatx.
"""

import autograd.numpy as anp
import numpy as np
from autograd.extend import defvjp, primitive
from autograd.tracer import getval

from minikeras import config
from minikeras.engine.primitive import call_primitive
from minikeras.ops.axes import broadcast_to
from minikeras.ops.core import array_of, as_float, normalize_axis, promote_operands, value_of, wrap
from minikeras.ops.creation import cast, eye

__all__ = [
    "bartlett",
    "blackman",
    "geomspace",
    "hamming",
    "hanning",
    "identity",
    "kaiser",
    "linspace",
    "logspace",
    "tri",
]


@primitive
def _linspace(start, stop, num, endpoint, axis):
    return np.linspace(start, stop, num, endpoint=endpoint, axis=axis, dtype=start.dtype)


@primitive
def _geomspace(start, stop, num, endpoint, axis):
    return np.geomspace(start, stop, num, endpoint=endpoint, axis=axis, dtype=start.dtype)


def _fractions(start, num, endpoint, axis):
    """`t`, each value's fraction of the way from start to stop, shaped to broadcast
    against the result (`num` along `axis`)."""
    steps = (num - 1 if endpoint else num) or 1
    shape = [1] * (np.ndim(start) + 1)
    shape[axis] = num
    return (np.arange(num) / steps).astype(getval(start).dtype).reshape(shape)


def _linspace_vjp(argnum):
    def maker(ans, start, stop, num, endpoint, axis):
        t = _fractions(start, num, endpoint, axis)
        weight = 1 - t if argnum == 0 else t
        return lambda g: anp.sum(g * weight, axis=axis)

    return maker


def _geomspace_vjp(argnum):
    def maker(ans, start, stop, num, endpoint, axis):
        t = _fractions(start, num, endpoint, axis)
        end = anp.expand_dims(start if argnum == 0 else stop, axis)
        weight = (1 - t if argnum == 0 else t) * ans / end
        return lambda g: anp.sum(g * weight, axis=axis)

    return maker


defvjp(_linspace, _linspace_vjp(0), _linspace_vjp(1))
defvjp(_geomspace, _geomspace_vjp(0), _geomspace_vjp(1))


def _ends(op, start, stop, num, axis):
    """start and stop in one float dtype and one shape, and the axis made non-negative."""
    if isinstance(num, bool) or not isinstance(num, (int, np.integer)) or num < 0:
        raise ValueError(f"{op}: num must be a non-negative int, got {num!r}")
    first, last = promote_operands(start, stop)  # (a numpy float64 end takes a Tensor's dtype)
    first, last = as_float(array_of(first)), as_float(array_of(last))
    if first.dtype != last.dtype:
        dtype = np.result_type(first.dtype, last.dtype)
        first, last = value_of(cast(first, dtype)), value_of(cast(last, dtype))
    shape = np.broadcast_shapes(np.shape(first), np.shape(last))
    if np.shape(first) != shape:
        first = value_of(broadcast_to(first, shape))
    if np.shape(last) != shape:
        last = value_of(broadcast_to(last, shape))
    return first, last, normalize_axis(op, axis, len(shape) + 1, first, last)


def _as_dtype(values, dtype):
    return values if dtype is None else cast(values, dtype)


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0):
    """`num` evenly spaced values from `start` to `stop`.

    Differentiable in `start` and `stop`.

    Args:
        start: the first value: a number or a Tensor (one sequence per element).
        stop: the last value (excluded when `endpoint` is False).
        num: the number of values, a non-negative int.
        endpoint: whether `stop` is the last value.
        retstep: whether to return the spacing as well.
        dtype: the result's dtype; by default floatx (or the ends' float dtype).
            An integer dtype rounds the values down.
        axis: where the values' axis goes, for array `start` and `stop`.

    Returns:
        A Tensor, or `(values, step)` with `retstep`.

    Raises:
        ValueError: for a negative `num`, or shapes of `start` and `stop` that do
            not broadcast.

    Example:
        >>> mk.ops.linspace(0, 1, 5).numpy()
        array([0.  , 0.25, 0.5 , 0.75, 1.  ], dtype=float32)
    """
    first, last, axis = _ends("linspace", start, stop, num, axis)
    values = _as_dtype(wrap(call_primitive(_linspace, first, last, num, endpoint, axis)), dtype)
    if not retstep:
        return values
    steps = num - 1 if endpoint else num
    step = (last - first) / steps if steps > 0 else np.full(np.shape(first), np.nan, first.dtype)
    return values, _as_dtype(wrap(step), dtype)


def logspace(start, stop, num=50, endpoint=True, base=10, dtype=None, axis=0):
    """`num` values evenly spaced on a log scale: `base ** linspace(start, stop, num)`.

    Args:
        start: the first exponent: a number or a Tensor.
        stop: the last exponent (excluded when `endpoint` is False).
        num: the number of values.
        endpoint: whether `base ** stop` is the last value.
        base: the base of the logarithm.
        dtype: the result's dtype; by default floatx (or the ends' float dtype).
        axis: where the values' axis goes, for array `start` and `stop`.

    Returns:
        A Tensor.

    Raises:
        ValueError: for a negative `num`.

    Example:
        >>> mk.ops.logspace(0, 2, 3).numpy()
        array([  1.,  10., 100.], dtype=float32)
    """
    first, last, axis = _ends("logspace", start, stop, num, axis)
    exponents = call_primitive(_linspace, first, last, num, endpoint, axis)
    base = np.asarray(getval(value_of(base)), dtype=first.dtype)
    return _as_dtype(wrap(anp.power(base, exponents)), dtype)


def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    """`num` values in geometric progression from `start` to `stop`.

    Differentiable in `start` and `stop`.

    Args:
        start: the first value, not zero: a number or a Tensor.
        stop: the last value (excluded when `endpoint` is False), of `start`'s sign.
        num: the number of values.
        endpoint: whether `stop` is the last value.
        dtype: the result's dtype; by default floatx (or the ends' float dtype).
        axis: where the values' axis goes, for array `start` and `stop`.

    Returns:
        A Tensor.

    Raises:
        ValueError: for a negative `num`, a zero end, or ends of different signs
            (numpy would give complex values).

    Example:
        >>> mk.ops.geomspace(1, 1000, 4).numpy().round(3)
        array([   1.,   10.,  100., 1000.], dtype=float32)
    """
    first, last, axis = _ends("geomspace", start, stop, num, axis)
    signs = np.sign(getval(first)) * np.sign(getval(last))
    if np.any(signs <= 0):
        raise ValueError(
            "geomspace: start and stop must be non-zero and of one sign, got "
            f"{getval(first)!r} and {getval(last)!r}"
        )
    return _as_dtype(wrap(call_primitive(_geomspace, first, last, num, endpoint, axis)), dtype)


def tri(N, M=None, k=0, dtype=None):  # noqa: N803 (Keras's names)
    """An `(N, M)` matrix of ones at and below the `k`-th diagonal, zeros above.

    Args:
        N: the number of rows.
        M: the number of columns (`N` if None).
        k: the diagonal (0: the main one, -1: below it, 1: above it).
        dtype: float32 unless given.

    Returns:
        A Tensor.

    Example:
        >>> mk.ops.tri(2, 3, k=1, dtype="int32").numpy()
        array([[1, 1, 0],
               [1, 1, 1]], dtype=int32)
    """
    return wrap(np.tri(N, M, k, dtype=config.standardize_dtype(dtype)))


def identity(n, dtype=None):
    """The `(n, n)` identity matrix: `eye(n)`.

    Args:
        n: the number of rows and columns.
        dtype: float32 unless given.

    Returns:
        A Tensor.

    Example:
        >>> mk.ops.identity(2, dtype="int32").numpy()
        array([[1, 0],
               [0, 1]], dtype=int32)
    """
    return eye(n, dtype=dtype)


def _window(op, function, x, *args):
    if isinstance(x, bool) or not isinstance(x, (int, np.integer)):
        x = getval(value_of(x))
        if np.ndim(x) or np.result_type(x).kind not in "iu":
            raise ValueError(f"{op}: x must be an int, the window's length, got {x!r}")
    return wrap(function(int(x), *args).astype(config.floatx()))


def bartlett(x):
    """The Bartlett (triangular) window of `x` points: up from 0 to 1 and back, linearly.

    Args:
        x: the number of points, an int (0 gives an empty window).

    Returns:
        A 1-d floatx Tensor.

    Raises:
        ValueError: if `x` is not an int.

    Example:
        >>> mk.ops.bartlett(5).numpy()
        array([0. , 0.5, 1. , 0.5, 0. ], dtype=float32)
    """
    return _window("bartlett", np.bartlett, x)


def blackman(x):
    """The Blackman window of `x` points.

    `0.42 - 0.5 cos(2 pi n / (x - 1)) + 0.08 cos(4 pi n / (x - 1))` for `n` in `[0, x)`.

    Args:
        x: the number of points, an int.

    Returns:
        A 1-d floatx Tensor.

    Raises:
        ValueError: if `x` is not an int.

    Example:
        >>> mk.ops.blackman(3).numpy().round(6)
        array([-0.,  1., -0.], dtype=float32)
    """
    return _window("blackman", np.blackman, x)


def hamming(x):
    """The Hamming window of `x` points: `0.54 - 0.46 cos(2 pi n / (x - 1))`.

    Args:
        x: the number of points, an int.

    Returns:
        A 1-d floatx Tensor.

    Raises:
        ValueError: if `x` is not an int.

    Example:
        >>> mk.ops.hamming(3).numpy()
        array([0.08, 1.  , 0.08], dtype=float32)
    """
    return _window("hamming", np.hamming, x)


def hanning(x):
    """The Hann window of `x` points: `0.5 - 0.5 cos(2 pi n / (x - 1))`.

    Args:
        x: the number of points, an int.

    Returns:
        A 1-d floatx Tensor.

    Raises:
        ValueError: if `x` is not an int.

    Example:
        >>> mk.ops.hanning(5).numpy()
        array([0. , 0.5, 1. , 0.5, 0. ], dtype=float32)
    """
    return _window("hanning", np.hanning, x)


def kaiser(x, beta):
    """The Kaiser window of `x` points: `I0(beta sqrt(1 - (2n / (x - 1) - 1) ** 2)) / I0(beta)`.

    Args:
        x: the number of points, an int.
        beta: the shape parameter (0: a rectangle; larger: narrower).

    Returns:
        A 1-d floatx Tensor.

    Raises:
        ValueError: if `x` is not an int.

    Example:
        >>> mk.ops.kaiser(3, 0.0).numpy()
        array([1., 1., 1.], dtype=float32)
    """
    return _window("kaiser", np.kaiser, x, float(getval(value_of(beta))))
