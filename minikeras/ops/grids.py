"""Grids built from vectors: `meshgrid` (coordinate grids) and `vander` (powers).

Both are written with other ops (`reshape`, `broadcast_to`, `multiply`,
`stack`), so their gradients are those ops'. `vander` builds its powers by
repeated products, not `x ** n`, so its gradient at 0 is finite.
"""

import numpy as np

from minikeras.ops.axes import broadcast_to
from minikeras.ops.core import array_of, op_error
from minikeras.ops.creation import ones_like
from minikeras.ops.gather import flip
from minikeras.ops.math import multiply
from minikeras.ops.operands import narrowed_operands
from minikeras.ops.reordering import ravel
from minikeras.ops.shape import reshape, stack

__all__ = ["meshgrid", "vander"]


def meshgrid(*x, indexing="xy"):
    """Coordinate grids of 1-d tensors: the i-th grid repeats `x[i]` along its own axis.

    Args:
        *x: 1-d Tensors or array-likes (others are flattened).
        indexing: `"xy"` (Cartesian: the first two grid axes swapped, as numpy
            and Keras do) or `"ij"` (matrix: grid axis i follows `x[i]`).

    Returns:
        A list of Tensors, one per input, each of the grid's shape and its input's dtype.

    Raises:
        ValueError: for another `indexing`.

    Example:
        >>> xs, ys = mk.ops.meshgrid(np.array([1, 2, 3]), np.array([4, 5]))
        >>> xs.numpy()
        array([[1, 2, 3],
               [1, 2, 3]])
    """
    if indexing not in ("xy", "ij"):
        raise ValueError(f"meshgrid: indexing must be 'xy' or 'ij', got {indexing!r}")
    # (numpy float64 operands beside a Tensor take its precision: ops.operands)
    vectors = [ravel(value) for value in narrowed_operands(*x)]
    sizes = [vector.shape[0] for vector in vectors]
    axes = list(range(len(vectors)))
    if indexing == "xy" and len(vectors) > 1:
        axes[0], axes[1] = 1, 0
    shape = [0] * len(vectors)
    for axis, size in zip(axes, sizes):
        shape[axis] = size
    grids = []
    for axis, vector in zip(axes, vectors):
        along = [1] * len(vectors)
        along[axis] = -1
        grids.append(broadcast_to(reshape(vector, tuple(along)), tuple(shape)))
    return grids


def vander(x, N=None, increasing=False):  # noqa: N803 (Keras's name)
    """The Vandermonde matrix of `x`: its columns the powers `x ** (N - 1)`, ..., `x ** 0`.

    Args:
        x: a 1-d Tensor or array-like.
        N: the number of columns (`len(x)` if None).
        increasing: whether the powers increase from left to right.

    Returns:
        A Tensor of shape `(len(x), N)` and `x`'s dtype.

    Raises:
        ValueError: if `x` is not 1-d or `N` is negative.

    Example:
        >>> mk.ops.vander(np.array([1.0, 2.0, 3.0], "float32")).numpy()
        array([[1., 1., 1.],
               [4., 2., 1.],
               [9., 3., 1.]], dtype=float32)
    """
    value = array_of(x)
    if np.ndim(value) != 1:
        raise op_error("vander", "x must be 1-d", value)
    columns = np.shape(value)[0] if N is None else int(N)
    if columns < 0:
        raise ValueError(f"vander: N must not be negative, got {N!r}")
    if columns == 0:
        return reshape(ones_like(value), (-1, 1))[:, :0]
    powers = [ones_like(value)]
    for _ in range(columns - 1):
        powers.append(multiply(powers[-1], value))
    matrix = stack(powers, axis=1)
    return matrix if increasing else flip(matrix, axis=1)
