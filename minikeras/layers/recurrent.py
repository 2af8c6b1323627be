"""Recurrent layers: `RNNBase` (what they share) and `SimpleRNN`; `LSTM` and `GRU` beside.

Each layer's loop is one op (`ops.simple_rnn`, `ops.lstm`, `ops.gru`): a
single primitive over the whole sequence with a hand-written backward pass,
all gate products of a step in one matrix product. The weights have Keras's
names, shapes and gate orders, so `set_weights(keras_layer.get_weights())`
gives the same outputs.
"""

import numpy as np

from minikeras import activations, initializers, ops, random
from minikeras.layers.dense import check_positive_int
from minikeras.layers.input_spec import InputSpec
from minikeras.layers.layer import Layer

__all__ = ["RNNBase", "SimpleRNN", "for_kernel", "split_initial_state", "with_initial_state"]


def _first(structure):
    """The first leaf of a list/tuple (a mask given per input), or the value itself."""
    while isinstance(structure, (list, tuple)):
        structure = structure[0] if structure else None
    return structure


def for_kernel(activation):
    """The name the fused loops know `activation` by, or the callable itself.

    Args:
        activation: an activation function.

    Returns:
        `"tanh"`, `"sigmoid"`, `"relu"` or `"linear"`, or `activation` itself.

    Example:
        >>> mk.layers.recurrent.for_kernel(mk.activations.tanh)
        'tanh'
    """
    for name in ops.recurrent.FUSED_ACTIVATIONS:
        if activations.get(name) is activation:
            return name
    return activation


def with_initial_state(inputs, initial_state):
    """`[inputs, *initial_state]`, or `inputs` alone if there are no states.

    Recurrent layers take their initial states in with their inputs, so that
    the functional API records them as inputs of the call (an encoder's final
    states feeding a decoder, say).

    Args:
        inputs: the sequences.
        initial_state: None, a state, or a list of states.

    Returns:
        `inputs`, or a list.

    Example:
        >>> (
        ...     mk.layers.recurrent.with_initial_state("x", None),
        ...     mk.layers.recurrent.with_initial_state("x", ["h", "c"]),
        ... )
        ('x', ['x', 'h', 'c'])
    """
    if initial_state is None:
        return inputs
    states = initial_state if isinstance(initial_state, (list, tuple)) else [initial_state]
    return [inputs, *states]


def split_initial_state(inputs, initial_state):
    """Undoes `with_initial_state`: `(sequences, initial_state)` from what call() got.

    Args:
        inputs: the sequences, or the list `[sequences, *states]`.
        initial_state: the states given separately, or None.

    Returns:
        The pair `(sequences, states)`, states a list or None.

    Example:
        >>> mk.layers.recurrent.split_initial_state(["x", "h", "c"], None)
        ('x', ['h', 'c'])
    """
    if isinstance(inputs, (list, tuple)):
        inputs, *states = inputs
        initial_state = states or initial_state
    return inputs, initial_state


