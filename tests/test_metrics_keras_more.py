"""The metrics Keras 3 has beyond the basics, against numpy computations on all the data at once.

Every metric is fed three batches (with and without sample weights) and must
give what a direct numpy formula gives on the whole data; F-scores, IoU and R²
are also checked against small cases worked out by hand.
"""

import numpy as np
import pytest
from test_losses_keras_more import (
    categorical_hinge_ref,
    cosine_ref,
    hinge_ref,
    log_cosh_ref,
    mape_ref,
    msle_ref,
    poisson_ref,
    squared_hinge_ref,
)

import minikeras as mk
from minikeras import metrics

RNG = np.random.default_rng(7)
N, C = 12, 4
POSITIVE_TRUE = RNG.uniform(0.5, 3.0, (N, C))
POSITIVE_PRED = RNG.uniform(0.5, 3.0, (N, C))
SIGNS = RNG.choice([-1.0, 1.0], (N, C))
SCORES = RNG.standard_normal((N, C))
ONE_HOT = np.eye(C)[RNG.integers(0, C, N)]
MULTI_LABEL = RNG.integers(0, 2, (N, C)).astype(float)
PROBABILITIES = RNG.uniform(0.0, 1.0, (N, C))
WEIGHTS = RNG.uniform(0.0, 2.0, N)


def batches(*arrays, sizes=(5, 3, 4)):
    bounds = np.cumsum((0, *sizes))
    return [tuple(a[lo:hi] for a in arrays) for lo, hi in zip(bounds[:-1], bounds[1:])]


def feed(metric, y_true, y_pred, weights=None):
    if weights is None:
        for part in batches(y_true, y_pred):
            metric.update_state(*part)
    else:
        for y_t, y_p, w in batches(y_true, y_pred, weights):
            metric.update_state(y_t, y_p, sample_weight=w)
    return metric.result()


MEAN_CASES = [
    (metrics.MeanAbsolutePercentageError, "mean_absolute_percentage_error", mape_ref,
     POSITIVE_TRUE, POSITIVE_PRED),
    (metrics.MeanSquaredLogarithmicError, "mean_squared_logarithmic_error", msle_ref,
     POSITIVE_TRUE, POSITIVE_PRED),
    (metrics.CosineSimilarity, "cosine_similarity", lambda y, p: -cosine_ref(y, p), SCORES,
     POSITIVE_PRED),
    (metrics.LogCoshError, "logcosh", log_cosh_ref, POSITIVE_TRUE, SCORES),
    (metrics.Poisson, "poisson", poisson_ref, POSITIVE_TRUE, POSITIVE_PRED),
    (metrics.Hinge, "hinge", hinge_ref, SIGNS, SCORES),
    (metrics.SquaredHinge, "squared_hinge", squared_hinge_ref, SIGNS, SCORES),
    (metrics.CategoricalHinge, "categorical_hinge", categorical_hinge_ref, ONE_HOT, SCORES),
]  # fmt: skip


@pytest.mark.parametrize("cls, name, reference, y_true, y_pred", MEAN_CASES, ids=lambda c: "")
def test_loss_metrics_are_weighted_means_over_batches(cls, name, reference, y_true, y_pred):
    per_sample = reference(y_true, y_pred)
    metric = cls()
    assert metric.name == name
    assert feed(metric, y_true, y_pred) == pytest.approx(per_sample.mean(), rel=1e-9)
    metric.reset_state()
    expected = np.sum(per_sample * WEIGHTS) / np.sum(WEIGHTS)
    assert feed(metric, y_true, y_pred, WEIGHTS) == pytest.approx(expected, rel=1e-9)


def test_sum_adds_weighted_values_and_sums_trailing_axes():
    values = RNG.standard_normal((N, 3))
    metric = metrics.Sum()
    for (part,) in batches(values):
        metric.update_state(part)
    assert metric.result() == pytest.approx(values.sum())
    metric.reset_state()
    assert metric.result() == 0.0
    for part, weights in batches(values, WEIGHTS):
        metric.update_state(part, sample_weight=weights)
    assert metric.result() == pytest.approx(np.sum(values * WEIGHTS[:, None]))
    assert metrics.Sum()(5.0) == 5.0


