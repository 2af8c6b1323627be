"""Determinants: det, slogdet and logdet, as Keras's ops, with gradients finite at
singular matrices.

The gradient of `det(A)` is the cofactor matrix `cof(A) = adj(A)^T`, which is
`det(A) inv(A)^T` only where `A` is invertible. Ours is computed from the
singular value decomposition `A = U diag(s) V^T` where `A` is singular or ill
conditioned (1-norm condition number above 1 / eps), and as the cheaper
`det(A) inv(A)^T` elsewhere. As `cof(XY) = cof(X) cof(Y)` and `cof(Q) = det(Q) Q`
for orthogonal `Q`,

    cof(A) = det(U) det(V) U diag(prod_{j != i} s_j) V^T.

Its derivative needs no derivative of the SVD: `cof(A + E) = det(U) det(V) U
cof(diag(s) + F) V^T` with `F = U^T E V`, and at a diagonal matrix (`P_ij` the
product of the `s_l` with `l` not `i` nor `j`)

    d cof(diag(s))[F] = diag(P @ diag(F)) - P * F^T   (P's diagonal taken as 0).

That map is its own adjoint, so the same formula gives the VJP: `det` has a
second-order gradient everywhere, singular matrices and repeated singular values
included (JAX's, through LU cofactors, agrees). Third order is refused.
float16 is computed in float32 and given back as float16 (Keras on JAX computes
float16 det only for matrices up to 3x3, by formula, and refuses slogdet).
"""

import autograd.numpy as anp
import numpy as np
from autograd.extend import defvjp, primitive

from minikeras.ops.core import getval, wrap
from minikeras.ops.linear_algebra import (
    _float16_in_float32,
    _linalg_call,
    _matrices,
    _transpose_last,
)

__all__ = ["det", "logdet", "slogdet"]


def _all_but_one_products(s):
    """For singular values `s` (..., n): the product of all but the i-th, `(..., n)`.
    No division, so zeros are fine."""
    ones = np.ones(s.shape[:-1] + (1,), dtype=s.dtype)
    before = np.concatenate([ones, np.cumprod(s[..., :-1], axis=-1)], axis=-1)  # l < i
    after = np.concatenate([np.cumprod(s[..., :0:-1], axis=-1)[..., ::-1], ones], axis=-1)
    return before, after


def _pair_products(s):
    """For singular values `s` (..., n): `P` (..., n, n), the products of all but the i-th
    and the j-th, with a zero diagonal."""
    n = s.shape[-1]
    before, after = _all_but_one_products(s)
    later = np.arange(n)[None, :] > np.arange(n)[:, None]  # [i, l]: l > i
    between = np.cumprod(np.where(later, s[..., None, :], 1), axis=-1)  # [i, j]: i < l <= j
    between = np.concatenate([np.ones_like(between[..., :1]), between[..., :-1]], axis=-1)
    upper = np.where(later, before[..., :, None] * between * after[..., None, :], 0)
    return upper + np.swapaxes(upper, -1, -2)


def _svd_parts(x):
    u, s, vt = np.linalg.svd(x)
    sign = np.sign(np.linalg.det(u) * np.linalg.det(vt)).astype(x.dtype)
    return u, s, vt, sign


def _svd_cofactors(x):
    u, s, vt, sign = _svd_parts(x)
    before, after = _all_but_one_products(s)
    return sign[..., None, None] * np.matmul(u * (before * after)[..., None, :], vt)


def _not_finite(x):
    """Where a matrix holds a NaN or an infinity: its gradients are NaN (JAX's are NaN too,
    all or some entries as its LU pivots fall); numpy's SVD and inverse would raise."""
    return ~np.all(np.isfinite(x), axis=(-2, -1))


def _finite_only(function, x):
    """`function` of each finite matrix of `x`, NaN for the others."""
    broken = _not_finite(x)
    if not np.any(broken):
        return function(x)
    result = np.full(x.shape, np.nan, dtype=x.dtype)
    result[~broken] = function(x[~broken])
    return result


