"""`StatefulStates`: what a `stateful=True` recurrent layer keeps between calls.

A stateful layer starts each batch from the final states of the batch
before, so that sample `i` of one batch continues sample `i` of the last.
That needs one batch size for the layer's life: it comes from
`Input(batch_shape=...)` when the layer is built, or else from the first
call, and a batch of another size is refused before anything changes. As in
Keras, building a stateful layer on an unknown batch size (an `Input` given
only `shape`) is an error. The
states are kept as plain arrays, outside the tape (a later batch does not
backpropagate into an earlier one) and outside the weights (a saved model
does not carry them, as in Keras).
"""

import numpy as np

from minikeras import ops, tree

__all__ = ["StatefulStates"]


class StatefulStates:
    """Mixin for recurrent layers: the kept states, the fixed batch size, `reset_states`.

    The layer using it sets `self.stateful` and defines `_state_shapes(batch)`
    (the states' shapes for a batch) and `get_initial_state(batch_size)`
    before calling these methods.

    Example:
        >>> layer = mk.layers.RNN(mk.layers.SimpleRNNCell(2), stateful=True)
        >>> _ = layer(np.ones((3, 4, 1), "float32"))
        >>> [s.shape for s in layer.states]
        [(3, 2)]
        >>> layer.reset_states(); float(np.abs(layer.states[0].numpy()).max())
        0.0
    """

    def _init_stateful(self, stateful):
        object.__setattr__(self, "stateful", bool(stateful))
        object.__setattr__(self, "_state_values", None)  # arrays, or None before the first call
        object.__setattr__(self, "_expected_batch_size", None)

    def _fix_batch_size(self, batch_size):
        """Records the batch size at build (from `batch_shape`) when it is known."""
        if self.stateful and batch_size is not None and self._expected_batch_size is None:
            object.__setattr__(self, "_expected_batch_size", int(batch_size))

    def _check_static_batch_size(self, shape):
        """Refuses to build a stateful layer on inputs whose batch size is unknown."""
        if self.stateful and shape[0] is None:
            raise ValueError(
                f"{type(self).__name__} '{self.name}' is stateful, so it needs a fixed batch "
                f"size, got inputs of shape {tuple(shape)}; give the model's Input a batch "
                f"size: Input(batch_shape=(batch_size, ...))"
            )

    def _check_batch_size(self, batch_size):
        """Fixes the batch size on the first call; refuses another size later."""
        if not self.stateful:
            return
        expected = self._expected_batch_size
        if expected is None:
            object.__setattr__(self, "_expected_batch_size", int(batch_size))
        elif batch_size != expected:
            raise ValueError(
                f"{type(self).__name__} '{self.name}' is stateful with batch size {expected} "
                f"(from its first call or its Input's batch_shape), got a batch of "
                f"{batch_size}; make every batch {expected} samples (drop or pad the last)"
            )

    def _kept_states(self):
        """The states this call starts from: those kept, or None (zeros)."""
        if not self.stateful or self._state_values is None:
            return None
        return [ops.convert_to_tensor(value) for value in self._state_values]

    def _keep_states(self, states):
        if self.stateful:
            values = [np.array(ops.convert_to_tensor(state).numpy()) for state in states]
            object.__setattr__(self, "_state_values", values)

    @property
    def states(self):
        """The kept states as Tensors; before the first call, the initial states the
        first call starts from (the layer's `get_initial_state`) if the batch size is known.

        None for a layer that is not stateful or whose batch size is not known yet.
        """
        if self._state_values is not None:
            return [ops.convert_to_tensor(value) for value in self._state_values]
        if not self.stateful or self._expected_batch_size is None:
            return None
        return tree.flatten(self.get_initial_state(self._expected_batch_size))

    def reset_states(self, states=None):
        """Sets the kept states to zeros, or to `states`.

        Zeros, as Keras resets them, even for a cell whose `get_initial_state`
        starts elsewhere (that is where the first call starts).

        Args:
            states: optional list of arrays, one per state, each
                `(batch, size)` with the layer's batch size.

        Returns:
            None.

        Raises:
            ValueError: for `states` given to a layer that is not stateful
                (without them, that layer has nothing to reset: as in Keras
                3, nothing happens), or states of the wrong number or shapes.

        Example:
            >>> layer = mk.layers.RNN(mk.layers.LSTMCell(2), stateful=True)
            >>> _ = layer(np.ones((1, 3, 2), "float32"))
            >>> layer.reset_states([np.ones((1, 2)), np.zeros((1, 2))])
            >>> layer.states[0].numpy().tolist()
            [[1.0, 1.0]]
        """
        if not self.stateful and states is None:
            return
        if not self.stateful:
            raise ValueError(
                f"{type(self).__name__} '{self.name}' is not stateful: it keeps no states to "
                "set (construct it with stateful=True)"
            )
        if states is None:
            batch = self._expected_batch_size
            values = None  # (batch size not known yet: nothing kept, nothing to zero)
            if batch is not None:
                values = [np.zeros(shape, self.dtype) for shape in self._state_shapes(batch)]
            object.__setattr__(self, "_state_values", values)
            return
        states = list(states) if isinstance(states, (list, tuple)) else [states]
        batch = self._expected_batch_size
        if batch is None:
            batch = np.shape(states[0])[0] if states else None
        expected = [tuple(shape) for shape in self._state_shapes(batch)]
        got = [tuple(np.shape(state)) for state in states]
        if got != expected:
            raise ValueError(
                f"{type(self).__name__} '{self.name}'.reset_states expected states of shapes "
                f"{expected}, got {got}"
            )
        self._check_batch_size(batch)
        values = [np.asarray(ops.convert_to_tensor(s).numpy(), dtype=self.dtype) for s in states]
        object.__setattr__(self, "_state_values", values)

    def reset_state(self, states=None):
        """Same as `reset_states` (Keras 3 has both names).

        Args:
            states: as for `reset_states`.

        Returns:
            None.

        Example:
            >>> layer = mk.layers.RNN(mk.layers.GRUCell(2), stateful=True)
            >>> layer.reset_state()
        """
        self.reset_states(states)
