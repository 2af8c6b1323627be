"""`ConvLSTM1D/2D/3D`: an `RNN` of a `ConvLSTMCell`, Keras's arguments, weights and config.

Unlike `LSTM`, there is no fused op: the cell is called step by step
(convolutions from `ops.conv`) and autograd differentiates the unrolled
steps. Masks, initial states, `go_backwards` and `stateful` are `RNN`'s.
"""

from minikeras.layers.conv_lstm_cell import ConvLSTMCell
from minikeras.layers.recurrent import _LAYER_KEYS, cell_property
from minikeras.layers.rnn import RNN

__all__ = ["ConvLSTM", "ConvLSTM1D", "ConvLSTM2D", "ConvLSTM3D"]


class ConvLSTM(RNN):
    """A convolutional LSTM over `(batch, time, *spatial, channels)` sequences (the base).

    Not exported; `ConvLSTM1D/2D/3D` fix `rank`. The cell's arguments and
    weights read through the layer (`layer.filters`, `layer.kernel`), and the
    config is flat, as in Keras.

    Args:
        rank: 1, 2 or 3, the number of spatial axes.
        filters: positive int, the channels of the states and output.
        kernel_size: an int or `rank` ints, of both convolutions.
        strides: an int or `rank` ints, of the input convolution.
        padding: `"valid"` or `"same"`, of the input convolution (the
            recurrent one is always `"same"` with stride 1, as in Keras).
        data_format: `"channels_last"` or `"channels_first"` (`(batch, time,
            channels, *spatial)`); None: `mk.config.image_data_format()`.
        dilation_rate: an int or `rank` ints, of the input convolution (not
            with strides above 1).
        activation: `"tanh"` by default.
        recurrent_activation: the gates' activation, `"sigmoid"` by default.
        use_bias: whether to add a bias.
        kernel_initializer: for the `(*kernel_size, channels, 4 * filters)` kernel.
        recurrent_initializer: for the `(*kernel_size, filters, 4 * filters)`
            recurrent kernel.
        bias_initializer: for the `(4 * filters,)` bias.
        unit_forget_bias: start the forget gate's bias at 1.
        kernel_regularizer: optional penalty on the kernel.
        recurrent_regularizer: optional penalty on the recurrent kernel.
        bias_regularizer: optional penalty on the bias.
        kernel_constraint: optional constraint on the kernel.
        recurrent_constraint: optional constraint on the recurrent kernel.
        bias_constraint: optional constraint on the bias.
        dropout: fraction of the inputs dropped while training (a mask per
            gate, the same at every step); clamped into [0, 1].
        recurrent_dropout: likewise for the previous output `h`.
        seed: int seed of the dropout masks.
        return_sequences: as for `RNN`.
        return_state: as for `RNN` (`[output, h, c]`).
        go_backwards: as for `RNN`.
        stateful: as for `RNN`.
        **kwargs: `unroll` (changes nothing), `activity_regularizer`, `name`,
            `dtype`, `trainable`, `input_shape`.

    Raises:
        ValueError: for a bad argument, inputs of the wrong rank or with
            unknown spatial or channel sizes, states of the wrong shape, or a
            stateful batch of another size, naming the layer.

    Example:
        >>> layer = mk.layers.ConvLSTM1D(2, 3, return_state=True)
        >>> output, h, c = layer(np.ones((2, 4, 6, 1), "float32"))
        >>> output.shape, c.shape
        ((2, 4, 2), (2, 4, 2))
    """

    def __init__(
        self,
        rank,
        filters,
        kernel_size,
        strides=1,
        padding="valid",
        data_format=None,
        dilation_rate=1,
        activation="tanh",
        recurrent_activation="sigmoid",
        use_bias=True,
        kernel_initializer="glorot_uniform",
        recurrent_initializer="orthogonal",
        bias_initializer="zeros",
        unit_forget_bias=True,
        kernel_regularizer=None,
        recurrent_regularizer=None,
        bias_regularizer=None,
        kernel_constraint=None,
        recurrent_constraint=None,
        bias_constraint=None,
        dropout=0.0,
        recurrent_dropout=0.0,
        seed=None,
        return_sequences=False,
        return_state=False,
        go_backwards=False,
        stateful=False,
        **kwargs,
    ):
        cell = ConvLSTMCell(
            rank,
            filters,
            kernel_size,
            strides=strides,
            padding=padding,
            data_format=data_format,
            dilation_rate=dilation_rate,
            activation=activation,
            recurrent_activation=recurrent_activation,
            use_bias=use_bias,
            kernel_initializer=kernel_initializer,
            recurrent_initializer=recurrent_initializer,
            bias_initializer=bias_initializer,
            unit_forget_bias=unit_forget_bias,
            kernel_regularizer=kernel_regularizer,
            recurrent_regularizer=recurrent_regularizer,
            bias_regularizer=bias_regularizer,
            kernel_constraint=kernel_constraint,
            recurrent_constraint=recurrent_constraint,
            bias_constraint=bias_constraint,
            dropout=dropout,
            recurrent_dropout=recurrent_dropout,
            seed=seed,
            name="conv_lstm_cell",
            dtype=kwargs.get("dtype"),
            trainable=kwargs.get("trainable", True),
        )
        super().__init__(
            cell,
            return_sequences=return_sequences,
            return_state=return_state,
            go_backwards=go_backwards,
            stateful=stateful,
            **kwargs,
        )

    def _check_rank(self, shape):
        if len(shape) != self.cell.rank + 3:
            sizes = ["size"] * self.cell.rank
            if self.data_format == "channels_first":
                axes = ["batch", "time", "channels", *sizes]
            else:
                axes = ["batch", "time", *sizes, "channels"]
            raise ValueError(
                f"{type(self).__name__} '{self.name}' expects inputs of rank "
                f"{self.cell.rank + 3} ({', '.join(axes)}), got shape {tuple(shape)}"
            )

    @property
    def _state_sizes(self):
        return self.cell.state_size or [None, None]  # (None before the cell is built)

    @property
    def _output_size(self):
        return self._state_sizes[0]

    def compute_output_shape(self, input_shape):
        sequences_shape = input_shape[0] if isinstance(input_shape, list) else input_shape
        self._check_rank(sequences_shape)
        batch, steps = sequences_shape[0], sequences_shape[1]
        state = tuple(self.cell.compute_output_shape((batch, *sequences_shape[2:]))[1:])
        output = (batch, steps, *state) if self.return_sequences else (batch, *state)
        if self.return_state:
            return [output, (batch, *state), (batch, *state)]
        return output

    def get_config(self):
        cell = {k: v for k, v in self.cell.get_config().items() if k not in (*_LAYER_KEYS, "rank")}
        base = {k: v for k, v in super().get_config().items() if k != "cell"}
        return {**base, **cell}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        return cls(**config)


