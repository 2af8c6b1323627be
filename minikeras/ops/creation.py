"""Making Tensors: constants, ranges, conversions and casts."""

import numpy as np

from minikeras import config
from minikeras.engine.tensor import (
    Tensor,
    getval,  # autograd's, through the engine
)
from minikeras.ops.core import value_of, wrap

__all__ = [
    "arange",
    "array",
    "cast",
    "convert_to_tensor",
    "empty",
    "empty_like",
    "eye",
    "full",
    "full_like",
    "ones",
    "ones_like",
    "stop_gradient",
    "zeros",
    "zeros_like",
]


def convert_to_tensor(x, dtype=None):
    """Converts array-like data to a Tensor (a Tensor is returned as it is).

    Python floats become float32 and Python ints int32, as in Keras; numpy
    arrays keep their dtype unless `dtype` is given.

    Args:
        x: a Tensor, numpy array, Python number or nested list.
        dtype: optional dtype.

    Returns:
        A Tensor.

    Raises:
        TypeError: if `dtype` is not a dtype.
        OverflowError: for a Python int outside int32's range without `dtype`.

    Example:
        >>> mk.ops.convert_to_tensor([1.0, 2.0]).dtype
        dtype('float32')
        >>> mk.ops.convert_to_tensor([1, 2]).dtype
        dtype('int32')
    """
    if isinstance(x, Tensor) and type(x) is Tensor and dtype is None:
        return x
    if isinstance(x, Tensor):
        value = value_of(x)
        if dtype is not None and value.dtype != np.dtype(config.standardize_dtype(dtype)):
            value = value.astype(config.standardize_dtype(dtype))
        return wrap(value)
    return Tensor(x, dtype=dtype)


def cast(x, dtype):
    """Converts to `dtype`; gradients flow through float-to-float casts.

    Args:
        x: Tensor or array-like.
        dtype: the target dtype.

    Returns:
        A Tensor.

    Raises:
        TypeError: if `dtype` is not a dtype.

    Example:
        >>> mk.ops.cast([1.7, -1.2], "int32").numpy()
        array([ 1, -1], dtype=int32)
    """
    value = value_of(x)
    if not isinstance(dtype, np.dtype) or not dtype.isnative:
        dtype = np.dtype(config.standardize_dtype(dtype))
    if getattr(value, "dtype", None) == dtype:
        return wrap(value)
    if dtype.kind not in "fc":
        value = getval(value)
    return wrap(value.astype(dtype) if hasattr(value, "astype") else np.asarray(value, dtype))


def array(x, dtype=None):
    """A Tensor of `x`: `convert_to_tensor(x, dtype)`.

    Args:
        x: a Tensor, numpy array, Python number or nested list.
        dtype: optional dtype.

    Returns:
        A Tensor.

    Example:
        >>> mk.ops.array([1, 2]).dtype, mk.ops.array([1.0, 2.0]).dtype
        (dtype('int32'), dtype('float32'))
    """
    return convert_to_tensor(x, dtype)


def stop_gradient(variable):
    """Returns `variable` as a constant: no gradient flows back through it.

    Args:
        variable: Tensor, Variable or array-like (Keras's name for it).

    Returns:
        A Tensor.

    Example:
        >>> mk.ops.stop_gradient([1.0]).numpy()
        array([1.], dtype=float32)
    """
    return wrap(getval(value_of(variable)))


def _dtype_or(dtype, default):
    """`dtype` in our spelling (a Python `float` means floatx), else `default`."""
    return default if dtype is None else config.standardize_dtype(dtype)


def _shape(shape):
    return (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)


def zeros(shape, dtype=None):
    """A Tensor of zeros.

    Args:
        shape: an int or tuple of ints.
        dtype: float32 unless given.

    Returns:
        A Tensor.

    Example:
        >>> mk.ops.zeros((2,)).numpy()
        array([0., 0.], dtype=float32)
    """
    return wrap(np.zeros(_shape(shape), dtype=config.standardize_dtype(dtype)))


def ones(shape, dtype=None):
    """A Tensor of ones.

    Args:
        shape: an int or tuple of ints.
        dtype: float32 unless given.

    Returns:
        A Tensor.

    Example:
        >>> mk.ops.ones((2,)).numpy()
        array([1., 1.], dtype=float32)
    """
    return wrap(np.ones(_shape(shape), dtype=config.standardize_dtype(dtype)))


