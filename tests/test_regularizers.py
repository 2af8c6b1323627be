"""Regularizers: Keras's penalties, trained by fit, reported by evaluate, saved in configs."""

import json

import numpy as np
import pytest

import minikeras as mk
from minikeras import GradientTape, Sequential, layers, ops, optimizers, regularizers
from minikeras.regularizers import L1, L1L2, L2, Regularizer
from minikeras.saving.registry import deserialize_layer, serialize_layer


@pytest.fixture(autouse=True)
def _seeded():
    mk.utils.set_random_seed(0)


WEIGHT = np.array([[0.5, -1.5], [2.0, 0.0], [-0.25, 1.0]], "float32")


# ----------------------------------------------------------------- penalties


@pytest.mark.parametrize(
    "regularizer, expected",
    [
        (L1(0.1), 0.1 * np.abs(WEIGHT).sum()),
        (L2(0.2), 0.2 * np.square(WEIGHT).sum()),
        (L1L2(l1=0.1, l2=0.2), 0.1 * np.abs(WEIGHT).sum() + 0.2 * np.square(WEIGHT).sum()),
        (L1L2(l2=0.3), 0.3 * np.square(WEIGHT).sum()),
        (L1L2(), 0.0),
        (Regularizer(), 0.0),
    ],
    ids=repr,
)
def test_penalties_match_the_keras_formulas(regularizer, expected):
    penalty = regularizer(WEIGHT)
    assert penalty.shape == () and penalty.dtype == np.float32
    np.testing.assert_allclose(penalty.numpy(), expected, rtol=1e-6)
    # On a Variable too, and float64 stays float64.
    assert regularizer(mk.Variable(WEIGHT, dtype="float64")).dtype == np.float64


def test_keras_defaults_and_names():
    assert L1().l1 == 0.01 and L2().l2 == 0.01
    assert (L1L2().l1, L1L2().l2) == (0.0, 0.0)
    assert isinstance(regularizers.get("l1"), L1) and isinstance(regularizers.get("L2"), L2)
    # The name's defaults are not the class's, as in Keras.
    assert regularizers.get("l1_l2").get_config() == {"l1": 0.01, "l2": 0.01}
    assert regularizers.get("L1L2").get_config() == {"l1": 0.0, "l2": 0.0}


@pytest.mark.parametrize("bad", [-0.1, float("nan"), float("inf"), "0.1", True])
def test_bad_factors_are_refused(bad):
    with pytest.raises(ValueError, match="l2"):
        L2(bad)


def test_get_accepts_none_names_dicts_classes_instances_and_functions():
    instance = L2(0.5)

    def penalty(x):
        return ops.sum(x)

    assert regularizers.get(None) is None
    assert regularizers.get(instance) is instance
    assert regularizers.get(penalty) is penalty
    assert isinstance(regularizers.get(L1), L1)
    assert regularizers.get({"class_name": "L2", "config": {"l2": 0.5}}).l2 == 0.5
    with pytest.raises(ValueError, match="Unknown regularizer 'l3'"):
        regularizers.get("l3")
    with pytest.raises(ValueError, match="expected None"):
        regularizers.get(3)


def test_serialize_round_trips_and_refuses_what_cannot_be_saved():
    for regularizer in (L1(0.3), L2(0.1), L1L2(0.1, 0.2)):
        config = json.loads(json.dumps(regularizers.serialize(regularizer)))
        back = regularizers.deserialize(config)
        assert type(back) is type(regularizer) and back.get_config() == regularizer.get_config()
    assert regularizers.serialize(None) is None

    def my_penalty(x):
        return ops.sum(x)

    assert regularizers.serialize(my_penalty) == "my_penalty"
    assert regularizers.deserialize("my_penalty", {"my_penalty": L2}).l2 == 0.01
    with pytest.raises(ValueError, match="lambda"):
        regularizers.serialize(lambda x: ops.sum(x))


# -------------------------------------------------------------- in a layer


