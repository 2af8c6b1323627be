"""Linear algebra ops: inv, det, slogdet, logdet, solve, solve_triangular, cholesky,
cholesky_inverse, pinv, lstsq, matrix_rank, eigh, eig, svd, qr, lu_factor, norm.
Values against numpy by hand, gradients against finite differences (second order and
float32 too), values, dtypes and gradients against Keras when it is installed."""

import numpy as np
import pytest
from finite_differences import check_float32, check_gradients, check_second_order
from op_graphs import assert_saves_and_crosses_to_keras

import minikeras as mk
from minikeras import ops

RNG = np.random.default_rng(7)
SQUARE = (RNG.normal(size=(3, 3)) + 3.0 * np.eye(3)).astype("float32")
BATCH = (RNG.normal(size=(2, 3, 3)) + 3.0 * np.eye(3)).astype("float32")
TALL = RNG.normal(size=(4, 3)).astype("float32")
WIDE = RNG.normal(size=(2, 4)).astype("float32")
VECTOR = RNG.normal(size=(3,)).astype("float32")
RHS = RNG.normal(size=(3, 2)).astype("float32")


def _flat(*parts):
    return ops.concatenate([ops.reshape(part, (-1,)) for part in parts])


def _spd(x):
    """A symmetric positive-definite matrix made of x, so any perturbation keeps it so."""
    return ops.matmul(x, ops.swapaxes(x, -1, -2)) + 3.0 * ops.eye(x.shape[-1], dtype=x.dtype)


def _eigh_invariants(x):
    values, vectors = ops.eigh(x + ops.swapaxes(x, -1, -2))
    return _flat(values, vectors * vectors)  # the squares do not depend on each vector's sign


def _svd_invariants(x):
    u, s, vh = ops.svd(x, full_matrices=False)
    return _flat(s, ops.matmul(u, vh), u * u)


GRADIENT_CASES = {
    "inv": (ops.inv, [BATCH]),
    "det": (ops.det, [BATCH]),
    "slogdet": (lambda x: ops.slogdet(x)[1], [BATCH]),
    "logdet": (lambda x: ops.logdet(_spd(x)), [SQUARE]),
    "solve_vector": (ops.solve, [SQUARE, VECTOR]),
    "solve_matrix": (ops.solve, [BATCH, np.stack([RHS, RHS])]),
    "solve_broadcast_a": (ops.solve, [SQUARE, np.stack([RHS, -RHS])]),
    "solve_broadcast_vector": (ops.solve, [BATCH, VECTOR]),
    "solve_triangular_lower": (lambda a, b: ops.solve_triangular(a, b, lower=True), [SQUARE, RHS]),
    "solve_triangular_upper": (ops.solve_triangular, [BATCH, np.stack([VECTOR, VECTOR])]),
    "cholesky": (lambda x: ops.cholesky(_spd(x)), [BATCH]),
    "cholesky_upper": (lambda x: ops.cholesky(_spd(x), upper=True), [SQUARE]),
    "cholesky_inverse": (lambda x: ops.cholesky_inverse(ops.cholesky(_spd(x))), [SQUARE]),
    "pinv_tall": (ops.pinv, [TALL]),
    "pinv_wide": (ops.pinv, [WIDE]),
    "lstsq": (ops.lstsq, [TALL, RNG.normal(size=(4, 2))]),
    "eigh": (_eigh_invariants, [BATCH]),
    "eigh_values": (lambda x: ops.eigh(_spd(x))[0], [SQUARE]),
    "svd_tall": (_svd_invariants, [TALL]),
    "svd_wide": (_svd_invariants, [WIDE]),
    "svd_square_full": (lambda x: _flat(*ops.svd(x)[:2]), [BATCH]),
    "svd_values": (lambda x: ops.svd(x, compute_uv=False), [TALL]),
    "svd_full_values": (lambda x: ops.svd(x)[1], [WIDE]),
    "qr": (lambda x: _flat(*ops.qr(x)), [TALL]),
    "qr_square_complete": (lambda x: _flat(*ops.qr(x, mode="complete")), [BATCH]),
    "norm_vector": (lambda x: ops.norm(x, axis=-1, keepdims=True), [TALL]),
    "norm_vector_p": (lambda x: ops.norm(x, ord=3, axis=0), [TALL]),
    "norm_vector_1_inf": (lambda x: ops.norm(x, ord=1) + ops.norm(x, ord=-np.inf), [VECTOR]),
    "norm_fro": (lambda x: ops.norm(x, ord="fro", axis=(1, 2)), [BATCH]),
    "norm_nuc": (lambda x: ops.norm(x, ord="nuc"), [TALL]),
    "norm_matrix_2": (lambda x: ops.norm(x, ord=2) + ops.norm(x, ord=-2), [TALL]),
    "norm_matrix_1_inf": (
        lambda x: ops.norm(x, ord=1, axis=(2, 0)) + ops.norm(x, np.inf, (0, 2)),
        [BATCH],
    ),
}