def test_root_mean_squared_error_over_batches():
    per_sample = np.mean((POSITIVE_TRUE - POSITIVE_PRED) ** 2, axis=-1)
    metric = metrics.RootMeanSquaredError()
    assert feed(metric, POSITIVE_TRUE, POSITIVE_PRED) == pytest.approx(np.sqrt(per_sample.mean()))
    metric.reset_state()
    expected = np.sqrt(np.sum(per_sample * WEIGHTS) / WEIGHTS.sum())
    assert feed(metric, POSITIVE_TRUE, POSITIVE_PRED, WEIGHTS) == pytest.approx(expected)
    # Keras's documented example.
    metric = metrics.RootMeanSquaredError()
    assert metric([[0, 1], [0, 0]], [[1, 1], [0, 0]], sample_weight=[1, 0]) == pytest.approx(
        np.sqrt(0.5)
    )


def test_mean_metric_wrapper_wraps_a_new_loss_function():
    metric = metrics.MeanMetricWrapper(mk.losses.poisson)
    assert metric.name == "poisson"
    expected = poisson_ref(POSITIVE_TRUE, POSITIVE_PRED).mean()
    assert feed(metric, POSITIVE_TRUE, POSITIVE_PRED) == pytest.approx(expected, rel=1e-5)


# ------------------------------------------------------------------ F-scores


def f_scores(y_true, predicted, weights, beta, average):
    weights = weights[:, None]
    axis = None if average == "micro" else 0
    tp = np.sum(predicted * y_true * weights, axis=axis)
    fp = np.sum(predicted * (1 - y_true) * weights, axis=axis)
    fn = np.sum((1 - predicted) * y_true * weights, axis=axis)
    eps = 1e-7
    precision, recall = tp / (tp + fp + eps), tp / (tp + fn + eps)
    score = (1 + beta**2) * precision * recall / (beta**2 * precision + recall + eps)
    if average == "weighted":
        support = np.sum(y_true * weights, axis=0)
        return np.sum(score * support / (support.sum() + eps))
    return score if average is None else np.mean(score)


@pytest.mark.parametrize("average", [None, "micro", "macro", "weighted"])
@pytest.mark.parametrize("beta", [1.0, 2.0, 0.5])
@pytest.mark.parametrize("threshold", [None, 0.4])
def test_fbeta_score_matches_counts_over_batches(average, beta, threshold):
    y_true = ONE_HOT if threshold is None else MULTI_LABEL
    scores = PROBABILITIES
    if threshold is None:
        predicted = (scores == scores.max(axis=1, keepdims=True)).astype(float)
    else:
        predicted = (scores > threshold).astype(float)
    metric = metrics.FBetaScore(average=average, beta=beta, threshold=threshold)
    got = feed(metric, y_true, PROBABILITIES, WEIGHTS)
    expected = f_scores(y_true, predicted, WEIGHTS, beta, average)
    np.testing.assert_allclose(got, expected, rtol=1e-6)
    if average is None:
        assert got.dtype == np.float32 and got.shape == (C,)
    else:
        assert isinstance(got, float)
    metric.reset_state()
    np.testing.assert_allclose(metric.result(), 0.0)


def test_f1_score_by_hand():
    # Keras's documented example: class 0 tp 1 fp 0 fn 2 -> p 1, r 1/3 -> 0.5;
    # class 1 tp 2 fp 1 fn 0 -> 0.8; class 2 tp 1 fp 1 fn 0 -> 2/3.
    y_true = [[1, 1, 1], [1, 0, 0], [1, 1, 0]]
    y_pred = [[0.2, 0.6, 0.7], [0.2, 0.6, 0.6], [0.6, 0.8, 0.0]]
    got = metrics.F1Score(threshold=0.5)(y_true, y_pred)
    np.testing.assert_allclose(got, [0.5, 0.8, 2 / 3], rtol=1e-5)
    # All-zero predictions mark nothing positive when thresholding by the argmax.
    assert metrics.F1Score(average="micro")([[1, 0]], [[0.0, 0.0]]) == 0.0
    assert metrics.F1Score(average="micro")([[1, 0]], [[0.3, 0.1]]) == pytest.approx(1.0)


