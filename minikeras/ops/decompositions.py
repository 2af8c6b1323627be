"""Matrix decompositions: cholesky (and cholesky_inverse), eigh, eig, svd, qr and
lu_factor, as Keras's ops.

On the last two axes, batched over the others. `cholesky`, `eigh`, `svd` and
`qr` are our primitives with their VJPs beside them (autograd has none for qr,
and its cholesky, eigh and svd VJPs build float64 identities, so float32 would
leak); the VJPs are written in autograd's differentiable functions, so they
have gradients too. A decomposition of several results is one primitive
returning a tuple (autograd's container boxes take it apart). `eig` and
`lu_factor` have no gradient here (JAX has them): their results are constants
to a tape. float16 is computed in float32 and given back as float16, where Keras on
JAX refuses it (LAPACK has no float16).
"""

import autograd.numpy as anp
import numpy as np
from autograd.extend import defvjp, primitive

from minikeras.engine.primitive import call_primitive
from minikeras.ops.core import getval, op_error, shape_of, wrap
from minikeras.ops.linear_algebra import (
    _eye_like,
    _float16_in_float32,
    _matrices,
    _transpose_last,
    solve_triangular,
)

__all__ = ["cholesky", "cholesky_inverse", "eig", "eigh", "lu_factor", "qr", "svd"]


@primitive
def _cholesky(x):
    return np.linalg.cholesky(x)


def _cholesky_vjp(lower, x):
    # Iain Murray's formula (arXiv:1602.07527), symmetrized, as autograd's, with a
    # float32 `phi`: S = L^-T phi(L^T g) L^-1, gradient (S + S^T) / 2 (the input is
    # symmetric: cholesky reads x as (x + x^T) / 2).
    def vjp(g):
        inner = anp.einsum("...ki,...kj->...ij", lower, g)
        phi = anp.tril(inner) * (1.0 - 0.5 * _eye_like(inner))
        left = anp.linalg.solve(_transpose_last(lower), phi)
        s = _transpose_last(anp.linalg.solve(_transpose_last(lower), _transpose_last(left)))
        return (s + _transpose_last(s)) * 0.5

    return vjp


defvjp(_cholesky, _cholesky_vjp)


@_float16_in_float32
def cholesky(x, upper=False):
    """The Cholesky factor of a symmetric positive-definite matrix.

    `x = L @ L.T` with `L` lower triangular (or `U.T @ U` with `upper`).
    The matrix is read as `(x + x.T) / 2`, as JAX (and so Keras) reads it:
    both triangles count, each for half, and the gradient is symmetric
    (numpy's cholesky reads only the lower triangle).

    Args:
        x: Tensor of shape `(..., M, M)`.
        upper: return the upper factor `U = L.T` instead.

    Returns:
        A Tensor of the same shape.

    Raises:
        ValueError: if `x` is not square or not positive definite.

    Example:
        >>> mk.ops.cholesky([[4.0, 2.0], [2.0, 2.0]]).numpy()
        array([[2., 0.],
               [1., 1.]], dtype=float32)
    """
    value = _matrices("cholesky", x)
    symmetric = (value + _transpose_last(value)) * 0.5
    try:
        lower = call_primitive(_cholesky, symmetric)
    except np.linalg.LinAlgError:
        raise op_error("cholesky", "the matrix is not positive definite", value) from None
    return wrap(_transpose_last(lower) if upper else lower)


@_float16_in_float32
def cholesky_inverse(x, upper=False):
    """The inverse of `A` from its Cholesky factor: `inv(L @ L.T)` (or `inv(U.T @ U)`).

    Args:
        x: the factor, Tensor of shape `(..., M, M)`, lower triangular (upper
            with `upper`); only that triangle is read.
        upper: `x` is the upper factor `U`.

    Returns:
        `A`'s inverse, a Tensor of the same shape.

    Raises:
        ValueError: if `x` is not square or its triangle is singular.

    Example:
        >>> mk.ops.cholesky_inverse([[2.0, 0.0], [1.0, 1.0]]).numpy()
        array([[ 0.5, -0.5],
               [-0.5,  1. ]], dtype=float32)
    """
    value = _matrices("cholesky_inverse", x)
    identity = np.broadcast_to(_eye_like(value), shape_of(value))
    inverse = solve_triangular(value, identity, lower=not upper)._value
    if upper:
        return wrap(anp.matmul(inverse, _transpose_last(inverse)))
    return wrap(anp.matmul(_transpose_last(inverse), inverse))


@primitive
def _eigh(x):
    eigenvalues, eigenvectors = np.linalg.eigh(x)
    return eigenvalues, eigenvectors


