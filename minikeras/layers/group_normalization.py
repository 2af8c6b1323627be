"""`GroupNormalization` (statistics per sample and group of channels) and `UnitNormalization`
(each sample scaled to unit L2 norm)."""

import numpy as np

from minikeras import initializers, ops
from minikeras.layers.input_spec import InputSpec
from minikeras.layers.layer import Layer
from minikeras.layers.scale_and_center import ScaleAndCenter

__all__ = ["GroupNormalization", "UnitNormalization"]


def _check_axes_in_range(layer, axes, input_shape):
    rank = len(input_shape)
    for axis in axes:
        if isinstance(axis, bool) or not isinstance(axis, int) or not -rank <= axis < rank:
            raise ValueError(
                f"{type(layer).__name__} '{layer.name}': axis {axis} is out of range for "
                f"inputs of shape {tuple(input_shape)}"
            )


class UnitNormalization(Layer):
    """Scales each sample to unit L2 norm along `axis`: `x / sqrt(max(sum(x ** 2), 1e-12))`.

    Args:
        axis: an int or a list of ints, the axes the norm is taken over.
        **kwargs: `name`, `trainable`, `dtype`.

    Input shape:
        Any shape.

    Output shape:
        The inputs' shape; a mask passes through.

    Raises:
        TypeError: if `axis` is not an int or a list of ints.
        ValueError: for an axis out of range of the inputs.

    Example:
        >>> mk.layers.UnitNormalization()(np.array([[3.0, 4.0], [0.0, 0.0]])).numpy()
        array([[0.6, 0.8],
               [0. , 0. ]], dtype=float32)
    """

    supports_masking = True

    def __init__(self, axis=-1, **kwargs):
        super().__init__(**kwargs)
        axes = axis if isinstance(axis, (list, tuple)) else [axis]
        if any(isinstance(a, bool) or not isinstance(a, int) for a in axes) or not axes:
            raise TypeError(
                f"UnitNormalization: `axis` must be an int or a list of ints, got {axis!r}"
            )
        self.axis = list(axis) if isinstance(axis, (list, tuple)) else axis

    def call(self, inputs):
        axes = self.axis if isinstance(self.axis, list) else [self.axis]
        _check_axes_in_range(self, axes, inputs.shape)
        squared = ops.sum(ops.square(inputs), axis=tuple(axes), keepdims=True)
        return inputs / ops.sqrt(ops.maximum(squared, 1e-12))

    def compute_output_shape(self, input_shape):
        axes = self.axis if isinstance(self.axis, list) else [self.axis]
        _check_axes_in_range(self, axes, input_shape)
        return tuple(input_shape)

    def get_config(self):
        return {**super().get_config(), "axis": self.axis}


