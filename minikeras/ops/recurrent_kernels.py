"""The fused recurrent loops: each cell's whole-sequence forward pass, and its BPTT below it.

Plain numpy, called by the primitives of `minikeras.ops.recurrent`. Each
forward function runs every time step and returns what its backward function
needs; the backward function walks the steps in reverse (backpropagation
through time) and returns the gradients of the gate pre-activations, from
which one matrix product each gives the kernel, bias and input gradients.

Conventions:
- Arrays are time-major, `(time, batch, features)`, in processing order
  (reversed when `go_backwards`): every step reads contiguous rows.
- Gate layouts are Keras's, so weights are interchangeable with Keras:
  LSTM `i, f, c, o` in `(input_dim, 4 * units)`; GRU `z, r, h` in
  `(input_dim, 3 * units)`, with a `(2, 3 * units)` bias (input, recurrent)
  when `reset_after`.
- `keep` is the mask, `(time, batch, 1)` booleans or None: a masked step
  (False) keeps the previous state, so its gradient passes straight through.
- All gate products of a step are one matrix product, and the input
  projection of every step is one product before the loop.

The pieces every cell shares (in-place activations, the time-major layout,
the input projection and its gradient) are in `recurrent_layout`.
"""

import numpy as np

from minikeras.ops.recurrent_layout import (
    ACTIVATIONS,
    _apply,
    _gradient_steps,
    _outer_sum,
    project,
)

__all__ = [
    "gru_backward",
    "gru_forward",
    "lstm_backward",
    "lstm_forward",
    "simple_rnn_backward",
    "simple_rnn_forward",
]

# -------------------------------------------------------------- SimpleRNN


def simple_rnn_forward(x_tm, kernel, recurrent_kernel, bias, h0, keep, activation):
    """A simple RNN over time: `h_t = activation(x_t @ kernel + h_{t-1} @ recurrent_kernel + b)`.

    Args:
        x_tm: time-major inputs `(time, batch, features)`, processing order.
        kernel: `(features, units)`.
        recurrent_kernel: `(units, units)`.
        bias: `(units,)` or None.
        h0: the initial state `(batch, units)`.
        keep: the mask, `(time, batch, 1)` booleans, or None.
        activation: a name in `ACTIVATIONS`.

    Returns:
        The cache for `simple_rnn_backward`: `(h, new)`, the states
        `(time + 1, batch, units)` (h[0] = h0) and each step's unmasked new
        state `(time, batch, units)`.

    Example:
        >>> h, _ = mk.ops.recurrent_kernels.simple_rnn_forward(
        ...     np.ones((3, 1, 2)),
        ...     np.ones((2, 1)),
        ...     np.zeros((1, 1)),
        ...     None,
        ...     np.zeros((1, 1)),
        ...     None,
        ...     "linear",
        ... )
        >>> h[:, 0, 0]
        array([0., 2., 2., 2.])
    """
    new = project(x_tm, kernel, bias)  # pre-activations, then each step's new state
    steps = new.shape[0]
    h = np.empty((steps + 1, *h0.shape), dtype=new.dtype)
    h[0] = h0
    scratch = np.empty_like(h0)
    for t in range(steps):
        new[t] += np.matmul(h[t], recurrent_kernel, out=scratch)
        _apply(activation, new[t])
        np.copyto(h[t + 1], new[t])
        if keep is not None:
            np.copyto(h[t + 1], h[t], where=~keep[t])
    return h, new


