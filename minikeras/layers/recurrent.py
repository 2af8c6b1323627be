"""`RNNBase` (what the fused recurrent layers share) and `SimpleRNN`; `LSTM` and `GRU` beside.

Each of these layers is an `RNN` holding its cell (`layer.cell.kernel`, as in
Keras 3). Their cells run a whole sequence as one op (`ops.simple_rnn`,
`ops.lstm`, `ops.gru`): a single primitive with a hand-written backward pass,
all gate products of a step in one matrix product (see `RNN` and the cells).
What the layers add is Keras's flat arguments and config, and the cell's
attributes read through the layer. The weights have Keras's names, shapes and
gate orders, so `set_weights(keras_layer.get_weights())` gives the same
outputs.
"""

from minikeras.layers.input_spec import InputSpec
from minikeras.layers.rnn import RNN
from minikeras.layers.rnn_cells import SimpleRNNCell

__all__ = ["RNNBase", "SimpleRNN", "cell_property"]

_LAYER_KEYS = ("name", "trainable", "dtype")


def cell_property(name):
    """A read-only property of a recurrent layer that reads its cell's attribute `name`.

    Args:
        name: the cell's attribute.

    Returns:
        A property.

    Example:
        >>> mk.layers.SimpleRNN.units.__doc__
        "The cell's `units`."
    """

    def get(self):
        return getattr(self.cell, name)

    get.__name__ = name
    get.__doc__ = f"The cell's `{name}`."
    return property(get)


class RNNBase(RNN):
    """What SimpleRNN, LSTM and GRU share: an `RNN` of their cell, run as one fused op.

    Not used directly; see the subclasses for the arguments. The cell's
    arguments and weights read through the layer (`layer.units`,
    `layer.kernel` is `layer.cell.kernel`); the config is flat, as in Keras.

    Args:
        cell_class: the cell's class, given by the subclass.
        cell_arguments: the subclass's own arguments of the cell (units,
            activations, initializers, ...).
        kernel_regularizer: optional penalty on the kernel.
        recurrent_regularizer: optional penalty on the recurrent kernel.
        bias_regularizer: optional penalty on the bias.
        kernel_constraint: optional constraint on the kernel.
        recurrent_constraint: optional constraint on the recurrent kernel.
        bias_constraint: optional constraint on the bias.
        dropout: fraction of the input features dropped while training (one
            mask per sequence, the same at every step, as in Keras; one per
            gate for `LSTM` and `GRU` with `recurrent_dropout`); clamped into
            [0, 1] as Keras clamps it.
        recurrent_dropout: fraction of the state dropped at each step while
            training (one mask per sequence, per gate for `LSTM` and `GRU`,
            as Keras's `implementation=1` which it forces); runs the cell
            step by step; clamped into [0, 1] as well.
        seed: int seed of the dropout masks.
        return_sequences: as for `RNN`.
        return_state: as for `RNN`.
        go_backwards: as for `RNN`.
        stateful: as for `RNN`.
        unroll: accepted for Keras; the loop is one fused op either way.
        zero_output_for_mask: as for `RNN`.
        use_cudnn: Keras's GPU switch, `"auto"`, True or False: kept as
            `layer.use_cudnn`, nothing to switch here (where Keras refuses
            True for a configuration cuDNN cannot run, we run it).
        **kwargs: `name`, `dtype`, `trainable`, `input_shape`.

    Raises:
        ValueError: for a `use_cudnn` other than `"auto"`, True or False, and
            as the cell does for bad arguments.

    Example:
        >>> layer = mk.layers.SimpleRNN(3)
        >>> isinstance(layer, mk.layers.recurrent.RNNBase), layer.cell.name
        (True, 'simple_rnn_cell')
    """

    _cell_name = None  # Keras's fixed name of the cell: "lstm_cell", ...

    def __init__(
        self,
        cell_class,
        cell_arguments,
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
        unroll=False,
        zero_output_for_mask=False,
        use_cudnn="auto",
        **kwargs,
    ):
        if use_cudnn not in ("auto", True, False):
            raise ValueError(
                f"{type(self).__name__}: `use_cudnn` must be 'auto', True or False, "
                f"got {use_cudnn!r}"
            )
        cell = cell_class(
            **cell_arguments,
            kernel_regularizer=kernel_regularizer,
            recurrent_regularizer=recurrent_regularizer,
            bias_regularizer=bias_regularizer,
            kernel_constraint=kernel_constraint,
            recurrent_constraint=recurrent_constraint,
            bias_constraint=bias_constraint,
            dropout=dropout,
            recurrent_dropout=recurrent_dropout,
            seed=seed,
            dtype=kwargs.get("dtype"),
            trainable=kwargs.get("trainable", True),
            name=self._cell_name,
        )
        super().__init__(
            cell,
            return_sequences=return_sequences,
            return_state=return_state,
            go_backwards=go_backwards,
            stateful=stateful,
            unroll=unroll,
            zero_output_for_mask=zero_output_for_mask,
            **kwargs,
        )
        self.use_cudnn = use_cudnn  # (kept, not in the config, as in Keras)

    def build(self, input_shape):
        super().build(input_shape)
        sequences_shape = input_shape[0] if isinstance(input_shape, list) else input_shape
        if sequences_shape[-1] is not None:
            self.input_spec = InputSpec(ndim=3, axes={-1: sequences_shape[-1]})

    def _check_rank(self, shape):
        if len(shape) != 3:
            raise ValueError(
                f"{type(self).__name__} '{self.name}' expects inputs of shape "
                f"(batch, time, features), got shape {tuple(shape)}"
            )

    def _loop(self, sequences, states, keep, training):
        if sequences.shape[-1] != self.cell.kernel.shape[0]:
            # Checked here too: with initial states the inputs are a list, which the
            # base class's last-axis check does not look into.
            raise ValueError(
                f"expected inputs with last axis {self.cell.kernel.shape[0]}, got shape "
                f"{sequences.shape}"
            )
        return super()._loop(sequences, states, keep, training)

    def get_config(self):
        cell = {k: v for k, v in self.cell.get_config().items() if k not in _LAYER_KEYS}
        base = {k: v for k, v in super().get_config().items() if k != "cell"}
        return {**base, **cell}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        return cls(**config)


