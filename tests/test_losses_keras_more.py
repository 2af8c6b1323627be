"""The regression and hinge losses Keras 3 has beyond the basics, against numpy references.

Each loss is checked as a function, a class and a string name: values against
float64 formulas written out here, gradients against central differences,
float32 in and out, and the serialize/deserialize round trip.
"""

import numpy as np
import pytest
from finite_differences import check_gradients

from minikeras import config, losses

EPS = config.epsilon()
RNG = np.random.default_rng(3)
Y_TRUE = RNG.uniform(0.5, 3.0, (6, 4))
Y_PRED = RNG.uniform(0.5, 3.0, (6, 4))
SIGNS = RNG.choice([-1.0, 1.0], (6, 4))
SCORES = RNG.standard_normal((6, 4))
ONE_HOT = np.eye(4)[RNG.integers(0, 4, 6)]


def mape_ref(y, p):
    return 100.0 * np.mean(np.abs((y - p) / np.maximum(np.abs(y), EPS)), axis=-1)


def msle_ref(y, p):
    return np.mean((np.log(np.maximum(p, EPS) + 1) - np.log(np.maximum(y, EPS) + 1)) ** 2, -1)


def cosine_ref(y, p):
    unit_y = y / np.linalg.norm(y, axis=-1, keepdims=True)
    unit_p = p / np.linalg.norm(p, axis=-1, keepdims=True)
    return -np.sum(unit_y * unit_p, axis=-1)


def log_cosh_ref(y, p):
    return np.mean(np.log(np.cosh(p - y)), axis=-1)


def poisson_ref(y, p):
    return np.mean(p - y * np.log(p + EPS), axis=-1)


def hinge_ref(y, p):
    return np.mean(np.maximum(1.0 - y * p, 0.0), axis=-1)


def squared_hinge_ref(y, p):
    return np.mean(np.maximum(1.0 - y * p, 0.0) ** 2, axis=-1)


def categorical_hinge_ref(y, p):
    positive = np.sum(y * p, axis=-1)
    negative = np.max((1.0 - y) * p, axis=-1)
    return np.maximum(negative - positive + 1.0, 0.0)


# (function, class, Keras's string name, reference, y_true, y_pred)
CASES = [
    (losses.mean_absolute_percentage_error, losses.MeanAbsolutePercentageError,
     "mean_absolute_percentage_error", mape_ref, Y_TRUE, Y_PRED),
    (losses.mean_squared_logarithmic_error, losses.MeanSquaredLogarithmicError,
     "mean_squared_logarithmic_error", msle_ref, Y_TRUE, Y_PRED),
    (losses.cosine_similarity, losses.CosineSimilarity, "cosine_similarity", cosine_ref,
     SCORES, Y_PRED),
    (losses.log_cosh, losses.LogCosh, "log_cosh", log_cosh_ref, Y_TRUE, SCORES),
    (losses.poisson, losses.Poisson, "poisson", poisson_ref, Y_TRUE, Y_PRED),
    (losses.hinge, losses.Hinge, "hinge", hinge_ref, SIGNS, SCORES),
    (losses.squared_hinge, losses.SquaredHinge, "squared_hinge", squared_hinge_ref, SIGNS,
     SCORES),
    (losses.categorical_hinge, losses.CategoricalHinge, "categorical_hinge",
     categorical_hinge_ref, ONE_HOT, SCORES),
]  # fmt: skip
IDS = [case[2] for case in CASES]


