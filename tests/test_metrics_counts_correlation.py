"""Confusion-count metrics, correlation metrics, and the loss functions Keras exports as metrics.

Counts are checked against counts by hand, correlations against numpy's
`corrcoef` and Lin's formula, both through `compile` by name and a saved
model, and against Keras 3 when it is importable (the same inputs).
"""

import numpy as np
import pytest

import minikeras as mk
from minikeras import losses, metrics

Y_TRUE = np.array([0, 1, 1, 0, 1, 0, 1, 1])
SCORES = np.array([0.1, 0.9, 0.4, 0.6, 0.5, 0.0, 0.7, 1.0])
WEIGHTS = np.array([1.0, 2.0, 0.5, 1.0, 0.0, 3.0, 1.0, 2.0])
RNG = np.random.default_rng(5)
TARGETS = RNG.standard_normal((6, 5))
PREDICTIONS = TARGETS * 0.8 + RNG.standard_normal((6, 5)) * 0.5 + 0.3

COUNTS = [
    (metrics.TruePositives, lambda t, p: t & p),
    (metrics.FalsePositives, lambda t, p: ~t & p),
    (metrics.TrueNegatives, lambda t, p: ~t & ~p),
    (metrics.FalseNegatives, lambda t, p: t & ~p),
]


def _counted(condition, threshold, weights=None):
    hits = condition(Y_TRUE.astype(bool), threshold < SCORES)
    return float(np.sum(hits * (1.0 if weights is None else weights)))


@pytest.mark.parametrize("cls, condition", COUNTS, ids=[c.__name__ for c, _ in COUNTS])
def test_counts_by_hand_at_one_and_several_thresholds_with_weights(cls, condition):
    assert cls()(Y_TRUE, SCORES) == _counted(condition, 0.5)
    assert cls()(Y_TRUE, SCORES, sample_weight=WEIGHTS) == _counted(condition, 0.5, WEIGHTS)
    several = cls(thresholds=[0.0, 0.45, 0.95])
    several.update_state(Y_TRUE[:4], SCORES[:4])
    several.update_state(Y_TRUE[4:], SCORES[4:])  # counts add up over batches
    assert several.result() == [_counted(condition, t) for t in (0.0, 0.45, 0.95)]
    several.reset_state()
    assert several.result() == [0.0, 0.0, 0.0]


def test_the_four_counts_add_up_to_the_total_weight():
    total = sum(cls(thresholds=0.3)(Y_TRUE, SCORES, sample_weight=WEIGHTS) for cls, _ in COUNTS)
    assert total == pytest.approx(WEIGHTS.sum())


def test_count_arguments_names_and_configs():
    metric = metrics.TruePositives(thresholds=[0.2, 0.8], name="tp")
    again = metrics.deserialize(metrics.serialize(metric))
    assert type(again) is metrics.TruePositives and again.get_config() == metric.get_config()
    assert again.thresholds == [0.2, 0.8] and again.name == "tp"
    assert metrics.FalseNegatives().name == "false_negatives"
    assert type(metrics.get("true_negatives")) is metrics.TrueNegatives
    with pytest.raises(ValueError, match=r"FalsePositives: thresholds must be numbers in \[0, 1\]"):
        metrics.FalsePositives(thresholds=1.5)


def test_evenly_spaced_thresholds_clip_scores_as_keras():
    # 1.2 > 1.0 counts as positive unclipped; Keras clips it to 1.0, which is not > 1.0.
    assert metrics.TruePositives(thresholds=[0.0, 0.5, 1.0])([1], [1.2]) == [1.0, 1.0, 0.0]
    assert metrics.TruePositives(thresholds=[0.5, 1.0])([1], [1.2]) == [1.0, 1.0]


def _pearson_ref(t, p):
    return np.array([np.corrcoef(a, b)[0, 1] for a, b in zip(t, p)])


def _concordance_ref(t, p):
    cov = np.mean((t - t.mean(-1, keepdims=True)) * (p - p.mean(-1, keepdims=True)), -1)
    return 2 * cov / (t.var(-1) + p.var(-1) + (t.mean(-1) - p.mean(-1)) ** 2 + 1e-7)


@pytest.mark.parametrize(
    "fn, cls, reference",
    [
        (metrics.pearson_correlation, metrics.PearsonCorrelation, _pearson_ref),
        (metrics.concordance_correlation, metrics.ConcordanceCorrelation, _concordance_ref),
    ],
)
def test_correlations_match_the_formulas_per_sample_and_on_average(fn, cls, reference):
    expected = reference(TARGETS, PREDICTIONS)
    np.testing.assert_allclose(fn(TARGETS, PREDICTIONS).numpy(), expected, rtol=1e-9)
    out = fn(TARGETS.astype(np.float32), PREDICTIONS.astype(np.float32))
    assert out.dtype == np.float32
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-5)
    columns = fn(TARGETS, PREDICTIONS, axis=0).numpy()  # along the batch instead
    np.testing.assert_allclose(columns, reference(TARGETS.T, PREDICTIONS.T), rtol=1e-9)
    metric = cls()
    metric.update_state(TARGETS[:2], PREDICTIONS[:2])
    metric.update_state(TARGETS[2:], PREDICTIONS[2:])
    assert metric.result() == pytest.approx(expected.mean(), rel=1e-12)
    weighted = cls()(TARGETS, PREDICTIONS, sample_weight=np.arange(6.0))
    assert weighted == pytest.approx(np.average(expected, weights=np.arange(6.0)), rel=1e-12)
    assert cls(axis=0).get_config() == {"name": cls().name, "dtype": "float32", "axis": 0}
    assert type(metrics.get(cls().name)) is cls


