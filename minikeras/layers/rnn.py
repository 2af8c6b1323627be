"""`RNN`: runs a cell over the time axis, with masks, initial states and stateful batches.

Two loops. A built-in cell (`SimpleRNNCell`, `LSTMCell`, `GRUCell`, not a
subclass that changes `call`) runs the whole sequence as one fused op with
a hand-written backward pass (see `minikeras.ops.recurrent`), the loop of
`SimpleRNN`, `LSTM` and `GRU`, which are this layer around their cell. Any
other cell, or a built-in one with `recurrent_dropout` (or dropout masks
per gate, `implementation=1`) while training, is called once per step on
Tensors, and autograd differentiates the unrolled steps: the same results,
much slower.
"""

import numpy as np

from minikeras import ops, tree
from minikeras.layers.input_spec import InputSpec
from minikeras.layers.layer import Layer
from minikeras.layers.rnn_arguments import (
    first_mask,
    mask_to_apply,
    split_initial_state,
    with_initial_state,
)
from minikeras.layers.rnn_cells import zero_state_groups
from minikeras.layers.stacked_cells import StackedRNNCells, takes_training
from minikeras.layers.stateful import StatefulStates

__all__ = ["RNN", "first_mask", "split_initial_state", "with_initial_state"]


def _sizes(size):
    """A `state_size` (an int, or a list of them, nested for stacked cells) as shapes."""
    if isinstance(size, (list, tuple)):
        return [shape for item in size for shape in _sizes(item)]
    return [(int(size),)]


