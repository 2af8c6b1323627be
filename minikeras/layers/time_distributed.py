"""`TimeDistributed`: applies one layer, with one set of weights, at every time step."""

import numpy as np

from minikeras import ops
from minikeras.engine.tensor import Tensor
from minikeras.layers.wrapper import Wrapper

__all__ = ["TimeDistributed"]


class TimeDistributed(Wrapper):
    """Applies `layer` to every time step of its inputs, the same weights at each.

    Inputs `(batch, time, ...)` are folded to `(batch * time, ...)`, given to
    the layer in one call, and unfolded to `(batch, time, ...)`: one matrix
    product rather than a loop over steps (Keras loops; the values are the
    same for any layer without batch statistics). A layer with batch
    statistics (`BatchNormalization` while training) therefore takes them
    over batch and time together.

    A `(batch, time)` mask is folded too and given to the layer if its `call`
    takes `mask`; the outputs keep it (Keras 3 drops it with a warning; we
    keep Keras 2's behaviour, so that an LSTM after this layer skips the
    padding).

    Args:
        layer: a `Layer` instance, called on `(samples, ...)` with one output.
        **kwargs: `name`, `trainable`, `dtype`.

    Input shape:
        `(batch, time, ...)`, at least 3 axes, where `...` is what `layer`
        takes without its batch axis.

    Output shape:
        `(batch, time, ...)`, where `...` is what `layer` gives without its
        batch axis.

    Raises:
        ValueError: if `layer` is not a layer, the inputs have fewer than 3
            axes, a mask's first two axes differ from the inputs', or the
            layer gives several outputs.

    Example:
        >>> layer = mk.layers.TimeDistributed(mk.layers.Dense(4))
        >>> layer(np.ones((2, 5, 3))).shape
        (2, 5, 4)
        >>> layer.layer.kernel.shape
        (3, 4)
    """

    supports_masking = True

    def _step_shape(self, input_shape):
        if not isinstance(input_shape, (tuple, list)) or len(input_shape) < 3:
            raise ValueError(
                f"TimeDistributed '{self.name}' needs inputs of shape (batch, time, ...) with at "
                f"least 3 axes, got shape {input_shape}"
            )
        return (None, *input_shape[2:])

    def build(self, input_shape):
        step_shape = self._step_shape(tuple(input_shape))
        if not self.layer.built:
            self.layer.build(step_shape)
            self.layer.built = True

    def call(self, inputs, training=None, mask=None):
        shape = inputs.shape
        self._step_shape(shape)
        batch, time = shape[:2]
        folded = ops.reshape(inputs, (batch * time, *shape[2:]))
        step_mask = None
        if mask is not None:
            mask = np.asarray(mask.numpy() if isinstance(mask, Tensor) else mask)
            if mask.shape[:2] != (batch, time):
                raise ValueError(
                    f"TimeDistributed '{self.name}' needs a mask whose first two axes are the "
                    f"inputs' (batch, time) {(batch, time)}, got mask shape {mask.shape}"
                )
            step_mask = mask.reshape(batch * time, *mask.shape[2:])
        outputs = self.layer(folded, training=training, mask=step_mask)
        if not isinstance(outputs, Tensor):
            raise ValueError(
                f"TimeDistributed '{self.name}' needs a layer with one output, got "
                f"{type(outputs).__name__} from {type(self.layer).__name__} '{self.layer.name}'"
            )
        return ops.reshape(outputs, (batch, time, *outputs.shape[1:]))

    def compute_mask(self, inputs, mask=None):
        """The inputs' `(batch, time)` mask, kept for the outputs.

        Args:
            inputs: the inputs.
            mask: their mask, or None.

        Returns:
            The mask reduced to its first two axes (true where any entry of a
            step is), or None.

        Example:
            >>> layer = mk.layers.TimeDistributed(mk.layers.Dense(2))
            >>> layer.compute_mask(np.ones((1, 3, 4)), np.array([[True, False, True]]))
            array([[ True, False,  True]])
        """
        if mask is None:
            return None
        mask = np.asarray(mask.numpy() if isinstance(mask, Tensor) else mask).astype(bool)
        return mask.reshape(*mask.shape[:2], -1).any(axis=-1) if mask.ndim > 2 else mask

    def compute_output_shape(self, input_shape):
        input_shape = tuple(input_shape)
        step_output = self.layer.compute_output_shape(self._step_shape(input_shape))
        return (input_shape[0], input_shape[1], *tuple(step_output)[1:])
