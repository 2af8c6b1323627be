"""`GRU`: gated recurrent unit, Keras's weights and equations, one fused loop."""

from minikeras import activations, ops
from minikeras.layers.recurrent import RNNBase, cell_property
from minikeras.layers.rnn_cells import RecurrentCell, for_kernel

__all__ = ["GRU", "GRUCell"]


class GRUCell(RecurrentCell):
    """One step of a GRU, Keras's equations and gate order (z, r, h), both bias layouts.

        x_z, x_r, x_h = split(x @ kernel + b_in, 3)
        reset_after=True (default):
            h_z, h_r, h_h = split(h_prev @ recurrent_kernel + b_rec, 3)
            z, r = sig(x_z + h_z), sig(x_r + h_r);  hh = act(x_h + r * h_h)
        reset_after=False:
            z, r from h_prev @ recurrent_kernel[:, :2 units];  hh = act(x_h + (r h_prev) @ U_h)
        h = z * h_prev + (1 - z) * hh

    Args:
        units: positive int, the size of the state and output.
        activation: `"tanh"` by default.
        recurrent_activation: the gates' activation, `"sigmoid"` by default.
        use_bias: whether to add biases.
        kernel_initializer: for the `(features, 3 * units)` kernel.
        recurrent_initializer: for the `(units, 3 * units)` recurrent kernel.
        bias_initializer: for the bias: `(2, 3 * units)` (input and
            recurrent rows) with `reset_after`, else `(3 * units,)`.
        reset_after: apply the reset gate after the recurrent product
            (Keras's default).
        **kwargs: regularizers, constraints, `dropout`, `recurrent_dropout`,
            `seed` as for `SimpleRNNCell`; `implementation` as for `LSTMCell`
            (with 1, or `recurrent_dropout`, a dropout mask per gate: 3 for
            the inputs, 3 for the state); `name`, `dtype`, `trainable`.

    Call arguments:
        inputs: `(batch, features)`, one step.
        states: the previous state `(batch, units)`, or a list of it.
        training: turns dropout on.

    Returns:
        `(h, new_state)`: the new state is a list if the state came as one.

    Input shape:
        `(batch, features)`.

    Output shape:
        `(batch, units)`.

    Raises:
        ValueError: for bad `units`.

    Example:
        >>> cell = mk.layers.GRUCell(3)
        >>> h, _ = cell(np.ones((2, 4)), [np.zeros((2, 3))])
        >>> h.shape, cell.bias.shape
        ((2, 3), (2, 9))
    """

    _gates = 3

    def __init__(
        self,
        units,
        activation="tanh",
        recurrent_activation="sigmoid",
        use_bias=True,
        kernel_initializer="glorot_uniform",
        recurrent_initializer="orthogonal",
        bias_initializer="zeros",
        reset_after=True,
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
        self.reset_after = bool(reset_after)
        self._take_implementation(implementation)

    def _bias_shape(self):
        return (2, 3 * self.units) if self.reset_after else (3 * self.units,)

    def call(self, inputs, states, training=False):
        single = not isinstance(states, (list, tuple))
        h_previous = states if single else states[0]
        self._check_step(inputs)
        # (the dropped state feeds the gates; the update mixes in the state itself, as Keras)
        inputs, h_dropped = self._dropped(inputs, h_previous, training)
        units, gate = self.units, self.recurrent_activation
        input_bias = recurrent_bias = None
        if self.bias is not None:
            if self.reset_after:
                input_bias, recurrent_bias = self.bias[0], self.bias[1]
            else:
                input_bias = self.bias
        x = self._gate_product(inputs, self.kernel)
        if input_bias is not None:
            x = x + input_bias
        if self.reset_after:
            inner = self._gate_product(h_dropped, self.recurrent_kernel)
            if recurrent_bias is not None:
                inner = inner + recurrent_bias
        else:
            gates_state = h_dropped[:2] if h_dropped.ndim == 3 else h_dropped
            inner = self._gate_product(gates_state, self.recurrent_kernel[:, : 2 * units])
        update = gate(x[:, :units] + inner[:, :units])
        reset = gate(x[:, units : 2 * units] + inner[:, units : 2 * units])
        if self.reset_after:
            recurrent_candidate = reset * inner[:, 2 * units :]
        else:
            candidate_state = h_dropped[2] if h_dropped.ndim == 3 else h_dropped
            recurrent_candidate = ops.matmul(
                reset * candidate_state, self.recurrent_kernel[:, 2 * units :]
            )
        candidate = self.activation(x[:, 2 * units :] + recurrent_candidate)
        h = update * h_previous + (1.0 - update) * candidate
        return h, (h if single else [h])

    def _fused_op(self, sequences, states, keep, go_backwards):
        return ops.gru(
            sequences,
            self.kernel,
            self.recurrent_kernel,
            self.bias,
            states,
            keep,
            go_backwards,
            self.reset_after,
            for_kernel(self.activation),
            for_kernel(self.recurrent_activation),
        )

    def get_config(self):
        return {
            **super().get_config(),
            "recurrent_activation": activations.serialize(self.recurrent_activation),
            "reset_after": self.reset_after,
        }


GRUCell._fused_call = GRUCell.call


class GRU(RNNBase):
    """Gated recurrent unit (Cho et al., 2014), Keras's variant.

    An `RNN` of a `GRUCell` (`layer.cell`), run as one fused op; the
    equations, both bias layouts included, are `GRUCell`'s.

    Args:
        units: positive int, the size of the state and output.
        activation: `"tanh"` by default (fused names as for `LSTM`).
        recurrent_activation: the gates' activation, `"sigmoid"` by default.
        use_bias: whether to add biases.
        kernel_initializer: for the `(features, 3 * units)` kernel.
        recurrent_initializer: for the `(units, 3 * units)` recurrent kernel.
        bias_initializer: for the bias: `(2, 3 * units)` (input and
            recurrent rows) with `reset_after`, else `(3 * units,)`.
        reset_after: apply the reset gate after the recurrent product
            (Keras's default, cuDNN-compatible).
        **kwargs: as for `LSTM`.

    Call arguments:
        sequences, initial_state, mask, training: as for `SimpleRNN`.

    Input shape:
        `(batch, time, features)`.

    Output shape:
        As for `SimpleRNN`: output, or `[output, state]` with `return_state`.

    Raises:
        ValueError: for inputs that are not `(batch, time, features)`, a
            state of the wrong shape, or a stateful batch of another size,
            naming the layer.

    Example:
        >>> layer = mk.layers.GRU(4)
        >>> layer(np.ones((2, 5, 3))).shape, layer.cell.bias.shape
        ((2, 4), (2, 12))
    """

    _cell_name = "gru_cell"

    def __init__(
        self,
        units,
        activation="tanh",
        recurrent_activation="sigmoid",
        use_bias=True,
        kernel_initializer="glorot_uniform",
        recurrent_initializer="orthogonal",
        bias_initializer="zeros",
        reset_after=True,
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
            "reset_after": reset_after,
            "implementation": kwargs.pop("implementation", 2),
        }
        super().__init__(GRUCell, cell_arguments, **kwargs)

    recurrent_activation = cell_property("recurrent_activation")
    reset_after = cell_property("reset_after")
