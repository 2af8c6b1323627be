"""Reshaping each sample, the batch axis kept: `Flatten`, `Reshape`, `Permute`, `RepeatVector`.

Padding, cropping and upsampling of images are in `reshaping_2d` (re-exported
here, where they were first written), of sequences and volumes in
`reshaping_nd`.
"""

import math

import numpy as np

from minikeras import ops
from minikeras.layers.data_format import check_layer_data_format
from minikeras.layers.layer import Layer
from minikeras.layers.reshaping_2d import Cropping2D, UpSampling2D, ZeroPadding2D

__all__ = [
    "Flatten",
    "Permute",
    "RepeatVector",
    "Reshape",
    # re-exported from reshaping_2d
    "Cropping2D",
    "UpSampling2D",
    "ZeroPadding2D",
]


class Flatten(Layer):
    """Flattens each sample: `(batch, d1, d2, ...)` becomes `(batch, d1 * d2 * ...)`.

    Args:
        data_format: `"channels_last"` or `"channels_first"` (None, the
            default: `mk.config.image_data_format()` when the layer is made);
            with channels first the channel axis is moved last before
            flattening, as Keras does, so the values come in the channels-last order.
        **kwargs: `name`, `trainable`, `dtype`.

    Input shape:
        `(batch, d1, d2, ...)`.

    Output shape:
        `(batch, d1 * d2 * ...)`; `(batch, 1)` for 1-D inputs.

    Raises:
        ValueError: for an unknown `data_format`.

    Example:
        >>> mk.layers.Flatten()(np.zeros((2, 3, 4))).shape
        (2, 12)
        >>> x = np.arange(4.0).reshape(1, 2, 2)  # (batch, channels, steps)
        >>> mk.layers.Flatten(data_format="channels_first")(x).numpy()
        array([[0., 2., 1., 3.]], dtype=float32)
    """

    _keeps_input_dtype = True  # (symbolically too: an int input stays int, as in Keras)

    def __init__(self, data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.data_format = check_layer_data_format("Flatten", data_format)

    def call(self, inputs):
        if self.data_format == "channels_first" and inputs.ndim > 2:
            inputs = ops.transpose(inputs, (0, *range(2, inputs.ndim), 1))
        # The size is written out: with 0 samples, -1 would be ambiguous.
        return ops.reshape(inputs, (inputs.shape[0], math.prod(inputs.shape[1:])))

    def get_config(self):
        return {**super().get_config(), "data_format": self.data_format}

    def compute_output_shape(self, input_shape):
        rest = input_shape[1:]
        size = None if any(s is None for s in rest) else math.prod(rest)
        return (input_shape[0], size)


class Reshape(Layer):
    """Reshapes each sample to `target_shape`; the batch axis is kept.

    Args:
        target_shape: a tuple of ints, one of which may be -1.
        **kwargs: `name`, `trainable`, `dtype`.

    Input shape:
        `(batch, ...)`, of `prod(target_shape)` values per sample.

    Output shape:
        `(batch, *target_shape)`, the -1 entry (if any) computed.

    Raises:
        ValueError: if a sample's size does not fit `target_shape`.

    Example:
        >>> mk.layers.Reshape((3, 4))(np.zeros((2, 12))).shape
        (2, 3, 4)
    """

    _keeps_input_dtype = True  # (symbolically too: an int input stays int, as in Keras)

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
        # The -1 resolved from the sample's size: with 0 samples numpy cannot infer it.
        return ops.reshape(inputs, self.compute_output_shape(inputs.shape))

    def compute_output_shape(self, input_shape):
        rest = input_shape[1:]
        if any(s is None for s in rest):  # (then the -1 is not known either)
            return (input_shape[0], *(None if s == -1 else s for s in self.target_shape))
        size = math.prod(rest)
        known = math.prod(s for s in self.target_shape if s != -1)
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


def _check_rank(layer, input_shape, rank, layout):
    if len(input_shape) != rank:
        raise ValueError(
            f"{type(layer).__name__} '{layer.name}' expects {rank}-D inputs {layout}, "
            f"got shape {tuple(input_shape)}"
        )


class Permute(Layer):
    """Permutes the axes of each sample; the batch axis stays first.

    Args:
        dims: a permutation of `1..rank` (axis 0 is the batch), such as
            `(2, 1)` to swap the two axes of `(batch, steps, features)`.
        **kwargs: `name`, `trainable`, `dtype`.

    Input shape:
        `(batch, d1, ..., dk)`, with `k = len(dims)`.

    Output shape:
        `(batch, d[dims[0]], ..., d[dims[k - 1]])`.

    Returns:
        When called: the inputs with axes `(0, *dims)`.

    Raises:
        ValueError: if `dims` is not a permutation of `1..len(dims)`, or the
            inputs do not have `len(dims) + 1` axes.

    Example:
        >>> mk.layers.Permute((2, 1))(np.zeros((4, 10, 64))).shape
        (4, 64, 10)
    """

    _keeps_input_dtype = True  # (symbolically too: an int input stays int, as in Keras)

    def __init__(self, dims, **kwargs):
        super().__init__(**kwargs)
        dims = tuple(dims)
        if sorted(dims) != list(range(1, len(dims) + 1)):
            raise ValueError(
                f"Permute: `dims` must be a permutation of 1..{len(dims)} (the batch axis "
                f"0 is not permuted), got {dims}"
            )
        self.dims = tuple(int(d) for d in dims)

    def build(self, input_shape):
        self.compute_output_shape(input_shape)

    def call(self, inputs):
        self.compute_output_shape(inputs.shape)
        return ops.transpose(inputs, (0, *self.dims))

    def compute_output_shape(self, input_shape):
        _check_rank(self, input_shape, len(self.dims) + 1, f"for dims={self.dims}")
        return (input_shape[0], *(input_shape[d] for d in self.dims))

    def get_config(self):
        return {**super().get_config(), "dims": self.dims}


class RepeatVector(Layer):
    """Repeats each input vector `n` times: `(batch, features)` becomes `(batch, n, features)`.

    Args:
        n: positive int, the number of repeats.
        **kwargs: `name`, `trainable`, `dtype`.

    Input shape:
        `(batch, features)`.

    Output shape:
        `(batch, n, features)`.

    Returns:
        When called on `(batch, features)`: a Tensor of shape `(batch, n, features)`.

    Raises:
        ValueError: if `n` is not a positive int, or the inputs are not 2-D.

    Example:
        >>> mk.layers.RepeatVector(3)(np.array([[1.0, 2.0]])).numpy()
        array([[[1., 2.],
                [1., 2.],
                [1., 2.]]], dtype=float32)
    """

    def __init__(self, n, **kwargs):
        super().__init__(**kwargs)
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
            raise ValueError(f"RepeatVector: `n` must be a positive int, got {n!r}")
        self.n = int(n)

    def build(self, input_shape):
        self.compute_output_shape(input_shape)

    def call(self, inputs):
        self.compute_output_shape(inputs.shape)
        # A new axis broadcast n times (one op, as a compiled step needs): the gradient
        # sums the n copies.
        batch, features = inputs.shape
        return ops.broadcast_to(ops.expand_dims(inputs, 1), (batch, self.n, features))

    def compute_output_shape(self, input_shape):
        _check_rank(self, input_shape, 2, "(batch, features)")
        return (input_shape[0], self.n, input_shape[1])

    def get_config(self):
        return {**super().get_config(), "n": self.n}