class RNN(StatefulStates, Layer):
    """Runs a recurrent cell over the time axis of `(batch, time, ...)` sequences.

    A cell is any layer (or object) with `state_size` (an int, or a list of
    ints for several states), optionally `output_size` (else the first state
    size), and `call(inputs, states)` returning `(output, new_states)` for one
    step; a list of cells is stacked with `StackedRNNCells`.

    Args:
        cell: the cell, or a list of cells.
        return_sequences: return every step's output `(batch, time, output)`,
            not only the last `(batch, output)`.
        return_state: also return the final states: `[output, *states]`.
            For `StackedRNNCells`, as Keras 3.15 returns them, one entry per
            cell: a list of its states at an eager call (`[output, [h, c],
            [h2]]` for an LSTMCell then a GRUCell), and in a symbolic call
            (so in a functional model) a list for a cell with several states
            and the state itself for a cell with one (`[output, [h, c], h2]`).
        go_backwards: read the sequences from their end (the outputs come in
            that order, as in Keras).
        stateful: start each batch from the previous batch's final states;
            the batch size is fixed (see `reset_states`).
        unroll: accepted for Keras; it changes nothing (a built-in cell runs
            one fused op, any other cell a Python loop over the steps), and
            an unknown time axis is fine with it, as in Keras 3 on JAX and
            PyTorch (on TensorFlow, Keras refuses it when a functional model
            is built).
        zero_output_for_mask: masked steps output zeros, not the previous
            output (`Bidirectional` sets it when returning sequences).
        **kwargs: `name`, `dtype`, `trainable`, `input_shape`.

    Call arguments:
        sequences: `(batch, time, features)`.
        initial_state: optional list of initial states, one per state.
        mask: optional `(batch, time)` booleans: a False step keeps the
            previous states and outputs the previous first state (as Keras;
            for stacked cells, the last cell's). Read from the sequences
            when not given, except with `initial_state`: Keras then does not
            apply the sequences' own mask (pass `mask=` to apply it).
        training: given to the cell (dropout).

    Input shape:
        `(batch, time, features)`.

    Output shape:
        `(batch, output)`, or `(batch, time, output)` with
        `return_sequences`; with `return_state`, then each `(batch, size)`.

    Raises:
        ValueError: for a cell without `state_size` or `call`, inputs that are
            not `(batch, time, ...)`, initial states of the wrong number or
            shape, a stateful layer built without a batch size (an `Input`
            without `batch_shape`, as Keras refuses it), or a stateful batch
            of another size, naming the layer.

    Example:
        >>> layer = mk.layers.RNN(mk.layers.LSTMCell(4), return_state=True)
        >>> output, h, c = layer(np.ones((2, 5, 3)))
        >>> output.shape, c.shape
        ((2, 4), (2, 4))
    """

    supports_masking = True

    def __init__(
        self,
        cell,
        return_sequences=False,
        return_state=False,
        go_backwards=False,
        stateful=False,
        unroll=False,
        zero_output_for_mask=False,
        **kwargs,
    ):
        super().__init__(**kwargs)
        if isinstance(cell, (list, tuple)):
            cell = StackedRNNCells(cell)
        if not callable(getattr(cell, "call", None)) or not hasattr(cell, "state_size"):
            raise ValueError(
                f"{type(self).__name__}: the cell must have a `call(inputs, states)` method and "
                f"a `state_size` attribute, got {cell!r:.100}"
            )
        self.cell = cell
        self.return_sequences = bool(return_sequences)
        self.return_state = bool(return_state)
        self.go_backwards = bool(go_backwards)
        self.unroll = bool(unroll)
        self.zero_output_for_mask = bool(zero_output_for_mask)
        self._init_stateful(stateful)

    # -------------------------------------------------------------- sizes

    @property
    def _state_sizes(self):
        return _sizes(self.cell.state_size)

    @property
    def _output_size(self):
        size = getattr(self.cell, "output_size", None)
        if size is None:
            return self._state_sizes[0]
        return tuple(size) if isinstance(size, (list, tuple)) else (int(size),)

    def _state_shapes(self, batch):
        return [(batch, *size) for size in self._state_sizes]

    # ------------------------------------------------------------ weights

    def build(self, input_shape):
        sequences_shape = input_shape[0] if isinstance(input_shape, list) else input_shape
        sequences_shape = tuple(sequences_shape)
        self._check_rank(sequences_shape)
        self._check_static_batch_size(sequences_shape)
        self._fix_batch_size(sequences_shape[0])
        step_shape = (sequences_shape[0], *sequences_shape[2:])
        if isinstance(self.cell, Layer) and not self.cell.built:
            self.cell.build(step_shape)
            self.cell.built = True
        self.input_spec = InputSpec(ndim=len(sequences_shape))

    def _check_rank(self, shape):
        if len(shape) < 3:
            raise ValueError(
                f"{type(self).__name__} '{self.name}' expects inputs of shape "
                f"(batch, time, features), got shape {tuple(shape)}"
            )

    # --------------------------------------------------------------- call

    def __call__(self, inputs, *args, initial_state=None, **kwargs):
        return super().__call__(with_initial_state(inputs, initial_state), *args, **kwargs)

    def call(self, sequences, initial_state=None, mask=None, training=None):
        sequences, initial_state = split_initial_state(sequences, initial_state)
        sequences = ops.convert_to_tensor(sequences)
        self._check_rank(sequences.shape)
        batch = sequences.shape[0]
        states = self._initial_states(initial_state, batch)
        self._check_batch_size(batch)
        mask = mask_to_apply(mask, initial_state, self)
        keep = None if mask is None else np.asarray(ops.convert_to_tensor(mask).numpy(), bool)
        try:
            outputs, last_output, states = self._loop(sequences, states, keep, training)
        except ValueError as error:
            raise ValueError(f"{type(self).__name__} '{self.name}': {error}") from None
        finally:
            self._reset_dropout_masks(self.cell)
        if self.zero_output_for_mask and keep is not None:
            kept = keep[:, ::-1] if self.go_backwards else keep
            outputs = outputs * kept.reshape(kept.shape + (1,) * (outputs.ndim - 2))
            last_output = outputs[:, -1]
        self._keep_states(states)
        output = outputs if self.return_sequences else last_output
        if not self.return_state:
            return output
        return [output, *self._grouped(states, symbolic=False)]

    def _grouped(self, states, symbolic):
        """Flat states (or their shapes, or masks) as Keras 3.15 returns those of stacked
        cells: one list per cell, a one-state cell's state alone in a symbolic call."""
        if not isinstance(self.cell, StackedRNNCells):
            return list(states)
        grouped, start = [], 0
        for cell in self.cell.cells:
            count = len(_sizes(cell.state_size))
            own = list(states[start : start + count])
            start += count
            several = isinstance(cell.state_size, (list, tuple))
            grouped.append(own if several or not symbolic else own[0])
        return grouped

    def _initial_states(self, given, batch):
        """The states to start from: given, kept (stateful), or None for the cell's own."""
        if given is None:
            return self._kept_states()  # None: the cell's initial states, made by _loop
        expected = self._state_shapes(batch)
        # Keras nests stacked cells' states cell by cell: taken flat, in that order.
        given = tree.flatten(given)
        got = [tuple(np.shape(state)) for state in given]
        if got != expected:
            raise ValueError(
                f"{type(self).__name__} '{self.name}' expected initial states of shapes "
                f"{expected}, got {got}"
            )
        return [ops.cast(state, self.dtype) for state in given]

    def _reset_dropout_masks(self, cell):
        for reset in ("reset_dropout_mask", "reset_recurrent_dropout_mask"):
            if callable(getattr(cell, reset, None)):
                getattr(cell, reset)()
        for inner in getattr(cell, "cells", ()):
            self._reset_dropout_masks(inner)

    def _output_state_index(self):
        """Which state a masked step outputs: the first (of the last cell, when stacked)."""
        cells = getattr(self.cell, "cells", None)
        if not cells:
            return 0
        return len(_sizes([cell.state_size for cell in cells[:-1]]))

    def get_initial_state(self, batch_size):
        """The states a sequence starts from: the cell's `get_initial_state`, else zeros.

        The cell's method is called as Keras 3 calls it, with `batch_size=` by
        keyword; the states of stacked cells come nested per cell, as in Keras.

        Args:
            batch_size: the number of sequences.

        Returns:
            A list of `(batch_size, size)` tensors, one per state (for
            stacked cells, one list of them per cell).

        Example:
            >>> layer = mk.layers.RNN(mk.layers.LSTMCell(3))
            >>> [s.shape for s in layer.get_initial_state(2)]
            [(2, 3), (2, 3)]
        """
        initial = getattr(self.cell, "get_initial_state", None)
        if callable(initial):
            states = initial(batch_size=batch_size)
            if isinstance(self.cell, StackedRNNCells):
                return [list(tree.flatten(own)) for own in states]
            return tree.flatten(states)
        return [
            ops.zeros(shape, dtype=self.compute_dtype) for shape in self._state_shapes(batch_size)
        ]

    def _loop(self, sequences, states, keep, training):
        """Calls the cell step by step: `(outputs, last_output, final_states)`.

        `states` is None for the cell's initial states; `keep` a numpy
        `(batch, time)` mask or None.
        """
        fused = getattr(self.cell, "_fused_loop", None)  # the built-in cells have one op
        if fused is not None and sequences.shape[1]:
            result = fused(sequences, states, keep, self.go_backwards, training)
            if result is not None:
                return result
        batch, steps = sequences.shape[0], sequences.shape[1]
        if states is None:
            # A built-in cell's zeros come from an op of the batch, which a replay runs
            # again; another cell's `get_initial_state` is called, as Keras calls it.
            zeros = zero_state_groups(self.cell) if steps else None
            if zeros is None:
                states = tree.flatten(self.get_initial_state(batch))
            else:
                states = [
                    state
                    for dtype, sizes in zeros
                    for state in ops.recurrent.zero_states(sequences, sizes, dtype)
                ]
        order = range(steps - 1, -1, -1) if self.go_backwards else range(steps)
        cell_kwargs = {}
        if takes_training(self.cell):
            cell_kwargs["training"] = bool(training)
        call = self.cell if callable(self.cell) else self.cell.call
        outputs, output = [], None
        carried = self._output_state_index()
        for step in order:
            step_output, new_states = call(sequences[:, step], list(states), **cell_kwargs)
            if not isinstance(new_states, (list, tuple)):
                new_states = [new_states]
            new_states = list(new_states)
            if keep is not None:
                kept = keep[:, step]
                # As Keras: a masked step outputs the previous output state (h, not c).
                previous = states[carried]
                if previous.shape != step_output.shape:  # a cell whose output is no state
                    previous = output if output is not None else ops.zeros_like(step_output)
                step_output = ops.where(_along(kept, step_output), step_output, previous)
                new_states = [
                    ops.where(_along(kept, new), new, old) for new, old in zip(new_states, states)
                ]
            output, states = step_output, new_states
            outputs.append(output)
        if not outputs:  # no steps: no outputs, the states unchanged
            output = ops.zeros((batch, *self._output_size), dtype=self.compute_dtype)
            return (
                ops.zeros((batch, 0, *self._output_size), dtype=self.compute_dtype),
                output,
                states,
            )
        return ops.stack(outputs, axis=1), output, states

    # -------------------------------------------------------------- shapes

    def compute_mask(self, inputs, mask=None):
        """The outputs' mask: the input mask if `return_sequences`, else None; None
        for each state.

        With `go_backwards` the outputs come in reverse order but the mask is
        passed on as it came, as Keras passes it, so that a model computes
        what it computes in Keras.

        Args:
            inputs: the inputs.
            mask: the inputs' `(batch, time)` mask, or None.

        Returns:
            A mask or None; with `return_state`, a list `[mask, None, ...]`.

        Example:
            >>> layer = mk.layers.RNN(mk.layers.SimpleRNNCell(2))
            >>> layer.compute_mask(None, np.array([[True, False]])) is None
            True
        """
        mask = first_mask(mask)
        output_mask = mask if self.return_sequences else None
        if self.return_state:  # in the structure of the symbolic outputs
            return [output_mask, *self._grouped([None] * len(self._state_sizes), symbolic=True)]
        return output_mask

    def compute_output_shape(self, input_shape):
        sequences_shape = input_shape[0] if isinstance(input_shape, list) else input_shape
        batch, steps = sequences_shape[0], sequences_shape[1]
        size = self._output_size
        output = (batch, steps, *size) if self.return_sequences else (batch, *size)
        if self.return_state:
            return [output, *self._grouped(self._state_shapes(batch), symbolic=True)]
        return output

    # -------------------------------------------------------------- config

    def _rnn_config(self):
        return {
            "return_sequences": self.return_sequences,
            "return_state": self.return_state,
            "go_backwards": self.go_backwards,
            "stateful": self.stateful,
            "unroll": self.unroll,
            "zero_output_for_mask": self.zero_output_for_mask,
        }

    def get_config(self):
        from minikeras.serialization_lib import serialize_keras_object

        cell = serialize_keras_object(self.cell)
        return {**super().get_config(), "cell": cell, **self._rnn_config()}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        from minikeras.serialization_lib import deserialize_keras_object

        config = dict(config)
        config["cell"] = deserialize_keras_object(config["cell"], custom_objects)
        return cls(**config)


def _along(kept, value):
    """The `(batch,)` booleans shaped to broadcast over `value`."""
    return kept.reshape(kept.shape + (1,) * (value.ndim - 1))