def simple_rnn_backward(cache, d_outputs, d_h, recurrent_kernel, keep, activation):
    """Backpropagation through time of `simple_rnn_forward`.

    Args:
        cache: what `simple_rnn_forward` returned.
        d_outputs: the gradient of the outputs `(batch, time, units)`, in
            processing order.
        d_h: the gradient of the final state `(batch, units)`.
        recurrent_kernel: `(units, units)`.
        keep: the mask as given to the forward pass.
        activation: its name.

    Returns:
        `(d_pre, d_recurrent_kernel, d_h0)`: the gradient of each step's
        pre-activation `(time, batch, units)` (that is, of `project`'s
        output), of the recurrent kernel, and of the initial state.

    Example:
        >>> cache = (np.zeros((3, 1, 1)), np.zeros((2, 1, 1)))
        >>> d_pre, d_u, d_h0 = mk.ops.recurrent_kernels.simple_rnn_backward(
        ...     cache, np.ones((1, 2, 1)), np.zeros((1, 1)), np.ones((1, 1)), None, "linear"
        ... )
        >>> d_pre[:, 0, 0], d_h0[0, 0]
        (array([2., 1.]), np.float64(2.0))
    """
    h, new = cache
    grad = ACTIVATIONS[activation][1]
    d_new = np.empty_like(new)
    d_steps = _gradient_steps(d_outputs)
    dh = np.array(d_h, dtype=new.dtype)
    transposed = recurrent_kernel.T
    for t in reversed(range(new.shape[0])):
        dh += d_steps[t]
        if keep is not None:
            carry = dh * ~keep[t]
            np.multiply(dh, keep[t], out=d_new[t])
        else:
            np.copyto(d_new[t], dh)
        grad(d_new[t], new[t])
        np.matmul(d_new[t], transposed, out=dh)
        if keep is not None:
            dh += carry
    return d_new, _outer_sum(h[:-1], d_new), dh


# ------------------------------------------------------------------- LSTM


def lstm_forward(x_tm, kernel, recurrent_kernel, bias, h0, c0, keep, activation, gate_activation):
    """Keras's LSTM over time: `c_t = f c_{t-1} + i g`, `h_t = o activation(c_t)`.

    `i, f, o = gate_activation(...)` and `g = activation(...)` of the four
    column blocks (Keras's order i, f, c, o) of `x_t @ kernel + h_{t-1} @
    recurrent_kernel + bias`, one matrix product per step.

    Args:
        x_tm: time-major inputs `(time, batch, features)`, processing order.
        kernel: `(features, 4 * units)`.
        recurrent_kernel: `(units, 4 * units)`.
        bias: `(4 * units,)` or None.
        h0: initial output state `(batch, units)`.
        c0: initial cell state `(batch, units)`.
        keep: the mask, `(time, batch, 1)` booleans, or None.
        activation: a name in `ACTIVATIONS`.
        gate_activation: a name in `ACTIVATIONS`.

    Returns:
        The cache for `lstm_backward`: `(h, c, gates, cell)`: the states
        `(time + 1, batch, units)` (index 0 initial), the activated gates
        `(time, batch, 4 * units)`, and `activation(c_t)` `(time, batch, units)`.

    Example:
        >>> h, c, gates, cell = mk.ops.recurrent_kernels.lstm_forward(
        ...     np.zeros((2, 1, 1)),
        ...     np.zeros((1, 4)),
        ...     np.zeros((1, 4)),
        ...     None,
        ...     np.zeros((1, 1)),
        ...     np.ones((1, 1)),
        ...     None,
        ...     "tanh",
        ...     "sigmoid",
        ... )
        >>> c[:, 0, 0]  # the forget gate is sigmoid(0) = 0.5, the candidate tanh(0) = 0
        array([1.  , 0.5 , 0.25])
    """
    gates = project(x_tm, kernel, bias)  # pre-activations, then activations, in place
    steps, batch, width = gates.shape
    units = width // 4
    h = np.empty((steps + 1, batch, units), dtype=gates.dtype)
    c = np.empty_like(h)
    h[0], c[0] = h0, c0
    cell = np.empty((steps, batch, units), dtype=gates.dtype)  # activation(c_t)
    scratch = np.empty((batch, width), dtype=gates.dtype)
    product = np.empty((batch, units), dtype=gates.dtype)
    input_gates, forget_gates, candidates, output_gates = np.split(gates, 4, axis=-1)
    for t in range(steps):
        z = gates[t]
        z += np.matmul(h[t], recurrent_kernel, out=scratch)
        _apply(gate_activation, z[:, : 2 * units])
        _apply(activation, z[:, 2 * units : 3 * units])
        _apply(gate_activation, z[:, 3 * units :])
        i, f, g, o = input_gates[t], forget_gates[t], candidates[t], output_gates[t]
        np.multiply(f, c[t], out=c[t + 1])
        c[t + 1] += np.multiply(i, g, out=product)
        ACTIVATIONS[activation][0](c[t + 1], cell[t])
        np.multiply(o, cell[t], out=h[t + 1])
        if keep is not None:
            np.copyto(h[t + 1], h[t], where=~keep[t])
            np.copyto(c[t + 1], c[t], where=~keep[t])
    return h, c, gates, cell


