"""`LSTM`: long short-term memory, Keras's weights and equations, one fused loop."""

import numpy as np

from minikeras import activations, ops
from minikeras.layers.recurrent import RNNBase, cell_property
from minikeras.layers.rnn_cells import RecurrentCell, for_kernel

__all__ = ["LSTM", "LSTMCell"]


class _ForgetBiasOne:
    """LSTM bias initializer for `unit_forget_bias`: the forget gate's quarter is ones."""

    def __init__(self, initializer, units):
        self.initializer, self.units = initializer, units

    def __call__(self, shape, dtype=None):
        units = self.units
        values = np.asarray(self.initializer(shape, dtype=dtype)).copy()
        values[units : 2 * units] = 1.0
        return values


class LSTMCell(RecurrentCell):
    """One step of an LSTM, Keras's equations and gate order (i, f, c, o).

        z = x @ kernel + h_prev @ recurrent_kernel + bias
        i, f, c~, o = split(z, 4)
        c = sig(f) * c_prev + sig(i) * act(c~)
        h = sig(o) * act(c)       # sig = recurrent_activation, act = activation

    Args:
        units: positive int, the size of the states and output.
        activation: `"tanh"` by default.
        recurrent_activation: the gates' activation, `"sigmoid"` by default.
        use_bias: whether to add a bias.
        kernel_initializer: for the `(features, 4 * units)` kernel.
        recurrent_initializer: for the `(units, 4 * units)` recurrent kernel.
        bias_initializer: for the `(4 * units,)` bias.
        unit_forget_bias: start the forget gate's bias at 1 (Jozefowicz et al.).
        **kwargs: regularizers, constraints, `dropout`, `recurrent_dropout`,
            `seed` as for `SimpleRNNCell`; `implementation` as Keras's: 1
            draws a dropout mask per gate (4 for the inputs, 4 for the
            state), 2 (the default) one for all gates; `recurrent_dropout`
            makes it 1, and it is not in the config, as in Keras; `name`,
            `dtype`, `trainable`.

    Call arguments:
        inputs: `(batch, features)`, one step.
        states: the list `[h, c]`, each `(batch, units)`.
        training: turns dropout on.

    Returns:
        `(h, [h, c])`.

    Input shape:
        `(batch, features)`.

    Output shape:
        `(batch, units)`.

    Raises:
        ValueError: for bad `units`, or states that are not
            a list of two.

    Example:
        >>> cell = mk.layers.LSTMCell(3)
        >>> h, (h_again, c) = cell(np.ones((2, 4)), [np.zeros((2, 3)), np.zeros((2, 3))])
        >>> h.shape, c.shape, cell.state_size
        ((2, 3), (2, 3), [3, 3])
    """

    _gates = 4

    def __init__(
        self,
        units,
        activation="tanh",
        recurrent_activation="sigmoid",
        use_bias=True,
        kernel_initializer="glorot_uniform",
        recurrent_initializer="orthogonal",
        bias_initializer="zeros",
        unit_forget_bias=True,
        **kwargs,
    ):
        implementation = kwargs.pop("implementation", 2)
        super().__init__(
            units,
            activation=activation,
            use_bias=use_bias,
            kernel_initializer=kernel_initializer,
            recurrent_initializer=recurrent_initializer,
            bias_initializer=bias_initializer,
            **kwargs,
        )
        self.recurrent_activation = activations.get(recurrent_activation)
        self.unit_forget_bias = bool(unit_forget_bias)
        self._take_implementation(implementation)

    @property
    def state_size(self):
        """`[units, units]`: the output `h` and the carry `c`."""
        return [self.units, self.units]

    def _bias_initializer(self):
        if self.unit_forget_bias:
            return _ForgetBiasOne(self.bias_initializer, self.units)
        return self.bias_initializer

    def call(self, inputs, states, training=False):
        if not isinstance(states, (list, tuple)) or len(states) != 2:
            raise ValueError(
                f"LSTMCell '{self.name}' expects the states as a list [h, c], got {states!r:.80}"
            )
        self._check_step(inputs)
        h_previous, c_previous = states
        inputs, h_previous = self._dropped(inputs, h_previous, training)  # (or one per gate)
        z = self._gate_product(inputs, self.kernel)
        z = z + self._gate_product(h_previous, self.recurrent_kernel)
        if self.bias is not None:
            z = z + self.bias
        units = self.units
        gate = self.recurrent_activation
        input_gate, forget_gate = gate(z[:, :units]), gate(z[:, units : 2 * units])
        candidate, output_gate = z[:, 2 * units : 3 * units], gate(z[:, 3 * units :])
        c = forget_gate * c_previous + input_gate * self.activation(candidate)
        h = output_gate * self.activation(c)
        return h, [h, c]

    def _fused_op(self, sequences, states, keep, go_backwards):
        return ops.lstm(
            sequences,
            self.kernel,
            self.recurrent_kernel,
            self.bias,
            states,
            keep,
            go_backwards,
            for_kernel(self.activation),
            for_kernel(self.recurrent_activation),
        )

    def get_config(self):
        return {
            **super().get_config(),
            "recurrent_activation": activations.serialize(self.recurrent_activation),
            "unit_forget_bias": self.unit_forget_bias,
        }


