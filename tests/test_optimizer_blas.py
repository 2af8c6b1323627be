"""The big SGD updates through BLAS's axpy/axpby (`optimizers._blas`): the same numbers as
numpy's two passes (to the last bit or one rounding), whoever holds the arrays."""

import numpy as np
import pytest

import minikeras as mk
from minikeras.optimizers import _blas

RNG = np.random.default_rng(0)
BIG = (_blas.MIN_SIZE // 64 + 1, 64)  # just over the size BLAS takes


def _pair(shape, dtype):
    return RNG.standard_normal(shape).astype(dtype), RNG.standard_normal(shape).astype(dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", [BIG, (7, 5)])
def test_add_scaled_and_scale_and_add_give_numpys_numbers(shape, dtype):
    x, y = _pair(shape, dtype)
    eps = np.finfo(dtype).eps
    got = y.copy()
    _blas.add_scaled(got, -0.01, x, np.empty_like(y))
    want = y - x * np.asarray(0.01, dtype)
    np.testing.assert_allclose(got, want, rtol=4 * eps, atol=4 * eps)
    got = y.copy()
    _blas.scale_and_add(got, 0.9, -0.01, x, np.empty_like(y))
    want = y * np.asarray(0.9, dtype) - x * np.asarray(0.01, dtype)
    np.testing.assert_allclose(got, want, rtol=4 * eps, atol=8 * eps)
    assert got.dtype == dtype


def test_strided_overlapping_or_mixed_arrays_take_numpys_way():
    x, y = _pair(BIG[::-1], "float32")
    for other in (x.T, y.T.copy()[:, :], np.asarray(x.T, "float64")):
        got = y.T.copy()
        _blas.add_scaled(got, 0.5, other, np.empty_like(got))
        np.testing.assert_allclose(got, y.T + 0.5 * other, rtol=1e-6, atol=1e-6)
    flat = RNG.standard_normal(2 * _blas.MIN_SIZE + 2).astype("float32")
    before = flat.copy()
    half = _blas.MIN_SIZE + 1
    _blas.add_scaled(flat[1 : half + 1], 1.0, flat[:half], np.empty(half, "float32"))  # overlap
    np.testing.assert_allclose(flat[1 : half + 1], before[1 : half + 1] + before[:half], rtol=1e-6)


@pytest.mark.skipif(not _blas.available(), reason="numpy's OpenBLAS was not found")
def test_a_read_only_gradient_gives_the_same_bits_as_a_writeable_one():
    # (a writeable array's address comes from a ctypes view of it; a read-only one's from
    # `array.ctypes`, which a view cannot give)
    x, y = _pair(BIG, "float32")
    frozen = x.copy()
    frozen.flags.writeable = False
    results = []
    for gradient in (x, frozen):
        got = y.copy()
        _blas.add_scaled(got, -0.01, gradient, np.empty_like(y))
        _blas.scale_and_add(got, 0.9, -0.01, gradient, np.empty_like(y))
        results.append(got)
    np.testing.assert_array_equal(results[0], results[1])
    want = y - x * np.asarray(0.01, "float32")
    want = want * np.asarray(0.9, "float32") - x * np.asarray(0.01, "float32")
    np.testing.assert_allclose(results[0], want, rtol=1e-6, atol=1e-6)


def test_a_library_that_answers_wrong_is_not_used():
    def wrong(n, alpha, x, incx, *rest):  # does nothing: y stays y
        return None

    assert _blas._checked({np.dtype("float32"): (wrong, wrong)}) is None


@pytest.mark.parametrize("momentum, nesterov", [(0.0, False), (0.9, False), (0.9, True)])
def test_sgd_on_a_big_variable_follows_its_formula_with_or_without_blas(
    monkeypatch, momentum, nesterov
):
    value, grad = _pair(BIG, "float32")
    results = []
    for routines in (_blas._ROUTINES, None):
        monkeypatch.setattr(_blas, "_ROUTINES", routines)
        w = mk.Variable(value.copy())
        optimizer = mk.optimizers.SGD(0.01, momentum=momentum, nesterov=nesterov)
        for _ in range(2):
            optimizer.apply([grad], [w])
        results.append(w.numpy())
    v, w64 = np.zeros_like(value, "float64"), value.astype("float64")
    for _ in range(2):
        v = momentum * v - 0.01 * grad
        w64 = w64 + (momentum * v - 0.01 * grad if nesterov else v)
    for result in results:
        np.testing.assert_allclose(result, w64, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(results[0], results[1], rtol=2e-7, atol=2e-7)


@pytest.mark.parametrize("momentum", [0.0, 0.9])
def test_an_update_has_the_same_bits_whether_its_variable_is_held_or_not(momentum):
    value, grad = _pair(BIG, "float32")
    results = []
    for hold in (False, True):
        w = mk.Variable(value.copy())
        optimizer = mk.optimizers.SGD(0.01, momentum=momentum)
        held = []
        for _ in range(2):
            if hold:
                held.append(w.value)  # a read kept: the update writes a spare array
            optimizer.apply([grad], [w])
        results.append(w.numpy())
        if hold:
            np.testing.assert_array_equal(held[0].numpy(), value)  # the read kept its value
    np.testing.assert_array_equal(results[0], results[1])


@pytest.mark.parametrize("momentum", [0.0, 0.9])
def test_a_zero_learning_rate_still_carries_a_nan_gradient_as_numpy_does(momentum):
    # (BLAS skips a term whose factor is 0: such a call goes to numpy, whatever the size)
    big, small = mk.Variable(np.ones(BIG, "float32")), mk.Variable(np.ones(10, "float32"))
    grads = [np.full(BIG, np.nan, "float32"), np.full(10, np.nan, "float32")]
    mk.optimizers.SGD(0.0, momentum=momentum).apply(grads, [big, small])
    assert np.isnan(big.numpy()).all() and np.isnan(small.numpy()).all()
