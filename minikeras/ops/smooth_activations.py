"""Smooth activations and sparsemax: selu, celu, log_sigmoid, softsign, tanh_shrink,
squareplus, glu and sparsemax.

Each is one autograd primitive with its VJP right below it, written in
differentiable ops so that a gradient of a gradient is right too: from the
output where that is cheaper and exact, from the input where the output
would cancel (selu's and celu's negative side). Integer and boolean inputs
give floatx, as in Keras.
"""

import autograd.numpy as anp
import numpy as np
from autograd.extend import defvjp, primitive

from minikeras.engine.primitive import call_primitive
from minikeras.ops.activation_functions import _sigmoid
from minikeras.ops.comparison import _where
from minikeras.ops.core import as_float, normalize_axis, op_error, shape_of, value_of, wrap

__all__ = [
    "celu",
    "glu",
    "log_sigmoid",
    "selu",
    "softsign",
    "sparsemax",
    "squareplus",
    "tanh_shrink",
]

# SELU's constants (Klambauer et al., 2017), as Keras has them.
_SELU_ALPHA = 1.6732632423543772
_SELU_SCALE = 1.0507009873554805


@primitive
def _selu(x):
    # expm1 of min(x, 0): accurate near zero, and no overflow for large x.
    return _SELU_SCALE * np.where(x > 0, x, _SELU_ALPHA * np.expm1(np.minimum(x, 0)))


# Below zero the derivative is scale * alpha * exp(x), taken from `x`: `ans + scale * alpha`
# would cancel (the two nearly opposite), losing the small derivatives' digits.
defvjp(
    _selu,
    lambda ans, x: (
        lambda g: _where(
            x > 0, g * _SELU_SCALE, g * (_SELU_SCALE * _SELU_ALPHA * anp.exp(anp.minimum(x, 0)))
        )
    ),
)


def selu(x):
    """Scaled exponential linear unit: `scale * elu(x, alpha)`, with Keras's constants.

    With `alpha ~ 1.6733` and `scale ~ 1.0507`, activations keep a mean of 0
    and a variance of 1 through layers initialised with `lecun_normal`.

    Args:
        x: Tensor or array-like.

    Returns:
        A floating Tensor of `x`'s shape.

    Example:
        >>> np.round(mk.ops.selu([-1.0, 0.0, 1.0]).numpy(), 4)
        array([-1.1113,  0.    ,  1.0507], dtype=float32)
    """
    return wrap(call_primitive(_selu, as_float(value_of(x))))


@primitive
def _celu(x, alpha):
    return np.where(x > 0, x, alpha * np.expm1(np.minimum(x, 0) / alpha))


# Below zero the derivative is exp(x / alpha), taken from `x` (`ans / alpha + 1` cancels).
defvjp(
    _celu,
    lambda ans, x, alpha: lambda g: _where(x > 0, g, g * anp.exp(anp.minimum(x, 0) / alpha)),
)


def celu(x, alpha=1.0):
    """Continuously differentiable ELU: `x` if positive, else `alpha * (exp(x / alpha) - 1)`.

    Args:
        x: Tensor or array-like.
        alpha: a non-zero number, the scale of the negative part.

    Returns:
        A floating Tensor of `x`'s shape.

    Raises:
        ValueError: if `alpha` is zero.

    Example:
        >>> np.round(mk.ops.celu([-1.0, 0.0, 2.0], alpha=2.0).numpy(), 4)
        array([-0.7869,  0.    ,  2.    ], dtype=float32)
    """
    if float(alpha) == 0.0:
        raise ValueError("celu: alpha must not be zero (it divides x)")
    return wrap(call_primitive(_celu, as_float(value_of(x)), float(alpha)))


@primitive
def _log_sigmoid(x):
    # -softplus(-x) = min(x, 0) - log(1 + exp(-|x|)): exp never overflows.
    return np.minimum(x, 0) - np.log1p(np.exp(-np.abs(x)))


defvjp(_log_sigmoid, lambda ans, x: lambda g: g * _sigmoid(-x))


def log_sigmoid(x):
    """The logarithm of the sigmoid, `-softplus(-x)`, stable for any magnitude.

    Args:
        x: Tensor or array-like.

    Returns:
        A floating Tensor of `x`'s shape.

    Example:
        >>> np.round(mk.ops.log_sigmoid([-50.0, 0.0, 50.0]).numpy(), 4)
        array([-50.    ,  -0.6931,  -0.    ], dtype=float32)
    """
    return wrap(call_primitive(_log_sigmoid, as_float(value_of(x))))


@primitive
def _softsign(x):
    return x / (np.abs(x) + 1.0)


defvjp(_softsign, lambda ans, x: lambda g: g / ((anp.abs(x) + 1.0) * (anp.abs(x) + 1.0)))


def softsign(x):
    """`x / (|x| + 1)`, a sigmoid-shaped curve in (-1, 1).

    Args:
        x: Tensor or array-like.

    Returns:
        A floating Tensor of `x`'s shape.

    Example:
        >>> mk.ops.softsign([-3.0, 0.0, 1.0]).numpy()
        array([-0.75,  0.  ,  0.5 ], dtype=float32)
    """
    return wrap(call_primitive(_softsign, as_float(value_of(x))))


@primitive
def _tanh_shrink(x):
    return x - np.tanh(x)


