"""The activations the rest of ops builds on: relu, sigmoid, softmax, gelu, erf, ...

(The module was `ops.nn` until that name became Keras's namespace,
`minikeras.ops.nn`, which holds these and the other neural-network ops.)

The hot ones are autograd primitives with hand-written VJPs, each right below
its forward function: one pass over memory forward, one backward, float32
throughout, instead of autograd's generic chain of small ops.
"""

import autograd.numpy as anp
import numpy as np
from autograd.extend import defvjp, primitive

from minikeras.engine.gradient_select import select_gradient
from minikeras.engine.primitive import call_primitive
from minikeras.ops.comparison import _where
from minikeras.ops.core import (
    as_float,
    normalize_axis,
    value_of,
    wrap,
)
from minikeras.ops.elementary import _tanh

__all__ = [
    "elu",
    "erf",
    "gelu",
    "leaky_relu",
    "log_softmax",
    "relu",
    "sigmoid",
    "silu",
    "softmax",
    "softplus",
]

# ---------------------------------------------------------------- activations


@primitive
def _relu(x):
    return np.maximum(x, 0)


# A select, not `g * (ans > 0)`: an inf reaching a dead unit gives 0, not NaN (as JAX).
defvjp(_relu, lambda ans, x: lambda g: select_gradient(ans > 0, g))


def relu(x):
    """Rectified linear unit, `max(x, 0)`, element-wise.

    Args:
        x: Tensor or array-like.

    Returns:
        A Tensor.

    Example:
        >>> mk.ops.relu([-1.0, 2.0]).numpy()
        array([0., 2.], dtype=float32)
    """
    return wrap(call_primitive(_relu, as_float(value_of(x))))


@primitive
def _sigmoid(x):
    # tanh form: no overflow for large |x|, and no float64 temporaries.
    return 0.5 * (np.tanh(0.5 * x) + 1.0)


defvjp(_sigmoid, lambda ans, x: lambda g: g * ans * (1.0 - ans))


def sigmoid(x):
    """Logistic sigmoid, `1 / (1 + exp(-x))`, element-wise and overflow-free.

    Args:
        x: Tensor or array-like.

    Returns:
        A Tensor.

    Example:
        >>> mk.ops.sigmoid([0.0, 1000.0, -1000.0]).numpy()
        array([0.5, 1. , 0. ], dtype=float32)
    """
    return wrap(call_primitive(_sigmoid, as_float(value_of(x))))


def softplus(x):
    """`log(1 + exp(x))`, element-wise and overflow-free.

    Args:
        x: Tensor or array-like.

    Returns:
        A Tensor.

    Example:
        >>> mk.ops.softplus([0.0]).numpy()
        array([0.6931472], dtype=float32)
    """
    return wrap(call_primitive(_softplus, as_float(value_of(x))))


@primitive
def _softplus(x):
    # max(x, 0) + log(1 + exp(-|x|)): exp never overflows.
    return np.maximum(x, 0) + np.log1p(np.exp(-np.abs(x)))


defvjp(_softplus, lambda ans, x: lambda g: g * _sigmoid(x))


@primitive
def _leaky_relu(x, negative_slope):
    return np.where(x > 0, x, x * negative_slope)


defvjp(_leaky_relu, lambda ans, x, s: lambda g: _where(x > 0, g, g * s))


def leaky_relu(x, negative_slope=0.2):
    """`x` for positive inputs, `negative_slope * x` otherwise.

    Args:
        x: Tensor or array-like.
        negative_slope: the slope below zero (Keras's default is 0.2).

    Returns:
        A Tensor.

    Example:
        >>> mk.ops.leaky_relu([-1.0, 2.0]).numpy()
        array([-0.2,  2. ], dtype=float32)
    """
    return wrap(call_primitive(_leaky_relu, as_float(value_of(x)), float(negative_slope)))


def elu(x, alpha=1.0):
    """Exponential linear unit: `x` if positive, else `alpha * (exp(x) - 1)`.

    Args:
        x: Tensor or array-like.
        alpha: the scale of the negative part.

    Returns:
        A Tensor.

    Example:
        >>> mk.ops.elu([0.0, 1.0]).numpy()
        array([0., 1.], dtype=float32)
    """
    return wrap(call_primitive(_elu, as_float(value_of(x)), float(alpha)))


@primitive
def _elu(x, alpha):
    # expm1 of min(x, 0): accurate near zero, and no overflow for large x.
    return np.where(x > 0, x, alpha * np.expm1(np.minimum(x, 0)))


# Below zero the derivative is alpha * exp(x), taken from `x` (`ans + alpha` cancels).
defvjp(
    _elu, lambda ans, x, alpha: lambda g: _where(x > 0, g, g * (alpha * anp.exp(anp.minimum(x, 0))))
)


def silu(x):
    """Sigmoid-weighted linear unit (swish): `x * sigmoid(x)`.

    Args:
        x: Tensor or array-like.

    Returns:
        A Tensor.

    Example:
        >>> mk.ops.silu([0.0]).numpy()
        array([0.], dtype=float32)
    """
    value = as_float(value_of(x))
    return wrap(value * _sigmoid(value))


