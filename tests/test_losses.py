"""Losses against float64 numpy references: values, reductions, gradients, dtypes, shapes.

Each case pairs a `Loss` (and its function) with a reference formula written
out in numpy. Gradients from `GradientTape` on a float64 Variable must match
central differences; float32 predictions with integer labels must stay float32;
logits of +-1000 must give finite losses and gradients.
"""

import numpy as np
import pytest
from finite_differences import central_differences

from minikeras import GradientTape, Variable, config, losses

EPS = config.epsilon()


# ---------------------------------------------------------------- references


def log_sigmoid(x):
    return -np.logaddexp(0.0, -x)


def log_softmax(x):
    shifted = x - x.max(axis=-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))


def mse_ref(y, p):
    return np.mean((y - p) ** 2, axis=-1)


def mae_ref(y, p):
    return np.mean(np.abs(y - p), axis=-1)


def huber_ref(y, p, delta=1.0):
    error = np.abs(p - y)
    return np.mean(
        np.where(error <= delta, 0.5 * error**2, delta * error - 0.5 * delta**2), axis=-1
    )


def kld_ref(y, p):
    y, p = np.clip(y, EPS, 1.0), np.clip(p, EPS, 1.0)
    return np.sum(y * np.log(y / p), axis=-1)


def bce_ref(y, p, from_logits=False, label_smoothing=0.0):
    y = y * (1.0 - label_smoothing) + 0.5 * label_smoothing
    if from_logits:
        log_p, log_not_p = log_sigmoid(p), log_sigmoid(-p)
    else:
        p = np.clip(p, EPS, 1.0 - EPS)
        log_p, log_not_p = np.log(p), np.log(1.0 - p)
    return np.mean(-(y * log_p + (1.0 - y) * log_not_p), axis=-1)


def cce_ref(y, p, from_logits=False, label_smoothing=0.0):
    y = y * (1.0 - label_smoothing) + label_smoothing / y.shape[-1]
    if from_logits:
        log_p = log_softmax(p)
    else:
        log_p = np.log(np.clip(p / p.sum(axis=-1, keepdims=True), EPS, 1.0 - EPS))
    return -np.sum(y * log_p, axis=-1)


def scce_ref(labels, p, from_logits=False):
    return cce_ref(np.eye(p.shape[-1])[labels], p, from_logits)


# ------------------------------------------------------------------- cases
# Each: (id, Loss maker, loss function with the same arguments, reference, data maker).
# Data makers return float64 (y_true, y_pred) of 6 samples, away from kinks and clips.


def regression(rng):
    y = rng.standard_normal((6, 3))
    # Errors at least 0.1 from 0 (abs) and from +-1 (Huber's delta).
    error = rng.choice([-1.0, 1.0], (6, 3)) * rng.choice([0.3, 0.7, 1.5, 2.5], (6, 3))
    return y, y + error


def binary(rng):
    return rng.integers(0, 2, (6, 4)).astype(float), rng.uniform(0.1, 0.9, (6, 4))


def binary_logits(rng):
    return rng.integers(0, 2, (6, 4)).astype(float), rng.standard_normal((6, 4)) * 3


def one_hot(rng):
    return np.eye(5)[rng.integers(0, 5, 6)], rng.uniform(0.1, 1.0, (6, 5))


def one_hot_logits(rng):
    return np.eye(5)[rng.integers(0, 5, 6)], rng.standard_normal((6, 5)) * 3


def sparse(rng):
    return rng.integers(0, 5, 6), rng.uniform(0.1, 1.0, (6, 5))


def sparse_logits(rng):
    return rng.integers(0, 5, 6), rng.standard_normal((6, 5)) * 3


def distributions(rng):
    y, p = rng.uniform(0.1, 1.0, (6, 4)), rng.uniform(0.1, 1.0, (6, 4))
    return y / y.sum(-1, keepdims=True), p / p.sum(-1, keepdims=True)


def bind(fn, **kwargs):
    return lambda y, p: fn(y, p, **kwargs)


