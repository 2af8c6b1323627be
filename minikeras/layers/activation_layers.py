"""Activation layers with arguments: ReLU, LeakyReLU, PReLU (a trained slope), ELU, Softmax."""

import numbers
import warnings

import numpy as np

from minikeras import activations, constraints, initializers, ops, regularizers
from minikeras.engine.tensor import Tensor
from minikeras.layers.input_spec import InputSpec
from minikeras.layers.layer import Layer

__all__ = ["ELU", "LeakyReLU", "PReLU", "ReLU", "Softmax"]


def _number(layer, argument, value, allow_none=False):
    """`value` as a float if it is a real number `>= 0` (or None when allowed), else raises."""
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not value >= 0:
        raise ValueError(f"{layer}: `{argument}` must be a number >= 0, got {value!r}")
    return float(value)


class _Elementwise(Layer):
    """Shared by the element-wise activation layers: shape and mask pass through."""

    supports_masking = True

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)


class ReLU(_Elementwise):
    """Rectified linear unit with an optional cap, slope below a threshold, and threshold.

        f(x) = min(x, max_value)                     if x > threshold
        f(x) = negative_slope * (x - threshold)      otherwise

    With the defaults it is `max(x, 0)`.

    Args:
        max_value: None (no cap) or a number `>= 0` the output is clipped to.
        negative_slope: a number `>= 0`, the slope below `threshold`.
        threshold: a number `>= 0`; inputs at or below it are not passed.
        **kwargs: `name`, `trainable`, `dtype`.

    Input shape:
        Any shape.

    Output shape:
        The inputs' shape; a mask passes through.

    Raises:
        ValueError: if an argument is negative or not a number.

    Example:
        >>> mk.layers.ReLU(max_value=2.0, negative_slope=0.5, threshold=1.0)(
        ...     np.array([-1.0, 0.5, 1.5, 4.0])
        ... ).numpy()
        array([-1.  , -0.25,  1.5 ,  2.  ], dtype=float32)
    """

    def __init__(self, max_value=None, negative_slope=0.0, threshold=0.0, **kwargs):
        super().__init__(**kwargs)
        self.max_value = _number("ReLU", "max_value", max_value, allow_none=True)
        self.negative_slope = _number("ReLU", "negative_slope", negative_slope)
        self.threshold = _number("ReLU", "threshold", threshold)

    def call(self, inputs):
        return activations.relu(
            inputs,
            negative_slope=self.negative_slope,
            max_value=self.max_value,
            threshold=self.threshold,
        )

    def get_config(self):
        return {
            **super().get_config(),
            "max_value": self.max_value,
            "negative_slope": self.negative_slope,
            "threshold": self.threshold,
        }


class LeakyReLU(_Elementwise):
    """Leaky rectified linear unit: `x` for `x >= 0`, `negative_slope * x` below.

    Args:
        negative_slope: a number `>= 0`; Keras's default is 0.3 (the
            `leaky_relu` activation function's is 0.2).
        **kwargs: `name`, `trainable`, `dtype`; and `alpha`, the older name of
            `negative_slope`, which Keras 3 still takes with a warning.

    Input shape:
        Any shape.

    Output shape:
        The inputs' shape; a mask passes through.

    Raises:
        ValueError: if `negative_slope` is negative or not a number.

    Example:
        >>> mk.layers.LeakyReLU()(np.array([-2.0, 3.0])).numpy()
        array([-0.6,  3. ], dtype=float32)
    """

    def __init__(self, negative_slope=0.3, **kwargs):
        if "alpha" in kwargs:  # Keras 2's name, in much code (keras-io's GAN examples)
            negative_slope = kwargs.pop("alpha")
            warnings.warn(
                "LeakyReLU: `alpha` is deprecated, as in Keras 3; use `negative_slope`",
                stacklevel=2,
            )
        super().__init__(**kwargs)
        self.negative_slope = _number("LeakyReLU", "negative_slope", negative_slope)

    def call(self, inputs):
        return ops.leaky_relu(inputs, self.negative_slope)

    def get_config(self):
        return {**super().get_config(), "negative_slope": self.negative_slope}


class ELU(_Elementwise):
    """Exponential linear unit: `x` for `x > 0`, `alpha * (exp(x) - 1)` below.

    Args:
        alpha: a number, the scale of the negative part.
        **kwargs: `name`, `trainable`, `dtype`.

    Input shape:
        Any shape.

    Output shape:
        The inputs' shape; a mask passes through.

    Raises:
        ValueError: if `alpha` is not a number.

    Example:
        >>> mk.layers.ELU(alpha=2.0)(np.array([0.0, 1.0, -np.log(2.0)])).numpy()
        array([ 0.,  1., -1.], dtype=float32)
    """

    def __init__(self, alpha=1.0, **kwargs):
        super().__init__(**kwargs)
        if isinstance(alpha, bool) or not isinstance(alpha, numbers.Real):
            raise ValueError(f"ELU: `alpha` must be a number, got {alpha!r}")
        self.alpha = float(alpha)

    def call(self, inputs):
        return ops.elu(inputs, self.alpha)

    def get_config(self):
        return {**super().get_config(), "alpha": self.alpha}


