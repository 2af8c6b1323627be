"""Adaptive pooling: pool to a given output size, whatever the input's size.

Along a spatial axis of length `L` pooled to `n`, output `i` covers the
input steps `floor(i * L / n)` to `ceil((i + 1) * L / n) - 1` (PyTorch's and
Keras's windows: neighbouring windows may overlap by one step). Both pools
work one spatial axis at a time, which gives the same result as pooling over
the whole window (a mean of means over a rectangle, a max of maxima): the
average as a product with a small `(n, L)` matrix of window weights, the max
as a gather of each window's steps and a max over them. Gradients come from
those ops (`tensordot`, `take`, `max`).
"""

import numpy as np

from minikeras import config
from minikeras.ops.axes import moveaxis
from minikeras.ops.core import array_of, as_float, dtype_of, shape_of, value_of, wrap
from minikeras.ops.matrix_products import tensordot
from minikeras.ops.reduction import max as reduce_max
from minikeras.ops.shape import pad, reshape, take

__all__ = ["adaptive_average_pool", "adaptive_max_pool"]


def _windows(length, size):
    """The first and one-past-last input step of each of `size` windows over `length`."""
    steps = np.arange(size)
    return (steps * length) // size, -((-(steps + 1) * length) // size)


def _operands(op, inputs, output_size, data_format):
    """`inputs` as a Tensor, its spatial axes and their output sizes; or a clear error."""
    data_format = config.standardize_data_format(data_format, op)
    value = array_of(inputs)
    rank = len(shape_of(value)) - 2
    if rank not in (1, 2, 3):
        raise ValueError(
            f"{op}: inputs must be 3-D, 4-D or 5-D (batch, spatial axes, channels), "
            f"got shape {shape_of(value)}"
        )
    sizes = (output_size,) * rank if isinstance(output_size, (int, np.integer)) else output_size
    sizes = tuple(sizes)
    if len(sizes) != rank or any(
        isinstance(s, bool) or not isinstance(s, (int, np.integer)) or s < 1 for s in sizes
    ):
        raise ValueError(
            f"{op}: output_size must be a positive int or {rank} of them for inputs of shape "
            f"{shape_of(value)}, got {output_size!r}"
        )
    first = 1 if data_format == "channels_last" else 2
    return wrap(value), tuple(range(first, first + rank)), tuple(int(s) for s in sizes)


def adaptive_average_pool(inputs, output_size, data_format=None):
    """Average pooling to `output_size`, each window sized to fit (see the module).

    Args:
        inputs: a Tensor `(batch, *spatial, channels)` with 1, 2 or 3 spatial
            axes (`(batch, channels, *spatial)` for `channels_first`).
        output_size: an int, or one int per spatial axis.
        data_format: `"channels_last"` or `"channels_first"`; None means
            `mk.config.image_data_format()`.

    Returns:
        A Tensor with the spatial axes of `output_size`; floating (integers
        give floatx, as in Keras).

    Raises:
        ValueError: for inputs of another rank, a bad `output_size` or an
            unknown `data_format`.

    Example:
        >>> x = np.arange(5, dtype="float32").reshape(1, 5, 1)
        >>> mk.ops.adaptive_average_pool(x, 3).numpy()[0, :, 0]
        array([0.5, 2. , 3.5], dtype=float32)
    """
    value, axes, sizes = _operands("adaptive_average_pool", inputs, output_size, data_format)
    value = wrap(as_float(value_of(value)))
    for axis, size in zip(axes, sizes):
        length = value.shape[axis]
        starts, ends = _windows(length, size)
        weights = np.zeros((length, size), dtype=value.dtype)
        for i, (start, end) in enumerate(zip(starts, ends)):
            weights[start:end, i] = 1.0 / (end - start)
        value = moveaxis(tensordot(value, weights, axes=([axis], [0])), -1, axis)
    return value


def adaptive_max_pool(inputs, output_size, data_format=None):
    """Max pooling to `output_size`, each window sized to fit (see the module).

    Args:
        inputs: a Tensor `(batch, *spatial, channels)` with 1, 2 or 3 spatial
            axes (`(batch, channels, *spatial)` for `channels_first`).
        output_size: an int, or one int per spatial axis.
        data_format: `"channels_last"` or `"channels_first"`; None means
            `mk.config.image_data_format()`.

    Returns:
        A Tensor with the spatial axes of `output_size`, of `inputs`' dtype.

    Raises:
        ValueError: for inputs of another rank, a bad `output_size` or an
            unknown `data_format`.

    Example:
        >>> x = np.array([1.0, 5.0, 2.0, 0.0, 4.0], "float32").reshape(1, 5, 1)
        >>> mk.ops.adaptive_max_pool(x, 3).numpy()[0, :, 0]
        array([5., 5., 4.], dtype=float32)
    """
    value, axes, sizes = _operands("adaptive_max_pool", inputs, output_size, data_format)
    dtype = dtype_of(value_of(value))
    lowest = -np.inf if dtype.kind == "f" else np.iinfo(dtype).min
    for axis, size in zip(axes, sizes):
        length = value.shape[axis]
        starts, ends = _windows(length, size)
        widest = int(np.max(ends - starts))
        # Each window's steps, shorter ones filled with the step just past the end (padding).
        steps = starts[:, None] + np.arange(widest)
        steps = np.where(steps < ends[:, None], steps, length)
        widths = [(0, 0)] * len(value.shape)
        widths[axis] = (0, 1)
        padded = pad(value, widths, constant_values=lowest)
        gathered = take(padded, steps.reshape(-1), axis=axis)
        shape = (*value.shape[:axis], size, widest, *value.shape[axis + 1 :])
        value = reduce_max(reshape(gathered, shape), axis=axis + 1)
    return value