def test_f_score_takes_numpy_numbers():
    # As Keras: beta and threshold may be numpy scalars (np.float32 is no Python float).
    y_true, y_pred = [[1, 0], [0, 1]], [[0.7, 0.2], [0.6, 0.9]]
    made = metrics.FBetaScore(beta=np.float32(2.0), threshold=np.float32(0.5))
    plain = metrics.FBetaScore(beta=2.0, threshold=0.5)
    np.testing.assert_allclose(made(y_true, y_pred), plain(y_true, y_pred))
    assert made.get_config()["beta"] == 2.0


def test_f_score_argument_and_shape_errors():
    with pytest.raises(ValueError, match="average"):
        metrics.F1Score(average="samples")
    with pytest.raises(ValueError, match="beta"):
        metrics.FBetaScore(beta=0.0)
    for threshold in (0.0, 1.5, "high"):
        with pytest.raises(ValueError, match="threshold"):
            metrics.F1Score(threshold=threshold)
    metric = metrics.F1Score()
    with pytest.raises(ValueError, match=r"f1_score.*2-D.*\(3,\)"):
        metric.update_state([1, 0, 1], [0.5, 0.2, 0.9])
    metric.update_state([[1, 0]], [[0.7, 0.3]])
    with pytest.raises(ValueError, match="2 classes.*3"):
        metric.update_state([[1, 0, 0]], [[0.7, 0.3, 0.1]])


# ------------------------------------------------------------------ IoU


def test_iou_by_hand():
    # Confusion (rows true, columns predicted): [[1, 1], [1, 1]] -> IoU 1/3 each.
    assert metrics.IoU(2, target_class_ids=[0])([0, 0, 1, 1], [0, 1, 0, 1]) == pytest.approx(1 / 3)
    # Weights (Keras's example): [[0.3, 0.3], [1.0, 0.4]] ->
    # column sums [1.3, 0.7], row sums [0.6, 1.4]:
    # class 0: 0.3 / (1.3 + 0.6 - 0.3), class 1: 0.4 / (0.7 + 1.4 - 0.4).
    m = metrics.MeanIoU(num_classes=2)
    m.update_state([0, 0, 1, 1], [0, 1, 0, 1], sample_weight=[0.3, 0.3, 1.0, 0.4])
    expected = (0.3 / 1.6 + 0.4 / 1.7) / 2
    assert m.result() == pytest.approx(expected, rel=1e-6)
    # Classes absent from targets and predictions are left out of the mean.
    assert metrics.MeanIoU(num_classes=5)([0, 1], [0, 1]) == pytest.approx(1.0, rel=1e-6)
    assert metrics.IoU(3, target_class_ids=[2])([0], [0]) == 0.0


def test_iou_accumulates_matches_the_confusion_matrix_and_ignores():
    y_true = RNG.integers(0, C, (N, 3))
    y_pred = np.where(RNG.uniform(size=(N, 3)) < 0.6, y_true, RNG.integers(0, C, (N, 3)))
    y_true[0, 0], y_pred[1, 1] = 255, C  # out of range: not counted
    metric = metrics.MeanIoU(num_classes=C, ignore_class=1)
    for part in batches(y_true, y_pred, WEIGHTS):
        metric.update_state(part[0], part[1], sample_weight=part[2][:, None])
    keep = (y_true < C) & (y_pred < C) & (y_true != 1)
    matrix = np.zeros((C, C))
    np.add.at(matrix, (y_true[keep], y_pred[keep]), np.broadcast_to(WEIGHTS[:, None], (N, 3))[keep])
    np.testing.assert_allclose(metric.total_cm.numpy(), matrix)
    tp = np.diag(matrix)
    union = matrix.sum(0) + matrix.sum(1) - tp
    assert metric.result() == pytest.approx(np.mean(tp[union > 0] / union[union > 0]), rel=1e-6)
    metric.reset_state()
    assert not metric.total_cm.numpy().any()


