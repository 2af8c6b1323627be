"""The recurrent ops as fused primitives: a whole sequence is one node on the tape.

Design note. Recorded op by op, an LSTM step is some twenty autograd
primitives, each costing microseconds of bookkeeping forward and backward;
over 50 steps that is slower than the arithmetic itself. So each op is ONE
primitive for the whole sequence: the forward pass and a hand-written
backpropagation through time live in `recurrent_kernels` (plain numpy, all
gate products of a step in one matrix product, the input projection of all
steps in one product before the loop). Each is a `fused_primitive`
returning (outputs, final states), with the states of every step as the
residuals its VJP reuses, so a tape records the sequence as one node.

The primitives take checked numpy values (`ops.recurrent` checks and calls
them) and activations by name, from those `recurrent_layout.ACTIVATIONS`
knows. An initial state given as None is zeros, made here inside the op,
so that a recorded step (`engine.replay`) holds no array computed outside
its ops and replays a layer's default start.
"""

import numpy as np
from autograd.extend import defvjp, primitive
from autograd.tracer import getval, isbox

from minikeras.engine.primitive import defvjp_fused, fused_primitive
from minikeras.ops import recurrent_kernels as kernels
from minikeras.ops import recurrent_layout as layout

__all__ = []  # private primitives, called by the ops of ops.recurrent


def _no_second_order(op, values):
    if any(isbox(v) for v in values):
        raise NotImplementedError(
            f"{op}: gradients of its gradient are not supported (its backward pass is plain numpy)"
        )


def _zeros_if_none(state, x, recurrent_kernel, dtype):
    """`state`, or the zero `(batch, units)` state a sequence starts from by default."""
    if state is not None:
        return state
    return np.zeros((x.shape[0], recurrent_kernel.shape[0]), dtype=dtype)


@primitive
def _batch_zeros(x, size, dtype):
    """Zeros `(batch, size)` for the batch of `x`: a default state, made by an op of `x`."""
    return np.zeros((np.shape(x)[0], size), dtype=dtype)


# (the zeros do not depend on x's values: its gradient from them is zero)
defvjp(_batch_zeros, lambda ans, x, size, dtype: lambda g: np.zeros(np.shape(x), np.result_type(x)))


def _residuals(op, args, residuals):
    """The forward's residuals, computed again if the forward did not keep them."""
    if residuals is None:
        residuals = op.forward(*[getval(arg) for arg in args])[1]
    return residuals


@fused_primitive
def _simple_rnn(x, kernel, recurrent_kernel, bias, h0, mask, go_backwards, activation):
    h0 = _zeros_if_none(h0, x, recurrent_kernel, kernel.dtype)
    x_tm = layout.time_major(x, go_backwards, kernel.dtype)
    keep = layout.mask_time_major(mask, go_backwards)
    h, new = kernels.simple_rnn_forward(x_tm, kernel, recurrent_kernel, bias, h0, keep, activation)
    return (np.swapaxes(h[1:], 0, 1), h[-1]), (h, new, x_tm)


def _simple_rnn_vjp(argnums, ans, args, residuals):
    x, kernel, recurrent_kernel, bias, h0, mask, go_backwards, activation = args
    h, new, x_tm = _residuals(_simple_rnn, args, residuals)

    def vjp(g):
        d_outputs, d_h = g[0], g[1]
        _no_second_order("simple_rnn", (d_outputs, d_h, kernel, recurrent_kernel))
        keep = layout.mask_time_major(mask, go_backwards)
        d_new, d_recurrent, d_h0 = kernels.simple_rnn_backward(
            (h, new), d_outputs, d_h, recurrent_kernel, keep, activation
        )
        d_x, d_kernel, d_bias = layout.project_backward(
            d_new, x_tm, kernel, go_backwards, 0 in argnums
        )
        grads = (d_x, d_kernel, d_recurrent, d_bias, d_h0)
        return [grads[i] for i in argnums]

    return vjp


defvjp_fused(_simple_rnn, _simple_rnn_vjp)


@fused_primitive
def _lstm(x, kernel, recurrent_kernel, bias, h0, c0, mask, go_backwards, activation, gate):
    h0 = _zeros_if_none(h0, x, recurrent_kernel, kernel.dtype)
    c0 = _zeros_if_none(c0, x, recurrent_kernel, kernel.dtype)
    x_tm = layout.time_major(x, go_backwards, kernel.dtype)
    keep = layout.mask_time_major(mask, go_backwards)
    cache = kernels.lstm_forward(
        x_tm, kernel, recurrent_kernel, bias, h0, c0, keep, activation, gate
    )
    h, c = cache[0], cache[1]
    return (np.swapaxes(h[1:], 0, 1), h[-1], c[-1]), (*cache, x_tm)


def _lstm_vjp(argnums, ans, args, residuals):
    x, kernel, recurrent_kernel, bias, h0, c0, mask, go_backwards, activation, gate = args
    *cache, x_tm = _residuals(_lstm, args, residuals)

    def vjp(g):
        d_outputs, d_h, d_c = g[0], g[1], g[2]
        _no_second_order("lstm", (d_outputs, d_h, d_c, kernel, recurrent_kernel))
        keep = layout.mask_time_major(mask, go_backwards)
        d_gates, d_recurrent, d_h0, d_c0 = kernels.lstm_backward(
            cache, d_outputs, d_h, d_c, recurrent_kernel, keep, activation, gate
        )
        d_x, d_kernel, d_bias = layout.project_backward(
            d_gates, x_tm, kernel, go_backwards, 0 in argnums
        )
        grads = (d_x, d_kernel, d_recurrent, d_bias, d_h0, d_c0)
        return [grads[i] for i in argnums]

    return vjp


defvjp_fused(_lstm, _lstm_vjp)


@fused_primitive
def _gru(x, kernel, recurrent_kernel, bias, h0, mask, go_backwards, reset_after, activation, gate):
    h0 = _zeros_if_none(h0, x, recurrent_kernel, kernel.dtype)
    x_tm = layout.time_major(x, go_backwards, kernel.dtype)
    keep = layout.mask_time_major(mask, go_backwards)
    cache = kernels.gru_forward(
        x_tm, kernel, recurrent_kernel, bias, h0, keep, reset_after, activation, gate
    )
    h = cache[0]
    return (np.swapaxes(h[1:], 0, 1), h[-1]), (*cache, x_tm)


def _gru_vjp(argnums, ans, args, residuals):
    x, kernel, recurrent_kernel, bias, h0, mask, go_backwards, reset_after, activation, gate = args
    *cache, x_tm = _residuals(_gru, args, residuals)

    def vjp(g):
        d_outputs, d_h = g[0], g[1]
        _no_second_order("gru", (d_outputs, d_h, kernel, recurrent_kernel))
        keep = layout.mask_time_major(mask, go_backwards)
        d_gates, d_recurrent, d_inner, d_h0 = kernels.gru_backward(
            cache, d_outputs, d_h, recurrent_kernel, keep, reset_after, activation, gate
        )
        d_x, d_kernel, d_bias = layout.project_backward(
            d_gates, x_tm, kernel, go_backwards, 0 in argnums
        )
        if reset_after and bias is not None:
            d_bias = np.stack([d_bias, d_inner.reshape(-1, d_inner.shape[-1]).sum(axis=0)])
        grads = (d_x, d_kernel, d_recurrent, d_bias, d_h0)
        return [grads[i] for i in argnums]

    return vjp


defvjp_fused(_gru, _gru_vjp)
