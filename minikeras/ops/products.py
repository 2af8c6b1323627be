"""Products of vectors and matrices beyond `matmul`: `outer`, `inner`, `vdot`, `kron`, the
vector product `cross`, the sliding products `correlate` and the pairwise distances `cdist`.

Each is written with other ops (`multiply`, `tensordot`, `dot`, `reshape`,
`unstack`, `stack`, `take`, `pad`), so their gradients, to any order, are those ops'.
Integers meeting floats take the float dtype; integers alone keep theirs, as
in Keras.
"""

import numpy as np

from minikeras.ops.axes import moveaxis
from minikeras.ops.core import array_of, as_float, normalize_axis, op_error, promote, value_of
from minikeras.ops.elementary import sqrt
from minikeras.ops.math import multiply, negative, square, subtract
from minikeras.ops.matrix_products import dot, matmul, tensordot
from minikeras.ops.operands import operand_values_list
from minikeras.ops.reduction import sum as reduce_sum
from minikeras.ops.reordering import ravel
from minikeras.ops.shape import expand_dims, pad, reshape, stack, take
from minikeras.ops.stacking import unstack

__all__ = ["cdist", "correlate", "cross", "inner", "kron", "outer", "vdot"]


def outer(x1, x2):
    """The outer product of the flattened `x1` and `x2`: `out[i, j] = x1[i] * x2[j]`.

    Args:
        x1: Tensor or array-like (flattened).
        x2: Tensor or array-like (flattened).

    Returns:
        A 2-d Tensor of shape `(x1.size, x2.size)`.

    Example:
        >>> mk.ops.outer(np.array([1, 2], "int32"), np.array([1.0, 10.0], "float32")).numpy()
        array([[ 1., 10.],
               [ 2., 20.]], dtype=float32)
    """
    a, b = _operands(x1, x2)
    return multiply(reshape(ravel(a), (-1, 1)), reshape(ravel(b), (1, -1)))


def _operands(x1, x2):
    """The operands' values, a numpy float64 array beside a Tensor narrowed (`ops.operands`)."""
    return operand_values_list((x1, x2), array_of)


def inner(x1, x2):
    """Sums of products over the last axes of `x1` and `x2` (a product for a scalar).

    Args:
        x1: Tensor or array-like.
        x2: Tensor or array-like, its last axis as long as `x1`'s.

    Returns:
        A Tensor of shape `x1.shape[:-1] + x2.shape[:-1]`.

    Raises:
        ValueError: if the last axes differ in length.

    Example:
        >>> mk.ops.inner(np.ones((2, 3), "float32"), np.array([1.0, 2.0, 3.0], "float32")).numpy()
        array([6., 6.], dtype=float32)
    """
    a, b = _operands(x1, x2)
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return multiply(a, b)
    if np.shape(a)[-1] != np.shape(b)[-1]:
        raise op_error("inner", "the last axes must have one length", a, b)
    return tensordot(a, b, axes=([-1], [-1]))


def vdot(x1, x2):
    """The dot product of the flattened `x1` and `x2` (no complex conjugate is taken).

    Args:
        x1: Tensor or array-like.
        x2: Tensor or array-like of as many values.

    Returns:
        A scalar Tensor.

    Raises:
        ValueError: if the sizes differ.

    Example:
        >>> mk.ops.vdot(np.ones((2, 3), "float32"), np.ones((3, 2), "float32")).numpy()
        array(6., dtype=float32)
    """
    a, b = _operands(x1, x2)
    if np.size(a) != np.size(b):
        raise op_error("vdot", "x1 and x2 must have as many values", a, b)
    return dot(ravel(a), ravel(b))


def kron(x1, x2):
    """The Kronecker product: `x1`'s values each times the whole of `x2`, tiled block-wise.

    Args:
        x1: Tensor or array-like.
        x2: Tensor or array-like (the one of fewer axes gets leading axes of size 1).

    Returns:
        A Tensor whose shape is the element-wise product of the two shapes.

    Example:
        >>> mk.ops.kron(np.eye(2, dtype="int32"), np.array([[1, 2]], "int32")).numpy()
        array([[1, 2, 0, 0],
               [0, 0, 1, 2]], dtype=int32)
    """
    a, b = _operands(x1, x2)
    ndim = max(np.ndim(a), np.ndim(b))
    shape_a = (1,) * (ndim - np.ndim(a)) + np.shape(a)
    shape_b = (1,) * (ndim - np.ndim(b)) + np.shape(b)
    # a's axes at even places, b's at odd ones: each pair (i, j) becomes one axis i * j.
    spread_a = reshape(a, tuple(size for n in shape_a for size in (n, 1)))
    spread_b = reshape(b, tuple(size for n in shape_b for size in (1, n)))
    return reshape(multiply(spread_a, spread_b), tuple(m * n for m, n in zip(shape_a, shape_b)))


