"""Parts of complex numbers, on real tensors: real, imag, conjugate (conj), isreal and angle.

minikeras has no complex dtypes, so these give what Keras gives for real
input: `real` and `conjugate` are `x` itself (the gradient passes through),
`imag` is zeros of `x`'s dtype, `isreal` is all True, and `angle` is 0 for
`x >= 0` and `pi` below (floatx for integers); `imag` and `angle` have a zero
gradient, as on Keras's JAX backend. A complex array is refused with a
`TypeError`.
"""

import numpy as np
from autograd.extend import defvjp, primitive

from minikeras.engine.primitive import call_primitive
from minikeras.ops.core import array_of, as_float, dtype_of, wrap
from minikeras.ops.elementary import _zero
from minikeras.ops.logical import _logic

__all__ = ["angle", "conjugate", "imag", "isreal", "real"]


def _real_value(op, x):
    """`x`'s value, refused if complex."""
    value = array_of(x)
    dtype = dtype_of(value)
    if dtype is not None and dtype.kind == "c":
        raise TypeError(f"{op}: minikeras has no complex dtypes; got an x of dtype {dtype}")
    return value


def real(x):
    """The real part of `x`: on minikeras's real tensors, `x` itself.

    Args:
        x: Tensor or array-like, real.

    Returns:
        A Tensor of `x`'s dtype.

    Raises:
        TypeError: if `x` is complex (minikeras has no complex dtypes).

    Example:
        >>> mk.ops.real([1.5, -2.0]).numpy()
        array([ 1.5, -2. ], dtype=float32)
    """
    return wrap(_real_value("real", x))


def conjugate(x):
    """The complex conjugate of `x`: on minikeras's real tensors, `x` itself.

    `ops.conj` is the same op (Keras records both as `Conjugate`).

    Args:
        x: Tensor or array-like, real.

    Returns:
        A Tensor of `x`'s dtype.

    Raises:
        TypeError: if `x` is complex (minikeras has no complex dtypes).

    Example:
        >>> mk.ops.conjugate(np.array([1, -2], "int8")).numpy()
        array([ 1, -2], dtype=int8)
    """
    return wrap(_real_value("conjugate", x))


@primitive
def _imag(x):
    return np.zeros_like(x)


@primitive
def _angle(x):
    return np.angle(x)


defvjp(_imag, _zero)
defvjp(_angle, _zero)


def imag(x):
    """The imaginary part of `x`: on minikeras's real tensors, zeros of `x`'s dtype.

    Its gradient is zero.

    Args:
        x: Tensor or array-like, real.

    Returns:
        A Tensor of `x`'s shape and dtype.

    Raises:
        TypeError: if `x` is complex (minikeras has no complex dtypes).

    Example:
        >>> mk.ops.imag([1.5, -2.0]).numpy()
        array([0., 0.], dtype=float32)
    """
    return wrap(call_primitive(_imag, _real_value("imag", x)))


def angle(x):
    """The argument of `x` in radians: on real tensors, 0 where `x >= 0` and `pi` below.

    Integers become floatx; NaN stays NaN. Its gradient is zero.

    Args:
        x: Tensor or array-like, real.

    Returns:
        A Tensor.

    Raises:
        TypeError: if `x` is complex (minikeras has no complex dtypes).

    Example:
        >>> mk.ops.angle([-2.0, 0.0, 3.0]).numpy()
        array([3.1415927, 0.       , 0.       ], dtype=float32)
    """
    return wrap(call_primitive(_angle, as_float(_real_value("angle", x))))


def isreal(x):
    """Element-wise test for a zero imaginary part: on real tensors, all True.

    Args:
        x: Tensor or array-like, real.

    Returns:
        A boolean Tensor.

    Raises:
        TypeError: if `x` is complex (minikeras has no complex dtypes).

    Example:
        >>> mk.ops.isreal([1.0, np.nan]).numpy()
        array([ True,  True])
    """
    return _logic("isreal", np.isreal, _real_value("isreal", x))
