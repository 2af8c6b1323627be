"""Pooling layers, channels_last: `MaxPooling1D/2D` and `AveragePooling1D/2D`.

Windowed pooling is `ops.max_pool` / `ops.average_pool`. The global pooling
layers, a max or mean over every spatial axis, are in `global_pooling`
(re-exported here, where they were first written).
"""

from minikeras import ops
from minikeras.layers.data_format import (
    ChannelsFirst,
    check_layer_data_format,
    check_spatial_rank,
)
from minikeras.layers.global_pooling import (
    GlobalAveragePooling1D,
    GlobalAveragePooling2D,
    GlobalMaxPooling1D,
    GlobalMaxPooling2D,
    GlobalPooling,
)
from minikeras.layers.layer import Layer
from minikeras.ops.windows import (
    normalize_padding,
    normalize_tuple,
    output_length,
)

__all__ = [
    "AveragePooling1D",
    "AveragePooling2D",
    "MaxPooling1D",
    "MaxPooling2D",
    "Pooling",
    # re-exported from global_pooling
    "GlobalAveragePooling1D",
    "GlobalAveragePooling2D",
    "GlobalMaxPooling1D",
    "GlobalMaxPooling2D",
    "GlobalPooling",
]


class Pooling(ChannelsFirst, Layer):
    """Windowed pooling (the base of the max and average pooling layers).

    Args:
        pool_size: an int or `rank` ints, the window size.
        strides: an int, `rank` ints, or None (then `pool_size`).
        padding: `"valid"` (whole windows only) or `"same"` (output
            `ceil(input / strides)`; padding is ignored by the reduction).
        data_format: `"channels_last"` or `"channels_first"` (computed by
            transposing to channels last and back); None means
            `mk.config.image_data_format()` when the layer is made.
        **kwargs: `name`, `trainable`, `dtype`, `input_shape`.

    Raises:
        ValueError: for a bad argument, inputs of the wrong rank, or a window
            larger than a `"valid"` input.

    Example:
        >>> mk.layers.MaxPooling2D()(np.ones((2, 6, 6, 3), "float32")).shape
        (2, 3, 3, 3)
    """

    rank = None
    reduce = None  # the op: ops.max_pool or ops.average_pool

    def __init__(self, pool_size=2, strides=None, padding="valid", data_format=None, **kwargs):
        super().__init__(**kwargs)
        layer = type(self).__name__
        self.pool_size = normalize_tuple(layer, "pool_size", pool_size, self.rank)
        self.strides = (
            self.pool_size
            if strides is None
            else normalize_tuple(layer, "strides", strides, self.rank)
        )
        self.padding = normalize_padding(layer, padding)
        self.data_format = check_layer_data_format(layer, data_format)

    def build(self, input_shape):
        self.compute_output_shape(input_shape)

    def call(self, inputs):
        self.compute_output_shape(inputs.shape)
        reduce = type(self).reduce  # channels last: ChannelsFirst transposes around call
        return reduce(inputs, self.pool_size, self.strides, self.padding, "channels_last")

    def compute_output_shape(self, input_shape):
        check_spatial_rank(self, input_shape)
        spatial = []
        for axis, (n, k, s) in enumerate(zip(input_shape[1:-1], self.pool_size, self.strides), 1):
            length = output_length(n, k, s, self.padding)
            if length is not None and length < 1:
                raise ValueError(
                    f"{type(self).__name__} '{self.name}': pool_size {self.pool_size} is larger "
                    f"than the input's {n} along axis {axis} with padding 'valid'; got shape "
                    f"{tuple(input_shape)}"
                )
            spatial.append(length)
        return (input_shape[0], *spatial, input_shape[-1])

    def get_config(self):
        return {
            **super().get_config(),
            "pool_size": self.pool_size,
            "strides": self.strides,
            "padding": self.padding,
            "data_format": self.data_format,
        }


