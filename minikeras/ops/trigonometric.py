"""Inverse and hyperbolic trigonometry, element-wise: arcsin, arccos, arctan, arctan2, sinh,
cosh, arcsinh, arccosh, arctanh, and deg2rad, rad2deg, sinc.

Each is one autograd primitive called through `call_primitive`, as `sin` and
`cos` in `ops.elementary`; autograd's own, whose VJPs keep float32, except
`sinc` (autograd's gradient is NaN at 0; ours is 0 there, as Keras's).
Integer and boolean inputs give floatx, as in Keras; `arctan2` broadcasts
its operands and sums its gradients over the broadcast axes (autograd's VJP).
"""

import math

import autograd.numpy as anp
import numpy as np
from autograd.extend import defvjp, primitive

from minikeras.engine.primitive import call_primitive
from minikeras.ops.core import apply_binary, wrap
from minikeras.ops.elementary import _float
from minikeras.ops.math import _float_if_ints
from minikeras.ops.operands import operand_values

__all__ = [
    "arccos",
    "arccosh",
    "arcsin",
    "arcsinh",
    "arctan",
    "arctan2",
    "arctanh",
    "cosh",
    "deg2rad",
    "rad2deg",
    "sinc",
    "sinh",
]


def arcsin(x):
    """Element-wise inverse sine, in radians in `[-pi/2, pi/2]`; integers become floatx.

    Args:
        x: Tensor or array-like.

    Returns:
        A Tensor.

    Example:
        >>> mk.ops.arcsin([0.0, 1.0]).numpy().round(4)
        array([0.    , 1.5708], dtype=float32)
    """
    return wrap(call_primitive(anp.arcsin, _float(x)))


def arccos(x):
    """Element-wise inverse cosine, in radians in `[0, pi]`; integers become floatx.

    Args:
        x: Tensor or array-like.

    Returns:
        A Tensor.

    Example:
        >>> mk.ops.arccos([1.0, 0.0]).numpy().round(4)
        array([0.    , 1.5708], dtype=float32)
    """
    return wrap(call_primitive(anp.arccos, _float(x)))


def arctan(x):
    """Element-wise inverse tangent, in radians in `(-pi/2, pi/2)`; integers become floatx.

    Args:
        x: Tensor or array-like.

    Returns:
        A Tensor.

    Example:
        >>> mk.ops.arctan([0.0, 1.0]).numpy().round(4)
        array([0.    , 0.7854], dtype=float32)
    """
    return wrap(call_primitive(anp.arctan, _float(x)))


def sinh(x):
    """Element-wise hyperbolic sine; integers become floatx.

    Args:
        x: Tensor or array-like.

    Returns:
        A Tensor.

    Example:
        >>> mk.ops.sinh([0.0, 1.0]).numpy().round(4)
        array([0.    , 1.1752], dtype=float32)
    """
    return wrap(call_primitive(anp.sinh, _float(x)))


def cosh(x):
    """Element-wise hyperbolic cosine; integers become floatx.

    Args:
        x: Tensor or array-like.

    Returns:
        A Tensor.

    Example:
        >>> mk.ops.cosh([0.0, 1.0]).numpy().round(4)
        array([1.    , 1.5431], dtype=float32)
    """
    return wrap(call_primitive(anp.cosh, _float(x)))


def arcsinh(x):
    """Element-wise inverse hyperbolic sine; integers become floatx.

    Args:
        x: Tensor or array-like.

    Returns:
        A Tensor.

    Example:
        >>> mk.ops.arcsinh([0.0, 1.0]).numpy().round(4)
        array([0.    , 0.8814], dtype=float32)
    """
    return wrap(call_primitive(anp.arcsinh, _float(x)))


def arccosh(x):
    """Element-wise inverse hyperbolic cosine (NaN below 1); integers become floatx.

    Args:
        x: Tensor or array-like.

    Returns:
        A Tensor.

    Example:
        >>> mk.ops.arccosh([1.0, 2.0]).numpy().round(4)
        array([0.   , 1.317], dtype=float32)
    """
    return wrap(call_primitive(anp.arccosh, _float(x)))


