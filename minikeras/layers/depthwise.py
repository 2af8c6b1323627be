"""Depthwise and separable convolution layers, channels last or first.

`DepthwiseConv1D` / `DepthwiseConv2D` convolve each input channel with its
own `depth_multiplier` filters; `SeparableConv1D` / `SeparableConv2D` follow
that with a 1x1 convolution mixing the channels: far fewer weights than a
full convolution of the same size.
"""

from minikeras import activations, constraints, initializers, ops, regularizers
from minikeras.layers.convolutional import BaseConv
from minikeras.layers.dense import check_positive_int

__all__ = [
    "DepthwiseConv",
    "DepthwiseConv1D",
    "DepthwiseConv2D",
    "SeparableConv",
    "SeparableConv1D",
    "SeparableConv2D",
]


class DepthwiseConv(BaseConv):
    """Depthwise convolution layer (the base of `DepthwiseConv1D`, `DepthwiseConv2D`).

    `activation(depthwise_conv(inputs, kernel) + bias)`: output channel
    `c * depth_multiplier + m` is input channel `c` convolved with
    `kernel[..., c, m]`.

    Args:
        kernel_size: an int or `rank` ints.
        strides: an int or `rank` ints.
        padding: `"valid"` or `"same"`.
        depth_multiplier: positive int, filters per input channel.
        data_format: `"channels_last"` or `"channels_first"` (computed by
            transposing to channels last and back); None means
            `mk.config.image_data_format()` when the layer is made.
        dilation_rate: an int or `rank` ints.
        activation: name or callable; None means linear.
        use_bias: whether to add a bias.
        depthwise_initializer: initializer of the `(*kernel_size, channels,
            depth_multiplier)` kernel.
        bias_initializer: initializer of the `(channels * depth_multiplier,)` bias.
        depthwise_regularizer: regularizer of the kernel, or None.
        bias_regularizer: regularizer of the bias, or None.
        depthwise_constraint: constraint of the kernel, or None.
        bias_constraint: constraint of the bias, or None.
        **kwargs: `name`, `trainable`, `dtype`, `input_shape`.

    Raises:
        ValueError: for a bad argument, or inputs of the wrong rank or channels.

    Example:
        >>> layer = mk.layers.DepthwiseConv2D(3, depth_multiplier=2)
        >>> layer(np.ones((1, 5, 5, 3), "float32")).shape, layer.kernel.shape
        ((1, 3, 3, 6), (3, 3, 3, 2))
    """

    def __init__(
        self,
        kernel_size,
        strides=1,
        padding="valid",
        depth_multiplier=1,
        data_format=None,
        dilation_rate=1,
        activation=None,
        use_bias=True,
        depthwise_initializer="glorot_uniform",
        bias_initializer="zeros",
        depthwise_regularizer=None,
        bias_regularizer=None,
        depthwise_constraint=None,
        bias_constraint=None,
        **kwargs,
    ):
        super().__init__(kernel_size, strides, padding, data_format, dilation_rate, activation,
                         use_bias, bias_initializer, bias_regularizer, bias_constraint,
                         **kwargs)  # fmt: skip
        layer = type(self).__name__
        self.depth_multiplier = check_positive_int(layer, "depth_multiplier", depth_multiplier)
        self.depthwise_initializer = initializers.get(depthwise_initializer)
        self.depthwise_regularizer = regularizers.get(depthwise_regularizer)
        self.depthwise_constraint = constraints.get(depthwise_constraint)

    def build(self, input_shape):
        self.input_channels = self.check_input_shape(input_shape)
        self.kernel = self.add_weight(
            "kernel",
            shape=(*self.kernel_size, self.input_channels, self.depth_multiplier),
            initializer=self.depthwise_initializer,
            regularizer=self.depthwise_regularizer,
            constraint=self.depthwise_constraint,
        )
        self._add_bias(self.input_channels * self.depth_multiplier)

    def call(self, inputs):
        self.check_input_shape(inputs.shape)
        outputs = ops.depthwise_conv(  # channels last: ChannelsFirst transposes around call
            inputs, self.kernel, self.strides, self.padding, "channels_last", self.dilation_rate
        )
        if self.bias is not None:
            outputs = ops.add(outputs, self.bias)
        return self._activate(outputs)

    def compute_output_shape(self, input_shape):
        channels = self.check_input_shape(input_shape)
        spatial = self._spatial_output(input_shape)
        return (input_shape[0], *spatial, channels * self.depth_multiplier)

    def get_config(self):
        config = super().get_config()
        config.update(
            depth_multiplier=self.depth_multiplier,
            depthwise_initializer=initializers.serialize(self.depthwise_initializer),
            depthwise_regularizer=regularizers.serialize(self.depthwise_regularizer),
            depthwise_constraint=constraints.serialize(self.depthwise_constraint),
        )
        return config


