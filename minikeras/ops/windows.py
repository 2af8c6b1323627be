"""Sliding windows, shared by convolution and pooling: geometry, padding, im2col.

channels_last throughout: inputs are `(batch, *spatial, channels)` (the ops
given channels-first inputs run through `in_channels_last`, which transposes
them in and out). A
`Windows` records, per spatial axis, the kernel, stride, dilation, padding and
the input and output lengths: everything a primitive and its VJP need to agree
on, in one hashable argument.

Keras's padding rules (TensorFlow's): `"valid"` keeps only whole windows,
`output = (length - span) // stride + 1` with `span = (kernel - 1) * dilation + 1`;
`"same"` gives `output = ceil(length / stride)` and pads
`max((output - 1) * stride + span - length, 0)` zeros, the odd one after.

Convolutions do not keep their im2col columns for the backward pass: on the
CNN benchmark, building them again is faster than holding them. (Max pooling
keeps its winners, as residuals of a `fused_primitive`.)
"""

import math
from typing import NamedTuple

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from minikeras import config
from minikeras.ops.core import op_error, shape_of, value_of
from minikeras.ops.shape import transpose

__all__ = [
    "Windows",
    "check_data_format",
    "columns",
    "in_channels_last",
    "normalize_padding",
    "normalize_tuple",
    "output_length",
    "pad",
]


def normalize_tuple(op, argument, value, rank):
    """`value` (an int or `rank` ints) as a tuple of `rank` positive ints.

    Args:
        op: the op or layer name, for errors.
        argument: the argument's name, for errors.
        value: an int or a sequence of ints.
        rank: the number of spatial axes.

    Returns:
        A tuple of `rank` ints.

    Raises:
        ValueError: for a wrong length or a value that is not a positive int.

    Example:
        >>> (
        ...     mk.ops.windows.normalize_tuple("conv", "strides", 2, 2),
        ...     mk.ops.windows.normalize_tuple("conv", "strides", [1, 2], 2),
        ... )
        ((2, 2), (1, 2))
    """
    values = (value,) * rank if isinstance(value, (int, np.integer)) else tuple(value)
    if len(values) != rank or not all(
        isinstance(v, (int, np.integer)) and not isinstance(v, bool) and v > 0 for v in values
    ):
        raise ValueError(
            f"{op}: `{argument}` must be a positive int or {rank} positive ints, got {value!r}"
        )
    return tuple(int(v) for v in values)


def normalize_padding(op, padding, allowed=("valid", "same")):
    """The padding mode, lower-cased and checked.

    Args:
        op: the op or layer name, for errors.
        padding: a string such as `"valid"` or `"SAME"`.
        allowed: the modes accepted.

    Returns:
        The lower-case mode.

    Raises:
        ValueError: for any other value.

    Example:
        >>> mk.ops.windows.normalize_padding("conv", "SAME")
        'same'
    """
    mode = padding.lower() if isinstance(padding, str) else padding
    if mode not in allowed:
        raise ValueError(f"{op}: `padding` must be one of {list(allowed)}, got {padding!r}")
    return mode


def check_data_format(op, data_format):
    """The layout `data_format` names: None means `mk.config.image_data_format()`.

    Args:
        op: the op or layer name, for errors.
        data_format: None, `"channels_last"` or `"channels_first"`.

    Returns:
        `"channels_last"` or `"channels_first"`.

    Raises:
        ValueError: for anything else.

    Example:
        >>> mk.ops.windows.check_data_format("conv", None)
        'channels_last'
    """
    return config.standardize_data_format(data_format, op)


def in_channels_last(op, inputs, *args, **kwargs):
    """Runs a channels-last `op` on channels-first `inputs`: transposes in and out.

    `op` is called as `op(inputs_channels_last, *args, **kwargs)` (the caller
    passes `"channels_last"` among the arguments); an error it raises names the
    shape as given, channels first.

    Args:
        op: the op, computing channels last.
        inputs: Tensor or array-like `(batch, channels, *spatial)`.
        *args: `op`'s other arguments.
        **kwargs: `op`'s other keyword arguments.

    Returns:
        `op`'s result as `(batch, channels, *spatial)`.

    Raises:
        ValueError: as `op`, its message saying the inputs were channels first.

    Example:
        >>> x = np.arange(6.0, dtype="float32").reshape(1, 2, 3)  # (batch, channels, steps)
        >>> mk.ops.windows.in_channels_last(mk.ops.max_pool, x, 3, None, "valid",
        ...                                 "channels_last").numpy()
        array([[[2.],
                [5.]]], dtype=float32)
    """
    shape = shape_of(value_of(inputs))
    rank = len(shape)
    if rank <= 2:  # no spatial axis: the op's own rank check names the shape
        return op(inputs, *args, **kwargs)
    last = transpose(inputs, (0, *range(2, rank), 1))
    try:
        outputs = op(last, *args, **kwargs)
    except ValueError as error:
        raise ValueError(
            f"{error} (data_format='channels_first': inputs of shape {tuple(shape)} "
            "seen channels last)"
        ) from None
    return transpose(outputs, (0, rank - 1, *range(1, rank - 1)))


