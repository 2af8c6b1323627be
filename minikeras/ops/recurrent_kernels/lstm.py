"""The fused LSTM loop (Keras's gates i, f, c, o) and its BPTT.

The conventions (time-major arrays, `keep` masks, gate layouts) are the
package's, in `minikeras.ops.recurrent_kernels`.
"""

import numpy as np

from minikeras.ops.recurrent_layout import ACTIVATIONS, _apply, _gradient_steps, _outer_sum, project

__all__ = ["lstm_backward", "lstm_forward"]


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
    units = h.shape[-1]
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
        np.multiply(dc, c[t], out=df)
        gate_grad(d_gates[t, :, : 2 * units], gates[t, :, : 2 * units])  # i and f, adjacent
        np.multiply(dc, i, out=dg)
        grad(dg, g)
        dc *= f
        np.matmul(d_gates[t], transposed, out=dh)
        if keep is not None:
            dh += carry_h
            dc += carry_c
    return d_gates, _outer_sum(h[:-1], d_gates), dh, dc
