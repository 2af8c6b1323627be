"""Complex numbers and discrete Fourier transforms: view_as_complex, view_as_real,
polar, fft, fft2, ifft2, rfft and irfft, as Keras's ops.

Keras passes complex values as `(real, imag)` pairs of real tensors, and so do
these. Each joins the pair into one complex array (`_join`, our primitive),
runs a numpy.fft primitive (numpy 2 keeps complex64 for float32) and splits
the result with `real` and `imag`, so gradients flow to both parts, of every
order, and float32 stays float32. `fft`, `fft2` and `ifft2` are autograd's;
`rfft` and `irfft` are ours, because autograd's VJPs leak float64, refuse odd
lengths and miss the padding or cutting that `fft_length` asks for. Complex
tensors themselves (`view_as_complex`, `polar`) are complex64, as in Keras.
"""

import autograd.numpy as anp
import numpy as np
from autograd.extend import defvjp, primitive

from minikeras.ops.core import array_of, as_float, getval, op_error, shape_of, wrap
from minikeras.ops.creation import cast
from minikeras.ops.elementary import cos, sin
from minikeras.ops.operands import narrowed_operands

__all__ = ["fft", "fft2", "ifft2", "irfft", "polar", "rfft", "view_as_complex", "view_as_real"]


def _complex(op, x):
    """The complex value of a `(real, imag)` pair of floating tensors of one shape."""
    if not isinstance(x, (tuple, list)) or len(x) != 2:
        raise ValueError(f"{op}: x must be a pair (real, imag) of tensors, got {type(x).__name__}")
    # Read together (`ops.operands`): a numpy float64 part beside a float32 Tensor one
    # takes its precision.
    real, imag = (array_of(part) for part in narrowed_operands(x[0], x[1]))
    if shape_of(real) != shape_of(imag):
        raise ValueError(
            f"{op}: the real and imaginary parts must have one shape, got {shape_of(real)} "
            f"and {shape_of(imag)}"
        )
    for part in (real, imag):
        if getval(part).dtype.kind != "f":
            raise ValueError(f"{op}: both parts must be floating, got dtype {getval(part).dtype}")
    if getval(real).dtype != getval(imag).dtype:
        raise ValueError(
            f"{op}: the real and imaginary parts must have one dtype, got "
            f"{getval(real).dtype} and {getval(imag).dtype}"
        )
    return _join(real, imag)


@primitive
def _join(real, imag):
    """`real + 1j * imag`, complex64 for float32 parts."""
    return real + 1j * imag  # a Python complex is weak: float32 parts give complex64


# autograd's convention: the cotangent of z = a + ib is dL/da - i dL/db.
defvjp(_join, lambda ans, real, imag: anp.real, lambda ans, real, imag: lambda g: -anp.imag(g))


def _pair(value):
    return wrap(anp.real(value)), wrap(anp.imag(value))


def _at_least(op, value, ndim):
    if len(shape_of(value)) < ndim:
        raise ValueError(f"{op}: expected at least {ndim} axes, got shape {shape_of(value)}")
    return value


def fft(x):
    """The discrete Fourier transform along the last axis.

    Args:
        x: a pair `(real, imag)` of floating tensors of one shape.

    Returns:
        The pair `(real, imag)` of the transform, of the same shape.

    Raises:
        ValueError: if `x` is not such a pair, or has no axis.

    Example:
        >>> real, imag = mk.ops.fft(([1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]))
        >>> real.numpy(), imag.numpy()
        (array([1., 1., 1., 1.], dtype=float32), array([0., 0., 0., 0.], dtype=float32))
    """
    return _pair(anp.fft.fft(_at_least("fft", _complex("fft", x), 1)))


def fft2(x):
    """The two-dimensional discrete Fourier transform over the last two axes.

    Args:
        x: a pair `(real, imag)` of floating tensors of one shape (at least
            two axes).

    Returns:
        The pair `(real, imag)` of the transform, of the same shape.

    Raises:
        ValueError: if `x` is not such a pair.

    Example:
        >>> real, imag = mk.ops.fft2((np.ones((2, 2), "float32"), np.zeros((2, 2), "float32")))
        >>> real.numpy()
        array([[4., 0.],
               [0., 0.]], dtype=float32)
    """
    return _pair(anp.fft.fft2(_at_least("fft2", _complex("fft2", x), 2)))


def ifft2(x):
    """The inverse two-dimensional discrete Fourier transform over the last two axes.

    Args:
        x: a pair `(real, imag)` of floating tensors of one shape (at least
            two axes).

    Returns:
        The pair `(real, imag)` of the inverse transform, of the same shape.

    Raises:
        ValueError: if `x` is not such a pair.

    Example:
        >>> spectrum = (np.full((2, 2), 4.0, "float32"), np.zeros((2, 2), "float32"))
        >>> real, imag = mk.ops.ifft2(spectrum)
        >>> real.numpy()
        array([[4., 0.],
               [0., 0.]], dtype=float32)
    """
    return _pair(anp.fft.ifft2(_at_least("ifft2", _complex("ifft2", x), 2)))


def rfft(x, fft_length=None):
    """The discrete Fourier transform of a real signal along the last axis.

    Only the non-negative frequencies: `fft_length // 2 + 1` of them.

    Args:
        x: real Tensor (integers become floatx).
        fft_length: the transform's length; the signal is cut or zero-padded
            to it. Default: the last axis's size.

    Returns:
        The pair `(real, imag)`, each of shape `(..., fft_length // 2 + 1)`.

    Raises:
        ValueError: if `x` has no axis or `fft_length` is not positive.

    Example:
        >>> real, imag = mk.ops.rfft([1.0, 1.0, 1.0, 1.0])
        >>> real.numpy(), imag.numpy()
        (array([4., 0., 0.], dtype=float32), array([0., 0., 0.], dtype=float32))
    """
    value = _at_least("rfft", as_float(array_of(x)), 1)
    _check_length("rfft", fft_length)
    length = shape_of(value)[-1] if fft_length is None else int(fft_length)
    return _pair(_rfft(value, length))


