"""Layers that pass their inputs on: `Identity`, and `ActivityRegularization` (adding a penalty)."""

from minikeras import regularizers
from minikeras.layers.input_layer import SymbolicTensor
from minikeras.layers.layer import Layer
from minikeras.layers.symbolic import input_dtype
from minikeras.tree import map_structure

__all__ = ["ActivityRegularization", "Identity"]


class Identity(Layer):
    """Returns its inputs unchanged: a placeholder, for example where a block is switched off.

    Args:
        **kwargs: `name`, `trainable`, `dtype`.

    Input shape:
        Any shape, or a structure of tensors (strings too).

    Output shape:
        The inputs' shape; a mask passes through.

    Example:
        >>> mk.layers.Identity()(np.array([[1.0, 2.0]])).numpy()
        array([[1., 2.]], dtype=float32)
    """

    supports_masking = True
    _accepts_strings = True  # (it computes nothing: strings pass as Keras's do)

    def call(self, inputs):
        return inputs

    def compute_output_shape(self, input_shape):
        return input_shape

    def compute_output_spec(self, inputs, *args, **kwargs):
        # Each input as it is, dtype included (an int input stays int, as in Keras).
        return map_structure(
            lambda leaf: SymbolicTensor(leaf.shape, input_dtype(self, leaf.dtype)), inputs
        )


class ActivityRegularization(Layer):
    """Returns its inputs unchanged; adds `(l1 * sum(|x|) + l2 * sum(x^2)) / batch` to `losses`.

    The penalty is added at every call, divided by the batch size, as an
    activity regularizer's is (it is one: `L1L2(l1, l2)`).

    Args:
        l1: the L1 factor, a number `>= 0`.
        l2: the L2 factor, a number `>= 0`.
        **kwargs: `name`, `trainable`, `dtype`.

    Input shape:
        Any shape.

    Output shape:
        The inputs' shape; a mask passes through.

    Raises:
        ValueError: if a factor is negative or not a number.

    Example:
        >>> layer = mk.layers.ActivityRegularization(l1=0.1, l2=0.5)
        >>> layer(np.array([[1.0, -2.0]])).numpy()
        array([[ 1., -2.]], dtype=float32)
        >>> [round(float(loss), 4) for loss in layer.losses]
        [2.8]
    """

    supports_masking = True

    def __init__(self, l1=0.0, l2=0.0, **kwargs):
        kwargs.pop("activity_regularizer", None)  # the config of older files may hold it
        penalty = regularizers.L1L2(l1=l1, l2=l2)
        super().__init__(activity_regularizer=penalty, **kwargs)
        self.l1 = penalty.l1
        self.l2 = penalty.l2

    def call(self, inputs):
        return inputs

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        config = super().get_config()
        config.pop("activity_regularizer", None)
        return {**config, "l1": self.l1, "l2": self.l2}
