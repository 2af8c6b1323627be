"""Pooling: `max_pool` and `average_pool`, 1-D to 3-D, computed channels last.

Both loop over the window's taps, each a strided view of the (padded) inputs,
so no window is ever copied out. Each forward primitive has its transpose as a
primitive too, so gradients of any order flow:

- max: `_max_pool` keeps, per output, which tap won (the first of equal
  maxima, as TensorFlow does); `_max_pool_backprop` routes the gradient to the
  winners and `_max_pool_gather` reads values back from them.
- average: `_average_pool` sums the taps and divides by the number of real
  (unpadded) inputs in each window, as Keras does with `"same"` padding;
  `_average_pool_backprop` spreads the gradient back over the windows.
"""

import functools

import numpy as np
from autograd.extend import defvjp, primitive
from autograd.tracer import getval, isbox

from minikeras.engine.primitive import call_primitive, defvjp_fused, fused_primitive
from minikeras.engine.replay import replay_inference
from minikeras.ops.core import as_float, op_error, value_of, wrap
from minikeras.ops.windows import (
    Windows,
    check_data_format,
    in_channels_last,
    normalize_padding,
    normalize_tuple,
    pad,
)

__all__ = ["average_pool", "max_pool"]


def _crop(padded, windows):
    if windows.padded == windows.inputs:
        return padded
    return np.ascontiguousarray(padded[windows.interior()])


# ----------------------------------------------------------------------- max


def _max_and_winners(x, windows, want_winners):
    """The windows' maxima, and (if wanted) the number of the first tap holding each."""
    padded = pad(x, windows, -np.inf)
    indices = [index for _, index in windows.taps()]
    out = padded[indices[0]].copy()
    if not want_winners:
        for index in indices[1:]:
            np.maximum(out, padded[index], out=out)
        return out, None
    # Plain ufuncs only: np.copyto(..., where=) is ten times slower on these views.
    dtype = np.uint8 if len(indices) < 256 else np.uint32
    winners, wins = np.zeros(out.shape, dtype), np.empty(out.shape, bool)
    numbered = np.empty(out.shape, dtype)
    for number, index in enumerate(indices[1:], 1):
        view = padded[index]
        np.greater(view, out, out=wins)  # strictly: the first of equal maxima stays
        np.maximum(out, view, out=out)
        # Tap numbers only grow, so the latest winner is the largest number that won.
        np.multiply(wins, dtype(number), out=numbered)
        np.maximum(winners, numbered, out=winners)
    return out, winners


@fused_primitive
def _max_pool(x, windows, want_winners):
    """The maxima; the winners are the residual (if wanted: only a tape needs them)."""
    return _max_and_winners(x, windows, want_winners)


def _max_pool_vjp(argnums, ans, args, winners):
    x, windows, _ = args
    if winners is None:
        winners = _max_and_winners(getval(x), windows, True)[1]
    return lambda g: [_max_pool_backprop(g, winners, windows)]


defvjp_fused(_max_pool, _max_pool_vjp)
# An inference replay (recorded under a tape, which wants the winners) skips them.
replay_inference(_max_pool, lambda x, windows, want_winners: _max_and_winners(x, windows, False))


@primitive
def _max_pool_backprop(g, winners, windows):
    shape = (g.shape[0], *windows.padded, g.shape[-1])
    tiled = all(
        k == s and o * s == n
        for k, s, o, n in zip(windows.kernel, windows.strides, windows.outputs, windows.padded)
    )
    # Windows that tile the input write every position exactly once: no zeros needed.
    padded = np.empty(shape, g.dtype) if tiled else np.zeros(shape, g.dtype)
    won = np.empty(winners.shape, bool)
    for number, (_, index) in enumerate(windows.taps()):
        np.equal(winners, number, out=won)
        if windows.overlapping:
            padded[index] += g * won
        else:
            np.multiply(g, won, out=padded[index])
    return _crop(padded, windows)


@primitive
def _max_pool_gather(h, winners, windows):
    padded = pad(h, windows)
    out = np.zeros(winners.shape, h.dtype)
    for number, (_, index) in enumerate(windows.taps()):
        out += padded[index] * (winners == number)
    return out


defvjp(_max_pool_backprop, lambda ans, g, winners, windows: lambda h: _max_pool_gather(
    h, winners, windows))  # fmt: skip
defvjp(_max_pool_gather, lambda ans, h, winners, windows: lambda g: _max_pool_backprop(
    g, winners, windows))  # fmt: skip


# ------------------------------------------------------------------- average


@functools.lru_cache(maxsize=64)
def _window_sizes(windows, dtype):
    """How many real (unpadded) inputs each window covers: `(1, *outputs, 1)`, or one number."""
    if windows.padded == windows.inputs:
        return float(np.prod(windows.kernel))
    ones = pad(np.ones((1, *windows.inputs, 1), dtype), windows)
    sizes = sum(ones[index] for _, index in windows.taps())
    sizes.flags.writeable = False
    return sizes


