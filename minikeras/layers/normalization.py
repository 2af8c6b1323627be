"""`BatchNormalization` and `LayerNormalization`: rescale activations to zero mean, unit variance.

Both are written in `minikeras.ops` (`mean`, `var`, arithmetic), so gradients
flow to the inputs, `gamma` and `beta` through the batch statistics too.
"""

import warnings

from minikeras import config, initializers, ops
from minikeras.layers.layer import Layer
from minikeras.layers.normalization_axes import check_axis_argument, normalize_axes
from minikeras.layers.scale_and_center import ScaleAndCenter
from minikeras.ops.normalization import moving_average

__all__ = ["BatchNormalization", "LayerNormalization", "ScaleAndCenter"]  # (the last moved)


class _Normalization(ScaleAndCenter, Layer):
    """What both layers share: the normalized axes, fixed at build, checked on every call."""

    # A mask passes through, as in Keras (and BatchNormalization's batch statistics
    # leave the masked steps out).
    supports_masking = True

    # The check is on the normalized axes (below), which need not be the last one.

    def _build_axes(self, input_shape, axes):
        self._axes = normalize_axes(self, axes, input_shape)
        self._rank = len(input_shape)
        self._sizes = tuple(input_shape[a] for a in self._axes)

    def _check_inputs(self, inputs):
        shape = inputs.shape
        if len(shape) != self._rank or tuple(shape[a] for a in self._axes) != self._sizes:
            expected = ["?"] * self._rank
            for axis, size in zip(self._axes, self._sizes):
                expected[axis] = str(size)
            raise ValueError(
                f"{type(self).__name__} '{self.name}' was built for inputs of shape "
                f"({', '.join(expected)}) (sizes on axes {list(self._axes)} fixed), "
                f"got shape {shape}"
            )

    def _broadcast(self, weight):
        """Reshapes a weight over the normalized axes so that it broadcasts over the inputs."""
        shape = [1] * self._rank
        for axis, size in zip(self._axes, self._sizes):
            shape[axis] = size
        return ops.reshape(weight, tuple(shape))

    def _normalize(self, inputs, reduced, training=False, mask=None):
        """`(inputs - mean) / sqrt(variance + epsilon) * gamma + beta`, moments over `reduced`
        (over the steps `mask` keeps, if given, as Keras's masked moments)."""
        if mask is None:
            mean = ops.mean(inputs, axis=reduced, keepdims=True)
            centered = inputs - mean
            variance = ops.mean(ops.square(centered), axis=reduced, keepdims=True)
        else:
            weights = ops.cast(mask, inputs.dtype)
            while len(weights.shape) < len(inputs.shape):
                weights = ops.expand_dims(weights, -1)
            weights = weights * ops.ones_like(inputs)  # (every channel counts its steps)
            total = ops.sum(weights, axis=reduced, keepdims=True) + config.epsilon()
            mean = ops.sum(weights * inputs, axis=reduced, keepdims=True) / total
            centered = inputs - mean
            variance = ops.sum(weights * ops.square(centered), axis=reduced, keepdims=True) / total
        if training:
            self._update_moving_statistics(mean, variance)
        outputs = centered * (1.0 / ops.sqrt(variance + self.epsilon))
        if self.scale:
            outputs = outputs * self._broadcast(self.gamma)
        if self.center:
            outputs = outputs + self._broadcast(self.beta)
        return outputs

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)


