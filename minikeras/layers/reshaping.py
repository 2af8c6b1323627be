"""`Flatten` and `Reshape`: change the shape of each sample, keep the batch axis."""

import numpy as np

from minikeras import ops
from minikeras.layers.layer import Layer


class Flatten(Layer):
    """Flattens each sample: `(batch, d1, d2, ...)` becomes `(batch, d1 * d2 * ...)`.

    Args:
        **kwargs: `name`, `trainable`, `dtype`.

    Example:
        >>> Flatten()(np.zeros((2, 3, 4))).shape
        (2, 12)
    """

    def call(self, inputs):
        return ops.reshape(inputs, (inputs.shape[0], -1))

    def compute_output_shape(self, input_shape):
        rest = input_shape[1:]
        size = None if any(s is None for s in rest) else int(np.prod(rest))
        return (input_shape[0], size)


class Reshape(Layer):
    """Reshapes each sample to `target_shape`; the batch axis is kept.

    Args:
        target_shape: a tuple of ints, one of which may be -1.
        **kwargs: `name`, `trainable`, `dtype`.

    Raises:
        ValueError: if a sample's size does not fit `target_shape`.

    Example:
        >>> Reshape((3, 4))(np.zeros((2, 12))).shape
        (2, 3, 4)
    """

    def __init__(self, target_shape, **kwargs):
        super().__init__(**kwargs)
        self.target_shape = tuple(int(s) for s in target_shape)
        if sum(s == -1 for s in self.target_shape) > 1 or any(
            s == 0 or s < -1 for s in self.target_shape
        ):
            raise ValueError(
                f"Reshape: target_shape must hold positive ints and at most one -1, "
                f"got {target_shape}"
            )

    def build(self, input_shape):
        self.compute_output_shape(input_shape)

    def call(self, inputs):
        self.compute_output_shape(inputs.shape)
        return ops.reshape(inputs, (inputs.shape[0], *self.target_shape))

    def compute_output_shape(self, input_shape):
        rest = input_shape[1:]
        if any(s is None for s in rest):
            return (input_shape[0], *self.target_shape)
        size = int(np.prod(rest))
        known = int(np.prod([s for s in self.target_shape if s != -1]))
        fits = size % known == 0 if -1 in self.target_shape else size == known
        if not fits:
            raise ValueError(
                f"Reshape '{self.name}' cannot reshape samples of shape {tuple(rest)} "
                f"({size} values) to target_shape {self.target_shape}"
            )
        target = tuple(size // known if s == -1 else s for s in self.target_shape)
        return (input_shape[0], *target)

    def get_config(self):
        return {**super().get_config(), "target_shape": self.target_shape}