def _well_conditioned(x):
    """`det(x)`, `inv(x)` (the identity's where unusable) and where `det(x) inv(x)^T` is
    used for the cofactors: a finite nonzero determinant and a 1-norm condition number
    below 1 / eps. (Measured: there it is as accurate as the SVD's, rounding in `det`
    and `inv` cancelling even for matrices singular but for rounding.)"""
    with np.errstate(invalid="ignore"):
        determinant = np.linalg.det(x)
    usable = np.isfinite(determinant) & (determinant != 0) & ~_not_finite(x)
    identity = np.eye(x.shape[-1], dtype=x.dtype)
    inverse = np.linalg.inv(np.where(usable[..., None, None], x, identity))
    norm = np.abs(x).sum(axis=-2).max(axis=-1)
    with np.errstate(invalid="ignore", over="ignore"):
        condition = norm * np.abs(inverse).sum(axis=-2).max(axis=-1)
    well = usable & (condition < 1 / np.finfo(x.dtype).eps)
    return determinant, inverse, well


@primitive
def _cofactors(x):
    """The cofactor matrix `adj(x)^T` of each square matrix, singular ones included:
    `det(x) inv(x)^T` where `x` is well conditioned, from the SVD elsewhere."""
    if x.shape[-1] == 0:
        return np.zeros_like(x)
    determinant, inverse, well = _well_conditioned(x)
    with np.errstate(invalid="ignore", over="ignore"):  # (where not well: replaced below)
        cofactors = determinant[..., None, None] * _transpose_last(inverse)
    if not np.all(well):
        ill = ~well
        cofactors[ill] = _finite_only(_svd_cofactors, x[ill])
    return cofactors.astype(x.dtype, copy=False)


@primitive
def _cofactors_vjp_at(x, g):
    # (a primitive without a VJP of its own: a third-order gradient raises, not a wrong 0)
    if x.shape[-1] == 0:
        return np.zeros_like(x)
    if np.any(_not_finite(x)):
        return _finite_only(lambda finite: _cofactors_vjp_at(finite, g[~_not_finite(x)]), x)
    u, s, vt, sign = _svd_parts(x)
    pairs = _pair_products(s)
    h = sign[..., None, None] * np.matmul(np.matmul(_transpose_last(u), g), _transpose_last(vt))
    diagonal = np.matmul(pairs, np.diagonal(h, axis1=-2, axis2=-1)[..., None])
    k = np.eye(x.shape[-1], dtype=x.dtype) * diagonal - _transpose_last(pairs * h)
    return np.matmul(np.matmul(u, k), vt)


defvjp(_cofactors, lambda ans, x: lambda g: _cofactors_vjp_at(x, g))


def _nan_where_nan(values, x):
    """`values` (one per matrix) with NaN for the matrices of `x` holding a NaN, as JAX
    (numpy's LU can give 0 or a sign for them)."""
    holds_nan = np.any(np.isnan(x), axis=(-2, -1))
    return np.where(holds_nan, np.nan, values).astype(values.dtype) if np.any(holds_nan) else values


@primitive
def _det(x):
    with np.errstate(invalid="ignore"):
        return _nan_where_nan(np.linalg.det(x), x)


defvjp(_det, lambda ans, x: lambda g: g[..., None, None] * _cofactors(x))


@_float16_in_float32
def det(x):
    """The determinant of a square matrix (of each, for a batch).

    Its gradient is the cofactor matrix `adj(x)^T`, finite and exact at
    singular matrices too (as JAX's), second order included. A matrix
    holding a NaN gives NaN, and NaN gradients (one holding an infinity too).

    Args:
        x: Tensor of shape `(..., M, M)`.

    Returns:
        A Tensor of shape `(...)`.

    Raises:
        ValueError: if `x` is not square matrices.

    Example:
        >>> float(mk.ops.det([[1.0, 2.0], [3.0, 4.0]]))
        -2.0
    """
    return _linalg_call("det", _det, _matrices("det", x))