def arctanh(x):
    """Element-wise inverse hyperbolic tangent (infinite at +-1); integers become floatx.

    Args:
        x: Tensor or array-like.

    Returns:
        A Tensor.

    Example:
        >>> mk.ops.arctanh([0.0, 0.5]).numpy().round(4)
        array([0.    , 0.5493], dtype=float32)
    """
    return wrap(call_primitive(anp.arctanh, _float(x)))


def deg2rad(x):
    """Element-wise degrees to radians, `x * pi / 180`; integers become floatx.

    Args:
        x: Tensor or array-like.

    Returns:
        A Tensor.

    Example:
        >>> mk.ops.deg2rad([180.0, 90.0]).numpy().round(4)
        array([3.1416, 1.5708], dtype=float32)
    """
    return wrap(call_primitive(anp.deg2rad, _float(x)))


def rad2deg(x):
    """Element-wise radians to degrees, `x * 180 / pi`; integers become floatx.

    Args:
        x: Tensor or array-like.

    Returns:
        A Tensor.

    Example:
        >>> mk.ops.rad2deg([np.pi, np.pi / 2]).numpy()
        array([180.,  90.], dtype=float32)
    """
    return wrap(call_primitive(anp.rad2deg, _float(x)))


def arctan2(x1, x2):
    """Element-wise angle of the point `(x2, x1)`, in radians in `[-pi, pi]`.

    The quadrant comes from both signs, unlike `arctan(x1 / x2)`. Integer
    operands give floatx; the shapes broadcast.

    Args:
        x1: Tensor or array-like, the y-coordinates.
        x2: Tensor or array-like, the x-coordinates, broadcastable with `x1`.

    Returns:
        A Tensor.

    Raises:
        ValueError: if the shapes do not broadcast.

    Example:
        >>> mk.ops.arctan2([1.0, -1.0], [-1.0, -1.0]).numpy().round(4)
        array([ 2.3562, -2.3562], dtype=float32)
    """
    a, b = operand_values(x1, x2)  # (a numpy float64 array beside a Tensor: narrowed)
    return apply_binary("arctan2", anp.arctan2, _float_if_ints(a, b), b)


@primitive
def _sinc(x):
    return np.sinc(x)


# d sinc / dx near 0 by its series: sum over k >= 1 of (-1)^k 2k pi^2k x^(2k-1) / (2k+1)!.
_SINC_SERIES = tuple(
    (-1) ** k * 2 * k * np.pi ** (2 * k) / math.factorial(2 * k + 1) for k in (1, 2, 3, 4)
)


def _sinc_vjp(ans, x):
    # d sinc / dx = (cos(pi x) - sinc(x)) / x away from 0. Near 0 that difference cancels
    # (81% off at 1e-4 in float32) and autograd's divides by 0: the series there (to 1e-8 at
    # |x| = 0.1), which also gives the second derivative at 0, -pi^2 / 3.
    def vjp(g):
        near = anp.abs(x) < 0.1
        safe = anp.where(near, 1.0, x)
        far = (anp.cos(np.pi * safe) - ans) / safe
        square = x * x
        c1, c2, c3, c4 = _SINC_SERIES
        series = x * (c1 + square * (c2 + square * (c3 + square * c4)))
        return g * anp.where(near, series, far)

    return vjp


defvjp(_sinc, _sinc_vjp)


def sinc(x):
    """Element-wise normalized sinc, `sin(pi x) / (pi x)`, 1 at 0; integers become floatx.

    Args:
        x: Tensor or array-like.

    Returns:
        A Tensor.

    Example:
        >>> mk.ops.sinc([0.0, 0.5, 2.5]).numpy().round(4)
        array([1.    , 0.6366, 0.1273], dtype=float32)
    """
    return wrap(call_primitive(_sinc, _float(x)))