@pytest.mark.parametrize("fn, cls, name, reference, y_true, y_pred", CASES, ids=IDS)
def test_function_matches_the_reference_in_float32(fn, cls, name, reference, y_true, y_pred):
    got = fn(y_true.astype("float32"), y_pred.astype("float32"))
    assert got.dtype == np.float32 and got.shape == (6,)
    np.testing.assert_allclose(got.numpy(), reference(y_true, y_pred), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("fn, cls, name, reference, y_true, y_pred", CASES, ids=IDS)
def test_class_weights_and_reduces_like_keras(fn, cls, name, reference, y_true, y_pred):
    weights = RNG.uniform(0.0, 2.0, 6)
    per_sample = reference(y_true, y_pred)
    loss = cls()
    assert loss.name == name and loss.reduction == "sum_over_batch_size"
    got = loss(y_true.astype("float32"), y_pred.astype("float32"), sample_weight=weights)
    assert float(got) == pytest.approx(np.sum(per_sample * weights) / 6, rel=1e-5)
    total = cls(reduction="sum")(y_true, y_pred)
    assert float(total) == pytest.approx(np.sum(per_sample), rel=1e-5)
    none = cls(reduction=None)(y_true, y_pred)
    np.testing.assert_allclose(none.numpy(), per_sample, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("fn, cls, name, reference, y_true, y_pred", CASES, ids=IDS)
def test_gradient_matches_central_differences(fn, cls, name, reference, y_true, y_pred):
    check_gradients(lambda prediction: fn(y_true, prediction), [y_pred])


@pytest.mark.parametrize("fn, cls, name, reference, y_true, y_pred", CASES, ids=IDS)
def test_names_and_serialization_round_trip(fn, cls, name, reference, y_true, y_pred):
    assert losses.get(name) is fn
    assert losses.serialize(fn) == name and losses.deserialize(name) is fn
    assert type(losses.get(cls.__name__)) is cls
    loss = cls(reduction="sum", name="custom")
    restored = losses.deserialize(losses.serialize(loss))
    assert type(restored) is cls and restored.get_config() == loss.get_config()
    assert restored.name == "custom" and restored.reduction == "sum"
    np.testing.assert_allclose(float(restored(y_true, y_pred)), float(loss(y_true, y_pred)))


def test_keras_abbreviations():
    for alias in ("mape", "MAPE"):
        assert losses.get(alias) is losses.mean_absolute_percentage_error
        assert getattr(losses, alias) is losses.mean_absolute_percentage_error
    for alias in ("msle", "MSLE"):
        assert losses.get(alias) is losses.mean_squared_logarithmic_error
        assert getattr(losses, alias) is losses.mean_squared_logarithmic_error


def test_hand_values():
    # |2-1|/2 = 0.5 and |4-5|/4 = 0.25: a mean of 37.5 %.
    assert float(losses.MeanAbsolutePercentageError()([[2.0, 4.0]], [[1.0, 5.0]])) == 37.5
    # A zero target divides by epsilon instead of infinity.
    assert float(losses.mape([[0.0]], [[1e-7]])[0]) == pytest.approx(100.0, rel=1e-4)
    # Negative values count as epsilon: log(1 + eps) ~ 0 on both sides.
    assert float(losses.msle([[-5.0]], [[-1.0]])[0]) == pytest.approx(0.0, abs=1e-12)
    # Same direction -1, opposite +1, a zero vector 0.
    similarity = losses.cosine_similarity([[1.0, 0.0], [0.0, 2.0], [0.0, 0.0]],
                                          [[3.0, 0.0], [0.0, -1.0], [1.0, 1.0]])  # fmt: skip
    np.testing.assert_allclose(similarity.numpy(), [-1.0, 1.0, 0.0], atol=1e-6)
    # log(cosh(x)) -> |x| - log 2 for a large error, without overflow.
    assert float(losses.log_cosh([[0.0]], [[1000.0]])[0]) == pytest.approx(1000 - np.log(2))
    # 0/1 labels become -1/1; -1/1 labels are used as given.
    np.testing.assert_allclose(losses.hinge([[0.0, 1.0]], [[0.5, 0.5]]).numpy(), [1.0])
    np.testing.assert_allclose(losses.hinge([[-1.0, 1.0]], [[0.5, 0.5]]).numpy(), [1.0])
    np.testing.assert_allclose(losses.hinge([[2.0]], [[0.25]]).numpy(), [0.5])  # not binary
    np.testing.assert_allclose(losses.squared_hinge([[0.0, 1.0]], [[0.5, 0.5]]).numpy(), [1.25])
    # Right class scores 0.5, best wrong 0.3: 0.3 - 0.5 + 1.
    got = losses.categorical_hinge([[0.0, 1.0, 0.0]], [[0.3, 0.5, 0.2]])
    np.testing.assert_allclose(got.numpy(), [0.8], rtol=1e-6)
    assert float(losses.Poisson()([[0.0, 1.0]], [[1.0, 1.0]])) == pytest.approx(1.0)


@pytest.mark.parametrize(
    "labels, slope",
    [([[0.0, 1.0], [1.0, 1.0]], 2.0), ([[-1.0, 1.0], [0.0, 1.0]], 1.0), ([[0.5, 1.0]], 1.0)],
    ids=["all-0/1", "-1/1-and-0", "not-binary"],
)
def test_hinge_label_conversion_is_one_op_with_its_own_slope_and_a_new_array(labels, slope):
    import minikeras as mk
    from minikeras.ops.hinge_labels import signed_binary_labels

    given = np.array(labels, np.float32)
    y = mk.Variable(given)
    with mk.GradientTape() as tape:
        signed = signed_binary_labels(y)
        total = mk.ops.sum(signed * 3.0)
    want = 2 * given - 1 if slope == 2.0 else given
    np.testing.assert_array_equal(signed.numpy(), want)
    assert signed.dtype == np.float32
    assert not np.shares_memory(signed.numpy(), y.numpy())  # (later ops may reuse its buffer)
    gradient = tape.gradient(total, y).numpy()
    np.testing.assert_array_equal(gradient, np.full_like(given, 3.0 * slope))


def test_cosine_similarity_axis_and_zero_vector_gradient():
    y_true = RNG.standard_normal((3, 5))
    y_pred = RNG.standard_normal((3, 5))
    got = losses.CosineSimilarity(axis=0, reduction=None)(y_true, y_pred)
    np.testing.assert_allclose(got.numpy(), cosine_ref(y_true.T, y_pred.T), rtol=1e-5)
    check_gradients(lambda p: losses.cosine_similarity(np.zeros((2, 3)), p), [y_pred[:2, :3]])


def test_one_dimensional_inputs_are_one_value_per_sample():
    y_true, y_pred = np.array([2.0, 4.0]), np.array([1.0, 5.0])
    got = losses.MeanAbsolutePercentageError(reduction=None)(y_true, y_pred)
    np.testing.assert_allclose(got.numpy(), [50.0, 25.0])


@pytest.mark.parametrize("fn, cls, name, reference, y_true, y_pred", CASES, ids=IDS)
def test_shape_mismatch_names_the_loss_and_both_shapes(fn, cls, name, reference, y_true, y_pred):
    with pytest.raises(ValueError, match=rf"{name}.*\(6, 4\).*\(6, 3\)"):
        cls()(y_true, y_pred[:, :3])