def output_length(length, kernel_size, stride, padding, dilation=1):
    """The output length of a window slid along one axis, Keras's rule.

    Args:
        length: the input length, or None if unknown.
        kernel_size: the window size.
        stride: the step between windows.
        padding: `"valid"`, `"same"` or `"causal"` (which pads in front).
        dilation: the gap between the window's taps.

    Returns:
        The output length (possibly < 1 for a window wider than a valid
        input), or None if `length` is None.

    Example:
        >>> (
        ...     mk.ops.windows.output_length(28, 3, 1, "valid"),
        ...     mk.ops.windows.output_length(28, 3, 2, "same"),
        ... )
        (26, 14)
    """
    if length is None:
        return None
    if padding in ("same", "causal"):
        return -(-length // stride) if padding == "same" else (length - 1) // stride + 1
    return (length - (kernel_size - 1) * dilation - 1) // stride + 1


class Windows(NamedTuple):
    """Where the windows of a convolution or pooling go, per spatial axis.

    Example:
        >>> windows = mk.ops.windows.Windows.of("conv", (5,), (3,), (2,), "same", (1,))
        >>> windows.outputs, windows.pads
        ((3,), ((1, 1),))
    """

    kernel: tuple
    strides: tuple
    dilation: tuple
    pads: tuple  # ((before, after), ...)
    inputs: tuple  # spatial lengths, before padding
    outputs: tuple

    @classmethod
    def of(cls, op, inputs, kernel, strides, padding, dilation, operands=()):
        """Computes the windows' placement, or raises naming `op` and the operands' shapes.

        Args:
            op: the op's name, for errors.
            inputs: the spatial input lengths.
            kernel: the window size per axis.
            strides: the step per axis.
            padding: `"valid"` or `"same"`.
            dilation: the gap between taps per axis.
            operands: the arrays an error shows the shapes of.

        Returns:
            A `Windows`.

        Raises:
            ValueError: if a window is wider than a `"valid"` input.

        Example:
            >>> mk.ops.windows.Windows.of(
            ...     "max_pool", (4, 4), (2, 2), (2, 2), "valid", (1, 1)
            ... ).outputs
            (2, 2)
        """
        pads, outputs = [], []
        for axis, (n, k, s, d) in enumerate(zip(inputs, kernel, strides, dilation)):
            span = (k - 1) * d + 1
            out = output_length(n, k, s, padding, d)
            if out < 1:
                raise op_error(
                    op,
                    f"the window spans {span} (kernel {k}, dilation {d}) but spatial axis "
                    f"{axis + 1} has only {n} with padding 'valid'",
                    *operands,
                )
            total = max((out - 1) * s + span - n, 0) if padding == "same" else 0
            pads.append((total // 2, total - total // 2))
            outputs.append(out)
        return cls(tuple(kernel), tuple(strides), tuple(dilation), tuple(pads), tuple(inputs),
                   tuple(outputs))  # fmt: skip

    @property
    def padded(self):
        """The spatial lengths after padding.

        Returns:
            A tuple of ints.

        Example:
            >>> mk.ops.windows.Windows.of("conv", (5,), (3,), (2,), "same", (1,)).padded
            (7,)
        """
        return tuple(n + before + after for n, (before, after) in zip(self.inputs, self.pads))

    @property
    def overlapping(self):
        """Whether some input position falls in two windows.

        Returns:
            A bool.

        Example:
            >>> mk.ops.windows.Windows.of("max_pool", (4,), (2,), (2,), "valid", (1,)).overlapping
            False
        """
        return any((k - 1) * d + 1 > s for k, s, d in zip(self.kernel, self.strides, self.dilation))

    def taps(self):
        """Yields `(tap, index)`: each kernel position and its strided view's index.

        Returns:
            An iterator of pairs: the tap (a tuple of ints) and an index such
            that `padded_inputs[index]`, of shape `(batch, *outputs,
            channels)`, is the input under that tap of every window.

        Example:
            >>> windows = mk.ops.windows.Windows.of("max_pool", (4,), (2,), (2,), "valid", (1,))
            >>> [tap for tap, _ in windows.taps()]
            [(0,), (1,)]
            >>> np.arange(4)[None, :, None][list(windows.taps())[1][1]].ravel()
            array([1, 3])
        """
        for tap in np.ndindex(*self.kernel):
            yield (
                tap,
                (
                    slice(None),
                    *(
                        slice(i * d, i * d + (o - 1) * s + 1, s)
                        for i, d, s, o in zip(tap, self.dilation, self.strides, self.outputs)
                    ),
                    slice(None),
                ),
            )

    def interior(self):
        """The index of the unpadded inputs inside the padded ones.

        Returns:
            A tuple of slices, for `(batch, *spatial, channels)` arrays.

        Example:
            >>> mk.ops.windows.Windows.of("conv", (4,), (3,), (1,), "same", (1,)).interior()[1]
            slice(1, 5, None)
        """
        return (
            slice(None),
            *(slice(before, before + n) for n, (before, _) in zip(self.inputs, self.pads)),
            slice(None),
        )


def pad(x, windows, fill=0.0):
    """`x` padded as `windows` says (`x` itself if no padding is needed).

    Args:
        x: a numpy array `(batch, *spatial, channels)`.
        windows: a `Windows`.
        fill: the padding value.

    Returns:
        A numpy array `(batch, *windows.padded, channels)`.

    Example:
        >>> windows = mk.ops.windows.Windows.of("conv", (2,), (3,), (1,), "same", (1,))
        >>> mk.ops.windows.pad(np.ones((1, 2, 1), "float32"), windows)[0, :, 0]
        array([0., 1., 1., 0.], dtype=float32)
    """
    if not any(before or after for before, after in windows.pads):
        return x
    shape = (x.shape[0], *windows.padded, x.shape[-1])
    padded = np.zeros(shape, x.dtype) if fill == 0 else np.full(shape, fill, x.dtype)
    padded[windows.interior()] = x
    return padded


def columns(x, windows, groups=1):
    """im2col: every window of `x` as one row, grouped by channel group.

    One strided view (`sliding_window_view`), one contiguous copy. A 1x1,
    stride 1, unpadded convolution needs no copy at all; with one channel per
    group the copy goes tap by tap.

    Args:
        x: a numpy array `(batch, *spatial, channels)`.
        windows: a `Windows`.
        groups: the number of channel groups.

    Returns:
        A numpy array `(groups, batch * prod(outputs), prod(kernel) * channels / groups)`,
        each row laid out as `(*kernel, channels / groups)`, as a kernel's rows are.

    Example:
        >>> windows = mk.ops.windows.Windows.of("conv", (3,), (2,), (1,), "valid", (1,))
        >>> mk.ops.windows.columns(np.arange(3.0).reshape(1, 3, 1), windows)[0]
        array([[0., 1.],
               [1., 2.]])
    """
    batch, channels, rank = x.shape[0], x.shape[-1], len(windows.kernel)
    rows = batch * math.prod(windows.outputs)
    group_channels = channels // groups
    width = math.prod(windows.kernel) * group_channels  # written out: -1 fails for 0 samples
    pointwise = set(windows.kernel) == set(windows.strides) == {1}
    if groups == 1 and pointwise and not any(any(p) for p in windows.pads):
        return x.reshape(1, rows, channels)
    if group_channels == 1:
        # One channel per group: the copy below would move 1 value at a time; copying
        # tap by tap moves whole rows (4x faster for a 28x28x1 input).
        padded = pad(x, windows)
        cols = np.empty((groups, batch, *windows.outputs, *windows.kernel, 1), x.dtype)
        for tap, index in windows.taps():
            cols[(Ellipsis, *tap, 0)] = np.moveaxis(padded[index], -1, 0)
        return cols.reshape(groups, rows, width)
    spans = [(k - 1) * d + 1 for k, d in zip(windows.kernel, windows.dilation)]
    view = sliding_window_view(pad(x, windows), spans, axis=tuple(range(1, rank + 1)))
    # (batch, *starts, channels, *spans): keep every stride-th start, every dilation-th tap.
    view = view[
        (slice(None),)
        + tuple(slice(None, o * s, s) for o, s in zip(windows.outputs, windows.strides))
        + (slice(None),)
        + tuple(slice(None, None, d) for d in windows.dilation)
    ]
    view = np.moveaxis(view, rank + 1, -1)  # (batch, *outputs, *kernel, channels)
    view = view.reshape(*view.shape[:-1], groups, group_channels)
    view = np.moveaxis(view, -2, 0)  # (groups, batch, *outputs, *kernel, group_channels)
    return np.ascontiguousarray(view).reshape(groups, rows, width)