# Cephes's rational approximations (S. L. Moshier, public domain), as in scipy:
# erf(x) = x T(x^2) / U(x^2) for |x| < 1, and 1 - exp(-x^2) P(|x|) / Q(|x|) above.
_ERF_T = (
    9.60497373987051638749e0, 9.00260197203842689217e1, 2.23200534594684319226e3,
    7.00332514112805075473e3, 5.55923013010394962768e4,
)  # fmt: skip
_ERF_U = (
    1.0, 3.35617141647503099647e1, 5.21357949780152679795e2, 4.59432382970980127987e3,
    2.26290000613890934246e4, 4.92673942608635921086e4,
)  # fmt: skip
_ERFC_P = (
    2.46196981473530512524e-10, 5.64189564831068821977e-1, 7.46321056442269912687e0,
    4.86371970985681366614e1, 1.96520832956077098242e2, 5.26445194995477358631e2,
    9.34528527171957607540e2, 1.02755188689515710272e3, 5.57535335369399327526e2,
)  # fmt: skip
_ERFC_Q = (
    1.0, 1.32281951154744992508e1, 8.67072140885989742329e1, 3.54937778887819891062e2,
    9.75708501743205489753e2, 1.82390916687909736289e3, 2.24633760818710981792e3,
    1.65666309194161350182e3, 5.57535340817727675546e2,
)  # fmt: skip
_TWO_OVER_SQRT_PI = 1.1283791670955126  # a Python float: weak in numpy 2 promotion


def _polynomial(z, coefficients):
    """Horner's rule, highest power first; stays in `z`'s dtype."""
    result = coefficients[0] * z + coefficients[1]
    for coefficient in coefficients[2:]:
        result *= z
        result += coefficient
    return result


def _erf_near_zero(z):
    """erf(z) for |z| < 1 (odd in z)."""
    z2 = z * z
    return z * _polynomial(z2, _ERF_T) / _polynomial(z2, _ERF_U)


def _erfc_far(z):
    """erfc(z) = 1 - erf(z) for z >= 1, without the cancellation of `1 - erf(z)`."""
    return np.exp(-z * z) * _polynomial(z, _ERFC_P) / _polynomial(z, _ERFC_Q)


def _widened(x):
    """float16 as float32: the polynomials' coefficients (up to 5e4) overflow float16."""
    return x.astype(np.float32) if x.dtype == np.float16 else x


@primitive
def _erf(x):
    # Past 6, erf is 1 to double precision; clamping keeps P and Q finite.
    wide = _widened(x)
    z = np.minimum(np.abs(wide), 6.0)
    result = np.sign(wide) * np.where(z < 1.0, _erf_near_zero(z), 1.0 - _erfc_far(z))
    return result.astype(x.dtype, copy=False)


defvjp(_erf, lambda ans, x: lambda g: g * _TWO_OVER_SQRT_PI * anp.exp(-x * x))


def erf(x):
    """The error function, element-wise, accurate to float64 precision.

    Args:
        x: Tensor or array-like.

    Returns:
        A Tensor.

    Example:
        >>> mk.ops.erf([0.0, 10.0]).numpy()
        array([0., 1.], dtype=float32)
    """
    return wrap(call_primitive(_erf, as_float(value_of(x))))


def gelu(x, approximate=True):
    """Gaussian error linear unit, `x * P(X <= x)` for a standard normal X.

    Args:
        x: Tensor or array-like.
        approximate: use the tanh approximation (Keras's default), else erf.

    Returns:
        A Tensor.

    Example:
        >>> mk.ops.gelu([0.0]).numpy()
        array([0.], dtype=float32)
    """
    value = as_float(value_of(x))
    if approximate:
        inner = 0.7978845608028654 * (value + 0.044715 * value * value * value)
        return wrap(0.5 * value * (1.0 + _tanh(inner)))
    return wrap(0.5 * value * (1.0 + _erf(value * 0.7071067811865476)))


# ------------------------------------------------------------------- softmax


@primitive
def _softmax(x, axis):
    shifted = np.exp(x - np.max(x, axis=axis, keepdims=True))
    shifted /= np.sum(shifted, axis=axis, keepdims=True)
    return shifted


defvjp(
    _softmax,
    lambda ans, x, axis: lambda g: ans * (g - anp.sum(g * ans, axis=axis, keepdims=True)),
)


@primitive
def _log_softmax(x, axis):
    shifted = x - np.max(x, axis=axis, keepdims=True)
    return shifted - np.log(np.sum(np.exp(shifted), axis=axis, keepdims=True))


defvjp(
    _log_softmax,
    lambda ans, x, axis: lambda g: g - anp.exp(ans) * anp.sum(g, axis=axis, keepdims=True),
)


def softmax(x, axis=-1):
    """Softmax along `axis`: `exp(x) / sum(exp(x))`, without overflow.

    Args:
        x: Tensor or array-like.
        axis: the axis that sums to one.

    Returns:
        A Tensor.

    Raises:
        ValueError: if `axis` is out of range.

    Example:
        >>> mk.ops.softmax([0.0, 0.0]).numpy()
        array([0.5, 0.5], dtype=float32)
    """
    value = as_float(value_of(x))
    axis = normalize_axis("softmax", axis, np.ndim(value), value)
    return wrap(call_primitive(_softmax, value, axis))


def log_softmax(x, axis=-1):
    """Logarithm of the softmax along `axis`, computed stably.

    Args:
        x: Tensor or array-like.
        axis: the normalized axis.

    Returns:
        A Tensor.

    Raises:
        ValueError: if `axis` is out of range.

    Example:
        >>> mk.ops.log_softmax([0.0, 0.0]).numpy()
        array([-0.6931472, -0.6931472], dtype=float32)
    """
    value = as_float(value_of(x))
    axis = normalize_axis("log_softmax", axis, np.ndim(value), value)
    return wrap(call_primitive(_log_softmax, value, axis))