@pytest.mark.parametrize("name", sorted(GRADIENT_CASES))
def test_gradients_match_finite_differences(name):
    fn, arrays = GRADIENT_CASES[name]
    check_gradients(fn, arrays)
    check_second_order(fn, arrays)
    check_float32(fn, arrays)


def test_values_by_hand():
    np.testing.assert_allclose(ops.inv(BATCH).numpy(), np.linalg.inv(BATCH), rtol=1e-5)
    np.testing.assert_allclose(ops.det(SQUARE).numpy(), np.linalg.det(SQUARE), rtol=1e-5)
    sign, logabsdet = ops.slogdet(-SQUARE)
    assert float(sign) == -np.sign(np.linalg.det(SQUARE))
    np.testing.assert_allclose(float(logabsdet), np.log(abs(np.linalg.det(SQUARE))), rtol=1e-5)
    lower = np.tril(SQUARE)
    x = ops.solve_triangular(SQUARE, RHS, lower=True).numpy()  # the upper triangle is not read
    np.testing.assert_allclose(lower @ x, RHS, rtol=1e-4, atol=1e-5)
    spd = SQUARE @ SQUARE.T + np.eye(3, dtype="float32")
    factor = ops.cholesky(spd).numpy()
    np.testing.assert_allclose(factor @ factor.T, spd, rtol=1e-5)
    assert np.all(np.triu(factor, 1) == 0)
    np.testing.assert_allclose(ops.cholesky_inverse(factor).numpy(), np.linalg.inv(spd), rtol=1e-4)
    upper = factor.T
    np.testing.assert_allclose(
        ops.cholesky_inverse(upper, upper=True).numpy(), np.linalg.inv(spd), rtol=1e-4
    )
    np.testing.assert_allclose(
        ops.lstsq(TALL, RHS[:, 0].repeat(2)[:4]).numpy(),
        np.linalg.lstsq(TALL, RHS[:, 0].repeat(2)[:4], rcond=None)[0],
        rtol=1e-4,
    )
    assert int(ops.matrix_rank(np.outer(VECTOR, VECTOR))) == 1
    assert ops.matrix_rank(BATCH).dtype == np.int32 and ops.matrix_rank(BATCH).shape == (2,)
    values, vectors = ops.eig(np.diag([1.0, 2.0]).astype("float32"))
    assert values.dtype == np.complex64 and vectors.dtype == np.complex64
    np.testing.assert_array_equal(values.numpy(), [1.0, 2.0])
    u, s, vh = ops.svd(TALL)
    assert (u.shape, s.shape, vh.shape) == ((4, 4), (3,), (3, 3))
    np.testing.assert_allclose((u.numpy()[:, :3] * s.numpy()) @ vh.numpy(), TALL, atol=1e-5)
    q, r = ops.qr(TALL)
    assert (q.shape, r.shape) == ((4, 3), (3, 3))
    np.testing.assert_allclose(q.numpy() @ r.numpy(), TALL, atol=1e-5)
    lu, pivots = ops.lu_factor(BATCH)
    for matrix, packed, swaps in zip(BATCH, lu.numpy(), pivots.numpy()):
        permuted = matrix.copy()
        for i, j in enumerate(swaps):
            permuted[[i, j]] = permuted[[j, i]]
        unit_lower = np.tril(packed, -1) + np.eye(3)
        np.testing.assert_allclose(unit_lower @ np.triu(packed), permuted, rtol=1e-5, atol=1e-5)
    assert pivots.dtype == np.int32
    matrix = np.array([[1.0, -2.0], [3.0, 4.0]], "float32")
    for ord, expected in [(None, np.sqrt(30)), (1, 6.0), (-1, 4.0), (np.inf, 7.0), (-np.inf, 3.0)]:
        np.testing.assert_allclose(float(ops.norm(matrix, ord=ord)), expected, rtol=1e-6)
    assert float(ops.norm([0.0, 3.0, -1.0], ord=0)) == 2.0
    assert (
        ops.norm(np.arange(3)).dtype == np.float32
        and ops.inv(np.eye(2, dtype=int)).dtype == np.float32
    )
    assert ops.norm(np.ones((2, 3, 4)), keepdims=True).shape == (1, 1, 1)


