"""Metrics against hand computations over several batches, with weights and resets.

Each mean metric, fed three batches, must give the weighted mean of per-sample
values computed in numpy on all the data at once. AUC must match the exact
area (Mann-Whitney for ROC, a numerical integral of the interpolated curve for
PR) where the thresholds separate the scores.
"""

import numpy as np
import pytest

from minikeras import losses, metrics
from minikeras.metrics.auto_accuracy import _AutoAccuracy

# ---------------------------------------------------------------- helpers


def batches(*arrays, sizes=(5, 3, 4)):
    """Splits each array along axis 0 into consecutive batches of `sizes`."""
    bounds = np.cumsum((0, *sizes))
    return [tuple(a[lo:hi] for a in arrays) for lo, hi in zip(bounds[:-1], bounds[1:])]


def feed(metric, y_true, y_pred, weights=None):
    for part in batches(*(a for a in (y_true, y_pred, weights) if a is not None)):
        metric.update_state(*part[:2], sample_weight=part[2] if weights is not None else None)
    return metric.result()


def weighted_mean(values, weights):
    return float(np.sum(values * weights) / np.sum(weights))


RNG = np.random.default_rng(0)
N, C = 12, 5
LABELS = RNG.integers(0, C, N)
ONE_HOT = np.eye(C)[LABELS]
SCORES = RNG.uniform(0.0, 1.0, (N, C))
SCORES[0, :] = 0.5  # a full tie: argmax picks the first class
SCORES[1, LABELS[1]] = SCORES[1].max()  # the label ties the top score
BINARY_TRUE = RNG.integers(0, 2, (N, 1))
BINARY_PRED = RNG.uniform(0.0, 1.0, (N, 1))
REGRESSION_TRUE, REGRESSION_PRED = RNG.standard_normal((N, 3)), RNG.standard_normal((N, 3))
WEIGHTS = RNG.uniform(0.0, 2.0, N)


def rank_of_label(scores, labels):
    """How many classes score strictly higher than the label."""
    return np.sum(scores > scores[np.arange(len(labels)), labels][:, None], axis=1)


MEAN_CASES = [
    pytest.param(
        metrics.Accuracy(),
        LABELS,
        np.where(np.arange(N) % 3 == 0, (LABELS + 1) % C, LABELS),
        (np.arange(N) % 3 != 0).astype(float),
        id="accuracy",
    ),
    pytest.param(
        metrics.BinaryAccuracy(),
        BINARY_TRUE,
        BINARY_PRED,
        (BINARY_TRUE[:, 0] == (BINARY_PRED[:, 0] > 0.5)).astype(float),
        id="binary_accuracy",
    ),
    pytest.param(
        metrics.BinaryAccuracy(threshold=0.8),
        BINARY_TRUE[:, 0],
        BINARY_PRED,
        (BINARY_TRUE[:, 0] == (BINARY_PRED[:, 0] > 0.8)).astype(float),
        id="binary_accuracy-threshold-1d-labels",
    ),
    pytest.param(
        metrics.CategoricalAccuracy(),
        ONE_HOT,
        SCORES,
        (np.argmax(SCORES, 1) == LABELS).astype(float),
        id="categorical_accuracy",
    ),
    pytest.param(
        metrics.SparseCategoricalAccuracy(),
        LABELS,
        SCORES,
        (np.argmax(SCORES, 1) == LABELS).astype(float),
        id="sparse_categorical_accuracy",
    ),
    pytest.param(
        metrics.SparseCategoricalAccuracy(),
        LABELS[:, None].astype(float),
        SCORES,
        (np.argmax(SCORES, 1) == LABELS).astype(float),
        id="sparse_categorical_accuracy-column-labels",
    ),
    pytest.param(
        metrics.TopKCategoricalAccuracy(k=2),
        ONE_HOT,
        SCORES,
        (rank_of_label(SCORES, LABELS) < 2).astype(float),
        id="top_k",
    ),
    pytest.param(
        metrics.SparseTopKCategoricalAccuracy(k=1),
        LABELS,
        SCORES,
        (rank_of_label(SCORES, LABELS) < 1).astype(float),
        id="sparse_top_k",
    ),
    pytest.param(
        metrics.MeanSquaredError(),
        REGRESSION_TRUE,
        REGRESSION_PRED,
        np.mean((REGRESSION_TRUE - REGRESSION_PRED) ** 2, axis=1),
        id="mse",
    ),
    pytest.param(
        metrics.MeanAbsoluteError(),
        REGRESSION_TRUE,
        REGRESSION_PRED,
        np.mean(np.abs(REGRESSION_TRUE - REGRESSION_PRED), axis=1),
        id="mae",
    ),
]


