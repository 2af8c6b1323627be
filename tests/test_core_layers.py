"""The first layers: Dense, Activation, Flatten, Reshape and Dropout.

Values are checked against numpy written out by hand; Dense's gradients
against central finite differences and against `x.T @ g`.
"""

import numpy as np
import pytest
from finite_differences import variable_gradient

import minikeras
from minikeras import GradientTape, Model, Sequential, Tensor, ops
from minikeras.layers import Activation, Dense, Dropout, Flatten, Layer, Reshape
from minikeras.utils import set_random_seed

rng = np.random.default_rng(1234)


def sigmoid(z):
    return 1 / (1 + np.exp(-z))


ACTIVATIONS = {
    None: (lambda z: z, lambda z, y: np.ones_like(z)),
    "relu": (lambda z: np.maximum(z, 0), lambda z, y: (z > 0).astype(z.dtype)),
    "tanh": (np.tanh, lambda z, y: 1 - y**2),
    "sigmoid": (sigmoid, lambda z, y: y * (1 - y)),
}


# -------------------------------------------------------------------------- Dense


@pytest.mark.parametrize("activation", list(ACTIVATIONS))
def test_dense_matches_hand_computation(activation):
    layer = Dense(4, activation=activation)
    x = rng.standard_normal((5, 3)).astype("float32")
    layer(x)  # builds, then a non-zero bias makes the check meaningful
    layer.bias.assign(rng.standard_normal(4))
    y = layer(x)
    forward, _ = ACTIVATIONS[activation]
    expected = forward(x @ layer.kernel.numpy() + layer.bias.numpy())
    assert y.shape == (5, 4) and y.dtype == np.float32
    np.testing.assert_allclose(y.numpy(), expected, rtol=1e-5, atol=1e-6)


def test_dense_on_a_batch_of_sequences_acts_on_the_last_axis():
    layer = Dense(2, use_bias=False)
    x = rng.standard_normal((2, 7, 3)).astype("float32")
    np.testing.assert_allclose(layer(x).numpy(), x @ layer.kernel.numpy(), rtol=1e-5)
    assert layer.bias is None and len(layer.weights) == 1


def dense_case(activation, shape=(6, 3), units=4):
    """A float64 Dense, inputs, and random loss weights: loss = sum(y * loss_weights)."""
    layer = Dense(units, activation=activation, dtype="float64")
    x = rng.standard_normal(shape)
    layer(x)
    layer.bias.assign(rng.standard_normal(units) * 0.1)
    loss_weights = rng.standard_normal((*shape[:-1], units))
    return layer, x, loss_weights


def loss_and_gradients(layer, x, loss_weights):
    x = Tensor(x)
    with GradientTape() as tape:
        tape.watch(x)
        loss = ops.sum(layer(x) * loss_weights)
    kernel, bias, inputs = tape.gradient(loss, [layer.kernel, layer.bias, x])
    return float(loss), kernel.numpy(), bias.numpy(), inputs.numpy()


