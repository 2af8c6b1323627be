"""Convolution layers, channels_last: `Conv1D`, `Conv2D`, and what all convolutions share.

Transposed convolutions are in `minikeras.layers.conv_transpose`, depthwise
and separable ones in `minikeras.layers.depthwise`; the math of all of them
is in `minikeras.ops.conv`.
"""

from minikeras import activations, constraints, initializers, ops, regularizers
from minikeras.layers.data_format import ChannelsFirst, check_layer_data_format
from minikeras.layers.dense import check_positive_int
from minikeras.layers.layer import Layer
from minikeras.ops.windows import (
    normalize_padding,
    normalize_tuple,
    output_length,
)

__all__ = ["BaseConv", "Conv", "Conv1D", "Conv2D"]


class BaseConv(ChannelsFirst, Layer):
    """What every convolution layer shares: arguments, input checks, output shapes.

    Subclasses set the class attribute `rank` (the number of spatial axes) and
    implement `build` and `call`; `kernel_size`, `strides`, `padding`,
    `dilation_rate`, `activation` and `use_bias` are read and checked here, so
    that every layer's errors name it.

    Args:
        kernel_size: an int or `rank` ints.
        strides: an int or `rank` ints.
        padding: `"valid"` or `"same"` (and `"causal"` where a subclass allows it).
        data_format: `"channels_last"` or `"channels_first"` (computed by
            transposing to channels last and back); None means
            `mk.config.image_data_format()` when the layer is made.
        dilation_rate: an int or `rank` ints.
        activation: name or callable; None means linear.
        use_bias: whether to add a bias.
        bias_initializer: initializer of the bias.
        bias_regularizer: regularizer of the bias, or None.
        bias_constraint: constraint of the bias, or None.
        **kwargs: `name`, `trainable`, `dtype`, `input_shape`.

    Raises:
        ValueError: for a bad argument.

    Example:
        >>> from minikeras.layers import Conv2D
        >>> isinstance(Conv2D(2, 3), mk.layers.convolutional.BaseConv)
        True
    """

    rank = None
    _paddings = ("valid", "same")
    _window_must_fit = True  # a transposed convolution's window may exceed its input

    def __init__(
        self,
        kernel_size,
        strides=1,
        padding="valid",
        data_format=None,
        dilation_rate=1,
        activation=None,
        use_bias=True,
        bias_initializer="zeros",
        bias_regularizer=None,
        bias_constraint=None,
        **kwargs,
    ):
        super().__init__(**kwargs)
        layer, rank = type(self).__name__, self.rank
        self.kernel_size = normalize_tuple(layer, "kernel_size", kernel_size, rank)
        self.strides = normalize_tuple(layer, "strides", strides, rank)
        self.padding = normalize_padding(layer, padding, self._paddings)
        self.data_format = check_layer_data_format(layer, data_format)
        self.dilation_rate = normalize_tuple(layer, "dilation_rate", dilation_rate, rank)
        if max(self.strides) > 1 and max(self.dilation_rate) > 1:
            raise ValueError(
                f"{layer}: strides > 1 cannot be combined with dilation_rate > 1 (as in Keras); "
                f"got strides={self.strides} and dilation_rate={self.dilation_rate}"
            )
        self.activation = activations.get(activation)
        self.use_bias = bool(use_bias)
        self.bias_initializer = initializers.get(bias_initializer)
        self.bias_regularizer = regularizers.get(bias_regularizer)
        self.bias_constraint = constraints.get(bias_constraint)
        self.input_channels = None

    def _describe(self):
        return f"{type(self).__name__} '{self.name}'"

    def check_input_shape(self, shape):
        """Checks the rank, the channels and that a `"valid"` window fits.

        Args:
            shape: the input shape, `None` where unknown.

        Returns:
            The number of input channels.

        Raises:
            ValueError: naming the layer and the shape.

        Example:
            >>> mk.layers.Conv2D(4, 3).check_input_shape((None, 28, 28, 1))
            1
        """
        axes = {1: "batch, steps, channels", 2: "batch, height, width, channels"}.get(self.rank)
        if len(shape) != self.rank + 2:
            raise ValueError(
                f"{self._describe()} expected inputs of rank {self.rank + 2} ({axes}), "
                f"got shape {tuple(shape)}"
            )
        channels = shape[-1]
        if channels is None:
            raise ValueError(f"{self._describe()} needs a known channel axis, got shape {shape}")
        if self.input_channels is not None and channels != self.input_channels:
            raise ValueError(
                f"{self._describe()} was built for {self.input_channels} input channels, "
                f"got shape {tuple(shape)}"
            )
        if self.padding == "valid" and self._window_must_fit:
            for axis, (n, k, d) in enumerate(zip(shape[1:-1], self.kernel_size,
                                                 self.dilation_rate), 1):  # fmt: skip
                if n is not None and n < (k - 1) * d + 1:
                    raise ValueError(
                        f"{self._describe()}: kernel_size {self.kernel_size} with dilation_rate "
                        f"{self.dilation_rate} spans {(k - 1) * d + 1} along axis {axis}, larger "
                        f"than the input's {n} with padding 'valid'; got shape {tuple(shape)}"
                    )
        return channels

    def _spatial_output(self, shape):
        return [
            output_length(n, k, s, self.padding, d)
            for n, k, s, d in zip(shape[1:-1], self.kernel_size, self.strides, self.dilation_rate)
        ]

    def _add_bias(self, size):
        self.bias = None
        if self.use_bias:
            self.bias = self.add_weight(
                "bias",
                shape=(size,),
                initializer=self.bias_initializer,
                regularizer=self.bias_regularizer,
                constraint=self.bias_constraint,
            )

    def _activate(self, outputs):
        if self.activation is None or self.activation is activations.linear:
            return outputs  # (None: set on the layer after it was made, as Keras allows)
        return self.activation(outputs)

    def get_config(self):
        config = {
            **super().get_config(),
            "kernel_size": self.kernel_size,
            "strides": self.strides,
            "padding": self.padding,
            "data_format": self.data_format,
            "dilation_rate": self.dilation_rate,
            "activation": activations.serialize(self.activation),
            "use_bias": self.use_bias,
            "bias_initializer": initializers.serialize(self.bias_initializer),
            "bias_regularizer": regularizers.serialize(self.bias_regularizer),
            "bias_constraint": constraints.serialize(self.bias_constraint),
        }
        return config


