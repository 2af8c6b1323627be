"""Edge cases of element-wise and set ops: NaN in unique, activations' gradients at
+-inf. By hand, and the same as Keras (JAX backend) when it is installed."""

import numpy as np
import pytest

import minikeras as mk
from minikeras import ops

WITH_NANS = np.array([np.nan, 1.0, np.nan, 1.0, 2.0], "float32")
ROWS_WITH_NANS = np.array([[np.nan, 1.0], [np.nan, 1.0], [0.0, 2.0]], "float32")


def test_unique_keeps_each_nan_apart():
    values, index, inverse, counts = ops.unique(
        WITH_NANS, return_index=True, return_inverse=True, return_counts=True
    )
    np.testing.assert_array_equal(values.numpy(), [1.0, 2.0, np.nan, np.nan])
    assert index.numpy().tolist() == [1, 4, 0, 2]
    assert inverse.numpy().tolist() == [2, 0, 3, 0, 1]
    assert counts.numpy().tolist() == [2, 1, 1, 1]
    values, counts = ops.unique(WITH_NANS, return_counts=True, size=6)
    np.testing.assert_array_equal(values.numpy(), [1.0, 2.0, np.nan, np.nan, 1.0, 1.0])
    assert counts.numpy().tolist() == [2, 1, 1, 1, 0, 0]
    rows, inverse, counts = ops.unique(
        ROWS_WITH_NANS, axis=0, return_inverse=True, return_counts=True
    )
    np.testing.assert_array_equal(rows.numpy(), [[0.0, 2.0], [np.nan, 1.0], [np.nan, 1.0]])
    assert inverse.numpy().tolist() == [1, 2, 0] and counts.numpy().tolist() == [1, 1, 1]


@pytest.mark.parametrize("size", [None, 3, 6])
def test_unique_with_nans_as_keras(size):
    keras = pytest.importorskip("keras")
    for x, axis in [(WITH_NANS, None), (ROWS_WITH_NANS, 0)]:
        if axis is not None and size is not None:
            continue
        kwargs = dict(return_index=True, return_inverse=True, return_counts=True, size=size)
        if axis is not None:
            kwargs = dict(return_inverse=True, return_counts=True, axis=axis)
        for got, want in zip(ops.unique(x, **kwargs), keras.ops.unique(x, **kwargs)):
            want = np.asarray(want)
            assert got.dtype == want.dtype
            np.testing.assert_array_equal(got.numpy(), want)


INFINITIES = np.array([-np.inf, np.inf, -4.0, 0.5, 4.0], "float32")
# The derivatives' limits at -inf and inf, then their values at -4, 0.5 and 4, by hand:
# hard_silu' = hard_sigmoid(x) + x / 6 on (-3, 3), else 0 or 1; tanh_shrink' = tanh(x)^2.
LIMITS = {
    "hard_silu": ([0.0, np.inf, 0.0, 0.5 * (0.5 + 3) / 6, 4.0],
                  [0.0, 1.0, 0.0, (0.5 + 3) / 6 + 0.5 / 6, 1.0]),
    "tanh_shrink": ([-np.inf, np.inf, -4 - np.tanh(-4.0), 0.5 - np.tanh(0.5), 4 - np.tanh(4.0)],
                    [1.0, 1.0, np.tanh(4.0) ** 2, np.tanh(0.5) ** 2, np.tanh(4.0) ** 2]),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(LIMITS))
def test_activation_gradients_at_infinity_are_their_limits(name):
    values, slopes = LIMITS[name]
    x = mk.Variable(INFINITIES)
    with mk.GradientTape() as tape:
        y = getattr(ops, name)(x)
    np.testing.assert_allclose(y.numpy(), values, rtol=1e-6)
    # (the gradient of y's sum; the sum itself would be inf - inf)
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), slopes, rtol=1e-6)


@pytest.mark.parametrize("name", sorted(LIMITS))
def test_activation_gradients_at_infinity_as_keras(name):
    keras = pytest.importorskip("keras")
    jax = pytest.importorskip("jax")
    expected = jax.vmap(jax.grad(getattr(keras.ops, name)))(INFINITIES)
    x = mk.Variable(INFINITIES)
    with mk.GradientTape() as tape:
        y = getattr(ops, name)(x)
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), np.asarray(expected), rtol=1e-6)
