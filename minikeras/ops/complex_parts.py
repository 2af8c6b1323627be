"""Parts of complex numbers: real, imag, conjugate (conj), isreal and angle.

minikeras computes in real dtypes; complex ones appear only where Keras's
ops give them (`view_as_complex`, `polar`). On a complex64 (or complex128)
tensor these are numpy's, through autograd's primitives, and `real`, `imag`
and `angle` give float32 (float64), as Keras does. On real input they give
what Keras gives: `real` and `conjugate` are `x` itself (the gradient passes
through), `imag` is zeros of `x`'s dtype, `isreal` is all True, and `angle`
is 0 for `x >= 0` and `pi` below (floatx for integers); `imag` and `angle`
then have a zero gradient, as on Keras's JAX backend.
"""

import autograd.numpy as anp
import numpy as np
from autograd.extend import defvjp, primitive

from minikeras.engine.primitive import call_primitive
from minikeras.ops.core import array_of, as_float, dtype_of, wrap
from minikeras.ops.elementary import _zero
from minikeras.ops.logical import _logic

__all__ = ["angle", "conjugate", "imag", "isreal", "real"]


def _value(x):
    """`x`'s value, and whether it is complex."""
    value = array_of(x)
    dtype = dtype_of(value)
    return value, dtype is not None and dtype.kind == "c"


def real(x):
    """The real part of `x` (float32 of complex64); on real tensors, `x` itself.

    Args:
        x: Tensor or array-like, real or complex.

    Returns:
        A Tensor of `x`'s dtype.

    Raises:
    Example:
        >>> mk.ops.real([1.5, -2.0]).numpy()
        array([ 1.5, -2. ], dtype=float32)
    """
    value, complex_ = _value(x)
    return wrap(call_primitive(anp.real, value) if complex_ else value)


def conjugate(x):
    """The complex conjugate of `x`; on real tensors, `x` itself.

    `ops.conj` is the same op (Keras records both as `Conjugate`).

    Args:
        x: Tensor or array-like, real or complex.

    Returns:
        A Tensor of `x`'s dtype.

    Raises:
    Example:
        >>> mk.ops.conjugate(np.array([1, -2], "int8")).numpy()
        array([ 1, -2], dtype=int8)
    """
    value, complex_ = _value(x)
    return wrap(call_primitive(anp.conj, value) if complex_ else value)


@primitive
def _imag(x):
    return np.zeros_like(x)


@primitive
def _angle(x):
    return np.angle(x)


defvjp(_imag, _zero)
defvjp(_angle, _zero)


def imag(x):
    """The imaginary part of `x` (float32 of complex64); on real tensors, zeros of `x`'s dtype.

    On real tensors its gradient is zero.

    Args:
        x: Tensor or array-like, real or complex.

    Returns:
        A Tensor of `x`'s shape and dtype.

    Raises:
    Example:
        >>> mk.ops.imag([1.5, -2.0]).numpy()
        array([0., 0.], dtype=float32)
    """
    value, complex_ = _value(x)
    return wrap(call_primitive(anp.imag if complex_ else _imag, value))


def angle(x):
    """The argument of `x` in radians; on real tensors, 0 where `x >= 0` and `pi` below.

    On real tensors integers become floatx, NaN stays NaN, and the gradient is zero.

    Args:
        x: Tensor or array-like, real or complex.

    Returns:
        A Tensor.

    Raises:
    Example:
        >>> mk.ops.angle([-2.0, 0.0, 3.0]).numpy()
        array([3.1415927, 0.       , 0.       ], dtype=float32)
    """
    value, complex_ = _value(x)
    return wrap(
        call_primitive(anp.angle, value) if complex_ else call_primitive(_angle, as_float(value))
    )


def isreal(x):
    """Element-wise test for a zero imaginary part; on real tensors, all True.

    Args:
        x: Tensor or array-like, real or complex.

    Returns:
        A boolean Tensor.

    Raises:
    Example:
        >>> mk.ops.isreal([1.0, np.nan]).numpy()
        array([ True,  True])
    """
    return _logic("isreal", np.isreal, _value(x)[0])
