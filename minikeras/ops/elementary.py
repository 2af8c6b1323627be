"""Elementary functions, element-wise: exp, log, log1p, sqrt, tanh, abs and sign.

Functions of one tensor, each one autograd primitive (`tanh` ours, so its
gradient comes from its output). Integer inputs to the transcendental ones
give float32. The arithmetic operators, `-x` and `x * x` included, are in
`ops.math`.
"""

import autograd.numpy as anp
import numpy as np
from autograd.extend import defvjp, primitive

from minikeras.engine.primitive import call_primitive
from minikeras.ops.core import array_of, as_float, value_of, wrap

__all__ = ["abs", "exp", "log", "log1p", "sign", "sqrt", "tanh"]


def abs(x):  # noqa: A001 (Keras's name)
    """Element-wise absolute value.

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


def _float(x):
    return as_float(value_of(x))