# ------------------------------------------------------------ mean metrics


@pytest.mark.parametrize(("metric", "y_true", "y_pred", "per_sample"), MEAN_CASES)
def test_mean_metric_over_batches_matches_hand_computation(metric, y_true, y_pred, per_sample):
    metric.reset_state()
    result = feed(metric, y_true, y_pred)
    assert type(result) is float
    assert result == pytest.approx(float(np.mean(per_sample)), rel=1e-12)
    metric.reset_state()
    assert metric.result() == 0.0
    weighted = feed(metric, y_true, y_pred, WEIGHTS)
    assert weighted == pytest.approx(weighted_mean(per_sample, WEIGHTS), rel=1e-12)
    metric.reset_state()


def test_ties_in_top_k_count_as_hits():
    # Sample 1's label ties the top score: in the top 1 (as TensorFlow's in_top_k).
    metric = metrics.SparseTopKCategoricalAccuracy(k=1)
    assert metric(LABELS[1:2], SCORES[1:2]) == 1.0
    assert metrics.TopKCategoricalAccuracy(k=5)(ONE_HOT, SCORES) == 1.0


def test_mean_weights_values_per_sample_and_per_element():
    metric = metrics.Mean()
    metric.update_state([1.0, 2.0, 3.0])
    metric.update_state([[10.0, 20.0]], sample_weight=[0.5])  # one sample of mean 15
    assert metric.result() == pytest.approx((1 + 2 + 3 + 0.5 * 15) / 3.5)
    metric.reset_state()
    metric.update_state([[1.0, 3.0], [5.0, 7.0]], sample_weight=[[1.0, 0.0], [1.0, 1.0]])
    assert metric.result() == pytest.approx((1 + 5 + 7) / 3)
    metric.reset_state()
    metric.update_state([1.0, 3.0], sample_weight=2.0)  # a scalar weight weighs every sample
    metric.update_state([5.0])
    assert metric.result() == pytest.approx((2 * 1 + 2 * 3 + 5) / 5)
    assert metrics.Mean()(4.0) == 4.0


def test_mean_of_nothing_and_of_zero_weights_is_zero():
    metric = metrics.Mean()
    assert metric.result() == 0.0
    metric.update_state([1.0, 2.0], sample_weight=[0.0, 0.0])
    assert metric.result() == 0.0


def test_one_dimensional_regression_metrics_count_every_sample():
    # Batches of different sizes weigh by samples, not by batch.
    metric = metrics.MeanSquaredError()
    metric.update_state([0.0, 0.0, 0.0], [1.0, 1.0, 1.0])
    metric.update_state([0.0], [3.0])
    assert metric.result() == pytest.approx((3 * 1 + 9) / 4)


def test_metrics_accept_tensors():
    metric = metrics.CategoricalAccuracy()
    metric.update_state(losses.ops.convert_to_tensor(ONE_HOT), losses.ops.convert_to_tensor(SCORES))
    assert metric.result() == pytest.approx(float(np.mean(np.argmax(SCORES, 1) == LABELS)))


# --------------------------------------------------------- precision, recall


def confusion(y_true, scores, threshold, weights):
    predicted = scores > threshold
    tp = np.sum(weights * (predicted & (y_true == 1)))
    fp = np.sum(weights * (predicted & (y_true == 0)))
    fn = np.sum(weights * (~predicted & (y_true == 1)))
    return tp, fp, fn


def test_precision_and_recall_match_counts_at_every_threshold():
    rng = np.random.default_rng(1)
    y_true, scores = rng.integers(0, 2, 12), rng.uniform(0.0, 1.0, 12)
    scores[:3] = [0.3, 0.5, 0.9]  # scores on thresholds are not above them
    weights = rng.uniform(0.0, 2.0, 12)
    thresholds = [0.9, 0.3, 0.5, 0.0]
    precision = metrics.Precision(thresholds=thresholds)
    recall = metrics.Recall(thresholds=thresholds)
    for metric in (precision, recall):
        feed(metric, y_true, scores, weights)
    expected_precision, expected_recall = [], []
    for threshold in thresholds:
        tp, fp, fn = confusion(y_true, scores, threshold, weights)
        expected_precision.append(tp / (tp + fp) if tp + fp else 0.0)
        expected_recall.append(tp / (tp + fn) if tp + fn else 0.0)
    np.testing.assert_allclose(precision.result(), expected_precision, rtol=1e-12)
    np.testing.assert_allclose(recall.result(), expected_recall, rtol=1e-12)


