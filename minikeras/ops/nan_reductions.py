"""The statistics of the values that are not nan: `nanmean`, `nanvar`,
`nanstd`, `nanmedian`, `nanquantile`, `nanpercentile`.

The moments fill nan with 0 (through `nan_filled._filled`) and divide by the
count of the values present; nan then gets no gradient. The order statistics
are `statistics.order_statistic`'s, skipping nan. Where a slice holds only
nan, the result is nan, as in Keras. Integer input gives float32.

The ops that count nan as the value that changes nothing (`nansum`,
`nanmax`, `nanargmax`, `nancumsum`...) are in `nan_filled.py`, and are
importable from here too, where they were first.
"""

import numpy as np

from minikeras.engine.tensor import getval
from minikeras.ops.comparison import greater, where
from minikeras.ops.core import array_of, as_float, wrap
from minikeras.ops.elementary import sqrt
from minikeras.ops.math import add, divide, multiply, subtract
from minikeras.ops.nan_filled import (  # (the others re-exported: their old import path)
    _filled,
    nanargmax,
    nanargmin,
    nancumprod,
    nancumsum,
    nanmax,
    nanmin,
    nanprod,
    nansum,
)
from minikeras.ops.operands import narrowed_operands
from minikeras.ops.reduction import _norm_axis, sum
from minikeras.ops.statistics import _probabilities, order_statistic

__all__ = [
    "nanargmax", "nanargmin", "nancumprod", "nancumsum", "nanmax", "nanmean", "nanmedian",
    "nanmin", "nanpercentile", "nanprod", "nanquantile", "nanstd", "nansum", "nanvar",
]  # fmt: skip


def _filled_wide(x):
    """`_filled(x, 0)` as floats, float16 widened to float32 (its sums overflow, as Keras
    computes them); and whether it was float16."""
    value = as_float(array_of(x))
    half = getval(value).dtype == np.float16
    value, missing = _filled(value.astype(np.float32) if half else value, 0.0)
    return value, missing, half


def _narrowed(result, half):
    """`result` (a Tensor) back in float16 if its input was."""
    return wrap(result._value.astype(np.float16)) if half else result


def nanmean(x, axis=None, keepdims=False):
    """Mean over `axis` of the values that are not nan; integers give float32.

    Args:
        x: Tensor or array-like.
        axis: None (all), an int or a tuple of ints.
        keepdims: keep reduced axes with size 1.

    Returns:
        A Tensor; nan where a slice holds only nan.

    Raises:
        ValueError: if an axis is out of range.

    Example:
        >>> mk.ops.nanmean([[1.0, np.nan, 3.0]], axis=1).numpy()
        array([2.], dtype=float32)
    """
    value, missing, half = _filled_wide(x)
    mean = _mean_of_present(value, missing, _norm_axis("nanmean", value, axis), keepdims)
    return _narrowed(mean, half)


def _mean_of_present(value, missing, axis, keepdims):
    """The mean over `axis` of `value` (nan filled with 0) where `missing` is false."""
    present = np.ones(np.shape(getval(value)), bool) if missing is None else ~missing
    count = np.sum(present, axis=axis, keepdims=keepdims).astype(getval(value).dtype)
    total = sum(value, axis=axis, keepdims=keepdims)
    mean = divide(total, np.maximum(count, 1))
    if np.all(count):
        return mean
    # nan where nothing is present: a slice of nan only, or an empty one (as numpy, Keras)
    return add(mean, np.where(count == 0, np.nan, 0).astype(mean.dtype))  # (no warning)


def nanvar(x, axis=None, keepdims=False):
    """Population variance over `axis` of the values that are not nan.

    Args:
        x: Tensor or array-like.
        axis: None (all), an int or a tuple of ints.
        keepdims: keep reduced axes with size 1.

    Returns:
        A Tensor; float32 for integer input; nan where a slice holds only nan.

    Raises:
        ValueError: if an axis is out of range.

    Example:
        >>> mk.ops.nanvar([1.0, np.nan, 3.0]).numpy()
        array(1., dtype=float32)
    """
    value, missing, half = _filled_wide(x)
    axis = _norm_axis("nanvar", value, axis)
    centered = subtract(value, _mean_of_present(value, missing, axis, True))
    if missing is not None:  # (zero, not nan: nan would make the gradient nan too)
        centered = where(missing, 0.0, centered)
    return _narrowed(_mean_of_present(multiply(centered, centered), missing, axis, keepdims), half)


