"""Pooling layers, channels_last: `MaxPooling1D/2D`, `AveragePooling1D/2D` and global pooling.

Windowed pooling is `ops.max_pool` / `ops.average_pool`; global pooling is a
max or mean over every spatial axis.
"""

from minikeras import ops
from minikeras.layers.data_format import ChannelsFirst, check_layer_data_format
from minikeras.layers.layer import Layer
from minikeras.ops.windows import (
    normalize_padding,
    normalize_tuple,
    output_length,
)

__all__ = [
    "AveragePooling1D",
    "AveragePooling2D",
    "GlobalAveragePooling1D",
    "GlobalAveragePooling2D",
    "GlobalMaxPooling1D",
    "GlobalMaxPooling2D",
    "GlobalPooling",
    "MaxPooling1D",
    "MaxPooling2D",
    "Pooling",
]

_AXES = {1: "batch, steps, channels", 2: "batch, height, width, channels"}


def _check_rank(layer, shape):
    if len(shape) != layer.rank + 2:
        raise ValueError(
            f"{type(layer).__name__} '{layer.name}' expected inputs of rank {layer.rank + 2} "
            f"({_AXES[layer.rank]}), got shape {tuple(shape)}"
        )


class Pooling(ChannelsFirst, Layer):
    """Windowed pooling (the base of the max and average pooling layers).

    Args:
        pool_size: an int or `rank` ints, the window size.
        strides: an int, `rank` ints, or None (then `pool_size`).
        padding: `"valid"` (whole windows only) or `"same"` (output
            `ceil(input / strides)`; padding is ignored by the reduction).
        data_format: `"channels_last"` (None) or `"channels_first"` (computed by
            transposing to channels last and back).
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
        return type(self).reduce(inputs, self.pool_size, self.strides, self.padding)

    def compute_output_shape(self, input_shape):
        _check_rank(self, input_shape)
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
        data_format: `"channels_last"` (None) or `"channels_first"` (computed by
            transposing to channels last and back).
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
        data_format: `"channels_last"` (None) or `"channels_first"` (computed by
            transposing to channels last and back).
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
        data_format: `"channels_last"` (None) or `"channels_first"` (computed by
            transposing to channels last and back).
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
        data_format: `"channels_last"` (None) or `"channels_first"` (computed by
            transposing to channels last and back).
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


class GlobalPooling(ChannelsFirst, Layer):
    """Pools every spatial position into one (the base of the global pooling layers).

    Args:
        data_format: `"channels_last"` (None) or `"channels_first"` (computed by
            transposing to channels last and back).
        keepdims: keep the spatial axes, with length 1.
        **kwargs: `name`, `trainable`, `dtype`, `input_shape`.

    Raises:
        ValueError: for inputs of the wrong rank.

    Example:
        >>> mk.layers.GlobalAveragePooling2D()(np.ones((2, 5, 5, 3), "float32")).shape
        (2, 3)
    """

    rank = None
    reduce = None  # ops.max or ops.mean

    def __init__(self, data_format=None, keepdims=False, **kwargs):
        super().__init__(**kwargs)
        self.data_format = check_layer_data_format(type(self).__name__, data_format)
        self.keepdims = bool(keepdims)

    def build(self, input_shape):
        _check_rank(self, input_shape)

    def call(self, inputs):
        _check_rank(self, inputs.shape)
        axes = tuple(range(1, self.rank + 1))
        return type(self).reduce(inputs, axis=axes, keepdims=self.keepdims)

    def compute_output_shape(self, input_shape):
        _check_rank(self, input_shape)
        if self.keepdims:
            return (input_shape[0], *(1,) * self.rank, input_shape[-1])
        return (input_shape[0], input_shape[-1])

    def get_config(self):
        return {**super().get_config(), "data_format": self.data_format, "keepdims": self.keepdims}


class GlobalAveragePooling1D(GlobalPooling):
    """The mean over all steps, channel by channel: one value per channel.

    With a mask (from `Embedding(mask_zero=True)`, say), the mean is over
    the unmasked steps only, as in Keras: a padded sequence pools to what it
    would alone. A sample whose every step is masked pools to zeros (Keras
    gives nan, 0 / 0, which would then spread through the loss). The output
    carries no mask.

    Args:
        data_format: `"channels_last"` (None) or `"channels_first"` (computed by
            transposing to channels last and back).
        keepdims: keep the steps axis, with length 1.
        **kwargs: `name`, `trainable`, `dtype`, `input_shape`.

    Input shape:
        `(batch, steps, channels)` (`(batch, channels, steps)` with
        `data_format="channels_first"`).

    Output shape:
        `(batch, channels)`; with `keepdims=True`, `(batch, 1, channels)`
        (`(batch, channels, 1)` channels first).

    Raises:
        ValueError: for inputs of the wrong rank, or a mask that is not
            `(batch, steps)`.

    Example:
        >>> x = np.arange(6.0, dtype="float32").reshape(1, 3, 2)
        >>> mk.layers.GlobalAveragePooling1D()(x).numpy()
        array([[2., 3.]], dtype=float32)
        >>> mk.layers.GlobalAveragePooling1D()(x, mask=np.array([[True, True, False]])).numpy()
        array([[1., 2.]], dtype=float32)
    """

    rank = 1
    reduce = staticmethod(ops.mean)
    supports_masking = True

    def call(self, inputs, mask=None):
        if mask is None:
            return super().call(inputs)
        _check_rank(self, inputs.shape)
        mask = ops.convert_to_tensor(mask)
        if mask.shape != inputs.shape[:2]:
            raise ValueError(
                f"{type(self).__name__} '{self.name}': the mask must have shape (batch, steps) "
                f"{inputs.shape[:2]} for inputs of shape {inputs.shape}; got mask shape "
                f"{mask.shape}"
            )
        kept = ops.expand_dims(ops.cast(mask, "bool"), -1)
        # `where`, not a product: a masked step holding inf or nan must not leak.
        total = ops.sum(ops.where(kept, inputs, 0.0), axis=1, keepdims=self.keepdims)
        count = ops.sum(ops.cast(kept, inputs.dtype), axis=1, keepdims=self.keepdims)
        return total / ops.maximum(count, 1.0)  # no step kept: 0 / 1

    def compute_mask(self, inputs, mask=None):
        """None: the steps are pooled away, and their mask with them.

        Args:
            inputs: the inputs the layer was called on.
            mask: the inputs' mask, or None.

        Returns:
            None.

        Example:
            >>> mk.layers.GlobalAveragePooling1D().compute_mask(
            ...     np.ones((1, 3, 2)), np.ones((1, 3), bool)
            ... )
        """
        return None


class GlobalAveragePooling2D(GlobalPooling):
    """The mean over all pixels, channel by channel: one value per channel.

    Args:
        data_format: `"channels_last"` (None) or `"channels_first"` (computed by
            transposing to channels last and back).
        keepdims: keep the spatial axes, with length 1.
        **kwargs: `name`, `trainable`, `dtype`, `input_shape`.

    Input shape:
        `(batch, rows, cols, channels)` (`(batch, channels, rows, cols)` with
        `data_format="channels_first"`).

    Output shape:
        `(batch, channels)`; with `keepdims=True`, `(batch, 1, 1, channels)`
        (`(batch, channels, 1, 1)` channels first).

    Raises:
        ValueError: for inputs of the wrong rank.

    Example:
        >>> mk.layers.GlobalAveragePooling2D(keepdims=True)(np.ones((2, 4, 4, 3), "float32")).shape
        (2, 1, 1, 3)
    """

    rank = 2
    reduce = staticmethod(ops.mean)


class GlobalMaxPooling1D(GlobalPooling):
    """The largest value over all steps, channel by channel.

    Args:
        data_format: `"channels_last"` (None) or `"channels_first"` (computed by
            transposing to channels last and back).
        keepdims: keep the steps axis, with length 1.
        **kwargs: `name`, `trainable`, `dtype`, `input_shape`.

    Input shape:
        `(batch, steps, channels)` (`(batch, channels, steps)` with
        `data_format="channels_first"`).

    Output shape:
        `(batch, channels)`; with `keepdims=True`, `(batch, 1, channels)`
        (`(batch, channels, 1)` channels first).

    Raises:
        ValueError: for inputs of the wrong rank.

    Example:
        >>> x = np.arange(6.0, dtype="float32").reshape(1, 3, 2)
        >>> mk.layers.GlobalMaxPooling1D()(x).numpy()
        array([[4., 5.]], dtype=float32)
    """

    rank = 1
    reduce = staticmethod(ops.max)


class GlobalMaxPooling2D(GlobalPooling):
    """The largest value over all pixels, channel by channel.

    Args:
        data_format: `"channels_last"` (None) or `"channels_first"` (computed by
            transposing to channels last and back).
        keepdims: keep the spatial axes, with length 1.
        **kwargs: `name`, `trainable`, `dtype`, `input_shape`.

    Input shape:
        `(batch, rows, cols, channels)` (`(batch, channels, rows, cols)` with
        `data_format="channels_first"`).

    Output shape:
        `(batch, channels)`; with `keepdims=True`, `(batch, 1, 1, channels)`
        (`(batch, channels, 1, 1)` channels first).

    Raises:
        ValueError: for inputs of the wrong rank.

    Example:
        >>> mk.layers.GlobalMaxPooling2D()(np.ones((2, 4, 4, 3), "float32")).shape
        (2, 3)
    """

    rank = 2
    reduce = staticmethod(ops.max)