CASES = [
    ("mse", losses.MeanSquaredError, losses.mean_squared_error, mse_ref, regression),
    ("mae", losses.MeanAbsoluteError, losses.mean_absolute_error, mae_ref, regression),
    ("huber", losses.Huber, losses.huber, huber_ref, regression),
    (
        "huber-delta-2",
        lambda **kw: losses.Huber(delta=2.0, **kw),
        bind(losses.huber, delta=2.0),
        bind(huber_ref, delta=2.0),
        regression,
    ),
    ("kld", losses.KLDivergence, losses.kl_divergence, kld_ref, distributions),
    ("bce", losses.BinaryCrossentropy, losses.binary_crossentropy, bce_ref, binary),
    (
        "bce-logits",
        lambda **kw: losses.BinaryCrossentropy(from_logits=True, **kw),
        bind(losses.binary_crossentropy, from_logits=True),
        bind(bce_ref, from_logits=True),
        binary_logits,
    ),
    (
        "bce-smoothing",
        lambda **kw: losses.BinaryCrossentropy(label_smoothing=0.2, **kw),
        bind(losses.binary_crossentropy, label_smoothing=0.2),
        bind(bce_ref, label_smoothing=0.2),
        binary,
    ),
    (
        "bce-logits-smoothing",
        lambda **kw: losses.BinaryCrossentropy(from_logits=True, label_smoothing=0.1, **kw),
        bind(losses.binary_crossentropy, from_logits=True, label_smoothing=0.1),
        bind(bce_ref, from_logits=True, label_smoothing=0.1),
        binary_logits,
    ),
    ("cce", losses.CategoricalCrossentropy, losses.categorical_crossentropy, cce_ref, one_hot),
    (
        "cce-logits",
        lambda **kw: losses.CategoricalCrossentropy(from_logits=True, **kw),
        bind(losses.categorical_crossentropy, from_logits=True),
        bind(cce_ref, from_logits=True),
        one_hot_logits,
    ),
    (
        "cce-smoothing",
        lambda **kw: losses.CategoricalCrossentropy(label_smoothing=0.3, **kw),
        bind(losses.categorical_crossentropy, label_smoothing=0.3),
        bind(cce_ref, label_smoothing=0.3),
        one_hot,
    ),
    (
        "cce-logits-smoothing",
        lambda **kw: losses.CategoricalCrossentropy(from_logits=True, label_smoothing=0.1, **kw),
        bind(losses.categorical_crossentropy, from_logits=True, label_smoothing=0.1),
        bind(cce_ref, from_logits=True, label_smoothing=0.1),
        one_hot_logits,
    ),
    (
        "scce",
        losses.SparseCategoricalCrossentropy,
        losses.sparse_categorical_crossentropy,
        scce_ref,
        sparse,
    ),
    (
        "scce-logits",
        lambda **kw: losses.SparseCategoricalCrossentropy(from_logits=True, **kw),
        bind(losses.sparse_categorical_crossentropy, from_logits=True),
        bind(scce_ref, from_logits=True),
        sparse_logits,
    ),
]
CASE_PARAMS = [pytest.param(*case[1:], id=case[0]) for case in CASES]
REDUCTIONS = ["sum_over_batch_size", "sum", "mean", "mean_with_sample_weight", "none", None]


def reduce_ref(per_sample, weights, reduction):
    weighted = per_sample * weights
    if reduction in ("none", None):
        return weighted
    if reduction == "sum":
        return weighted.sum()
    if reduction == "mean_with_sample_weight":
        return weighted.sum() / weights.sum()
    return weighted.sum() / weighted.size


# ------------------------------------------------------------------ values


