"""Edge cases of the linear-algebra ops: gradients at singular matrices, float16
(computed in float32), and cholesky's gradient. Finite differences and hand-computed
values; the same as Keras (JAX backend) when it is installed."""

import numpy as np
import pytest
from finite_differences import check_float32, check_gradients, check_second_order

import minikeras as mk
from minikeras import ops

RANK_TWO = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [0.0, 1.0, 5.0]])
RANK_ONE = np.outer([1.0, 2.0, -1.0], [3.0, 1.0, 2.0])
SINGULAR_BATCH = np.stack([RANK_TWO, RANK_ONE, np.zeros((3, 3)), np.eye(3)])


def _gradient(fn, x):
    variable = mk.Variable(np.asarray(x, "float32"))
    with mk.GradientTape() as tape:
        total = ops.sum(fn(variable))
    return tape.gradient(total, variable).numpy()


@pytest.mark.parametrize("matrix", [RANK_TWO, RANK_ONE, np.zeros((3, 3)), SINGULAR_BATCH])
def test_det_gradient_at_singular_matrices_matches_finite_differences(matrix):
    # det is a polynomial: central differences are exact up to rounding, singular or not.
    check_gradients(ops.det, [matrix])
    check_second_order(ops.det, [matrix])
    check_float32(ops.det, [matrix])


