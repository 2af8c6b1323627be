"""The fused SimpleRNN loop, `h_t = activation(x_t W + h_{t-1} U + b)`, and its BPTT.

The conventions (time-major arrays, `keep` masks) are the package's, in
`minikeras.ops.recurrent_kernels`.
"""

import numpy as np

from minikeras.ops.recurrent_layout import ACTIVATIONS, _apply, _gradient_steps, _outer_sum, project

__all__ = ["simple_rnn_backward", "simple_rnn_forward"]


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
