"""Tests of values, element-wise, giving booleans: isclose, allclose, isneginf, isposinf,
signbit and isin.

As the tests of `ops.logical` (`isnan`, `isinf`), each reads its operands'
values, untraced, and gives a boolean Tensor (`allclose` a 0-d one); none
has a gradient. Operands broadcast as in numpy.
"""

import numpy as np

from minikeras.ops.logical import _logic

__all__ = ["allclose", "isclose", "isin", "isneginf", "isposinf", "signbit"]


def isclose(x1, x2, rtol=1e-5, atol=1e-8, equal_nan=False):
    """Element-wise `|x1 - x2| <= atol + rtol * |x2|`, as a boolean Tensor.

    Args:
        x1: Tensor or array-like.
        x2: Tensor or array-like, broadcastable with `x1`.
        rtol: the tolerance relative to `|x2|`.
        atol: the absolute tolerance.
        equal_nan: whether two NaNs count as close.

    Returns:
        A boolean Tensor.

    Raises:
        ValueError: if the shapes do not broadcast.

    Example:
        >>> mk.ops.isclose([1.0, 1.0, np.nan], [1.0 + 1e-7, 1.1, np.nan]).numpy()
        array([ True, False, False])
    """
    return _logic("isclose", np.isclose, x1, x2, rtol=rtol, atol=atol, equal_nan=equal_nan)


def allclose(x1, x2, rtol=1e-5, atol=1e-8, equal_nan=False):
    """Whether every element of `x1` is close to `x2`'s (see `isclose`), as a 0-d boolean Tensor.

    Args:
        x1: Tensor or array-like.
        x2: Tensor or array-like, broadcastable with `x1`.
        rtol: the tolerance relative to `|x2|`.
        atol: the absolute tolerance.
        equal_nan: whether two NaNs count as close.

    Returns:
        A 0-d boolean Tensor.

    Raises:
        ValueError: if the shapes do not broadcast.

    Example:
        >>> bool(mk.ops.allclose([1.0, 2.0], [1.0, 2.0 + 1e-6]))
        True
    """
    return _logic("allclose", np.allclose, x1, x2, rtol=rtol, atol=atol, equal_nan=equal_nan)


def isneginf(x):
    """Element-wise test for negative infinity (never true for integers).

    Args:
        x: Tensor or array-like.

    Returns:
        A boolean Tensor.

    Example:
        >>> mk.ops.isneginf([-np.inf, np.inf, 0.0]).numpy()
        array([ True, False, False])
    """
    return _logic("isneginf", _infinite_below_zero, x)


def isposinf(x):
    """Element-wise test for positive infinity (never true for integers).

    Args:
        x: Tensor or array-like.

    Returns:
        A boolean Tensor.

    Example:
        >>> mk.ops.isposinf([-np.inf, np.inf, 0.0]).numpy()
        array([False,  True, False])
    """
    return _logic("isposinf", _infinite_above_zero, x)


def _infinite_below_zero(value):
    return np.isinf(value) & (value < 0)  # (numpy's isneginf refuses booleans)


def _infinite_above_zero(value):
    return np.isinf(value) & (value > 0)


def signbit(x):
    """Element-wise test of the sign bit: true for negative numbers and for `-0.0`.

    Args:
        x: Tensor or array-like.

    Returns:
        A boolean Tensor.

    Example:
        >>> mk.ops.signbit([-1.0, -0.0, 0.0, 2.0]).numpy()
        array([ True,  True, False, False])
    """
    return _logic("signbit", np.signbit, x)


def isin(x1, x2, assume_unique=False, invert=False):
    """Element-wise test of whether each element of `x1` occurs anywhere in `x2`.

    Args:
        x1: Tensor or array-like, the elements to look for.
        x2: Tensor or array-like, the values to look among (any shape).
        assume_unique: whether both hold distinct values (a speed-up).
        invert: give the opposite answer (`not in`).

    Returns:
        A boolean Tensor of `x1`'s shape.

    Example:
        >>> mk.ops.isin([[1, 2], [3, 4]], [2, 4, 6]).numpy()
        array([[False,  True],
               [False,  True]])
    """
    return _logic("isin", np.isin, x1, x2, assume_unique=assume_unique, invert=invert)
