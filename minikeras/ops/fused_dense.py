"""`dense`: the fused `activation(x @ kernel + bias)` of a Dense layer, the hottest op.

One fused primitive: the bias add and the relu happen in place in the
forward pass, and the backward pass applies the relu mask once for all three
gradients. Inside a tape, `dense` unboxes its own arguments and records its
node with `record_fused`, skipping `call_primitive`'s general unboxing.
"""

import math

import autograd.numpy as anp
import numpy as np
from autograd.numpy.numpy_boxes import ArrayBox
from autograd.tracer import getval, isbox

from minikeras.engine import backward as engine_backward
from minikeras.engine.broadcast import bias_gradient
from minikeras.engine.gradient_select import select_gradient
from minikeras.engine.primitive import call_primitive, defvjp_fused, fused_primitive, record_fused
from minikeras.engine.variable import Variable
from minikeras.engine.variable_reads import read_variable
from minikeras.ops.core import (
    op_error,
    promote,
    shape_of,
    value_of,
    wrap,
)
from minikeras.ops.operands import narrowed, operand_values_list

__all__ = ["dense"]


@fused_primitive
def _dense(x, kernel, bias, use_relu):
    """`x @ kernel + bias`, relu'd in place if asked; the residual is `x` as rows.

    Inputs with more axes (a sequence's steps) are multiplied as one matrix of
    rows, one BLAS call instead of one per leading index. A `(batch, time,
    features)` view of time-major memory (an RNN's output) is multiplied in
    its own time-major row order, without a copy, and the result is the same
    kind of view; its gradient is taken in that order too (`_as_rows`).
    Another strided view is copied into rows once, here, and the kernel's
    gradient reuses that copy.
    """
    rows_in = x.ndim == 2  # (a batch of rows, the usual case: no reshaping to decide)
    time_major = not rows_in and _is_time_major(x)
    rows = x if rows_in else _as_rows(x, time_major)
    out = np.matmul(rows, kernel)
    if bias is not None:
        out += bias
    if use_relu:
        np.maximum(out, 0, out=out)
    return (out if rows_in else _from_rows(out, x.shape, time_major)), rows


def _is_time_major(x):
    """Whether `x` is a `(batch, time, n)` view of `(time, batch, n)` C-ordered memory."""
    return x.ndim == 3 and not x.flags.c_contiguous and x.transpose(1, 0, 2).flags.c_contiguous


def _as_rows(x, time_major):
    """`x` as the matrix of rows dense multiplies: in time-major order for an RNN's output.

    A copy only where a view cannot be had (a gradient of another layout).
    """
    if time_major:
        x = x.transpose(1, 0, 2)
        if not x.flags.c_contiguous:
            x = np.ascontiguousarray(x)
    return _rows(x)


def _from_rows(rows, shape, time_major):
    """`rows` (from `_as_rows`) with the leading axes of `shape` back (a view)."""
    if time_major:
        return rows.reshape(shape[1], shape[0], rows.shape[1]).transpose(1, 0, 2)
    return rows if len(shape) == 2 else rows.reshape(*shape[:-1], rows.shape[1])


def _rows(x):
    """`x` as a matrix of rows; counted, not `-1`, which numpy refuses for 0 features."""
    return x if x.ndim == 2 else x.reshape(math.prod(x.shape[:-1]), x.shape[-1])


def _dense_vjp(argnums, ans, args, residuals):
    x, kernel, bias, use_relu = args
    # The relu mask is a constant, even where an outer tape boxes `ans`.
    outputs = (ans if type(ans) is np.ndarray else getval(ans)) if use_relu else None
    traced_inputs = residuals is None and (isbox(x) or isbox(kernel))

    def vjp(g):
        if traced_inputs or (type(g) is not np.ndarray and isbox(g)):
            # An outer tape records this gradient: build it from traced ops.
            if use_relu:
                g = select_gradient(outputs > 0, g)
            return _traced_dense_grads(argnums, g, x, kernel)
        # Plain numpy otherwise: the products BLAS does anyway, without the
        # dozen autograd calls (and their checks) the traced version costs.
        if use_relu:  # (select_gradient: float16 selects, so an inf at a dead unit gives 0)
            # Nobody else holds g (`may_overwrite`, inline): no new buffer, as numpy code does.
            out = g if g is engine_backward._overwritable else None
            if type(g) is np.ndarray and g.dtype.kind == "f" and g.dtype.itemsize > 2:
                # (select_gradient's float32/64 product, inline: its common case)
                g = np.multiply(g, outputs > 0, out=out)
            else:
                g = select_gradient(outputs > 0, g, out=out)
        # Rows in the order the forward pass multiplied them (time-major for an RNN's output).
        rows = residuals
        if g.ndim == 2 and rows is not None:  # (rows in, rows out: nothing to reorder)
            # A layer's usual two or three gradients, without the loop below.
            if argnums == (1, 2):  # (the first layer: its input is data)
                return [rows.T @ g, bias_gradient(g)]
            if argnums == (0, 1, 2):
                return [g @ kernel.T, rows.T @ g, bias_gradient(g)]
            time_major, g_2d = False, g
        else:
            time_major = _is_time_major(x)
            if rows is None:  # (autograd's own grad called the op: no residuals)
                rows = _as_rows(x, time_major)
            g_2d = _as_rows(g, time_major)
        grads = []
        for argnum in argnums:
            if argnum == 0:
                product = g_2d @ kernel.T
                grads.append(product if g_2d is g else _from_rows(product, g.shape, time_major))
            elif argnum == 1:
                grads.append(rows.T @ g_2d)
            else:
                grads.append(bias_gradient(g_2d))
        return grads

    return vjp