class DepthwiseConv1D(DepthwiseConv):
    """1-D depthwise convolution over `(batch, steps, channels)`.

    Args:
        kernel_size: an int.
        strides: an int.
        padding: `"valid"` or `"same"`.
        depth_multiplier: positive int, filters per input channel.
        **kwargs: as `DepthwiseConv`.

    Input shape:
        `(batch, steps, channels)` (`(batch, channels, steps)` with
        `data_format="channels_first"`).

    Output shape:
        `(batch, new_steps, channels * depth_multiplier)` (channels first likewise):
        each new size is `floor((n - w) / s) + 1` for `"valid"` and `ceil(n / s)` for
        `"same"`, where `n` is the input size, `s` the stride and
        `w = dilation_rate * (kernel_size - 1) + 1`; a `None` size stays `None`.

    Raises:
        ValueError: for a bad argument, or inputs of the wrong rank or channels.

    Example:
        >>> mk.layers.DepthwiseConv1D(3, padding="same")(np.ones((2, 6, 4), "float32")).shape
        (2, 6, 4)
    """

    rank = 1


class DepthwiseConv2D(DepthwiseConv):
    """2-D depthwise convolution over `(batch, height, width, channels)`.

    Args:
        kernel_size: an int or two ints.
        strides: an int or two ints.
        padding: `"valid"` or `"same"`.
        depth_multiplier: positive int, filters per input channel.
        **kwargs: as `DepthwiseConv`: `dilation_rate`, `activation`,
            `use_bias`, `depthwise_initializer`, `bias_initializer`,
            regularizers, constraints, `name`, `dtype`.

    Input shape:
        `(batch, rows, cols, channels)` (`(batch, channels, rows, cols)` with
        `data_format="channels_first"`).

    Output shape:
        `(batch, new_rows, new_cols, channels * depth_multiplier)` (channels first
        likewise): each new size is `floor((n - w) / s) + 1` for `"valid"` and
        `ceil(n / s)` for `"same"`, where `n` is the input size, `s` the stride and
        `w = dilation_rate * (kernel_size - 1) + 1`; a `None` size stays `None`.

    Raises:
        ValueError: for a bad argument, or inputs of the wrong rank or channels.

    Example:
        >>> mk.layers.DepthwiseConv2D(3, strides=2, padding="same")(
        ...     np.ones((1, 8, 8, 3), "float32")
        ... ).shape
        (1, 4, 4, 3)
    """

    rank = 2


class SeparableConv(BaseConv):
    """Separable convolution layer (the base of `SeparableConv1D`, `SeparableConv2D`).

    A depthwise convolution, then a 1x1 convolution mixing the channels, then
    bias and activation: `activation(conv(depthwise_conv(inputs, depthwise_kernel),
    pointwise_kernel) + bias)`.

    Args:
        filters: positive int, the number of output channels.
        kernel_size: an int or `rank` ints (of the depthwise step).
        strides: an int or `rank` ints.
        padding: `"valid"` or `"same"`.
        data_format: `"channels_last"` or `"channels_first"` (computed by
            transposing to channels last and back); None means
            `mk.config.image_data_format()` when the layer is made.
        dilation_rate: an int or `rank` ints.
        depth_multiplier: positive int, depthwise filters per input channel.
        activation: name or callable; None means linear.
        use_bias: whether to add a bias.
        depthwise_initializer: initializer of the `(*kernel_size, channels,
            depth_multiplier)` depthwise kernel.
        pointwise_initializer: initializer of the `(*ones, channels *
            depth_multiplier, filters)` pointwise kernel.
        bias_initializer: initializer of the `(filters,)` bias.
        depthwise_regularizer: regularizer of the depthwise kernel, or None.
        pointwise_regularizer: regularizer of the pointwise kernel, or None.
        bias_regularizer: regularizer of the bias, or None.
        depthwise_constraint: constraint of the depthwise kernel, or None.
        pointwise_constraint: constraint of the pointwise kernel, or None.
        bias_constraint: constraint of the bias, or None.
        **kwargs: `name`, `trainable`, `dtype`, `input_shape`.

    Raises:
        ValueError: for a bad argument, or inputs of the wrong rank or channels.

    Example:
        >>> layer = mk.layers.SeparableConv2D(8, 3, padding="same")
        >>> layer(np.ones((1, 5, 5, 3), "float32")).shape
        (1, 5, 5, 8)
        >>> layer.depthwise_kernel.shape, layer.pointwise_kernel.shape
        ((3, 3, 3, 1), (1, 1, 3, 8))
    """

    def __init__(
        self,
        filters,
        kernel_size,
        strides=1,
        padding="valid",
        data_format=None,
        dilation_rate=1,
        depth_multiplier=1,
        activation=None,
        use_bias=True,
        depthwise_initializer="glorot_uniform",
        pointwise_initializer="glorot_uniform",
        bias_initializer="zeros",
        depthwise_regularizer=None,
        pointwise_regularizer=None,
        bias_regularizer=None,
        depthwise_constraint=None,
        pointwise_constraint=None,
        bias_constraint=None,
        **kwargs,
    ):
        super().__init__(kernel_size, strides, padding, data_format, dilation_rate, activation,
                         use_bias, bias_initializer, bias_regularizer, bias_constraint,
                         **kwargs)  # fmt: skip
        layer = type(self).__name__
        self.filters = check_positive_int(layer, "filters", filters)
        self.depth_multiplier = check_positive_int(layer, "depth_multiplier", depth_multiplier)
        self.depthwise_initializer = initializers.get(depthwise_initializer)
        self.pointwise_initializer = initializers.get(pointwise_initializer)
        self.depthwise_regularizer = regularizers.get(depthwise_regularizer)
        self.pointwise_regularizer = regularizers.get(pointwise_regularizer)
        self.depthwise_constraint = constraints.get(depthwise_constraint)
        self.pointwise_constraint = constraints.get(pointwise_constraint)

    def build(self, input_shape):
        channels = self.input_channels = self.check_input_shape(input_shape)
        self.depthwise_kernel = self.add_weight(
            "depthwise_kernel",
            shape=(*self.kernel_size, channels, self.depth_multiplier),
            initializer=self.depthwise_initializer,
            regularizer=self.depthwise_regularizer,
            constraint=self.depthwise_constraint,
        )
        self.pointwise_kernel = self.add_weight(
            "pointwise_kernel",
            shape=(*(1,) * self.rank, channels * self.depth_multiplier, self.filters),
            initializer=self.pointwise_initializer,
            regularizer=self.pointwise_regularizer,
            constraint=self.pointwise_constraint,
        )
        self._add_bias(self.filters)

    def call(self, inputs):
        self.check_input_shape(inputs.shape)
        depthwise = ops.depthwise_conv(
            inputs,
            self.depthwise_kernel,
            self.strides,
            self.padding,
            "channels_last",  # ChannelsFirst transposes around call
            self.dilation_rate,
        )
        relu = self.activation is activations.relu
        outputs = ops.conv(
            depthwise,
            self.pointwise_kernel,
            data_format="channels_last",
            bias=self.bias,
            activation="relu" if relu else None,
        )
        return outputs if relu else self._activate(outputs)

    def compute_output_shape(self, input_shape):
        self.check_input_shape(input_shape)
        return (input_shape[0], *self._spatial_output(input_shape), self.filters)

    def get_config(self):
        config = super().get_config()
        config.update(
            filters=self.filters,
            depth_multiplier=self.depth_multiplier,
            depthwise_initializer=initializers.serialize(self.depthwise_initializer),
            pointwise_initializer=initializers.serialize(self.pointwise_initializer),
            depthwise_regularizer=regularizers.serialize(self.depthwise_regularizer),
            pointwise_regularizer=regularizers.serialize(self.pointwise_regularizer),
            depthwise_constraint=constraints.serialize(self.depthwise_constraint),
            pointwise_constraint=constraints.serialize(self.pointwise_constraint),
        )
        return config