def test_dense_losses_hold_the_kernel_and_bias_penalties():
    layer = layers.Dense(2, kernel_regularizer=L2(0.1), bias_regularizer=L1(0.5))
    layer(np.ones((4, 3), "float32"))
    layer.bias.assign([1.0, -2.0])
    kernel_penalty, bias_penalty = layer.losses  # computed from the current values
    np.testing.assert_allclose(kernel_penalty.numpy(), 0.1 * np.square(layer.kernel.numpy()).sum())
    np.testing.assert_allclose(bias_penalty.numpy(), 1.5)
    # Asking twice does not add anything.
    assert len(layer.losses) == 2


def test_penalties_are_differentiable_inside_a_tape():
    layer = layers.Dense(2, kernel_regularizer=L2(0.1))
    layer.build((None, 3))
    with GradientTape() as tape:
        penalty = sum(layer.losses)
    (grad,) = tape.gradient(penalty, [layer.kernel])
    np.testing.assert_allclose(grad, 2 * 0.1 * layer.kernel.numpy(), rtol=1e-6)


def test_one_sgd_step_adds_the_l2_gradient_to_the_kernel_update():
    l2, learning_rate = 0.1, 0.05
    model = Sequential([layers.Input((3,)), layers.Dense(2, kernel_regularizer=L2(l2))])
    model.compile(optimizers.SGD(learning_rate), "mse")
    x = np.random.default_rng(1).normal(size=(8, 3)).astype("float32")
    y = np.random.default_rng(2).normal(size=(8, 2)).astype("float32")
    dense = model.layers[-1]
    kernel, bias = dense.kernel.numpy(), dense.bias.numpy()
    error = x @ kernel + bias - y
    grad_kernel = 2.0 * x.T @ error / error.size  # d mean(square(error)) / d kernel
    grad_bias = 2.0 * error.sum(axis=0) / error.size

    loss = model.train_on_batch(x, y)

    expected_kernel = kernel - learning_rate * (grad_kernel + 2 * l2 * kernel)
    np.testing.assert_allclose(dense.kernel.numpy(), expected_kernel, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(dense.bias.numpy(), bias - learning_rate * grad_bias, rtol=1e-5)
    # The reported loss is Keras's total: data loss plus the penalty before the step.
    penalty = l2 * np.square(kernel).sum()
    np.testing.assert_allclose(loss, np.mean(np.square(error)) + penalty, rtol=1e-5)


def test_evaluate_and_test_on_batch_report_the_total_loss():
    model = Sequential([layers.Input((3,)), layers.Dense(1, kernel_regularizer=L1(0.2))])
    model.compile("sgd", "mse")
    x, y = np.ones((6, 3), "float32"), np.zeros((6, 1), "float32")
    kernel, bias = model.layers[-1].kernel.numpy(), model.layers[-1].bias.numpy()
    expected = np.mean(np.square(x @ kernel + bias - y)) + 0.2 * np.abs(kernel).sum()
    np.testing.assert_allclose(model.evaluate(x, y, batch_size=4, verbose=0), expected, rtol=1e-5)
    np.testing.assert_allclose(model.test_on_batch(x, y), expected, rtol=1e-5)


def test_evaluate_counts_the_penalties_of_a_model_built_by_its_first_batch():
    model = Sequential([layers.Dense(1, kernel_initializer="ones", kernel_regularizer=L2(1.0))])
    model.compile("sgd", "mse")
    x = np.zeros((4, 3), "float32")
    assert model.evaluate(x, np.zeros((4, 1)), verbose=0) == pytest.approx(3.0)


def test_fit_with_l2_shrinks_the_kernel():
    x = np.random.default_rng(0).normal(size=(64, 4)).astype("float32")
    y = x @ np.array([[3.0], [-3.0], [2.0], [1.0]], "float32")
    norms = []
    for l2 in (0.0, 1.0):
        mk.utils.set_random_seed(0)
        model = Sequential([layers.Input((4,)), layers.Dense(1, kernel_regularizer=L2(l2))])
        model.compile(optimizers.SGD(0.05), "mse")
        model.fit(x, y, epochs=20, batch_size=16, verbose=0)
        norms.append(np.linalg.norm(model.layers[-1].kernel.numpy()))
    assert norms[1] < 0.5 * norms[0]


def test_a_frozen_layers_penalty_adds_to_the_loss_but_its_weight_does_not_move():
    frozen = layers.Dense(2, kernel_regularizer=L2(0.5), name="frozen")
    model = Sequential([layers.Input((3,)), frozen, layers.Dense(1)])
    frozen.trainable = False
    model.compile(optimizers.SGD(0.1), "mse")
    x, y = np.ones((4, 3), "float32"), np.ones((4, 1), "float32")
    kernel = frozen.kernel.numpy()
    data_loss = model.evaluate(x, y, verbose=0) - 0.5 * np.square(kernel).sum()
    assert len(model.losses) == 1
    loss = model.train_on_batch(x, y)
    np.testing.assert_array_equal(frozen.kernel.numpy(), kernel)
    np.testing.assert_allclose(loss, data_loss + 0.5 * np.square(kernel).sum(), rtol=1e-5)


def test_add_weight_resolves_names_and_a_function_regularizer_works():
    layer = mk.Layer()
    weight = layer.add_weight(shape=(2,), initializer="ones", regularizer="l1")
    assert isinstance(weight.regularizer, L1)
    weight.regularizer = lambda w: 3.0 * ops.sum(w)
    assert [float(loss) for loss in layer.losses] == [6.0]


# ---------------------------------------------------------- activity penalty


def test_activity_regularizer_penalizes_the_outputs_once_per_call():
    layer = layers.Dense(2, kernel_initializer="ones", activity_regularizer=L2(0.01))
    x = np.full((5, 3), 2.0, "float32")
    outputs = layer(x)
    layer(x)
    # Divided by the batch size, as Keras 3 does since 3.14.
    (penalty,) = layer.losses
    np.testing.assert_allclose(penalty.numpy(), 0.01 * np.square(outputs.numpy()).sum() / 5)


def test_activity_penalty_of_an_empty_batch_is_zero():
    layer = layers.Activation("linear", activity_regularizer=lambda out: ops.sum(out) + 1.0)
    layer(np.zeros((0, 3), "float32"))
    assert [float(loss) for loss in layer.losses] == [0.0]  # Keras's divide_no_nan
    mean_of_nothing = layers.Activation("linear", activity_regularizer=ops.mean)  # nan
    mean_of_nothing(np.zeros((0, 3), "float32"))
    assert [float(loss) for loss in mean_of_nothing.losses] == [0.0]


def test_activity_penalty_matches_keras():
    keras = pytest.importorskip("keras")
    x = np.random.default_rng(0).normal(size=(6, 3)).astype("float32")
    theirs = keras.layers.Dense(2, activity_regularizer=keras.regularizers.L1L2(0.1, 0.2))
    theirs(x)
    ours = layers.Dense(2, activity_regularizer=L1L2(0.1, 0.2))
    ours.build((None, 3))
    ours.set_weights([np.asarray(w) for w in theirs.get_weights()])
    ours(x)
    np.testing.assert_allclose(float(ours.losses[0]), float(theirs.losses[0]), rtol=1e-5)


def test_a_shared_layer_adds_its_activity_penalty_for_each_call_in_evaluate_and_fit():
    # As Keras on torch (and a direct call on any backend); Keras 3.15 on JAX keeps
    # only the last call's penalty inside fit and evaluate.
    rng = np.random.default_rng(3)
    x = rng.normal(size=(7, 4)).astype("float32")
    y = rng.normal(size=(7, 4)).astype("float32")
    inputs = mk.Input((4,))
    shared = layers.Dense(4, activity_regularizer=L2(0.3))
    model = mk.Model(inputs, shared(shared(inputs)))
    model.compile(optimizers.SGD(0.01), "mse")
    kernel, bias = (w.numpy().astype(np.float64) for w in shared.weights)
    first = x @ kernel + bias
    second = first @ kernel + bias
    expected = np.mean((second - y) ** 2) + 0.3 * (np.sum(first**2) + np.sum(second**2)) / 7
    np.testing.assert_allclose(model.evaluate(x, y, batch_size=7, verbose=0), expected, rtol=1e-5)
    history = model.fit(x, y, batch_size=7, verbose=0).history  # (the loss before the step)
    np.testing.assert_allclose(history["loss"], [expected], rtol=1e-5)


def test_activity_penalty_is_trained():
    layer = layers.Dense(1, use_bias=False, activity_regularizer=L2(0.5))
    x = np.array([[1.0, 2.0]], "float32")
    with GradientTape() as tape:
        layer(x)
        penalty = sum(layer.losses)
    (grad,) = tape.gradient(penalty, [layer.kernel])
    outputs = x @ layer.kernel.numpy()
    np.testing.assert_allclose(grad, x.T @ (2 * 0.5 * outputs), rtol=1e-6)  # (a batch of 1)


def test_any_layer_takes_an_activity_regularizer():
    layer = layers.Activation("relu", activity_regularizer="l1")
    layer(np.array([[-1.0, 2.0]], "float32"))
    assert [round(float(loss), 6) for loss in layer.losses] == [0.02]
    assert layer.get_config()["activity_regularizer"] == {
        "module": "keras.regularizers",
        "class_name": "L1",
        "config": {"l1": 0.01},
        "registered_name": None,
    }
    assert "activity_regularizer" not in layers.Activation("relu").get_config()


# ------------------------------------------------------------------ configs


def test_dense_config_round_trips_regularizers_and_constraints():
    layer = layers.Dense(
        3,
        kernel_regularizer="l1_l2",
        bias_regularizer=L2(0.2),
        activity_regularizer=L1(0.1),
        kernel_constraint="max_norm",
        bias_constraint=mk.constraints.NonNeg(),
    )
    config = json.loads(json.dumps(layer.get_config()))
    assert config["kernel_regularizer"] == {
        "module": "keras.regularizers",
        "class_name": "L1L2",
        "config": {"l1": 0.01, "l2": 0.01},
        "registered_name": None,
    }
    assert config["kernel_constraint"] == {
        "module": "keras.constraints",
        "class_name": "MaxNorm",
        "config": {"max_value": 2, "axis": 0},
        "registered_name": None,
    }
    back = layers.Dense.from_config(config)
    assert back.get_config() == layer.get_config()
    assert isinstance(back.bias_regularizer, L2) and isinstance(back.activity_regularizer, L1)
    assert isinstance(back.bias_constraint, mk.constraints.NonNeg)
    assert layers.Dense(2).get_config()["kernel_regularizer"] is None


def test_saving_rebuilds_the_regularized_weights():
    layer = layers.Dense(2, kernel_regularizer=L2(0.3), kernel_constraint="unit_norm")
    layer.build((None, 4))
    back = deserialize_layer(json.loads(json.dumps(serialize_layer(layer))))
    assert back.kernel.regularizer.get_config() == {"l2": 0.3}
    assert isinstance(back.kernel.constraint, mk.constraints.UnitNorm)
    assert back.bias.regularizer is None and back.bias.constraint is None


def test_activity_losses_of_dict_outputs_come_by_sorted_key():
    class TwoOutputs(mk.layers.Layer):
        def call(self, x):
            return {"b": x * 2.0, "a": x}

    layer = TwoOutputs(activity_regularizer=mk.regularizers.L1(1.0))
    layer(np.ones((1, 3), "float32"))
    # Keras flattens the outputs (a dict's values by sorted key): a's penalty, then b's.
    assert [float(loss) for loss in layer.losses] == [3.0, 6.0]