def nanstd(x, axis=None, keepdims=False):
    """Population standard deviation over `axis` of the values that are not nan.

    Args:
        x: Tensor or array-like.
        axis: None (all), an int or a tuple of ints.
        keepdims: keep reduced axes with size 1.

    Returns:
        A Tensor; float32 for integer input; nan where a slice holds only nan.

    Raises:
        ValueError: if an axis is out of range.

    Example:
        >>> mk.ops.nanstd([1.0, np.nan, 3.0]).numpy()
        array(1., dtype=float32)
    """
    variance = nanvar(x, axis=axis, keepdims=keepdims)
    # sqrt only where the variance is positive: its gradient at 0 is infinite, and times the
    # zero gradient of a slice of one value (or of nan slices) it would give nan.
    positive = greater(variance, 0.0)
    return where(positive, sqrt(where(positive, variance, 1.0)), variance)


def nanmedian(x, axis=None, keepdims=False):
    """The median over `axis` of the values that are not nan.

    Args:
        x: Tensor or array-like.
        axis: None (all), an int or a tuple of ints.
        keepdims: keep reduced axes with size 1.

    Returns:
        A Tensor; float32 for integer input; nan where a slice holds only nan.

    Raises:
        ValueError: if an axis is out of range or empty.

    Example:
        >>> mk.ops.nanmedian([1.0, np.nan, 2.0, 9.0]).numpy()
        array(2., dtype=float32)
    """
    return order_statistic("nanmedian", x, np.float64(0.5), axis, "linear", keepdims, True)


def nanquantile(x, q, axis=None, method="linear", keepdims=False):
    """The `q`-th quantiles over `axis` of the values that are not nan.

    Args:
        x: Tensor or array-like.
        q: a probability in `[0, 1]`, or a 1-D sequence of them.
        axis: None (all), an int or a tuple of ints.
        method: "linear", "lower", "higher", "midpoint" or "nearest" (see
            `quantile`).
        keepdims: keep reduced axes with size 1.

    Returns:
        A Tensor, as `quantile` gives; nan where a slice holds only nan.

    Raises:
        ValueError: as `quantile`.

    Example:
        >>> mk.ops.nanquantile([1.0, np.nan, 2.0, 3.0], 0.25).numpy()
        array(1.5, dtype=float32)
    """
    x, q = narrowed_operands(x, q)  # (a numpy float64 x beside a Tensor q: ops.operands)
    probabilities = _probabilities("nanquantile", q, 1.0)
    return order_statistic("nanquantile", x, probabilities, axis, method, keepdims, True)


def nanpercentile(x, q, axis=None, method="linear", keepdims=False):
    """The `q`-th percentiles over `axis` of the values that are not nan.

    Args:
        x: Tensor or array-like.
        q: a percentage in `[0, 100]`, or a 1-D sequence of them.
        axis: None (all), an int or a tuple of ints.
        method: "linear", "lower", "higher", "midpoint" or "nearest".
        keepdims: keep reduced axes with size 1.

    Returns:
        A Tensor, as `percentile` gives; nan where a slice holds only nan.

    Raises:
        ValueError: for `q` outside `[0, 100]`, as `quantile` otherwise.

    Example:
        >>> mk.ops.nanpercentile([1.0, np.nan, 2.0, 3.0], 50).numpy()
        array(2., dtype=float32)
    """
    x, q = narrowed_operands(x, q)  # (a numpy float64 x beside a Tensor q: ops.operands)
    probabilities = _probabilities("nanpercentile", q, 100.0)
    return order_statistic("nanpercentile", x, probabilities, axis, method, keepdims, True)
