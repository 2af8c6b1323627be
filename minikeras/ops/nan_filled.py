"""The nan-skipping ops that count nan as the value that changes nothing: `nansum`,
`nanprod`, `nanmax`, `nanmin`, `nanargmax`, `nanargmin`, `nancumsum`, `nancumprod`.

Each is its plain twin on `x` with every nan replaced by that value (0 for
sums, 1 for products, -inf for a maximum...), through one helper, `_filled`;
nan then gets no gradient. Where a slice holds only nan, the result is what
Keras gives: nan for the extremes, -1 for the arg-extremes, the identity for
sums and products. Integer and boolean input has no nan: the plain twin's
dtypes. The statistics of the values present (`nanmean`, `nanmedian`...) are
in `nan_reductions.py`.
"""

import numpy as np

from minikeras.engine.tensor import getval
from minikeras.ops.axes import cumsum
from minikeras.ops.comparison import where
from minikeras.ops.core import array_of, wrap
from minikeras.ops.math import add
from minikeras.ops.product_reductions import cumprod, prod
from minikeras.ops.reduction import _norm_axis, max, min, sum
from minikeras.ops.sorting import argmax, argmin

__all__ = [
    "nanargmax", "nanargmin", "nancumprod", "nancumsum", "nanmax", "nanmin", "nanprod", "nansum",
]  # fmt: skip


def _filled(x, fill):
    """`x` with nan replaced by `fill`, and the mask of nan (None when there is none)."""
    value = array_of(x)
    plain = getval(value)
    if plain.dtype.kind != "f":
        return value, None
    missing = np.isnan(plain)
    if not missing.any():
        return value, None
    return where(missing, fill, value), missing


def _nan_where_all_missing(result, missing, axis, keepdims):
    """`result` with nan where every value reduced over `axis` was nan."""
    if missing is None:
        return result
    empty = np.all(missing, axis=axis, keepdims=keepdims)
    if not empty.any():
        return result
    return add(result, np.where(empty, np.nan, 0).astype(result.dtype))  # (no warning, as nan)


def nansum(x, axis=None, keepdims=False):
    """Sum over `axis`, nan counted as 0 (`sum`'s dtypes).

    Args:
        x: Tensor or array-like.
        axis: None (all), an int or a tuple of ints.
        keepdims: keep reduced axes with size 1.

    Returns:
        A Tensor; 0 where a slice holds only nan.

    Raises:
        ValueError: if an axis is out of range.

    Example:
        >>> mk.ops.nansum([1.0, np.nan, 3.0]).numpy()
        array(4., dtype=float32)
    """
    return sum(_filled(x, 0.0)[0], axis=axis, keepdims=keepdims)


def nanprod(x, axis=None, keepdims=False):
    """Product over `axis`, nan counted as 1 (`prod`'s dtypes and gradient).

    Args:
        x: Tensor or array-like.
        axis: None (all), an int or a tuple of ints.
        keepdims: keep reduced axes with size 1.

    Returns:
        A Tensor; 1 where a slice holds only nan.

    Raises:
        ValueError: if an axis is out of range.

    Example:
        >>> mk.ops.nanprod([2.0, np.nan, 3.0]).numpy()
        array(6., dtype=float32)
    """
    return prod(_filled(x, 1.0)[0], axis=axis, keepdims=keepdims)


def _extreme(op, reduce, fill, x, axis, keepdims):
    value, missing = _filled(x, fill)
    axis = _norm_axis(op, value, axis)
    return _nan_where_all_missing(reduce(value, axis, keepdims), missing, axis, keepdims)


def nanmax(x, axis=None, keepdims=False):
    """Largest value over `axis` that is not nan.

    Args:
        x: Tensor or array-like.
        axis: None (all), an int or a tuple of ints.
        keepdims: keep reduced axes with size 1.

    Returns:
        A Tensor of `x`'s dtype; nan where a slice holds only nan.

    Raises:
        ValueError: if an axis is out of range.

    Example:
        >>> mk.ops.nanmax([1.0, np.nan, 3.0]).numpy()
        array(3., dtype=float32)
    """
    return _extreme("nanmax", max, -np.inf, x, axis, keepdims)


