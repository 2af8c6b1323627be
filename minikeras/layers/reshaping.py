"""`Flatten` and `Reshape`: change the shape of each sample, keep the batch axis."""

import math

import numpy as np

from minikeras import ops
from minikeras.layers.layer import Layer
from minikeras.layers.reshaping_nd import _Cropping, _ZeroPadding

__all__ = [
    "Cropping2D",
    "Flatten",
    "Permute",
    "RepeatVector",
    "Reshape",
    "UpSampling2D",
    "ZeroPadding2D",
]


class Flatten(Layer):
    """Flattens each sample: `(batch, d1, d2, ...)` becomes `(batch, d1 * d2 * ...)`.

    Args:
        **kwargs: `name`, `trainable`, `dtype`.

    Input shape:
        `(batch, d1, d2, ...)`.

    Output shape:
        `(batch, d1 * d2 * ...)`; `(batch, 1)` for 1-D inputs.

    Example:
        >>> mk.layers.Flatten()(np.zeros((2, 3, 4))).shape
        (2, 12)
    """

    def call(self, inputs):
        # The size is written out: with 0 samples, -1 would be ambiguous.
        return ops.reshape(inputs, (inputs.shape[0], math.prod(inputs.shape[1:])))

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
        if any(s is None for s in rest):
            return (input_shape[0], *self.target_shape)
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


def _spatial_axes(layer_class, data_format):
    """The (rows, cols) axes of 4-D images in `data_format` (None means channels_last)."""
    if data_format in (None, "channels_last"):
        return "channels_last", (1, 2)
    if data_format == "channels_first":
        return "channels_first", (2, 3)
    raise ValueError(
        f"{layer_class}: `data_format` must be 'channels_last' or 'channels_first', "
        f"got {data_format!r}"
    )


def _int_pair(layer_class, argument, value, allow_zero):
    """An int or a pair of ints as a pair, each checked (positive, or >= 0)."""
    pair = (value, value) if isinstance(value, int) else value
    try:
        pair = tuple(pair)
    except TypeError:
        pair = ()
    low = 0 if allow_zero else 1
    if len(pair) != 2 or any(
        isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < low for v in pair
    ):
        kind = "non-negative" if allow_zero else "positive"
        raise ValueError(
            f"{layer_class}: `{argument}` must be a {kind} int or a pair of them, got {value!r}"
        )
    return int(pair[0]), int(pair[1])


def _check_rank(layer, input_shape, rank, layout):
    if len(input_shape) != rank:
        raise ValueError(
            f"{type(layer).__name__} '{layer.name}' expects {rank}-D inputs {layout}, "
            f"got shape {tuple(input_shape)}"
        )


class _Images(Layer):
    """A layer on 4-D images: checks the rank on every call, and has a data_format."""

    def build(self, input_shape):
        self.compute_output_shape(input_shape)

    def _check_images(self, input_shape):
        layout = (
            "(batch, rows, cols, channels)"
            if self.data_format == "channels_last"
            else "(batch, channels, rows, cols)"
        )
        _check_rank(self, input_shape, 4, layout)


class UpSampling2D(_Images):
    """Repeats the rows and columns of images `size` times (nearest), or interpolates them.

    With `interpolation="bilinear"` the output samples the image at the
    half-pixel centres (`(i + 0.5) / size - 0.5`), edges clamped, as Keras's
    image resize does.

    Args:
        size: int or `(rows, cols)` pair of positive ints, the upsampling factors.
        data_format: `"channels_last"` (default) or `"channels_first"`.
        interpolation: `"nearest"` or `"bilinear"`.
        **kwargs: `name`, `trainable`, `dtype`.

    Input shape:
        `(batch, rows, cols, channels)` (`(batch, channels, rows, cols)` with
        `data_format="channels_first"`).

    Output shape:
        `(batch, rows * size[0], cols * size[1], channels)` (channels first likewise).

    Returns:
        When called on `(batch, rows, cols, channels)`: a Tensor of shape
        `(batch, rows * size[0], cols * size[1], channels)`.

    Raises:
        ValueError: for a bad `size`, `data_format` or `interpolation`, or
            inputs that are not 4-D.

    Example:
        >>> x = np.arange(4.0).reshape((1, 2, 2, 1))
        >>> mk.layers.UpSampling2D(size=2)(x).numpy()[0, :, :, 0]
        array([[0., 0., 1., 1.],
               [0., 0., 1., 1.],
               [2., 2., 3., 3.],
               [2., 2., 3., 3.]], dtype=float32)
    """

    def __init__(self, size=(2, 2), data_format=None, interpolation="nearest", **kwargs):
        super().__init__(**kwargs)
        self.size = _int_pair("UpSampling2D", "size", size, allow_zero=False)
        self.data_format, self._axes = _spatial_axes("UpSampling2D", data_format)
        if interpolation not in ("nearest", "bilinear"):
            raise ValueError(
                "UpSampling2D: `interpolation` must be 'nearest' or 'bilinear', "
                f"got {interpolation!r}"
            )
        self.interpolation = interpolation

    def call(self, inputs):
        output_shape = self.compute_output_shape(inputs.shape)
        if self.interpolation == "bilinear":
            return self._bilinear(inputs)
        # Nearest: give each row and column a new axis of length 1, broadcast it to
        # the factor by multiplying with ones, and merge it back.
        expanded, ones = list(inputs.shape), [1] * (inputs.ndim + 2)
        for offset, (axis, factor) in enumerate(zip(self._axes, self.size)):
            expanded.insert(axis + offset + 1, 1)
            ones[axis + offset + 1] = factor
        repeated = ops.reshape(inputs, tuple(expanded)) * np.ones(ones, dtype=inputs.dtype)
        return ops.reshape(repeated, output_shape)

    def _bilinear(self, inputs):
        rows, cols = (inputs.shape[a] for a in self._axes)
        row_matrix = _linear_weights(rows, self.size[0], inputs.dtype)
        col_matrix = _linear_weights(cols, self.size[1], inputs.dtype)
        if self.data_format == "channels_first":
            return ops.matmul(row_matrix, ops.matmul(inputs, col_matrix.T))
        batch, _, _, channels = inputs.shape
        # Rows: (out_rows, rows) @ (batch, rows, cols * channels); then columns the same way.
        out = ops.matmul(row_matrix, ops.reshape(inputs, (batch, rows, cols * channels)))
        out = ops.reshape(out, (batch * rows * self.size[0], cols, channels))
        out = ops.matmul(col_matrix, out)
        return ops.reshape(out, (batch, rows * self.size[0], cols * self.size[1], channels))

    def compute_output_shape(self, input_shape):
        self._check_images(input_shape)
        output = list(input_shape)
        for axis, factor in zip(self._axes, self.size):
            output[axis] = None if output[axis] is None else output[axis] * factor
        return tuple(output)

    def get_config(self):
        return {
            **super().get_config(),
            "size": self.size,
            "data_format": self.data_format,
            "interpolation": self.interpolation,
        }


