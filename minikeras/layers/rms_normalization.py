"""`RMSNormalization`: each sample divided by its root mean square, then scaled."""

from minikeras import ops
from minikeras.layers.layer import Layer
from minikeras.layers.normalization_axes import check_axis_argument, normalize_axes

__all__ = ["RMSNormalization"]


class RMSNormalization(Layer):
    """Root mean square normalization (Zhang and Sennrich, 2019), Keras's `RMSNormalization`.

        outputs = inputs / sqrt(mean(inputs ** 2, axis) + epsilon) * scale

    Unlike `LayerNormalization`, the inputs are not centered and there is no
    offset. The mean of squares is taken in float32 at least, as Keras does
    for half-precision inputs. The trained `scale` (initialized to ones) has
    the sizes of the normalized axes in the order of `sorted(axis)`, as
    Keras's weight of that name; it is applied along those axes wherever they
    are (Keras multiplies it in as it is, which suits trailing axes only).

    Args:
        axis: int or list of ints, the axes to normalize over.
        epsilon: a small float added to the mean of squares.
        **kwargs: `name`, `trainable`, `dtype`.

    Input shape:
        Any shape; the normalized axes need known sizes.

    Output shape:
        The inputs' shape.

    Raises:
        ValueError: for an `axis` that is not an int or list of ints, is out
            of range or has an unknown size, a negative `epsilon`, or later
            inputs whose rank or normalized sizes differ from the first.

    Example:
        >>> layer = mk.layers.RMSNormalization(epsilon=0.0)
        >>> layer(np.array([[3.0, -4.0], [1.0, 1.0]])).numpy().round(4)
        array([[ 0.8485, -1.1314],
               [ 1.    ,  1.    ]], dtype=float32)
        >>> layer.scale.shape
        (2,)
    """

    def __init__(self, axis=-1, epsilon=1e-6, **kwargs):
        super().__init__(**kwargs)
        check_axis_argument("RMSNormalization", axis)
        if not epsilon >= 0.0:
            raise ValueError(f"RMSNormalization: `epsilon` must be >= 0, got {epsilon!r}")
        self.axis = list(axis) if isinstance(axis, (list, tuple)) else axis
        self.epsilon = float(epsilon)

    def build(self, input_shape):
        axes = self.axis if isinstance(self.axis, list) else [self.axis]
        self._axes = normalize_axes(self, axes, input_shape)
        self._rank = len(input_shape)
        self._sizes = tuple(input_shape[a] for a in self._axes)
        # Keras orders the weight's axes as sorted(axis), negative ones first.
        weight_axes = [a % self._rank for a in sorted(axes)]
        self._to_increasing = tuple(sorted(range(len(axes)), key=lambda i: weight_axes[i]))
        shape = tuple(input_shape[a] for a in weight_axes)
        self.scale = self.add_weight(name="scale", shape=shape, initializer="ones")

    def call(self, inputs):
        shape = inputs.shape
        if len(shape) != self._rank or tuple(shape[a] for a in self._axes) != self._sizes:
            raise ValueError(
                f"RMSNormalization '{self.name}' was built for inputs of rank {self._rank} with "
                f"sizes {self._sizes} on axes {list(self._axes)}, got shape {shape}"
            )
        broadcast = [1] * self._rank
        for axis, size in zip(self._axes, self._sizes):
            broadcast[axis] = size
        scale = ops.reshape(ops.transpose(self.scale, self._to_increasing), tuple(broadcast))
        # The op computes half precision in float32 and gives the input's dtype back.
        return ops.rms_normalization(
            inputs, scale=scale, axis=list(self._axes), epsilon=self.epsilon
        )

    def compute_output_shape(self, input_shape):
        axes = self.axis if isinstance(self.axis, list) else [self.axis]
        rank = len(input_shape)
        for axis in axes:
            if not -rank <= axis < rank:
                raise ValueError(
                    f"RMSNormalization '{self.name}': axis {axis} is out of range for inputs of "
                    f"shape {tuple(input_shape)}"
                )
        return tuple(input_shape)

    def get_config(self):
        return {**super().get_config(), "axis": self.axis, "epsilon": self.epsilon}
