"""Convolutions: `conv`, `depthwise_conv`, `separable_conv`, `conv_transpose`.

Each op checks its arguments, lays out the kernel and the windows, and calls
one of the three primitives of `ops.conv_primitives` (`conv_transpose` runs
the gradient of `conv` with respect to its inputs). A depthwise convolution
is a grouped one, a group per input channel. They compute channels last;
channels-first inputs (`data_format="channels_first"`, or None with
`mk.config.image_data_format()` so set) are transposed in and out.
"""

import numpy as np

from minikeras.engine.primitive import call_primitive
from minikeras.ops.conv_primitives import _conv, _conv_backprop_input
from minikeras.ops.core import as_float, op_error, promote, value_of, wrap
from minikeras.ops.operands import narrowed_operands, operand_values
from minikeras.ops.windows import (
    Windows,
    check_data_format,
    in_channels_last,
    normalize_padding,
    normalize_tuple,
)

__all__ = ["conv", "conv_transpose", "depthwise_conv", "separable_conv", "transpose_output_length"]


# ------------------------------------------------------------------ the ops


def _operands(op, inputs, kernel):
    """Float values of `inputs` and `kernel` with matching ranks; the spatial rank."""
    x, k = operand_values(inputs, kernel)
    x, k = promote(as_float(x), as_float(k))
    rank = np.ndim(k) - 2
    if rank not in (1, 2, 3) or np.ndim(x) != rank + 2:
        raise op_error(
            op,
            "expected inputs (batch, *spatial, channels) and a kernel (*spatial, in, out) "
            "with 1, 2 or 3 spatial axes each",
            x,
            k,
        )
    return x, k, rank


def _windows(op, x, kernel, rank, strides, padding, dilation_rate):
    strides = normalize_tuple(op, "strides", strides, rank)
    dilation = normalize_tuple(op, "dilation_rate", dilation_rate, rank)
    padding = normalize_padding(op, padding)
    spatial = np.shape(x)[1:-1]
    return Windows.of(op, spatial, np.shape(kernel)[:-2], strides, padding, dilation, (x, kernel))


