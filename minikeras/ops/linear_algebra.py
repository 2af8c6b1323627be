"""Linear algebra on (batches of) matrices: inv, solve, solve_triangular, pinv,
lstsq, matrix_rank, as Keras's ops.

Each works on the last two axes, batched over the others, and is differentiable
(second order too) except `matrix_rank`. `inv` and `solve` are autograd's
primitives; `pinv` is ours, because autograd's pinv VJP builds float64 identity
matrices (float32 would leak into float64). Our VJPs are written in autograd's
differentiable functions, so their gradients have gradients. Integer inputs give
floatx, as in Keras. float16 is computed in float32 and given back as float16
(`_float16_in_float32`): LAPACK has none, so Keras on JAX refuses most of these ops
on float16. Decompositions (cholesky, eigh, svd, qr...) are in `ops.decompositions`,
determinants in `ops.determinants`, `norm` in `ops.norms`.
"""

import functools

import autograd.numpy as anp
import numpy as np
from autograd.extend import defvjp, primitive

from minikeras.engine.primitive import call_primitive
from minikeras.ops.axes import broadcast_to
from minikeras.ops.core import array_of, as_float, getval, op_error, promote, shape_of, wrap
from minikeras.ops.operands import operand_values

__all__ = [
    "inv",
    "lstsq",
    "matrix_rank",
    "pinv",
    "solve",
    "solve_triangular",
]


_FLOAT16 = np.dtype(np.float16)


def _float_dtypes(operands):
    dtypes = (getattr(operand, "dtype", None) for operand in operands)
    return {np.dtype(d) for d in dtypes if d is not None and np.dtype(d).kind == "f"}


def _half(result):
    """A float32 Tensor (or each in a tuple) as float16; others as they are."""
    if isinstance(result, tuple):
        return tuple(_half(part) for part in result)
    if getattr(result, "dtype", None) == np.float32:
        return wrap(result._value.astype(np.float16))
    return result


def _float16_in_float32(op):
    """Runs a linear-algebra op on float16 operands in float32, and gives float16 back if
    they were all float16 (beside a float32 operand, the result is float32).

    numpy's linalg (LAPACK) has no float16; JAX's has none either, so Keras
    refuses most of these ops on float16, where we compute them.
    """

    @functools.wraps(op)
    def run(*args, **kwargs):
        floats = _float_dtypes(list(args) + list(kwargs.values()))
        if _FLOAT16 not in floats:
            return op(*args, **kwargs)

        def widened(operand):
            if getattr(operand, "dtype", None) != np.float16:
                return operand
            return array_of(operand).astype(np.float32)

        args = [widened(arg) for arg in args]
        kwargs = {name: widened(value) for name, value in kwargs.items()}
        result = op(*args, **kwargs)
        return _half(result) if floats == {_FLOAT16} else result

    return run


def _matrices(op, x, square=True):
    """`x` as a floating value (floatx for integers) with at least two axes, square if asked."""
    value = as_float(array_of(x))
    shape = shape_of(value)
    if len(shape) < 2:
        raise op_error(op, "expected a matrix (at least 2 axes)", value)
    if square and shape[-1] != shape[-2]:
        raise op_error(op, "expected square matrices in the last two axes", value)
    return value


def _transpose_last(x):
    """Swaps the last two axes (autograd's function, so it works on boxes)."""
    return anp.swapaxes(x, -1, -2)


def _eye_like(x, n=None):
    """An identity matrix of `x`'s dtype (autograd's `eye` is float64)."""
    return np.eye(shape_of(x)[-1] if n is None else n, dtype=getval(x).dtype)


def _linalg_call(op, primitive_fn, *values):
    try:
        return wrap(call_primitive(primitive_fn, *values))
    except np.linalg.LinAlgError as error:
        raise op_error(op, f"the matrix is singular or not valid here ({error})", *values) from None