def lstm_backward(cache, d_outputs, d_h, d_c, recurrent_kernel, keep, activation, gate_activation):
    """Backpropagation through time of `lstm_forward`.

    Args:
        cache: what `lstm_forward` returned.
        d_outputs: the gradient of the outputs `(batch, time, units)`, in
            processing order.
        d_h: the gradient of the final output state `(batch, units)`.
        d_c: the gradient of the final cell state `(batch, units)`.
        recurrent_kernel: `(units, 4 * units)`.
        keep: the mask as given to the forward pass.
        activation: its name.
        gate_activation: its name.

    Returns:
        `(d_gates, d_recurrent_kernel, d_h0, d_c0)`: the gradient of the gate
        pre-activations `(time, batch, 4 * units)` (that is, of `project`'s
        output), of the recurrent kernel, and of the initial states.

    Example:
        >>> cache = mk.ops.recurrent_kernels.lstm_forward(
        ...     np.zeros((2, 1, 1)),
        ...     np.zeros((1, 4)),
        ...     np.zeros((1, 4)),
        ...     None,
        ...     np.zeros((1, 1)),
        ...     np.ones((1, 1)),
        ...     None,
        ...     "tanh",
        ...     "sigmoid",
        ... )
        >>> _, _, d_h0, d_c0 = mk.ops.recurrent_kernels.lstm_backward(
        ...     cache,
        ...     np.zeros((1, 2, 1)),
        ...     np.zeros((1, 1)),
        ...     np.ones((1, 1)),
        ...     np.zeros((1, 4)),
        ...     None,
        ...     "tanh",
        ...     "sigmoid",
        ... )
        >>> d_c0[0, 0]  # d c_2 / d c_0: two forget gates of 0.5
        np.float64(0.25)
    """
    h, c, gates, cell = cache
    grad, gate_grad = ACTIVATIONS[activation][1], ACTIVATIONS[gate_activation][1]
    d_gates = np.empty_like(gates)
    input_gates, forget_gates, candidates, output_gates = np.split(gates, 4, axis=-1)
    d_input, d_forget, d_candidate, d_output = np.split(d_gates, 4, axis=-1)
    d_steps = _gradient_steps(d_outputs)
    dh = np.array(d_h, dtype=gates.dtype)
    dc = np.array(d_c, dtype=gates.dtype)
    through_cell = np.empty_like(dh)
    transposed = recurrent_kernel.T
    for t in reversed(range(gates.shape[0])):
        dh += d_steps[t]
        if keep is not None:
            skip = ~keep[t]
            carry_h, carry_c = dh * skip, dc * skip
            dh *= keep[t]
            dc *= keep[t]
        i, f, g, o = input_gates[t], forget_gates[t], candidates[t], output_gates[t]
        di, df, dg, do = d_input[t], d_forget[t], d_candidate[t], d_output[t]
        np.multiply(dh, cell[t], out=do)
        gate_grad(do, o)
        np.multiply(dh, o, out=through_cell)
        grad(through_cell, cell[t])
        dc += through_cell
        np.multiply(dc, g, out=di)
        gate_grad(di, i)
        np.multiply(dc, i, out=dg)
        grad(dg, g)
        np.multiply(dc, c[t], out=df)
        gate_grad(df, f)
        dc *= f
        np.matmul(d_gates[t], transposed, out=dh)
        if keep is not None:
            dh += carry_h
            dc += carry_c
    return d_gates, _outer_sum(h[:-1], d_gates), dh, dc