def test_concordance_is_below_pearson_for_shifted_predictions():
    t = np.array([[1.0, 2.0, 3.0, 4.0]])
    assert metrics.pearson_correlation(t, t + 1.0).numpy()[0] == pytest.approx(1.0)
    # 2 var / (2 var + 1) with var = 1.25
    assert metrics.concordance_correlation(t, t + 1.0).numpy()[0] == pytest.approx(2.5 / 3.5)


def test_keras_loss_functions_are_the_same_objects_in_metrics():
    for name in (
        "mean_squared_error",
        "mean_absolute_error",
        "binary_crossentropy",
        "categorical_crossentropy",
        "sparse_categorical_crossentropy",
        "kl_divergence",
        "huber",
        "binary_focal_crossentropy",
        "categorical_focal_crossentropy",
    ):
        assert getattr(metrics, name) is getattr(losses, name), name


def test_compile_by_name_and_a_saved_model_keep_the_metrics(tmp_path):
    model = mk.Sequential([mk.Input((5,)), mk.layers.Dense(5)])
    names = ["true_positives", "false_negatives", "pearson_correlation", "concordance_correlation"]
    model.compile(optimizer="sgd", loss="mse", metrics=names + [metrics.FalsePositives(0.2)])
    x, y = TARGETS.astype(np.float32), (PREDICTIONS > 0).astype(np.float32)
    logs = model.evaluate(x, y, return_dict=True, verbose=0)
    y_pred = model.predict(x, verbose=0)
    assert logs["true_positives"] == _counts(y, y_pred, 0.5, lambda t, p: t & p)
    assert logs["false_positives"] == _counts(y, y_pred, 0.2, lambda t, p: ~t & p)
    assert logs["pearson_correlation"] == pytest.approx(_pearson_ref(y, y_pred).mean(), rel=1e-5)
    model.save(tmp_path / "m.keras")
    loaded = mk.saving.load_model(tmp_path / "m.keras")
    assert loaded.evaluate(x, y, return_dict=True, verbose=0) == pytest.approx(logs)


def _counts(y, y_pred, threshold, condition):
    return float(np.sum(condition(y.astype(bool), y_pred > threshold)))


# ------------------------------------------------------------ against Keras 3


def _keras():
    return pytest.importorskip("keras")


@pytest.mark.parametrize("name", [c.__name__ for c, _ in COUNTS])
def test_counts_match_keras(name):
    keras = _keras()
    for kwargs in ({}, {"thresholds": [0.0, 0.5, 1.0]}, {"thresholds": [0.3, 0.65]}):
        ours, theirs = getattr(metrics, name)(**kwargs), getattr(keras.metrics, name)(**kwargs)
        scores = SCORES * 1.1  # beyond 1 where Keras clips
        ours.update_state(Y_TRUE, scores, sample_weight=WEIGHTS)
        theirs.update_state(Y_TRUE, scores, sample_weight=WEIGHTS)
        np.testing.assert_allclose(ours.result(), np.asarray(theirs.result()), rtol=1e-6)
        config = {**theirs.get_config(), "name": ours.name}  # Keras numbers repeated names
        assert type(ours).from_config(config).get_config() == ours.get_config()


@pytest.mark.parametrize("name", ["PearsonCorrelation", "ConcordanceCorrelation"])
def test_correlations_match_keras(name):
    keras = _keras()
    t, p = TARGETS.astype(np.float32), PREDICTIONS.astype(np.float32)
    for axis in (-1, 0):
        ours, theirs = getattr(metrics, name)(axis=axis), getattr(keras.metrics, name)(axis=axis)
        assert ours(t, p) == pytest.approx(float(theirs(t, p)), rel=1e-5)
        fn = getattr(metrics, ours.name)
        np.testing.assert_allclose(
            fn(t, p, axis=axis).numpy(),
            np.asarray(getattr(keras.metrics, ours.name)(t, p, axis=axis)),
            rtol=1e-5,
        )
        assert ours.get_config() == {**theirs.get_config(), "dtype": "float32"}


@pytest.mark.parametrize(
    "loss, expected, threshold",
    [
        (losses.BinaryFocalCrossentropy(from_logits=True), metrics.BinaryAccuracy, 0.0),
        ("binary_focal_crossentropy", metrics.BinaryAccuracy, 0.5),
        (losses.CategoricalFocalCrossentropy(), metrics.CategoricalAccuracy, None),
        ("CategoricalGeneralizedCrossEntropy", metrics.SparseCategoricalAccuracy, None),
    ],
)
def test_accuracy_fits_the_focal_and_generalized_losses(loss, expected, threshold):
    accuracy = metrics.get("accuracy", loss=loss)
    assert type(accuracy) is expected
    if threshold is not None:
        assert accuracy.get_config()["threshold"] == threshold