@_float16_in_float32
def inv(x):
    """The inverse of a square matrix (of each, for a batch).

    Args:
        x: Tensor of shape `(..., M, M)`.

    Returns:
        A Tensor of the same shape (floatx for integer input).

    Raises:
        ValueError: if `x` is not square matrices, or is singular.

    Example:
        >>> mk.ops.inv([[2.0, 0.0], [0.0, 4.0]]).numpy()
        array([[0.5 , 0.  ],
               [0.  , 0.25]], dtype=float32)
    """
    return _linalg_call("inv", anp.linalg.inv, _matrices("inv", x))


def _solve(op, a, b, batched_vectors=False):
    """`solve(a, b)`, `b` a vector if 1-D (numpy 2, JAX), or with `batched_vectors` if it
    has one axis fewer than `a` (jax.scipy's triangular solve); batch axes broadcast."""
    a, b = promote(a, as_float(array_of(b)))
    a_shape, b_shape = shape_of(a), shape_of(b)
    vector = len(b_shape) == (len(a_shape) - 1 if batched_vectors else 1)
    rows = b_shape[-1] if vector else (b_shape[-2] if len(b_shape) > 1 else None)
    if rows != a_shape[-1]:
        raise op_error(op, f"b needs {a_shape[-1]} rows to match a", a, b)
    if vector:
        b = b[..., None]
    try:
        batch = np.broadcast_shapes(a_shape[:-2], shape_of(b)[:-2])
    except ValueError:
        raise op_error(op, "the batch axes of a and b do not broadcast", a, b) from None
    # Broadcast first, by an op with a gradient: autograd's solve VJP does not undo it.
    if a_shape[:-2] != batch:
        a = broadcast_to(a, batch + a_shape[-2:])._value
    if shape_of(b)[:-2] != batch:
        b = broadcast_to(b, batch + shape_of(b)[-2:])._value
    x = _linalg_call(op, anp.linalg.solve, a, b)
    return wrap(x._value[..., 0]) if vector else x


@_float16_in_float32
def solve(a, b):
    """Solves `a @ x = b` for `x`.

    As numpy 2 (and Keras): `b` is a vector if it has one axis, else a
    matrix (or a batch of them); batch axes broadcast.

    Args:
        a: Tensor of shape `(..., M, M)`.
        b: Tensor of shape `(..., M)` or `(..., M, K)`.

    Returns:
        `x`, a Tensor of `b`'s shape.

    Raises:
        ValueError: if `a` is not square, the rows of `b` differ, or `a` is
            singular.

    Example:
        >>> mk.ops.solve([[2.0, 0.0], [0.0, 4.0]], [1.0, 2.0]).numpy()
        array([0.5, 0.5], dtype=float32)
    """
    a, b = operand_values(a, b)  # (a numpy float64 b beside a float32 Tensor: float32)
    return _solve("solve", _matrices("solve", a), b)


@_float16_in_float32
def solve_triangular(a, b, lower=False):
    """Solves `a @ x = b` for a triangular `a`, reading only its triangle.

    Computed as `solve` on `a`'s triangle (numpy has no triangular solver);
    the gradient reaches that triangle only. As JAX's, `b` is a vector (or a
    batch of them) if it has one axis fewer than `a`.

    Args:
        a: Tensor of shape `(..., M, M)`.
        b: Tensor of shape `(..., M)` or `(..., M, K)`.
        lower: use the lower triangle of `a` (default: the upper one).

    Returns:
        `x`, a Tensor of `b`'s shape.

    Raises:
        ValueError: if `a` is not square, the rows of `b` differ, or the
            triangle is singular.

    Example:
        >>> mk.ops.solve_triangular([[2.0, 9.0], [1.0, 4.0]], [2.0, 4.0], lower=True).numpy()
        array([1.  , 0.75], dtype=float32)
    """
    a, b = operand_values(a, b)
    value = _matrices("solve_triangular", a)
    triangle = call_primitive(anp.tril if lower else anp.triu, value)
    return _solve("solve_triangular", triangle, b, batched_vectors=True)


