"""The three convolution primitives, each the transpose of the others.

Gradients of any order are convolutions again (TensorFlow's Conv2D,
Conv2DBackpropInput and Conv2DBackpropFilter):

- `_conv(x, kernel)`: im2col of `x` (one strided view, one copy), then one
  matrix product with the kernel; bias and relu fused in place.
- `_conv_backprop_input(g, kernel)`: `g @ kernel.T`, then the columns are
  added back into a padded buffer, one strided slice-add per kernel tap
  (col2im). It is also `conv_transpose`'s forward pass.
- `_conv_backprop_kernel(x, g)`: `columns(x).T @ g`. The columns are built
  again rather than kept from the forward pass: measured on the CNN benchmark,
  keeping 9 MB of columns alive through the backward pass costs more than
  the second copy (0.5 ms a step slower, not faster).

Groups split the channels: with `kernel.shape[-2] == channels / groups`, each
group of input channels feeds `filters / groups` outputs (a batched product).
Arrays are channels_last; the ops that check arguments and call these are in
`ops.conv`.
"""

import math

import numpy as np
from autograd.extend import defvjp_argnums, primitive

from minikeras.engine.broadcast import bias_gradient
from minikeras.engine.gradient_select import select_gradient
from minikeras.engine.primitive import defvjp_fused, fused_primitive
from minikeras.ops.windows import columns

__all__ = []  # private primitives, called by the ops of ops.conv


def _kernel_matrix(kernel, groups):
    """The kernel `(*taps, in, filters)` as `(groups, taps * in, filters / groups)`."""
    rows = math.prod(kernel.shape[:-1])
    matrix = kernel.reshape(rows, groups, kernel.shape[-1] // groups)
    return matrix.transpose(1, 0, 2)


def _groups_first(g, groups):
    """`(batch, *outputs, filters)` as `(groups, rows, filters / groups)`, a view."""
    return g.reshape(-1, groups, g.shape[-1] // groups).transpose(1, 0, 2)


@fused_primitive
def _conv(x, kernel, bias, windows, groups, use_relu):
    """The convolution; no residuals (the relu mask is the output itself)."""
    cols = columns(x, windows, groups)
    matrix = _kernel_matrix(kernel, groups)
    if groups == 1:
        out = np.matmul(cols[0], matrix[0])
    else:
        out = np.matmul(cols, matrix).transpose(1, 0, 2)
    out = out.reshape(x.shape[0], *windows.outputs, kernel.shape[-1])
    if bias is not None:
        out += bias
    if use_relu:
        np.maximum(out, 0, out=out)
    return out, None


def _conv_vjp(argnums, ans, args, residuals):
    x, kernel, bias, windows, groups, use_relu = args

    def vjp(g):
        if use_relu:
            g = select_gradient(ans > 0, g)
        grads = []
        for argnum in argnums:
            if argnum == 0:
                grads.append(_conv_backprop_input(g, kernel, windows, groups))
            elif argnum == 1:
                grads.append(_conv_backprop_kernel(x, g, windows, groups, kernel.shape))
            else:
                grads.append(bias_gradient(g))
        return grads

    return vjp


defvjp_fused(_conv, _conv_vjp)


@primitive
def _conv_backprop_input(g, kernel, windows, groups):
    batch, channels = g.shape[0], kernel.shape[-2] * groups
    matrix = _kernel_matrix(kernel, groups)
    cols = np.matmul(_groups_first(g, groups), matrix.transpose(0, 2, 1))
    cols = cols.reshape(groups, batch, *windows.outputs, *windows.kernel, channels // groups)
    padded = np.zeros((batch, *windows.padded, groups, channels // groups), g.dtype)
    for tap, index in windows.taps():
        # (groups, batch, *outputs, group_channels) -> (batch, *outputs, groups, group_channels)
        padded[(*index, slice(None))] += np.moveaxis(cols[(Ellipsis, *tap, slice(None))], 0, -2)
    padded = padded.reshape(batch, *windows.padded, channels)
    if windows.padded == windows.inputs:
        return padded
    return np.ascontiguousarray(padded[windows.interior()])


defvjp_argnums(
    _conv_backprop_input,
    lambda argnums, ans, args, kwargs: _backprop_input_vjp(argnums, *args),
)


def _backprop_input_vjp(argnums, g, kernel, windows, groups):
    def vjp(h):
        return [
            _conv(h, kernel, None, windows, groups, False)
            if argnum == 0
            else _conv_backprop_kernel(h, g, windows, groups, kernel.shape)
            for argnum in argnums
        ]

    return vjp


@primitive
def _conv_backprop_kernel(x, g, windows, groups, kernel_shape):
    cols = columns(x, windows, groups)
    g_matrix = _groups_first(g, groups)
    if groups == 1:
        return np.matmul(cols[0].T, g_matrix[0]).reshape(kernel_shape)
    grad = np.matmul(cols.transpose(0, 2, 1), g_matrix)  # (groups, rows, filters / groups)
    return grad.transpose(1, 0, 2).reshape(kernel_shape)


def _backprop_kernel_vjp(argnums, x, g, windows, groups, kernel_shape):
    def vjp(h):
        return [
            _conv_backprop_input(g, h, windows, groups)
            if argnum == 0
            else _conv(x, h, None, windows, groups, False)
            for argnum in argnums
        ]

    return vjp


defvjp_argnums(
    _conv_backprop_kernel,
    lambda argnums, ans, args, kwargs: _backprop_kernel_vjp(argnums, *args),
)
