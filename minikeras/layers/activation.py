"""`Activation`: applies an activation function as a layer."""

from minikeras import activations
from minikeras.layers.layer import Layer

__all__ = ["Activation"]


class Activation(Layer):
    """Applies `activation` to its inputs.

    Args:
        activation: a name such as `"relu"`, or a callable.
        **kwargs: `name`, `trainable`, `dtype`.

    Input shape:
        Any shape.

    Output shape:
        The input's shape.

    Raises:
        ValueError: for an unknown activation name.

    Example:
        >>> mk.layers.Activation("relu")(np.array([-1.0, 2.0])).numpy()
        array([0., 2.], dtype=float32)
    """

    # A mask (e.g. from Embedding(mask_zero=True)) passes through unchanged, as in Keras.
    supports_masking = True

    def __init__(self, activation, **kwargs):
        super().__init__(**kwargs)
        self.activation = activations.get(activation)

    def call(self, inputs):
        return self.activation(inputs)

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        return {**super().get_config(), "activation": activations.serialize(self.activation)}