def test_iou_takes_dense_inputs_and_rejects_bad_arguments():
    dense = metrics.IoU(C, [0, 2], sparse_y_true=False, sparse_y_pred=False)
    sparse = metrics.IoU(C, [0, 2])
    assert dense(ONE_HOT, PROBABILITIES) == sparse(ONE_HOT.argmax(1), PROBABILITIES.argmax(1))
    with pytest.raises(ValueError, match=r"target_class_ids.*\[0, 2\)"):
        metrics.IoU(2, target_class_ids=[2])
    with pytest.raises(ValueError, match="num_classes"):
        metrics.MeanIoU(num_classes=0)
    with pytest.raises(ValueError, match=r"as many labels.*\(3,\).*\(2,\)"):
        metrics.MeanIoU(2).update_state([0, 1, 1], [0, 1])


# ------------------------------------------------------------------ R2


def r2_scores(y_true, y_pred, weights):
    weights = weights[:, None]
    mean = np.sum(weights * y_true, 0) / np.sum(weights, 0)
    total = np.sum(weights * (y_true - mean) ** 2, 0)
    return 1 - np.sum(weights * (y_true - y_pred) ** 2, 0) / total, total


def test_r2_score_over_batches_for_each_aggregation():
    y_true = RNG.standard_normal((N, 3))
    y_pred = y_true + 0.5 * RNG.standard_normal((N, 3))
    scores, total = r2_scores(y_true, y_pred, WEIGHTS)
    got = feed(metrics.R2Score(class_aggregation=None), y_true, y_pred, WEIGHTS)
    np.testing.assert_allclose(got, scores, rtol=1e-5)
    got = feed(metrics.R2Score(), y_true, y_pred, WEIGHTS)
    assert got == pytest.approx(scores.mean())
    got = feed(metrics.R2Score("variance_weighted_average"), y_true, y_pred, WEIGHTS)
    assert got == pytest.approx(np.sum(scores * total) / total.sum())
    unweighted, _ = r2_scores(y_true, y_pred, np.ones(N))
    n, p = y_true.size, 2  # (Keras's n: every value, rows times outputs)
    adjusted = 1 - (1 - unweighted.mean()) * (n - 1) / (n - p - 1)
    assert feed(metrics.R2Score(num_regressors=p), y_true, y_pred) == pytest.approx(adjusted)


def test_r2_score_takes_a_numpy_num_regressors():
    y_true, y_pred = [[1.0], [2.0], [4.0], [5.0]], [[1.5], [2.0], [3.5], [5.0]]
    made = metrics.R2Score(num_regressors=np.int64(1))
    assert made(y_true, y_pred) == pytest.approx(metrics.R2Score(num_regressors=1)(y_true, y_pred))
    assert made.get_config()["num_regressors"] == 1


def test_r2_score_by_hand_and_edge_cases():
    # Keras's documented example: mean 8/3, total 26 - 64/3, residual 2.
    m = metrics.R2Score()
    assert m([[1.0], [4.0], [3.0]], [[2.0], [4.0], [4.0]]) == pytest.approx(1 - 2 / (26 - 64 / 3))
    # Constant targets: residual / 0 is infinite, reported as 0 as Keras does.
    assert metrics.R2Score()([[1.0], [1.0]], [[0.0], [2.0]]) == 0.0
    with pytest.warns(UserWarning, match="more regressors than samples"):
        plain = metrics.R2Score(num_regressors=5)([[1.0], [4.0], [3.0]], [[2.0], [4.0], [4.0]])
    assert plain == pytest.approx(1 - 2 / (26 - 64 / 3))
    with pytest.raises(ValueError, match="class_aggregation"):
        metrics.R2Score(class_aggregation="mean")
    with pytest.raises(ValueError, match="num_regressors"):
        metrics.R2Score(num_regressors=-1)
    with pytest.raises(ValueError, match=r"r2_score.*2-D.*\(2, 2, 1\)"):
        metrics.R2Score().update_state(np.zeros((2, 2, 1)), np.zeros((2, 2, 1)))


