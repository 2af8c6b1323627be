"""The engine's gradient plumbing: undoing broadcasting, summing a node's gradients."""

import numpy as np
import pytest

from minikeras import GradientTape, Tensor, ops
from minikeras.engine.broadcast import bias_gradient, unbroadcast


def test_unbroadcast_returns_the_gradient_itself_when_nothing_was_broadcast():
    g = np.ones((3, 4), np.float32)
    assert unbroadcast(g, np.zeros((3, 4), np.float32)) is g


@pytest.mark.parametrize(
    "shape", [(4,), (1, 4), (3, 1), (), (1, 1), (2, 1, 4)], ids=lambda shape: str(shape)
)
def test_unbroadcast_sums_the_broadcast_axes(shape):
    rng = np.random.default_rng(0)
    g = rng.standard_normal(np.broadcast_shapes(shape, (3, 4)))
    target = np.zeros(shape)
    # The sum that broadcasting forward implies, one output element at a time.
    expected = np.zeros(shape)
    for index in np.ndindex(g.shape):
        source = tuple(
            0 if size == 1 else i for i, size in zip(index[len(g.shape) - len(shape) :], shape)
        )
        expected[source] += g[index]
    np.testing.assert_allclose(unbroadcast(g, target), expected, rtol=1e-12)


def test_unbroadcast_of_a_python_number_is_a_total():
    assert unbroadcast(np.full((2, 3), 0.5, np.float32), 2.0) == np.float32(3.0)


def test_bias_gradient_sums_all_but_the_last_axis():
    g = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    np.testing.assert_array_equal(bias_gradient(g), g.sum(axis=(0, 1)))


def test_bias_gradient_of_any_dtype_or_byte_order_is_the_sum_in_its_dtype(monkeypatch):
    from minikeras.engine import broadcast

    monkeypatch.setattr(broadcast, "_ONES", {})
    rng = np.random.default_rng(0)
    values = rng.normal(size=(128, 64)) * 8
    swapped = values.astype(">f4")  # a non-native gradient (output_gradients given so)
    np.testing.assert_allclose(bias_gradient(swapped), values.sum(axis=0), rtol=1e-5)
    # Its cached row of ones is native: a native gradient after it is not converted.
    assert all(ones.dtype.isnative for ones in broadcast._ONES.values())
    native = values.astype(np.float32)
    np.testing.assert_array_equal(bias_gradient(native), bias_gradient(swapped))
    for dtype in (np.float16, np.int32, np.int64):  # summed by numpy, as before
        g = values.astype(dtype)
        np.testing.assert_array_equal(bias_gradient(g), np.add.reduce(g, axis=0))
    row = values[:1].astype(np.float32)  # one row: itself
    np.testing.assert_array_equal(bias_gradient(row), row[0])
    cube = native.reshape(4, 32, 64)
    np.testing.assert_array_equal(bias_gradient(cube), bias_gradient(native))
    for shape in [(2, 1), (5, 3), (1000, 2)]:  # small and narrow ones too (BLAS there as well)
        g = rng.normal(size=shape).astype(np.float32)
        np.testing.assert_allclose(bias_gradient(g), g.astype(np.float64).sum(axis=0), rtol=1e-5)


def test_a_value_used_many_times_gets_the_sum_of_its_gradients():
    # x feeds five nodes; the backward pass adds their gradients (first out of
    # place, then into its own buffer) and must not write into any VJP's `g`.
    x = Tensor(np.array([1.0, 2.0, 3.0], np.float32))
    with GradientTape() as tape:
        tape.watch(x)
        y = x * 3.0 + x * x + ops.exp(x) + x - x / 2.0
        loss = ops.sum(y * y)
    grad = tape.gradient(loss, x).numpy()
    v = x.numpy().astype(np.float64)
    y_value = 3 * v + v * v + np.exp(v) + v - v / 2
    expected = 2 * y_value * (3 + 2 * v + np.exp(v) + 1 - 0.5)
    assert grad.dtype == np.float32
    np.testing.assert_allclose(grad, expected, rtol=1e-5)


def test_gradients_of_shared_operands_do_not_alias():
    # `t + t` hands the same `g` to both parents: the sum must be a new array.
    t = Tensor(np.ones((2, 2), np.float32))
    with GradientTape(persistent=True) as tape:
        tape.watch(t)
        y = t + t
        z = y + y
    np.testing.assert_array_equal(tape.gradient(z, t).numpy(), np.full((2, 2), 4.0))
    np.testing.assert_array_equal(tape.gradient(z, y).numpy(), np.full((2, 2), 2.0))