for _name in (
    "filters", "kernel_size", "strides", "padding", "data_format", "dilation_rate",
    "activation", "recurrent_activation", "use_bias", "kernel_initializer",
    "recurrent_initializer", "bias_initializer", "unit_forget_bias", "kernel_regularizer",
    "recurrent_regularizer", "bias_regularizer", "kernel_constraint", "recurrent_constraint",
    "bias_constraint", "dropout", "recurrent_dropout", "seed", "kernel", "recurrent_kernel",
    "bias",
):  # fmt: skip
    setattr(ConvLSTM, _name, cell_property(_name))


class ConvLSTM1D(ConvLSTM):
    """A 1-D convolutional LSTM: `LSTM` with its products made convolutions over steps.

        z_t = conv(x_t, kernel) + bias + conv_same(h_{t-1}, recurrent_kernel)
        i, f, c~, o = split(z_t, 4, axis=channels)     # Keras's gate order
        c_t = sig(f) * c_{t-1} + sig(i) * act(c~)
        h_t = sig(o) * act(c_t)

    Args:
        filters: positive int, the channels of the states and output.
        kernel_size: an int (or a tuple of one).
        strides: an int or ints, of the input convolution.
        padding: `"valid"` or `"same"`, of the input convolution.
        data_format: `"channels_last"` or `"channels_first"` (channels after
            time); None: `mk.config.image_data_format()`.
        dilation_rate: an int or ints, of the input convolution.
        **kwargs: `activation`, `recurrent_activation`, `use_bias`, initializers,
            `unit_forget_bias`, regularizers, constraints, `dropout`,
            `recurrent_dropout`, `seed`, `return_sequences`, `return_state`,
            `go_backwards`, `stateful` (see `ConvLSTM`); `name`, `dtype`, ...

    Call arguments:
        sequences: `(batch, time, length, channels)`.
        initial_state: optional `[h, c]`, each of one output step's shape.
        mask: optional `(batch, time)` booleans: a False step keeps the states.
        training: turns dropout on.

    Input shape:
        `(batch, time, length, channels)` (`(batch, time, channels, length)` with
        `data_format="channels_first"`); the length and channels must be known.

    Output shape:
        `(batch, new_length, filters)`, or `(batch, time, new_length, filters)`
        with `return_sequences`, the length as `Conv1D` gives it (channels first
        likewise); with `return_state`, `[output, h, c]`.

    Raises:
        ValueError: as `ConvLSTM`.

    Example:
        >>> layer = mk.layers.ConvLSTM1D(4, 3, padding="same", return_sequences=True)
        >>> layer(np.ones((2, 5, 8, 3), "float32")).shape
        (2, 5, 8, 4)
        >>> [w.shape for w in layer.weights]
        [(3, 3, 16), (3, 4, 16), (16,)]
    """

    def __init__(
        self,
        filters,
        kernel_size,
        strides=1,
        padding="valid",
        data_format=None,
        dilation_rate=1,
        **kwargs,
    ):
        super().__init__(
            1,
            filters,
            kernel_size,
            strides=strides,
            padding=padding,
            data_format=data_format,
            dilation_rate=dilation_rate,
            **kwargs,
        )