def cross(x1, x2, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """The vector (cross) product of 3-vectors (or 2-vectors, their third value 0).

    Args:
        x1: Tensor or array-like whose `axisa` has length 2 or 3.
        x2: Tensor or array-like whose `axisb` has length 2 or 3; the other
            axes broadcast with `x1`'s.
        axisa: the axis of `x1` holding the vectors.
        axisb: the axis of `x2` holding the vectors.
        axisc: the axis of the result holding the vectors.
        axis: if given, the axis for all three.

    Returns:
        A Tensor; for two 2-vectors, the third value alone (no vector axis).

    Raises:
        ValueError: if a vector axis has another length than 2 or 3.

    Example:
        >>> mk.ops.cross(np.array([1.0, 0.0, 0.0]), np.array([0.0, 1.0, 0.0])).numpy()
        array([0., 0., 1.])
    """
    if axis is not None:
        axisa = axisb = axisc = axis
    a, b = _operands(x1, x2)
    parts = []
    for name, value, where in (("x1", a, axisa), ("x2", b, axisb)):
        where = normalize_axis("cross", where, np.ndim(value), a, b)
        if np.shape(value)[where] not in (2, 3):
            raise op_error(
                "cross", f"{name}'s vectors (axis {where}) must have 2 or 3 values", a, b
            )
        parts.append(unstack(moveaxis(value, where, -1), axis=-1))
    (a0, a1, *a2), (b0, b1, *b2) = parts
    z = subtract(multiply(a0, b1), multiply(a1, b0))
    if not a2 and not b2:
        return z
    if a2 and b2:
        x = subtract(multiply(a1, b2[0]), multiply(a2[0], b1))
        y = subtract(multiply(a2[0], b0), multiply(a0, b2[0]))
    elif a2:  # (x2's third value is 0)
        x, y = negative(multiply(a2[0], b1)), multiply(a2[0], b0)
    else:  # (x1's third value is 0)
        x, y = multiply(a1, b2[0]), negative(multiply(a0, b2[0]))
    result = stack([x, y, z], axis=-1)
    return moveaxis(result, -1, normalize_axis("cross", axisc, np.ndim(value_of(result)), result))


def correlate(x1, x2, mode="valid"):
    """The cross-correlation of two 1-d tensors: `out[k] = sum_n x1[n + k] * x2[n]`.

    Args:
        x1: a 1-d Tensor or array-like.
        x2: a 1-d Tensor or array-like.
        mode: `"valid"` (where one lies wholly over the other), `"same"` (as
            long as the longer one, centred as numpy centres it) or `"full"`
            (every overlap).

    Returns:
        A 1-d float Tensor (floatx for integers, as in Keras).

    Raises:
        ValueError: for inputs that are not 1-d or empty, or another `mode`.

    Example:
        >>> a, v = np.array([1.0, 2.0, 3.0], "float32"), np.array([0.0, 1.0, 0.5], "float32")
        >>> mk.ops.correlate(a, v, mode="full").numpy()
        array([0.5, 2. , 3.5, 3. , 0. ], dtype=float32)
    """
    if mode not in ("valid", "same", "full"):
        raise ValueError(f"correlate: mode must be 'valid', 'same' or 'full', got {mode!r}")
    a, v = _operands(x1, x2)
    a, v = promote(as_float(a), as_float(v))
    if np.ndim(a) != 1 or np.ndim(v) != 1 or not np.size(a) or not np.size(v):
        raise op_error("correlate", "x1 and x2 must be non-empty and 1-d", a, v)
    n, m = np.shape(a)[0], np.shape(v)[0]
    # Every overlap: row k of the windows is x1 (padded with zeros) from k - (m - 1) on.
    windows = take(pad(a, ((m - 1, m - 1),)), np.arange(n + m - 1)[:, None] + np.arange(m))
    full = matmul(windows, v)
    if mode == "full":
        return full
    if mode == "valid":
        return full[min(n, m) - 1 : max(n, m)]
    start = (m - 1) // 2 if n >= m else n // 2
    return full[start : start + max(n, m)]


def cdist(x, y):
    """The Euclidean distances between the rows of `x` and those of `y`, batched.

    Its gradient at a distance of zero is NaN, as that of `sqrt` at 0 (and Keras's).

    Args:
        x: Tensor of shape `(..., p, d)`.
        y: Tensor of shape `(..., r, d)`, the leading axes broadcasting with `x`'s.

    Returns:
        A float Tensor of shape `(..., p, r)` (floatx for integers).

    Raises:
        ValueError: for fewer than 2 axes or rows of different lengths.

    Example:
        >>> mk.ops.cdist(np.array([[0.0, 0.0]], "float32"), np.array([[3.0, 4.0]], "float32"))
        <Tensor shape=(1, 1) dtype=float32
        [[5.]]>
    """
    a, b = _operands(x, y)
    a, b = promote(as_float(a), as_float(b))
    if np.ndim(a) < 2 or np.ndim(b) < 2 or np.shape(a)[-1] != np.shape(b)[-1]:
        raise op_error("cdist", "x and y must be (..., rows, d) with one d", a, b)
    differences = subtract(expand_dims(a, -2), expand_dims(b, -3))
    return sqrt(reduce_sum(square(differences), axis=-1))
