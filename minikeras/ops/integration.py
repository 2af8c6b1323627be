"""Integration: `trapezoid`, the trapezoidal rule along an axis."""

import numpy as np

from minikeras.engine.tensor import getval
from minikeras.ops.core import array_of, as_float, normalize_axis, op_error
from minikeras.ops.math import add, multiply, subtract
from minikeras.ops.operands import operand_values_list
from minikeras.ops.reduction import sum
from minikeras.ops.shape import getitem, reshape

__all__ = ["trapezoid"]


def trapezoid(y, x=None, dx=1.0, axis=-1):
    """The integral of `y` along `axis` by the trapezoidal rule.

    `sum((y[i] + y[i + 1]) / 2 * (x[i + 1] - x[i]))`, with the sample points
    `x`, or evenly spaced by `dx`. Differentiable in `y` and `x`.

    Args:
        y: Tensor or array-like of values.
        x: None, or the sample points: 1-D along `axis`, or of `y`'s shape.
        dx: the spacing when `x` is None.
        axis: the axis to integrate along.

    Returns:
        A Tensor of `y`'s shape without `axis`; float32 for integer `y`.

    Raises:
        ValueError: if `axis` is out of range or `x` fits `y` neither way.

    Example:
        >>> mk.ops.trapezoid([1.0, 2.0, 3.0], x=[0.0, 1.0, 3.0]).numpy()
        array(6.5, dtype=float32)
    """
    # (a numpy float64 x beside a Tensor y takes its precision, or y beside x: ops.operands)
    y, x = operand_values_list((y, x), array_of) if x is not None else (y, None)
    value = as_float(array_of(y))
    shape = np.shape(getval(value))
    axis = normalize_axis("trapezoid", axis, len(shape), getval(value))
    upper, lower = _part(value, axis, slice(1, None)), _part(value, axis, slice(None, -1))
    if x is None:
        return multiply(sum(add(upper, lower), axis=axis), dx / 2)
    points = as_float(array_of(x))
    point_shape = np.shape(getval(points))
    if point_shape == (shape[axis],) and len(shape) > 1:
        points = reshape(points, tuple(-1 if a == axis else 1 for a in range(len(shape))))
    elif point_shape != shape:
        raise op_error("trapezoid", "x must be 1-D along axis or of y's shape", value, points)
    steps = subtract(_part(points, axis, slice(1, None)), _part(points, axis, slice(None, -1)))
    return multiply(sum(multiply(add(upper, lower), steps), axis=axis), 0.5)


def _part(value, axis, part):
    """`value[..., part, ...]`, `part` a slice of `axis`."""
    return getitem(value, (slice(None),) * axis + (part,))
