"""`activations.relu`'s Keras arguments (`negative_slope`, `max_value`, `threshold`).

Values are checked against the piecewise formula by hand, gradients against
central differences (at points away from the kinks), and both against Keras
when it is importable. The `ReLU` layer runs the same function.
"""

import os

import numpy as np
import pytest
from finite_differences import central_differences

import minikeras as mk

X = np.array([-10.0, -5.0, -1.5, -0.5, 0.5, 2.0, 5.5, 10.0])

CASES = [
    {},
    {"negative_slope": 0.5},
    {"max_value": 5.0},
    {"threshold": 5.0},
    {"negative_slope": 0.5, "max_value": 6.0},
    {"negative_slope": 0.1, "max_value": 3.0, "threshold": -2.0},
    {"negative_slope": 0.2, "threshold": 1.0},
    {"max_value": 6.0},
]


def _by_hand(x, negative_slope=0.0, max_value=None, threshold=0.0):
    out = []
    for v in x:
        passed = v if v > threshold else 0.0
        if max_value is not None:
            passed = min(max(passed, 0.0), max_value)
        out.append(passed + negative_slope * min(v - threshold, 0.0))
    return np.array(out)


@pytest.mark.parametrize("kwargs", CASES, ids=str)
def test_values_follow_the_formula(kwargs):
    result = mk.activations.relu(X.astype("float32"), **kwargs)
    assert result.dtype == np.float32
    np.testing.assert_allclose(result.numpy(), _by_hand(X, **kwargs), rtol=1e-6)


def test_hand_written_examples_from_keras_docstring():
    x = [-10.0, -5.0, 0.0, 5.0, 10.0]
    relu = mk.activations.relu
    np.testing.assert_array_equal(relu(x, negative_slope=0.5).numpy(), [-5, -2.5, 0, 5, 10])
    np.testing.assert_array_equal(relu(x, max_value=5.0).numpy(), [0, 0, 0, 5, 5])
    np.testing.assert_array_equal(relu(x, threshold=5.0).numpy(), [0, 0, 0, 0, 10])
    # positionally, in Keras's order
    np.testing.assert_array_equal(relu(x, 0.5, 5.0, 0.0).numpy(), [-5, -2.5, 0, 5, 5])


@pytest.mark.parametrize("kwargs", CASES, ids=str)
def test_gradients_match_finite_differences(kwargs):
    weights = np.linspace(-1.0, 1.5, X.size)
    x = mk.Variable(X, dtype="float64")
    with mk.GradientTape() as tape:
        loss = mk.ops.sum(mk.activations.relu(x, **kwargs) * weights)
    grad = tape.gradient(loss, x).numpy()

    def loss_of(values):
        return float(np.sum(mk.activations.relu(values, **kwargs).numpy() * weights))

    np.testing.assert_allclose(grad, central_differences(loss_of, X.copy()), atol=1e-6)


@pytest.mark.parametrize("kwargs", [k for k in CASES if k.get("threshold", 0) >= 0], ids=str)
def test_relu_layer_runs_the_activation(kwargs):
    layer = mk.layers.ReLU(**kwargs)
    np.testing.assert_allclose(layer(X.astype("float32")).numpy(), _by_hand(X, **kwargs), rtol=1e-6)


def test_default_relu_still_serializes_by_name():
    assert mk.activations.serialize(mk.activations.relu) == "relu"
    assert mk.activations.get("relu") is mk.activations.relu


@pytest.mark.parametrize("kwargs", CASES, ids=str)
def test_matches_keras(kwargs):
    os.environ.setdefault("KERAS_BACKEND", "jax")
    keras = pytest.importorskip("keras")
    x = X.astype("float32")
    expected = np.asarray(keras.activations.relu(x, **kwargs))
    np.testing.assert_allclose(mk.activations.relu(x, **kwargs).numpy(), expected, rtol=1e-6)


def test_a_negative_cap_gives_the_cap_everywhere_as_kerass_clip():
    # Keras clips to [0, max_value]; below zero its clip (numpy's and JAX's) gives the cap.
    x = mk.Variable(np.array([-2.0, 0.0, 3.0], "float32"))
    with mk.GradientTape() as tape:
        out = mk.activations.relu(x, max_value=-1.0, negative_slope=0.5)
        total = mk.ops.sum(out)
    np.testing.assert_array_equal(out.numpy(), [-1.0 - 0.5 * 2.0, -1.0, -1.0])
    np.testing.assert_array_equal(tape.gradient(total, x).numpy(), [0.5, 0.0, 0.0])