def nanmin(x, axis=None, keepdims=False):
    """Smallest value over `axis` that is not nan.

    Args:
        x: Tensor or array-like.
        axis: None (all), an int or a tuple of ints.
        keepdims: keep reduced axes with size 1.

    Returns:
        A Tensor of `x`'s dtype; nan where a slice holds only nan.

    Raises:
        ValueError: if an axis is out of range.

    Example:
        >>> mk.ops.nanmin([1.0, np.nan, 3.0]).numpy()
        array(1., dtype=float32)
    """
    return _extreme("nanmin", min, np.inf, x, axis, keepdims)


def _arg_extreme(op, find, fill, x, axis, keepdims):
    value, missing = _filled(x, fill)
    axis = _norm_axis(op, value, axis)
    index = find(value, axis=axis, keepdims=keepdims)
    if missing is None:
        return index
    empty = np.all(missing, axis=axis, keepdims=keepdims)
    return wrap(np.where(empty, -1, index.numpy()).astype(np.int32))


def nanargmax(x, axis=None, keepdims=False):
    """int32 index of the largest value along `axis` that is not nan.

    Args:
        x: Tensor or array-like.
        axis: None (flattened) or an int.
        keepdims: keep the reduced axis with size 1.

    Returns:
        An int32 Tensor; -1 where a slice holds only nan, as in Keras.

    Raises:
        ValueError: if the axis is out of range.

    Example:
        >>> mk.ops.nanargmax([[1.0, np.nan, 3.0], [np.nan, np.nan, np.nan]], axis=1).numpy()
        array([ 2, -1], dtype=int32)
    """
    return _arg_extreme("nanargmax", argmax, -np.inf, x, axis, keepdims)


def nanargmin(x, axis=None, keepdims=False):
    """int32 index of the smallest value along `axis` that is not nan.

    Args:
        x: Tensor or array-like.
        axis: None (flattened) or an int.
        keepdims: keep the reduced axis with size 1.

    Returns:
        An int32 Tensor; -1 where a slice holds only nan, as in Keras.

    Raises:
        ValueError: if the axis is out of range.

    Example:
        >>> mk.ops.nanargmin([[1.0, np.nan, 0.5]], axis=1).numpy()
        array([2], dtype=int32)
    """
    return _arg_extreme("nanargmin", argmin, np.inf, x, axis, keepdims)


def nancumsum(x, axis=None, dtype=None):
    """Running sums along `axis`, nan counted as 0 (`cumsum`'s dtypes).

    Args:
        x: Tensor or array-like.
        axis: the axis, or None for the flattened values.
        dtype: the result's dtype, or None: `x`'s (int32 for booleans).

    Returns:
        A Tensor.

    Raises:
        ValueError: if `axis` is out of range.

    Example:
        >>> mk.ops.nancumsum([1.0, np.nan, 3.0]).numpy()
        array([1., 1., 4.], dtype=float32)
    """
    return cumsum(_filled(x, 0.0)[0], axis=axis, dtype=dtype)


def nancumprod(x, axis=None, dtype=None):
    """Running products along `axis`, nan counted as 1 (`cumprod`'s dtypes and gradient).

    Args:
        x: Tensor or array-like.
        axis: the axis, or None for the flattened values.
        dtype: the result's dtype, or None: `x`'s (int32 for booleans).

    Returns:
        A Tensor.

    Raises:
        ValueError: if `axis` is out of range.

    Example:
        >>> mk.ops.nancumprod([2.0, np.nan, 3.0]).numpy()
        array([2., 2., 6.], dtype=float32)
    """
    return cumprod(_filled(x, 1.0)[0], axis=axis, dtype=dtype)
