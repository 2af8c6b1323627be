"""Piecewise activations: relu6, hard_sigmoid, hard_silu, hard_tanh, hard_shrink,
soft_shrink, sparse_plus, sparse_sigmoid and threshold.

Each is one autograd primitive with its VJP right below it, written in
differentiable ops so that a gradient of a gradient is right too. Between the
pieces the gradient is that of the piece; at a joint it follows Keras's JAX
backend (zero at the corners of `relu6` and `hard_sigmoid`, one at those of
`hard_tanh`, a quarter at those of `sparse_sigmoid`). Integer and boolean
inputs give floatx, as in Keras, except for `hard_tanh` and `threshold`, whose
results keep the input's dtype where Keras keeps it.
"""

import autograd.numpy as anp
import numpy as np
from autograd.extend import defvjp, primitive

from minikeras.engine.gradient_select import select_gradient
from minikeras.engine.primitive import call_primitive
from minikeras.ops.comparison import greater, where
from minikeras.ops.core import Tensor, array_of, as_float, dtype_of, value_of, wrap

__all__ = [
    "hard_shrink",
    "hard_sigmoid",
    "hard_silu",
    "hard_tanh",
    "relu6",
    "soft_shrink",
    "sparse_plus",
    "sparse_sigmoid",
    "threshold",
]


@primitive
def _relu6(x):
    return np.clip(x, 0.0, 6.0)


defvjp(_relu6, lambda ans, x: lambda g: select_gradient((x > 0) & (x < 6), g))


def relu6(x):
    """Rectified linear unit capped at 6: `min(max(x, 0), 6)`, element-wise.

    Args:
        x: Tensor or array-like.

    Returns:
        A floating Tensor of `x`'s shape.

    Example:
        >>> mk.ops.relu6([-1.0, 3.0, 8.0]).numpy()
        array([0., 3., 6.], dtype=float32)
    """
    return wrap(call_primitive(_relu6, as_float(value_of(x))))


@primitive
def _hard_sigmoid(x):
    return np.clip((x + 3.0) / 6.0, 0.0, 1.0)


defvjp(_hard_sigmoid, lambda ans, x: lambda g: select_gradient((x > -3) & (x < 3), g) / 6.0)


def hard_sigmoid(x):
    """Piecewise-linear sigmoid, `relu6(x + 3) / 6`: 0 below -3, 1 above 3.

    Keras 3's definition (Keras 2's was `0.2 * x + 0.5`).

    Args:
        x: Tensor or array-like.

    Returns:
        A floating Tensor of `x`'s shape.

    Example:
        >>> mk.ops.hard_sigmoid([-4.0, 0.0, 1.5, 4.0]).numpy()
        array([0.  , 0.5 , 0.75, 1.  ], dtype=float32)
    """
    return wrap(call_primitive(_hard_sigmoid, as_float(value_of(x))))


@primitive
def _hard_silu(x):
    # (x held at -3 below it: 0 down to -inf, where x * 0 would be NaN)
    x = np.maximum(x, -3.0)
    return x * np.clip((x + 3.0) / 6.0, 0.0, 1.0)


# d(x * hard_sigmoid(x)) = hard_sigmoid(x) + x / 6 between -3 and 3; 0 and 1 at -inf and inf.
defvjp(
    _hard_silu,
    lambda ans, x: lambda g: g * (_hard_sigmoid(x) + anp.where((x > -3) & (x < 3), x, 0.0) / 6.0),
)


def hard_silu(x):
    """Hard SiLU, also called hard swish: `x * hard_sigmoid(x)`.

    `mk.ops.hard_swish` is this same function, as in Keras. At `-inf` it
    gives 0, its value everywhere below -3 (Keras gives NaN there, from
    `-inf * 0`); its gradient is 0 at `-inf` and 1 at `inf`, as Keras's.

    Args:
        x: Tensor or array-like.

    Returns:
        A floating Tensor of `x`'s shape.

    Example:
        >>> mk.ops.hard_silu([-4.0, 0.0, 1.5, 4.0]).numpy()
        array([-0.   ,  0.   ,  1.125,  4.   ], dtype=float32)
    """
    return wrap(call_primitive(_hard_silu, as_float(value_of(x))))


@primitive
def _hard_tanh(x):
    return np.clip(x, -1, 1)


# One at -1 and 1 themselves, as Keras's JAX backend gives.
defvjp(_hard_tanh, lambda ans, x: lambda g: select_gradient((x >= -1) & (x <= 1), g))


def hard_tanh(x):
    """Piecewise-linear tanh: `x` clipped to `[-1, 1]`, element-wise.

    Args:
        x: Tensor or array-like.

    Returns:
        A Tensor of `x`'s shape and dtype (integers stay integers, as in Keras).

    Example:
        >>> mk.ops.hard_tanh([-2.0, 0.5, 3.0]).numpy()
        array([-1. ,  0.5,  1. ], dtype=float32)
    """
    value = array_of(x)
    if dtype_of(value).kind == "b":
        value = np.asarray(value, dtype="int32")  # (Keras's dtype for booleans here)
    return wrap(call_primitive(_hard_tanh, value))


@primitive
def _hard_shrink(x, threshold):
    return np.where(np.abs(x) > threshold, x, 0.0)


defvjp(_hard_shrink, lambda ans, x, threshold: lambda g: select_gradient(abs(x) > threshold, g))


def _threshold_value(op, threshold):
    """A Python float of a number argument, or a TypeError naming the op."""
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float, np.number)):
        raise TypeError(f"{op}: threshold must be a number, got {threshold!r}")
    return float(threshold)