def _linear_weights(size, factor, dtype):
    """The `(size * factor, size)` matrix of linear interpolation at half-pixel centres."""
    out = np.arange(size * factor)
    position = np.clip((out + 0.5) / factor - 0.5, 0, size - 1)
    low = np.floor(position).astype(int)
    high = np.minimum(low + 1, size - 1)
    fraction = position - low
    weights = np.zeros((size * factor, size))
    np.add.at(weights, (out, low), 1 - fraction)
    np.add.at(weights, (out, high), fraction)
    return weights.astype(dtype)


class ZeroPadding2D(_ZeroPadding):
    """Adds rows and columns of zeros around images.

    Args:
        padding: `n` (all four sides), `(rows, cols)` (symmetric), or
            `((top, bottom), (left, right))`; non-negative ints.
        data_format: `"channels_last"` (default) or `"channels_first"`.
        **kwargs: `name`, `trainable`, `dtype`.

    Input shape:
        `(batch, rows, cols, channels)` (`(batch, channels, rows, cols)` with
        `data_format="channels_first"`).

    Output shape:
        `(batch, top + rows + bottom, left + cols + right, channels)` (channels first
        likewise).

    Returns:
        When called on `(batch, rows, cols, channels)`: a Tensor of shape
        `(batch, top + rows + bottom, left + cols + right, channels)`.

    Raises:
        ValueError: for a bad `padding` or `data_format`, or inputs that are
            not 4-D.

    Example:
        >>> mk.layers.ZeroPadding2D(1)(np.ones((1, 1, 2, 1))).numpy()[0, :, :, 0]
        array([[0., 0., 0., 0.],
               [0., 1., 1., 0.],
               [0., 0., 0., 0.]], dtype=float32)
    """

    rank = 2

    def __init__(self, padding=(1, 1), data_format=None, **kwargs):
        super().__init__(padding, data_format, **kwargs)


class Cropping2D(_Cropping):
    """Removes rows and columns from the borders of images.

    Args:
        cropping: `n` (all four sides), `(rows, cols)` (symmetric), or
            `((top, bottom), (left, right))`; non-negative ints.
        data_format: `"channels_last"` (default) or `"channels_first"`.
        **kwargs: `name`, `trainable`, `dtype`.

    Input shape:
        `(batch, rows, cols, channels)` (`(batch, channels, rows, cols)` with
        `data_format="channels_first"`).

    Output shape:
        `(batch, rows - top - bottom, cols - left - right, channels)` (channels first
        likewise).

    Returns:
        When called on `(batch, rows, cols, channels)`: a Tensor of shape
        `(batch, rows - top - bottom, cols - left - right, channels)`.

    Raises:
        ValueError: for a bad `cropping` or `data_format`, inputs that are not
            4-D, or cropping that leaves no rows or columns.

    Example:
        >>> x = np.arange(16.0).reshape((1, 4, 4, 1))
        >>> mk.layers.Cropping2D(((1, 0), (1, 2)))(x).numpy()[0, :, :, 0]
        array([[ 5.],
               [ 9.],
               [13.]], dtype=float32)
    """

    rank = 2

    def __init__(self, cropping=((0, 0), (0, 0)), data_format=None, **kwargs):
        super().__init__(cropping, data_format, **kwargs)


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
        # Broadcasting a new axis against ones: the gradient sums the n copies.
        return ops.expand_dims(inputs, 1) * np.ones((1, self.n, 1), dtype=inputs.dtype)

    def compute_output_shape(self, input_shape):
        _check_rank(self, input_shape, 2, "(batch, features)")
        return (input_shape[0], self.n, input_shape[1])

    def get_config(self):
        return {**super().get_config(), "n": self.n}