@pytest.mark.parametrize(("make_loss", "function", "reference", "data"), CASE_PARAMS)
def test_function_matches_reference(make_loss, function, reference, data):
    y_true, y_pred = data(np.random.default_rng(0))
    np.testing.assert_allclose(
        function(y_true, y_pred).numpy(), reference(y_true, y_pred), rtol=1e-10, atol=1e-12
    )


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize(("make_loss", "function", "reference", "data"), CASE_PARAMS)
def test_loss_with_sample_weight_and_reduction_matches_reference(
    make_loss, function, reference, data, reduction
):
    rng = np.random.default_rng(1)
    y_true, y_pred = data(rng)
    weights = rng.uniform(0.0, 2.0, 6)
    loss = make_loss(reduction=reduction)
    expected = reduce_ref(reference(y_true, y_pred), weights, reduction)
    result = loss(y_true, y_pred, sample_weight=weights)
    np.testing.assert_allclose(result.numpy(), expected, rtol=1e-10, atol=1e-12)
    unweighted = reduce_ref(reference(y_true, y_pred), np.ones(6), reduction)
    np.testing.assert_allclose(loss(y_true, y_pred).numpy(), unweighted, rtol=1e-10)


def test_default_reduction_divides_by_batch_size_not_weight_sum():
    loss = losses.MeanSquaredError()
    assert loss.reduction == "sum_over_batch_size"
    result = loss([[0.0], [0.0]], [[1.0], [3.0]], sample_weight=[1.0, 0.0])
    assert float(result) == pytest.approx(0.5)


def test_mean_with_sample_weight_of_zero_weights_is_zero():
    loss = losses.MeanAbsoluteError(reduction="mean_with_sample_weight")
    assert float(loss([[0.0], [0.0]], [[1.0], [3.0]], sample_weight=[0.0, 0.0])) == 0.0


def test_sample_weight_per_time_step_and_scalar():
    rng = np.random.default_rng(2)
    y_true, y_pred = rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 3, 4))
    per_step = mse_ref(y_true, y_pred)  # (2, 3)
    weights = rng.uniform(0.0, 1.0, (2, 3))
    loss = losses.MeanSquaredError(reduction="sum")
    np.testing.assert_allclose(
        loss(y_true, y_pred, sample_weight=weights).numpy(), (per_step * weights).sum()
    )
    per_sample = np.array([2.0, 0.5])  # (batch,) weights cover the time axis
    np.testing.assert_allclose(
        loss(y_true, y_pred, sample_weight=per_sample).numpy(),
        (per_step * per_sample[:, None]).sum(),
    )
    np.testing.assert_allclose(loss(y_true, y_pred, sample_weight=3.0).numpy(), 3 * per_step.sum())


def test_sample_weight_with_trailing_axis_of_one():
    y_true, y_pred = np.zeros((3, 1)), np.array([[1.0], [2.0], [3.0]])
    loss = losses.MeanSquaredError(reduction="sum")
    result = loss(y_true, y_pred, sample_weight=np.array([[1.0], [0.0], [1.0]]))
    assert float(result) == pytest.approx(10.0)


def test_label_smoothing_formulas():
    # Binary: targets move to y * (1 - s) + s / 2; categorical: y * (1 - s) + s / classes.
    p = np.array([[0.7, 0.2]])
    smooth = losses.binary_crossentropy([[1.0, 0.0]], p, label_smoothing=0.2).numpy()
    np.testing.assert_allclose(smooth, bce_ref(np.array([[0.9, 0.1]]), p), rtol=1e-12)
    q = np.array([[0.5, 0.3, 0.2]])
    smooth = losses.categorical_crossentropy([[1.0, 0.0, 0.0]], q, label_smoothing=0.3).numpy()
    np.testing.assert_allclose(smooth, cce_ref(np.array([[0.8, 0.1, 0.1]]), q), rtol=1e-12)


def test_loss_functions_follow_keras_mean_over_last_axis():
    # The function averages 1-D inputs to one number, as Keras does ...
    assert losses.mse([0.0, 0.0], [1.0, 3.0]).shape == ()
    assert float(losses.mse([0.0, 0.0], [1.0, 3.0])) == pytest.approx(5.0)
    # ... while the element-wise Loss objects see one value per sample.
    loss = losses.MeanSquaredError(reduction="none")
    np.testing.assert_allclose(loss([0.0, 0.0], [1.0, 3.0]).numpy(), [1.0, 9.0])
    weighted = losses.BinaryCrossentropy()([1.0, 0.0], [0.8, 0.4], sample_weight=[1.0, 0.0])
    assert float(weighted) == pytest.approx(-np.log(0.8) / 2, rel=1e-6)