class PReLU(_Elementwise):
    """Parametric ReLU: a leaky ReLU whose negative slope `alpha` is trained.

        f(x) = x            for x >= 0
        f(x) = alpha * x    for x < 0

    `alpha` has one entry per input position (all axes but the batch), or one
    shared entry along each axis of `shared_axes`: for images `(batch, rows,
    cols, channels)`, `shared_axes=[1, 2]` learns one slope per channel.

    Args:
        alpha_initializer: initializer of `alpha` (Keras's default: zeros,
            which starts as a ReLU).
        alpha_regularizer: None or a regularizer of `alpha`.
        alpha_constraint: None or a constraint of `alpha`.
        shared_axes: None, an int or a list of ints (axes counted with the
            batch as 0) along which `alpha` is shared.
        **kwargs: `name`, `trainable`, `dtype`.

    Input shape:
        Any shape with known sizes on the axes not shared.

    Output shape:
        The inputs' shape; a mask passes through.

    Raises:
        ValueError: for a shared axis of 0 or beyond the inputs' rank, or an
            unknown size on an axis that is not shared.

    Example:
        >>> layer = mk.layers.PReLU(alpha_initializer=mk.initializers.Constant(0.25))
        >>> layer(np.array([[-4.0, 2.0]])).numpy()
        array([[-1.,  2.]], dtype=float32)
        >>> layer.alpha.shape
        (2,)
    """

    def __init__(
        self,
        alpha_initializer="zeros",
        alpha_regularizer=None,
        alpha_constraint=None,
        shared_axes=None,
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.alpha_initializer = initializers.get(alpha_initializer)
        self.alpha_regularizer = regularizers.get(alpha_regularizer)
        self.alpha_constraint = constraints.get(alpha_constraint)
        if shared_axes is not None and not isinstance(shared_axes, (list, tuple)):
            shared_axes = [shared_axes]
        self.shared_axes = None if shared_axes is None else [int(a) for a in shared_axes]

    def build(self, input_shape):
        rank = len(input_shape)
        shared = set(self.shared_axes or ())
        bad = sorted(a for a in shared if not 1 <= a < rank)
        if bad:
            raise ValueError(
                f"PReLU '{self.name}': shared_axes {self.shared_axes} must be in [1, {rank - 1}] "
                f"for inputs of shape {tuple(input_shape)}"
            )
        alpha_shape = tuple(1 if a in shared else input_shape[a] for a in range(1, rank))
        if None in alpha_shape:
            raise ValueError(
                f"PReLU '{self.name}' needs known sizes on the axes not in shared_axes, got "
                f"shape {tuple(input_shape)} with shared_axes={self.shared_axes}"
            )
        self.input_spec = InputSpec(
            ndim=rank, axes={a: input_shape[a] for a in range(1, rank) if a not in shared}
        )
        self.alpha = self.add_weight(
            "alpha",
            shape=alpha_shape,
            initializer=self.alpha_initializer,
            regularizer=self.alpha_regularizer,
            constraint=self.alpha_constraint,
        )

    def call(self, inputs):
        return ops.relu(inputs) - self.alpha * ops.relu(ops.negative(inputs))

    def get_config(self):
        return {
            **super().get_config(),
            "alpha_initializer": initializers.serialize(self.alpha_initializer),
            "alpha_regularizer": regularizers.serialize(self.alpha_regularizer),
            "alpha_constraint": constraints.serialize(self.alpha_constraint),
            "shared_axes": self.shared_axes,
        }


def _large_negative(dtype):
    """What masked inputs become before the softmax: very negative yet finite (Keras's values)."""
    return -3e4 if np.dtype(dtype) == np.float16 else -1e9


class Softmax(_Elementwise):
    """Softmax over `axis`: `exp(x) / sum(exp(x))`, skipping masked entries.

    Where `mask` is false the input counts as a very large negative number
    and the output is 0, so the unmasked entries along `axis` sum to 1.

    Args:
        axis: an int or a list of ints, the axes normalized over (jointly).
        **kwargs: `name`, `trainable`, `dtype`.

    Input shape:
        Any shape. Call it as `layer(inputs, mask=None)`: `mask` is a boolean
        array broadcastable to the inputs (numbers are true above 0.5); by
        default the inputs' own mask.

    Output shape:
        The inputs' shape; a mask passes through.

    Raises:
        ValueError: if `mask` has more axes than the inputs or does not
            broadcast to them.

    Example:
        >>> mk.layers.Softmax()(
        ...     np.log([[1.0, 3.0, 4.0]]), mask=np.array([[True, True, False]])
        ... ).numpy()
        array([[0.25, 0.75, 0.  ]], dtype=float32)
    """

    def __init__(self, axis=-1, **kwargs):
        super().__init__(**kwargs)
        self.axis = list(axis) if isinstance(axis, (list, tuple)) else axis

    def call(self, inputs, mask=None):
        if mask is not None:
            mask = np.asarray(mask.numpy() if isinstance(mask, Tensor) else mask)
            broadcasts = mask.ndim <= inputs.ndim and all(
                m in (1, i) for m, i in zip(mask.shape[::-1], inputs.shape[::-1])
            )
            if not broadcasts:
                raise ValueError(
                    f"Softmax '{self.name}' needs a mask broadcastable to the inputs, got mask "
                    f"shape {mask.shape} for inputs of shape {inputs.shape}"
                )
            mask = mask if mask.dtype == bool else mask > 0.5
            inputs = ops.where(mask, inputs, _large_negative(inputs.dtype))
        if isinstance(self.axis, list) and len(self.axis) > 1:
            axis = tuple(self.axis)
            outputs = ops.exp(inputs - ops.logsumexp(inputs, axis=axis, keepdims=True))
        else:
            axis = self.axis[0] if isinstance(self.axis, list) else self.axis
            outputs = ops.softmax(inputs, axis=axis)
        if mask is not None:
            outputs = ops.where(mask, outputs, 0.0)
        return outputs

    def get_config(self):
        return {**super().get_config(), "axis": self.axis}