class BatchNormalization(_Normalization):
    """Normalizes each feature over the batch while training, by moving statistics after.

    With `training=True` each channel (the entries along `axis`) is normalized
    with the mean and variance of the batch, and the moving statistics follow:

        output = (inputs - mean) / sqrt(variance + epsilon) * gamma + beta
        moving_mean = moving_mean * momentum + mean * (1 - momentum)
        moving_variance = moving_variance * momentum + variance * (1 - momentum)

    Otherwise (`training` false or None) the moving statistics are used and
    not changed. A frozen layer (`trainable=False`) runs in inference mode even
    with `training=True`, as in Keras: fine-tuning keeps its statistics.
    `moving_mean` and `moving_variance` are non-trainable weights: they are
    saved with the model but get no gradients; their update is an `assign`,
    which tapes do not record. `variance` is the biased batch variance, in the
    output and in the update, as in Keras 3.

    Args:
        axis: int, the channel axis (kept); the others are reduced.
        momentum: the weight of the old value in the moving statistics.
        epsilon: added to the variance before the square root.
        center: whether to add the learned offset `beta`.
        scale: whether to multiply by the learned `gamma`.
        beta_initializer: initializer of `beta`.
        gamma_initializer: initializer of `gamma`.
        moving_mean_initializer: initializer of `moving_mean`.
        moving_variance_initializer: initializer of `moving_variance`.
        beta_regularizer: optional regularizer of `beta`.
        gamma_regularizer: optional regularizer of `gamma`.
        beta_constraint: optional constraint of `beta`.
        gamma_constraint: optional constraint of `gamma`.
        **kwargs: `name`, `trainable`, `dtype`.

    Input shape:
        Any shape. `axis` (the last by default) holds the channels.

    Output shape:
        The input's shape.

    Returns:
        When called: a Tensor of the inputs' shape.

    Raises:
        ValueError: for an `axis` that is not an int or is out of range, a
            channel axis of unknown size, a `momentum` outside `[0, 1]`, a
            negative `epsilon`, or later inputs whose rank or channel count
            differ from the first.

    Example:
        >>> bn = mk.layers.BatchNormalization()
        >>> x = np.array([[0.0, 10.0], [2.0, 30.0]])
        >>> bn(x, training=True).numpy().round(2)
        array([[-1., -1.],
               [ 1.,  1.]], dtype=float32)
        >>> bn.moving_mean.numpy().round(4)  # 0.99 * 0 + 0.01 * batch mean
        array([0.01, 0.2 ], dtype=float32)
        >>> [w.name for w in bn.non_trainable_weights]
        ['moving_mean', 'moving_variance']
    """

    def __init__(
        self,
        axis=-1,
        momentum=0.99,
        epsilon=1e-3,
        center=True,
        scale=True,
        beta_initializer="zeros",
        gamma_initializer="ones",
        moving_mean_initializer="zeros",
        moving_variance_initializer="ones",
        beta_regularizer=None,
        gamma_regularizer=None,
        beta_constraint=None,
        gamma_constraint=None,
        **kwargs,
    ):
        super().__init__(**kwargs)
        self._set_penalties(beta_regularizer, gamma_regularizer, beta_constraint, gamma_constraint)
        if isinstance(axis, bool) or not isinstance(axis, int):
            raise ValueError(f"BatchNormalization: `axis` must be an int, got {axis!r}")
        if not 0.0 <= momentum <= 1.0:
            raise ValueError(f"BatchNormalization: `momentum` must be in [0, 1], got {momentum!r}")
        if not epsilon >= 0.0:
            raise ValueError(f"BatchNormalization: `epsilon` must be >= 0, got {epsilon!r}")
        self.axis = axis
        self.momentum = float(momentum)
        self.epsilon = float(epsilon)
        self.center = bool(center)
        self.scale = bool(scale)
        self.beta_initializer = initializers.get(beta_initializer)
        self.gamma_initializer = initializers.get(gamma_initializer)
        self.moving_mean_initializer = initializers.get(moving_mean_initializer)
        self.moving_variance_initializer = initializers.get(moving_variance_initializer)

    def build(self, input_shape):
        self._build_axes(input_shape, [self.axis])
        shape = self._sizes
        self._add_scale_and_center(shape)
        # Read as they are even in a mixed-precision call (as in Keras): their update
        # adds to the float32 values; `call` casts them for the inference formula.
        self.moving_mean = self.add_weight(
            "moving_mean",
            shape=shape,
            initializer=self.moving_mean_initializer,
            trainable=False,
            autocast=False,
        )
        self.moving_variance = self.add_weight(
            "moving_variance",
            shape=shape,
            initializer=self.moving_variance_initializer,
            trainable=False,
            autocast=False,
        )

    def call(self, inputs, training=None, mask=None):
        self._check_inputs(inputs)
        if training and self.trainable:
            reduced = tuple(a for a in range(self._rank) if a not in self._axes)
            return self._normalize(inputs, reduced, training=True, mask=mask)
        mean, variance = self.moving_mean, self.moving_variance
        if self.compute_dtype != mean.dtype:  # (mixed precision: as its other weights are read)
            mean, variance = (
                ops.cast(mean, self.compute_dtype),
                ops.cast(variance, self.compute_dtype),
            )
        # The op folds the statistics into one scale and one shift: the full-size work is
        # one multiply and one add.
        return ops.batch_normalization(
            inputs, mean, variance, self._axes[0],
            offset=self.beta, scale=self.gamma, epsilon=self.epsilon,
        )  # fmt: skip

    def _update_moving_statistics(self, mean, variance):
        # With ops on the batch's statistics (no gradient flows through moving_average),
        # which a compiled step records, and whose replayed result it assigns.
        for moving, batch in [(self.moving_mean, mean), (self.moving_variance, variance)]:
            batch = ops.cast(ops.reshape(batch, moving.shape), moving.dtype)
            moving.assign(moving_average(moving, batch, self.momentum))

    def get_config(self):
        return {
            **super().get_config(),
            "axis": self.axis,
            "momentum": self.momentum,
            "epsilon": self.epsilon,
            "center": self.center,
            "scale": self.scale,
            "beta_initializer": initializers.serialize(self.beta_initializer),
            "gamma_initializer": initializers.serialize(self.gamma_initializer),
            "moving_mean_initializer": initializers.serialize(self.moving_mean_initializer),
            "moving_variance_initializer": initializers.serialize(self.moving_variance_initializer),
            **self._penalties_config(),
        }


