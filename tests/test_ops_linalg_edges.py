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
