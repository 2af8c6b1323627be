"""`GRU`: gated recurrent unit, Keras's weights and equations, one fused loop."""

from minikeras import activations, ops
from minikeras.layers.recurrent import RNNBase, for_kernel

__all__ = ["GRU"]


class GRU(RNNBase):
    """Gated recurrent unit (Cho et al., 2014), Keras's variant.

        x_z, x_r, x_h = split(x_t @ kernel + b_in, 3)        # Keras's gate order z, r, h
        reset_after=True (default):
            h_z, h_r, h_h = split(h_{t-1} @ recurrent_kernel + b_rec, 3)
            z, r = sig(x_z + h_z), sig(x_r + h_r);  hh = act(x_h + r * h_h)
        reset_after=False:
            z, r from h_{t-1} @ recurrent_kernel[:, :2 units];  hh = act(x_h + (r h_{t-1}) @ U_h)
        h_t = z * h_{t-1} + (1 - z) * hh

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
        `(batch, units)`, or `(batch, time, units)` with `return_sequences`; with
        `return_state`, also the final state `(batch, units)`.

    Returns:
        As for `SimpleRNN`: output, or `[output, state]` with `return_state`.

    Raises:
        ValueError: for inputs that are not `(batch, time, features)`, or a
            state of the wrong shape, naming the layer.
        NotImplementedError: for `recurrent_dropout` or `stateful`.

    Example:
        >>> layer = mk.layers.GRU(4)
        >>> layer(np.ones((2, 5, 3))).shape, layer.bias.shape
        ((2, 4), (2, 12))
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
        super().__init__(
            units,
            activation,
            use_bias,
            kernel_initializer,
            recurrent_initializer,
            bias_initializer,
            **kwargs,
        )
        self.recurrent_activation = activations.get(recurrent_activation)
        self.reset_after = bool(reset_after)

    def _bias_shape(self):
        return (2, 3 * self.units) if self.reset_after else (3 * self.units,)

    def _loop(self, sequences, initial_state, mask):
        return ops.gru(
            sequences,
            self.kernel,
            self.recurrent_kernel,
            self.bias,
            initial_state,
            mask,
            self.go_backwards,
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
