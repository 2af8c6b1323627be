"""`StackedRNNCells`: several cells as one, each step's output feeding the next cell."""

import inspect

from minikeras.layers.layer import Layer

__all__ = ["StackedRNNCells", "takes_training"]


def _count(state_size):
    return len(state_size) if isinstance(state_size, (list, tuple)) else 1


class StackedRNNCells(Layer):
    """Wraps a list of cells so that `RNN` runs them as one, stacked in that order.

    At each step the first cell reads the inputs, each next cell reads the
    output of the one before, and the last cell's output is the step's output.

    `RNN(StackedRNNCells(...), return_state=True)` returns the final states
    per cell, as Keras 3.15 does (see `RNN`'s `return_state`), and its
    `get_initial_state` nests them per cell too; `initial_state` is taken
    nested per cell, as Keras gives it, or flat in that order.
    Called directly, the cell takes states either flat or nested per cell and
    answers in the same form.

    Args:
        cells: a list of cells (each with `state_size` and `call`).
        **kwargs: `name`, `dtype`, `trainable`.

    Call arguments:
        inputs: `(batch, features)`, one step.
        states: the cells' states, flat or one list per cell.
        training: given to the cells that take it.

    Returns:
        `(output, new_states)`.

    Input shape:
        `(batch, features)`.

    Output shape:
        `(batch, last cell's output size)`.

    Raises:
        ValueError: for an empty list or an item without `state_size`/`call`.

    Example:
        >>> cells = [mk.layers.LSTMCell(4), mk.layers.GRUCell(3)]
        >>> layer = mk.layers.RNN(mk.layers.StackedRNNCells(cells), return_state=True)
        >>> output, (h, c), [gru_state] = layer(np.ones((2, 5, 6)))
        >>> output.shape, h.shape, c.shape, gru_state.shape
        ((2, 3), (2, 4), (2, 4), (2, 3))
    """

    def __init__(self, cells, **kwargs):
        super().__init__(**kwargs)
        cells = list(cells)
        if not cells:
            raise ValueError("StackedRNNCells: expected a non-empty list of cells, got []")
        for cell in cells:
            if not callable(getattr(cell, "call", None)) or not hasattr(cell, "state_size"):
                raise ValueError(
                    "StackedRNNCells: every cell needs `call(inputs, states)` and `state_size`, "
                    f"got {cell!r:.100}"
                )
        self.cells = cells

    @property
    def state_size(self):
        """Each cell's `state_size`, in order (a list, nested as the cells' are)."""
        return [cell.state_size for cell in self.cells]

    @property
    def output_size(self):
        """The last cell's output size (else its first state size)."""
        return _output_size(self.cells[-1])

    def get_initial_state(self, batch_size=None):
        """Each cell's initial states, one list per cell, as Keras nests them.

        A cell's own `get_initial_state` is called with `batch_size=` by
        keyword (as Keras 3 calls it); a cell without one starts from zeros.

        Args:
            batch_size: the number of sequences.

        Returns:
            A list with one list of tensors per cell.

        Example:
            >>> cells = mk.layers.StackedRNNCells([mk.layers.LSTMCell(2), mk.layers.GRUCell(3)])
            >>> [[s.shape for s in states] for states in cells.get_initial_state(1)]
            [[(1, 2), (1, 2)], [(1, 3)]]
        """
        from minikeras import ops

        states = []
        for cell in self.cells:
            initial = getattr(cell, "get_initial_state", None)
            if callable(initial):
                found = initial(batch_size=batch_size)
                states.append(list(found) if isinstance(found, (list, tuple)) else [found])
            else:
                sizes = cell.state_size
                sizes = sizes if isinstance(sizes, (list, tuple)) else [sizes]
                states.append(
                    [ops.zeros((batch_size, size), dtype=self.compute_dtype) for size in sizes]
                )
        return states

    def build(self, input_shape):
        shape = tuple(input_shape)
        for cell in self.cells:
            if isinstance(cell, Layer) and not cell.built:
                cell.build(shape)
                cell.built = True
            shape = (shape[0], _output_size(cell))

    def call(self, inputs, states, training=False):
        counts = [_count(cell.state_size) for cell in self.cells]
        nested = len(states) == len(self.cells) and all(
            isinstance(s, (list, tuple)) for s in states
        )
        if nested:
            per_cell = [list(s) for s in states]
        else:
            states = list(states)
            if len(states) != sum(counts):
                raise ValueError(
                    f"StackedRNNCells '{self.name}' expected {sum(counts)} states "
                    f"({counts} per cell), got {len(states)}"
                )
            per_cell, start = [], 0
            for count in counts:
                per_cell.append(states[start : start + count])
                start += count
        new_states = []
        for cell, cell_states in zip(self.cells, per_cell):
            kwargs = {"training": training} if takes_training(cell) else {}
            inputs, found = cell(inputs, cell_states, **kwargs)
            found = list(found) if isinstance(found, (list, tuple)) else [found]
            new_states.append(found)
        if nested:
            return inputs, new_states
        return inputs, [state for found in new_states for state in found]

    def get_config(self):
        from minikeras.serialization_lib import serialize_keras_object

        cells = [serialize_keras_object(cell) for cell in self.cells]
        return {**super().get_config(), "cells": cells}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        from minikeras.serialization_lib import deserialize_keras_object

        config = dict(config)
        config["cells"] = [deserialize_keras_object(c, custom_objects) for c in config["cells"]]
        return cls(**config)


def _output_size(cell):
    size = getattr(cell, "output_size", None)
    if size is None:
        size = cell.state_size
        size = size[0] if isinstance(size, (list, tuple)) else size
    return size


def takes_training(cell):
    """Whether the cell's `call` names a `training` argument.

    Args:
        cell: a cell.

    Returns:
        A bool.

    Example:
        >>> mk.layers.stacked_cells.takes_training(mk.layers.GRUCell(2))
        True
    """

    try:
        return "training" in inspect.signature(cell.call).parameters
    except (TypeError, ValueError):
        return False