def _eigh_vjp(ans, x):
    # grad = V (diag(gw) + F * (V^T gv)) V^T with F_ij = 1 / (w_j - w_i) off the diagonal,
    # symmetrized: the input is read as (x + x^T) / 2, as JAX (and so Keras) reads it.
    eigenvalues, eigenvectors = ans

    def vjp(g):
        grad_values, grad_vectors = g
        inner = _eye_like(eigenvectors) * grad_values[..., None, :]
        if np.any(getval(grad_vectors)):  # only then: degenerate eigenvalues would give NaN
            gaps = eigenvalues[..., None, :] - eigenvalues[..., :, None]
            off_diagonal = 1.0 - _eye_like(eigenvectors)
            factor = off_diagonal / (gaps + _eye_like(eigenvectors))
            inner = inner + factor * anp.matmul(_transpose_last(eigenvectors), grad_vectors)
        grad = anp.matmul(anp.matmul(eigenvectors, inner), _transpose_last(eigenvectors))
        return (grad + _transpose_last(grad)) * 0.5

    return vjp


defvjp(_eigh, _eigh_vjp)


@_float16_in_float32
def eigh(x):
    """Eigenvalues and eigenvectors of a real symmetric matrix.

    The matrix is read as `(x + x.T) / 2` (JAX symmetrizes so, and its
    gradient is symmetric); numpy reads only the lower triangle.

    Args:
        x: Tensor of shape `(..., M, M)`.

    Returns:
        A tuple `(eigenvalues, eigenvectors)`: shapes `(..., M)` in ascending
        order and `(..., M, M)` with the eigenvectors in columns.

    Raises:
        ValueError: if `x` is not square matrices.

    Example:
        >>> values, vectors = mk.ops.eigh([[2.0, 0.0], [0.0, 1.0]])
        >>> values.numpy()
        array([1., 2.], dtype=float32)
    """
    value = _matrices("eigh", x)
    symmetric = (value + _transpose_last(value)) * 0.5
    result = call_primitive(_eigh, symmetric)
    return wrap(result[0]), wrap(result[1])


@_float16_in_float32
def eig(x):
    """Eigenvalues and right eigenvectors of a square matrix (no gradient).

    Args:
        x: Tensor of shape `(..., M, M)`.

    Returns:
        A tuple `(eigenvalues, eigenvectors)` of complex Tensors (complex64 for
        float32 input, as in Keras), shapes `(..., M)` and `(..., M, M)`.

    Raises:
        ValueError: if `x` is not square matrices.

    Example:
        >>> values, vectors = mk.ops.eig([[0.0, 1.0], [-1.0, 0.0]])
        >>> values.numpy()
        array([0.+1.j, 0.-1.j], dtype=complex64)
    """
    value = getval(_matrices("eig", x))
    complex_dtype = np.result_type(value.dtype, np.complex64)
    values, vectors = np.linalg.eig(value)
    return wrap(values.astype(complex_dtype)), wrap(vectors.astype(complex_dtype))


@primitive
def _svd(x, full_matrices, compute_uv):
    if not compute_uv:
        return np.linalg.svd(x, compute_uv=False)
    u, s, vt = np.linalg.svd(x, full_matrices=full_matrices)
    return u, s, vt


def _svd_vjp(ans, x, full_matrices, compute_uv):
    # Townsend's derivation (j-towns.github.io/papers/svd-derivative.pdf), as autograd's,
    # for real matrices, with identities of x's dtype.
    m, n = shape_of(x)[-2:]

    def vjp(g):
        dot = anp.matmul
        if not compute_uv:
            u, _, vt = _svd(x, False, True)
            return dot(u * g[..., None, :], vt)
        if full_matrices and m != n:
            if np.any(getval(g[0])) or np.any(getval(g[2])):
                raise NotImplementedError(
                    "svd: no gradient through u or vh with full_matrices=True for non-square "
                    "matrices (nor in JAX); use full_matrices=False"
                )
            u, _, vt = _svd(x, False, True)  # (the reduced factors have gradients)
            return dot(u * g[1][..., None, :], vt)
        u, s, vt = ans
        v = _transpose_last(vt)
        grad_u, grad_s, grad_v = g[0], g[1], _transpose_last(g[2])
        k = min(m, n)
        identity = _eye_like(s, k)
        f = 1.0 / (s[..., None, :] ** 2 - s[..., :, None] ** 2 + identity)
        utgu = dot(_transpose_last(u), grad_u)
        vtgv = dot(vt, grad_v)
        middle = (f * (utgu - _transpose_last(utgu))) * s[..., None, :]
        middle = middle + identity * grad_s[..., :, None]
        middle = middle + s[..., :, None] * (f * (vtgv - _transpose_last(vtgv)))
        grad = dot(dot(u, middle), vt)
        if m < n:
            rest = _eye_like(s, n) - dot(v, vt)
            grad = grad + dot(dot(u / s[..., None, :], _transpose_last(grad_v)), rest)
        elif m > n:
            rest = _eye_like(s, m) - dot(u, _transpose_last(u))
            grad = grad + _transpose_last(
                dot(dot(v / s[..., None, :], _transpose_last(grad_u)), rest)
            )
        return grad

    return vjp


defvjp(_svd, _svd_vjp)


