"""`norm`: vector and matrix norms, as Keras's (and numpy's) `linalg.norm`.

Written in other ops (sums, maxima, powers, singular values), so its gradient
is theirs, of every order, and float32 stays float32.
"""

import numpy as np

from minikeras.ops.core import array_of, as_float, getval, op_error, shape_of, wrap
from minikeras.ops.decompositions import svd
from minikeras.ops.elementary import abs as _abs
from minikeras.ops.elementary import sqrt
from minikeras.ops.math import power
from minikeras.ops.reduction import max as _max
from minikeras.ops.reduction import min as _min
from minikeras.ops.reduction import sum as _sum
from minikeras.ops.shape import expand_dims, reshape, transpose

__all__ = ["norm"]

_MATRIX_ORDS = (None, "fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf)


def norm(x, ord=None, axis=None, keepdims=False):  # noqa: A002 (Keras's name)
    """A vector norm, or a matrix norm over two axes.

    With `axis` None: the 2-norm of all values if `ord` is None, else the
    vector norm of a vector or the matrix norm of a matrix. With an int
    `axis`, vector norms along it; with a pair, matrix norms over those axes.

    Vector `ord`s: None or 2 (Euclidean), 1, `inf` (largest |x|), `-inf`,
    0 (count of non-zeros, no gradient), any other number `p`
    (`sum(|x|**p) ** (1/p)`). Matrix `ord`s: None or `"fro"` (Frobenius),
    `"nuc"` (sum of singular values), 1 and -1 (max and min column sum of
    |x|), `inf` and `-inf` (max and min row sum), 2 and -2 (largest and
    smallest singular value).

    Args:
        x: Tensor or array-like.
        ord: the order, as above.
        axis: None, an int, or a pair of ints.
        keepdims: keep the reduced axes with size 1.

    Returns:
        A Tensor (floatx for integer input).

    Raises:
        ValueError: for an `ord` that does not fit vectors or matrices, or a
            bad `axis`.

    Example:
        >>> float(mk.ops.norm([3.0, 4.0])), float(mk.ops.norm([3.0, -4.0], ord=1))
        (5.0, 7.0)
        >>> float(mk.ops.norm([[1.0, 2.0], [3.0, 4.0]], ord=np.inf))
        7.0
    """
    value = as_float(array_of(x))
    ndim = len(shape_of(value))
    if axis is None:
        if ord is None:
            total = sqrt(_sum(value * value))
            return reshape(total, (1,) * ndim) if keepdims else total
        if ndim not in (1, 2):
            raise op_error("norm", f"ord={ord!r} with axis=None needs a vector or a matrix", value)
        axis = tuple(range(ndim))
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    if len(axes) not in (1, 2) or any(not -ndim <= a < ndim for a in axes):
        raise op_error("norm", f"axis {axis!r} must be one or two axes of the input", value)
    axes = tuple(int(a) % ndim for a in axes)
    if len(axes) == 2 and axes[0] == axes[1]:
        raise op_error("norm", f"axis {axis!r} names one axis twice", value)
    result = _vector_norm(value, ord, axes[0]) if len(axes) == 1 else _matrix_norm(value, ord, axes)
    if keepdims:
        for a in sorted(axes):
            result = expand_dims(result, a)
    return result


def _vector_norm(value, ord, axis):  # noqa: A002
    if isinstance(ord, str):
        raise op_error("norm", f"invalid ord {ord!r} for a vector norm", value)
    if ord is None or ord == 2:
        return sqrt(_sum(value * value, axis=axis))
    if ord == np.inf:
        return _max(_abs(value), axis=axis)
    if ord == -np.inf:
        return _min(_abs(value), axis=axis)
    if ord == 0:
        plain = getval(value)  # a count: no gradient
        return wrap(np.sum(plain != 0, axis=axis).astype(plain.dtype))
    if ord == 1:
        return _sum(_abs(value), axis=axis)
    return power(_sum(power(_abs(value), float(ord)), axis=axis), 1.0 / float(ord))


def _matrix_norm(value, ord, axes):  # noqa: A002
    rows, columns = axes
    if ord not in _MATRIX_ORDS:
        raise op_error("norm", f"invalid ord {ord!r} for a matrix norm", value)
    if ord in (None, "fro"):
        return sqrt(_sum(value * value, axis=axes))
    if ord in (1, -1, np.inf, -np.inf):
        sum_axis, pick_axis = (rows, columns) if ord in (1, -1) else (columns, rows)
        sums = _sum(_abs(value), axis=sum_axis)
        pick_axis -= pick_axis > sum_axis
        return (_max if ord > 0 else _min)(sums, axis=pick_axis)
    # Singular values: move the two axes last.
    others = [a for a in range(len(shape_of(value))) if a not in axes]
    singular = svd(transpose(value, others + [rows, columns]), compute_uv=False)
    if ord == "nuc":
        return _sum(singular, axis=-1)
    return (_max if ord == 2 else _min)(singular, axis=-1)
