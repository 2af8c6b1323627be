"""Adaptive pooling layers: pool to a fixed output size, whatever the input's size.

`AdaptiveAveragePooling1D/2D/3D` and `AdaptiveMaxPooling1D/2D/3D` wrap
`ops.adaptive_average_pool` and `ops.adaptive_max_pool` (whose module gives
the windows: PyTorch's and Keras's, neighbours overlapping by at most one
step). They have no weights.
"""

import numpy as np

from minikeras import ops
from minikeras.layers.data_format import (
    ChannelsFirst,
    check_layer_data_format,
    check_spatial_rank,
)
from minikeras.layers.layer import Layer

__all__ = [
    "AdaptiveAveragePooling1D",
    "AdaptiveAveragePooling2D",
    "AdaptiveAveragePooling3D",
    "AdaptiveMaxPooling1D",
    "AdaptiveMaxPooling2D",
    "AdaptiveMaxPooling3D",
    "AdaptivePooling",
]


def _output_size(layer, output_size, rank):
    """`output_size` as `rank` positive ints, or a clear error (Keras's error types)."""
    if isinstance(output_size, (int, np.integer)) and not isinstance(output_size, bool):
        sizes = (int(output_size),) * rank
    elif isinstance(output_size, (tuple, list)):
        if len(output_size) != rank:
            raise ValueError(
                f"{layer}: `output_size` must be an int or {rank} ints, got {output_size!r}"
            )
        sizes = tuple(output_size)
    else:
        raise TypeError(
            f"{layer}: `output_size` must be an int or {rank} ints, got {output_size!r} "
            f"of type {type(output_size).__name__}"
        )
    if any(isinstance(s, bool) or not isinstance(s, (int, np.integer)) or s < 1 for s in sizes):
        raise ValueError(f"{layer}: `output_size` must hold positive ints, got {output_size!r}")
    return tuple(int(s) for s in sizes)


class AdaptivePooling(ChannelsFirst, Layer):
    """Pools each spatial axis to a given size (the base of the adaptive pooling layers).

    Args:
        output_size: an int (every spatial axis) or `rank` ints, the output's
            spatial sizes.
        data_format: `"channels_last"` or `"channels_first"` (computed by
            transposing to channels last and back); None means
            `mk.config.image_data_format()` when the layer is made.
        **kwargs: `name`, `trainable`, `dtype`, `input_shape`.

    Raises:
        TypeError: if `output_size` is neither an int nor a tuple or list.
        ValueError: for a bad `output_size` or `data_format`, or inputs of the
            wrong rank.

    Example:
        >>> mk.layers.AdaptiveMaxPooling2D(3)(np.ones((2, 7, 5, 4), "float32")).shape
        (2, 3, 3, 4)
    """

    rank = None
    reduce = None  # the op: ops.adaptive_average_pool or ops.adaptive_max_pool

    def __init__(self, output_size, data_format=None, **kwargs):
        super().__init__(**kwargs)
        layer = type(self).__name__
        self.output_size = _output_size(layer, output_size, self.rank)
        self.data_format = check_layer_data_format(layer, data_format)

    def build(self, input_shape):
        check_spatial_rank(self, input_shape)

    def call(self, inputs):
        check_spatial_rank(self, inputs.shape)
        return type(self).reduce(inputs, self.output_size, "channels_last")  # (transposed here)

    def compute_output_shape(self, input_shape):
        check_spatial_rank(self, input_shape)
        return (input_shape[0], *self.output_size, input_shape[-1])

    def get_config(self):
        return {
            **super().get_config(),
            "output_size": self.output_size,
            "data_format": self.data_format,
        }


class AdaptiveAveragePooling1D(AdaptivePooling):
    """The mean of each of `output_size` windows of steps, channel by channel.

    Output step `i` of `n` averages the input steps `floor(i * L / n)` to
    `ceil((i + 1) * L / n) - 1` of a length `L`.

    Args:
        output_size: an int (or a tuple of one int), the output's length.
        data_format: `"channels_last"` or `"channels_first"`; None means
            `mk.config.image_data_format()` when the layer is made.
        **kwargs: `name`, `trainable`, `dtype`, `input_shape`.

    Input shape:
        `(batch, steps, channels)` (`(batch, channels, steps)` with
        `data_format="channels_first"`).

    Output shape:
        `(batch, output_size, channels)` (channels first likewise), whatever the
        input's length (also `None`).

    Raises:
        TypeError: if `output_size` is neither an int nor a tuple or list.
        ValueError: for a bad argument or inputs of the wrong rank.

    Example:
        >>> x = np.arange(5, dtype="float32").reshape(1, 5, 1)
        >>> mk.layers.AdaptiveAveragePooling1D(3)(x).numpy()[0, :, 0]
        array([0.5, 2. , 3.5], dtype=float32)
    """

    rank = 1
    reduce = staticmethod(ops.adaptive_average_pool)


class AdaptiveAveragePooling2D(AdaptivePooling):
    """The mean of each window of pixels, the windows sized to give `output_size`.

    Each spatial axis is split as in `AdaptiveAveragePooling1D`.

    Args:
        output_size: an int or two ints, the output's rows and cols.
        data_format: `"channels_last"` or `"channels_first"`; None means
            `mk.config.image_data_format()` when the layer is made.
        **kwargs: `name`, `trainable`, `dtype`, `input_shape`.

    Input shape:
        `(batch, rows, cols, channels)` (`(batch, channels, rows, cols)` with
        `data_format="channels_first"`).

    Output shape:
        `(batch, *output_size, channels)` (channels first likewise), whatever the
        input's sizes (also `None`).

    Raises:
        TypeError: if `output_size` is neither an int nor a tuple or list.
        ValueError: for a bad argument or inputs of the wrong rank.

    Example:
        >>> x = np.arange(16, dtype="float32").reshape(1, 4, 4, 1)
        >>> mk.layers.AdaptiveAveragePooling2D(2)(x).numpy()[0, :, :, 0]
        array([[ 2.5,  4.5],
               [10.5, 12.5]], dtype=float32)
    """

    rank = 2
    reduce = staticmethod(ops.adaptive_average_pool)


