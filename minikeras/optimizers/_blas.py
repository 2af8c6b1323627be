"""`y += a * x` in one pass, through the BLAS numpy ships: the big SGD updates.

numpy has no fused "scale and add" of two arrays: `p -= lr * g` writes
`lr * g` into a temporary and reads it back, two passes over memory where
one would do, and at a 784x256 kernel memory is the whole cost. BLAS has
that operation (`axpy`: `y = a x + y`; OpenBLAS also `axpby`:
`y = a x + b y`), and numpy's wheels carry OpenBLAS, built as
`scipy-openblas` with its symbols prefixed. This module finds that library
next to numpy, takes its single and double precision `axpy`/`axpby`, checks
them once on small arrays against numpy, and uses them for arrays of at
least `MIN_SIZE` entries that are C-contiguous, of one dtype and do not
overlap. Anywhere else (another numpy build, a check that failed, a small or
strided array) the same result comes from numpy, in two passes.

BLAS computes `a * x + y` with one rounding where its kernel fuses the
multiply and the add, numpy with two: the new values may differ from
numpy's by a rounding of `a * x` (many ulps of the result where `y` and
`a * x` nearly cancel), and with the CPU's kernel. For one array the choice
depends only on its size, dtype, layout and the factors (a factor of 0 goes
to numpy, which carries a nan of the other term), never on who holds it, so
an update gives the same bits whichever buffer it writes.

Threads: OpenBLAS's threads are numpy's own, set by `OPENBLAS_NUM_THREADS`.
"""

import ctypes
import glob
import os

import numpy as np

__all__ = ["MIN_SIZE", "add_scaled", "available", "scale_and_add"]

# Below this many entries the foreign call (about 1 µs) costs more than a pass saves.
MIN_SIZE = 16384

# How each known build names its routines, and the integer type of their sizes.
_SYMBOLS = (("scipy_cblas_{}64_", ctypes.c_int64), ("scipy_cblas_{}", ctypes.c_int))
_PRECISIONS = ((np.float32, ctypes.c_float, "s"), (np.float64, ctypes.c_double, "d"))


def _library_paths():
    """numpy's bundled OpenBLAS: `numpy.libs/` (Linux, Windows) or `numpy/.dylibs/` (macOS)."""
    here = os.path.dirname(np.__file__)
    found = []
    for folder in (here + ".libs", os.path.join(here, ".dylibs")):
        found += sorted(glob.glob(os.path.join(folder, "libscipy_openblas*")))
    return found


def _routines(library):
    """`{dtype: (axpy, axpby)}` from one library, or None if it lacks them."""
    for pattern, integer in _SYMBOLS:
        routines = {}
        for dtype, scalar, letter in _PRECISIONS:
            try:
                axpy = getattr(library, pattern.format(letter + "axpy"))
                axpby = getattr(library, pattern.format(letter + "axpby"))
            except AttributeError:
                break
            pointer = ctypes.c_void_p
            axpy.argtypes = [integer, scalar, pointer, integer, pointer, integer]
            axpby.argtypes = [integer, scalar, pointer, integer, scalar, pointer, integer]
            axpy.restype = axpby.restype = None
            routines[np.dtype(dtype)] = (axpy, axpby)
        if len(routines) == 2:
            return routines
    return None


def _checked(routines):
    """The routines if they give numpy's answer on small arrays (strides and all), else None."""
    rng = np.random.default_rng(0)
    for dtype, (axpy, axpby) in routines.items():
        x, y = rng.standard_normal((2, 37)).astype(dtype)
        got = y.copy()
        axpy(got.size, -0.5, x.ctypes.data, 1, got.ctypes.data, 1)
        if not np.allclose(got, y - 0.5 * x, rtol=1e-5, atol=1e-6):
            return None
        got = y.copy()
        axpby(got.size, 2.0, x.ctypes.data, 1, 0.25, got.ctypes.data, 1)
        if not np.allclose(got, 2.0 * x + 0.25 * y, rtol=1e-5, atol=1e-6):
            return None
    return routines


