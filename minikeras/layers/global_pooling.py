"""Global pooling, channels_last: one value per channel, over every spatial position.

`GlobalMaxPooling1D/2D` and `GlobalAveragePooling1D/2D` (the 3D forms are in
`pooling_3d`): a max or mean over the spatial axes, and for
`GlobalAveragePooling1D`, over the unmasked steps only.
"""

from minikeras import ops
from minikeras.layers.data_format import (
    ChannelsFirst,
    check_layer_data_format,
    check_spatial_rank,
)
from minikeras.layers.layer import Layer

__all__ = [
    "GlobalAveragePooling1D",
    "GlobalAveragePooling2D",
    "GlobalMaxPooling1D",
    "GlobalMaxPooling2D",
    "GlobalPooling",
]


class GlobalPooling(ChannelsFirst, Layer):
    """Pools every spatial position into one (the base of the global pooling layers).

    Args:
        data_format: `"channels_last"` or `"channels_first"` (computed by
            transposing to channels last and back); None means
            `mk.config.image_data_format()` when the layer is made.
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
        check_spatial_rank(self, input_shape)

    def call(self, inputs):
        check_spatial_rank(self, inputs.shape)
        axes = tuple(range(1, self.rank + 1))
        return type(self).reduce(inputs, axis=axes, keepdims=self.keepdims)

    def compute_output_shape(self, input_shape):
        check_spatial_rank(self, input_shape)
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
        data_format: `"channels_last"` or `"channels_first"` (computed by
            transposing to channels last and back); None means
            `mk.config.image_data_format()` when the layer is made.
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
        check_spatial_rank(self, inputs.shape)
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
        data_format: `"channels_last"` or `"channels_first"` (computed by
            transposing to channels last and back); None means
            `mk.config.image_data_format()` when the layer is made.
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
        data_format: `"channels_last"` or `"channels_first"` (computed by
            transposing to channels last and back); None means
            `mk.config.image_data_format()` when the layer is made.
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
        data_format: `"channels_last"` or `"channels_first"` (computed by
            transposing to channels last and back); None means
            `mk.config.image_data_format()` when the layer is made.
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
