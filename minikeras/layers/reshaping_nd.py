"""Padding, cropping and upsampling of sequences and volumes: the 1-D and 3-D forms.

`_ZeroPadding`, `_Cropping` and `_UpSampling` are written for any rank;
`ZeroPadding2D`, `Cropping2D` and `UpSampling2D` (in `reshaping_2d.py`) are
their rank-2 forms.

`ZeroPadding1D` / `Cropping1D` / `UpSampling1D` work on `(batch, steps,
features)`; the 3-D forms on `(batch, depth, height, width, channels)` (or
channels first). All follow Keras 3.
"""

import numpy as np

from minikeras import ops
from minikeras.config import standardize_data_format
from minikeras.layers.layer import Layer

__all__ = [
    "Cropping1D",
    "Cropping3D",
    "UpSampling1D",
    "UpSampling3D",
    "ZeroPadding1D",
    "ZeroPadding3D",
]


def _ints(layer_class, argument, value, count, low):
    """An int (repeated) or `count` ints, each >= `low`, as a tuple."""
    values = (value,) * count if isinstance(value, (int, np.integer)) else value
    try:
        values = tuple(values)
    except TypeError:
        values = ()
    if len(values) != count or any(
        isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < low for v in values
    ):
        kind = "non-negative" if low == 0 else "positive"
        raise ValueError(
            f"{layer_class}: `{argument}` must be a {kind} int or {count} of them, got {value!r}"
        )
    return tuple(int(v) for v in values)


def _pairs(layer_class, argument, value, rank):
    """`n`, `rank` ints (symmetric), or `rank` pairs `(before, after)`, as pairs."""
    if rank == 1:
        if isinstance(value, (int, np.integer)):
            return ((int(value), int(value)),)
        return (_ints(layer_class, argument, value, 2, 0),)
    if isinstance(value, (list, tuple)) and value and isinstance(value[0], (list, tuple)):
        if len(value) != rank:
            raise ValueError(
                f"{layer_class}: `{argument}` must hold {rank} (before, after) pairs, got {value!r}"
            )
        return tuple(_ints(layer_class, argument, pair, 2, 0) for pair in value)
    return tuple((n, n) for n in _ints(layer_class, argument, value, rank, 0))


def _axes(layer_class, data_format, rank):
    """The layout and the spatial axes of the inputs in `data_format` (None: the setting)."""
    data_format = standardize_data_format(data_format, layer_class)
    if data_format == "channels_last":
        return "channels_last", tuple(range(1, rank + 1))
    return "channels_first", tuple(range(2, rank + 2))


class _Spatial(Layer):
    """The shared part: a rank, a layout, the rank check on every call."""

    rank = None
    # Keras's Cropping1D and UpSampling1D take no data_format (steps are axis 1): given
    # one, it reaches Layer's **kwargs, which refuses it with a ValueError, as Keras does.
    takes_data_format = True

    def _setup(self, data_format):
        if not self.takes_data_format:  # steps are axis 1, whatever the global setting
            data_format = "channels_last"
        self.data_format, self._axes = _axes(type(self).__name__, data_format, self.rank)

    def build(self, input_shape):
        self.compute_output_shape(input_shape)

    def _check(self, input_shape):
        if len(input_shape) != self.rank + 2:
            spatial = {1: "steps", 2: "rows, cols", 3: "depth, height, width"}[self.rank]
            channels = "features" if self.rank == 1 else "channels"
            if self.data_format == "channels_last":
                layout = f"(batch, {spatial}, {channels})"
            else:
                layout = f"(batch, {channels}, {spatial})"
            raise ValueError(
                f"{type(self).__name__} '{self.name}' expects {self.rank + 2}-D inputs "
                f"{layout}, got shape {tuple(input_shape)}"
            )

    def get_config(self):
        config = super().get_config()
        if self.takes_data_format:
            config["data_format"] = self.data_format
        return config


class _ZeroPadding(_Spatial):
    def __init__(self, padding, data_format=None, /, **kwargs):
        super().__init__(**kwargs)
        self.padding = _pairs(type(self).__name__, "padding", padding, self.rank)
        self._setup(data_format)

    def call(self, inputs):
        self.compute_output_shape(inputs.shape)
        widths = [(0, 0)] * inputs.ndim
        for axis, pair in zip(self._axes, self.padding):
            widths[axis] = pair
        return ops.pad(inputs, tuple(widths))

    def compute_output_shape(self, input_shape):
        self._check(input_shape)
        output = list(input_shape)
        for axis, (before, after) in zip(self._axes, self.padding):
            output[axis] = None if output[axis] is None else output[axis] + before + after
        return tuple(output)

    def get_config(self):
        padding = self.padding[0] if self.rank == 1 else self.padding
        return {**super().get_config(), "padding": padding}


