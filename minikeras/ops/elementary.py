"""Elementary functions, element-wise: exp, log, log1p, log2, log10, expm1, sqrt, rsqrt,
tanh, sin, cos, tan, abs, sign, floor, ceil and round.

Functions of one tensor, each one autograd primitive (`tanh` and `rsqrt`
ours, so their gradients come from their outputs; `log2` and `log10` ours,
so that float32 stays float32). Integer inputs to the
transcendental ones, and to `floor` and `ceil`, give floatx, as in Keras;
`round` keeps them. `sign` has no gradient; the rounding functions a zero one. The
arithmetic operators, `-x` and `x * x` included, are in `ops.math`.
"""

import autograd.numpy as anp
import numpy as np
from autograd.extend import defvjp, primitive

from minikeras.engine.primitive import call_primitive
from minikeras.ops.core import array_of, as_float, value_of, wrap

__all__ = [
    "abs",
    "ceil",
    "cos",
    "exp",
    "expm1",
    "floor",
    "log",
    "log10",
    "log1p",
    "log2",
    "round",
    "rsqrt",
    "sign",
    "sin",
    "sqrt",
    "tan",
    "tanh",
]


def abs(x):  # noqa: A001 (Keras's name)
    """Element-wise absolute value; integers keep their dtype (`ops.absolute` is this op).

    Args:
        x: Tensor or array-like.

    Returns:
        A Tensor.

    Example:
        >>> mk.ops.abs([-1.5, 2.0]).numpy()
        array([1.5, 2. ], dtype=float32)
    """
    return wrap(call_primitive(anp.abs, array_of(x)))


def exp(x):
    """Element-wise `e ** x`.

    Args:
        x: Tensor or array-like.

    Returns:
        A Tensor (float32 for integer input).

    Example:
        >>> mk.ops.exp([0.0]).numpy()
        array([1.], dtype=float32)
    """
    return wrap(call_primitive(anp.exp, _float(x)))


def log(x):
    """Element-wise natural logarithm.

    Args:
        x: Tensor or array-like.

    Returns:
        A Tensor (float32 for integer input).

    Example:
        >>> mk.ops.log([1.0]).numpy()
        array([0.], dtype=float32)
    """
    return wrap(call_primitive(anp.log, _float(x)))


def log1p(x):
    """Element-wise `log(1 + x)`, accurate for small `x`.

    Args:
        x: Tensor or array-like.

    Returns:
        A Tensor.

    Example:
        >>> mk.ops.log1p([0.0]).numpy()
        array([0.], dtype=float32)
    """
    return wrap(call_primitive(anp.log1p, _float(x)))


def sqrt(x):
    """Element-wise square root.

    Args:
        x: Tensor or array-like.

    Returns:
        A Tensor (float32 for integer input).

    Example:
        >>> mk.ops.sqrt([4.0, 9.0]).numpy()
        array([2., 3.], dtype=float32)
    """
    return wrap(call_primitive(anp.sqrt, _float(x)))


def tanh(x):
    """Element-wise hyperbolic tangent.

    Args:
        x: Tensor or array-like.

    Returns:
        A Tensor.

    Example:
        >>> mk.ops.tanh([0.0]).numpy()
        array([0.], dtype=float32)
    """
    return wrap(call_primitive(_tanh, _float(x)))


@primitive
def _tanh(x):
    return np.tanh(x)


# From the output: autograd's `g / cosh(x)**2` overflows for |x| > 710.
defvjp(_tanh, lambda ans, x: lambda g: g * (1.0 - ans * ans))


def sign(x):
    """Element-wise sign: -1, 0 or 1 (not differentiable).

    Args:
        x: Tensor or array-like.

    Returns:
        A Tensor.

    Example:
        >>> mk.ops.sign([-2.0, 0.0, 3.0]).numpy()
        array([-1.,  0.,  1.], dtype=float32)
    """
    return wrap(call_primitive(anp.sign, array_of(x)))


@primitive
def _rsqrt(x):
    return 1 / np.sqrt(x)


# From the output, as tanh's: d(x ** -0.5) = -0.5 * x ** -1.5 = -0.5 * ans ** 3.
defvjp(_rsqrt, lambda ans, x: lambda g: -0.5 * g * ans * ans * ans)


# Ours, not autograd's: its VJPs divide by a float64 log(2) and log(10).
_LN2, _LN10 = float(np.log(2.0)), float(np.log(10.0))


@primitive
def _log2(x):
    return np.log2(x)


defvjp(_log2, lambda ans, x: lambda g: g / (x * _LN2))


