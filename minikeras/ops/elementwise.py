"""More element-wise functions Keras code uses: `floor`, `ceil`, `round`, `log2`, `log10`,
`expm1`, `rsqrt`, each with its gradient beside it.

As in Keras, integers become floatx (except in `round`, which keeps them),
and rounding has a zero gradient. The VJPs are written with autograd's
numpy, so that a gradient of a gradient can be taken.
"""

import autograd.numpy as anp
import numpy as np
from autograd.extend import defvjp, primitive

from minikeras.ops.core import apply_unary, as_float, value_of

__all__ = ["ceil", "expm1", "floor", "log10", "log2", "round", "rsqrt"]


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

_LN2, _LN10 = float(np.log(2.0)), float(np.log(10.0))


@primitive
def _log2(x):
    return np.log2(x)


defvjp(_log2, lambda ans, x: lambda g: g / (x * _LN2))


@primitive
def _log10(x):
    return np.log10(x)


defvjp(_log10, lambda ans, x: lambda g: g / (x * _LN10))


@primitive
def _expm1(x):
    return np.expm1(x)


defvjp(_expm1, lambda ans, x: lambda g: g * (ans + 1))


@primitive
def _rsqrt(x):
    return 1 / np.sqrt(x)


defvjp(_rsqrt, lambda ans, x: lambda g: -0.5 * g * ans * ans * ans)


def _float_op(op, function, x):
    return apply_unary(op, function, as_float(value_of(x)))


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
    return _float_op("floor", _floor, x)


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
    return _float_op("ceil", _ceil, x)


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
    return apply_unary("round", _round, value_of(x), int(decimals))


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
    return _float_op("log2", _log2, x)


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
    return _float_op("log10", _log10, x)


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
    return _float_op("expm1", _expm1, x)


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
    return _float_op("rsqrt", _rsqrt, x)