def test_refusals():
    with pytest.raises(ValueError, match="inv: expected square matrices.*\\(4, 3\\)"):
        ops.inv(TALL)
    with pytest.raises(ValueError, match="det: expected a matrix"):
        ops.det(VECTOR)
    with pytest.raises(ValueError, match="inv: the matrix is singular"):
        ops.inv(np.zeros((2, 2), "float32"))
    with pytest.raises(ValueError, match="solve: b needs 3 rows to match a"):
        ops.solve(SQUARE, np.ones(4, "float32"))
    with pytest.raises(ValueError, match="solve: b needs 3 rows"):  # numpy 2's rule, as Keras's
        ops.solve(BATCH, np.ones((2, 3), "float32"))
    with pytest.raises(ValueError, match="cholesky: the matrix is not positive definite"):
        ops.cholesky(-np.eye(2, dtype="float32"))
    with pytest.raises(ValueError, match="qr: mode must be"):
        ops.qr(TALL, mode="r")
    with pytest.raises(ValueError, match="norm: invalid ord 'fro' for a vector norm"):
        ops.norm(VECTOR, ord="fro")
    with pytest.raises(ValueError, match="norm: invalid ord 3 for a matrix norm"):
        ops.norm(SQUARE, ord=3)
    with pytest.raises(ValueError, match="norm: ord=1 with axis=None needs a vector or a matrix"):
        ops.norm(BATCH, ord=1)
    x = mk.Variable(TALL)
    with mk.GradientTape() as tape:
        u = ops.svd(x)[0]
    with pytest.raises(NotImplementedError, match="u or vh with full_matrices=True for non-square"):
        tape.gradient(u, x)


def test_same_values_and_gradients_as_keras():
    keras = pytest.importorskip("keras")
    jax = pytest.importorskip("jax")
    cases = {
        "inv": lambda o, x: o.inv(x),
        "det": lambda o, x: o.det(x),
        "slogdet": lambda o, x: o.slogdet(x)[1],
        "logdet": lambda o, x: o.logdet(o.matmul(x, o.transpose(x, (0, 2, 1)))),
        "solve": lambda o, x: o.solve(x, x[0, :, :2]),
        "solve_vector": lambda o, x: o.solve(x[0], x[1, 0]),
        "solve_triangular": lambda o, x: o.solve_triangular(x, x[:, :, :2], lower=True),
        "cholesky": lambda o, x: o.cholesky(o.matmul(x, o.transpose(x, (0, 2, 1))), upper=True),
        "cholesky_inverse": lambda o, x: o.cholesky_inverse(  # (Keras's: one matrix only)
            o.cholesky(o.matmul(x[0], o.transpose(x[0])))
        ),
        "pinv": lambda o, x: o.pinv(x[:, :, :2]),
        "lstsq": lambda o, x: o.lstsq(x[0, :, :2], x[1]),
        "eigh": lambda o, x: o.eigh(x + o.transpose(x, (0, 2, 1)))[0],
        "svd": lambda o, x: o.svd(x, compute_uv=False),
        "svd_u_vh": lambda o, x: o.matmul(*o.svd(x[:, :2], full_matrices=False)[::2]),
        "qr_r": lambda o, x: o.abs(o.qr(x)[1]),
        "norm_nuc": lambda o, x: o.norm(x, ord="nuc", axis=(1, 2)),
        "norm_2": lambda o, x: o.norm(x, ord=2, axis=(2, 1), keepdims=True),
        "norm_inf": lambda o, x: o.norm(x, ord=-np.inf, axis=(0, 2)),
        "norm_p": lambda o, x: o.norm(x, ord=0.5, axis=1),
    }
    weights = RNG.normal(size=64).astype("float32")
    for name, case in cases.items():
        ours = case(ops, BATCH)
        theirs = np.asarray(case(keras.ops, BATCH))
        assert ours.dtype == theirs.dtype, name
        np.testing.assert_allclose(ours.numpy(), theirs, rtol=2e-4, atol=1e-5, err_msg=name)
        w = weights[: theirs.size].reshape(theirs.shape)
        expected = jax.grad(lambda x, case=case, w=w: (case(keras.ops, x) * w).sum())(BATCH)
        x = mk.Variable(BATCH)
        with mk.GradientTape() as tape:
            total = ops.sum(case(ops, x) * w)
        np.testing.assert_allclose(
            tape.gradient(total, x).numpy(),
            np.asarray(expected),
            rtol=1e-3,
            atol=1e-4,
            err_msg=name,
        )
    for name in ["eig", "lu_factor", "matrix_rank"]:
        for ours, theirs in zip(
            mk.tree.flatten(getattr(ops, name)(BATCH)),
            mk.tree.flatten(getattr(keras.ops, name)(BATCH)),
        ):
            theirs = np.asarray(theirs)
            assert ours.dtype == theirs.dtype, name
            if name != "eig":  # (eigenvectors' phases differ; eigenvalues compared through det)
                np.testing.assert_allclose(ours.numpy(), theirs, rtol=1e-5, atol=1e-6, err_msg=name)
    np.testing.assert_allclose(
        np.prod(ops.eig(BATCH)[0].numpy(), axis=-1).real, np.linalg.det(BATCH), rtol=1e-4
    )