def full(shape, fill_value, dtype=None):
    """A Tensor filled with `fill_value`.

    Args:
        shape: an int or tuple of ints.
        fill_value: the value; a Python float gives float32, an int gives int.
        dtype: optional dtype.

    Returns:
        A Tensor.

    Example:
        >>> mk.ops.full((2,), 7.0).numpy()
        array([7., 7.], dtype=float32)
    """
    fill = np.asarray(getval(value_of(fill_value)))
    if dtype is None and fill.dtype.kind == "f":
        dtype = config.floatx()
    return wrap(np.full(_shape(shape), fill, dtype=_dtype_or(dtype, fill.dtype)))


def zeros_like(x, dtype=None):
    """Zeros of the shape (and dtype, unless given) of `x`.

    Args:
        x: Tensor or array-like.
        dtype: optional dtype.

    Returns:
        A Tensor.

    Example:
        >>> mk.ops.zeros_like(mk.ops.ones((2, 1))).shape
        (2, 1)
    """
    value = getval(value_of(x))
    return wrap(np.zeros(np.shape(value), dtype=_dtype_or(dtype, np.result_type(value))))


def ones_like(x, dtype=None):
    """Ones of the shape (and dtype, unless given) of `x`.

    Args:
        x: Tensor or array-like.
        dtype: optional dtype.

    Returns:
        A Tensor.

    Example:
        >>> mk.ops.ones_like(mk.ops.zeros((2,))).numpy()
        array([1., 1.], dtype=float32)
    """
    value = getval(value_of(x))
    return wrap(np.ones(np.shape(value), dtype=_dtype_or(dtype, np.result_type(value))))


def full_like(x, fill_value, dtype=None):
    """`fill_value` in the shape (and dtype, unless given) of `x`.

    Args:
        x: Tensor or array-like.
        fill_value: the value.
        dtype: optional dtype.

    Returns:
        A Tensor.

    Example:
        >>> mk.ops.full_like(mk.ops.zeros((2,)), 3).numpy()
        array([3., 3.], dtype=float32)
    """
    value = getval(value_of(x))
    dtype = _dtype_or(dtype, np.result_type(value))
    return wrap(np.full(np.shape(value), getval(value_of(fill_value)), dtype=dtype))


def arange(start, stop=None, step=None, dtype=None):
    """Evenly spaced values in `[start, stop)`.

    Integer arguments give int32, as Keras gives them (int64 past int32's
    range); a float argument gives floatx.

    Args:
        start: the first value (or the stop, when `stop` is None).
        stop: the end, excluded.
        step: the spacing; None (Keras's default) means 1.
        dtype: optional dtype.

    Returns:
        A 1-d Tensor.

    Example:
        >>> mk.ops.arange(3).numpy()
        array([0, 1, 2], dtype=int32)
        >>> mk.ops.arange(0.0, 1.0, 0.5).numpy()
        array([0. , 0.5], dtype=float32)
    """
    if stop is None:
        start, stop = 0, start
    values = np.arange(start, stop, 1 if step is None else step)
    if dtype is None and values.dtype.kind == "f":
        dtype = config.floatx()
    elif dtype is None and values.dtype.kind == "i" and _fits_int32(values):
        dtype = "int32"
    return wrap(values if dtype is None else values.astype(config.standardize_dtype(dtype)))


def _fits_int32(values):
    bounds = np.iinfo(np.int32)
    return not values.size or (bounds.min <= values.min() and values.max() <= bounds.max)


def empty(shape, dtype=None):
    """A Tensor of `shape` (filled with zeros: numpy's uninitialised memory is never handed out).

    Args:
        shape: an int or tuple of ints.
        dtype: float32 unless given.

    Returns:
        A Tensor.

    Example:
        >>> mk.ops.empty((2, 3)).shape
        (2, 3)
    """
    return zeros(shape, dtype)


def empty_like(x, dtype=None):
    """A Tensor of the shape (and dtype, unless given) of `x`, filled with zeros.

    Args:
        x: Tensor or array-like.
        dtype: optional dtype.

    Returns:
        A Tensor.

    Example:
        >>> mk.ops.empty_like(np.ones((2, 1), "int8")).dtype
        dtype('int8')
    """
    return zeros_like(x, dtype)


def eye(N, M=None, k=0, dtype=None):  # noqa: N803 (Keras's and numpy's names)
    """A 2-d Tensor with ones on the `k`-th diagonal.

    Args:
        N: the number of rows.
        M: the number of columns (`N` if None).
        k: the diagonal offset.
        dtype: float32 unless given.

    Returns:
        A Tensor of shape `(N, M)`.

    Example:
        >>> mk.ops.eye(2).numpy()
        array([[1., 0.],
               [0., 1.]], dtype=float32)
    """
    return wrap(np.eye(N, M, k, dtype=config.standardize_dtype(dtype)))