class AdaptiveAveragePooling3D(AdaptivePooling):
    """The mean of each window of voxels, the windows sized to give `output_size`.

    Each spatial axis is split as in `AdaptiveAveragePooling1D`.

    Args:
        output_size: an int or three ints, the output's depth, rows and cols.
        data_format: `"channels_last"` or `"channels_first"`; None means
            `mk.config.image_data_format()` when the layer is made.
        **kwargs: `name`, `trainable`, `dtype`, `input_shape`.

    Input shape:
        `(batch, depth, rows, cols, channels)` (`(batch, channels, depth, rows, cols)`
        with `data_format="channels_first"`).

    Output shape:
        `(batch, *output_size, channels)` (channels first likewise), whatever the
        input's sizes (also `None`).

    Raises:
        TypeError: if `output_size` is neither an int nor a tuple or list.
        ValueError: for a bad argument or inputs of the wrong rank.

    Example:
        >>> layer = mk.layers.AdaptiveAveragePooling3D((1, 2, 3))
        >>> layer(np.ones((2, 5, 5, 5, 3), "float32")).shape
        (2, 1, 2, 3, 3)
    """

    rank = 3
    reduce = staticmethod(ops.adaptive_average_pool)


class AdaptiveMaxPooling1D(AdaptivePooling):
    """The largest value of each of `output_size` windows of steps, channel by channel.

    Output step `i` of `n` is the max of the input steps `floor(i * L / n)` to
    `ceil((i + 1) * L / n) - 1` of a length `L`.

    Args:
        output_size: an int (or a tuple of one int), the output's length.
        data_format: `"channels_last"` or `"channels_first"`; None means
            `mk.config.image_data_format()` when the layer is made.
        **kwargs: `name`, `trainable`, `dtype`, `input_shape`.

    Input shape:
        `(batch, steps, channels)` (`(batch, channels, steps)` with
        `data_format="channels_first"`).

    Output shape:
        `(batch, output_size, channels)` (channels first likewise), whatever the
        input's length (also `None`).

    Raises:
        TypeError: if `output_size` is neither an int nor a tuple or list.
        ValueError: for a bad argument or inputs of the wrong rank.

    Example:
        >>> x = np.array([1.0, 5.0, 2.0, 0.0, 4.0], "float32").reshape(1, 5, 1)
        >>> mk.layers.AdaptiveMaxPooling1D(3)(x).numpy()[0, :, 0]
        array([5., 5., 4.], dtype=float32)
    """

    rank = 1
    reduce = staticmethod(ops.adaptive_max_pool)


class AdaptiveMaxPooling2D(AdaptivePooling):
    """The largest value of each window of pixels, the windows sized to give `output_size`.

    Each spatial axis is split as in `AdaptiveMaxPooling1D`.

    Args:
        output_size: an int or two ints, the output's rows and cols.
        data_format: `"channels_last"` or `"channels_first"`; None means
            `mk.config.image_data_format()` when the layer is made.
        **kwargs: `name`, `trainable`, `dtype`, `input_shape`.

    Input shape:
        `(batch, rows, cols, channels)` (`(batch, channels, rows, cols)` with
        `data_format="channels_first"`).

    Output shape:
        `(batch, *output_size, channels)` (channels first likewise), whatever the
        input's sizes (also `None`).

    Raises:
        TypeError: if `output_size` is neither an int nor a tuple or list.
        ValueError: for a bad argument or inputs of the wrong rank.

    Example:
        >>> x = np.arange(16, dtype="float32").reshape(1, 4, 4, 1)
        >>> mk.layers.AdaptiveMaxPooling2D((1, 2))(x).numpy()[0, :, :, 0]
        array([[13., 15.]], dtype=float32)
    """

    rank = 2
    reduce = staticmethod(ops.adaptive_max_pool)


class AdaptiveMaxPooling3D(AdaptivePooling):
    """The largest value of each window of voxels, the windows sized to give `output_size`.

    Each spatial axis is split as in `AdaptiveMaxPooling1D`.

    Args:
        output_size: an int or three ints, the output's depth, rows and cols.
        data_format: `"channels_last"` or `"channels_first"`; None means
            `mk.config.image_data_format()` when the layer is made.
        **kwargs: `name`, `trainable`, `dtype`, `input_shape`.

    Input shape:
        `(batch, depth, rows, cols, channels)` (`(batch, channels, depth, rows, cols)`
        with `data_format="channels_first"`).

    Output shape:
        `(batch, *output_size, channels)` (channels first likewise), whatever the
        input's sizes (also `None`).

    Raises:
        TypeError: if `output_size` is neither an int nor a tuple or list.
        ValueError: for a bad argument or inputs of the wrong rank.

    Example:
        >>> layer = mk.layers.AdaptiveMaxPooling3D(2, data_format="channels_first")
        >>> layer(np.ones((2, 3, 5, 4, 6), "float32")).shape
        (2, 3, 2, 2, 2)
    """

    rank = 3
    reduce = staticmethod(ops.adaptive_max_pool)
