"""Reading a tensor on the host: its static shape and its values as a numpy array."""

import numpy as np

from minikeras.engine.tensor import Tensor, getval
from minikeras.ops.core import value_of
from minikeras.ops.symbolic import SymbolicValueError

__all__ = ["convert_to_numpy", "shape"]


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
