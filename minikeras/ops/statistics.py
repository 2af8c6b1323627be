"""Statistics over axes: `amax`, `amin`, `ptp`, `average`, `count_nonzero`, `corrcoef`,
and the order statistics `median`, `quantile` and `percentile`.

The order statistics partition the reduced values at the positions they read
(a sort, where nan is skipped and each row has its own positions), and read
them there, interpolating as Keras's `method` says; their gradient goes back
through the permutation to the one or two values read. Integer and boolean
input gives float32, as in Keras.
"""

import numpy as np

from minikeras.engine.primitive import call_primitive
from minikeras.engine.tensor import getval
from minikeras.ops.along_axis import take_along, to_last
from minikeras.ops.axes import moveaxis
from minikeras.ops.comparison import clip
from minikeras.ops.core import array_of, as_float, op_error, promote, value_of, wrap
from minikeras.ops.elementary import sqrt
from minikeras.ops.math import divide, multiply, subtract
from minikeras.ops.matrix_products import matmul
from minikeras.ops.operands import narrowed_operands
from minikeras.ops.reduction import _kept_shape, _norm_axis, max, mean, min, sum
from minikeras.ops.shape import expand_dims, reshape, transpose
from minikeras.ops.sorting import _partition, _sort

__all__ = [
    "amax", "amin", "average", "corrcoef", "count_nonzero", "median", "percentile", "ptp",
    "quantile",
]  # fmt: skip

_METHODS = ("linear", "lower", "higher", "midpoint", "nearest")


def amax(x, axis=None, keepdims=False):
    """Largest element over `axis`: Keras's other name for `max`.

    Args:
        x: Tensor or array-like.
        axis: None (all), an int or a tuple of ints.
        keepdims: keep reduced axes with size 1.

    Returns:
        A Tensor of `x`'s dtype.

    Raises:
        ValueError: if an axis is out of range or the input is empty.

    Example:
        >>> mk.ops.amax([[1.0, 5.0], [3.0, 2.0]], axis=0).numpy()
        array([3., 5.], dtype=float32)
    """
    value = array_of(x)
    return max(value, axis=_norm_axis("amax", value, axis), keepdims=keepdims)


def amin(x, axis=None, keepdims=False):
    """Smallest element over `axis`: Keras's other name for `min`.

    Args:
        x: Tensor or array-like.
        axis: None (all), an int or a tuple of ints.
        keepdims: keep reduced axes with size 1.

    Returns:
        A Tensor of `x`'s dtype.

    Raises:
        ValueError: if an axis is out of range or the input is empty.

    Example:
        >>> mk.ops.amin([[1.0, 5.0], [3.0, 2.0]], axis=0).numpy()
        array([1., 2.], dtype=float32)
    """
    value = array_of(x)
    return min(value, axis=_norm_axis("amin", value, axis), keepdims=keepdims)


def ptp(x, axis=None, keepdims=False):
    """Range (peak to peak) over `axis`: `max - min`, in `x`'s dtype.

    Args:
        x: Tensor or array-like, not boolean.
        axis: None (all), an int or a tuple of ints.
        keepdims: keep reduced axes with size 1.

    Returns:
        A Tensor of `x`'s dtype.

    Raises:
        TypeError: for boolean input (as in Keras and numpy).
        ValueError: if an axis is out of range or the input is empty.

    Example:
        >>> mk.ops.ptp([[1.0, 5.0], [3.0, 2.0]], axis=1).numpy()
        array([4., 1.], dtype=float32)
    """
    value = array_of(x)
    if getval(value).dtype == np.bool_:
        raise TypeError("ptp: boolean input has no range; cast it to an integer dtype first")
    return subtract(max(value, axis, keepdims), min(value, axis, keepdims))


def average(x, axis=None, weights=None):
    """Weighted mean over `axis`: `sum(x * weights) / sum(weights)`.

    Integer input or weights take the other's float dtype (floatx when both
    are integers); two float dtypes give the wider, as in Keras.
    Gradients flow to `x` and to `weights`.

    Args:
        x: Tensor or array-like.
        axis: None (all) or an int.
        weights: None (the plain mean), or weights of `x`'s shape, or 1-D
            weights as long as `x`'s `axis`.

    Returns:
        A Tensor.

    Raises:
        ValueError: if the weights' shape fits neither way, or `axis` is out
            of range.

    Example:
        >>> mk.ops.average([1.0, 2.0, 4.0], weights=[1.0, 1.0, 2.0]).numpy()
        array(2.75, dtype=float32)
    """
    if weights is None:
        return mean(x, axis=axis)
    # Integers take the other operand's float dtype (floatx if both are integers).
    # (numpy float64 operands beside a Tensor take its precision: ops.operands)
    x, weights = narrowed_operands(x, weights)
    value, weight = (as_float(v) for v in promote(array_of(x), array_of(weights)))
    dtype = np.result_type(getval(value).dtype, getval(weight).dtype)
    value, weight = (v if getval(v).dtype == dtype else v.astype(dtype) for v in (value, weight))
    axis = _norm_axis("average", value, axis)
    shape, weight_shape = np.shape(getval(value)), np.shape(getval(weight))
    if weight_shape != shape:
        if not isinstance(axis, int) or weight_shape != (shape[axis],):
            raise op_error(
                "average", f"weights need x's shape, or 1-D of x.shape[axis] (axis={axis})",
                value, weight,
            )  # fmt: skip
        axis %= len(shape)
        weight = weight.reshape(tuple(-1 if a == axis else 1 for a in range(len(shape))))
    # (1-D weights sum to one total, which broadcasts over the other axes)
    return divide(sum(multiply(value, weight), axis=axis), sum(weight, axis=axis))