def _traced_dense_grads(argnums, g, x, kernel):
    """The gradients of `_dense` from autograd ops, differentiable again."""
    grads = []
    for argnum in argnums:
        if argnum == 0:
            grads.append(anp.matmul(g, anp.transpose(kernel)))
        elif argnum == 1:
            flat_x = anp.reshape(x, (-1, np.shape(kernel)[0]))
            grads.append(anp.matmul(anp.transpose(flat_x), anp.reshape(g, (-1, np.shape(g)[-1]))))
        else:
            grads.append(bias_gradient(g))
    return grads


defvjp_fused(_dense, _dense_vjp)


def dense(x, kernel, bias=None, activation=None):
    """Fused `activation(x @ kernel + bias)`, the body of a Dense layer.

    One primitive with a hand-written gradient: the bias add and the relu
    happen in place in the forward pass, and the backward pass applies the
    relu mask once for all three gradients.

    Args:
        x: Tensor of shape `(..., in_features)`.
        kernel: Tensor of shape `(in_features, units)`.
        bias: optional Tensor of shape `(units,)`.
        activation: None (linear) or `"relu"`.

    Returns:
        A Tensor of shape `(..., units)`.

    Raises:
        ValueError: if the shapes do not fit or the activation is not supported.

    Example:
        >>> mk.ops.dense(mk.ops.ones((2, 3)), mk.ops.ones((3, 4)), mk.ops.zeros(4), "relu").numpy()[
        ...     0
        ... ]
        array([3., 3., 3., 3.], dtype=float32)
    """
    if activation not in (None, "linear", "relu"):
        raise ValueError(f"dense: activation must be None, 'linear' or 'relu', got {activation!r}")
    # (a layer's weights: `read_variable` directly, as value_of would call it, two calls less)
    x_value = value_of(x)
    kernel_value = read_variable(kernel) if type(kernel) is Variable else value_of(kernel)
    if bias is None:
        bias_value = None
    else:
        bias_value = read_variable(bias) if type(bias) is Variable else value_of(bias)
    # One level of boxes: deeper ones (nested tapes) take the general path below.
    x_array = x_value._value if type(x_value) is ArrayBox else x_value
    kernel_array = kernel_value._value if type(kernel_value) is ArrayBox else kernel_value
    bias_array = bias_value._value if type(bias_value) is ArrayBox else bias_value
    if (
        type(x_array) is not np.ndarray
        or type(kernel_array) is not np.ndarray
        or x_array.dtype != kernel_array.dtype
        or (
            bias_value is not None
            and (type(bias_array) is not np.ndarray or bias_array.dtype != x_array.dtype)
        )
    ):
        # (numpy float64 operands beside a Tensor take its precision: ops.operands;
        # the bias counts too, so `dense(array, array, bias=tensor)` keeps float32)
        if bias is None:
            x_value, kernel_value = promote(*narrowed(x, kernel, x_value, kernel_value))
        else:
            x_value, kernel_value, bias_value = operand_values_list((x, kernel, bias))
            x_value, kernel_value = promote(x_value, kernel_value)
            bias_array = bias_value._value if type(bias_value) is ArrayBox else bias_value
        x_shape, kernel_shape = shape_of(x_value), shape_of(kernel_value)
        x_array = None  # not the arrays to compute with: the general path below
    else:
        x_shape, kernel_shape = x_array.shape, kernel_array.shape
    if len(kernel_shape) != 2 or not x_shape or x_shape[-1] != kernel_shape[0]:
        raise op_error(
            "dense", "x's last axis must match kernel's first axis", x_value, kernel_value
        )
    if (
        bias_value is not None
        and (bias_array.shape if type(bias_array) is np.ndarray else shape_of(bias_value))
        != kernel_shape[1:]
    ):
        raise op_error(
            "dense", f"bias must have shape ({kernel_shape[1]},)", kernel_value, bias_value
        )
    use_relu = activation == "relu"
    if type(kernel_value) is ArrayBox and type(bias_value) is ArrayBox:
        # A layer's step in one tape: kernel and bias are boxes of that tape's
        # trace and x is data or a box of it. Record the node here, without
        # call_primitive's general unboxing (this is the hottest op in training).
        trace = kernel_value._trace
        x_boxed = type(x_value) is ArrayBox
        if (
            bias_value._trace == trace
            and type(bias_array) is np.ndarray
            and type(x_array) is np.ndarray  # (None after a promotion)
            and (not x_boxed or x_value._trace == trace)
        ):
            values = (x_array, kernel_array, bias_array, use_relu)
            if x_boxed:
                argnums, parents = (0, 1, 2), (x_value._node, kernel_value._node, bias_value._node)
            else:
                argnums, parents = (1, 2), (kernel_value._node, bias_value._node)
            return wrap(record_fused(_dense, trace, argnums, parents, values))
    return wrap(call_primitive(_dense, x_value, kernel_value, bias_value, use_relu))