@_float16_in_float32
def svd(x, full_matrices=True, compute_uv=True):
    """Singular value decomposition `x = u @ diag(s) @ vh`.

    Args:
        x: Tensor of shape `(..., M, N)`.
        full_matrices: `u` of shape `(..., M, M)` and `vh` `(..., N, N)`
            (default, as Keras); else `(..., M, K)` and `(..., K, N)` with
            `K = min(M, N)`. Gradients need square matrices or False, as in JAX.
        compute_uv: return `u`, `s` and `vh`; else only `s`.

    Returns:
        The tuple `(u, s, vh)`, the singular values `s` of shape `(..., K)` in
        descending order; or `s` alone.

    Raises:
        ValueError: if `x` has fewer than two axes.

    Example:
        >>> mk.ops.svd([[3.0, 0.0], [0.0, -2.0]], compute_uv=False).numpy()
        array([3., 2.], dtype=float32)
    """
    value = _matrices("svd", x, square=False)
    result = call_primitive(_svd, value, bool(full_matrices), bool(compute_uv))
    if not compute_uv:
        return wrap(result)
    return wrap(result[0]), wrap(result[1]), wrap(result[2])


@primitive
def _qr(x, complete):
    q, r = np.linalg.qr(x, mode="complete" if complete else "reduced")
    return q, r


def _qr_vjp(ans, x, complete):
    # For M >= N and the reduced factors: with C = R gR^T - gQ^T Q, made symmetric from its
    # lower triangle, grad = (gQ + Q C) R^-T (Walter and Lehmann; as JAX's).
    m, n = shape_of(x)[-2:]
    if m < n or (complete and m != n):
        raise NotImplementedError(
            "qr: gradients need rows >= columns and mode='reduced' (or square matrices)"
        )
    q, r = ans

    def vjp(g):
        grad_q, grad_r = g
        c = anp.matmul(r, _transpose_last(grad_r)) - anp.matmul(_transpose_last(grad_q), q)
        lower = anp.tril(c, -1)
        c = lower + _transpose_last(lower) + c * _eye_like(c)
        b = grad_q + anp.matmul(q, c)
        # b R^-T = (R^-1 b^T)^T
        return _transpose_last(anp.linalg.solve(r, _transpose_last(b)))

    return vjp


defvjp(_qr, _qr_vjp)


@_float16_in_float32
def qr(x, mode="reduced"):
    """QR decomposition `x = q @ r`, `q` with orthonormal columns, `r` upper triangular.

    Args:
        x: Tensor of shape `(..., M, N)`.
        mode: `"reduced"` (`q` `(..., M, K)`, `r` `(..., K, N)`, `K = min(M, N)`)
            or `"complete"` (`q` `(..., M, M)`, `r` `(..., M, N)`). Gradients
            need `M >= N` and the reduced mode (or square matrices).

    Returns:
        The tuple `(q, r)`.

    Raises:
        ValueError: if `mode` is unknown or `x` has fewer than two axes.

    Example:
        >>> q, r = mk.ops.qr([[3.0, 1.0], [4.0, 2.0]])
        >>> np.round(np.abs(r.numpy()), 4)
        array([[5. , 2.2],
               [0. , 0.4]], dtype=float32)
    """
    if mode not in ("reduced", "complete"):
        raise ValueError(f"qr: mode must be 'reduced' or 'complete', got {mode!r}")
    result = call_primitive(_qr, _matrices("qr", x, square=False), mode == "complete")
    return wrap(result[0]), wrap(result[1])


@_float16_in_float32
def lu_factor(x):
    """LU factorization with partial pivoting, packed as LAPACK's (and Keras's) `lu_factor`.

    `x[perm] = L @ U`, `L` unit lower triangular and `U` upper triangular,
    both in one matrix (`L` below the diagonal); `pivots[i]` is the row
    swapped with row `i` at step `i`. No gradient (JAX has one).

    Args:
        x: Tensor of shape `(..., M, M)`.

    Returns:
        The tuple `(lu, pivots)`: shapes `(..., M, M)` and `(..., M)` (int32).

    Raises:
        ValueError: if `x` is not square matrices.

    Example:
        >>> lu, pivots = mk.ops.lu_factor([[1.0, 2.0], [4.0, 2.0]])
        >>> lu.numpy(), pivots.numpy()
        (array([[4.  , 2.  ],
               [0.25, 1.5 ]], dtype=float32), array([1, 1], dtype=int32))
    """
    value = np.array(getval(_matrices("lu_factor", x)))  # a copy: factored in place
    shape = value.shape
    lu = value.reshape((-1,) + shape[-2:])
    size = shape[-1]
    pivots = np.zeros((lu.shape[0], size), dtype="int32")
    batch = np.arange(lu.shape[0])
    for k in range(size):
        pivot = k + np.argmax(np.abs(lu[:, k:, k]), axis=1)
        pivots[:, k] = pivot
        rows = lu[batch, pivot].copy()
        lu[batch, pivot] = lu[:, k]
        lu[:, k] = rows
        diagonal = lu[:, k, k]
        safe = np.where(diagonal == 0, 1, diagonal)[:, None]
        lu[:, k + 1 :, k] /= safe
        lu[:, k + 1 :, k + 1 :] -= lu[:, k + 1 :, k, None] * lu[:, k, None, k + 1 :]
    if np.any(np.isnan(lu)):
        raise op_error("lu_factor", "the matrix holds NaN", value)
    return wrap(lu.reshape(shape)), wrap(pivots.reshape(shape[:-1]))