LSTMCell._fused_call = LSTMCell.call


class LSTM(RNNBase):
    """Long short-term memory (Hochreiter & Schmidhuber, 1997), Keras's variant.

    An `RNN` of an `LSTMCell` (`layer.cell`), run as one fused op:

        z = x_t @ kernel + h_{t-1} @ recurrent_kernel + bias
        i, f, c~, o = split(z, 4)          # Keras's gate order
        c_t = sig(f) * c_{t-1} + sig(i) * act(c~)
        h_t = sig(o) * act(c_t)            # sig = recurrent_activation, act = activation

    Args:
        units: positive int, the size of the states and output.
        activation: `"tanh"` by default (fused: `tanh`, `sigmoid`, `relu`,
            `linear`; other callables run a slower step loop).
        recurrent_activation: the gates' activation, `"sigmoid"` by default.
        use_bias: whether to add a bias.
        kernel_initializer: for the `(features, 4 * units)` kernel.
        recurrent_initializer: for the `(units, 4 * units)` recurrent kernel.
        bias_initializer: for the `(4 * units,)` bias.
        unit_forget_bias: start the forget gate's bias at 1 (Jozefowicz et al.).
        **kwargs: regularizers, constraints, `dropout`, `recurrent_dropout`,
            `seed`, `return_sequences`, `return_state`, `go_backwards`,
            `stateful`, `unroll`, `zero_output_for_mask` as for `SimpleRNN`;
            `implementation` as for `LSTMCell` (with `recurrent_dropout`, a
            mask per gate); `name`, `dtype`, ...

    Call arguments:
        sequences, initial_state (`[h, c]`), mask, training: as for `SimpleRNN`.

    Input shape:
        `(batch, time, features)`.

    Output shape:
        `(batch, units)`, or `(batch, time, units)` with `return_sequences`;
        with `return_state`, `[output, h, c]`.

    Raises:
        ValueError: for inputs that are not `(batch, time, features)`, states
            of the wrong shape, or a stateful batch of another size, naming
            the layer.

    Example:
        >>> layer = mk.layers.LSTM(4, return_state=True)
        >>> output, h, c = layer(np.ones((2, 5, 3)))
        >>> output.shape, c.shape, layer.cell.kernel.shape
        ((2, 4), (2, 4), (3, 16))
    """

    _cell_name = "lstm_cell"

    def __init__(
        self,
        units,
        activation="tanh",
        recurrent_activation="sigmoid",
        use_bias=True,
        kernel_initializer="glorot_uniform",
        recurrent_initializer="orthogonal",
        bias_initializer="zeros",
        unit_forget_bias=True,
        **kwargs,
    ):
        cell_arguments = {
            "units": units,
            "activation": activation,
            "recurrent_activation": recurrent_activation,
            "use_bias": use_bias,
            "kernel_initializer": kernel_initializer,
            "recurrent_initializer": recurrent_initializer,
            "bias_initializer": bias_initializer,
            "unit_forget_bias": unit_forget_bias,
            "implementation": kwargs.pop("implementation", 2),
        }
        super().__init__(LSTMCell, cell_arguments, **kwargs)

    recurrent_activation = cell_property("recurrent_activation")
    unit_forget_bias = cell_property("unit_forget_bias")