# -------------------------------------------------------------------- GRU


def gru_forward(
    x_tm, kernel, recurrent_kernel, bias, h0, keep, reset_after, activation, gate_activation
):
    """Keras's GRU over time: `h_t = z h_{t-1} + (1 - z) hh`.

    `z, r = gate_activation(...)`; `hh = activation(x_h + r * (h U_h + b_h))`
    with `reset_after` (one matrix product per step), else
    `activation(x_h + (r h) U_h)` (a second product).

    Args:
        x_tm: time-major inputs `(time, batch, features)`, processing order.
        kernel: `(features, 3 * units)`, Keras's order z, r, h.
        recurrent_kernel: `(units, 3 * units)`.
        bias: `(2, 3 * units)` (input, recurrent) with `reset_after`, else
            `(3 * units,)`; or None.
        h0: the initial state `(batch, units)`.
        keep: the mask, `(time, batch, 1)` booleans, or None.
        reset_after: where the reset gate applies.
        activation: a name in `ACTIVATIONS`.
        gate_activation: a name in `ACTIVATIONS`.

    Returns:
        The cache for `gru_backward`: `(h, gates, inner)`: the states
        `(time + 1, batch, units)`, the activated z, r, hh
        `(time, batch, 3 * units)`, and each step's `h U_h + b_h`
        (`reset_after`) or `r h_{t-1}` `(time, batch, units)`.

    Example:
        >>> h, _, _ = mk.ops.recurrent_kernels.gru_forward(
        ...     np.zeros((2, 1, 1)),
        ...     np.zeros((1, 3)),
        ...     np.zeros((1, 3)),
        ...     None,
        ...     np.ones((1, 1)),
        ...     None,
        ...     True,
        ...     "tanh",
        ...     "sigmoid",
        ... )
        >>> h[:, 0, 0]  # z = 0.5 and hh = 0: the state halves at each step
        array([1.  , 0.5 , 0.25])
    """
    input_bias, recurrent_bias = bias, None
    if reset_after and bias is not None:
        input_bias, recurrent_bias = bias[0], bias[1]
    gates = project(x_tm, kernel, input_bias)  # x parts, then z, r, hh in place
    steps, batch, width = gates.shape
    units = width // 3
    h = np.empty((steps + 1, batch, units), dtype=gates.dtype)
    h[0] = h0
    # reset_after: each step's h U_h + b_h (before the reset gate); else r * h_{t-1}.
    inner = np.empty((steps, batch, units), dtype=gates.dtype)
    scratch = np.empty((batch, width if reset_after else 2 * units), dtype=gates.dtype)
    candidate = np.empty((batch, units), dtype=gates.dtype)
    gate_kernel, candidate_kernel = np.split(recurrent_kernel, [2 * units], axis=1)
    for t in range(steps):
        x = gates[t]
        if reset_after:
            np.matmul(h[t], recurrent_kernel, out=scratch)
            if recurrent_bias is not None:
                scratch += recurrent_bias
            np.copyto(inner[t], scratch[:, 2 * units :])
        else:
            np.matmul(h[t], gate_kernel, out=scratch)
        x[:, : 2 * units] += scratch[:, : 2 * units]
        _apply(gate_activation, x[:, : 2 * units])
        z, r, hh = x[:, :units], x[:, units : 2 * units], x[:, 2 * units :]
        if reset_after:
            hh += np.multiply(r, inner[t], out=candidate)
        else:
            np.multiply(r, h[t], out=inner[t])
            hh += np.matmul(inner[t], candidate_kernel, out=candidate)
        _apply(activation, hh)
        # h_t = hh + z (h_{t-1} - hh)
        np.subtract(h[t], hh, out=h[t + 1])
        h[t + 1] *= z
        h[t + 1] += hh
        if keep is not None:
            np.copyto(h[t + 1], h[t], where=~keep[t])
    return h, gates, inner