# ------------------------------------------------------------------ names and configs

CONFIGURED = [
    metrics.Sum(name="total"),
    metrics.RootMeanSquaredError(),
    metrics.MeanAbsolutePercentageError(),
    metrics.MeanSquaredLogarithmicError(),
    metrics.CosineSimilarity(axis=1),
    metrics.LogCoshError(),
    metrics.Poisson(),
    metrics.Hinge(),
    metrics.SquaredHinge(),
    metrics.CategoricalHinge(),
    metrics.F1Score(average="weighted", threshold=0.3),
    metrics.FBetaScore(average="macro", beta=2.0),
    metrics.IoU(num_classes=3, target_class_ids=[1, 2], ignore_class=0, sparse_y_pred=False),
    metrics.MeanIoU(num_classes=4, sparse_y_true=False),
    metrics.R2Score(class_aggregation=None, num_regressors=1),
]


@pytest.mark.parametrize("metric", CONFIGURED, ids=lambda m: type(m).__name__)
def test_serialize_round_trip(metric):
    restored = metrics.deserialize(metrics.serialize(metric))
    assert type(restored) is type(metric)
    assert restored.get_config() == metric.get_config()


@pytest.mark.parametrize(
    "identifier, cls",
    [
        ("sum", metrics.Sum),
        ("root_mean_squared_error", metrics.RootMeanSquaredError),
        ("mape", metrics.MeanAbsolutePercentageError),
        ("MSLE", metrics.MeanSquaredLogarithmicError),
        ("cosine_similarity", metrics.CosineSimilarity),
        ("logcosh", metrics.LogCoshError),
        ("poisson", metrics.Poisson),
        ("hinge", metrics.Hinge),
        ("squared_hinge", metrics.SquaredHinge),
        ("categorical_hinge", metrics.CategoricalHinge),
        ("f1_score", metrics.F1Score),
        ("r2_score", metrics.R2Score),
        ("R2Score", metrics.R2Score),
        ("FBetaScore", metrics.FBetaScore),
    ],
)
def test_get_by_name(identifier, cls):
    assert type(metrics.get(identifier)) is cls


def test_new_metrics_in_compile_and_evaluate():
    x = RNG.standard_normal((N, 3)).astype("float32")
    y = RNG.uniform(0.5, 2.0, (N, 2)).astype("float32")
    model = mk.Sequential([mk.Input((3,)), mk.layers.Dense(2)])
    model.compile(
        optimizer="sgd",
        loss="mse",
        metrics=["mape", metrics.RootMeanSquaredError(), metrics.R2Score()],
    )
    model.fit(x, y, epochs=2, batch_size=5, verbose=0)
    logs = model.evaluate(x, y, batch_size=5, verbose=0, return_dict=True)
    predicted = model.predict(x, verbose=0).astype(np.float64)
    assert logs["mape"] == pytest.approx(mape_ref(y, predicted).mean(), rel=1e-4)
    rmse = np.sqrt(np.mean((y - predicted) ** 2))
    assert logs["root_mean_squared_error"] == pytest.approx(rmse, rel=1e-4)
    scores, _ = r2_scores(y.astype(np.float64), predicted, np.ones(N))
    assert logs["r2_score"] == pytest.approx(scores.mean(), rel=1e-4, abs=1e-5)


def test_loss_functions_keras_exports_as_metrics():
    for name in ("mean_absolute_percentage_error", "mean_squared_logarithmic_error", "log_cosh",
                 "poisson", "hinge", "squared_hinge", "categorical_hinge"):  # fmt: skip
        assert getattr(metrics, name) is getattr(mk.losses, name)
    wrapped = metrics.get(metrics.poisson)
    assert type(wrapped) is metrics.MeanMetricWrapper and wrapped.name == "poisson"
    restored = metrics.deserialize(metrics.serialize(wrapped))
    expected = poisson_ref(POSITIVE_TRUE, POSITIVE_PRED).mean()
    assert feed(restored, POSITIVE_TRUE, POSITIVE_PRED) == pytest.approx(expected, rel=1e-5)