class ConvLSTM2D(ConvLSTM):
    """A 2-D convolutional LSTM (Shi et al., 2015): a sequence of images in, images out.

    The equations of `ConvLSTM1D`, with 2-D convolutions.

    Args:
        filters: positive int, the channels of the states and output.
        kernel_size: an int or two ints.
        strides: an int or ints, of the input convolution.
        padding: `"valid"` or `"same"`, of the input convolution.
        data_format: `"channels_last"` or `"channels_first"` (channels after
            time); None: `mk.config.image_data_format()`.
        dilation_rate: an int or ints, of the input convolution.
        **kwargs: `activation`, `recurrent_activation`, `use_bias`, initializers,
            `unit_forget_bias`, regularizers, constraints, `dropout`,
            `recurrent_dropout`, `seed`, `return_sequences`, `return_state`,
            `go_backwards`, `stateful` (see `ConvLSTM`); `name`, `dtype`, ...

    Call arguments:
        sequences: `(batch, time, rows, cols, channels)`.
        initial_state: optional `[h, c]`, each of one output step's shape.
        mask: optional `(batch, time)` booleans: a False step keeps the states.
        training: turns dropout on.

    Input shape:
        `(batch, time, rows, cols, channels)` (`(batch, time, channels, rows, cols)`
        with `data_format="channels_first"`); all but batch and time known.

    Output shape:
        `(batch, new_rows, new_cols, filters)`, or with `return_sequences`
        `(batch, time, new_rows, new_cols, filters)`, the sizes as `Conv2D`
        gives them (channels first likewise); with `return_state`,
        `[output, h, c]`.

    Raises:
        ValueError: as `ConvLSTM`.

    Example:
        >>> layer = mk.layers.ConvLSTM2D(2, 3, strides=2)
        >>> layer(np.ones((1, 4, 7, 7, 1), "float32")).shape
        (1, 3, 3, 2)
    """

    def __init__(
        self,
        filters,
        kernel_size,
        strides=1,
        padding="valid",
        data_format=None,
        dilation_rate=1,
        **kwargs,
    ):
        super().__init__(
            2,
            filters,
            kernel_size,
            strides=strides,
            padding=padding,
            data_format=data_format,
            dilation_rate=dilation_rate,
            **kwargs,
        )


class ConvLSTM3D(ConvLSTM):
    """A 3-D convolutional LSTM: a sequence of volumes in, volumes out.

    The equations of `ConvLSTM1D`, with 3-D convolutions.

    Args:
        filters: positive int, the channels of the states and output.
        kernel_size: an int or three ints.
        strides: an int or ints, of the input convolution.
        padding: `"valid"` or `"same"`, of the input convolution.
        data_format: `"channels_last"` or `"channels_first"` (channels after
            time); None: `mk.config.image_data_format()`.
        dilation_rate: an int or ints, of the input convolution.
        **kwargs: `activation`, `recurrent_activation`, `use_bias`, initializers,
            `unit_forget_bias`, regularizers, constraints, `dropout`,
            `recurrent_dropout`, `seed`, `return_sequences`, `return_state`,
            `go_backwards`, `stateful` (see `ConvLSTM`); `name`, `dtype`, ...

    Call arguments:
        sequences: `(batch, time, depth, rows, cols, channels)`.
        initial_state: optional `[h, c]`, each of one output step's shape.
        mask: optional `(batch, time)` booleans: a False step keeps the states.
        training: turns dropout on.

    Input shape:
        `(batch, time, depth, rows, cols, channels)` (channels after time with
        `data_format="channels_first"`); all but batch and time known.

    Output shape:
        `(batch, *new_spatial, filters)`, or `(batch, time, *new_spatial, filters)`
        with `return_sequences`, the sizes as `Conv3D` gives them (channels
        first likewise); with `return_state`, `[output, h, c]`.

    Raises:
        ValueError: as `ConvLSTM`.

    Example:
        >>> layer = mk.layers.ConvLSTM3D(2, 2, data_format="channels_first")
        >>> layer(np.ones((1, 3, 1, 3, 3, 3), "float32")).shape
        (1, 2, 2, 2, 2)
    """

    def __init__(
        self,
        filters,
        kernel_size,
        strides=1,
        padding="valid",
        data_format=None,
        dilation_rate=1,
        **kwargs,
    ):
        super().__init__(
            3,
            filters,
            kernel_size,
            strides=strides,
            padding=padding,
            data_format=data_format,
            dilation_rate=dilation_rate,
            **kwargs,
        )