def conv(
    inputs,
    kernel,
    strides=1,
    padding="valid",
    data_format=None,
    dilation_rate=1,
    *,
    bias=None,
    activation=None,
):
    """N-D convolution (1-D to 3-D), channels_last, as Keras's `ops.conv`.

    `output[b, *o, f] = sum over taps t and channels c of
    inputs[b, *(o * strides + t * dilation_rate - pad_before), c] * kernel[*t, c, f]`.
    Groups come from the kernel's shape, as in Keras: a kernel with
    `channels / groups` input channels makes a grouped convolution.

    Args:
        inputs: Tensor `(batch, *spatial, channels)`.
        kernel: Tensor `(*kernel_size, channels / groups, filters)`.
        strides: an int or one int per spatial axis.
        padding: `"valid"` (whole windows only) or `"same"` (zero padding so
            that `output = ceil(input / strides)`).
        data_format: `"channels_last"` (inputs `(batch, *spatial, channels)`) or
            `"channels_first"` (`(batch, channels, *spatial)`, outputs likewise);
            None means `mk.config.image_data_format()`.
        dilation_rate: an int or one int per spatial axis.
        bias: optional Tensor `(filters,)`, added in place (a minikeras extension).
        activation: None or `"relu"`, applied in place (a minikeras extension).

    Returns:
        A Tensor `(batch, *outputs, filters)`.

    Raises:
        ValueError: for mismatched ranks or channels, a window wider than a
            `"valid"` input, or a bad argument.

    Example:
        >>> x = np.arange(5.0, dtype="float32").reshape(1, 5, 1)
        >>> mk.ops.conv(x, np.ones((3, 1, 1), "float32")).numpy()[0, :, 0]
        array([3., 6., 9.], dtype=float32)
        >>> mk.ops.conv(
        ...     np.ones((2, 8, 8, 3)), np.ones((3, 3, 3, 4)), strides=2, padding="same"
        ... ).shape
        (2, 4, 4, 4)
    """
    if check_data_format("conv", data_format) == "channels_first":
        return in_channels_last(conv, inputs, kernel, strides, padding, "channels_last",
                                dilation_rate, bias=bias, activation=activation)  # fmt: skip
    x, k, rank = _operands("conv", inputs, kernel)
    channels, kernel_channels, filters = np.shape(x)[-1], np.shape(k)[-2], np.shape(k)[-1]
    if channels % kernel_channels or filters % (channels // kernel_channels):
        raise op_error(
            "conv",
            f"inputs' {channels} channels must be kernel's {kernel_channels} input channels "
            f"times a number of groups that divides its {filters} filters",
            x,
            k,
        )
    windows = _windows("conv", x, k, rank, strides, padding, dilation_rate)
    bias_value = None
    if bias is not None:
        bias_value = value_of(bias)
        if np.shape(bias_value) != (filters,):
            raise op_error("conv", f"bias must have shape ({filters},)", k, bias_value)
    if activation not in (None, "linear", "relu"):
        raise ValueError(f"conv: activation must be None, 'linear' or 'relu', got {activation!r}")
    groups = channels // kernel_channels
    use_relu = activation == "relu"
    return wrap(call_primitive(_conv, x, k, bias_value, windows, groups, use_relu))


def depthwise_conv(inputs, kernel, strides=1, padding="valid", data_format=None, dilation_rate=1):
    """Depthwise convolution: each channel convolved with its own `depth_multiplier` filters.

    Output channel `c * depth_multiplier + m` is input channel `c` convolved
    with `kernel[..., c, m]`: a `conv` with one group per channel.

    Args:
        inputs: Tensor `(batch, *spatial, channels)`.
        kernel: Tensor `(*kernel_size, channels, depth_multiplier)`.
        strides: an int or one int per spatial axis.
        padding: `"valid"` or `"same"`.
        data_format: `"channels_last"` (inputs `(batch, *spatial, channels)`) or
            `"channels_first"` (`(batch, channels, *spatial)`, outputs likewise);
            None means `mk.config.image_data_format()`.
        dilation_rate: an int or one int per spatial axis.

    Returns:
        A Tensor `(batch, *outputs, channels * depth_multiplier)`.

    Raises:
        ValueError: if the kernel's channels differ from the inputs', or as `conv`.

    Example:
        >>> x = np.ones((1, 4, 4, 2), "float32")
        >>> kernel = np.stack([np.ones((3, 3)), 2 * np.ones((3, 3))], -1)[..., None]
        >>> mk.ops.depthwise_conv(x, kernel.astype("float32")).numpy()[0, 0, 0]
        array([ 9., 18.], dtype=float32)
    """
    if check_data_format("depthwise_conv", data_format) == "channels_first":
        return in_channels_last(depthwise_conv, inputs, kernel, strides, padding,
                                "channels_last", dilation_rate)  # fmt: skip
    x, k, rank = _operands("depthwise_conv", inputs, kernel)
    if np.shape(k)[-2] != np.shape(x)[-1]:
        raise op_error(
            "depthwise_conv", "the kernel's axis -2 must match the inputs' channels", x, k
        )
    shape = np.shape(k)
    grouped = k.reshape((*shape[:-2], 1, shape[-2] * shape[-1]))  # a box reshapes as a primitive
    windows = _windows("depthwise_conv", x, k, rank, strides, padding, dilation_rate)
    return wrap(call_primitive(_conv, x, grouped, None, windows, shape[-2], False))


def separable_conv(
    inputs,
    depthwise_kernel,
    pointwise_kernel,
    strides=1,
    padding="valid",
    data_format=None,
    dilation_rate=1,
):
    """A depthwise convolution, then a 1x1 (pointwise) convolution mixing the channels.

    Args:
        inputs: Tensor `(batch, *spatial, channels)`.
        depthwise_kernel: Tensor `(*kernel_size, channels, depth_multiplier)`.
        pointwise_kernel: Tensor `(*ones, channels * depth_multiplier, filters)`.
        strides: an int or one int per spatial axis (of the depthwise step).
        padding: `"valid"` or `"same"`.
        data_format: `"channels_last"` (inputs `(batch, *spatial, channels)`) or
            `"channels_first"` (`(batch, channels, *spatial)`, outputs likewise);
            None means `mk.config.image_data_format()`.
        dilation_rate: an int or one int per spatial axis.

    Returns:
        A Tensor `(batch, *outputs, filters)`.

    Raises:
        ValueError: if the pointwise kernel is not 1x1 or does not fit, or as
            `depthwise_conv`.

    Example:
        >>> x = np.ones((1, 5, 5, 2), "float32")
        >>> mk.ops.separable_conv(x, np.ones((3, 3, 2, 1)), np.ones((1, 1, 2, 4))).shape
        (1, 3, 3, 4)
    """
    if check_data_format("separable_conv", data_format) == "channels_first":
        return in_channels_last(separable_conv, inputs, depthwise_kernel, pointwise_kernel,
                                strides, padding, "channels_last", dilation_rate)  # fmt: skip
    # (numpy float64 operands beside a Tensor take its precision: ops.operands)
    inputs, depthwise_kernel, pointwise_kernel = narrowed_operands(
        inputs, depthwise_kernel, pointwise_kernel
    )
    depthwise = depthwise_conv(inputs, depthwise_kernel, strides, padding, "channels_last",
                               dilation_rate)  # fmt: skip
    shape = np.shape(value_of(pointwise_kernel))
    if len(shape) != depthwise.ndim or set(shape[:-2]) != {1}:
        raise op_error(
            "separable_conv",
            "pointwise_kernel must be (*ones, channels * depth_multiplier, filters)",
            depthwise_kernel,
            pointwise_kernel,
        )
    return conv(depthwise, pointwise_kernel, data_format="channels_last")


def transpose_output_length(length, kernel_size, stride, padding, output_padding, dilation=1):
    """The output length of a transposed convolution along one axis (Keras's rule).

    Args:
        length: the input length, or None if unknown.
        kernel_size: the kernel size.
        stride: the stride.
        padding: `"valid"` or `"same"`.
        output_padding: None, or extra length at the end (less than the stride).
        dilation: the dilation rate.

    Returns:
        The output length, or None if `length` is None.

    Example:
        >>> from minikeras.ops.conv import transpose_output_length
        >>> transpose_output_length(4, 3, 2, "same", None)
        8
        >>> transpose_output_length(4, 3, 2, "valid", None)
        9
    """
    if length is None:
        return None
    span = (kernel_size - 1) * dilation + 1
    if output_padding is None:
        return length * stride + (max(span - stride, 0) if padding == "valid" else 0)
    pad = span // 2 if padding == "same" else 0
    return (length - 1) * stride + span - 2 * pad + output_padding


def conv_transpose(
    inputs,
    kernel,
    strides=1,
    padding="valid",
    output_padding=None,
    data_format=None,
    dilation_rate=1,
):
    """Transposed convolution: the gradient of `conv` with respect to its inputs.

    It spreads each input value over a window of the output. With the same
    kernel, strides and padding, `conv` maps the output's shape back onto the
    input's, and the two are adjoint: `sum(conv(x, kernel) * y)` equals
    `sum(x * conv_transpose(y, kernel))`.

    Args:
        inputs: Tensor `(batch, *spatial, channels)`.
        kernel: Tensor `(*kernel_size, filters, channels)` (Keras's layout:
            output channels before input channels).
        strides: an int or one int per spatial axis.
        padding: `"valid"` or `"same"`.
        output_padding: None, or an int or one int per axis, each less than
            the stride: extra length at the end of the output.
        data_format: `"channels_last"` (inputs `(batch, *spatial, channels)`) or
            `"channels_first"` (`(batch, channels, *spatial)`, outputs likewise);
            None means `mk.config.image_data_format()`.
        dilation_rate: an int or one int per spatial axis.

    Returns:
        A Tensor `(batch, *outputs, filters)`.

    Raises:
        ValueError: for mismatched ranks or channels, or a bad output_padding.

    Example:
        >>> y, kernel = np.ones((1, 2, 1), "float32"), np.ones((3, 1, 1), "float32")
        >>> mk.ops.conv_transpose(y, kernel, strides=2).numpy()[0, :, 0]
        array([1., 1., 2., 1., 1.], dtype=float32)
    """
    op = "conv_transpose"
    if check_data_format(op, data_format) == "channels_first":
        return in_channels_last(conv_transpose, inputs, kernel, strides, padding,
                                output_padding, "channels_last", dilation_rate)  # fmt: skip
    y, k, rank = _operands(op, inputs, kernel)
    if np.shape(k)[-1] != np.shape(y)[-1]:
        raise op_error(op, "the kernel's last axis must match the inputs' channels", y, k)
    strides = normalize_tuple(op, "strides", strides, rank)
    dilation = normalize_tuple(op, "dilation_rate", dilation_rate, rank)
    padding = normalize_padding(op, padding)
    extra = (None,) * rank
    if output_padding is not None:
        extra = (output_padding,) * rank if isinstance(output_padding, int) else output_padding
        if len(extra) != rank or any(not 0 <= e < s for e, s in zip(extra, strides)):
            raise ValueError(
                f"{op}: output_padding must be {rank} ints, each in [0, stride), got "
                f"{output_padding!r} with strides {strides}"
            )
    spatial, kernel_size = np.shape(y)[1:-1], np.shape(k)[:-2]
    lengths = tuple(
        transpose_output_length(n, ks, s, padding, e, d)
        for n, ks, s, e, d in zip(spatial, kernel_size, strides, extra, dilation)
    )
    windows = Windows.of(op, lengths, kernel_size, strides, padding, dilation, (y, k))
    if windows.outputs != tuple(spatial):
        raise op_error(
            op, f"output_padding {output_padding} gives outputs {lengths} that do not fit", y, k
        )
    return wrap(_conv_backprop_input(y, k, windows, 1))