def _load():
    """`(routines, the largest size their integers hold)`, or `(None, 0)`."""
    for path in _library_paths():
        try:
            library = ctypes.CDLL(path)
            routines = _routines(library)
        except OSError:
            continue
        if routines is not None:
            wide = getattr(library, "scipy_cblas_saxpy64_", None) is not None
            return _checked(routines), (2**63 - 1 if wide else 2**31 - 1)
    return None, 0


_ROUTINES, _MAX_SIZE = _load()


def available():
    """Whether the updates use BLAS here (numpy's bundled OpenBLAS was found and checked).

    Returns:
        A bool.

    Example:
        >>> isinstance(mk.optimizers._blas.available(), bool)
        True
    """
    return _ROUTINES is not None


# numpy's C function itself, without the Python dispatcher of `__array_function__` around it.
_may_share_memory = getattr(np.may_share_memory, "_implementation", np.may_share_memory)


def _blas_for(y, x, *factors):
    """The routines for `y` and `x`, or None where numpy must do it.

    A factor of 0 goes to numpy: BLAS then skips its term, so a nan or inf
    there would not reach `y` as numpy (and Keras) carry it.
    """
    if (
        _ROUTINES is None
        or y.size < MIN_SIZE
        or y.size > _MAX_SIZE
        or 0.0 in factors
        or x.dtype != y.dtype
        or x.shape != y.shape
        or not (y.flags.c_contiguous and x.flags.c_contiguous and y.flags.writeable)
        or _may_share_memory(x, y)
    ):
        return None
    return _ROUTINES.get(y.dtype)


def _address(array):
    """`array`'s data as a BLAS pointer argument, without `array.ctypes` (~2 µs a read).

    A ctypes view of the buffer (`from_buffer`, a third of that): only of a
    writeable one; a read-only array (a gradient someone froze) gives its
    address the documented way.
    """
    try:
        return _byref(_from_buffer(array))
    except (TypeError, BufferError):
        return array.ctypes.data


_byref, _from_buffer = ctypes.byref, ctypes.c_char.from_buffer


def add_scaled(y, alpha, x, scratch):
    """`y += alpha * x`, in place.

    Args:
        y: the array to update (written).
        alpha: a Python float.
        x: an array of `y`'s shape (read only).
        scratch: an array of `y`'s shape and dtype, for numpy's two-pass way.

    Returns:
        None.

    Example:
        >>> y, x = np.ones(3, np.float32), np.full(3, 2.0, np.float32)
        >>> mk.optimizers._blas.add_scaled(y, -0.5, x, np.empty_like(y))
        >>> y
        array([0., 0., 0.], dtype=float32)
    """
    routines = _blas_for(y, x, alpha)
    if routines is None:
        if alpha != 1.0:
            x = np.multiply(x, alpha, out=scratch)
        np.add(y, x, out=y)
    else:
        routines[0](y.size, alpha, _address(x), 1, _byref(_from_buffer(y)), 1)  # (y is writeable)


def scale_and_add(y, beta, alpha, x, scratch):
    """`y = beta * y + alpha * x`, in place (a momentum's update).

    Args:
        y: the array to update (written).
        beta: a Python float, the factor of `y`.
        alpha: a Python float, the factor of `x`.
        x: an array of `y`'s shape (read only).
        scratch: an array of `y`'s shape and dtype, for numpy's way.

    Returns:
        None.

    Example:
        >>> y, x = np.ones(2, np.float32), np.ones(2, np.float32)
        >>> mk.optimizers._blas.scale_and_add(y, 0.5, 2.0, x, np.empty_like(y))
        >>> y
        array([2.5, 2.5], dtype=float32)
    """
    routines = _blas_for(y, x, alpha, beta)
    if routines is None:
        np.multiply(y, beta, out=y)
        np.multiply(x, alpha, out=scratch)
        np.add(y, scratch, out=y)
    else:
        routines[1](y.size, alpha, _address(x), 1, beta, _byref(_from_buffer(y)), 1)
