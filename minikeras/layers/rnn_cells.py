"""Recurrent cells: one time step. `SimpleRNNCell` here, `RecurrentCell` (what cells share).

A cell is a layer with `state_size` (an int, or a list of ints for several
states), optionally `output_size`, and `call(inputs, states)` returning
`(output, new_states)` for one step: `inputs` `(batch, features)`, `states` a
list of `(batch, size)` tensors. `minikeras.layers.RNN` runs a cell over a
sequence. The built-in cells hold Keras's weights (`kernel`,
`recurrent_kernel`, `bias`, gates in Keras's order), so `SimpleRNN`, `LSTM`
and `GRU`, which are an `RNN` of their cell, can run the whole sequence as one
fused op on the same weights.

Dropout in cells, as in Keras: see `minikeras.layers.rnn_dropout`.
"""

import numbers

import numpy as np

from minikeras import activations, constraints, initializers, ops, regularizers, tree
from minikeras.layers.dense import check_positive_int
from minikeras.layers.layer import Layer
from minikeras.layers.rnn_dropout import DropoutRNNCell

__all__ = ["RecurrentCell", "SimpleRNNCell", "for_kernel", "zero_state_groups"]


def for_kernel(activation):
    """The name the fused loops know `activation` by, or the callable itself.

    Args:
        activation: an activation function.

    Returns:
        `"tanh"`, `"sigmoid"`, `"relu"` or `"linear"`, or `activation` itself.

    Example:
        >>> mk.layers.rnn_cells.for_kernel(mk.activations.tanh)
        'tanh'
    """
    for name in ops.recurrent.FUSED_ACTIVATIONS:
        if activations.get(name) is activation:
            return name
    return activation