def test_det_gradient_is_the_cofactor_matrix_by_hand():
    # cof(RANK_TWO)[i, j] = (-1)^(i+j) det(RANK_TWO without row i and column j)
    cofactors = [[14.0, -10.0, 2.0], [-7.0, 5.0, -1.0], [0.0, 0.0, 0.0]]
    np.testing.assert_allclose(_gradient(ops.det, RANK_TWO), cofactors, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(_gradient(ops.det, RANK_ONE), np.zeros((3, 3)), atol=1e-5)
    np.testing.assert_allclose(_gradient(ops.det, [[5.0]]), [[1.0]])
    repeated = np.diag([2.0, 2.0, 0.0])  # repeated and zero singular values
    np.testing.assert_allclose(_gradient(ops.det, repeated), np.diag([0.0, 0.0, 4.0]), atol=1e-6)
    check_second_order(ops.det, [repeated])


def test_det_gradient_of_invertible_matrices_is_det_times_inverse_transposed():
    # Invertible matrices take det(x) inv(x)^T; singular ones (in the same batch) the SVD.
    from minikeras.ops.determinants import _svd_cofactors

    rng = np.random.default_rng(3)
    batch = rng.normal(size=(6, 4, 4)) + 4 * np.eye(4)
    expected = np.linalg.det(batch)[:, None, None] * np.swapaxes(np.linalg.inv(batch), -1, -2)
    gradient = _gradient(ops.det, batch)
    np.testing.assert_allclose(gradient, expected, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(gradient, _svd_cofactors(batch.astype("float32")), rtol=1e-4)
    singular = np.eye(4)  # diag(RANK_TWO, 1): cofactors diag(cof(RANK_TWO), det(RANK_TWO) = 0)
    singular[:3, :3] = RANK_TWO
    mixed = _gradient(ops.det, np.concatenate([batch[:3], singular[None]], axis=0))
    np.testing.assert_allclose(mixed[:3], expected[:3], rtol=1e-5, atol=1e-5)
    cofactors = np.zeros((4, 4))
    cofactors[:3, :3] = [[14, -10, 2], [-7, 5, -1], [0, 0, 0]]
    np.testing.assert_allclose(mixed[3], cofactors, atol=1e-5)
    orthogonal = np.linalg.qr(rng.normal(size=(64, 64)))[0]  # cof(Q) = det(Q) Q
    expected = np.linalg.det(orthogonal) * orthogonal
    np.testing.assert_allclose(_gradient(ops.det, orthogonal), expected, atol=1e-5)


def test_matrices_holding_nan_give_nan_values_and_gradients():
    # As JAX: NaN, not numpy's LinAlgError (SVD did not converge) nor its det of 0.
    with_nan = np.array([[np.nan, 1.0], [1.0, 1.0]])
    regular = np.array([[2.0, 1.0], [0.5, 3.0]])  # det 5.5, inv^T [[3, -0.5], [-1, 2]] / 5.5
    batch = np.stack([with_nan, regular, np.full((2, 2), np.nan)])
    cofactors = np.array([[3.0, -0.5], [-1.0, 2.0]])
    logabsdet = [lambda x: ops.slogdet(x)[1], ops.logdet]
    for fn, value, gradient in [(ops.det, 5.5, cofactors)] + [
        (f, np.log(5.5), cofactors / 5.5) for f in logabsdet
    ]:
        result = fn(batch.astype("float32")).numpy()
        assert np.isnan(result[0]) and np.isnan(result[2])
        np.testing.assert_allclose(result[1], value, rtol=1e-6)
        gradients = _gradient(fn, batch)
        assert np.all(np.isnan(gradients[0])) and np.all(np.isnan(gradients[2]))
        np.testing.assert_allclose(gradients[1], gradient, rtol=1e-6)
        assert np.all(np.isnan(_gradient(fn, with_nan)))
    assert np.isnan(ops.slogdet(with_nan.astype("float32"))[0].numpy())
    x = mk.Variable(batch.astype("float32"))
    with mk.GradientTape() as outer:
        with mk.GradientTape() as inner:
            total = ops.sum(ops.det(x))
        squares = ops.sum(inner.gradient(total, x) ** 2)
    second = outer.gradient(squares, x).numpy()  # sum of cof(x)^2 is |x|^2 for 2x2
    assert np.all(np.isnan(second[0])) and np.all(np.isnan(second[2]))
    np.testing.assert_allclose(second[1], 2 * regular, rtol=1e-6)


def test_det_third_order_is_refused_not_zero():
    x = mk.Variable(np.eye(2, dtype="float32"))
    with mk.GradientTape(), pytest.raises(NotImplementedError, match="_cofactors_vjp_at"):
        with mk.GradientTape() as second:
            with mk.GradientTape() as first:
                y = ops.det(x)
            g = ops.sum(first.gradient(y, x) ** 2)
        second.gradient(g, x)


def test_slogdet_at_a_singular_matrix():
    sign, logabsdet = ops.slogdet(RANK_TWO.astype("float32"))
    assert float(sign) == 0.0 and float(logabsdet) == -np.inf
    # cof / det(= 0): infinite with the cofactors' signs, NaN where a cofactor is 0.
    with np.errstate(divide="ignore", invalid="ignore"):
        expected = np.array([[14.0, -10.0, 2.0], [-7.0, 5.0, -1.0], [0.0, 0.0, 0.0]]) / 0.0
    for fn in (lambda x: ops.slogdet(x)[1], ops.logdet):
        np.testing.assert_array_equal(_gradient(fn, RANK_TWO), expected)
    regular_too = _gradient(lambda x: ops.slogdet(x)[1], SINGULAR_BATCH)
    np.testing.assert_array_equal(regular_too[3], np.eye(3))
    assert np.all(np.isnan(regular_too[2]))


def test_slogdet_second_order_unchanged_beside_a_singular_matrix():
    regular = np.array([[2.0, 1.0], [0.5, 3.0]])
    check_gradients(lambda x: ops.slogdet(x)[1], [regular])
    check_second_order(lambda x: ops.slogdet(x)[1], [regular])


def test_det_gradients_at_singular_matrices_as_keras():
    keras = pytest.importorskip("keras")
    jax = pytest.importorskip("jax")
    batch = SINGULAR_BATCH.astype("float32")
    expected = jax.grad(lambda x: keras.ops.det(x).sum())(batch)
    np.testing.assert_allclose(_gradient(ops.det, batch), np.asarray(expected), atol=1e-5)
    hessian = jax.hessian(lambda x: keras.ops.det(x))(batch[0])
    direction = np.random.default_rng(0).normal(size=(3, 3)).astype("float32")
    x = mk.Variable(batch[0])
    with mk.GradientTape() as outer:
        with mk.GradientTape() as inner:
            y = ops.det(x)
        projected = ops.sum(inner.gradient(y, x) * direction)
    np.testing.assert_allclose(
        outer.gradient(projected, x).numpy(),
        np.einsum("ijkl,ij->kl", np.asarray(hessian), direction),
        rtol=1e-5,
        atol=1e-5,
    )
    sign, logabsdet = keras.ops.slogdet(batch)
    ours = ops.slogdet(batch)
    np.testing.assert_array_equal(ours[0].numpy(), np.asarray(sign))
    np.testing.assert_array_equal(ours[1].numpy(), np.asarray(logabsdet))


SPD = np.array([[4.0, 2.0, 0.5], [2.0, 3.0, 1.0], [0.5, 1.0, 2.0]])
FLOAT16_CASES = {
    "inv": lambda o, x: o.inv(x),
    "det": lambda o, x: o.det(x),
    "slogdet": lambda o, x: o.slogdet(x),
    "logdet": lambda o, x: o.logdet(x),
    "solve": lambda o, x: o.solve(x, x[:, :1]),
    "solve_triangular": lambda o, x: o.solve_triangular(x, x[0], lower=True),
    "cholesky": lambda o, x: o.cholesky(x, upper=True),
    "cholesky_inverse": lambda o, x: o.cholesky_inverse(o.cholesky(x)),
    "eigh": lambda o, x: o.eigh(x)[0],
    "eig": lambda o, x: o.eig(x)[0],
    "svd": lambda o, x: o.svd(x, compute_uv=False),
    "svd_uv": lambda o, x: o.abs(o.svd(x)[0]),
    "qr": lambda o, x: o.abs(o.qr(x)[1]),
    "lu_factor": lambda o, x: o.lu_factor(x),
    "pinv": lambda o, x: o.pinv(x[:, :2]),
    "lstsq": lambda o, x: o.lstsq(x[:, :2], x[:, 2]),
    "matrix_rank": lambda o, x: o.matrix_rank(x),
    "norm_nuc": lambda o, x: o.norm(x, ord="nuc"),
    "norm_2": lambda o, x: o.norm(x, ord=-2),
}


@pytest.mark.parametrize("name", sorted(FLOAT16_CASES))
def test_float16_is_computed_in_float32_and_given_back_as_float16(name):
    case = FLOAT16_CASES[name]
    half = SPD.astype("float16")
    ours = mk.tree.flatten(case(ops, half))
    widened = mk.tree.flatten(case(ops, half.astype("float32")))
    for got, want in zip(ours, widened):
        want = want.numpy()
        expected_dtype = np.float16 if want.dtype == np.float32 else want.dtype
        assert got.dtype == expected_dtype, name  # (eig: complex64; int32 stays int32)
        # (cholesky_inverse's input, a cholesky factor, was rounded to float16 on the way)
        rtol = 2e-3 if name == "cholesky_inverse" else 0
        np.testing.assert_allclose(got.numpy(), want.astype(expected_dtype), rtol, err_msg=name)


@pytest.mark.parametrize("name", ["inv", "det", "logdet", "solve", "cholesky", "svd", "pinv"])
def test_float16_gradients_are_float16(name):
    case = FLOAT16_CASES[name]
    x = mk.Variable(SPD.astype("float16"), dtype="float16")
    with mk.GradientTape() as tape:
        total = ops.sum(case(ops, x))
    grad = tape.gradient(total, x)
    y = mk.Variable(SPD.astype("float32"))
    with mk.GradientTape() as tape:
        total = ops.sum(case(ops, y))
    assert grad.dtype == np.float16
    np.testing.assert_allclose(grad.numpy(), tape.gradient(total, y).numpy(), rtol=2e-3, atol=1e-3)


def test_float16_beside_float32_is_float32():
    a, b = SPD.astype("float16"), np.ones(3, "float32")
    assert ops.solve(a, b).dtype == np.float32
    assert ops.solve(a, b.astype("float16")).dtype == np.float16


def test_float16_as_keras_where_keras_computes_it():
    keras = pytest.importorskip("keras")
    half = SPD.astype("float16")
    for name in ["det", "solve_triangular"]:  # (JAX's closed-form 3x3 det; no LAPACK)
        case = FLOAT16_CASES[name]
        for got, want in zip(
            mk.tree.flatten(case(ops, half)), mk.tree.flatten(case(keras.ops, half))
        ):
            want = np.asarray(want)
            assert got.dtype == want.dtype, name
            np.testing.assert_allclose(got.numpy(), want, rtol=2e-3, atol=1e-3, err_msg=name)
    with pytest.raises(NotImplementedError, match="float16"):  # (LAPACK has no float16)
        np.asarray(keras.ops.inv(half))


# Positive definite, and not symmetric: cholesky reads it as (x + x^T) / 2, as JAX.
LOPSIDED = SPD + np.array([[0.0, 0.3, -0.2], [-0.3, 0.0, 0.4], [0.2, -0.4, 0.0]])


@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_reads_both_triangles_half_each(upper):
    factor = ops.cholesky(LOPSIDED.astype("float32"), upper=upper).numpy()
    product = factor.T @ factor if upper else factor @ factor.T
    np.testing.assert_allclose(product, SPD, rtol=1e-5)  # (SPD is LOPSIDED's symmetric part)
    fn = lambda x: ops.cholesky(x, upper=upper)  # noqa: E731
    check_gradients(fn, [LOPSIDED])  # (finite differences of single entries, either triangle)
    check_second_order(fn, [LOPSIDED])
    check_float32(fn, [LOPSIDED])


def test_cholesky_of_a_lopsided_matrix_as_keras():
    keras = pytest.importorskip("keras")
    jax = pytest.importorskip("jax")
    x = LOPSIDED.astype("float32")
    weights = np.random.default_rng(1).normal(size=(3, 3)).astype("float32")
    np.testing.assert_allclose(
        ops.cholesky(x).numpy(), np.asarray(keras.ops.cholesky(x)), rtol=1e-5, atol=1e-6
    )
    expected = jax.grad(lambda a: (keras.ops.cholesky(a) * weights).sum())(x)
    np.testing.assert_allclose(
        _gradient(lambda a: ops.cholesky(a) * weights, x), np.asarray(expected), rtol=1e-4
    )