@primitive
def _log10(x):
    return np.log10(x)


defvjp(_log10, lambda ans, x: lambda g: g / (x * _LN10))


# Rounding: a zero gradient, as Keras gives on JAX (autograd's own floor, ceil and
# round are not traced at all, as `sign`, so they would give none).
@primitive
def _floor(x):
    return np.floor(x)


@primitive
def _ceil(x):
    return np.ceil(x)


@primitive
def _round(x, decimals):
    return np.round(x, decimals)


def _zero(ans, x, *args):
    return lambda g: anp.zeros_like(g)


defvjp(_floor, _zero)
defvjp(_ceil, _zero)
defvjp(_round, _zero)


def sin(x):
    """Element-wise sine (radians); integers become floatx.

    Args:
        x: Tensor or array-like.

    Returns:
        A Tensor.

    Example:
        >>> mk.ops.sin([0.0, np.pi / 2]).numpy()
        array([0., 1.], dtype=float32)
    """
    return wrap(call_primitive(anp.sin, _float(x)))


def cos(x):
    """Element-wise cosine (radians); integers become floatx.

    Args:
        x: Tensor or array-like.

    Returns:
        A Tensor.

    Example:
        >>> mk.ops.cos([0.0, np.pi]).numpy()
        array([ 1., -1.], dtype=float32)
    """
    return wrap(call_primitive(anp.cos, _float(x)))


def tan(x):
    """Element-wise tangent (radians); integers become floatx.

    Args:
        x: Tensor or array-like.

    Returns:
        A Tensor.

    Example:
        >>> mk.ops.tan([0.0, np.pi / 4]).numpy().round(6)
        array([0., 1.], dtype=float32)
    """
    return wrap(call_primitive(anp.tan, _float(x)))


def floor(x):
    """Element-wise floor; integers become floatx. Its gradient is zero.

    Args:
        x: Tensor or array-like.

    Returns:
        A Tensor.

    Example:
        >>> mk.ops.floor([1.5, -1.5]).numpy()
        array([ 1., -2.], dtype=float32)
    """
    return wrap(call_primitive(_floor, _float(x)))


def ceil(x):
    """Element-wise ceiling; integers become floatx. Its gradient is zero.

    Args:
        x: Tensor or array-like.

    Returns:
        A Tensor.

    Example:
        >>> mk.ops.ceil([1.5, -1.5]).numpy()
        array([ 2., -1.], dtype=float32)
    """
    return wrap(call_primitive(_ceil, _float(x)))


def round(x, decimals=0):  # noqa: A001 (Keras's name)
    """Element-wise rounding to `decimals` places, halves to even (as numpy and Keras).

    Integers keep their dtype. Its gradient is zero.

    Args:
        x: Tensor or array-like.
        decimals: the number of decimal places (negative: tens, hundreds...).

    Returns:
        A Tensor.

    Example:
        >>> mk.ops.round([0.5, 1.5, 2.567], decimals=0).numpy()
        array([0., 2., 3.], dtype=float32)
    """
    return wrap(call_primitive(_round, array_of(x), int(decimals)))


def log2(x):
    """Element-wise base-2 logarithm; integers become floatx.

    Args:
        x: Tensor or array-like.

    Returns:
        A Tensor.

    Example:
        >>> mk.ops.log2([1.0, 8.0]).numpy()
        array([0., 3.], dtype=float32)
    """
    return wrap(call_primitive(_log2, _float(x)))


def log10(x):
    """Element-wise base-10 logarithm; integers become floatx.

    Args:
        x: Tensor or array-like.

    Returns:
        A Tensor.

    Example:
        >>> mk.ops.log10([1.0, 100.0]).numpy().round(5)
        array([0., 2.], dtype=float32)
    """
    return wrap(call_primitive(_log10, _float(x)))


def expm1(x):
    """Element-wise `exp(x) - 1`, exact for small `x`; integers become floatx.

    Args:
        x: Tensor or array-like.

    Returns:
        A Tensor.

    Example:
        >>> float(mk.ops.expm1([1e-10]).numpy()[0])
        1.000000013351432e-10
    """
    return wrap(call_primitive(anp.expm1, _float(x)))


def rsqrt(x):
    """Element-wise `1 / sqrt(x)`; integers become floatx.

    Args:
        x: Tensor or array-like.

    Returns:
        A Tensor.

    Example:
        >>> mk.ops.rsqrt([4.0, 0.25]).numpy()
        array([0.5, 2. ], dtype=float32)
    """
    return wrap(call_primitive(_rsqrt, _float(x)))


def _float(x):
    return as_float(value_of(x))
