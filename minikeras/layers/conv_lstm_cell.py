"""`ConvLSTMCell`: one step of a convolutional LSTM, Keras's weights and equations.

The LSTM of `LSTMCell` with its two matrix products made convolutions: the
inputs by `kernel` (with the layer's strides, padding and dilation), the
previous output `h` by `recurrent_kernel` (stride 1, `"same"` padding, so the
states keep their shape). The gates are Keras's, in its order (i, f, c, o),
each a quarter of the kernels' last axis. `ConvLSTM1D/2D/3D` run it over a
sequence (`minikeras.layers.conv_lstm`). Steps are computed channels last;
a `channels_first` cell transposes each step in and out.
"""

import numbers

import numpy as np

from minikeras import activations, constraints, initializers, ops, regularizers
from minikeras.layers.data_format import check_layer_data_format
from minikeras.layers.dense import check_positive_int
from minikeras.layers.layer import Layer
from minikeras.layers.lstm import _ForgetBiasOne
from minikeras.layers.rnn_dropout import DropoutRNNCell
from minikeras.ops.windows import normalize_padding, normalize_tuple, output_length

__all__ = ["ConvLSTMCell", "conv_output_shape"]


def conv_output_shape(layer, shape, filters, kernel_size, strides, padding, dilation_rate):
    """The shape a convolution gives `(batch, *spatial, channels)` inputs, channels last.

    Args:
        layer: the layer's class name, for errors.
        shape: the inputs' shape; spatial sizes may be None.
        filters: the outputs' channels.
        kernel_size: one int per spatial axis.
        strides: one int per spatial axis.
        dilation_rate: one int per spatial axis.
        padding: `"valid"` or `"same"`.

    Returns:
        `(batch, *new_spatial, filters)`.

    Raises:
        ValueError: for a window wider than a `"valid"` input.

    Example:
        >>> mk.layers.conv_lstm_cell.conv_output_shape(
        ...     "ConvLSTM2D", (None, 7, 6, 3), 4, (3, 3), (2, 1), "valid", (1, 1)
        ... )
        (None, 3, 4, 4)
    """
    spatial = []
    for n, k, s, d in zip(shape[1:-1], kernel_size, strides, dilation_rate):
        length = output_length(n, k, s, padding, d)
        if length is not None and length < 1:
            raise ValueError(
                f"{layer}: kernel_size {tuple(kernel_size)} (dilation {tuple(dilation_rate)}) "
                f"is wider than the inputs of shape {tuple(shape)} with padding 'valid'"
            )
        spatial.append(length)
    return (shape[0], *spatial, filters)


def _to_last(x):
    return ops.transpose(x, (0, *range(2, x.ndim), 1))


def _to_first(x):
    return ops.transpose(x, (0, x.ndim - 1, *range(1, x.ndim - 1)))