def test_custom_loss_subclass_gets_weighting_and_reduction():
    class Cubes(losses.Loss):
        def call(self, y_true, y_pred):
            return losses.ops.sum((y_pred - y_true) ** 3, axis=-1)

    loss = Cubes(reduction="sum")
    assert loss.name == "cubes"
    assert float(loss([[0.0], [0.0]], [[1.0], [2.0]], sample_weight=[1.0, 0.5])) == 5.0
    with pytest.raises(NotImplementedError, match="Loss must implement call"):
        losses.Loss()([[0.0]], [[1.0]])


# ---------------------------------------------------------------- gradients


@pytest.mark.parametrize(("make_loss", "function", "reference", "data"), CASE_PARAMS)
def test_gradient_matches_central_differences(make_loss, function, reference, data):
    rng = np.random.default_rng(3)
    y_true, y_pred = data(rng)
    weights = rng.uniform(0.5, 2.0, 6)
    loss = make_loss()
    prediction = Variable(y_pred, dtype="float64")
    with GradientTape() as tape:
        value = loss(y_true, prediction, sample_weight=weights)
    grad = tape.gradient(value, prediction)
    assert grad.dtype == np.float64
    expected = central_differences(
        lambda p: float(loss(y_true, p, sample_weight=weights)), y_pred.copy()
    )
    np.testing.assert_allclose(grad.numpy(), expected, rtol=1e-5, atol=1e-8)


# ------------------------------------------------------ stability and dtypes

LOGIT_CASES = [
    pytest.param(
        losses.BinaryCrossentropy(from_logits=True),
        np.array([[1], [0], [1], [0]]),
        np.array([[1000.0], [-1000.0], [-1000.0], [1000.0]], "float32"),
        lambda y, p: bce_ref(y, p, from_logits=True),
        id="bce",
    ),
    pytest.param(
        losses.BinaryCrossentropy(from_logits=True, label_smoothing=0.1),
        np.array([1, 0, 1, 0]),
        np.array([1000.0, -1000.0, -1000.0, 1000.0], "float32"),
        lambda y, p: bce_ref(y[:, None], p[:, None], from_logits=True, label_smoothing=0.1),
        id="bce-smoothing-1d",
    ),
    pytest.param(
        losses.CategoricalCrossentropy(from_logits=True, label_smoothing=0.1),
        np.eye(3, dtype=int)[[0, 1, 2, 0]],
        np.array([[1000, -1000, 0], [1000, -1000, 0], [0, 0, 0], [-1000, 1000, 1000]], "float32"),
        lambda y, p: cce_ref(y, p, from_logits=True, label_smoothing=0.1),
        id="cce",
    ),
    pytest.param(
        losses.SparseCategoricalCrossentropy(from_logits=True),
        np.array([0, 1, 2, 0]),
        np.array([[1000, -1000, 0], [1000, -1000, 0], [0, 0, 0], [-1000, 1000, 1000]], "float32"),
        lambda y, p: scce_ref(y, p, from_logits=True),
        id="scce",
    ),
]


@pytest.mark.parametrize(("loss", "labels", "logits", "reference"), LOGIT_CASES)
def test_large_logits_give_finite_float32_losses_and_gradients(loss, labels, logits, reference):
    prediction = Variable(logits)
    with GradientTape() as tape:
        value = loss(labels, prediction)
    grad = tape.gradient(value, prediction)
    assert value.dtype == np.float32 and grad.dtype == np.float32
    assert np.isfinite(value.numpy()) and np.all(np.isfinite(grad.numpy()))
    expected = reference(labels, logits.astype(np.float64))
    assert float(value) == pytest.approx(expected.mean(), rel=1e-6)


def test_probability_losses_at_saturated_predictions_are_finite():
    cases = [
        (losses.BinaryCrossentropy(), [[1.0], [0.0]], [[0.0], [1.0]]),
        (losses.CategoricalCrossentropy(), [[1.0, 0.0]], [[0.0, 1.0]]),
        (losses.SparseCategoricalCrossentropy(), [0], [[0.0, 1.0]]),
        (losses.KLDivergence(), [[1.0, 0.0]], [[0.0, 1.0]]),
    ]
    for loss, labels, probabilities in cases:
        prediction = Variable(probabilities)
        with GradientTape() as tape:
            value = loss(labels, prediction)
        assert np.isfinite(float(value)), loss.name
        assert np.all(np.isfinite(tape.gradient(value, prediction).numpy())), loss.name