class _Cropping(_Spatial):
    def __init__(self, cropping, data_format=None, /, **kwargs):
        super().__init__(**kwargs)  # (a 1D layer's data_format is in kwargs: refused)
        self.cropping = _pairs(type(self).__name__, "cropping", cropping, self.rank)
        self._setup(data_format)

    def call(self, inputs):
        self.compute_output_shape(inputs.shape)
        index = [slice(None)] * inputs.ndim
        for axis, (before, after) in zip(self._axes, self.cropping):
            index[axis] = slice(before, inputs.shape[axis] - after)
        return inputs[tuple(index)]

    def compute_output_shape(self, input_shape):
        self._check(input_shape)
        output = list(input_shape)
        for axis, (before, after) in zip(self._axes, self.cropping):
            if output[axis] is None:
                continue
            if before + after >= output[axis]:
                raise ValueError(
                    f"{type(self).__name__} '{self.name}': cropping {self.cropping} leaves "
                    f"nothing of inputs of shape {tuple(input_shape)} (axis {axis} has "
                    f"{output[axis]})"
                )
            output[axis] -= before + after
        return tuple(output)

    def get_config(self):
        cropping = self.cropping[0] if self.rank == 1 else self.cropping
        return {**super().get_config(), "cropping": cropping}


class _UpSampling(_Spatial):
    def __init__(self, size, data_format=None, /, **kwargs):
        super().__init__(**kwargs)  # (a 1D layer's data_format is in kwargs: refused)
        self.size = _ints(type(self).__name__, "size", size, self.rank, 1)
        self._setup(data_format)

    def call(self, inputs):
        output_shape = self.compute_output_shape(inputs.shape)
        # Each spatial axis gets a new axis of length 1 after it, broadcast to the factor,
        # then merged back (nearest neighbour, as Keras).
        expanded, repeated = list(inputs.shape), list(inputs.shape)
        for offset, (axis, factor) in enumerate(zip(self._axes, self.size)):
            expanded.insert(axis + offset + 1, 1)
            repeated.insert(axis + offset + 1, factor)
        repeated = ops.broadcast_to(ops.reshape(inputs, tuple(expanded)), tuple(repeated))
        return ops.reshape(repeated, output_shape)

    def compute_output_shape(self, input_shape):
        self._check(input_shape)
        output = list(input_shape)
        for axis, factor in zip(self._axes, self.size):
            output[axis] = None if output[axis] is None else output[axis] * factor
        return tuple(output)

    def get_config(self):
        size = self.size[0] if self.rank == 1 else self.size
        return {**super().get_config(), "size": size}


class ZeroPadding1D(_ZeroPadding):
    """Adds zero steps at the start and the end of sequences.

    Args:
        padding: `n` (both ends) or `(start, end)`; non-negative ints.
        data_format: `"channels_last"` (`(batch, steps, features)`) or
            `"channels_first"` (`(batch, features, steps)`); None (the default)
            means `mk.config.image_data_format()` when the layer is made.
        **kwargs: `name`, `trainable`, `dtype`.

    Input shape:
        `(batch, steps, features)`, or `(batch, features, steps)` channels first.

    Output shape:
        `(batch, start + steps + end, features)` (or channels first).

    Returns:
        When called: the padded sequences, as a Tensor.

    Raises:
        ValueError: for a bad `padding` or `data_format`, or inputs that are not 3-D.

    Example:
        >>> mk.layers.ZeroPadding1D((1, 2))(np.ones((1, 2, 1))).numpy().ravel()
        array([0., 1., 1., 0., 0.], dtype=float32)
        >>> mk.layers.ZeroPadding1D(1, data_format="channels_first")(np.ones((1, 3, 2))).shape
        (1, 3, 4)
    """

    rank = 1

    def __init__(self, padding=1, data_format=None, **kwargs):
        super().__init__(padding, data_format, **kwargs)