def irfft(x, fft_length=None):
    """The inverse of `rfft`: a real signal from its non-negative frequencies.

    Args:
        x: a pair `(real, imag)` of floating tensors of one shape.
        fft_length: the output's length; default `2 * (n - 1)` for `n`
            frequencies.

    Returns:
        A real Tensor of shape `(..., fft_length)`.

    Raises:
        ValueError: if `x` is not such a pair or `fft_length` is not positive.

    Example:
        >>> mk.ops.irfft(([4.0, 0.0, 0.0], [0.0, 0.0, 0.0])).numpy()
        array([1., 1., 1., 1.], dtype=float32)
    """
    value = _at_least("irfft", _complex("irfft", x), 1)
    _check_length("irfft", fft_length)
    length = 2 * (shape_of(value)[-1] - 1) if fft_length is None else int(fft_length)
    if length < 1:
        raise ValueError(f"irfft: x needs at least 2 frequencies, got shape {shape_of(value)}")
    return wrap(_irfft(value, length))


def _check_length(op, fft_length):
    if fft_length is not None and (
        isinstance(fft_length, bool)
        or not isinstance(fft_length, (int, np.integer))
        or fft_length < 1
    ):
        raise ValueError(f"{op}: fft_length must be a positive int or None, got {fft_length!r}")


def _fit_last(x, size):
    """`x` cut or zero-padded to `size` along its last axis (autograd's functions)."""
    have = shape_of(x)[-1]
    if have >= size:
        return x[..., :size]
    zeros = np.zeros(shape_of(x)[:-1] + (size - have,), dtype=getval(x).dtype)
    return anp.concatenate([x, zeros], axis=-1)


@primitive
def _rfft(x, n):
    return np.fft.rfft(x, n=n, axis=-1)


# dL/dx = Re(fft(c, n)) for the frequencies' cotangent c (dL/dRe - i dL/dIm), back to x's length.
defvjp(
    _rfft,
    lambda ans, x, n: lambda g: _fit_last(anp.real(anp.fft.fft(_fit_last(g, n))), shape_of(x)[-1]),
)


@primitive
def _irfft(z, n):
    return np.fft.irfft(z, n=n, axis=-1)


def _irfft_vjp(ans, z, n):
    # c_k = w_k ifft(g)_k, w = 2 for the frequencies that stand for a conjugate pair, else 1.
    count = n // 2 + 1
    weights = np.full(count, 2.0, dtype=getval(ans).dtype)
    weights[0] = 1.0
    if n % 2 == 0:
        weights[-1] = 1.0
    return lambda g: _fit_last(anp.fft.ifft(g)[..., :count] * weights, shape_of(z)[-1])


defvjp(_irfft, _irfft_vjp)


def _float32(value):
    """A floating value as float32 (Keras's complex results are complex64)."""
    value = as_float(value)
    return value if getval(value).dtype == np.float32 else cast(wrap(value), "float32")._value


def view_as_complex(x):
    """A complex tensor from a real one whose last axis holds (real, imaginary) pairs.

    Args:
        x: real Tensor of shape `(..., 2)`.

    Returns:
        A complex64 Tensor of shape `(...)`.

    Raises:
        ValueError: if the last axis is not of size 2.

    Example:
        >>> mk.ops.view_as_complex([[1.0, 2.0], [3.0, -1.0]]).numpy()
        array([1.+2.j, 3.-1.j], dtype=complex64)
    """
    value = array_of(x)
    if not shape_of(value) or shape_of(value)[-1] != 2:
        raise op_error("view_as_complex", "the last axis must be of size 2 (real, imag)", value)
    value = _float32(value)
    return wrap(_join(value[..., 0], value[..., 1]))


def view_as_real(x):
    """A real tensor of (real, imaginary) pairs along a new last axis.

    Args:
        x: complex (or real: imaginary parts zero) Tensor.

    Returns:
        A real Tensor of shape `x.shape + (2,)`.

    Example:
        >>> mk.ops.view_as_real(np.array([1 + 2j, 3 - 1j], "complex64")).numpy()
        array([[ 1.,  2.],
               [ 3., -1.]], dtype=float32)
    """
    value = array_of(x)
    if getval(value).dtype.kind != "c":
        value = as_float(value)
        return wrap(anp.stack([value, value * 0], axis=-1))
    return wrap(anp.stack([anp.real(value), anp.imag(value)], axis=-1))


def polar(abs_, angle):
    """The complex numbers of the given magnitudes and angles: `abs_ * exp(1j * angle)`.

    Args:
        abs_: real Tensor, the magnitudes (integers become float32).
        angle: real Tensor of a shape that broadcasts with `abs_`, in radians.

    Returns:
        A complex64 Tensor.

    Raises:
        ValueError: if the shapes do not broadcast.

    Example:
        >>> mk.ops.polar([2.0], [0.0]).numpy()
        array([2.+0.j], dtype=complex64)
    """
    magnitude, phase = _float32(array_of(abs_)), _float32(array_of(angle))
    try:
        np.broadcast_shapes(shape_of(magnitude), shape_of(phase))
    except ValueError:
        raise op_error("polar", "shapes cannot be broadcast together", magnitude, phase) from None
    real = (wrap(magnitude) * cos(wrap(phase)))._value
    imag = (wrap(magnitude) * sin(wrap(phase)))._value
    return wrap(_join(real, imag))