for _name in (
    "units", "activation", "use_bias", "kernel_initializer", "recurrent_initializer",
    "bias_initializer", "kernel_regularizer", "recurrent_regularizer", "bias_regularizer",
    "kernel_constraint", "recurrent_constraint", "bias_constraint", "dropout",
    "recurrent_dropout", "seed", "kernel", "recurrent_kernel", "bias",
):  # fmt: skip
    setattr(RNNBase, _name, cell_property(_name))


class SimpleRNN(RNNBase):
    """Fully-connected RNN: `h_t = activation(x_t @ kernel + h_{t-1} @ recurrent_kernel + bias)`.

    An `RNN` of a `SimpleRNNCell` (`layer.cell`), run as one fused op.

    Args:
        units: positive int, the size of the state and output.
        activation: `"tanh"` by default; `tanh`, `sigmoid`, `relu` and
            `linear` run fused, any other callable runs a slower step loop.
        use_bias: whether to add a bias.
        kernel_initializer: for the `(features, units)` kernel.
        recurrent_initializer: for the `(units, units)` recurrent kernel.
        bias_initializer: for the `(units,)` bias.
        **kwargs: regularizers and constraints of the weights, `dropout`,
            `recurrent_dropout`, `seed`, `return_sequences`, `return_state`,
            `go_backwards`, `stateful`, `unroll`, `zero_output_for_mask` (see
            `RNNBase` and `RNN`); `name`, `trainable`, `dtype`, `input_shape`.

    Call arguments:
        sequences: `(batch, time, features)` floats.
        initial_state: optional state `(batch, units)` (or a list of one).
        mask: optional `(batch, time)` booleans: a False step keeps the
            previous state and output. Models pass it from an
            `Embedding(mask_zero=True)` on their own.
        training: turns dropout on.

    Input shape:
        `(batch, time, features)`.

    Output shape:
        `(batch, units)`, or `(batch, time, units)` with `return_sequences`;
        with `return_state`, `[output, state]`.

    Raises:
        ValueError: for inputs that are not `(batch, time, features)`, states
            of the wrong shape, or a stateful batch of another size, naming
            the layer.

    Example:
        >>> layer = mk.layers.SimpleRNN(4, return_sequences=True)
        >>> layer(np.ones((2, 5, 3))).shape
        (2, 5, 4)
        >>> [w.shape for w in layer.weights], layer.kernel is layer.cell.kernel
        ([(3, 4), (4, 4), (4,)], True)
    """

    _cell_name = "simple_rnn_cell"

    def __init__(
        self,
        units,
        activation="tanh",
        use_bias=True,
        kernel_initializer="glorot_uniform",
        recurrent_initializer="orthogonal",
        bias_initializer="zeros",
        **kwargs,
    ):
        cell_arguments = {
            "units": units,
            "activation": activation,
            "use_bias": use_bias,
            "kernel_initializer": kernel_initializer,
            "recurrent_initializer": recurrent_initializer,
            "bias_initializer": bias_initializer,
        }
        super().__init__(SimpleRNNCell, cell_arguments, **kwargs)
