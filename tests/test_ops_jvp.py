"""`ops.jvp`: forward-mode derivatives by two reverse passes, against finite
differences, hand values and Keras."""

import numpy as np
import pytest
from finite_differences import central_differences

import minikeras as mk
from minikeras import ops

RNG = np.random.default_rng(11)
X = RNG.normal(size=(3, 4)).astype("float32")
T = RNG.normal(size=(3, 4)).astype("float32")
W = RNG.normal(size=(4, 2)).astype("float32")
TW = RNG.normal(size=(4, 2)).astype("float32")


def _layer(x, w):
    return ops.tanh(ops.matmul(x, w)) * ops.sum(x * x)


def test_matches_a_directional_finite_difference():
    out, tangent = ops.jvp(_layer, (X, W), (T, TW))
    assert out.dtype == tangent.dtype == np.float32
    x, w = X.astype("float64"), W.astype("float64")
    for index in np.ndindex(out.shape):  # d/ds of each output along (T, TW)

        def along(s, index=index):
            moved_x, moved_w = x + s[0] * T, w + s[0] * TW
            return (np.tanh(moved_x @ moved_w) * np.sum(moved_x * moved_x))[index]

        expected = central_differences(along, np.zeros(1))[0]
        np.testing.assert_allclose(tangent.numpy()[index], expected, rtol=1e-3, atol=1e-4)


def test_structures_aux_and_unconnected_outputs():
    out, tangent, aux = ops.jvp(
        lambda d: ({"sin": ops.sin(d["x"]), "one": ops.ones((2,))}, "aux"),
        ({"x": X},),
        ({"x": T},),
        has_aux=True,
    )
    np.testing.assert_allclose(tangent["sin"].numpy(), np.cos(X) * T, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(tangent["one"].numpy(), [0.0, 0.0])
    assert aux == "aux" and set(out) == {"sin", "one"}


def test_is_differentiable_inside_a_tape():
    x = mk.Variable(X)
    with mk.GradientTape() as tape:
        _, tangent = ops.jvp(lambda a: a * a * a, (x,), (T,))  # 3 a^2 t
        total = ops.sum(tangent)
    np.testing.assert_allclose(tape.gradient(total, x).numpy(), 6.0 * X * T, rtol=1e-5)


def test_refusals():
    with pytest.raises(TypeError, match="jvp: primals must be a tuple or list"):
        ops.jvp(ops.sin, X, (T,))
    with pytest.raises(ValueError, match="jvp: primals has 2 tensors but tangents 1"):
        ops.jvp(_layer, (X, W), (T,))
    with pytest.raises(ValueError, match="tangent 0 has shape \\(4, 2\\), but its primal"):
        ops.jvp(ops.sin, (X,), (TW,))
    with pytest.raises(TypeError, match="jvp: primal 0 must be floating"):
        ops.jvp(ops.sin, (np.arange(3),), (np.ones(3),))


def test_same_as_keras():
    keras = pytest.importorskip("keras")
    ours = ops.jvp(_layer, (X, W), (T, TW))
    theirs = keras.ops.jvp(
        lambda x, w: keras.ops.tanh(keras.ops.matmul(x, w)) * keras.ops.sum(x * x), (X, W), (T, TW)
    )
    for got, want in zip(ours, theirs):
        np.testing.assert_allclose(got.numpy(), np.asarray(want), rtol=1e-5, atol=1e-5)