def test_precision_and_recall_defaults_and_reset():
    precision, recall = metrics.Precision(), metrics.Recall()
    assert precision.result() == 0.0 and recall.result() == 0.0  # no predicted positives yet
    precision.update_state([[1], [0]], [[0.6], [0.7]])
    precision.update_state([[1], [1]], [[0.2], [0.9]])
    assert precision.result() == pytest.approx(2 / 3)
    recall.update_state([1, 1, 0, 1], [0.6, 0.4, 0.9, 0.5])  # 0.5 is not above 0.5
    assert recall.result() == pytest.approx(1 / 3)
    precision.reset_state()
    assert precision.result() == 0.0
    assert isinstance(precision.result(), float)


def test_threshold_outside_unit_interval_is_an_error():
    with pytest.raises(ValueError, match=r"thresholds must be numbers in \[0, 1\]"):
        metrics.Precision(thresholds=[0.5, 1.5])
    with pytest.raises(ValueError, match="num_thresholds"):
        metrics.AUC(num_thresholds=1)
    with pytest.raises(ValueError, match="curve"):
        metrics.AUC(curve="XY")


# ---------------------------------------------------------------------- AUC


def mann_whitney(y_true, scores, weights):
    """The exact ROC AUC: the weighted chance that a positive outscores a negative."""
    pos, neg = y_true == 1, y_true == 0
    above = scores[pos][:, None] > scores[neg][None, :]
    ties = scores[pos][:, None] == scores[neg][None, :]
    pair_weights = weights[pos][:, None] * weights[neg][None, :]
    return float(np.sum(pair_weights * (above + 0.5 * ties)) / np.sum(pair_weights))


def interpolated_pr_reference(tp, fp, total_positives, steps=20001):
    """Integral of precision over recall with (tp, fp) moving linearly between thresholds."""
    area = 0.0
    t = (np.arange(steps) + 0.5) / steps  # midpoints avoid p = 0 at t = 0
    for i in range(len(tp) - 1):
        d_tp = tp[i] - tp[i + 1]
        if d_tp == 0:
            continue
        tp_t = tp[i + 1] + t * d_tp
        p_t = tp_t + fp[i + 1] + t * (fp[i] - fp[i + 1])
        area += np.mean(tp_t / p_t) * d_tp / total_positives
    return area


def separated_scores(rng, count, num_thresholds=200):
    """Scores in distinct threshold bins, so the thresholds see every ROC point."""
    bins = rng.choice(num_thresholds - 1, count, replace=False)
    return (bins + 0.5) / (num_thresholds - 1)


def test_roc_auc_equals_mann_whitney_when_thresholds_separate_the_scores():
    rng = np.random.default_rng(2)
    y_true = rng.integers(0, 2, 12)
    scores = separated_scores(rng, 12)
    weights = rng.uniform(0.1, 2.0, 12)
    auc = metrics.AUC()
    assert feed(auc, y_true, scores) == pytest.approx(
        mann_whitney(y_true, scores, np.ones(12)), abs=1e-12
    )
    auc.reset_state()
    assert auc.result() == 0.0
    assert feed(auc, y_true, scores, weights) == pytest.approx(
        mann_whitney(y_true, scores, weights), abs=1e-12
    )


def test_roc_auc_is_close_to_exact_for_continuous_scores():
    rng = np.random.default_rng(3)
    y_true = rng.integers(0, 2, 2000)
    scores = np.clip(0.5 + 0.2 * (y_true - 0.5) + 0.2 * rng.standard_normal(2000), 0, 1)
    auc = metrics.AUC()
    auc.update_state(y_true, scores)
    assert auc.result() == pytest.approx(mann_whitney(y_true, scores, np.ones(2000)), abs=2e-3)
    assert metrics.AUC()([0, 0, 1, 1], [0.0, 0.1, 0.9, 1.0]) == pytest.approx(1.0)
    assert metrics.AUC()([1, 1, 0, 0], [0.0, 0.1, 0.9, 1.0]) == pytest.approx(0.0)


