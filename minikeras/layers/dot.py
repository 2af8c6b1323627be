"""`Dot`: the dot product of two batches of tensors along one axis each (Keras's `batch_dot`)."""

from minikeras import ops
from minikeras.layers.merging import _Merge

__all__ = ["Dot"]


def _axes(layer, shapes):
    """The contracted axis of each input, as non-negative ints."""
    axes = layer.axes
    if isinstance(axes, int):
        axes = (axes, axes)
    found = []
    for axis, shape in zip(axes, shapes):
        rank = len(shape)
        if not -rank <= axis < rank or axis % rank == 0:
            raise ValueError(
                f"Dot '{layer.name}': axes {layer.axes} must name a non-batch axis of each "
                f"input; got shapes {tuple(shapes[0])} and {tuple(shapes[1])}"
            )
        found.append(axis % rank)
    return found


class Dot(_Merge):
    """The dot product of two inputs, sample by sample, along one axis of each.

    For inputs of shapes `(batch, n)` and `(batch, n)`, each sample's output
    is `sum(x * y)`, of shape `(batch, 1)`. In general the output keeps the
    first input's axes but the contracted one, then the second's but the
    batch axis and the contracted one (Keras's `batch_dot`); a result with
    only the batch axis left gets a trailing axis of size 1.

    Args:
        axes: an int (the same axis of both inputs) or a pair, one per input;
            negative values count from the end; the batch axis 0 cannot be one.
        normalize: L2-normalize each input along its axis first, so that the
            output is the cosine similarity.
        **kwargs: `name`, `trainable`, `dtype`.

    Input shape:
        A list of two tensors `(batch, ...)` whose contracted axes have one size.

    Output shape:
        The first input's shape less its contracted axis, then the second's
        less its batch and contracted axes; `(batch, 1)` for two 2D inputs.

    Returns:
        The dot products, as a Tensor.

    Raises:
        ValueError: if not called on two inputs, or the axes are the batch
            axis, out of range, or of different sizes.

    Example:
        >>> x = np.array([[1.0, 2.0], [3.0, 4.0]])
        >>> y = np.array([[5.0, 6.0], [7.0, 8.0]])
        >>> mk.layers.Dot(axes=1)([x, y]).numpy()
        array([[17.],
               [53.]], dtype=float32)
    """

    _exactly = 2

    def __init__(self, axes, normalize=False, **kwargs):
        super().__init__(**kwargs)
        if isinstance(axes, (list, tuple)):
            if len(axes) != 2 or not all(isinstance(a, int) for a in axes):
                raise ValueError(f"Dot: `axes` must be an int or a pair of ints, got {axes!r}")
            axes = tuple(axes)
        elif not isinstance(axes, int):
            raise ValueError(f"Dot: `axes` must be an int or a pair of ints, got {axes!r}")
        self.axes = axes
        self.normalize = bool(normalize)

    def compute_output_shape(self, input_shape):
        """The output shape (see the class).

        Args:
            input_shape: a list of the two inputs' shapes.

        Returns:
            The output's shape.

        Raises:
            ValueError: for the problems the class lists.

        Example:
            >>> mk.layers.Dot(axes=(1, 2)).compute_output_shape([(None, 20), (None, 30, 20)])
            (None, 30)
        """
        self._check_list(input_shape)
        first, second = (list(s) for s in input_shape)
        axis_x, axis_y = _axes(self, (first, second))
        size_x, size_y = first[axis_x], second[axis_y]
        if size_x is not None and size_y is not None and size_x != size_y:
            raise ValueError(
                f"Dot '{self.name}': axis {axis_x} of the first input ({size_x}) and axis "
                f"{axis_y} of the second ({size_y}) must have one size; got shapes "
                f"{tuple(first)} and {tuple(second)}"
            )
        del first[axis_x]
        del second[axis_y]
        output = first + second[1:]
        return tuple(output + [1] if len(output) == 1 else output)

    def _merge(self, inputs):
        x, y = inputs
        axis_x, axis_y = _axes(self, (x.shape, y.shape))
        if self.normalize:
            x, y = _l2_normalize(x, axis_x), _l2_normalize(y, axis_y)
        # One letter per axis: "a" the shared batch, "z" the summed axis, others their own.
        pool = iter("bcdefghijklmnopqrstuvwxy")

        def letters(ndim, axis):
            return "".join("a" if i == 0 else "z" if i == axis else next(pool) for i in range(ndim))

        x_letters, y_letters = letters(x.ndim, axis_x), letters(y.ndim, axis_y)
        out = x_letters.replace("z", "") + y_letters[1:].replace("z", "")
        result = ops.einsum(f"{x_letters},{y_letters}->{out}", x, y)
        return ops.expand_dims(result, -1) if result.ndim == 1 else result

    def compute_mask(self, inputs, mask=None):
        """Always None: a dot product has no time steps left to mask (as in Keras).

        Args:
            inputs: the inputs (unused).
            mask: their masks (unused).

        Returns:
            None.

        Example:
            >>> mk.layers.Dot(1).compute_mask([np.ones((1, 2))] * 2) is None
            True
        """
        return None

    def get_config(self):
        """The layer's arguments (see the class).

        Returns:
            A dict with `axes` and `normalize` besides the base config.

        Example:
            >>> mk.layers.Dot((1, 2), normalize=True).get_config()["axes"]
            (1, 2)
        """
        return {**super().get_config(), "axes": self.axes, "normalize": self.normalize}


def _l2_normalize(x, axis):
    squares = ops.sum(ops.square(x), axis=axis, keepdims=True)
    return x / ops.sqrt(ops.maximum(squares, 1e-12))