class Conv(BaseConv):
    """Convolution layer: `activation(conv(inputs, kernel) + bias)`; the base of `Conv1D`, `Conv2D`.

    With a linear or relu activation the convolution, bias and relu are one
    fused primitive (`ops.conv`).

    Args:
        filters: positive int, the number of output channels.
        kernel_size: an int or `rank` ints.
        strides: an int or `rank` ints.
        padding: `"valid"` or `"same"` (`Conv1D` also `"causal"`).
        data_format: `"channels_last"` or `"channels_first"` (computed by
            transposing to channels last and back); None means
            `mk.config.image_data_format()` when the layer is made.
        dilation_rate: an int or `rank` ints.
        groups: positive int dividing both the input channels and `filters`:
            each group of channels is convolved with its own filters.
        activation: name or callable; None means linear.
        use_bias: whether to add a bias.
        kernel_initializer: initializer of the `(*kernel_size, channels / groups, filters)` kernel.
        bias_initializer: initializer of the `(filters,)` bias.
        kernel_regularizer: regularizer of the kernel, or None.
        bias_regularizer: regularizer of the bias, or None.
        kernel_constraint: constraint of the kernel, or None.
        bias_constraint: constraint of the bias, or None.
        **kwargs: `name`, `trainable`, `dtype`, `input_shape`.

    Raises:
        ValueError: for a bad argument, or inputs of the wrong rank or channels.

    Example:
        >>> from minikeras.layers import Conv2D
        >>> Conv2D(4, 3, groups=2)(np.ones((1, 5, 5, 2), "float32")).shape
        (1, 3, 3, 4)
    """

    def __init__(
        self,
        filters,
        kernel_size,
        strides=1,
        padding="valid",
        data_format=None,
        dilation_rate=1,
        groups=1,
        activation=None,
        use_bias=True,
        kernel_initializer="glorot_uniform",
        bias_initializer="zeros",
        kernel_regularizer=None,
        bias_regularizer=None,
        kernel_constraint=None,
        bias_constraint=None,
        **kwargs,
    ):
        super().__init__(kernel_size, strides, padding, data_format, dilation_rate,
                         activation, use_bias, bias_initializer, bias_regularizer,
                         bias_constraint, **kwargs)  # fmt: skip
        self.filters = check_positive_int(type(self).__name__, "filters", filters)
        self.groups = check_positive_int(type(self).__name__, "groups", groups)
        if self.filters % self.groups:
            raise ValueError(
                f"{type(self).__name__}: filters ({filters}) must be a multiple of groups "
                f"({groups})"
            )
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.kernel_regularizer = regularizers.get(kernel_regularizer)
        self.kernel_constraint = constraints.get(kernel_constraint)

    def build(self, input_shape):
        channels = self.check_input_shape(input_shape)
        if channels % self.groups:
            raise ValueError(
                f"{self._describe()}: the {channels} input channels must be a multiple of "
                f"groups ({self.groups}); got shape {tuple(input_shape)}"
            )
        self.input_channels = channels
        self.kernel = self.add_weight(
            "kernel",
            shape=(*self.kernel_size, channels // self.groups, self.filters),
            initializer=self.kernel_initializer,
            regularizer=self.kernel_regularizer,
            constraint=self.kernel_constraint,
        )
        self._add_bias(self.filters)

    def convolution_op(self, inputs, kernel):
        """The convolution of `call`, without bias or activation; subclasses may override it.

        As Keras's `Conv.convolution_op`: a subclass that changes only the
        convolution (a standardized kernel, say) overrides this method, and
        `call` then adds the bias and the activation to what it returns.

        Args:
            inputs: channels-last inputs (a channels-first layer's `call`, and
                so this method, sees them transposed), already padded in front
                for `"causal"` padding.
            kernel: the kernel to convolve with, of the shape of `self.kernel`.

        Returns:
            `ops.conv(inputs, kernel)` with the layer's strides, padding and
            dilation rate.

        Example:
            >>> conv = mk.layers.Conv1D(2, 3, kernel_initializer="ones")
            >>> conv(np.ones((1, 4, 1), "float32")).shape
            (1, 2, 2)
            >>> conv.convolution_op(np.ones((1, 4, 1), "float32"), 2 * conv.kernel).numpy()[0, 0]
            array([6., 6.], dtype=float32)
        """
        padding = "valid" if self.padding == "causal" else self.padding
        return ops.conv(inputs, kernel, self.strides, padding, "channels_last", self.dilation_rate)

    def call(self, inputs):
        self.check_input_shape(inputs.shape)
        padding = self.padding
        if padding == "causal":  # pad in front only: output t sees inputs up to t
            front = (self.kernel_size[0] - 1) * self.dilation_rate[0]
            inputs, padding = ops.pad(inputs, ((0, 0), (front, 0), (0, 0))), "valid"
        if type(self).convolution_op is not Conv.convolution_op:  # a subclass's own convolution
            outputs = self.convolution_op(inputs, self.kernel)
            return self._activate(outputs if self.bias is None else outputs + self.bias)
        relu = self.activation is activations.relu
        outputs = ops.conv(
            inputs,
            self.kernel,
            self.strides,
            padding,
            "channels_last",  # a channels-first layer's call sees transposed inputs
            self.dilation_rate,
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
            groups=self.groups,
            kernel_initializer=initializers.serialize(self.kernel_initializer),
            kernel_regularizer=regularizers.serialize(self.kernel_regularizer),
            kernel_constraint=constraints.serialize(self.kernel_constraint),
        )
        return config


class Conv1D(Conv):
    """1-D convolution over `(batch, steps, channels)`, e.g. of sequences.

    Args:
        filters: positive int, the number of output channels.
        kernel_size: an int, the window length.
        strides: an int.
        padding: `"valid"`, `"same"` or `"causal"` (zeros in front only, so
            that output `t` depends on inputs up to `t`).
        **kwargs: as `Conv`: `data_format`, `dilation_rate`, `groups`,
            `activation`, `use_bias`, initializers, regularizers, constraints,
            `name`, `dtype`.

    Input shape:
        `(batch, steps, channels)` (`(batch, channels, steps)` with
        `data_format="channels_first"`).

    Output shape:
        `(batch, new_steps, filters)` (channels first likewise): each new size is
        `floor((n - w) / s) + 1` for `"valid"` and `ceil(n / s)` for `"same"` and
        `"causal"`, where `n` is the input size, `s` the stride and
        `w = dilation_rate * (kernel_size - 1) + 1`; a `None` size stays `None`.

    Raises:
        ValueError: for a bad argument, or inputs of the wrong rank or channels.

    Example:
        >>> mk.layers.Conv1D(4, 3, padding="causal")(np.ones((2, 10, 3), "float32")).shape
        (2, 10, 4)
    """

    rank = 1
    _paddings = ("valid", "same", "causal")


class Conv2D(Conv):
    """2-D convolution over `(batch, height, width, channels)` images.

    Args:
        filters: positive int, the number of output channels.
        kernel_size: an int or two ints.
        strides: an int or two ints.
        padding: `"valid"` or `"same"`.
        **kwargs: as `Conv`: `data_format`, `dilation_rate`, `groups`,
            `activation`, `use_bias`, initializers, regularizers, constraints,
            `name`, `dtype`.

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
        >>> layer = mk.layers.Conv2D(16, 3, padding="same", activation="relu")
        >>> layer(np.ones((2, 8, 8, 1), "float32")).shape
        (2, 8, 8, 16)
        >>> layer.kernel.shape, layer.bias.shape
        ((3, 3, 1, 16), (16,))
    """

    rank = 2
