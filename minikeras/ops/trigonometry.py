"""Trigonometric functions: `sin`, `cos`, `tan`, each with its gradient beside it.

Integers are taken as floatx, as in Keras. The VJPs are written with
autograd's numpy, so that a gradient of a gradient can be taken.
"""

import autograd.numpy as anp
import numpy as np
from autograd.extend import defvjp, primitive

from minikeras.ops.core import apply_unary, as_float, value_of

__all__ = ["cos", "sin", "tan"]


@primitive
def _sin(x):
    return np.sin(x)


defvjp(_sin, lambda ans, x: lambda g: g * anp.cos(x))


@primitive
def _cos(x):
    return np.cos(x)


defvjp(_cos, lambda ans, x: lambda g: -g * anp.sin(x))


@primitive
def _tan(x):
    return np.tan(x)


defvjp(_tan, lambda ans, x: lambda g: g * (1 + ans * ans))


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
    return apply_unary("sin", _sin, as_float(value_of(x)))


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
    return apply_unary("cos", _cos, as_float(value_of(x)))


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
    return apply_unary("tan", _tan, as_float(value_of(x)))