def test_pr_auc_interpolation_matches_numerical_integral():
    rng = np.random.default_rng(4)
    y_true = rng.integers(0, 2, 40)
    scores = rng.uniform(0.0, 1.0, 40)
    auc = metrics.AUC(curve="PR", num_thresholds=11)
    auc.update_state(y_true[:25], scores[:25])
    auc.update_state(y_true[25:], scores[25:])
    expected = interpolated_pr_reference(
        auc.true_positives, auc.false_positives, np.sum(y_true == 1)
    )
    assert auc.result() == pytest.approx(expected, rel=1e-6)
    perfect = metrics.AUC(curve="PR")
    perfect.update_state([0, 0, 1, 1], [0.1, 0.2, 0.8, 0.9])
    assert perfect.result() == pytest.approx(1.0)


def test_auc_summation_methods_bound_the_interpolation():
    rng = np.random.default_rng(5)
    y_true, scores = rng.integers(0, 2, 50), rng.uniform(0.0, 1.0, 50)
    for curve in ("ROC", "PR"):
        values = {}
        for method in ("minoring", "interpolation", "majoring"):
            auc = metrics.AUC(num_thresholds=7, curve=curve, summation_method=method)
            values[method] = auc(y_true, scores)
        assert values["minoring"] <= values["interpolation"] + 1e-12, curve
        assert values["interpolation"] <= values["majoring"] + 1e-12, curve


def test_auc_counts_add_up_over_batches_and_take_logits():
    rng = np.random.default_rng(6)
    y_true, logits = rng.integers(0, 2, 12), rng.standard_normal(12) * 3
    weights = rng.uniform(0.0, 2.0, 12)
    whole = metrics.AUC(from_logits=True)
    whole.update_state(y_true, logits, sample_weight=weights)
    split = metrics.AUC(from_logits=True)
    assert feed(split, y_true, logits, weights) == pytest.approx(whole.result(), abs=1e-12)
    probabilities = metrics.AUC()
    probabilities.update_state(y_true, 1 / (1 + np.exp(-logits)), sample_weight=weights)
    assert whole.result() == pytest.approx(probabilities.result(), abs=1e-12)


def test_auc_with_explicit_thresholds():
    auc = metrics.AUC(thresholds=[0.75, 0.25, 0.5])
    assert auc.num_thresholds == 5
    np.testing.assert_allclose(auc.thresholds[1:-1], [0.25, 0.5, 0.75])
    assert auc([0, 1, 0, 1], [0.1, 0.4, 0.6, 0.9]) == pytest.approx(0.75)


def test_auc_is_fast_on_large_batches():
    rng = np.random.default_rng(7)
    y_true, scores = rng.integers(0, 2, 200_000), rng.uniform(0.0, 1.0, 200_000)
    auc = metrics.AUC(num_thresholds=1000)
    auc.update_state(y_true, scores)  # O(n log thresholds); a loop over thresholds would crawl
    assert auc.result() == pytest.approx(0.5, abs=0.01)


# -------------------------------------------------------------- "accuracy"


@pytest.mark.parametrize(
    ("loss", "expected"),
    [
        ("sparse_categorical_crossentropy", metrics.SparseCategoricalAccuracy),
        (losses.SparseCategoricalCrossentropy(from_logits=True), metrics.SparseCategoricalAccuracy),
        ("SparseCategoricalCrossentropy", metrics.SparseCategoricalAccuracy),
        ("categorical_crossentropy", metrics.CategoricalAccuracy),
        (losses.categorical_crossentropy, metrics.CategoricalAccuracy),
        (losses.CategoricalCrossentropy(), metrics.CategoricalAccuracy),
        ("binary_crossentropy", metrics.BinaryAccuracy),
        (losses.BinaryCrossentropy(), metrics.BinaryAccuracy),
        # Other losses: by the shapes of the first batch, as Keras 3 picks it.
        ("mse", _AutoAccuracy),
        (losses.MeanAbsoluteError(), _AutoAccuracy),
        ("huber", _AutoAccuracy),
        (losses.CategoricalCrossentropy, metrics.CategoricalAccuracy),
        ({"class_name": "BinaryCrossentropy", "config": {}}, metrics.BinaryAccuracy),
    ],
)
def test_accuracy_resolves_from_the_loss(loss, expected):
    for identifier in ("accuracy", "acc", "Accuracy"):
        metric = metrics.get(identifier, loss=loss)
        assert type(metric) is expected
        assert metric.name == identifier