def hard_shrink(x, threshold=0.5):
    """Hard shrinkage: `x` where `|x| > threshold`, else 0.

    Args:
        x: Tensor or array-like.
        threshold: a number, the half-width of the band set to zero.

    Returns:
        A floating Tensor of `x`'s shape.

    Raises:
        TypeError: if `threshold` is not a number.

    Example:
        >>> mk.ops.hard_shrink([-1.0, 0.25, 0.75]).numpy()
        array([-1.  ,  0.  ,  0.75], dtype=float32)
    """
    value = as_float(value_of(x))
    return wrap(call_primitive(_hard_shrink, value, _threshold_value("hard_shrink", threshold)))


@primitive
def _soft_shrink(x, threshold):
    return x - np.clip(x, -threshold, threshold)


defvjp(_soft_shrink, lambda ans, x, threshold: lambda g: select_gradient(abs(x) > threshold, g))


def soft_shrink(x, threshold=0.5):
    """Soft shrinkage: `x` moved `threshold` towards zero, and 0 within the band.

    `x - threshold` above `threshold`, `x + threshold` below `-threshold`.

    Args:
        x: Tensor or array-like.
        threshold: a number, the half-width of the band set to zero.

    Returns:
        A floating Tensor of `x`'s shape.

    Raises:
        TypeError: if `threshold` is not a number.

    Example:
        >>> mk.ops.soft_shrink([-1.0, 0.25, 0.75]).numpy()
        array([-0.5 ,  0.  ,  0.25], dtype=float32)
    """
    value = as_float(value_of(x))
    return wrap(call_primitive(_soft_shrink, value, _threshold_value("soft_shrink", threshold)))


@primitive
def _sparse_sigmoid(x):
    return np.clip((x + 1.0) * 0.5, 0.0, 1.0)


# A quarter at -1 and 1 themselves: Keras's JAX backend clips, whose gradient splits ties.
defvjp(
    _sparse_sigmoid,
    lambda ans, x: lambda g: g * 0.25 * (abs(x) < 1) + g * 0.25 * (abs(x) <= 1),
)


def sparse_sigmoid(x):
    """Sparse sigmoid: 0 up to -1, 1 from 1, `(x + 1) / 2` between.

    Args:
        x: Tensor or array-like.

    Returns:
        A floating Tensor of `x`'s shape.

    Example:
        >>> mk.ops.sparse_sigmoid([-2.0, 0.0, 0.5, 2.0]).numpy()
        array([0.  , 0.5 , 0.75, 1.  ], dtype=float32)
    """
    return wrap(call_primitive(_sparse_sigmoid, as_float(value_of(x))))


@primitive
def _sparse_plus(x):
    inside = (x + 1.0) * (x + 1.0) * 0.25
    return np.where(x <= -1, 0.0, np.where(x >= 1, x, inside))


# Its derivative is sparse_sigmoid (as softplus's is sigmoid).
defvjp(_sparse_plus, lambda ans, x: lambda g: select_gradient(x > -1, g) * _sparse_sigmoid(x))


def sparse_plus(x):
    """Sparse plus, a piecewise-quadratic softplus: 0 up to -1, `x` from 1.

    Between -1 and 1 it is `(x + 1) ** 2 / 4`.

    Args:
        x: Tensor or array-like.

    Returns:
        A floating Tensor of `x`'s shape.

    Example:
        >>> mk.ops.sparse_plus([-2.0, 0.0, 2.0]).numpy()
        array([0.  , 0.25, 2.  ], dtype=float32)
    """
    return wrap(call_primitive(_sparse_plus, as_float(value_of(x))))


@primitive
def _threshold(x, threshold, default_value):
    return np.where(x > threshold, x, default_value)


defvjp(_threshold, lambda ans, x, threshold, default: lambda g: select_gradient(x > threshold, g))


def threshold(x, threshold, default_value):
    """`x` where `x > threshold`, else `default_value`, element-wise.

    Args:
        x: Tensor or array-like.
        threshold: a number; values not above it are replaced.
        default_value: a number, what replaces them; or a Tensor or array
            that broadcasts with `x` (as Keras accepts), which takes
            gradients where it is picked.

    Returns:
        A Tensor of `x`'s shape; integer `x` stays integer unless
        `default_value` is a float (then floatx), as in Keras.

    Raises:
        TypeError: if `threshold` is not a number, or `default_value` is
            neither a number nor a Tensor or array.

    Example:
        >>> mk.ops.threshold([-1.0, 0.5, 2.0], 1.0, 0.0).numpy()
        array([0., 0., 2.], dtype=float32)
    """
    limit = _threshold_value("threshold", threshold)
    if isinstance(default_value, (Tensor, np.ndarray, list, tuple)):
        # `where` reads x and default_value together (`ops.operands`): a numpy float64
        # one beside a float32 Tensor takes its precision.
        return where(greater(x, limit), x, default_value)
    default = _threshold_value("threshold: default_value", default_value)
    value = array_of(x)
    kind = dtype_of(value).kind
    if kind == "b":
        value = np.asarray(value, dtype="int32")  # (Keras's dtype for booleans here)
        kind = "i"
    if kind in "iu" and isinstance(default_value, (float, np.floating)):
        value = as_float(value)
    elif kind in "iu":
        default = int(default)  # (a Python float would make numpy widen to float64)
    return wrap(call_primitive(_threshold, value, limit, default))
