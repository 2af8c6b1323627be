"""`Masking`: marks the time steps whose every feature equals `mask_value` as padding."""

import numpy as np

from minikeras import ops
from minikeras.engine.tensor import Tensor
from minikeras.layers.layer import Layer

__all__ = ["Masking"]


class Masking(Layer):
    """Masks the time steps whose every feature equals `mask_value`, and zeroes them.

    A step is padding when all of its features equal `mask_value`; the
    layers after it that support masking skip it (an LSTM keeps its state
    across it, a pooling leaves it out, a loss does not count it). The
    output is the input with the padded steps set to 0, as in Keras.

    Args:
        mask_value: the value that marks padding.
        **kwargs: `name`, `trainable`, `dtype`.

    Input shape:
        `(batch, steps, features)` (any rank of 2 or more: the last axis is
        the features of one step).

    Output shape:
        The input's shape. Its mask is `(batch, steps)`: True for real steps.

    Returns:
        When called: the inputs, padded steps zeroed, carrying the mask.

    Example:
        >>> x = np.array([[[1.0, 2.0], [0.0, 0.0], [3.0, 0.0]]])
        >>> out = mk.layers.Masking(mask_value=0.0)(x)
        >>> out._keras_mask.numpy().tolist()
        [[True, False, True]]
    """

    supports_masking = True

    def __init__(self, mask_value=0.0, **kwargs):
        super().__init__(**kwargs)
        self.mask_value = float(mask_value)

    def _keep(self, inputs):
        # Not differentiable (a mask), so plain numpy on the values.
        values = inputs.numpy() if isinstance(inputs, Tensor) else np.asarray(inputs)
        return np.any(values != self.mask_value, axis=-1)

    def call(self, inputs):
        keep = self._keep(inputs)
        zeros = np.zeros((), dtype=inputs.dtype)
        return ops.where(keep[..., None], inputs, zeros)

    def compute_mask(self, inputs, mask=None):
        """True where some feature of a step differs from `mask_value`.

        Args:
            inputs: the layer's inputs.
            mask: an incoming mask (combined with this one, as steps masked before stay masked).

        Returns:
            A boolean Tensor `(batch, steps)`.

        Example:
            >>> mk.layers.Masking().compute_mask(np.array([[[0.0], [1.0]]])).numpy().tolist()
            [[False, True]]
        """
        keep = self._keep(inputs)
        if mask is not None:
            keep = keep & (mask.numpy() if isinstance(mask, Tensor) else np.asarray(mask, bool))
        return Tensor(keep)

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        return {**super().get_config(), "mask_value": self.mask_value}