class ConvLSTMCell(DropoutRNNCell, Layer):
    """One step of a convolutional LSTM (the cell of `ConvLSTM1D/2D/3D`).

        z = conv(x, kernel) + bias + conv_same(h_prev, recurrent_kernel)
        i, f, c~, o = split(z, 4, axis=channels)       # Keras's gate order
        c = sig(f) * c_prev + sig(i) * act(c~)
        h = sig(o) * act(c)       # sig = recurrent_activation, act = activation

    Keras 3 has this class (`keras.src.layers.rnn.conv_lstm.ConvLSTMCell`) but
    does not export it; neither does minikeras.

    Args:
        rank: 1, 2 or 3, the number of spatial axes.
        filters: positive int, the channels of the states and output.
        kernel_size: an int or `rank` ints.
        strides: an int or `rank` ints, of the input convolution.
        padding: `"valid"` or `"same"`, of the input convolution.
        data_format: `"channels_last"` or `"channels_first"`; None means
            `mk.config.image_data_format()` when the layer is made.
        dilation_rate: an int or `rank` ints, of the input convolution (not
            with strides above 1, as in Keras).
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
        dropout: fraction of the inputs dropped while training, one mask per
            gate (as Keras); clamped into [0, 1].
        recurrent_dropout: fraction of `h_prev` dropped while training, one
            mask per gate; clamped into [0, 1].
        seed: int seed of the dropout masks.
        **kwargs: `name`, `dtype`, `trainable`.

    Call arguments:
        inputs: one step, `(batch, *spatial, channels)` (channels first likewise).
        states: the list `[h, c]`, each of the output's shape.
        training: turns dropout on.

    Returns:
        `(h, [h, c])`.

    Input shape:
        `(batch, *spatial, channels)` (`(batch, channels, *spatial)` with
        `data_format="channels_first"`).

    Output shape:
        `(batch, *new_spatial, filters)` (channels first likewise), the
        spatial sizes as a convolution with the same arguments gives them.

    Raises:
        ValueError: for a bad argument, inputs whose spatial or channel sizes
            are unknown at build, or states that are not a list of two.
        TypeError: for a dropout rate that is not a number.

    Example:
        >>> cell = mk.layers.conv_lstm_cell.ConvLSTMCell(2, 4, 3, padding="same")
        >>> cell.build((None, 5, 5, 3))
        >>> h, (h_again, c) = cell(np.ones((1, 5, 5, 3)), cell.get_initial_state(1))
        >>> h.shape, cell.kernel.shape
        ((1, 5, 5, 4), (3, 3, 3, 16))
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
        **kwargs,
    ):
        super().__init__(**kwargs)
        kind = type(self).__name__
        if rank not in (1, 2, 3):
            raise ValueError(f"{kind}: `rank` must be 1, 2 or 3, got {rank!r}")
        self.rank = rank
        self.filters = check_positive_int(kind, "filters", filters)
        self.kernel_size = normalize_tuple(kind, "kernel_size", kernel_size, rank)
        self.strides = normalize_tuple(kind, "strides", strides, rank)
        self.padding = normalize_padding(kind, padding)
        self.data_format = check_layer_data_format(kind, data_format)
        self.dilation_rate = normalize_tuple(kind, "dilation_rate", dilation_rate, rank)
        if max(self.strides) > 1 and max(self.dilation_rate) > 1:
            raise ValueError(
                f"{kind}: `strides` > 1 cannot go with `dilation_rate` > 1 (as in Keras), got "
                f"strides={self.strides} and dilation_rate={self.dilation_rate}"
            )
        self.activation = activations.get(activation)
        self.recurrent_activation = activations.get(recurrent_activation)
        self.use_bias = bool(use_bias)
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.recurrent_initializer = initializers.get(recurrent_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.unit_forget_bias = bool(unit_forget_bias)
        self.kernel_regularizer = regularizers.get(kernel_regularizer)
        self.recurrent_regularizer = regularizers.get(recurrent_regularizer)
        self.bias_regularizer = regularizers.get(bias_regularizer)
        self.kernel_constraint = constraints.get(kernel_constraint)
        self.recurrent_constraint = constraints.get(recurrent_constraint)
        self.bias_constraint = constraints.get(bias_constraint)
        for argument, value in (("dropout", dropout), ("recurrent_dropout", recurrent_dropout)):
            if isinstance(value, bool) or not isinstance(value, numbers.Real):
                raise TypeError(f"{kind}: `{argument}` must be a number, got {value!r}")
        self.dropout = float(min(1.0, max(0.0, dropout)))
        self.recurrent_dropout = float(min(1.0, max(0.0, recurrent_dropout)))
        self.seed = seed
        generator = None if seed is None else np.random.default_rng(seed)
        object.__setattr__(self, "_generator", generator)
        object.__setattr__(self, "_dropout_masks", {})
        self._mask_count = 4  # a dropout mask per gate, as Keras draws them
        self.spatial_dims = None  # the inputs' spatial sizes, known at build
        self.input_dim = None

    # ------------------------------------------------------------- shapes

    def _channels_last(self, shape):
        shape = tuple(shape)
        if self.data_format == "channels_first":
            return (shape[0], *shape[2:], shape[1])
        return shape

    def _in_layout(self, shape):
        if self.data_format == "channels_first":
            return (shape[0], shape[-1], *shape[1:-1])
        return tuple(shape)

    def compute_output_shape(self, input_shape):
        """The output's shape (also each state's) for one step of `input_shape`."""
        shape = conv_output_shape(
            type(self).__name__,
            self._channels_last(input_shape),
            self.filters,
            self.kernel_size,
            self.strides,
            self.padding,
            self.dilation_rate,
        )
        return self._in_layout(shape)

    @property
    def state_size(self):
        """The shape of each state `[h, c]` without the batch axis (None before build)."""
        if self.spatial_dims is None:
            return None
        shape = self.compute_output_shape((None, *self._step_shape()[1:]))[1:]
        return [shape, shape]

    def _step_shape(self, batch=None):
        return self._in_layout((batch, *self.spatial_dims, self.input_dim))

    # ------------------------------------------------------------ weights

    def build(self, input_shape):
        if len(input_shape) != self.rank + 2:
            raise ValueError(
                f"{type(self).__name__} '{self.name}' expected one step of rank "
                f"{self.rank + 2}, got shape {tuple(input_shape)}"
            )
        shape = self._channels_last(input_shape)
        if None in shape[1:]:
            raise ValueError(
                f"{type(self).__name__} '{self.name}' needs inputs whose spatial and channel "
                f"sizes are known, got shape {tuple(input_shape)}"
            )
        self.compute_output_shape(input_shape)  # (a window too wide: an error now)
        self.spatial_dims, self.input_dim = tuple(shape[1:-1]), shape[-1]
        width = 4 * self.filters
        self.kernel = self.add_weight(
            "kernel",
            shape=(*self.kernel_size, self.input_dim, width),
            initializer=self.kernel_initializer,
            regularizer=self.kernel_regularizer,
            constraint=self.kernel_constraint,
        )
        self.recurrent_kernel = self.add_weight(
            "recurrent_kernel",
            shape=(*self.kernel_size, self.filters, width),
            initializer=self.recurrent_initializer,
            regularizer=self.recurrent_regularizer,
            constraint=self.recurrent_constraint,
        )
        self.bias = None
        if self.use_bias:
            initializer = self.bias_initializer
            if self.unit_forget_bias:
                initializer = _ForgetBiasOne(initializer, self.filters)
            self.bias = self.add_weight(
                "bias",
                shape=(width,),
                initializer=initializer,
                regularizer=self.bias_regularizer,
                constraint=self.bias_constraint,
            )

    # --------------------------------------------------------------- call

    def get_initial_state(self, batch_size=None):
        """Zeros for `[h, c]`.

        Args:
            batch_size: the number of sequences.

        Returns:
            Two zero tensors of the output's shape.

        Raises:
            ValueError: before the cell is built (its inputs' sizes are unknown).

        Example:
            >>> cell = mk.layers.conv_lstm_cell.ConvLSTMCell(1, 2, 3)
            >>> cell.build((None, 6, 1))
            >>> [s.shape for s in cell.get_initial_state(4)]
            [(4, 4, 2), (4, 4, 2)]
        """
        if self.spatial_dims is None:
            raise ValueError(
                f"{type(self).__name__} '{self.name}' is not built: its states' shape comes "
                "from its inputs' (call build(input_shape) first)"
            )
        shape = self.compute_output_shape(self._step_shape(batch_size))
        return [ops.zeros(shape, dtype=self.dtype), ops.zeros(shape, dtype=self.dtype)]

    def _gate_convolutions(self, values, kernel, strides, padding, dilation_rate):
        """`conv(values, kernel)`, channels last; for one dropped copy of the values per
        gate `(4, batch, ...)`, each by its gate's quarter of the kernel, side by side."""

        def conv(x, k):
            return ops.conv(x, k, strides, padding, "channels_last", dilation_rate)

        if values.ndim == self.rank + 2:
            return conv(values, kernel)
        quarters = ops.split(kernel, 4, axis=-1)
        return ops.concatenate([conv(values[g], quarters[g]) for g in range(4)], axis=-1)

    def call(self, inputs, states, training=False):
        if not isinstance(states, (list, tuple)) or len(states) != 2:
            raise ValueError(
                f"{type(self).__name__} '{self.name}' expects the states as a list [h, c], "
                f"got {states!r:.80}"
            )
        inputs = ops.convert_to_tensor(inputs)
        h_previous, c_previous = (ops.convert_to_tensor(state) for state in states)
        if self.data_format == "channels_first":
            inputs, h_previous, c_previous = map(_to_last, (inputs, h_previous, c_previous))
        inputs, h_previous = self._dropped(inputs, h_previous, training)  # (one per gate)
        z = self._gate_convolutions(
            inputs, self.kernel, self.strides, self.padding, self.dilation_rate
        )
        if self.bias is not None:
            z = z + self.bias
        z = z + self._gate_convolutions(h_previous, self.recurrent_kernel, 1, "same", 1)
        input_gate, forget_gate, candidate, output_gate = ops.split(z, 4, axis=-1)
        gate = self.recurrent_activation
        c = gate(forget_gate) * c_previous + gate(input_gate) * self.activation(candidate)
        h = gate(output_gate) * self.activation(c)
        if self.data_format == "channels_first":
            h, c = _to_first(h), _to_first(c)
        return h, [h, c]

    def get_config(self):
        return {
            **super().get_config(),
            "rank": self.rank,
            "filters": self.filters,
            "kernel_size": self.kernel_size,
            "strides": self.strides,
            "padding": self.padding,
            "data_format": self.data_format,
            "dilation_rate": self.dilation_rate,
            "activation": activations.serialize(self.activation),
            "recurrent_activation": activations.serialize(self.recurrent_activation),
            "use_bias": self.use_bias,
            "kernel_initializer": initializers.serialize(self.kernel_initializer),
            "recurrent_initializer": initializers.serialize(self.recurrent_initializer),
            "bias_initializer": initializers.serialize(self.bias_initializer),
            "unit_forget_bias": self.unit_forget_bias,
            "kernel_regularizer": regularizers.serialize(self.kernel_regularizer),
            "recurrent_regularizer": regularizers.serialize(self.recurrent_regularizer),
            "bias_regularizer": regularizers.serialize(self.bias_regularizer),
            "kernel_constraint": constraints.serialize(self.kernel_constraint),
            "recurrent_constraint": constraints.serialize(self.recurrent_constraint),
            "bias_constraint": constraints.serialize(self.bias_constraint),
            "dropout": self.dropout,
            "recurrent_dropout": self.recurrent_dropout,
            "seed": self.seed,
        }