def count_nonzero(x, axis=None):
    """How many elements over `axis` are not zero (not differentiable).

    Args:
        x: Tensor or array-like.
        axis: None (all), an int or a tuple of ints.

    Returns:
        An int32 Tensor, as in Keras.

    Raises:
        ValueError: if an axis is out of range.

    Example:
        >>> mk.ops.count_nonzero([[0.0, 1.0], [2.0, 3.0]], axis=1).numpy()
        array([1, 2], dtype=int32)
    """
    value = getval(array_of(x))
    axis = _norm_axis("count_nonzero", value, axis)
    return wrap(np.asarray(np.count_nonzero(value, axis=axis), dtype=np.int32))


def corrcoef(x):
    """Pearson correlation coefficients of the rows of `x` (each row a variable).

    Args:
        x: 1-D or 2-D Tensor or array-like: variables in rows, observations
            in columns.

    Returns:
        A `(rows, rows)` Tensor (a 0-d one for 1-D `x`), clipped to
        `[-1, 1]`; float32 for integer `x`, else `x`'s dtype. A constant row
        gives nan, as in Keras.

    Raises:
        ValueError: if `x` has more than 2 axes.

    Example:
        >>> mk.ops.corrcoef([[1.0, 2.0, 3.0], [3.0, 2.0, 1.0]]).numpy()
        array([[ 1., -1.],
               [-1.,  1.]], dtype=float32)
    """
    value = as_float(array_of(x))
    ndim = np.ndim(getval(value))
    if ndim > 2:
        raise op_error("corrcoef", "x must be 1-D or 2-D", getval(value))
    rows = reshape(value, (-1, np.shape(getval(value))[-1] if ndim else 1))
    centered = subtract(rows, mean(rows, axis=1, keepdims=True))
    covariance = matmul(centered, transpose(centered))  # (the 1 / (n - 1) cancels below)
    scale = sqrt(sum(multiply(centered, centered), axis=1))
    correlation = divide(divide(covariance, expand_dims(scale, 1)), expand_dims(scale, 0))
    correlation = clip(correlation, -1, 1)
    return reshape(correlation, ()) if ndim < 2 else correlation


def quantile(x, q, axis=None, method="linear", keepdims=False):
    """The `q`-th quantiles of `x` over `axis`; the gradient goes to the values read.

    Args:
        x: Tensor or array-like.
        q: a probability in `[0, 1]`, or a 1-D sequence of them (not
            differentiated).
        axis: None (all), an int or a tuple of ints.
        method: where between the two nearest sorted values a quantile falls:
            "linear" (interpolated), "lower", "higher", "midpoint" or "nearest",
            as in Keras. "nearest" takes a position halfway between two values
            to the even one, as numpy and Keras's torch backend do (its jax
            backend takes the lower one).
        keepdims: keep reduced axes with size 1.

    Returns:
        A Tensor of shape `q.shape` followed by the reduced shape; float32 for
        integer or boolean `x`, else `x`'s dtype. nan where a value over
        `axis` is nan.

    Raises:
        ValueError: for `q` outside `[0, 1]` or of rank above 1, an unknown
            `method`, an axis out of range or an empty axis.

    Example:
        >>> mk.ops.quantile([[1.0, 2.0, 3.0, 4.0]], [0.25, 0.5], axis=1).numpy()
        array([[1.75],
               [2.5 ]], dtype=float32)
    """
    x, q = narrowed_operands(x, q)  # (a numpy float64 x beside a Tensor q: ops.operands)
    probabilities = _probabilities("quantile", q, 1.0)
    return order_statistic("quantile", x, probabilities, axis, method, keepdims)


def percentile(x, q, axis=None, method="linear", keepdims=False):
    """The `q`-th percentiles of `x` over `axis`: `quantile(x, q / 100, ...)`.

    Args:
        x: Tensor or array-like.
        q: a percentage in `[0, 100]`, or a 1-D sequence of them.
        axis: None (all), an int or a tuple of ints.
        method: "linear", "lower", "higher", "midpoint" or "nearest" (see
            `quantile`).
        keepdims: keep reduced axes with size 1.

    Returns:
        A Tensor, as `quantile` gives.

    Raises:
        ValueError: for `q` outside `[0, 100]`, as `quantile` otherwise.

    Example:
        >>> mk.ops.percentile(np.arange(5), 50).numpy()
        array(2., dtype=float32)
    """
    x, q = narrowed_operands(x, q)  # (a numpy float64 x beside a Tensor q: ops.operands)
    return order_statistic(
        "percentile", x, _probabilities("percentile", q, 100.0), axis, method, keepdims
    )


