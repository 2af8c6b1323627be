"""What the fused recurrent loops share: in-place activations and the time-major layout.

`recurrent_kernels` runs each cell's steps with these; `ops.recurrent` turns a
layer's `(batch, time, features)` inputs and masks into this layout and back,
and takes the input projection's gradient once for all steps.
"""

import numpy as np

__all__ = [
    "ACTIVATIONS",
    "mask_time_major",
    "project",
    "project_backward",
    "time_major",
]


# ------------------------------------------------------------- activations


def _sigmoid(x, out):
    # The tanh form: no overflow, and no float64 temporaries.
    np.multiply(x, 0.5, out=out)
    np.tanh(out, out=out)
    out *= 0.5
    out += 0.5


def _sigmoid_grad(g, y):
    g *= y
    g *= 1.0 - y


def _tanh_grad(g, y):
    g *= 1.0 - y * y


def _copy(x, out):
    if out is not x:
        np.copyto(out, x)


# name -> (apply(x, out), multiply g in place by the derivative given the output y)
ACTIVATIONS = {
    "tanh": (lambda x, out: np.tanh(x, out=out), _tanh_grad),
    "sigmoid": (_sigmoid, _sigmoid_grad),
    "relu": (lambda x, out: np.maximum(x, 0, out=out), lambda g, y: np.multiply(g, y > 0, out=g)),
    "linear": (_copy, lambda g, y: None),
}


def _apply(name, x):
    ACTIVATIONS[name][0](x, x)


# ----------------------------------------------------------------- layout


def time_major(x, go_backwards, dtype=None):
    """`(batch, time, ...)` -> contiguous `(time, batch, ...)` in processing order.

    Args:
        x: an array of shape `(batch, time, ...)`.
        go_backwards: reverse the time axis.
        dtype: optional dtype of the copy.

    Returns:
        A C-contiguous array of shape `(time, batch, ...)`.

    Example:
        >>> mk.ops.recurrent_layout.time_major(np.arange(6).reshape(1, 3, 2), go_backwards=True)[
        ...     :, 0
        ... ]
        array([[4, 5],
               [2, 3],
               [0, 1]])
    """
    x = np.swapaxes(x, 0, 1)
    return np.ascontiguousarray(x[::-1] if go_backwards else x, dtype=dtype)


def mask_time_major(mask, go_backwards):
    """A `(batch, time)` mask -> `(time, batch, 1)` booleans, or None if nothing is masked.

    Args:
        mask: booleans (or 0/1) of shape `(batch, time)`, or None.
        go_backwards: reverse the time axis.

    Returns:
        A boolean array of shape `(time, batch, 1)`, or None.

    Example:
        >>> mk.ops.recurrent_layout.mask_time_major(np.array([[1, 0]]), False)[:, 0, 0]
        array([ True, False])
    """
    if mask is None or mask.all():
        return None
    return time_major(mask.astype(bool), go_backwards)[..., None]


def project(x_tm, kernel, bias):
    """Every step's input projection in one product: `x @ kernel + bias`.

    Args:
        x_tm: time-major inputs `(time, batch, features)`.
        kernel: `(features, width)`.
        bias: `(width,)`, or None.

    Returns:
        A new array of shape `(time, batch, width)`.

    Example:
        >>> mk.ops.recurrent_layout.project(np.ones((2, 1, 3)), np.ones((3, 4)), None).shape
        (2, 1, 4)
    """
    steps, batch, features = x_tm.shape
    out = np.matmul(x_tm.reshape(steps * batch, features), kernel)
    if bias is not None:
        out += bias
    return out.reshape(steps, batch, kernel.shape[1])  # not -1: ambiguous for 0 samples


def project_backward(d_gates, x_tm, kernel, go_backwards, want_inputs):
    """The gradients of the inputs, kernel and bias of `project`, from its output gradient.

    Args:
        d_gates: `(time, batch, width)`, the gradient of the projection.
        x_tm: the time-major inputs it was computed from.
        kernel: `(features, width)`.
        go_backwards: whether `x_tm` is reversed (the input gradient is put
            back in the inputs' order).
        want_inputs: compute the input gradient (else it is None).

    Returns:
        `(d_inputs, d_kernel, d_bias)`: `(batch, time, features)` or None,
        `(features, width)`, `(width,)`.

    Example:
        >>> d_x, d_w, d_b = mk.ops.recurrent_layout.project_backward(
        ...     np.ones((2, 1, 4)), np.ones((2, 1, 3)), np.ones((3, 4)), False, True
        ... )
        >>> d_x.shape, d_w[0, 0], d_b[0]
        ((1, 2, 3), np.float64(2.0), np.float64(2.0))
    """
    flat = d_gates.reshape(-1, d_gates.shape[-1])
    d_kernel = np.matmul(x_tm.reshape(flat.shape[0], x_tm.shape[-1]).T, flat)
    d_bias = flat.sum(axis=0)
    d_inputs = None
    if want_inputs:
        d_tm = np.matmul(flat, kernel.T).reshape(*d_gates.shape[:2], kernel.shape[0])
        d_inputs = np.swapaxes(d_tm[::-1] if go_backwards else d_tm, 0, 1)
    return d_inputs, d_kernel, d_bias


def _outer_sum(left, right):
    """`sum_t left[t].T @ right[t]` as one product, for `(time, batch, n)` arrays."""
    return np.matmul(left.reshape(-1, left.shape[-1]).T, right.reshape(-1, right.shape[-1]))


def _gradient_steps(d_outputs):
    """The gradient arriving at each step's output, time-major (a view)."""
    return np.swapaxes(d_outputs, 0, 1)
