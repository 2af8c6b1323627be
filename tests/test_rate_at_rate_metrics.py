"""PrecisionAtRecall, RecallAtPrecision, SensitivityAtSpecificity, SpecificityAtSensitivity:
one rate at its best where another reaches a value, counted at even thresholds in [0, 1].

Small cases are worked out by hand (Keras 3's documented figures); random data is
compared with Keras itself when it is installed.
"""

import numpy as np
import pytest

from minikeras import metrics

Y_TRUE = [0, 0, 0, 1, 1]
Y_PRED = [0, 0.3, 0.8, 0.3, 0.8]


def test_sensitivity_at_specificity_by_hand():
    # Thresholds in [0.3, 0.8): positives are the 0.8s: tp 1, fn 1, fp 1, tn 2 -> spec 2/3,
    # sens 1/2. Below 0.3, spec 1/3 fails; at 0.8 and above, sens is 0.
    assert metrics.SensitivityAtSpecificity(0.5)(Y_TRUE, Y_PRED) == pytest.approx(0.5)
    # Weights 1, 1, 2, 2, 1: in [0.3, 0.8) tp 1, fn 2, tn 2, fp 2 -> spec 1/2, sens 1/3.
    weighted = metrics.SensitivityAtSpecificity(0.5)
    assert weighted(Y_TRUE, Y_PRED, sample_weight=[1, 1, 2, 2, 1]) == pytest.approx(1 / 3)


def test_specificity_at_sensitivity_by_hand():
    # Sensitivity >= 1/2 holds below 0.8; the best specificity there is 2/3, in [0.3, 0.8).
    assert metrics.SpecificityAtSensitivity(0.5)(Y_TRUE, Y_PRED) == pytest.approx(2 / 3)
    weighted = metrics.SpecificityAtSensitivity(0.5)
    # Weights 1, 1, 2, 2, 2: in [0.3, 0.8) sens 2/4, spec (1 + 1) / 4.
    assert weighted(Y_TRUE, Y_PRED, sample_weight=[1, 1, 2, 2, 2]) == pytest.approx(0.5)


def test_precision_at_recall_and_recall_at_precision_by_hand():
    # Recall >= 1/2 below 0.8; precision there: 2/4 below 0.3, 1/2 in [0.3, 0.8).
    assert metrics.PrecisionAtRecall(0.5)(Y_TRUE, Y_PRED) == pytest.approx(0.5)
    weighted = metrics.PrecisionAtRecall(0.5)
    # Weights 2, 2, 2, 1, 1: in [0.3, 0.8) tp 1, fp 2; below 0.3 tp 2, fp 4: 1/3 either way.
    assert weighted(Y_TRUE, Y_PRED, sample_weight=[2, 2, 2, 1, 1]) == pytest.approx(1 / 3)
    # Precision >= 0.8 only in [0.5, 0.9): tp 1 of 2 positives.
    assert metrics.RecallAtPrecision(0.8)([0, 0, 1, 1], [0, 0.5, 0.3, 0.9]) == 0.5
    # With the 0.5 negative and the 0.3 positive weighed 0, precision 1 holds down to 0.
    weighted = metrics.RecallAtPrecision(0.8)
    assert weighted([0, 0, 1, 1], [0, 0.5, 0.3, 0.9], sample_weight=[1, 0, 0, 1]) == 1.0
    # Unreachable precision gives 0.
    assert metrics.RecallAtPrecision(1.0)([1, 0], [0.2, 0.9]) == 0.0


def test_thresholds_and_state():
    metric = metrics.PrecisionAtRecall(0.5, num_thresholds=5)
    assert metric.thresholds == [0.0, 0.25, 0.5, 0.75, 1.0]
    assert metrics.SensitivityAtSpecificity(0.5, num_thresholds=1).thresholds == [0.5]
    metric.update_state([0, 1, 1], [0.1, 0.6, 0.9])
    metric.update_state([1], [0.3])
    np.testing.assert_array_equal(metric.true_positives, [3, 3, 2, 1, 0])  # 0.3 > 0.25
    np.testing.assert_array_equal(metric.false_positives, [1, 0, 0, 0, 0])
    assert metric.result() == 1.0
    metric.reset_state()
    assert metric.result() == 0.0 and not metric.true_positives.any()


def test_a_rate_of_one_is_exact_with_weights():
    # All three positives are above threshold 0: recall 1 there, whatever the weights
    # (Keras's float32 counts give recall 1 - 6e-8 for these and return 0.0).
    weights = np.array([0.04, 0.73, 0.61, 0.03], "float32")
    metric = metrics.PrecisionAtRecall(1.0, num_thresholds=5)
    value = metric([1, 1, 1, 0], np.array([0.1, 0.6, 0.9, 0.3], "float32"), weights)
    tp = float(weights[:3].sum(dtype=np.float64))
    assert value == pytest.approx(tp / (tp + float(weights[3])))


def test_scores_outside_0_1_count_as_0_or_1():
    # Keras counts even thresholds by bucket after clipping the scores to [0, 1]:
    # 1.5 is a score of 1 (above no threshold), -0.2 a score of 0.
    y_true, y_pred = [1, 0, 1, 0], [1.5, -0.2, 0.5, 1.0]
    clipped = [1.0, 0.0, 0.5, 1.0]
    for metric in (metrics.PrecisionAtRecall(0.2, 5), metrics.SensitivityAtSpecificity(0.9, 3)):
        again = type(metric).from_config(metric.get_config())
        assert metric(y_true, y_pred) == again(y_true, clipped)
    # Thresholds 0, 0.5, 1: precision 2/3, 1/2 and 0 (nothing above 1, where 1.5 would
    # give precision 1 at recall 1/2), at recall 1, 1/2 and 0.
    assert metrics.PrecisionAtRecall(0.2, num_thresholds=3)(y_true, y_pred) == pytest.approx(2 / 3)
    # One threshold (0.5) is not counted by bucket: there 1.5 is above it, as in Keras.
    assert metrics.PrecisionAtRecall(0.2, num_thresholds=1)(y_true, y_pred) == 0.5
    assert metrics.PrecisionAtRecall(0.2, num_thresholds=1).thresholds == [0.5]
    # Precision and Recall too, with even thresholds from 0 to 1 only (as Keras).
    assert metrics.Precision(thresholds=[0, 0.5, 1])([1, 0], [1.5, 0.7]) == [0.5, 0.5, 0.0]
    assert metrics.Precision(thresholds=[0.5, 1])([1, 0], [1.5, 0.7]) == [0.5, 1.0]