@pytest.mark.parametrize(("make_loss", "function", "reference", "data"), CASE_PARAMS)
def test_float32_predictions_with_integer_labels_stay_float32(make_loss, function, reference, data):
    y_true, y_pred = data(np.random.default_rng(4))
    if not np.array_equal(y_true, np.round(y_true)):
        y_true = np.round(y_true)  # integer targets for every loss
    labels = y_true.astype(np.int64)
    prediction = Variable(y_pred.astype(np.float32))
    with GradientTape() as tape:
        value = make_loss()(labels, prediction, sample_weight=np.ones(6))  # float64 weights
    assert value.dtype == np.float32
    assert tape.gradient(value, prediction).dtype == np.float32
    assert function(labels, y_pred.astype(np.float32)).dtype == np.float32


def test_integer_predictions_become_floatx():
    assert losses.MeanSquaredError()([1, 2], [1, 4]).dtype == np.float32


def test_explicit_dtype_casts_the_computation():
    loss = losses.MeanSquaredError(dtype="float32")
    assert loss(np.zeros((2, 2)), np.ones((2, 2))).dtype == np.float32


# ------------------------------------------------------------------- shapes


def test_trailing_axis_of_one_is_aligned():
    rng = np.random.default_rng(5)
    y_pred = rng.standard_normal((32, 1))
    y_true = rng.standard_normal(32)
    loss = losses.MeanSquaredError(reduction="none")
    expected = (y_true - y_pred[:, 0]) ** 2
    np.testing.assert_allclose(loss(y_true, y_pred).numpy(), expected)
    np.testing.assert_allclose(loss(y_true[:, None], y_pred[:, 0]).numpy(), expected)
    labels = rng.integers(0, 10, (32, 1))
    scores = rng.standard_normal((32, 10))
    scce = losses.SparseCategoricalCrossentropy(from_logits=True, reduction="none")
    np.testing.assert_allclose(scce(labels, scores).numpy(), scce(labels[:, 0], scores).numpy())


@pytest.mark.parametrize(
    ("loss", "y_true", "y_pred", "message"),
    [
        (losses.MeanSquaredError(), np.zeros(32), np.zeros((32, 2)), "mean_squared_error"),
        (losses.MeanAbsoluteError(), np.zeros((32, 3)), np.zeros((32, 2)), "mean_absolute_error"),
        (losses.Huber(), np.zeros((4, 2)), np.zeros((2, 4)), "huber"),
        (losses.KLDivergence(), np.zeros((4, 3)), np.zeros((4, 2)), "kl_divergence"),
        (losses.BinaryCrossentropy(), np.zeros((32, 2)), np.zeros((32, 1)), "binary_crossentropy"),
        (
            losses.CategoricalCrossentropy(),
            np.zeros(32, int),
            np.zeros((32, 10)),
            "categorical_crossentropy.*sparse_categorical_crossentropy",
        ),
        (
            losses.SparseCategoricalCrossentropy(),
            np.zeros((32, 10)),
            np.zeros((32, 10)),
            "sparse_categorical_crossentropy.*use categorical_crossentropy",
        ),
        (
            losses.SparseCategoricalCrossentropy(),
            np.zeros((32, 3), int),
            np.zeros((32, 10)),
            "sparse_categorical_crossentropy",
        ),
    ],
)
def test_shape_mismatch_names_the_loss_and_both_shapes(loss, y_true, y_pred, message):
    with pytest.raises(ValueError, match=message) as error:
        loss(y_true, y_pred)
    assert str(y_true.shape) in str(error.value) and str(y_pred.shape) in str(error.value)