def gru_backward(
    cache, d_outputs, d_h, recurrent_kernel, keep, reset_after, activation, gate_activation
):
    """Backpropagation through time of `gru_forward`.

    Args:
        cache: what `gru_forward` returned.
        d_outputs: the gradient of the outputs `(batch, time, units)`, in
            processing order.
        d_h: the gradient of the final state `(batch, units)`.
        recurrent_kernel: `(units, 3 * units)`.
        keep: the mask as given to the forward pass.
        reset_after: as given to the forward pass.
        activation: its name.
        gate_activation: its name.

    Returns:
        `(d_gates, d_recurrent_kernel, d_recurrent, d_h0)`: the gradient of
        the input projection `(time, batch, 3 * units)`, of the recurrent
        kernel, of each step's `h U + b_rec` (whose sum is the recurrent
        bias's gradient; None unless `reset_after`), and of the initial state.

    Example:
        >>> cache = mk.ops.recurrent_kernels.gru_forward(
        ...     np.zeros((2, 1, 1)),
        ...     np.zeros((1, 3)),
        ...     np.zeros((1, 3)),
        ...     None,
        ...     np.ones((1, 1)),
        ...     None,
        ...     True,
        ...     "tanh",
        ...     "sigmoid",
        ... )
        >>> *_, d_h0 = mk.ops.recurrent_kernels.gru_backward(
        ...     cache,
        ...     np.zeros((1, 2, 1)),
        ...     np.ones((1, 1)),
        ...     np.zeros((1, 3)),
        ...     None,
        ...     True,
        ...     "tanh",
        ...     "sigmoid",
        ... )
        >>> d_h0[0, 0]  # two update gates of 0.5
        np.float64(0.25)
    """
    h, gates, inner = cache
    grad, gate_grad = ACTIVATIONS[activation][1], ACTIVATIONS[gate_activation][1]
    units = h.shape[-1]
    d_gates = np.empty_like(gates)
    # reset_after: gradients of h U + b_rec, whose candidate third differs from x's.
    d_recurrent = np.empty_like(gates) if reset_after else None
    d_steps = _gradient_steps(d_outputs)
    dh = np.array(d_h, dtype=gates.dtype)
    d_previous = np.empty_like(dh)
    transposed = recurrent_kernel.T
    gate_transposed, candidate_transposed = transposed[: 2 * units], transposed[2 * units :]
    for t in reversed(range(gates.shape[0])):
        dh += d_steps[t]
        if keep is not None:
            carry = dh * ~keep[t]
            dh *= keep[t]
        x, dx = gates[t], d_gates[t]
        z, r, hh = x[:, :units], x[:, units : 2 * units], x[:, 2 * units :]
        dz, dr, dhh = dx[:, :units], dx[:, units : 2 * units], dx[:, 2 * units :]
        np.subtract(h[t], hh, out=dz)
        dz *= dh
        gate_grad(dz, z)
        np.subtract(1.0, z, out=dhh)
        dhh *= dh
        grad(dhh, hh)
        np.multiply(dh, z, out=d_previous)
        if reset_after:
            np.multiply(dhh, inner[t], out=dr)
            gate_grad(dr, r)
            rec = d_recurrent[t]
            np.copyto(rec[:, : 2 * units], dx[:, : 2 * units])
            np.multiply(dhh, r, out=rec[:, 2 * units :])
            d_previous += np.matmul(rec, transposed, out=dh)
        else:
            d_reset = np.matmul(dhh, candidate_transposed)
            np.multiply(d_reset, h[t], out=dr)
            gate_grad(dr, r)
            d_reset *= r
            d_previous += d_reset
            d_previous += np.matmul(dx[:, : 2 * units], gate_transposed, out=dh)
        if keep is not None:
            d_previous += carry
        dh, d_previous = d_previous, dh
    if reset_after:
        return d_gates, _outer_sum(h[:-1], d_recurrent), d_recurrent, dh
    d_gate_part, d_candidate_part = np.split(d_gates, [2 * units], axis=-1)
    d_kernel = np.concatenate(
        [_outer_sum(h[:-1], d_gate_part), _outer_sum(inner, d_candidate_part)], axis=1
    )
    return d_gates, d_kernel, None, dh
