"""Preprocessing of numbers: `Rescaling` and `Normalization`."""

import itertools
import math

import numpy as np

from minikeras import config, ops
from minikeras.engine.tensor import Tensor
from minikeras.layers.layer import Layer

__all__ = ["Normalization", "Rescaling", "batches_of"]


def _as_array(data):
    return data.numpy() if isinstance(data, Tensor) else np.asarray(data)


def batches_of(layer_class, data):
    """The batches of `data`: one for an array, each element for any other iterable."""
    if isinstance(data, (np.ndarray, Tensor)):
        return [_as_array(data)]
    if isinstance(data, (str, bytes)) or not hasattr(data, "__iter__"):
        raise TypeError(
            f"{layer_class}.adapt: `data` must be an array or an iterable of batches, "
            f"got {type(data).__name__}"
        )
    iterator = iter(data)
    first = next(iterator, None)
    if first is None:
        raise ValueError(f"{layer_class}.adapt: `data` holds no batches")
    # A dataset of (x, y) pairs adapts on x, as Keras does.
    unpack = isinstance(first, tuple)
    return (_as_array(b[0] if unpack else b) for b in itertools.chain([first], iterator))


class Rescaling(Layer):
    """Multiplies inputs by `scale` and adds `offset`: `inputs * scale + offset`.

    Integer inputs (such as uint8 pixels) become floats of the layer's dtype.

    Args:
        scale: a number, or an array broadcast against the inputs (per channel).
        offset: a number or an array, added after scaling (default 0).
        **kwargs: `name`, `trainable`, `dtype`.

    Input shape:
        Any shape.

    Output shape:
        The inputs' shape.

    Example:
        >>> mk.layers.Rescaling(1 / 127.5, offset=-1)(np.array([[0, 255]], dtype="uint8")).numpy()
        array([[-1.,  1.]], dtype=float32)
    """

    supports_masking = True

    def __init__(self, scale, offset=0.0, **kwargs):
        super().__init__(**kwargs)
        for argument, value in (("scale", scale), ("offset", offset)):
            array = np.asarray(value)
            if array.dtype.kind not in "biuf":
                raise TypeError(
                    f"Rescaling: `{argument}` must be a number or an array of numbers, "
                    f"got {value!r}"
                )
        self.scale = scale
        self.offset = offset

    def call(self, inputs):
        dtype = self.compute_dtype  # (float16 under mixed_float16, as Keras)
        inputs = ops.cast(inputs, dtype)
        scale = np.asarray(self.scale, dtype=dtype)
        offset = np.asarray(self.offset, dtype=dtype)
        return ops.add(ops.multiply(inputs, scale), offset)

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        def plain(value):
            return np.asarray(value).tolist() if np.ndim(value) else float(value)

        return {**super().get_config(), "scale": plain(self.scale), "offset": plain(self.offset)}