@pytest.mark.parametrize("activation", list(ACTIVATIONS))
def test_dense_gradients_match_finite_differences(activation):
    layer, x, loss_weights = dense_case(activation)
    _, kernel_grad, bias_grad, _ = loss_and_gradients(layer, x, loss_weights)
    for variable, analytic in [(layer.kernel, kernel_grad), (layer.bias, bias_grad)]:
        numeric = variable_gradient(lambda: ops.sum(layer(x) * loss_weights), variable)
        np.testing.assert_allclose(analytic, numeric, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("activation", list(ACTIVATIONS))
@pytest.mark.parametrize("shape", [(6, 3), (2, 5, 3)])
def test_dense_gradients_match_hand_computation(activation, shape):
    layer, x, loss_weights = dense_case(activation, shape)
    _, kernel_grad, bias_grad, input_grad = loss_and_gradients(layer, x, loss_weights)
    forward, derivative = ACTIVATIONS[activation]
    z = x @ layer.kernel.numpy() + layer.bias.numpy()
    g = loss_weights * derivative(z, forward(z))  # d loss / d z
    flat_x, flat_g = x.reshape(-1, x.shape[-1]), g.reshape(-1, g.shape[-1])
    np.testing.assert_allclose(kernel_grad, flat_x.T @ flat_g, rtol=1e-10)
    np.testing.assert_allclose(bias_grad, flat_g.sum(axis=0), rtol=1e-10)
    np.testing.assert_allclose(input_grad, g @ layer.kernel.numpy().T, rtol=1e-10)


def test_dense_float32_gradients_are_float32():
    layer = Dense(3, activation="relu")
    with GradientTape() as tape:
        loss = ops.sum(layer(rng.standard_normal((4, 2))))
    assert all(g.dtype == np.float32 for g in tape.gradient(loss, layer.trainable_weights))


@pytest.mark.parametrize("units", [0, -1, 2.5, "3", True])
def test_dense_units_must_be_a_positive_int(units):
    with pytest.raises(ValueError, match="units"):
        Dense(units)


def test_dense_weights_follow_the_initializers():
    layer = Dense(3, kernel_initializer="ones", bias_initializer="zeros")
    layer(np.ones((1, 2)))
    np.testing.assert_array_equal(layer.kernel.numpy(), np.ones((2, 3)))
    np.testing.assert_array_equal(layer.bias.numpy(), np.zeros(3))


def test_dense_compute_output_shape():
    assert Dense(5).compute_output_shape((None, 7, 3)) == (None, 7, 5)


# --------------------------------------------------------------------- Activation


@pytest.mark.parametrize("name", ["relu", "tanh", "sigmoid"])
def test_activation_layer_matches_numpy(name):
    x = rng.standard_normal((3, 4)).astype("float32")
    forward, _ = ACTIVATIONS[name]
    np.testing.assert_allclose(Activation(name)(x).numpy(), forward(x), rtol=1e-6, atol=1e-7)


def test_activation_layer_softmax_and_callable():
    x = rng.standard_normal((3, 4)).astype("float32")
    expected = np.exp(x) / np.exp(x).sum(axis=-1, keepdims=True)
    np.testing.assert_allclose(Activation("softmax")(x).numpy(), expected, rtol=1e-5)
    np.testing.assert_allclose(Activation(ops.square)(x).numpy(), x**2, rtol=1e-6)
    assert Activation("relu").weights == []


def test_activation_layer_rejects_an_unknown_name():
    with pytest.raises(ValueError, match="relux"):
        Activation("relux")


# ---------------------------------------------------------------- Flatten, Reshape


def test_flatten_keeps_the_batch_axis():
    x = rng.standard_normal((2, 3, 4)).astype("float32")
    y = Flatten()(x)
    assert y.shape == (2, 12)
    np.testing.assert_array_equal(y.numpy(), x.reshape(2, 12))
    assert Flatten().compute_output_shape((None, 3, 4)) == (None, 12)


def test_reshape_with_and_without_minus_one():
    x = np.arange(24.0, dtype="float32").reshape(2, 12)
    np.testing.assert_array_equal(Reshape((3, 4))(x).numpy(), x.reshape(2, 3, 4))
    np.testing.assert_array_equal(Reshape((-1, 2))(x).numpy(), x.reshape(2, 6, 2))
    assert Reshape((-1, 2)).compute_output_shape((None, 12)) == (None, 6, 2)


def test_reshape_to_a_bad_target_shape_names_the_layer_and_the_shapes():
    layer = Reshape((5,), name="bad_reshape")
    with pytest.raises(ValueError, match=r"'bad_reshape'.*\(12,\).*\(5,\)"):
        layer(np.zeros((2, 12)))
    with pytest.raises(ValueError, match=r"'minus_one'.*\(3, 5\).*\(2, -1\)"):
        Reshape((2, -1), name="minus_one")(np.zeros((2, 3, 5)))


def test_reshape_rejects_an_invalid_target_shape():
    with pytest.raises(ValueError, match="at most one -1"):
        Reshape((-1, -1))
    with pytest.raises(ValueError, match="target_shape"):
        Reshape((0, 3))


def test_flatten_and_reshape_pass_gradients_through():
    x = Tensor(rng.standard_normal((2, 3, 4)))
    with GradientTape() as tape:
        tape.watch(x)
        y = Reshape((4, 3))(Flatten()(x))
        loss = ops.sum(y * np.arange(12.0).reshape(4, 3))
    expected = np.broadcast_to(np.arange(12.0).reshape(3, 4), (2, 3, 4))
    np.testing.assert_allclose(tape.gradient(loss, x).numpy(), expected)


# ------------------------------------------------------------------------ Dropout


def test_dropout_while_training_drops_about_rate_and_scales_the_rest():
    set_random_seed(0)
    rate = 0.3
    y = Dropout(rate)(np.ones((200, 100)), training=True).numpy()
    dropped = np.mean(y == 0)
    assert abs(dropped - rate) < 0.02
    np.testing.assert_allclose(np.unique(y[y != 0]), [1 / (1 - rate)], rtol=1e-6)
    assert y.dtype == np.float32


@pytest.mark.parametrize("training", [False, None])
def test_dropout_at_inference_is_the_identity(training):
    x = rng.standard_normal((4, 5)).astype("float32")
    kwargs = {} if training is None else {"training": training}
    np.testing.assert_array_equal(Dropout(0.5)(x, **kwargs).numpy(), x)


def test_dropout_is_reproducible_with_set_random_seed():
    x = np.ones((8, 8))
    set_random_seed(42)
    first = Dropout(0.5)(x, training=True).numpy()
    set_random_seed(42)
    second = Dropout(0.5)(x, training=True).numpy()
    set_random_seed(43)
    third = Dropout(0.5)(x, training=True).numpy()
    np.testing.assert_array_equal(first, second)
    assert not np.array_equal(first, third)


def test_dropout_with_a_seed_has_its_own_reproducible_stream():
    x = np.ones((8, 8))
    first = Dropout(0.5, seed=3)(x, training=True).numpy()
    set_random_seed(99)
    second = Dropout(0.5, seed=3)(x, training=True).numpy()
    np.testing.assert_array_equal(first, second)


def test_dropout_gradient_is_the_mask():
    set_random_seed(1)
    x = Tensor(np.ones((6, 6), dtype="float32"))
    with GradientTape() as tape:
        tape.watch(x)
        y = Dropout(0.5)(x, training=True)
        loss = ops.sum(y)
    np.testing.assert_array_equal(tape.gradient(loss, x).numpy(), y.numpy())


def test_dropout_noise_shape_broadcasts_the_mask():
    set_random_seed(2)
    y = Dropout(0.5, noise_shape=(None, 1))(np.ones((50, 4)), training=True).numpy()
    assert all(len(set(row)) == 1 for row in y.tolist())


def test_dropout_rate_must_be_in_zero_one():
    with pytest.raises(ValueError, match="rate"):
        Dropout(1.0)
    with pytest.raises(ValueError, match="rate"):
        Dropout(-0.1)


def dropped_fraction(model, training):
    set_random_seed(5)
    kwargs = {} if training is None else {"training": training}
    return float(np.mean(model(np.ones((100, 50)), **kwargs).numpy() == 0))


class CallWithoutTraining(Model):
    """A model whose call() does not take `training`: it still reaches the Dropout."""

    def __init__(self):
        super().__init__()
        self.drop = Dropout(0.5)

    def call(self, inputs):
        return self.drop(inputs)


class CallPassingTraining(Model):
    def __init__(self):
        super().__init__()
        self.inner = Sequential([Dropout(0.5)])

    def call(self, inputs, training=None):
        return self.inner(inputs, training=training)


class NestedTwice(Model):
    def __init__(self):
        super().__init__()
        self.wrapped = CallWithoutTraining()

    def call(self, inputs):
        return self.wrapped(inputs)


def functional_dropout():
    inputs = minikeras.Input(shape=(50,))
    return Model(inputs, Dropout(0.5)(inputs))


@pytest.mark.parametrize(
    "make",
    [
        lambda: Sequential([Dropout(0.5)]),
        lambda: Sequential([Sequential([Dropout(0.5)])]),
        CallWithoutTraining,
        CallPassingTraining,
        NestedTwice,
        functional_dropout,
        lambda: Sequential([functional_dropout()]),
    ],
)
def test_training_reaches_dropout_through_sequential_and_nested_models(make):
    model = make()
    assert 0.4 < dropped_fraction(model, training=True) < 0.6
    assert dropped_fraction(model, training=False) == 0
    assert dropped_fraction(model, training=None) == 0


def test_training_is_only_passed_to_calls_that_accept_it():
    seen = []

    class Plain(Layer):
        def call(self, inputs):
            return inputs

    class Takes(Layer):
        def call(self, inputs, training=None):
            seen.append(training)
            return inputs

    class Model2(Model):
        def __init__(self):
            super().__init__()
            self.plain, self.takes = Plain(), Takes()

        def call(self, inputs):
            return self.takes(self.plain(inputs))

    model = Model2()
    model(np.ones((1, 2)), training=True)
    model(np.ones((1, 2)), training=False)
    model(np.ones((1, 2)))
    assert seen == [True, False, None]
