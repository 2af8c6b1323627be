"""Reading a tensor on the host: its static shape, rank, size and dtype, whether it is a
tensor, and its values as a numpy array."""

import numpy as np

from minikeras import config
from minikeras.engine.tensor import Tensor, getval
from minikeras.engine.variable import Variable
from minikeras.ops.core import value_of
from minikeras.ops.symbolic import SymbolicValueError

__all__ = ["convert_to_numpy", "dtype", "is_tensor", "ndim", "shape", "size"]


def shape(x):
    """The shape of `x` as a tuple (`None` for a size a symbolic `Input` leaves open).

    Args:
        x: a Tensor, Variable, symbolic tensor, numpy array or array-like.

    Returns:
        A tuple of ints (and `None`).

    Example:
        >>> mk.ops.shape(mk.ops.ones((2, 3)))
        (2, 3)
        >>> mk.ops.shape(mk.Input((None, 4)))
        (None, None, 4)
    """
    known = getattr(x, "shape", None)
    if isinstance(known, tuple):
        return known
    return np.shape(getval(value_of(x)))


def convert_to_numpy(x):
    """The values of `x` as a numpy array, outside any gradient recording.

    Args:
        x: a Tensor, Variable, numpy array, Python number or nested list.

    Returns:
        A numpy array: a Tensor's values in its dtype; anything else as
        `np.asarray` makes it (a Python float is float64, as in Keras).

    Raises:
        ValueError: for a symbolic tensor (a functional `Input` or what a
            layer made of one), which has no values, as in Keras.

    Example:
        >>> mk.ops.convert_to_numpy(mk.ops.ones((2,)))
        array([1., 1.], dtype=float32)
    """
    if isinstance(x, Tensor):
        return np.asarray(getval(value_of(x)))
    try:
        return np.asarray(getval(x))
    except SymbolicValueError:
        raise ValueError(
            "convert_to_numpy: a symbolic tensor has no values (it stands for the data a "
            f"functional model will be called on; shape {getattr(x, 'shape', '?')}); call the "
            "model on data"
        ) from None


def ndim(x):
    """The number of axes of `x` (known for a symbolic tensor too).

    Args:
        x: a Tensor, Variable, symbolic tensor, numpy array or array-like.

    Returns:
        An int.

    Example:
        >>> mk.ops.ndim(mk.ops.ones((2, 3))), mk.ops.ndim(mk.Input((None, 4)))
        (2, 3)
    """
    return len(shape(x))


def size(x):
    """The number of values in `x`: the product of its shape.

    Args:
        x: a Tensor, Variable, symbolic tensor with a known shape, numpy array
            or array-like.

    Returns:
        An int.

    Raises:
        ValueError: for a symbolic tensor with a size left open (Keras
            records a node there; minikeras's answer is a plain int).

    Example:
        >>> mk.ops.size(mk.ops.ones((2, 3)))
        6
    """
    dims = shape(x)
    if None in dims:
        raise ValueError(f"size: the shape {dims} has a size left open; its product is unknown")
    return int(np.prod(dims, dtype=np.int64))


def dtype(x):
    """The name of the dtype of `x` (`"float32"`, `"int32"`, ...).

    Args:
        x: a Tensor, Variable, symbolic tensor, numpy array, or a Python
            number or list (read as `convert_to_tensor` reads it: float32 or
            int32; Keras refuses these).

    Returns:
        A dtype name.

    Example:
        >>> mk.ops.dtype(np.ones(2, "int8")), mk.ops.dtype(mk.Input((3,)))
        ('int8', 'float32')
    """
    known = getattr(x, "dtype", None)
    if known is None:
        known = Tensor(x).dtype
    return config.standardize_dtype(known)


def is_tensor(x):
    """Whether `x` is a minikeras Tensor (as Keras, False for a Variable, a symbolic
    tensor, a numpy array or a Python number).

    Args:
        x: anything.

    Returns:
        A bool.

    Example:
        >>> mk.ops.is_tensor(mk.ops.ones(2)), mk.ops.is_tensor(np.ones(2))
        (True, False)
    """
    return isinstance(x, Tensor) and not isinstance(x, Variable)