@primitive
def _average_pool(x, windows):
    padded = pad(x, windows)
    out = None
    for _, index in windows.taps():
        if out is None:
            out = padded[index].copy()
        else:
            out += padded[index]
    out /= _window_sizes(windows, out.dtype.str)
    return out


@primitive
def _average_pool_backprop(g, windows):
    share = g / _window_sizes(windows, g.dtype.str)
    padded = np.zeros((g.shape[0], *windows.padded, g.shape[-1]), g.dtype)
    for _, index in windows.taps():
        padded[index] += share
    return _crop(padded, windows)


defvjp(_average_pool, lambda ans, x, windows: lambda g: _average_pool_backprop(g, windows))
defvjp(_average_pool_backprop, lambda ans, g, windows: lambda h: _average_pool(h, windows))


# ------------------------------------------------------------------ the ops


def _pool_operands(op, inputs, pool_size, strides, padding):
    x = as_float(value_of(inputs))
    rank = np.ndim(x) - 2
    if rank not in (1, 2, 3):
        raise op_error(op, "expected inputs (batch, *spatial, channels), 1 to 3 spatial axes", x)
    pool = normalize_tuple(op, "pool_size", pool_size, rank)
    steps = pool if strides is None else normalize_tuple(op, "strides", strides, rank)
    padding = normalize_padding(op, padding)
    return x, Windows.of(op, np.shape(x)[1:-1], pool, steps, padding, (1,) * rank, (x,))


def max_pool(inputs, pool_size, strides=None, padding="valid", data_format=None):
    """Max pooling: the largest value of each window, channel by channel.

    With `"same"` padding the padding never wins. The gradient goes to the
    first of equal maxima.

    Args:
        inputs: Tensor `(batch, *spatial, channels)`, 1 to 3 spatial axes.
        pool_size: an int or one int per spatial axis.
        strides: an int, one per spatial axis, or None (then `pool_size`).
        padding: `"valid"` or `"same"`.
        data_format: `"channels_last"` (inputs `(batch, *spatial, channels)`) or
            `"channels_first"` (`(batch, channels, *spatial)`, outputs likewise,
            by transposing); None means `mk.config.image_data_format()`.

    Returns:
        A Tensor `(batch, *outputs, channels)`.

    Raises:
        ValueError: for a wrong rank, a window wider than a `"valid"` input,
            or a bad argument.

    Example:
        >>> x = np.array([1.0, 3.0, 2.0, 5.0, 4.0], "float32").reshape(1, 5, 1)
        >>> mk.ops.max_pool(x, 2).numpy()[0, :, 0]
        array([3., 5.], dtype=float32)
        >>> mk.ops.max_pool(x, 2, padding="same").numpy()[0, :, 0]
        array([3., 5., 4.], dtype=float32)
    """
    if check_data_format("max_pool", data_format) == "channels_first":
        return in_channels_last(max_pool, inputs, pool_size, strides, padding, "channels_last")
    x, windows = _pool_operands("max_pool", inputs, pool_size, strides, padding)
    return wrap(call_primitive(_max_pool, x, windows, isbox(x)))


def average_pool(inputs, pool_size, strides=None, padding="valid", data_format=None):
    """Average pooling: the mean of each window, channel by channel.

    With `"same"` padding each window's mean is over its real inputs only.

    Args:
        inputs: Tensor `(batch, *spatial, channels)`, 1 to 3 spatial axes.
        pool_size: an int or one int per spatial axis.
        strides: an int, one per spatial axis, or None (then `pool_size`).
        padding: `"valid"` or `"same"`.
        data_format: `"channels_last"` (inputs `(batch, *spatial, channels)`) or
            `"channels_first"` (`(batch, channels, *spatial)`, outputs likewise,
            by transposing); None means `mk.config.image_data_format()`.

    Returns:
        A Tensor `(batch, *outputs, channels)`.

    Raises:
        ValueError: for a wrong rank, a window wider than a `"valid"` input,
            or a bad argument.

    Example:
        >>> x = np.array([1.0, 3.0, 2.0, 5.0, 4.0], "float32").reshape(1, 5, 1)
        >>> mk.ops.average_pool(x, 2).numpy()[0, :, 0]
        array([2. , 3.5], dtype=float32)
        >>> mk.ops.average_pool(x, 2, padding="same").numpy()[0, :, 0]
        array([2. , 3.5, 4. ], dtype=float32)
    """
    if check_data_format("average_pool", data_format) == "channels_first":
        return in_channels_last(average_pool, inputs, pool_size, strides, padding, "channels_last")
    x, windows = _pool_operands("average_pool", inputs, pool_size, strides, padding)
    return wrap(_average_pool(x, windows))