def test_accuracy_for_a_regression_loss_follows_the_shapes_as_keras():
    one_hot = np.eye(3)[[0, 1, 2, 1]]
    softmax = np.array([[0.7, 0.2, 0.1], [0.1, 0.8, 0.1], [0.5, 0.3, 0.2], [0.2, 0.3, 0.5]])
    assert metrics.get("accuracy", loss="mse")(one_hot, softmax) == pytest.approx(0.5)
    binary = metrics.get("accuracy", loss="mse")([[1], [0], [1]], [[0.9], [0.2], [0.3]])
    assert binary == pytest.approx(2 / 3)


def test_binary_accuracy_for_logits_thresholds_at_zero():
    metric = metrics.get("accuracy", loss=losses.BinaryCrossentropy(from_logits=True))
    assert metric.threshold == 0.0
    assert metric([[1], [0], [1]], [[0.3], [-0.2], [-5.0]]) == pytest.approx(2 / 3)
    assert metrics.get("accuracy", loss="binary_crossentropy").threshold == 0.5


@pytest.mark.parametrize(
    ("y_true", "y_pred", "expected"),
    [
        (BINARY_TRUE, BINARY_PRED, metrics.BinaryAccuracy),
        (BINARY_TRUE[:, 0], BINARY_PRED[:, 0], metrics.BinaryAccuracy),
        (LABELS, SCORES, metrics.SparseCategoricalAccuracy),
        (LABELS[:, None], SCORES, metrics.SparseCategoricalAccuracy),
        (ONE_HOT, SCORES, metrics.CategoricalAccuracy),
        (LABELS, LABELS, metrics.Accuracy),
    ],
)
def test_accuracy_without_a_known_loss_resolves_from_the_first_batch(y_true, y_pred, expected):
    for loss in (None, lambda y, p: losses.mse(y, p)):
        metric = metrics.get("accuracy", loss=loss)
        assert metric.result() == 0.0
        value = metric(y_true, y_pred)
        assert type(metric.resolved) is expected
        reference = expected()
        assert value == pytest.approx(reference(y_true, y_pred))
        metric.reset_state()
        assert metric.result() == 0.0 and type(metric.resolved) is expected


# ------------------------------------------------------------ shape errors


@pytest.mark.parametrize(
    ("metric", "y_true", "y_pred", "message"),
    [
        (metrics.Accuracy(), np.zeros(4), np.zeros((4, 2)), "'accuracy'"),
        (metrics.BinaryAccuracy(), np.zeros((4, 2)), np.zeros((4, 3)), "'binary_accuracy'"),
        (
            metrics.CategoricalAccuracy(),
            np.zeros(4),
            np.zeros((4, 3)),
            "'categorical_accuracy'.*sparse",
        ),
        (
            metrics.SparseCategoricalAccuracy(),
            np.zeros((4, 3)),
            np.zeros((4, 3)),
            "'sparse_categorical_accuracy'.*one-hot",
        ),
        (metrics.TopKCategoricalAccuracy(), np.zeros((4, 2)), np.zeros((4, 3)), "'top_k"),
        (metrics.MeanSquaredError(), np.zeros((4, 2)), np.zeros((4, 3)), "'mean_squared_error'"),
        (metrics.MeanAbsoluteError(), np.zeros(5), np.zeros(4), "'mean_absolute_error'"),
        (metrics.Precision(), np.zeros((4, 2)), np.zeros((4, 3)), "'precision'"),
        (metrics.AUC(), np.zeros(5), np.zeros(4), "'auc'"),
    ],
)
def test_shape_mismatch_names_the_metric_and_both_shapes(metric, y_true, y_pred, message):
    with pytest.raises(ValueError, match=message) as error:
        metric.update_state(y_true, y_pred)
    assert str(y_true.shape) in str(error.value) and str(y_pred.shape) in str(error.value)


def test_sample_weight_that_does_not_fit_is_an_error():
    with pytest.raises(ValueError, match=r"'accuracy'.*sample_weight of shape \(3,\)"):
        metrics.Accuracy().update_state([1, 2, 3, 4], [1, 2, 3, 4], sample_weight=[1, 1, 1])
    with pytest.raises(ValueError, match=r"'recall'.*sample_weight of shape \(3,\)"):
        metrics.Recall().update_state([1, 0, 1, 0], [0.9, 0.1, 0.2, 0.3], sample_weight=[1, 1, 1])


