"""`Bidirectional`: an RNN run forwards and a copy run backwards, outputs merged."""

from minikeras import ops
from minikeras.layers.layer import Layer
from minikeras.layers.rnn_arguments import (
    first_mask,
    mask_to_apply,
    split_initial_state,
    with_initial_state,
)

__all__ = ["Bidirectional"]

_MERGE_MODES = ("concat", "sum", "ave", "mul", None)


def _renamed(layer, prefix, **changes):
    """A fresh copy of `layer` from its config, named `prefix + name`."""
    config = layer.get_config()
    name = layer.name[len(prefix) :] if layer.name.startswith(prefix) else layer.name
    config.update(name=prefix + name, **changes)
    return type(layer).from_config(config)


class Bidirectional(Layer):
    """Runs a recurrent layer forwards and a copy backwards, and merges their outputs.

    The backward copy reads the sequence from its end; when returning
    sequences its outputs are flipped back, so step `t` of both halves
    describes input step `t`. Both copies get fresh weights (as in Keras,
    the given layer's own weights are not reused) and output zeros at masked
    steps when returning sequences.

    Args:
        layer: a `SimpleRNN`, `LSTM`, `GRU` or `RNN` (or a layer with their
            `go_backwards`, `return_sequences`, `return_state` and config).
        merge_mode: `"concat"` (default), `"sum"`, `"ave"`, `"mul"`, or None
            for the list `[forward, backward]`.
        weights: optional initial weights, forward layer's first.
        backward_layer: optional layer to use backwards instead of a copy;
            it must differ from `layer` in `go_backwards` only.
        **kwargs: `name`, `trainable`, `dtype`.

    Call arguments:
        sequences: `(batch, time, features)`.
        initial_state: optional list: the forward layer's states, then the
            backward layer's.
        mask: optional `(batch, time)` booleans, given to both layers. Read
            from the sequences when not given, except with `initial_state`:
            as in Keras the sequences' own mask is then not applied (pass
            `mask=` to apply it), though the outputs carry it.
        training: given to both layers.

    Input shape:
        `(batch, time, features)`.

    Output shape:
        The wrapped layer's output with its last axis doubled for `merge_mode="concat"`,
        unchanged for `"sum"`, `"ave"` and `"mul"`, and a list of the two outputs for
        None; with `return_state`, the forward layer's states then the backward layer's
        follow.

    Returns:
        The merged outputs; with `return_state`, `[outputs, *forward_states,
        *backward_states]`.

    Raises:
        ValueError: for a bad `merge_mode`, a layer that is not recurrent, a
            `backward_layer` that does not match `layer`, or a stateful layer
            built without a batch size (as Keras refuses it).

    Example:
        >>> from minikeras.layers import LSTM
        >>> layer = mk.layers.Bidirectional(LSTM(4, return_sequences=True))
        >>> layer(np.ones((2, 5, 3))).shape
        (2, 5, 8)
        >>> layer.forward_layer.name.startswith("forward_"), layer.backward_layer.go_backwards
        (True, True)
    """

    supports_masking = True

    def __init__(self, layer, merge_mode="concat", weights=None, backward_layer=None, **kwargs):
        if merge_mode not in _MERGE_MODES:
            raise ValueError(
                f"Bidirectional: merge_mode must be one of {_MERGE_MODES}, got {merge_mode!r}"
            )
        for candidate in (layer, backward_layer):
            if candidate is not None and not all(
                hasattr(candidate, a) for a in ("go_backwards", "return_sequences", "return_state")
            ):
                raise ValueError(
                    "Bidirectional: expected a recurrent layer (with go_backwards, "
                    f"return_sequences and return_state), got {candidate!r}"
                )
        super().__init__(**kwargs)
        self.forward_layer = _renamed(layer, "forward_")
        if backward_layer is None:  # (always reading backwards, as Keras makes it)
            backward_layer = _renamed(layer, "backward_", go_backwards=True)
        self.backward_layer = backward_layer
        if self.forward_layer.go_backwards == self.backward_layer.go_backwards:
            raise ValueError(
                "Bidirectional: the forward and backward layers must differ in go_backwards, "
                f"both have go_backwards={self.forward_layer.go_backwards}"
                + (" (wrap a layer that reads forwards)" if layer.go_backwards else "")
            )
        for attribute in ("stateful", "return_sequences", "return_state"):
            forward = getattr(self.forward_layer, attribute, False)
            backward = getattr(self.backward_layer, attribute, False)
            if forward != backward:
                raise ValueError(
                    f"Bidirectional: the forward and backward layers must have the same "
                    f"{attribute}, got {forward} and {backward}"
                )
        self.merge_mode = merge_mode
        self.stateful = bool(getattr(self.forward_layer, "stateful", False))
        self.return_sequences = self.forward_layer.return_sequences
        self.return_state = self.forward_layer.return_state
        for copy in (self.forward_layer, self.backward_layer):
            copy.zero_output_for_mask = self.return_sequences
        self._initial_weights = weights

    def build(self, input_shape):
        sequences_shape = input_shape[0] if isinstance(input_shape, list) else input_shape
        if self.stateful and sequences_shape[0] is None:
            raise ValueError(
                f"Bidirectional '{self.name}' wraps a stateful layer, so it needs a fixed batch "
                f"size, got inputs of shape {tuple(sequences_shape)}; give the model's Input a "
                "batch size: Input(batch_shape=(batch_size, ...))"
            )
        for copy in (self.forward_layer, self.backward_layer):
            if not copy.built:
                copy.build(sequences_shape)
        if self._initial_weights is not None:
            self.set_weights(self._initial_weights)
            self._initial_weights = None

    def __call__(self, inputs, *args, initial_state=None, **kwargs):
        return super().__call__(with_initial_state(inputs, initial_state), *args, **kwargs)

    def call(self, sequences, initial_state=None, mask=None, training=None):
        sequences, initial_state = split_initial_state(sequences, initial_state)
        mask = mask_to_apply(mask, initial_state, self)
        forward_state = backward_state = None
        if initial_state:
            half = len(initial_state) // 2
            forward_state, backward_state = initial_state[:half], initial_state[half:]
        forward = self.forward_layer(
            sequences, initial_state=forward_state, mask=mask, training=training
        )
        backward = self.backward_layer(
            sequences, initial_state=backward_state, mask=mask, training=training
        )
        states = []
        if self.return_state:
            states = [*forward[1:], *backward[1:]]
            forward, backward = forward[0], backward[0]
        if self.return_sequences:
            backward = ops.flip(backward, axis=1)
        if self.merge_mode == "concat":
            outputs = ops.concatenate([forward, backward], axis=-1)
        elif self.merge_mode == "sum":
            outputs = forward + backward
        elif self.merge_mode == "ave":
            outputs = (forward + backward) * 0.5
        elif self.merge_mode == "mul":
            outputs = forward * backward
        else:
            outputs = [forward, backward]
        if not self.return_state:
            return outputs
        return [*outputs, *states] if self.merge_mode is None else [outputs, *states]

    @property
    def states(self):
        """The kept states, the forward layer's then the backward layer's, as a tuple.

        None unless both layers keep states (see `RNN.states`).
        """
        forward, backward = self.forward_layer.states, self.backward_layer.states
        if forward and backward:
            return (*forward, *backward)
        return None

    def reset_states(self):
        """Resets the kept states of both layers (see `RNN.reset_states`).

        Returns:
            None.

        Raises:
            AttributeError: if the wrapped layer is not stateful, as in Keras
                (a model's `reset_states` skips such layers).

        Example:
            >>> layer = mk.layers.Bidirectional(mk.layers.GRU(2, stateful=True))
            >>> _ = layer(np.ones((1, 3, 2), "float32"))
            >>> layer.reset_states(); layer.forward_layer.states[0].numpy().tolist()
            [[0.0, 0.0]]
        """
        if not self.stateful:
            raise AttributeError(
                f"Bidirectional '{self.name}' is not stateful: it keeps no states to reset "
                "(wrap a layer made with stateful=True)"
            )
        self.forward_layer.reset_states()
        self.backward_layer.reset_states()

    def reset_state(self):
        """Same as `reset_states` (Keras 3 has both names).

        Returns:
            None.

        Raises:
            AttributeError: if the wrapped layer is not stateful.

        Example:
            >>> mk.layers.Bidirectional(mk.layers.LSTM(2, stateful=True)).reset_state()
        """
        self.reset_states()

    def compute_mask(self, inputs, mask=None):
        """The outputs' masks, as Keras 3.15 gives them.

        The input mask when returning sequences, else None; twice (a pair)
        for `merge_mode=None`. With `return_state` Keras adds no entries for
        the states of a layer that is not stateful (each output past the
        masks gets none); a stateful one gets a None per state here (Keras
        fails there).

        Args:
            inputs: the inputs.
            mask: their `(batch, time)` mask, or None.

        Returns:
            A mask, a list of masks and Nones, or None.

        Example:
            >>> from minikeras.layers import GRU
            >>> mk.layers.Bidirectional(GRU(2)).compute_mask(None, np.ones((1, 3), bool)) is None
            True
        """
        mask = first_mask(mask)
        output_mask = mask if self.return_sequences else None
        masks = [output_mask, output_mask] if self.merge_mode is None else [output_mask]
        if self.return_state and self.states is not None:
            layer = self.forward_layer  # each state's None, grouped as the states are
            masks += layer._grouped([None] * len(layer._state_sizes), symbolic=True) * 2
        return masks if len(masks) > 1 else masks[0]

    def compute_output_shape(self, input_shape):
        shape = self.forward_layer.compute_output_shape(input_shape)
        states = []
        if self.return_state:
            shape, states = shape[0], shape[1:]
        if self.merge_mode == "concat":
            outputs = [(*shape[:-1], 2 * shape[-1])]
        elif self.merge_mode is None:
            outputs = [shape, shape]
        else:
            outputs = [shape]
        outputs += states * 2
        return outputs if len(outputs) > 1 else outputs[0]

    def get_config(self):
        from minikeras.saving import serialize_layer

        return {
            **super().get_config(),
            "merge_mode": self.merge_mode,
            "layer": serialize_layer(self.forward_layer),
            "backward_layer": serialize_layer(self.backward_layer),
        }

    @classmethod
    def from_config(cls, config, custom_objects=None):
        from minikeras.saving import deserialize_layer

        def unbuilt(entry):
            # Built later by this layer's build, forward first, so that the weights come
            # in the order get_weights gives them (the constructor copies `layer` anyway).
            entry = {key: value for key, value in entry.items() if key != "build_config"}
            return deserialize_layer(entry, custom_objects)

        config = dict(config)
        config["layer"] = unbuilt(config["layer"])
        if config.get("backward_layer") is not None:
            config["backward_layer"] = unbuilt(config["backward_layer"])
        return cls(**config)
