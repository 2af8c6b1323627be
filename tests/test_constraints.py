"""Constraints: Keras's projections, applied by the optimizer after each update."""

import json

import numpy as np
import pytest

import minikeras as mk
from minikeras import Sequential, constraints, layers, ops, optimizers
from minikeras.constraints import Constraint, MaxNorm, MinMaxNorm, NonNeg, UnitNorm

EPSILON = 1e-7
RNG = np.random.default_rng(0)
KERNEL = RNG.normal(size=(4, 3)).astype("float32") * np.array([0.1, 1.0, 5.0], "float32")
CONV_KERNEL = RNG.normal(size=(3, 3, 2, 4)).astype("float32")


def column_norms(w, axis=0):
    return np.sqrt(np.square(w).sum(axis=axis, keepdims=True))


@pytest.mark.parametrize(
    "constraint, weight, expected",
    [
        (NonNeg(), KERNEL, np.maximum(KERNEL, 0)),
        (
            MaxNorm(1.5),
            KERNEL,
            KERNEL * np.clip(column_norms(KERNEL), 0, 1.5) / (EPSILON + column_norms(KERNEL)),
        ),
        (
            MaxNorm(1.0, axis=1),
            KERNEL,
            KERNEL * np.clip(column_norms(KERNEL, 1), 0, 1.0) / (EPSILON + column_norms(KERNEL, 1)),
        ),
        (UnitNorm(), KERNEL, KERNEL / (EPSILON + column_norms(KERNEL))),
        (
            UnitNorm(axis=[0, 1, 2]),
            CONV_KERNEL,
            CONV_KERNEL / (EPSILON + column_norms(CONV_KERNEL, (0, 1, 2))),
        ),
        (
            MinMaxNorm(0.5, 2.0, rate=0.5),
            KERNEL,
            KERNEL
            * (0.5 * np.clip(column_norms(KERNEL), 0.5, 2.0) + 0.5 * column_norms(KERNEL))
            / (EPSILON + column_norms(KERNEL)),
        ),
        (Constraint(), KERNEL, KERNEL),
    ],
    ids=repr,
)
def test_constraints_match_the_keras_formulas(constraint, weight, expected):
    result = np.asarray(constraint(weight))
    assert result.shape == weight.shape and result.dtype == np.float32
    np.testing.assert_allclose(result, expected, rtol=1e-6, atol=1e-7)


def test_max_norm_leaves_short_columns_alone_and_shortens_long_ones():
    result = MaxNorm(1.0)(KERNEL).numpy()
    norms, before = column_norms(result)[0], column_norms(KERNEL)[0]
    assert before[0] < 1.0 < before[2]
    np.testing.assert_allclose(result[:, 0], KERNEL[:, 0], rtol=1e-6)
    np.testing.assert_allclose(norms[2], 1.0, rtol=1e-6)


# -------------------------------------------------------- after an update


def one_step(constraint, kernel, learning_rate=0.1):
    """One SGD step of a Dense with `kernel_constraint=constraint`; returns (before, after)."""
    dense = layers.Dense(3, kernel_constraint=constraint)
    model = Sequential([layers.Input((4,)), dense])
    model.compile(optimizers.SGD(learning_rate), "mse")
    dense.kernel.assign(kernel)
    x = np.ones((2, 4), "float32")
    y = np.zeros((2, 3), "float32")
    error = x @ kernel + dense.bias.numpy() - y
    unconstrained = kernel - learning_rate * 2.0 * x.T @ error / error.size
    model.train_on_batch(x, y)
    return unconstrained, dense.kernel.numpy()


def test_non_neg_clips_the_kernel_after_a_step():
    unconstrained, kernel = one_step(NonNeg(), KERNEL)
    assert (unconstrained < 0).any() and (kernel >= 0).all()
    np.testing.assert_allclose(kernel, np.maximum(unconstrained, 0), rtol=1e-5, atol=1e-6)


def test_max_norm_rescales_the_columns_after_a_step():
    unconstrained, kernel = one_step("max_norm", KERNEL * 2)
    norms = column_norms(unconstrained)
    expected = unconstrained * np.clip(norms, 0, 2.0) / (EPSILON + norms)
    np.testing.assert_allclose(kernel, expected, rtol=1e-5, atol=1e-6)
    assert (column_norms(kernel) <= 2.0 + 1e-5).all()


def test_unit_norm_normalizes_the_columns_after_a_step():
    _, kernel = one_step(UnitNorm(), KERNEL)
    np.testing.assert_allclose(column_norms(kernel), 1.0, rtol=1e-5)


def test_the_optimizer_applies_a_variables_constraint_after_its_update():
    weight = mk.Variable([1.0, -1.0])
    weight.constraint = constraints.get("non_neg")
    with mk.GradientTape() as tape:
        loss = ops.sum(weight * weight)
    optimizers.SGD(0.1).apply(tape.gradient([loss], [weight]), [weight])
    np.testing.assert_allclose(weight.numpy(), [0.8, 0.0])


def test_a_plain_function_is_a_constraint_too():
    layer = mk.Layer()
    weight = layer.add_weight(shape=(2,), initializer="ones", constraint=lambda w: w * 0.0)
    with mk.GradientTape() as tape:
        loss = ops.sum(weight)
    optimizers.SGD(0.1).apply(tape.gradient([loss], [weight]), [weight])
    np.testing.assert_array_equal(weight.numpy(), [0.0, 0.0])


# -------------------------------------------------------------- lookups


def test_get_accepts_none_names_dicts_classes_instances_and_functions():
    instance = MaxNorm(3)
    assert constraints.get(None) is None
    assert constraints.get(instance) is instance
    assert constraints.get(np.abs) is np.abs
    assert isinstance(constraints.get(NonNeg), NonNeg)
    for name, cls in [
        ("max_norm", MaxNorm),
        ("MaxNorm", MaxNorm),
        ("non_neg", NonNeg),
        ("unit_norm", UnitNorm),
        ("min_max_norm", MinMaxNorm),
    ]:
        assert type(constraints.get(name)) is cls
    assert constraints.get({"class_name": "UnitNorm", "config": {"axis": 1}}).axis == 1
    with pytest.raises(ValueError, match="Unknown constraint 'positive'"):
        constraints.get("positive")
    with pytest.raises(ValueError, match="expected None"):
        constraints.get(2.0)


def test_serialize_round_trips_through_json():
    for constraint in (MaxNorm(1.5, axis=[0, 1, 2]), NonNeg(), UnitNorm(1), MinMaxNorm(0.1, 3)):
        config = json.loads(json.dumps(constraints.serialize(constraint)))
        back = constraints.deserialize(config)
        assert type(back) is type(constraint) and back.get_config() == constraint.get_config()
    assert constraints.serialize(None) is None
    with pytest.raises(ValueError, match="lambda"):
        constraints.serialize(lambda w: w)
    # An axis list read back from JSON works like a tuple.
    back = constraints.deserialize({"class_name": "MaxNorm", "config": {"axis": [0, 1, 2]}})
    assert back(CONV_KERNEL).shape == CONV_KERNEL.shape