def test_sparse_top_k_label_out_of_range_is_an_error():
    with pytest.raises(ValueError, match=r"labels must lie in \[0, 5\)"):
        metrics.SparseTopKCategoricalAccuracy().update_state([5], SCORES[:1])


# --------------------------------------------------------- names and configs


@pytest.mark.parametrize(
    ("identifier", "expected", "name"),
    [
        ("mse", metrics.MeanSquaredError, "mse"),
        ("mean_squared_error", metrics.MeanSquaredError, "mean_squared_error"),
        ("mae", metrics.MeanAbsoluteError, "mae"),
        ("auc", metrics.AUC, "auc"),
        ("precision", metrics.Precision, "precision"),
        ("recall", metrics.Recall, "recall"),
        ("binary_accuracy", metrics.BinaryAccuracy, "binary_accuracy"),
        ("sparse_top_k_categorical_accuracy", metrics.SparseTopKCategoricalAccuracy, None),
        ("AUC", metrics.AUC, "auc"),
        ("TopKCategoricalAccuracy", metrics.TopKCategoricalAccuracy, None),
        (metrics.Recall, metrics.Recall, "recall"),
    ],
)
def test_get_names_and_classes(identifier, expected, name):
    metric = metrics.get(identifier)
    assert type(metric) is expected
    if name is not None:
        assert metric.name == name
    assert metrics.get(identifier) is not metric  # a fresh, stateless metric each time


def test_get_instances_functions_and_errors():
    auc = metrics.AUC()
    assert metrics.get(auc) is auc
    assert metrics.get(None) is None
    wrapped = metrics.get(metrics.binary_accuracy)
    assert type(wrapped) is metrics.MeanMetricWrapper and wrapped.name == "binary_accuracy"
    assert wrapped([1, 0], [0.9, 0.9]) == 0.5
    with pytest.raises(ValueError, match="Unknown metric 'f1'"):
        metrics.get("f1")
    with pytest.raises(ValueError, match="expected a metric name"):
        metrics.get(3)


@pytest.mark.parametrize(
    "metric",
    [
        metrics.Mean(name="loss_mean"),
        metrics.Accuracy(),
        metrics.BinaryAccuracy(threshold=0.3),
        metrics.CategoricalAccuracy(),
        metrics.SparseCategoricalAccuracy(name="acc"),
        metrics.TopKCategoricalAccuracy(k=3),
        metrics.SparseTopKCategoricalAccuracy(k=2),
        metrics.MeanSquaredError(),
        metrics.MeanAbsoluteError(),
        metrics.Precision(thresholds=[0.2, 0.6]),
        metrics.Recall(thresholds=0.4),
        metrics.AUC(num_thresholds=50, curve="PR", summation_method="minoring"),
        metrics.AUC(thresholds=[0.1, 0.5], from_logits=True),
        metrics.MeanMetricWrapper(metrics.sparse_top_k_categorical_accuracy, k=1),
        metrics.get("accuracy"),
    ],
    ids=lambda metric: type(metric).__name__,
)
def test_serialize_round_trip(metric):
    copy = metrics.deserialize(metrics.serialize(metric))
    assert type(copy) is type(metric)
    assert copy.get_config() == metric.get_config()
    assert copy is not metric and np.all(np.asarray(copy.result()) == 0.0)


def test_wrapped_custom_function_round_trips_with_custom_objects():
    def within_one(y_true, y_pred):
        return (np.abs(np.asarray(y_true) - np.asarray(y_pred)) <= 1).astype(float)

    metric = metrics.get(within_one)
    assert metric([1.0, 5.0], [1.5, 3.0]) == 0.5
    copy = metrics.deserialize(metrics.serialize(metric), {"within_one": within_one})
    assert copy([1.0], [1.9]) == 1.0 and copy.name == "within_one"


def test_serialize_rejects_non_metrics_and_unknown_classes():
    with pytest.raises(ValueError, match="expected a Metric"):
        metrics.serialize("mse")
    with pytest.raises(ValueError, match="Unknown metric class"):
        metrics.deserialize({"class_name": "F1", "config": {}})
    assert type(metrics.deserialize("auc")) is metrics.AUC
