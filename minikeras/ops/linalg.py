"""Products of arrays: matmul, dot, tensordot, einsum."""

import autograd.numpy as anp
import numpy as np

from minikeras.ops.core import op_error, promote, value_of, wrap


def matmul(x1, x2):
    """Matrix product `x1 @ x2`, batched over leading axes as in numpy.

    Args:
        x1: Tensor or array-like with at least one axis.
        x2: Tensor or array-like whose second-to-last axis (or only axis)
            matches the last axis of `x1`.

    Returns:
        A Tensor.

    Raises:
        ValueError: if the inner dimensions differ or the batch axes do not
            broadcast, naming both shapes.

    Example:
        >>> matmul(ops.ones((2, 3)), ops.ones((3, 4))).shape
        (2, 4)
    """
    a, b = promote(value_of(x1), value_of(x2))
    try:
        return wrap(anp.matmul(a, b))
    except ValueError:
        a_shape, b_shape = np.shape(a), np.shape(b)
        if not a_shape or not b_shape:
            raise op_error("matmul", "operands must have at least one axis", a, b) from None
        inner_b = b_shape[-2] if len(b_shape) > 1 else b_shape[0]
        if a_shape[-1] != inner_b:
            problem = f"inner dimensions differ ({a_shape[-1]} vs {inner_b})"
        else:
            problem = "batch axes cannot be broadcast together"
        raise op_error("matmul", problem, a, b) from None


def dot(x1, x2):
    """numpy's `dot`: inner product of vectors, matrix product of matrices.

    Args:
        x1: Tensor or array-like.
        x2: Tensor or array-like.

    Returns:
        A Tensor.

    Raises:
        ValueError: if the contracted dimensions differ.

    Example:
        >>> dot([1.0, 2.0], [3.0, 4.0]).numpy()
        array(11., dtype=float32)
    """
    a, b = promote(value_of(x1), value_of(x2))
    try:
        return wrap(anp.dot(a, b))
    except ValueError:
        raise op_error("dot", "the contracted dimensions differ", a, b) from None


def tensordot(x1, x2, axes=2):
    """Sum of products over the given axes (numpy's `tensordot`).

    Args:
        x1: Tensor or array-like.
        x2: Tensor or array-like.
        axes: an int N (last N axes of `x1` with first N of `x2`) or a pair
            of axis lists.

    Returns:
        A Tensor.

    Raises:
        ValueError: if the contracted dimensions differ.

    Example:
        >>> tensordot(ops.ones((2, 3)), ops.ones((3, 4)), axes=1).shape
        (2, 4)
    """
    a, b = promote(value_of(x1), value_of(x2))
    try:
        return wrap(anp.tensordot(a, b, axes=axes))
    except (ValueError, IndexError):
        raise op_error("tensordot", f"cannot contract axes={axes!r}", a, b) from None


def einsum(subscripts, *operands):
    """Einstein summation, as numpy's `einsum`.

    Args:
        subscripts: the equation, for example `"ij,jk->ik"`.
        *operands: Tensors or array-likes.

    Returns:
        A Tensor.

    Raises:
        ValueError: if the operands do not fit the equation.

    Example:
        >>> einsum("ij,jk->ik", ops.ones((2, 3)), ops.ones((3, 4))).shape
        (2, 4)
    """
    values = [value_of(x) for x in operands]
    if len(values) == 2:
        values = list(promote(*values))
    try:
        return wrap(anp.einsum(subscripts, *values))
    except ValueError as error:
        raise op_error("einsum", f"operands do not fit {subscripts!r} ({error})", *values) from None
