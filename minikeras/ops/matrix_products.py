"""Products of arrays: matmul, dot, tensordot, einsum.

(The module was `ops.linalg` until that name became Keras's namespace,
`minikeras.ops.linalg`, which holds the linear-algebra ops.)
"""

import string

import autograd.numpy as anp
import numpy as np
from autograd.extend import defvjp_argnum, primitive
from autograd.tracer import getval

from minikeras.engine.primitive import call_primitive
from minikeras.ops.core import op_error, promote, promote_operands, same_float, wrap
from minikeras.ops.math import multiply
from minikeras.ops.operands import operand_values, operand_values_list

__all__ = ["dot", "einsum", "matmul", "tensordot"]


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
        >>> mk.ops.matmul(mk.ops.ones((2, 3)), mk.ops.ones((3, 4))).shape
        (2, 4)
    """
    a, b = promote_operands(x1, x2)
    try:
        return wrap(call_primitive(anp.matmul, a, b))
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
        >>> mk.ops.dot([1.0, 2.0], [3.0, 4.0]).numpy()
        array(11., dtype=float32)
    """
    a, b = operand_values(x1, x2)
    if isinstance(a, (int, float, complex)) or isinstance(b, (int, float, complex)):
        return multiply(a, b)  # numpy's dot would make a number a float64 (or int64) array
    a, b = promote(a, b)
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
        >>> mk.ops.tensordot(mk.ops.ones((2, 3)), mk.ops.ones((3, 4)), axes=1).shape
        (2, 4)
    """
    a, b = promote_operands(x1, x2)
    try:
        return wrap(anp.tensordot(a, b, axes=axes))
    except (ValueError, IndexError):
        raise op_error("tensordot", f"cannot contract axes={axes!r}", a, b) from None


def einsum(subscripts, *operands):
    """Einstein summation, as numpy's `einsum`.

    Gradients flow to every operand, also through repeated subscripts such as
    a trace (`"ii->"`) or a diagonal (`"bii->bi"`). Integer operands take the
    float dtype of the others.

    Args:
        subscripts: the equation, for example `"ij,jk->ik"`.
        *operands: Tensors or array-likes.

    Returns:
        A Tensor.

    Raises:
        ValueError: if the operands do not fit the equation.

    Example:
        >>> mk.ops.einsum("ij,jk->ik", mk.ops.ones((2, 3)), mk.ops.ones((3, 4))).shape
        (2, 4)
        >>> mk.ops.einsum("ii->", mk.ops.eye(3)).numpy()
        array(3., dtype=float32)
    """
    values = same_float(operand_values_list(operands))
    try:
        inputs, output, _ = anp.parse_einsum_input(subscripts, *[getval(v) for v in values])
        return wrap(_einsum(f"{inputs}->{output}", *values))
    except (ValueError, TypeError) as error:
        raise op_error("einsum", f"operands do not fit {subscripts!r} ({error})", *values) from None


@primitive
def _einsum(equation, *operands):
    # (three or more operands: numpy pairs them up, with BLAS where it can; unoptimized,
    # one loop runs over every index at once, B*H*W*h*w*C steps for a resize)
    return np.einsum(equation, *operands, optimize=len(operands) > 2)


def _einsum_vjp(argnum, ans, args, kwargs):
    """The gradient of operand k is an einsum of the upstream gradient and the others.

    `equation` is explicit (`"ab,bc->ac"`, no ellipsis). A letter repeated in
    operand k (a diagonal) gets a fresh letter per repeat, tied to it by an
    identity matrix; a letter only operand k has is supplied by a ones vector.
    """
    equation, *operands = args
    inputs, output = equation.split("->")
    inputs = inputs.split(",")
    k = argnum - 1
    target, shape = inputs[k], np.shape(operands[k])
    dtype = operands[k].dtype
    free = iter(sorted(set(string.ascii_letters) - set(equation)))
    others = [sub for i, sub in enumerate(inputs) if i != k]
    known = set(output).union(*others)
    result_subs, extra_subs, extra_values, seen = [], [], [], set()
    for letter, size in zip(target, shape):
        if letter in seen:
            fresh = next(free)
            extra_subs.append(letter + fresh)
            extra_values.append(np.eye(size, dtype=dtype))
            result_subs.append(fresh)
            continue
        if letter not in known:
            extra_subs.append(letter)
            extra_values.append(np.ones(size, dtype=dtype))
            known.add(letter)
        seen.add(letter)
        result_subs.append(letter)
    gradient_equation = ",".join([output, *others, *extra_subs]) + "->" + "".join(result_subs)
    rest = [value for i, value in enumerate(operands) if i != k]

    def vjp(g):
        grad = _einsum(gradient_equation, g, *rest, *extra_values)
        # Size-1 axes that einsum broadcast: sum the gradient back onto them.
        summed = tuple(
            axis for axis, size in enumerate(shape) if size == 1 and np.shape(grad)[axis] != 1
        )
        if summed:
            grad = anp.sum(grad, axis=summed, keepdims=True)
        # A summed letter of size 1 in every other operand (broadcast against this one):
        # each of its values took the same share, so the gradient is the same along it.
        if np.shape(grad) != shape:
            grad = grad * np.ones(shape, dtype=dtype)  # (an array of its own, not a view)
        return grad

    return vjp


defvjp_argnum(_einsum, _einsum_vjp)