class RecurrentCell(DropoutRNNCell, Layer):
    """What the built-in cells share: arguments, weights, dropout masks, config.

    Not used directly: see `SimpleRNNCell`, `LSTMCell` and `GRUCell`.

    Example:
        >>> issubclass(mk.layers.SimpleRNNCell, mk.layers.rnn_cells.RecurrentCell)
        True
    """

    _gates = 1  # blocks of `units` columns in the kernels

    def __init__(
        self,
        units,
        activation="tanh",
        use_bias=True,
        kernel_initializer="glorot_uniform",
        recurrent_initializer="orthogonal",
        bias_initializer="zeros",
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
        self.units = check_positive_int(kind, "units", units)
        self.activation = activations.get(activation)
        self.use_bias = bool(use_bias)
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.recurrent_initializer = initializers.get(recurrent_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.kernel_regularizer = regularizers.get(kernel_regularizer)
        self.recurrent_regularizer = regularizers.get(recurrent_regularizer)
        self.bias_regularizer = regularizers.get(bias_regularizer)
        self.kernel_constraint = constraints.get(kernel_constraint)
        self.recurrent_constraint = constraints.get(recurrent_constraint)
        self.bias_constraint = constraints.get(bias_constraint)
        for argument, value in (("dropout", dropout), ("recurrent_dropout", recurrent_dropout)):
            if isinstance(value, bool) or not isinstance(value, numbers.Real):
                raise TypeError(f"{kind}: `{argument}` must be a number, got {value!r}")
        # Clamped into [0, 1] as Keras 3 does (nan becomes 0; 1 drops everything).
        self.dropout = float(min(1.0, max(0.0, dropout)))
        self.recurrent_dropout = float(min(1.0, max(0.0, recurrent_dropout)))
        self.seed = seed
        generator = None if seed is None else np.random.default_rng(seed)
        object.__setattr__(self, "_generator", generator)
        object.__setattr__(self, "_dropout_masks", {})

    @property
    def state_size(self):
        """The size of each state: `units` (LSTMCell: `[units, units]`)."""
        return self.units

    @property
    def output_size(self):
        """The size of the output: `units`."""
        return self.units

    def build(self, input_shape):
        features = input_shape[-1]
        if features is None:
            raise ValueError(
                f"{type(self).__name__} '{self.name}' needs inputs with a known last axis, "
                f"got shape {tuple(input_shape)}"
            )
        width = self._gates * self.units
        self.kernel = self.add_weight(
            "kernel",
            shape=(features, width),
            initializer=self.kernel_initializer,
            regularizer=self.kernel_regularizer,
            constraint=self.kernel_constraint,
        )
        self.recurrent_kernel = self.add_weight(
            "recurrent_kernel",
            shape=(self.units, width),
            initializer=self.recurrent_initializer,
            regularizer=self.recurrent_regularizer,
            constraint=self.recurrent_constraint,
        )
        self.bias = None
        if self.use_bias:
            self.bias = self.add_weight(
                "bias",
                shape=self._bias_shape(),
                initializer=self._bias_initializer(),
                regularizer=self.bias_regularizer,
                constraint=self.bias_constraint,
            )

    def _bias_shape(self):
        return (self._gates * self.units,)

    def _bias_initializer(self):
        return self.bias_initializer

    def _check_step(self, inputs):
        if inputs.ndim != 2 or inputs.shape[-1] != self.kernel.shape[0]:
            raise ValueError(
                f"{type(self).__name__} '{self.name}' expected one step of shape "
                f"(batch, {self.kernel.shape[0]}), got shape {inputs.shape}"
            )

    def _gate_product(self, values, kernel):
        """`values @ kernel`; for one copy of the values per gate `(gates, batch, size)`,
        each times its gate's columns (one batched product), side by side."""
        if values.ndim == 2:
            return ops.matmul(values, kernel)
        gates, batch, width = values.shape[0], values.shape[1], kernel.shape[1]
        kernels = ops.transpose(ops.reshape(kernel, (kernel.shape[0], gates, -1)), (1, 0, 2))
        products = ops.matmul(values, kernels)  # (gates, batch, units)
        return ops.reshape(ops.transpose(products, (1, 0, 2)), (batch, width))  # (no -1: batch 0)

    # ------------------------------------------------------- fused loop

    _fused_call = None  # the class whose call() the fused op computes (set by each cell)

    def _fused_loop(self, sequences, states, keep, go_backwards, training):
        """The whole sequence as one fused op, `(outputs, last_output, states)`, or None.

        None when the step loop must run instead: a subclass that changes
        `call`, or a recurrent dropout mask while training. Input dropout is
        the same mask at every step, so it is applied to the sequence first.
        """
        fused_call = type(self)._fused_call
        if fused_call is None or type(self).call is not fused_call:
            return None
        if training and (self.recurrent_dropout or (self.dropout and self._mask_count)):
            return None  # a mask on the state, or one per gate: the step loop
        if states is None and type(self).get_initial_state is not RecurrentCell.get_initial_state:
            states = list(tree.flatten(self.get_initial_state(batch_size=sequences.shape[0])))
        if training and self.dropout:
            mask = self.get_dropout_mask(sequences[:, 0])
            sequences = ops.multiply(sequences, np.expand_dims(mask, 1))
        outputs, *states = self._fused_op(sequences, states, keep, go_backwards)
        return outputs, states[0], states

    def _take_implementation(self, implementation):
        """Keras's `implementation`: 1 draws the dropout masks per gate (forced by
        `recurrent_dropout`, as in Keras); 2, the default, one mask for all gates."""
        if implementation not in (1, 2):
            raise ValueError(
                f"{type(self).__name__}: `implementation` must be 1 or 2, got {implementation!r}"
            )
        self.implementation = 1 if self.recurrent_dropout else implementation
        self._mask_count = self._gates if self.implementation == 1 else None

    def get_initial_state(self, batch_size=None):
        """Zeros for each state.

        Args:
            batch_size: the number of sequences.

        Returns:
            A list of `(batch_size, size)` zero tensors.

        Example:
            >>> [s.shape for s in mk.layers.SimpleRNNCell(3).get_initial_state(2)]
            [(2, 3)]
        """
        sizes = self.state_size if isinstance(self.state_size, list) else [self.state_size]
        return [ops.zeros((batch_size, size), dtype=self.compute_dtype) for size in sizes]

    def get_config(self):
        return {
            **super().get_config(),
            "units": self.units,
            "activation": activations.serialize(self.activation),
            "use_bias": self.use_bias,
            "kernel_initializer": initializers.serialize(self.kernel_initializer),
            "recurrent_initializer": initializers.serialize(self.recurrent_initializer),
            "bias_initializer": initializers.serialize(self.bias_initializer),
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


def _state_list(states):
    """`(states as a list, whether they came as one)`."""
    if isinstance(states, (list, tuple)):
        return list(states), False
    return [states], True


class SimpleRNNCell(RecurrentCell):
    """One step of a fully-connected RNN.

        h = activation(x @ kernel + h_prev @ recurrent_kernel + bias)

    Args:
        units: positive int, the size of the state and output.
        activation: `"tanh"` by default.
        use_bias: whether to add a bias.
        kernel_initializer: for the `(features, units)` kernel.
        recurrent_initializer: for the `(units, units)` recurrent kernel.
        bias_initializer: for the `(units,)` bias.
        kernel_regularizer: optional penalty on the kernel.
        recurrent_regularizer: optional penalty on the recurrent kernel.
        bias_regularizer: optional penalty on the bias.
        kernel_constraint: optional constraint on the kernel after each update.
        recurrent_constraint: optional constraint on the recurrent kernel.
        bias_constraint: optional constraint on the bias.
        dropout: fraction of the inputs dropped while training; clamped
            into [0, 1] as Keras 3 clamps it. A rate of 1 drops every input,
            here in every cell (as Keras's `SimpleRNNCell` does, and
            `layers.Dropout(1.0)`); Keras 3.15's `LSTMCell` and `GRUCell`
            steps skip a rate of exactly 1 instead (no dropout), though its
            whole-sequence `GRU` path on JAX drops every input.
        recurrent_dropout: fraction of the previous state dropped while
            training; clamped into [0, 1] as well (a rate of 1 as above).
        seed: int seed of the dropout masks.
        **kwargs: `name`, `dtype`, `trainable`.

    Call arguments:
        inputs: `(batch, features)`, one step.
        states: the previous state `(batch, units)`, or a list of it.
        training: turns dropout on.

    Returns:
        `(output, new_state)`: the new state is a list if the state came as one.

    Input shape:
        `(batch, features)`.

    Output shape:
        `(batch, units)`.

    Raises:
        ValueError: for `units` that is not a positive int.
        TypeError: for a dropout rate that is not a number.

    Example:
        >>> cell = mk.layers.SimpleRNNCell(3)
        >>> output, states = cell(np.ones((2, 4)), [np.zeros((2, 3))])
        >>> output.shape, len(states)
        ((2, 3), 1)
        >>> mk.layers.RNN(cell)(np.ones((2, 5, 4))).shape
        (2, 3)
    """

    def call(self, inputs, states, training=False):
        state_list, single = _state_list(states)
        previous = state_list[0]
        self._check_step(inputs)
        inputs, dropped_state = self._dropped(inputs, previous, training)
        total = ops.matmul(inputs, self.kernel) + ops.matmul(dropped_state, self.recurrent_kernel)
        if self.bias is not None:
            total = total + self.bias
        output = self.activation(total)
        return output, (output if single else [output])

    def _fused_op(self, sequences, states, keep, go_backwards):
        return ops.simple_rnn(
            sequences,
            self.kernel,
            self.recurrent_kernel,
            self.bias,
            states,
            keep,
            go_backwards,
            for_kernel(self.activation),
        )


SimpleRNNCell._fused_call = SimpleRNNCell.call


def zero_state_groups(cell):
    """The states a built-in cell starts from, as zeros an op may make: `[(dtype, sizes)]`.

    That is a built-in cell whose `get_initial_state` is the built-in one
    (zeros of its `state_size`, in its compute dtype), or `StackedRNNCells`
    of such cells. Any other cell gives None: its `get_initial_state` (or
    the RNN's zeros for a cell without one) is what the RNN calls.

    Args:
        cell: an RNN cell.

    Returns:
        A list of `(dtype, sizes)`, in the order of the flattened states, or None.

    Example:
        >>> from minikeras.layers.rnn_cells import zero_state_groups
        >>> cells = mk.layers.StackedRNNCells([mk.layers.LSTMCell(2), mk.layers.GRUCell(3)])
        >>> zero_state_groups(cells)
        [('float32', [2, 2]), ('float32', [3])]
    """
    from minikeras.layers.stacked_cells import StackedRNNCells  # (it imports no cells)

    if "get_initial_state" in vars(cell):
        return None
    if isinstance(cell, StackedRNNCells):
        if type(cell).get_initial_state is not StackedRNNCells.get_initial_state:
            return None
        groups = []
        for inner in cell.cells:
            own = zero_state_groups(inner)
            if own is None:
                return None
            groups += own
        return groups
    if (
        not isinstance(cell, RecurrentCell)
        or type(cell).get_initial_state is not RecurrentCell.get_initial_state
    ):
        return None
    sizes = cell.state_size  # (as `RecurrentCell.get_initial_state` reads it)
    return [(cell.compute_dtype, sizes if isinstance(sizes, list) else [sizes])]