class GroupNormalization(ScaleAndCenter, Layer):
    """Normalizes each sample over groups of channels (Wu and He, 2018).

    The channels (the entries along `axis`) are split into `groups` groups of
    consecutive channels; within each sample, each group is normalized with
    the mean and variance of all its entries (every position, every channel
    in it), then each channel is scaled and shifted:

        outputs = (x - mean_group) / sqrt(var_group + epsilon) * gamma + beta

    No statistics depend on the batch, so training and inference agree.
    `groups=1` normalizes over all features (like a LayerNormalization over
    every axis but the batch); `groups=-1`, one group per channel, is
    instance normalization.

    Args:
        groups: a positive int dividing the number of channels, or -1 (one
            group per channel). Keras's default is 32.
        axis: int, the channel axis.
        epsilon: a small float added to the variance.
        center: whether to add the trained `beta`.
        scale: whether to multiply by the trained `gamma`.
        beta_initializer: initializer of `beta` (one entry per channel).
        gamma_initializer: initializer of `gamma`.
        beta_regularizer: None or a regularizer of `beta`.
        gamma_regularizer: None or a regularizer of `gamma`.
        beta_constraint: None or a constraint of `beta`.
        gamma_constraint: None or a constraint of `gamma`.
        **kwargs: `name`, `trainable`, `dtype`.

    Input shape:
        Any shape of 2 or more axes with a known channel axis.

    Output shape:
        The inputs' shape; a mask passes through.

    Raises:
        ValueError: for `groups` not a positive int or -1, an `axis` out of
            range or the batch axis, a channel axis of unknown size, or a
            number of channels that `groups` does not divide.

    Example:
        >>> layer = mk.layers.GroupNormalization(groups=2)
        >>> layer(np.array([[1.0, 3.0, 10.0, 10.0]])).numpy().round(4)
        array([[-0.9995,  0.9995,  0.    ,  0.    ]], dtype=float32)
    """

    supports_masking = True

    def __init__(
        self,
        groups=32,
        axis=-1,
        epsilon=1e-3,
        center=True,
        scale=True,
        beta_initializer="zeros",
        gamma_initializer="ones",
        beta_regularizer=None,
        gamma_regularizer=None,
        beta_constraint=None,
        gamma_constraint=None,
        **kwargs,
    ):
        super().__init__(**kwargs)
        if (
            isinstance(groups, bool)
            or not isinstance(groups, int)
            or (groups <= 0 and groups != -1)
        ):
            raise ValueError(
                f"GroupNormalization: `groups` must be a positive int, or -1 for one group per "
                f"channel, got {groups!r}"
            )
        if isinstance(axis, bool) or not isinstance(axis, int):
            raise ValueError(f"GroupNormalization: `axis` must be an int, got {axis!r}")
        self.groups = groups
        self.axis = axis
        self.epsilon = float(epsilon)
        self.center = bool(center)
        self.scale = bool(scale)
        self.beta_initializer = initializers.get(beta_initializer)
        self.gamma_initializer = initializers.get(gamma_initializer)
        self._set_penalties(beta_regularizer, gamma_regularizer, beta_constraint, gamma_constraint)

    def build(self, input_shape):
        rank = len(input_shape)
        where = f"GroupNormalization '{self.name}'"
        if not -rank <= self.axis < rank or self.axis % rank == 0:
            raise ValueError(
                f"{where}: axis {self.axis} must name a channel axis (not the batch) of inputs "
                f"of shape {tuple(input_shape)}"
            )
        channels = input_shape[self.axis]
        if channels is None:
            raise ValueError(
                f"{where} needs a known size on axis {self.axis}, got shape {tuple(input_shape)}"
            )
        groups = channels if self.groups == -1 else self.groups
        if channels % groups:
            raise ValueError(
                f"{where}: groups ({groups}) must divide the {channels} channels on axis "
                f"{self.axis}, got shape {tuple(input_shape)}"
            )
        self._groups = groups
        self._channel_axis = self.axis % rank
        self.input_spec = InputSpec(ndim=rank, axes={self._channel_axis: channels})
        self._add_scale_and_center((channels,))

    def call(self, inputs):
        shape, axis, groups = inputs.shape, self._channel_axis, self._groups
        channels = shape[axis]
        grouped_shape = (*shape[:axis], groups, channels // groups, *shape[axis + 1 :])
        # As Keras: float16 inputs are normalized in float32 (their squares overflow float16).
        dtype = np.result_type(inputs.dtype, np.float32)
        grouped = ops.reshape(ops.cast(inputs, dtype), grouped_shape)
        # Every axis but the batch and the group axis: the group's entries in one sample.
        reduced = tuple(a for a in range(1, len(grouped_shape)) if a != axis)
        mean = ops.mean(grouped, axis=reduced, keepdims=True)
        centered = grouped - mean
        variance = ops.mean(ops.square(centered), axis=reduced, keepdims=True)
        outputs = ops.reshape(centered / ops.sqrt(variance + self.epsilon), shape)
        # (A tuple, not a list: a constant a recording keeps, in `fit`'s compiled step.)
        per_channel = tuple(channels if a == axis else 1 for a in range(len(shape)))
        if self.gamma is not None:
            outputs = outputs * ops.cast(ops.reshape(self.gamma, per_channel), dtype)
        if self.beta is not None:
            outputs = outputs + ops.cast(ops.reshape(self.beta, per_channel), dtype)
        return ops.cast(outputs, self.compute_dtype)

    def compute_output_shape(self, input_shape):
        _check_axes_in_range(self, [self.axis], input_shape)
        return tuple(input_shape)

    def get_config(self):
        return {
            **super().get_config(),
            "groups": self.groups,
            "axis": self.axis,
            "epsilon": self.epsilon,
            "center": self.center,
            "scale": self.scale,
            "beta_initializer": initializers.serialize(self.beta_initializer),
            "gamma_initializer": initializers.serialize(self.gamma_initializer),
            **self._penalties_config(),
        }