class ZeroPadding3D(_ZeroPadding):
    """Adds zeros around volumes, along depth, height and width.

    Args:
        padding: `n` (every side), three ints (symmetric per axis), or three
            `(before, after)` pairs; non-negative ints.
        data_format: `"channels_last"` or `"channels_first"`; None (the default)
            means `mk.config.image_data_format()` when the layer is made.
        **kwargs: `name`, `trainable`, `dtype`.

    Input shape:
        `(batch, depth, height, width, channels)` (or channels first).

    Output shape:
        Each spatial size plus its two paddings.

    Returns:
        When called: the padded volumes, as a Tensor.

    Raises:
        ValueError: for a bad `padding` or `data_format`, or inputs that are not 5-D.

    Example:
        >>> mk.layers.ZeroPadding3D(1)(np.ones((1, 2, 2, 2, 3))).shape
        (1, 4, 4, 4, 3)
    """

    rank = 3

    def __init__(self, padding=((1, 1), (1, 1), (1, 1)), data_format=None, **kwargs):
        super().__init__(padding, data_format, **kwargs)


class Cropping1D(_Cropping):
    """Removes steps from the start and the end of sequences.

    Args:
        cropping: `n` (both ends) or `(start, end)`; non-negative ints.
        **kwargs: `name`, `trainable`, `dtype`.

    Input shape:
        `(batch, steps, features)`.

    Output shape:
        `(batch, steps - start - end, features)`.

    Returns:
        When called: the cropped sequences, as a Tensor.

    Raises:
        ValueError: for a bad `cropping`, inputs that are not 3-D, cropping
            that leaves no step, or a `data_format` argument (steps are axis
            1; Keras 3 refuses it too, as an unknown argument).

    Example:
        >>> mk.layers.Cropping1D((1, 2))(np.arange(5.0).reshape(1, 5, 1)).numpy().ravel()
        array([1., 2.], dtype=float32)
    """

    rank = 1
    takes_data_format = False

    def __init__(self, cropping=(1, 1), **kwargs):
        super().__init__(cropping, **kwargs)


class Cropping3D(_Cropping):
    """Removes slices from the borders of volumes, along depth, height and width.

    Args:
        cropping: `n` (every side), three ints (symmetric per axis), or three
            `(before, after)` pairs; non-negative ints.
        data_format: `"channels_last"` or `"channels_first"`; None (the default)
            means `mk.config.image_data_format()` when the layer is made.
        **kwargs: `name`, `trainable`, `dtype`.

    Input shape:
        `(batch, depth, height, width, channels)` (or channels first).

    Output shape:
        Each spatial size minus its two croppings.

    Returns:
        When called: the cropped volumes, as a Tensor.

    Raises:
        ValueError: for a bad `cropping` or `data_format`, inputs that are not
            5-D, or cropping that leaves nothing.

    Example:
        >>> mk.layers.Cropping3D(((1, 0), (0, 1), (1, 1)))(np.ones((1, 3, 3, 4, 2))).shape
        (1, 2, 2, 2, 2)
    """

    rank = 3

    def __init__(self, cropping=((1, 1), (1, 1), (1, 1)), data_format=None, **kwargs):
        super().__init__(cropping, data_format, **kwargs)


class UpSampling1D(_UpSampling):
    """Repeats each step of sequences `size` times.

    Args:
        size: positive int, the upsampling factor.
        **kwargs: `name`, `trainable`, `dtype`.

    Input shape:
        `(batch, steps, features)`.

    Output shape:
        `(batch, steps * size, features)`.

    Returns:
        When called: the upsampled sequences, as a Tensor.

    Raises:
        ValueError: for a bad `size`, inputs that are not 3-D, or a
            `data_format` argument (steps are axis 1; Keras 3 refuses it too,
            as an unknown argument).

    Example:
        >>> mk.layers.UpSampling1D(3)(np.array([[[1.0], [2.0]]])).numpy().ravel()
        array([1., 1., 1., 2., 2., 2.], dtype=float32)
    """

    rank = 1
    takes_data_format = False

    def __init__(self, size=2, **kwargs):
        super().__init__(size, **kwargs)


class UpSampling3D(_UpSampling):
    """Repeats the voxels of volumes `size` times along depth, height and width.

    Args:
        size: an int or three positive ints, the factors.
        data_format: `"channels_last"` or `"channels_first"`; None (the default)
            means `mk.config.image_data_format()` when the layer is made.
        **kwargs: `name`, `trainable`, `dtype`.

    Input shape:
        `(batch, depth, height, width, channels)` (or channels first).

    Output shape:
        Each spatial size times its factor.

    Returns:
        When called: the upsampled volumes, as a Tensor.

    Raises:
        ValueError: for a bad `size` or `data_format`, or inputs that are not 5-D.

    Example:
        >>> mk.layers.UpSampling3D((1, 2, 3))(np.ones((1, 2, 2, 2, 1))).shape
        (1, 2, 4, 6, 1)
    """

    rank = 3

    def __init__(self, size=(2, 2, 2), data_format=None, **kwargs):
        super().__init__(size, data_format, **kwargs)
