"""The fused GRU loop (Keras's gates z, r, h; reset before or after) and its BPTT.

The conventions (time-major arrays, `keep` masks, gate layouts) are the
package's, in `minikeras.ops.recurrent_kernels`.
"""

import numpy as np

from minikeras.ops.recurrent_layout import ACTIVATIONS, _apply, _gradient_steps, _outer_sum, project

__all__ = ["gru_backward", "gru_forward"]


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