# 1 - (1 - tanh(x) ** 2) = tanh(x) ** 2: 1 at +-inf (not `x - ans`, inf - inf there).
defvjp(_tanh_shrink, lambda ans, x: lambda g: g * anp.tanh(x) ** 2)


def tanh_shrink(x):
    """`x - tanh(x)`, element-wise; its gradient `tanh(x) ** 2` is 1 at `+-inf`.

    Args:
        x: Tensor or array-like.

    Returns:
        A floating Tensor of `x`'s shape.

    Example:
        >>> np.round(mk.ops.tanh_shrink([-1.0, 0.0, 2.0]).numpy(), 4)
        array([-0.2384,  0.    ,  1.036 ], dtype=float32)
    """
    return wrap(call_primitive(_tanh_shrink, as_float(value_of(x))))


@primitive
def _squareplus(x, b):
    return (x + np.sqrt(x * x + b)) * 0.5


defvjp(_squareplus, lambda ans, x, b: lambda g: g * 0.5 * (1.0 + x / anp.sqrt(x * x + b)))


def squareplus(x, b=4):
    """Squareplus, a softplus of square roots: `(x + sqrt(x ** 2 + b)) / 2`.

    Args:
        x: Tensor or array-like.
        b: a non-negative number, the smoothness near zero (0 gives `relu`).

    Returns:
        A floating Tensor of `x`'s shape.

    Raises:
        ValueError: if `b` is negative.

    Example:
        >>> mk.ops.squareplus([-3.0, 0.0, 3.0], b=16).numpy()
        array([1., 2., 4.], dtype=float32)
    """
    if float(b) < 0:
        raise ValueError(f"squareplus: b must be non-negative, got {b!r}")
    return wrap(call_primitive(_squareplus, as_float(value_of(x)), float(b)))


@primitive
def _glu(x, axis):
    gated, gates = np.split(x, 2, axis=axis)
    return gated * _sigmoid.fun(gates)


def _glu_vjp(ans, x, axis):
    gated, gates = anp.split(x, 2, axis=axis)
    weight = _sigmoid(gates)
    return lambda g: anp.concatenate([g * weight, g * gated * weight * (1.0 - weight)], axis=axis)


defvjp(_glu, _glu_vjp)


def glu(x, axis=-1):
    """Gated linear unit: the first half of `axis` times the sigmoid of the second.

    `a * sigmoid(b)` where `a, b = split(x, 2, axis)`.

    Args:
        x: Tensor or array-like; its size along `axis` must be even.
        axis: the axis that is halved.

    Returns:
        A floating Tensor, `x`'s shape with `axis` halved.

    Raises:
        ValueError: if `axis` is out of range or its size is odd.

    Example:
        >>> mk.ops.glu([[1.0, 2.0, 0.0, 1000.0]]).numpy()
        array([[0.5, 2. ]], dtype=float32)
    """
    value = as_float(value_of(x))
    axis = normalize_axis("glu", axis, np.ndim(value), value)
    if shape_of(value)[axis] % 2:
        raise op_error("glu", f"axis {axis} must have an even size", value)
    return wrap(call_primitive(_glu, value, axis))


@primitive
def _sparsemax(x, axis):
    # Euclidean projection onto the simplex (Martins & Astudillo, 2016): sort, find
    # the support (the k largest with 1 + k z_k > their sum), shift by tau, clip at 0.
    ordered = -np.sort(-x, axis=axis)
    sums = np.cumsum(ordered, axis=axis)
    ranks = np.arange(1, x.shape[axis] + 1, dtype=x.dtype).reshape(
        [-1 if i == axis else 1 for i in range(x.ndim)]
    )
    support = ordered * ranks > sums - 1.0
    count = np.sum(support, axis=axis, keepdims=True)
    tau = (np.take_along_axis(sums, count - 1, axis=axis) - 1.0) / count.astype(x.dtype)
    return np.maximum(x - tau, 0.0)


def _sparsemax_vjp(ans, x, axis):
    # On the support the Jacobian is I - 1 1^T / |support|; elsewhere it is zero.
    support = ans > 0
    count = np.sum(support, axis=axis, keepdims=True).astype(ans.dtype)
    return lambda g: support * (g - anp.sum(g * support, axis=axis, keepdims=True) / count)


defvjp(_sparsemax, _sparsemax_vjp)


def sparsemax(x, axis=-1):
    """Sparsemax along `axis`: like softmax, a distribution, but with exact zeros.

    The Euclidean projection of `x` onto the probability simplex
    (Martins & Astudillo, 2016): `max(x - tau, 0)`, with `tau` chosen so the
    result sums to one. Keras 3.15.1 computes a wrong `tau` when more than
    one entry stays positive (keras-team/keras#23425, fixed after it); this
    follows the definition, so it agrees with Keras only where one entry does.

    Args:
        x: Tensor or array-like, of one or more axes.
        axis: the axis that sums to one.

    Returns:
        A floating Tensor of `x`'s shape.

    Raises:
        ValueError: if `axis` is out of range.

    Example:
        >>> mk.ops.sparsemax([0.0, 1.0, 3.0]).numpy()
        array([0., 0., 1.], dtype=float32)
        >>> mk.ops.sparsemax([1.0, 1.5, 0.0]).numpy()
        array([0.25, 0.75, 0.  ], dtype=float32)
    """
    value = as_float(value_of(x))
    axis = normalize_axis("sparsemax", axis, np.ndim(value), value)
    return wrap(call_primitive(_sparsemax, value, axis))