class Normalization(Layer):
    """Shifts and scales inputs to zero mean and unit variance: `(x - mean) / sqrt(var)`.

    The mean and variance are given, or learnt from data by `adapt(data)`,
    one per position along `axis` (the other axes are averaged over). The
    divisor is `max(sqrt(variance), 1e-7)`, as in Keras. With `invert=True`
    the layer undoes the normalization: `mean + x * sqrt(variance)`.

    Args:
        axis: the axis or axes that keep their own statistics (default -1,
            the features); None for one mean and variance over everything.
        mean: the mean to use, broadcast against the kept axes; None to
            learn it with `adapt`.
        variance: the variance, given with `mean`.
        invert: whether to apply the inverse transformation.
        **kwargs: `name`, `trainable`, `dtype`.

    Input shape:
        Any shape whose kept axes have known sizes.

    Output shape:
        The inputs' shape.

    Raises:
        ValueError: if only one of `mean` and `variance` is given, or their
            shapes differ or have more axes than `axis`.

    Example:
        >>> layer = mk.layers.Normalization()
        >>> layer.adapt(np.array([[0.0, 10.0], [2.0, 30.0]]))
        >>> layer(np.array([[1.0, 20.0]])).numpy()
        array([[0., 0.]], dtype=float32)
        >>> mk.layers.Normalization(mean=2.0, variance=4.0)(np.array([6.0])).numpy()
        array([2.], dtype=float32)
    """

    supports_masking = True

    def __init__(self, axis=-1, mean=None, variance=None, invert=False, **kwargs):
        super().__init__(**kwargs)
        if axis is None:
            axis = ()
        elif isinstance(axis, (int, np.integer)) and not isinstance(axis, bool):
            axis = (int(axis),)
        else:
            axis = tuple(int(a) for a in axis)
        self.axis = axis
        if (mean is None) != (variance is None):
            raise ValueError(
                f"Normalization: give both `mean` and `variance` or neither, got "
                f"mean={mean!r} and variance={variance!r}"
            )
        if mean is not None:
            if np.shape(mean) != np.shape(variance):
                raise ValueError(
                    f"Normalization: `mean` and `variance` must have the same shape, got "
                    f"{np.shape(mean)} and {np.shape(variance)}"
                )
            if np.ndim(mean) > len(self.axis):
                raise ValueError(
                    f"Normalization: `mean` of shape {np.shape(mean)} has more axes than "
                    f"axis={self.axis}"
                )
        self.input_mean = mean
        self.input_variance = variance
        self.invert = bool(invert)

    def build(self, input_shape):
        rank = len(input_shape)
        if any(not -rank <= a < rank for a in self.axis):
            raise ValueError(
                f"Normalization '{self.name}': axis {self.axis} is out of range for inputs "
                f"of shape {tuple(input_shape)}"
            )
        self._keep_axis = tuple(sorted(a % rank for a in self.axis))
        if any(input_shape[a] is None for a in self._keep_axis):
            raise ValueError(
                f"Normalization '{self.name}': the kept axes {self._keep_axis} must have known "
                f"sizes, got inputs of shape {tuple(input_shape)}"
            )
        self._reduce_axis = tuple(a for a in range(rank) if a not in self._keep_axis)
        self._broadcast_shape = tuple(
            input_shape[a] if a in self._keep_axis else 1 for a in range(rank)
        )
        kept = tuple(input_shape[a] for a in self._keep_axis)
        if self.input_mean is None:
            self.adapt_mean = self.add_weight(
                name="mean", shape=kept, initializer="zeros", trainable=False
            )
            self.adapt_variance = self.add_weight(
                name="variance", shape=kept, initializer="ones", trainable=False
            )
            # Keras 3 keeps an int32 `count` (0, never updated) for older files' sake; it is
            # here too so that the weights, and .keras files, line up with Keras's.
            self.count = self.add_weight(
                name="count", shape=(), dtype="int32", initializer="zeros", trainable=False
            )
        else:
            # Trailing axes of the given statistics line up with the last kept axes.
            expanded = [1] * rank
            for i, size in enumerate(reversed(np.shape(self.input_mean))):
                expanded[self._keep_axis[-1 - i]] = size
            shape = self._broadcast_shape
            mean = np.broadcast_to(np.reshape(self.input_mean, expanded), shape)
            variance = np.broadcast_to(np.reshape(self.input_variance, expanded), shape)
            self.add_constant("mean", mean.astype(self.dtype))
            self.add_constant("variance", variance.astype(self.dtype))

    def adapt(self, data):
        """Sets the mean and variance to those of `data`, over the axes not in `axis`.

        Args:
            data: an array, or an iterable of batches (arrays); the statistics
                of all batches together are computed.

        Returns:
            None.

        Raises:
            ValueError: if the layer was given `mean` and `variance`, or the
                data's kept axes do not match the layer's.

        Example:
            >>> layer = mk.layers.Normalization(axis=None)
            >>> layer.adapt([np.array([1.0, 3.0]), np.array([5.0, 7.0])])
            >>> layer(np.array([4.0])).numpy().round(4)
            array([0.], dtype=float32)
        """
        if self.input_mean is not None:
            raise ValueError(
                f"Normalization '{self.name}' was given `mean` and `variance`; it cannot adapt"
            )
        total_mean = total_var = None
        count = 0
        for batch in batches_of("Normalization", data):
            batch = batch.astype(np.float64)
            if not self.built:
                self.build((None, *batch.shape[1:]))
            self._check_kept_axes(batch.shape)
            size = math.prod(batch.shape[a] for a in self._reduce_axis)
            if size == 0:
                continue
            mean = batch.mean(axis=self._reduce_axis)
            var = batch.var(axis=self._reduce_axis)
            if total_mean is None:
                total_mean, total_var, count = mean, var, size
                continue
            # Chan et al.'s pairwise merge of two (mean, variance, count) summaries.
            new_count = count + size
            delta = mean - total_mean
            merged_mean = total_mean + delta * size / new_count
            total_var = (count * total_var + size * var) / new_count + delta**2 * (
                count * size / new_count**2
            )
            total_mean, count = merged_mean, new_count
        if total_mean is None:
            raise ValueError(f"Normalization '{self.name}'.adapt: `data` holds no samples")
        self.adapt_mean.assign(total_mean)
        self.adapt_variance.assign(total_var)

    def _check_kept_axes(self, shape):
        if len(shape) != len(self._broadcast_shape) or any(
            shape[a] != self._broadcast_shape[a] for a in self._keep_axis
        ):
            raise ValueError(
                f"Normalization '{self.name}' was built for inputs of shape "
                f"{self._broadcast_shape} on its kept axes {self._keep_axis}, got data of "
                f"shape {tuple(shape)}"
            )

    def call(self, inputs):
        dtype = self.compute_dtype  # (float16 under mixed_float16: Keras casts the statistics)
        inputs = ops.cast(inputs, dtype)
        if self.input_mean is None:
            mean = ops.reshape(self.adapt_mean, self._broadcast_shape)
            variance = ops.reshape(self.adapt_variance, self._broadcast_shape)
        else:
            mean, variance = self.mean, self.variance
        mean, variance = ops.cast(mean, dtype), ops.cast(variance, dtype)
        std = ops.maximum(ops.sqrt(variance), config.epsilon())
        if self.invert:
            return ops.add(mean, ops.multiply(inputs, std))
        return ops.divide(ops.subtract(inputs, mean), std)

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        def plain(value):
            return None if value is None else np.asarray(value).tolist()

        return {
            **super().get_config(),
            "axis": self.axis,
            "mean": plain(self.input_mean),
            "variance": plain(self.input_variance),
            "invert": self.invert,
        }