class LayerNormalization(_Normalization):
    """Normalizes each sample over `axis` (the features), with no running statistics.

        output = (inputs - mean) / sqrt(variance + epsilon) * gamma + beta

    where `mean` and `variance` are taken over `axis` for each sample
    separately, so training and inference compute the same thing. `gamma` and
    `beta` have the sizes of the normalized axes. With `rms_scaling=True`
    (deprecated in Keras 3, and kept for its models) the inputs are divided by
    their standard deviation without being centered, and there is no `beta`:

        output = inputs / sqrt(variance + epsilon) * gamma

    Args:
        axis: int or list of ints, the axes to normalize over.
        epsilon: added to the variance before the square root.
        center: whether to add the learned offset `beta`.
        scale: whether to multiply by the learned `gamma`.
        beta_initializer: initializer of `beta`.
        gamma_initializer: initializer of `gamma`.
        beta_regularizer: optional regularizer of `beta`.
        gamma_regularizer: optional regularizer of `gamma`.
        beta_constraint: optional constraint of `beta`.
        gamma_constraint: optional constraint of `gamma`.
        rms_scaling: whether to scale as above; it warns, as in Keras (whose
            `RMSNormalization` layer divides by the root mean square instead).
        **kwargs: `name`, `trainable`, `dtype`.

    Input shape:
        Any shape. `axis` (the last by default) is normalized.

    Output shape:
        The input's shape.

    Returns:
        When called: a Tensor of the inputs' shape.

    Raises:
        ValueError: for an `axis` that is not an int or list of ints, is out
            of range or has an unknown size, a negative `epsilon`, or later
            inputs whose rank or normalized sizes differ from the first.

    Example:
        >>> ln = mk.layers.LayerNormalization(epsilon=0.0)
        >>> ln(np.array([[1.0, 3.0], [10.0, 20.0]])).numpy()
        array([[-1.,  1.],
               [-1.,  1.]], dtype=float32)
        >>> ln.gamma.shape, ln.beta.shape
        ((2,), (2,))
    """

    def __init__(
        self,
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
        rms_scaling=False,
        **kwargs,
    ):
        super().__init__(**kwargs)
        self._set_penalties(beta_regularizer, gamma_regularizer, beta_constraint, gamma_constraint)
        check_axis_argument("LayerNormalization", axis)
        self.rms_scaling = bool(rms_scaling)
        if self.rms_scaling:
            warnings.warn(
                "LayerNormalization: rms_scaling=True is deprecated in Keras 3; it divides the "
                "inputs by their standard deviation, not by their root mean square",
                stacklevel=2,
            )
        if not epsilon >= 0.0:
            raise ValueError(f"LayerNormalization: `epsilon` must be >= 0, got {epsilon!r}")
        self.axis = list(axis) if isinstance(axis, (list, tuple)) else axis
        self.epsilon = float(epsilon)
        self.center = bool(center)
        self.scale = bool(scale)
        self.beta_initializer = initializers.get(beta_initializer)
        self.gamma_initializer = initializers.get(gamma_initializer)

    def build(self, input_shape):
        axes = self.axis if isinstance(self.axis, list) else [self.axis]
        self._build_axes(input_shape, axes)
        if self.rms_scaling:  # always gamma, never beta, as Keras
            self._add_scale_and_center(self._sizes, scale=True, center=False)
        else:
            self._add_scale_and_center(self._sizes)

    def call(self, inputs):
        self._check_inputs(inputs)
        if self.rms_scaling:
            variance = ops.var(inputs, axis=self._axes, keepdims=True)
            return inputs * (1.0 / ops.sqrt(variance + self.epsilon)) * self._broadcast(self.gamma)
        # The op's formula, as Keras's layer: x * inv + (beta - mean * inv).
        return ops.layer_normalization(
            inputs, self.gamma, self.beta, axis=list(self._axes), epsilon=self.epsilon
        )

    def get_config(self):
        return {
            **super().get_config(),
            "axis": self.axis,
            "epsilon": self.epsilon,
            "center": self.center,
            "scale": self.scale,
            "rms_scaling": self.rms_scaling,
            "beta_initializer": initializers.serialize(self.beta_initializer),
            "gamma_initializer": initializers.serialize(self.gamma_initializer),
            **self._penalties_config(),
        }