def _cofactor_signs(x):
    """The signs of `cof(x)`, 0 where a cofactor is 0 up to rounding (relative to the largest
    singular value to the power n - 1, the cofactors' scale)."""
    n = x.shape[-1]
    cofactors = _cofactors(x)
    s = np.linalg.svd(x, compute_uv=False)  # (x finite here: _logabsdet_vjp sees to it)
    scale = n * np.finfo(x.dtype).eps * s[..., :1, None] ** (n - 1)
    return np.where(np.abs(cofactors) > scale, np.sign(cofactors), 0).astype(x.dtype)


@primitive
def _logabsdet(x):
    with np.errstate(invalid="ignore"):
        return _nan_where_nan(np.linalg.slogdet(x)[1], x)


def _logabsdet_vjp(ans, x):
    # d log|det x| = tr(x^-1 dx): the gradient is inv(x) transposed. At a singular matrix
    # (log|det| = -inf) it is cof(x) / 0: infinite with the cofactors' signs, NaN where a
    # cofactor is 0 (JAX's LU gives a mix of both there that depends on its pivots).
    # A matrix holding a NaN or an infinity has NaN gradients.
    broken = _not_finite(getval(x))
    singular = (getval(ans) == -np.inf) | broken
    if not np.any(singular):
        return lambda g: g[..., None, None] * _transpose_last(anp.linalg.inv(x))
    singular, broken = singular[..., None, None], broken[..., None, None]
    signs = _cofactor_signs(np.where(broken, 0, getval(x)))
    blown_up = np.where(signs == 0, np.nan, np.where(signs > 0, np.inf, -np.inf))
    blown_up = np.where(broken, np.nan, blown_up).astype(signs.dtype)
    invertible = anp.where(singular, np.eye(x.shape[-1], dtype=getval(x).dtype), x)

    def vjp(g):
        regular = _transpose_last(anp.linalg.inv(invertible))
        return g[..., None, None] * anp.where(singular, blown_up, regular)

    return vjp


defvjp(_logabsdet, _logabsdet_vjp)


@_float16_in_float32
def slogdet(x):
    """The sign and the natural log of the absolute value of the determinant.

    More accurate than `log(det(x))` for large or small determinants. A
    singular matrix gives `(0, -inf)`, as in Keras; the gradient of
    `logabsdet` there is `cof(x) / 0`: infinite with the signs of the
    cofactors, NaN where a cofactor is 0 (JAX's mixes the two according to
    its LU pivots). A matrix holding a NaN gives NaN (sign and value) and
    NaN gradients, as in JAX.

    Args:
        x: Tensor of shape `(..., M, M)`.

    Returns:
        A tuple `(sign, logabsdet)` of Tensors of shape `(...)`; the sign has
        no gradient.

    Raises:
        ValueError: if `x` is not square matrices.

    Example:
        >>> sign, logabsdet = mk.ops.slogdet([[2.0, 0.0], [0.0, -3.0]])
        >>> float(sign), round(float(logabsdet), 4)
        (-1.0, 1.7918)
    """
    value = _matrices("slogdet", x)
    with np.errstate(invalid="ignore"):
        sign = _nan_where_nan(np.linalg.slogdet(getval(value))[0], getval(value))
    return wrap(sign), _linalg_call("slogdet", _logabsdet, value)


@_float16_in_float32
def logdet(x):
    """The natural log of the determinant of a positive-definite matrix.

    As Keras's: the log of the absolute value (`slogdet(x)[1]`), so a matrix
    with a negative determinant gives a number, not NaN; a singular one gives
    `-inf`, its gradient as `slogdet`'s; one holding a NaN gives NaN.

    Args:
        x: Tensor of shape `(..., M, M)`.

    Returns:
        A Tensor of shape `(...)`.

    Raises:
        ValueError: if `x` is not square matrices.

    Example:
        >>> round(float(mk.ops.logdet([[2.0, 0.0], [0.0, 3.0]])), 4)
        1.7918
    """
    return _linalg_call("logdet", _logabsdet, _matrices("logdet", x))