def median(x, axis=None, keepdims=False):
    """The median of `x` over `axis` (the mean of the two middle values of an even count).

    Args:
        x: Tensor or array-like.
        axis: None (all), an int or a tuple of ints.
        keepdims: keep reduced axes with size 1.

    Returns:
        A Tensor; float32 for integer or boolean `x`, else `x`'s dtype.

    Raises:
        ValueError: if an axis is out of range or empty.

    Example:
        >>> mk.ops.median([[3.0, 1.0, 2.0], [4.0, 6.0, 5.0]], axis=1).numpy()
        array([2., 5.], dtype=float32)
    """
    return order_statistic("median", x, np.float64(0.5), axis, "linear", keepdims)


def _probabilities(op, q, scale):
    probabilities = np.asarray(getval(value_of(q)), dtype=np.float64) / scale
    if probabilities.ndim > 1 or not np.all((probabilities >= 0) & (probabilities <= 1)):
        raise ValueError(
            f"{op}: q must be a number or 1-D sequence in [0, {scale:g}], got {getval(q)!r}"
        )
    return probabilities


def order_statistic(op, x, q, axis, method, keepdims, skip_nan=False):
    """The quantiles `q` of `x` over `axis`: the one implementation behind `quantile`,
    `percentile`, `median` and their nan-skipping twins.

    Args:
        op: the op's name, for errors.
        x: Tensor or array-like.
        q: a float64 array of probabilities in `[0, 1]`, 0-d or 1-D.
        axis: None, an int or a tuple of ints.
        method: one of "linear", "lower", "higher", "midpoint", "nearest".
        keepdims: keep reduced axes with size 1.
        skip_nan: count only the values that are not nan (the nan family);
            otherwise a nan makes the result nan.

    Returns:
        A Tensor of shape `q.shape` + the reduced shape.

    Raises:
        ValueError: for an unknown method, an axis out of range or an empty axis.

    Example:
        >>> mk.ops.statistics.order_statistic("median", [1.0, 9.0], np.float64(0.5), None,
        ...                                    "lower", False).numpy()
        array(1., dtype=float32)
    """
    if method not in _METHODS:
        raise ValueError(f"{op}: method must be one of {_METHODS}, got {method!r}")
    value = as_float(array_of(x))
    plain = getval(value)
    axis = _norm_axis(op, value, axis)
    ndim = plain.ndim
    axes = tuple(range(ndim)) if axis is None else (axis,) if isinstance(axis, int) else axis
    flat, moved_shape = to_last(value, tuple(a % ndim for a in axes))
    if np.shape(flat)[-1] == 0:
        raise op_error(op, "cannot take a quantile over an empty axis", plain)
    size = np.shape(flat)[-1]
    if skip_nan:  # each row has its own count, so its own positions: a full sort
        ordered = call_primitive(_sort, flat, np.ndim(flat) - 1)  # (nan sorts last)
        missing = np.isnan(getval(ordered))
        # A row of only nan gives nan; its count stands in as 1 to read some position.
        count = np.sum(~missing, axis=-1, keepdims=True)
        nan_rows = np.all(missing, axis=-1)
    else:  # the same positions in every row: a partition at them (and at the end, for nan)
        count = size
        wanted = q.reshape(-1) * (size - 1.0)
        kth = np.unique(np.concatenate([np.floor(wanted), np.ceil(wanted), [size - 1]]))
        ordered = call_primitive(_partition, flat, kth.astype(np.intp))
        nan_rows = np.isnan(getval(ordered)[..., -1])
    positions = q.reshape(-1) * (np.maximum(count, 1) - 1.0)
    positions = np.broadcast_to(positions, np.shape(flat)[:-1] + (q.size,))
    result = _read(ordered, positions, method, plain.dtype)
    if np.any(nan_rows):  # (added, not `where`: autograd's `where` gives float64 gradients)
        result = result + np.where(nan_rows, np.nan, 0).astype(plain.dtype)[..., None]
    rest = _kept_shape(plain.shape, axis) if keepdims else moved_shape[: ndim - len(axes)]
    result = reshape(result, tuple(rest) + q.shape)
    return moveaxis(result, tuple(range(len(rest), len(rest) + q.ndim)), tuple(range(q.ndim)))


def _read(ordered, positions, method, dtype):
    """The sorted values at fractional `positions` along the last axis, by `method`."""
    last = np.ndim(ordered) - 1
    if method == "nearest":
        return take_along(ordered, np.around(positions).astype(np.intp), last)
    lower = np.floor(positions).astype(np.intp)
    if method == "lower":
        return take_along(ordered, lower, last)
    upper = np.ceil(positions).astype(np.intp)
    if method == "higher":
        return take_along(ordered, upper, last)
    below, above = take_along(ordered, lower, last), take_along(ordered, upper, last)
    if method == "midpoint":
        return (below + above) * 0.5
    return below + (above - below) * (positions - lower).astype(dtype)