def _graph(k, keras_loadable=False):
    x = k.Input((3, 3))
    spd = k.ops.matmul(x, k.ops.transpose(x, (0, 2, 1))) + k.ops.eye(3) * 3.0
    outputs = [
        k.ops.inv(spd),
        k.ops.det(spd),
        k.ops.solve(spd, x),
        k.ops.cholesky(spd, upper=True),
        k.ops.solve_triangular(spd, x, lower=True),
        k.ops.svd(x, compute_uv=False),
        k.ops.qr(x)[1],
        k.ops.pinv(x),
        k.ops.norm(x, keepdims=True),
        k.ops.logdet(spd),
        k.ops.slogdet(spd)[1],
        k.ops.eigh(spd)[0],
        k.ops.matrix_rank(x),
    ]
    if not keras_loadable:
        # Keras's cholesky_inverse takes one matrix, not a batch; Keras saves Norm's axis
        # as a list, which its JAX backend cannot take back (nor from its own files).
        outputs.append(k.ops.cholesky_inverse(k.ops.cholesky(spd)))
        outputs.append(k.ops.norm(x, ord="nuc", axis=(1, 2), keepdims=True))
    return k.Model(x, outputs)


def test_ops_on_symbolic_tensors_record_keras_nodes_save_and_cross(tmp_path):
    model = _graph(mk)
    kinds = {type(op).__name__ for op in model.operations}
    assert {"Inv", "Cholesky", "CholeskyInverse", "SVD", "Qr", "Norm", "Logdet", "Slogdet"} <= kinds
    data = RNG.normal(size=(2, 3, 3)).astype("float32")
    assert_saves_and_crosses_to_keras(
        _graph, data, tmp_path, rtol=1e-4, atol=1e-5, keras_build=_keras_loadable_graph
    )


def _keras_loadable_graph(k):
    return _graph(k, keras_loadable=True)


@pytest.mark.parametrize("name", ["solve", "solve_triangular", "lstsq"])
def test_a_numpy_float64_operand_takes_the_tensors_precision(name):
    # (the float32 rule of ops.operands: a float64 constant beside a Tensor is narrowed)
    a, b = np.array([[2.0, 1.0], [0.5, 4.0]]), np.array([1.0, 2.0])
    op = getattr(ops, name)
    assert op(mk.ops.convert_to_tensor(a, "float32"), b).dtype == np.float32
    assert op(a, mk.ops.convert_to_tensor(b, "float32")).dtype == np.float32
    assert op(a, b).dtype == np.float64  # numpy values alone follow numpy
    wide = mk.ops.convert_to_tensor(a, dtype="float64")
    assert op(wide, b.astype("float32")).dtype == np.float64