class RNNBase(Layer):
    """What SimpleRNN, LSTM and GRU share: arguments, inputs, masks, outputs.

    Not used directly; see the subclasses for the arguments.

    Example:
        >>> issubclass(mk.layers.SimpleRNN, mk.layers.recurrent.RNNBase)
        True
    """

    _gates = 1  # gate blocks in the kernel's columns
    _state_count = 1
    supports_masking = True

    def __init__(
        self,
        units,
        activation,
        use_bias,
        kernel_initializer,
        recurrent_initializer,
        bias_initializer,
        dropout=0.0,
        recurrent_dropout=0.0,
        seed=None,
        return_sequences=False,
        return_state=False,
        go_backwards=False,
        stateful=False,
        unroll=False,
        zero_output_for_mask=False,
        **kwargs,
    ):
        kwargs.pop("use_cudnn", None)  # Keras's GPU switch: nothing to switch here
        super().__init__(**kwargs)
        kind = type(self).__name__
        self.units = check_positive_int(kind, "units", units)
        self.activation = activations.get(activation)
        self.use_bias = bool(use_bias)
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.recurrent_initializer = initializers.get(recurrent_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        if not 0 <= dropout < 1:
            raise ValueError(f"{kind}: `dropout` must be in [0, 1), got {dropout!r}")
        if recurrent_dropout:
            raise NotImplementedError(
                f"{kind}: recurrent_dropout is not supported (the fused loop has no "
                "recurrent mask); use dropout=, which drops inputs"
            )
        if stateful:
            raise NotImplementedError(f"{kind}: stateful=True is not supported")
        self.dropout = float(dropout)
        self.recurrent_dropout = 0.0
        self.seed = seed
        self._generator = None if seed is None else np.random.default_rng(seed)
        self.return_sequences = bool(return_sequences)
        self.return_state = bool(return_state)
        self.go_backwards = bool(go_backwards)
        self.stateful = False
        self.unroll = bool(unroll)  # accepted for Keras; the fused loop is already one op
        self.zero_output_for_mask = bool(zero_output_for_mask)

    # ------------------------------------------------------------ weights

    def build(self, input_shape):
        sequences_shape = input_shape[0] if isinstance(input_shape, list) else input_shape
        self._check_rank(sequences_shape)
        if sequences_shape[-1] is None:
            raise ValueError(
                f"{type(self).__name__} '{self.name}' needs inputs with a known last axis, "
                f"got shape {tuple(sequences_shape)}"
            )
        self.input_spec = InputSpec(ndim=3, axes={-1: sequences_shape[-1]})
        width = self._gates * self.units
        self.kernel = self.add_weight(
            "kernel", shape=(sequences_shape[-1], width), initializer=self.kernel_initializer
        )
        self.recurrent_kernel = self.add_weight(
            "recurrent_kernel", shape=(self.units, width), initializer=self.recurrent_initializer
        )
        self.bias = None
        if self.use_bias:
            self.bias = self.add_weight(
                "bias", shape=self._bias_shape(), initializer=self._bias_initializer()
            )

    def _bias_shape(self):
        return (self._gates * self.units,)

    def _bias_initializer(self):
        return self.bias_initializer

    def _check_rank(self, shape):
        if len(shape) != 3:
            raise ValueError(
                f"{type(self).__name__} '{self.name}' expects inputs of shape "
                f"(batch, time, features), got shape {tuple(shape)}"
            )

    # --------------------------------------------------------------- call

    def __call__(self, inputs, *args, initial_state=None, **kwargs):
        return super().__call__(with_initial_state(inputs, initial_state), *args, **kwargs)

    def call(self, sequences, initial_state=None, mask=None, training=None):
        sequences, initial_state = split_initial_state(sequences, initial_state)
        self._check_rank(sequences.shape)
        if sequences.shape[-1] != self.kernel.shape[0]:
            # Checked here too: with initial states the inputs are a list, which the
            # base class's last-axis check does not look into.
            raise ValueError(
                f"{type(self).__name__} '{self.name}' expected inputs with last axis "
                f"{self.kernel.shape[0]}, got shape {sequences.shape}"
            )
        mask = _first(mask)
        if training and self.dropout:
            sequences = self._drop_inputs(sequences)
        if initial_state is not None and not isinstance(initial_state, (list, tuple)):
            initial_state = [initial_state]
        try:
            outputs, *states = self._loop(sequences, initial_state, mask)
        except ValueError as error:
            raise ValueError(f"{type(self).__name__} '{self.name}': {error}") from None
        if self.zero_output_for_mask and mask is not None:
            keep = np.asarray(mask, dtype=bool)
            keep = keep[:, ::-1] if self.go_backwards else keep
            outputs = outputs * keep[..., None]
        if self.return_sequences:
            output = outputs
        elif self.zero_output_for_mask and mask is not None:
            output = outputs[:, -1]
        else:
            output = states[0]  # the last output is the final state
        return [output, *states] if self.return_state else output

    def _drop_inputs(self, sequences):
        # One mask per sequence, the same at every step, as Keras's RNN cells do.
        batch, _, features = sequences.shape
        generator = self._generator or random.generator()
        keep = generator.random((batch, 1, features), dtype=np.float32) >= self.dropout
        scale = keep.astype(sequences.dtype) * sequences.dtype.type(1.0 / (1.0 - self.dropout))
        return ops.multiply(sequences, scale)

    def compute_mask(self, inputs, mask=None):
        """The outputs' mask: the input mask if `return_sequences` (reversed if
        `go_backwards`, like the outputs), else None; None for each state.

        Args:
            inputs: the inputs.
            mask: the inputs' `(batch, time)` mask, or None.

        Returns:
            A mask or None; with `return_state`, a list `[mask, None, ...]`.

        Example:
            >>> mk.layers.SimpleRNN(2).compute_mask(None, np.array([[True, False]])) is None
            True
        """
        mask = _first(mask)
        output_mask = mask if self.return_sequences else None
        if output_mask is not None and self.go_backwards:
            output_mask = ops.flip(output_mask, axis=1)
        if self.return_state:
            return [output_mask] + [None] * self._state_count
        return output_mask

    def compute_output_shape(self, input_shape):
        sequences_shape = input_shape[0] if isinstance(input_shape, list) else input_shape
        batch, steps = sequences_shape[0], sequences_shape[1]
        output = (batch, steps, self.units) if self.return_sequences else (batch, self.units)
        if self.return_state:
            return [output] + [(batch, self.units)] * self._state_count
        return output

    def get_config(self):
        return {
            **super().get_config(),
            "units": self.units,
            "activation": activations.serialize(self.activation),
            "use_bias": self.use_bias,
            "kernel_initializer": initializers.serialize(self.kernel_initializer),
            "recurrent_initializer": initializers.serialize(self.recurrent_initializer),
            "bias_initializer": initializers.serialize(self.bias_initializer),
            "dropout": self.dropout,
            "recurrent_dropout": self.recurrent_dropout,
            "seed": self.seed,
            "return_sequences": self.return_sequences,
            "return_state": self.return_state,
            "go_backwards": self.go_backwards,
            "stateful": self.stateful,
            "unroll": self.unroll,
            "zero_output_for_mask": self.zero_output_for_mask,
        }


class SimpleRNN(RNNBase):
    """Fully-connected RNN: `h_t = activation(x_t @ kernel + h_{t-1} @ recurrent_kernel + bias)`.

    Args:
        units: positive int, the size of the state and output.
        activation: `"tanh"` by default; `tanh`, `sigmoid`, `relu` and
            `linear` run fused, any other callable runs a slower step loop.
        use_bias: whether to add a bias.
        kernel_initializer: for the `(features, units)` kernel.
        recurrent_initializer: for the `(units, units)` recurrent kernel.
        bias_initializer: for the `(units,)` bias.
        dropout: fraction of input features dropped while training (one mask
            per sequence, as in Keras).
        recurrent_dropout: only 0 is supported.
        seed: int seed of the dropout masks.
        return_sequences: return every step's output `(batch, time, units)`,
            not just the last `(batch, units)`.
        return_state: also return the final state: `[output, state]`.
        go_backwards: process the sequence from its end (and return the
            outputs in that order, as Keras does).
        stateful: only False is supported.
        unroll: accepted for Keras; the loop is one fused op either way.
        zero_output_for_mask: masked steps output zeros, not the previous
            output (`Bidirectional` sets it when returning sequences).
        **kwargs: `name`, `trainable`, `dtype`, `input_shape`.

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
        `(batch, units)`, or `(batch, time, units)` with `return_sequences`; with
        `return_state`, also the final state `(batch, units)`.

    Raises:
        ValueError: for inputs that are not `(batch, time, features)`, or
            states of the wrong shape, naming the layer.
        NotImplementedError: for `recurrent_dropout` or `stateful`.

    Example:
        >>> layer = mk.layers.SimpleRNN(4, return_sequences=True)
        >>> layer(np.ones((2, 5, 3))).shape
        (2, 5, 4)
        >>> [w.shape for w in layer.weights]
        [(3, 4), (4, 4), (4,)]
    """

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
        super().__init__(
            units,
            activation,
            use_bias,
            kernel_initializer,
            recurrent_initializer,
            bias_initializer,
            **kwargs,
        )

    def _loop(self, sequences, initial_state, mask):
        return ops.simple_rnn(
            sequences,
            self.kernel,
            self.recurrent_kernel,
            self.bias,
            initial_state,
            mask,
            self.go_backwards,
            for_kernel(self.activation),
        )