def test_sample_weight_that_does_not_fit_is_an_error():
    with pytest.raises(ValueError, match=r"'mean_squared_error'.*\(3,\).*\(4,\)"):
        losses.MeanSquaredError()(np.zeros((4, 2)), np.ones((4, 2)), sample_weight=np.ones(3))


def test_bad_arguments_are_errors():
    with pytest.raises(ValueError, match="invalid reduction 'avg'"):
        losses.MeanSquaredError(reduction="avg")
    with pytest.raises(ValueError, match="label_smoothing"):
        losses.BinaryCrossentropy(label_smoothing=1.5)
    with pytest.raises(ValueError, match="delta"):
        losses.Huber(delta=0.0)
    with pytest.raises(ValueError, match=r"labels must lie in \[0, 3\)"):
        losses.SparseCategoricalCrossentropy()([3], [[0.2, 0.3, 0.5]])


def test_single_class_categorical_crossentropy_warns():
    with pytest.warns(UserWarning, match="binary_crossentropy"):
        losses.categorical_crossentropy([[1.0]], [[0.3]])


# --------------------------------------------------------- names and configs


@pytest.mark.parametrize(
    ("identifier", "expected"),
    [
        ("mse", losses.mean_squared_error),
        ("MSE", losses.mean_squared_error),
        ("mean_squared_error", losses.mean_squared_error),
        ("mae", losses.mean_absolute_error),
        ("mean_absolute_error", losses.mean_absolute_error),
        ("huber", losses.huber),
        ("kld", losses.kl_divergence),
        ("kl_divergence", losses.kl_divergence),
        ("binary_crossentropy", losses.binary_crossentropy),
        ("categorical_crossentropy", losses.categorical_crossentropy),
        ("sparse_categorical_crossentropy", losses.sparse_categorical_crossentropy),
    ],
)
def test_get_function_names(identifier, expected):
    assert losses.get(identifier) is expected


@pytest.mark.parametrize(
    "name",
    [
        "MeanSquaredError",
        "MeanAbsoluteError",
        "Huber",
        "KLDivergence",
        "BinaryCrossentropy",
        "CategoricalCrossentropy",
        "SparseCategoricalCrossentropy",
    ],
)
def test_get_class_names_and_round_trips(name):
    loss = losses.get(name)
    assert type(loss).__name__ == name
    assert losses.get(losses.MeanSquaredError) is not None
    copy = losses.deserialize(losses.serialize(loss))
    assert type(copy) is type(loss) and copy.get_config() == loss.get_config()
    assert losses.get(loss) is loss


def test_configured_losses_round_trip_and_compute_the_same():
    rng = np.random.default_rng(6)
    y_true, y_pred = rng.integers(0, 2, (5, 3)), rng.standard_normal((5, 3))
    for loss in [
        losses.BinaryCrossentropy(from_logits=True, label_smoothing=0.2, reduction="sum"),
        losses.CategoricalCrossentropy(from_logits=True, label_smoothing=0.1, name="xent"),
        losses.Huber(delta=0.5, reduction="none", dtype="float32"),
        losses.LossFunctionWrapper(losses.mae, reduction="sum", name="l1"),
    ]:
        config = losses.serialize(loss)
        copy = losses.get(config)
        assert copy.get_config() == loss.get_config()
        np.testing.assert_allclose(copy(y_true, y_pred).numpy(), loss(y_true, y_pred).numpy())
        assert type(copy).from_config(loss.get_config()).get_config() == loss.get_config()


def test_serialize_functions_and_custom_objects():
    assert losses.serialize(losses.mse) == "mean_squared_error"

    def my_loss(y_true, y_pred):
        return losses.mse(y_true, y_pred)

    assert losses.deserialize("my_loss", custom_objects={"my_loss": my_loss}) is my_loss
    wrapped = losses.LossFunctionWrapper(my_loss, reduction="sum")
    copy = losses.deserialize(losses.serialize(wrapped), custom_objects={"my_loss": my_loss})
    assert copy.fn is my_loss and copy.reduction == "sum" and copy.name == "my_loss"
    assert losses.get(my_loss) is my_loss
    assert losses.get(None) is None
    with pytest.raises(ValueError, match="cannot name"):
        losses.serialize(lambda y, p: y)
    with pytest.raises(ValueError, match="Unknown loss 'nope'"):
        losses.get("nope")
    with pytest.raises(ValueError, match="expected a loss name"):
        losses.get(3)
    with pytest.raises(ValueError, match="Unknown loss class"):
        losses.deserialize({"class_name": "Nope", "config": {}})