class SeparableConv1D(SeparableConv):
    """1-D separable convolution over `(batch, steps, channels)`.

    Args:
        filters: positive int, the number of output channels.
        kernel_size: an int.
        strides: an int.
        padding: `"valid"` or `"same"`.
        **kwargs: as `SeparableConv`.

    Input shape:
        `(batch, steps, channels)` (`(batch, channels, steps)` with
        `data_format="channels_first"`).

    Output shape:
        `(batch, new_steps, filters)` (channels first likewise): each new size is
        `floor((n - w) / s) + 1` for `"valid"` and `ceil(n / s)` for `"same"`, where `n`
        is the input size, `s` the stride and
        `w = dilation_rate * (kernel_size - 1) + 1`; a `None` size stays `None`.

    Raises:
        ValueError: for a bad argument, or inputs of the wrong rank or channels.

    Example:
        >>> mk.layers.SeparableConv1D(5, 3)(np.ones((2, 6, 4), "float32")).shape
        (2, 4, 5)
    """

    rank = 1


class SeparableConv2D(SeparableConv):
    """2-D separable convolution over `(batch, height, width, channels)`.

    Args:
        filters: positive int, the number of output channels.
        kernel_size: an int or two ints.
        strides: an int or two ints.
        padding: `"valid"` or `"same"`.
        **kwargs: as `SeparableConv`: `dilation_rate`, `depth_multiplier`,
            `activation`, `use_bias`, initializers, regularizers,
            constraints, `name`, `dtype`.

    Input shape:
        `(batch, rows, cols, channels)` (`(batch, channels, rows, cols)` with
        `data_format="channels_first"`).

    Output shape:
        `(batch, new_rows, new_cols, filters)` (channels first likewise): each new size
        is `floor((n - w) / s) + 1` for `"valid"` and `ceil(n / s)` for `"same"`, where
        `n` is the input size, `s` the stride and
        `w = dilation_rate * (kernel_size - 1) + 1`; a `None` size stays `None`.

    Raises:
        ValueError: for a bad argument, or inputs of the wrong rank or channels.

    Example:
        >>> mk.layers.SeparableConv2D(16, 3, depth_multiplier=2)(
        ...     np.ones((1, 6, 6, 3), "float32")
        ... ).shape
        (1, 4, 4, 16)
    """

    rank = 2