class MaxPooling1D(Pooling):
    """The largest value of each window of steps, channel by channel.

    Args:
        pool_size: an int, the window length.
        strides: an int, or None (then `pool_size`).
        padding: `"valid"` or `"same"`.
        data_format: `"channels_last"` or `"channels_first"` (computed by
            transposing to channels last and back); None means
            `mk.config.image_data_format()` when the layer is made.
        **kwargs: `name`, `trainable`, `dtype`, `input_shape`.

    Input shape:
        `(batch, steps, channels)` (`(batch, channels, steps)` with
        `data_format="channels_first"`).

    Output shape:
        `(batch, new_steps, channels)` (channels first likewise): each new size is
        `floor((n - pool_size) / strides) + 1` for `"valid"` and `ceil(n / strides)` for
        `"same"`; a `None` size stays `None`.

    Raises:
        ValueError: for a bad argument or inputs of the wrong rank.

    Example:
        >>> x = np.array([1.0, 3.0, 2.0, 5.0], "float32").reshape(1, 4, 1)
        >>> mk.layers.MaxPooling1D()(x).numpy()[0, :, 0]
        array([3., 5.], dtype=float32)
    """

    rank = 1
    reduce = staticmethod(ops.max_pool)


class MaxPooling2D(Pooling):
    """The largest value of each window of pixels, channel by channel.

    Args:
        pool_size: an int or two ints, the window size.
        strides: an int, two ints, or None (then `pool_size`).
        padding: `"valid"` or `"same"`.
        data_format: `"channels_last"` or `"channels_first"` (computed by
            transposing to channels last and back); None means
            `mk.config.image_data_format()` when the layer is made.
        **kwargs: `name`, `trainable`, `dtype`, `input_shape`.

    Input shape:
        `(batch, rows, cols, channels)` (`(batch, channels, rows, cols)` with
        `data_format="channels_first"`).

    Output shape:
        `(batch, new_rows, new_cols, channels)` (channels first likewise): each new size
        is `floor((n - pool_size) / strides) + 1` for `"valid"` and `ceil(n / strides)`
        for `"same"`; a `None` size stays `None`.

    Raises:
        ValueError: for a bad argument or inputs of the wrong rank.

    Example:
        >>> mk.layers.MaxPooling2D(pool_size=3, strides=2, padding="same")(
        ...     np.ones((1, 7, 7, 2))
        ... ).shape
        (1, 4, 4, 2)
    """

    rank = 2
    reduce = staticmethod(ops.max_pool)


class AveragePooling1D(Pooling):
    """The mean of each window of steps, channel by channel.

    Args:
        pool_size: an int, the window length.
        strides: an int, or None (then `pool_size`).
        padding: `"valid"` or `"same"` (a window's mean is over its real inputs).
        data_format: `"channels_last"` or `"channels_first"` (computed by
            transposing to channels last and back); None means
            `mk.config.image_data_format()` when the layer is made.
        **kwargs: `name`, `trainable`, `dtype`, `input_shape`.

    Input shape:
        `(batch, steps, channels)` (`(batch, channels, steps)` with
        `data_format="channels_first"`).

    Output shape:
        `(batch, new_steps, channels)` (channels first likewise): each new size is
        `floor((n - pool_size) / strides) + 1` for `"valid"` and `ceil(n / strides)` for
        `"same"`; a `None` size stays `None`.

    Raises:
        ValueError: for a bad argument or inputs of the wrong rank.

    Example:
        >>> x = np.array([1.0, 3.0, 2.0, 5.0, 4.0], "float32").reshape(1, 5, 1)
        >>> mk.layers.AveragePooling1D(padding="same")(x).numpy()[0, :, 0]
        array([2. , 3.5, 4. ], dtype=float32)
    """

    rank = 1
    reduce = staticmethod(ops.average_pool)


class AveragePooling2D(Pooling):
    """The mean of each window of pixels, channel by channel.

    Args:
        pool_size: an int or two ints, the window size.
        strides: an int, two ints, or None (then `pool_size`).
        padding: `"valid"` or `"same"` (a window's mean is over its real inputs).
        data_format: `"channels_last"` or `"channels_first"` (computed by
            transposing to channels last and back); None means
            `mk.config.image_data_format()` when the layer is made.
        **kwargs: `name`, `trainable`, `dtype`, `input_shape`.

    Input shape:
        `(batch, rows, cols, channels)` (`(batch, channels, rows, cols)` with
        `data_format="channels_first"`).

    Output shape:
        `(batch, new_rows, new_cols, channels)` (channels first likewise): each new size
        is `floor((n - pool_size) / strides) + 1` for `"valid"` and `ceil(n / strides)`
        for `"same"`; a `None` size stays `None`.

    Raises:
        ValueError: for a bad argument or inputs of the wrong rank.

    Example:
        >>> mk.layers.AveragePooling2D()(np.ones((2, 4, 4, 3), "float32")).numpy()[0, :, :, 0]
        array([[1., 1.],
               [1., 1.]], dtype=float32)
    """

    rank = 2
    reduce = staticmethod(ops.average_pool)