# ------------------------------------------- the fused sparse cross-entropy


@pytest.mark.parametrize("reduction", ["sum_over_batch_size", "mean"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("label_shape", [(7,), (7, 1)])
def test_sparse_crossentropy_from_logits_mean_matches_the_weighted_path(
    reduction, dtype, label_shape
):
    """Logits, no weights, the batch mean: one fused op, the same value and gradient."""
    rng = np.random.default_rng(11)
    logits = rng.standard_normal((7, 4)).astype(dtype)
    labels = rng.integers(0, 4, label_shape)
    loss = losses.SparseCategoricalCrossentropy(from_logits=True, reduction=reduction)
    prediction = Variable(logits, dtype=dtype)
    with GradientTape(persistent=True) as tape:
        fused = loss(labels, prediction)
        weighted = loss(labels, prediction, sample_weight=np.ones(7))  # the general path
    assert fused.dtype == np.dtype(dtype) and fused.shape == ()
    expected = -log_softmax(logits.astype(np.float64))[np.arange(7), labels.reshape(-1)].mean()
    np.testing.assert_allclose(float(fused), expected, rtol=1e-6 if dtype == "float32" else 1e-12)
    np.testing.assert_allclose(float(fused), float(weighted), rtol=1e-6)
    grad = tape.gradient(fused, prediction)
    assert grad.dtype == np.dtype(dtype)
    softmax = np.exp(log_softmax(logits.astype(np.float64)))
    by_hand = (softmax - np.eye(4)[labels.reshape(-1)]) / 7
    np.testing.assert_allclose(grad.numpy(), by_hand, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(
        grad.numpy(), tape.gradient(weighted, prediction).numpy(), rtol=1e-5, atol=1e-7
    )


def test_sparse_crossentropy_from_logits_of_an_empty_batch_is_zero():
    loss = losses.SparseCategoricalCrossentropy(from_logits=True)
    assert float(loss(np.zeros(0, int), np.zeros((0, 3), np.float32))) == 0.0


@pytest.mark.parametrize(
    ("labels", "message"),
    [
        (np.zeros((5, 3), int), r"y_true must have shape \(5,\).*\(5, 3\)"),
        (np.array([0, 1, 2, 3, 4]), r"labels must lie in \[0, 3\).*0 to 4"),
        (np.array([0, 1, -1, 0, 0]), r"labels must lie in \[0, 3\).*-1 to 1"),
    ],
)
def test_sparse_crossentropy_from_logits_mean_checks_its_labels(labels, message):
    loss = losses.SparseCategoricalCrossentropy(from_logits=True)
    with pytest.raises(ValueError, match=message):
        loss(labels, np.zeros((5, 3), np.float32))


def test_a_subclass_that_overrides_call_is_not_bypassed_by_the_fused_path():
    class Twice(losses.SparseCategoricalCrossentropy):
        def call(self, y_true, y_pred):
            return super().call(y_true, y_pred) * 2.0

    logits = np.array([[0.0, 0.0], [0.0, 1.0]], np.float32)
    once = float(losses.SparseCategoricalCrossentropy(from_logits=True)([0, 1], logits))
    assert float(Twice(from_logits=True)([0, 1], logits)) == pytest.approx(2 * once)


def test_a_float64_loss_on_float32_logits_computes_in_float64():
    logits = np.random.default_rng(12).standard_normal((5, 3)).astype(np.float32)
    labels = np.array([0, 2, 1, 1, 0])
    loss = losses.SparseCategoricalCrossentropy(from_logits=True, dtype="float64")
    value = loss(labels, logits)
    assert value.dtype == np.float64
    expected = -log_softmax(logits.astype(np.float64))[np.arange(5), labels].mean()
    np.testing.assert_allclose(float(value), expected, rtol=1e-12)
