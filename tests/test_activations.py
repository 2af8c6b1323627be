"""Activations: values against numpy formulas, gradients against finite differences."""

import math

import numpy as np
import pytest
from finite_differences import central_differences

import minikeras
from minikeras import activations

# Points kept away from 0, where relu, leaky_relu and elu have a kink.
X = np.array([[-3.1, -1.2, -0.4, 0.3, 0.9, 2.5], [-0.7, 1.7, -2.2, 0.6, -0.2, 4.0]])


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def _erf(x):
    return np.vectorize(math.erf)(x)


def _softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


# (name in `get`, the activation, numpy reference)
CASES = [
    ("relu", activations.relu, lambda x: np.maximum(x, 0)),
    ("sigmoid", activations.sigmoid, _sigmoid),
    ("tanh", activations.tanh, np.tanh),
    ("softmax", activations.softmax, lambda x: _softmax(x, -1)),
    ("softmax_axis0", lambda x: activations.softmax(x, axis=0), lambda x: _softmax(x, 0)),
    ("gelu", activations.gelu, lambda x: 0.5 * x * (1 + _erf(x / np.sqrt(2)))),
    (
        "gelu_tanh",
        lambda x: activations.gelu(x, approximate=True),
        lambda x: 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3))),
    ),
    ("elu", activations.elu, lambda x: np.where(x > 0, x, np.exp(x) - 1)),
    (
        "elu_alpha",
        lambda x: activations.elu(x, alpha=0.5),
        lambda x: np.where(x > 0, x, 0.5 * (np.exp(x) - 1)),
    ),
    ("leaky_relu", activations.leaky_relu, lambda x: np.where(x > 0, x, 0.2 * x)),
    (
        "leaky_relu_slope",
        lambda x: activations.leaky_relu(x, negative_slope=0.01),
        lambda x: np.where(x > 0, x, 0.01 * x),
    ),
    ("swish", activations.swish, lambda x: x * _sigmoid(x)),
    ("linear", activations.linear, lambda x: x),
    ("softplus", activations.softplus, lambda x: np.log1p(np.exp(x))),
    # Keras 3's further activations (minikeras.more_activations).
    ("relu6", activations.relu6, lambda x: np.clip(x, 0, 6)),
    ("hard_sigmoid", activations.hard_sigmoid, lambda x: np.clip(x / 6 + 0.5, 0, 1)),
    ("hard_silu", activations.hard_silu, lambda x: x * np.clip(x / 6 + 0.5, 0, 1)),
    (
        "selu",
        activations.selu,
        lambda x: 1.0507009873554805 * np.where(x > 0, x, 1.6732632423543772 * np.expm1(x)),
    ),
    ("softsign", activations.softsign, lambda x: x / (np.abs(x) + 1)),
    ("mish", activations.mish, lambda x: x * np.tanh(np.log1p(np.exp(x)))),
    ("log_sigmoid", activations.log_sigmoid, lambda x: -np.log1p(np.exp(-x))),
    ("exponential", activations.exponential, np.exp),
    ("log_softmax", activations.log_softmax, lambda x: np.log(_softmax(x, -1))),
]
IDS = [case[0] for case in CASES]


@pytest.mark.parametrize("name, activation, reference", CASES, ids=IDS)
def test_values_match_numpy_reference(name, activation, reference):
    result = activation(minikeras.Tensor(X, dtype="float64"))
    assert isinstance(result, minikeras.Tensor)
    assert result.dtype == np.float64
    # ops.erf is a 1.5e-7 approximation; everything else is exact to rounding.
    atol = 1e-6 if name == "gelu" else 1e-12
    np.testing.assert_allclose(result.numpy(), reference(X), rtol=1e-6, atol=atol)


@pytest.mark.parametrize("name, activation, reference", CASES, ids=IDS)
def test_float32_in_float32_out(name, activation, reference):
    result = activation(X.astype("float32"))
    assert result.dtype == np.float32
    np.testing.assert_allclose(result.numpy(), reference(X), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name, activation, reference", CASES, ids=IDS)
def test_gradients_match_finite_differences(name, activation, reference):
    # A weighted sum, so that softmax's gradient is not trivially zero.
    weights = np.linspace(-1.0, 1.5, X.size).reshape(X.shape)
    x = minikeras.Variable(X, dtype="float64")
    with minikeras.GradientTape() as tape:
        loss = minikeras.ops.sum(activation(x) * weights)
    grad = tape.gradient(loss, x).numpy()

    def loss_of(values):
        return float(np.sum(activation(values).numpy() * weights))

    expected = central_differences(loss_of, X.copy())
    # Exact gelu: the gradient is exact erf's, the value a 1.5e-7 approximation of it.
    atol = 2e-6 if name == "gelu" else 1e-7
    np.testing.assert_allclose(grad, expected, rtol=1e-6, atol=atol)


def test_large_inputs_stay_finite():
    x = np.array([-1000.0, 1000.0], dtype="float32")
    for activation in (activations.sigmoid, activations.softplus, activations.swish):
        assert np.all(np.isfinite(activation(x).numpy()))
    np.testing.assert_allclose(activations.softmax([[1000.0, 0.0]]).numpy(), [[1.0, 0.0]])


def test_linear_returns_a_tensor_unchanged():
    tensor = minikeras.Tensor([1.0, -2.0])
    assert activations.linear(tensor) is tensor
    assert isinstance(activations.linear([1.0]), minikeras.Tensor)


def test_get_by_name_none_and_callable():
    assert activations.get("relu") is activations.relu
    assert activations.get("silu") is activations.swish
    assert activations.silu is activations.swish
    assert activations.get(None) is activations.linear

    def custom(x):
        return x

    assert activations.get(custom) is custom


def test_get_unknown_name_lists_known_names():
    with pytest.raises(ValueError, match="'rleu'.*gelu.*relu.*softplus"):
        activations.get("rleu")


def test_get_rejects_non_callables():
    with pytest.raises(ValueError, match="activations.get.*int"):
        activations.get(3)


@pytest.mark.parametrize("name", sorted(activations._ACTIVATIONS))
def test_serialize_round_trip(name):
    function = activations.get(name)
    assert activations.deserialize(activations.serialize(function)) is function


def test_serialize_names():
    assert activations.serialize(activations.gelu) == "gelu"
    assert activations.serialize(activations.silu) == "swish"


def test_serialize_custom_function_needs_custom_objects_back():
    def scaled_tanh(x):
        return 2 * activations.tanh(x)

    # Keras's function entry, by the function's name (its module: None, as Keras writes it
    # for a script's function; here the test module's).
    entry = activations.serialize(scaled_tanh)
    assert (entry["class_name"], entry["config"], entry["registered_name"]) == (
        "function",
        "scaled_tanh",
        None,
    )
    for written in (entry, "scaled_tanh"):  # (the bare name: what older files hold)
        with pytest.raises(ValueError, match="scaled_tanh.*custom_objects=\\{'scaled_tanh'"):
            activations.deserialize(written)
        restored = activations.deserialize(written, custom_objects={"scaled_tanh": scaled_tanh})
        assert restored is scaled_tanh


def test_serialize_rejects_unnamed_and_shadowing_callables():
    with pytest.raises(ValueError, match="cannot name"):
        activations.serialize(lambda x: x)

    def relu(x):
        return x

    with pytest.raises(ValueError, match="'relu' has the name of a built-in"):
        activations.serialize(relu)