def _default_rcond(x):
    shape = shape_of(x)
    return max(shape[-2:]) * np.finfo(getval(x).dtype).eps


@primitive
def _pinv(x, rcond):
    return np.linalg.pinv(x, rcond=rcond)


def _pinv_vjp(ans, x, rcond):
    # Golub and Pereyra's derivative, as autograd's, with identities of x's dtype.
    def vjp(g):
        dot = anp.matmul
        ans_t, g_t = _transpose_last(ans), _transpose_last(g)
        left = _eye_like(x, shape_of(x)[-2]) - dot(x, ans)
        right = _eye_like(x, shape_of(ans)[-2]) - dot(ans, x)
        return _transpose_last(
            -dot(dot(ans, g_t), ans)
            + dot(dot(dot(ans, ans_t), g), left)
            + dot(dot(dot(right, g), ans_t), ans)
        )

    return vjp


defvjp(_pinv, _pinv_vjp)


@_float16_in_float32
def pinv(x, rcond=None):
    """The Moore-Penrose pseudo-inverse, from the singular value decomposition.

    Args:
        x: Tensor of shape `(..., M, N)`.
        rcond: singular values below `rcond` times the largest count as zero;
            default `max(M, N)` times the dtype's epsilon, as JAX.

    Returns:
        A Tensor of shape `(..., N, M)`.

    Raises:
        ValueError: if `x` has fewer than two axes.

    Example:
        >>> mk.ops.pinv([[1.0], [1.0]]).numpy()
        array([[0.5, 0.5]], dtype=float32)
    """
    value = _matrices("pinv", x, square=False)
    rcond = _default_rcond(value) if rcond is None else rcond
    return wrap(call_primitive(_pinv, value, rcond))


@_float16_in_float32
def lstsq(a, b, rcond=None):
    """The least-squares solution `x` minimizing `norm(b - a @ x)`.

    Computed as `pinv(a, rcond) @ b` (the minimum-norm solution, as numpy's),
    so that it is differentiable in both arguments.

    Args:
        a: Tensor of shape `(M, N)`.
        b: Tensor of shape `(M,)` or `(M, K)`.
        rcond: cut-off for small singular values of `a`, as in `pinv`.

    Returns:
        `x`, a Tensor of shape `(N,)` or `(N, K)`.

    Raises:
        ValueError: if `a` is not a matrix or `b`'s rows differ from `a`'s.

    Example:
        >>> mk.ops.lstsq([[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]], [1.0, 2.0, 5.0]).numpy()
        array([1., 2.], dtype=float32)
    """
    a, b = operand_values(a, b)
    value = _matrices("lstsq", a, square=False)
    value, b = promote(value, as_float(array_of(b)))
    if len(shape_of(value)) != 2 or len(shape_of(b)) not in (1, 2):
        raise op_error("lstsq", "expected a matrix a and a vector or matrix b", value, b)
    if shape_of(b)[0] != shape_of(value)[0]:
        raise op_error("lstsq", f"b needs {shape_of(value)[0]} rows to match a", value, b)
    inverse = pinv(value, rcond)._value
    return wrap(anp.matmul(inverse, b))


@_float16_in_float32
def matrix_rank(x, tol=None):
    """The rank of a matrix: how many singular values exceed `tol`.

    Args:
        x: Tensor of shape `(..., M, N)`.
        tol: threshold; default the largest singular value times `max(M, N)`
            times the dtype's epsilon, as numpy.

    Returns:
        An int32 Tensor of shape `(...)` (no gradient).

    Raises:
        ValueError: if `x` has fewer than two axes.

    Example:
        >>> int(mk.ops.matrix_rank([[1.0, 2.0], [2.0, 4.0]]))
        1
    """
    value = getval(_matrices("matrix_rank", x, square=False))
    return wrap(np.asarray(np.linalg.matrix_rank(value, tol=tol), dtype="int32"))
