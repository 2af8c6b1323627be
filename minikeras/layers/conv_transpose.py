"""Transposed convolution layers, channels last or first: `Conv1DTranspose`, `Conv2DTranspose`.

The math is `ops.conv_transpose` (the gradient of a convolution with respect
to its inputs); arguments and checks are shared with `Conv` through `BaseConv`.
"""

from minikeras import constraints, initializers, ops, regularizers
from minikeras.layers.convolutional import BaseConv
from minikeras.layers.dense import check_positive_int
from minikeras.ops.conv import transpose_output_length

__all__ = ["Conv1DTranspose", "Conv2DTranspose", "ConvTranspose"]


class ConvTranspose(BaseConv):
    """Transposed convolution layer (the base of `Conv1DTranspose`, `Conv2DTranspose`).

    `activation(conv_transpose(inputs, kernel) + bias)`: each input position
    spreads over a window of the output, `strides` apart, so the output is
    about `strides` times larger (the gradient of a `Conv` with respect to
    its inputs).

    Args:
        filters: positive int, the number of output channels.
        kernel_size: an int or `rank` ints.
        strides: an int or `rank` ints.
        padding: `"valid"` or `"same"` (then the output is `strides` times the input).
        output_padding: None, or an int or `rank` ints each less than the
            stride: extra length at the end of the output.
        data_format: `"channels_last"` or `"channels_first"` (computed by
            transposing to channels last and back); None means
            `mk.config.image_data_format()` when the layer is made.
        dilation_rate: an int or `rank` ints.
        activation: name or callable; None means linear.
        use_bias: whether to add a bias.
        kernel_initializer: initializer of the `(*kernel_size, filters, channels)` kernel.
        bias_initializer: initializer of the `(filters,)` bias.
        kernel_regularizer: regularizer of the kernel, or None.
        bias_regularizer: regularizer of the bias, or None.
        kernel_constraint: constraint of the kernel, or None.
        bias_constraint: constraint of the bias, or None.
        **kwargs: `name`, `trainable`, `dtype`, `input_shape`.

    Raises:
        ValueError: for a bad argument, or inputs of the wrong rank or channels.

    Example:
        >>> mk.layers.Conv2DTranspose(3, 3, strides=2, padding="same")(np.ones((1, 4, 4, 2))).shape
        (1, 8, 8, 3)
    """

    _window_must_fit = False

    def __init__(
        self,
        filters,
        kernel_size,
        strides=1,
        padding="valid",
        output_padding=None,
        data_format=None,
        dilation_rate=1,
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
        super().__init__(kernel_size, strides, padding, data_format, dilation_rate, activation,
                         use_bias, bias_initializer, bias_regularizer, bias_constraint,
                         **kwargs)  # fmt: skip
        layer = type(self).__name__
        self.filters = check_positive_int(layer, "filters", filters)
        self.output_padding = None
        if output_padding is not None:
            extra = (
                (output_padding,) * self.rank if isinstance(output_padding, int) else output_padding
            )
            extra = tuple(extra)
            if len(extra) != self.rank or not all(
                isinstance(e, int) and 0 <= e < s for e, s in zip(extra, self.strides)
            ):
                raise ValueError(
                    f"{layer}: output_padding must be {self.rank} ints, each in [0, stride), "
                    f"got {output_padding!r} with strides {self.strides}"
                )
            self.output_padding = extra
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.kernel_regularizer = regularizers.get(kernel_regularizer)
        self.kernel_constraint = constraints.get(kernel_constraint)

    def build(self, input_shape):
        self.input_channels = self.check_input_shape(input_shape)
        self.kernel = self.add_weight(
            "kernel",
            shape=(*self.kernel_size, self.filters, self.input_channels),
            initializer=self.kernel_initializer,
            regularizer=self.kernel_regularizer,
            constraint=self.kernel_constraint,
        )
        self._add_bias(self.filters)

    def call(self, inputs):
        self.check_input_shape(inputs.shape)
        outputs = ops.conv_transpose(
            inputs,
            self.kernel,
            self.strides,
            self.padding,
            self.output_padding,
            "channels_last",  # ChannelsFirst transposes around call
            self.dilation_rate,
        )
        if self.bias is not None:
            outputs = ops.add(outputs, self.bias)
        return self._activate(outputs)

    def compute_output_shape(self, input_shape):
        self.check_input_shape(input_shape)
        extra = self.output_padding or (None,) * self.rank
        spatial = [
            transpose_output_length(n, k, s, self.padding, e, d)
            for n, k, s, e, d in zip(
                input_shape[1:-1], self.kernel_size, self.strides, extra, self.dilation_rate
            )
        ]
        return (input_shape[0], *spatial, self.filters)

    def get_config(self):
        config = super().get_config()
        config.update(
            filters=self.filters,
            output_padding=self.output_padding,
            kernel_initializer=initializers.serialize(self.kernel_initializer),
            kernel_regularizer=regularizers.serialize(self.kernel_regularizer),
            kernel_constraint=constraints.serialize(self.kernel_constraint),
        )
        return config


class Conv1DTranspose(ConvTranspose):
    """1-D transposed convolution over `(batch, steps, channels)`.

    Args:
        filters: positive int, the number of output channels.
        kernel_size: an int.
        strides: an int.
        padding: `"valid"` or `"same"`.
        **kwargs: as `ConvTranspose`.

    Input shape:
        `(batch, steps, channels)` (`(batch, channels, steps)` with
        `data_format="channels_first"`).

    Output shape:
        `(batch, new_steps, filters)` (channels first likewise): each new size is
        `n * s + max(w - s, 0)` for `"valid"` and `n * s` for `"same"`; with
        `output_padding=p`, `(n - 1) * s + w - 2 * pad + p` (`pad` is `w // 2` for
        `"same"`, 0 for `"valid"`), where `n` is the input size, `s` the stride and
        `w = dilation_rate * (kernel_size - 1) + 1`; a `None` size stays `None`.

    Raises:
        ValueError: for a bad argument, or inputs of the wrong rank or channels.

    Example:
        >>> mk.layers.Conv1DTranspose(4, 3, strides=2)(np.ones((2, 5, 3), "float32")).shape
        (2, 11, 4)
    """

    rank = 1


class Conv2DTranspose(ConvTranspose):
    """2-D transposed convolution over `(batch, height, width, channels)`: learned upsampling.

    Args:
        filters: positive int, the number of output channels.
        kernel_size: an int or two ints.
        strides: an int or two ints.
        padding: `"valid"` or `"same"`.
        **kwargs: as `ConvTranspose`: `output_padding`, `dilation_rate`,
            `activation`, `use_bias`, initializers, regularizers,
            constraints, `name`, `dtype`.

    Input shape:
        `(batch, rows, cols, channels)` (`(batch, channels, rows, cols)` with
        `data_format="channels_first"`).

    Output shape:
        `(batch, new_rows, new_cols, filters)` (channels first likewise): each new size
        is `n * s + max(w - s, 0)` for `"valid"` and `n * s` for `"same"`; with
        `output_padding=p`, `(n - 1) * s + w - 2 * pad + p` (`pad` is `w // 2` for
        `"same"`, 0 for `"valid"`), where `n` is the input size, `s` the stride and
        `w = dilation_rate * (kernel_size - 1) + 1`; a `None` size stays `None`.

    Raises:
        ValueError: for a bad argument, or inputs of the wrong rank or channels.

    Example:
        >>> layer = mk.layers.Conv2DTranspose(8, 3, strides=2, padding="same", activation="relu")
        >>> layer(np.ones((2, 7, 7, 16), "float32")).shape, layer.kernel.shape
        ((2, 14, 14, 8), (3, 3, 8, 16))
    """

    rank = 2
