"""`DropoutRNNCell`: the dropout masks of a recurrent cell, drawn once per sequence.

As in Keras (its mixin of the same name): the masks are drawn at the first
step a training call takes and kept, the same at every step, until the RNN
resets them after the sequence; each entry is kept with probability
`1 - rate` and scaled by `1 / (1 - rate)` (a rate of 1 gives a mask of zeros,
as Keras's dropout does). One mask for the inputs
(`dropout`) and one for the recurrent state (`recurrent_dropout`), or, for a
cell that sets `_mask_count` (an `LSTMCell` or `GRUCell` with
`implementation=1`, which `recurrent_dropout` forces), one of each per gate.
"""

import numpy as np

from minikeras import random

__all__ = ["DropoutRNNCell"]


class DropoutRNNCell:
    """Mixin for cells: `get_dropout_mask`, `get_recurrent_dropout_mask` and their resets.

    The cell using it sets `dropout`, `recurrent_dropout`, `_generator` (a
    numpy Generator, or None for minikeras's default one) and
    `_dropout_masks` (an empty dict), and may set `_mask_count`.

    Example:
        >>> cell = mk.layers.LSTMCell(2, dropout=0.5, recurrent_dropout=0.5, seed=0)
        >>> isinstance(cell, mk.layers.rnn_dropout.DropoutRNNCell)
        True
        >>> len(cell.get_dropout_mask(np.ones((1, 3), "float32")))  # one per gate
        4
    """

    _mask_count = None  # masks per gate (LSTMCell and GRUCell with implementation=1)

    def _mask(self, kind, rate, like):
        """The kept mask of `kind` for tensors like `like`, drawn once, reused until
        reset; with `_mask_count`, one per gate stacked on a first axis `(gates, ...)`."""
        mask = self._dropout_masks.get(kind)
        shape = like.shape if self._mask_count is None else (self._mask_count, *like.shape)
        if mask is None or mask.shape != shape:
            generator = self._generator or random.generator()
            keep = generator.random(shape, dtype=np.float32) >= rate  # (gate by gate)
            scale = 1.0 / (1.0 - rate) if rate < 1 else 0.0  # rate 1: nothing kept
            mask = keep.astype(like.dtype) * like.dtype.type(scale)
            self._dropout_masks[kind] = mask
        return mask

    def _public_mask(self, kind, rate, like):
        mask = self._mask(kind, rate, like)
        return list(mask) if self._mask_count else mask  # a list per gate, as Keras gives it

    def get_dropout_mask(self, step_inputs):
        """The inputs' dropout mask (scaled keep mask), drawn on first use.

        Args:
            step_inputs: one step's inputs `(batch, features)`.

        Returns:
            A float array of their shape (a list of one per gate for an
            `LSTMCell` or `GRUCell` with `implementation=1`, as in Keras), or
            None without `dropout`.

        Example:
            >>> cell = mk.layers.SimpleRNNCell(2, dropout=0.5, seed=1)
            >>> sorted(set(cell.get_dropout_mask(np.ones((2, 3), "float32")).ravel().tolist()))
            [0.0, 2.0]
        """
        return self._public_mask("inputs", self.dropout, step_inputs) if self.dropout else None

    def get_recurrent_dropout_mask(self, state):
        """The recurrent state's dropout mask, drawn on first use (None without one).

        Args:
            state: the state `(batch, units)`.

        Returns:
            A float array of its shape (a list of one per gate for an
            `LSTMCell` or `GRUCell` with `implementation=1`), or None.

        Example:
            >>> cell = mk.layers.SimpleRNNCell(2)
            >>> cell.get_recurrent_dropout_mask(np.ones((1, 2), "float32")) is None
            True
        """
        if not self.recurrent_dropout:
            return None
        return self._public_mask("recurrent", self.recurrent_dropout, state)

    def reset_dropout_mask(self):
        """Forgets the inputs' mask: the next training step draws a new one.

        Returns:
            None.

        Example:
            >>> mk.layers.SimpleRNNCell(2, dropout=0.5).reset_dropout_mask()
        """
        self._dropout_masks.pop("inputs", None)

    def reset_recurrent_dropout_mask(self):
        """Forgets the recurrent mask: the next training step draws a new one.

        Returns:
            None.

        Example:
            >>> mk.layers.SimpleRNNCell(2, recurrent_dropout=0.5).reset_recurrent_dropout_mask()
        """
        self._dropout_masks.pop("recurrent", None)

    def _dropped(self, inputs, state, training):
        """`(inputs, state)` with their dropout masks applied when training; where the
        masks are per gate, each `(gates, batch, size)`: one dropped copy per gate."""
        if training:
            if self.dropout:
                inputs = inputs * self._mask("inputs", self.dropout, inputs)
            if self.recurrent_dropout:
                state = state * self._mask("recurrent", self.recurrent_dropout, state)
        return inputs, state