def test_class_id_counts_one_column():
    y_true = np.array([[0, 1], [1, 0], [0, 1]])
    y_pred = np.array([[0.9, 0.6], [0.2, 0.4], [0.5, 0.8]])
    # Column 1: scores 0.6, 0.4, 0.8 against 1, 0, 1: ranked perfectly.
    assert metrics.SensitivityAtSpecificity(1.0, class_id=1)(y_true, y_pred) == 1.0
    # Column 0: the one positive has the lowest score.
    assert metrics.SensitivityAtSpecificity(1.0, class_id=0)(y_true, y_pred) == 0.0
    metric = metrics.PrecisionAtRecall(0.5, class_id=2)
    with pytest.raises(ValueError, match=r"'precision_at_recall'.*class_id=2.*\(3, 2\)"):
        metric.update_state(y_true, y_pred)
    assert not metric.true_positives.any()


@pytest.mark.parametrize(
    "metric",
    [
        metrics.SensitivityAtSpecificity(0.5, class_id=0),
        metrics.PrecisionAtRecall(0.5, class_id=1),
        metrics.Precision(class_id=0),
        metrics.Recall(class_id=0),
    ],
    ids=lambda metric: type(metric).__name__,
)
def test_class_id_needs_a_class_axis(metric):
    # With one score per sample there is no class axis: Keras raises rather than
    # read column `class_id` of the batch (which would count one sample).
    with pytest.raises(ValueError, match=r"class_id=\d needs .*\(num_samples, num_classes\)"):
        metric.update_state([1, 0, 1, 0], [0.9, 0.8, 0.3, 0.1])
    assert not metric.true_positives.any()
    if metric.class_id == 0:  # a (batch, 1) column is a class axis
        metric.update_state([[1], [0]], [[0.9], [0.1]])
        assert metric.true_positives[0] == 1.0


def test_bad_input_is_named_before_state_changes():
    for cls, argument in [
        (metrics.PrecisionAtRecall, "recall"),
        (metrics.RecallAtPrecision, "precision"),
        (metrics.SensitivityAtSpecificity, "specificity"),
        (metrics.SpecificityAtSensitivity, "sensitivity"),
    ]:
        with pytest.raises(ValueError, match=f"{cls.__name__}: {argument} must be in"):
            cls(1.5)
        with pytest.raises(ValueError, match="num_thresholds must be an int > 0"):
            cls(0.5, num_thresholds=0)
        with pytest.raises(ValueError, match="class_id must be None or an int >= 0"):
            cls(0.5, class_id=-1)
    metric = metrics.RecallAtPrecision(0.5)
    metric.update_state([1, 0], [0.9, 0.1])
    with pytest.raises(ValueError, match=r"'recall_at_precision'.*\(3,\).*\(2,\)"):
        metric.update_state([1, 0, 1], [0.9, 0.1])
    with pytest.raises(ValueError, match="sample_weight of shape"):
        metric.update_state([1, 0], [0.9, 0.1], sample_weight=[1.0, 2.0, 3.0])
    assert metric.true_positives.max() == 1.0


@pytest.mark.parametrize(
    "cls, argument",
    [
        (metrics.PrecisionAtRecall, "recall"),
        (metrics.RecallAtPrecision, "precision"),
        (metrics.SensitivityAtSpecificity, "specificity"),
        (metrics.SpecificityAtSensitivity, "sensitivity"),
    ],
)
def test_config_round_trips(cls, argument):
    metric = cls(0.7, num_thresholds=20, class_id=1, name="rate")
    config = metric.get_config()
    assert config[argument] == 0.7 and config["num_thresholds"] == 20
    assert cls.from_config(config).get_config() == config
    assert metrics.deserialize(metrics.serialize(metric)).get_config() == config


@pytest.mark.parametrize(
    "name, value",
    [
        ("PrecisionAtRecall", 0.6),
        ("RecallAtPrecision", 0.5),
        ("SensitivityAtSpecificity", 0.5),
        ("SpecificityAtSensitivity", 0.7),
    ],
)
@pytest.mark.parametrize("num_thresholds", [1, 7, 200])
def test_matches_keras(name, value, num_thresholds):
    keras = pytest.importorskip("keras")
    rng = np.random.default_rng(1)
    y_true = (rng.random(30) > 0.5).astype("float32")
    y_pred = rng.random(30).astype("float32")
    y_pred[:4] = [1.5, -0.25, 2.0, -1.0]  # outside [0, 1]
    weights = rng.random(30).astype("float32")
    ours = getattr(metrics, name)(value, num_thresholds=num_thresholds)
    theirs = getattr(keras.metrics, name)(value, num_thresholds=num_thresholds)
    for metric in (ours, theirs):
        metric.update_state(y_true, y_pred, sample_weight=weights)
        metric.update_state(y_true[:9], y_pred[:9])
    assert ours.result() == pytest.approx(float(theirs.result()), abs=1e-6)
