"""AUC with `multi_label=True` (one curve per label, averaged) and `label_weights`.

Small cases are worked out by hand; random multi-label data is compared with
Keras 3 itself when it is installed.
"""

import numpy as np
import pytest

from minikeras import metrics

# Label 0 is ranked perfectly (AUC 1); label 1 has one score for all (ROC AUC 1/2).
Y_TRUE = np.array([[0, 1], [1, 0], [1, 1]], "float32")
Y_PRED = np.array([[0.2, 0.6], [0.7, 0.6], [0.9, 0.6]], "float32")


def test_multi_label_averages_each_labels_auc():
    assert metrics.AUC(multi_label=True)(Y_TRUE, Y_PRED) == pytest.approx(0.75)
    # All the scores in one curve instead: 6 points, positives 0.7, 0.9, 0.6, 0.6.
    pooled = metrics.AUC()(Y_TRUE.ravel(), Y_PRED.ravel())
    assert metrics.AUC()(Y_TRUE, Y_PRED) == pytest.approx(pooled)
    assert pooled != pytest.approx(0.75)


def test_label_weights_weigh_the_labels_mean():
    auc = metrics.AUC(multi_label=True, label_weights=[1.0, 3.0])
    assert auc(Y_TRUE, Y_PRED) == pytest.approx((1.0 * 1.0 + 3.0 * 0.5) / 4.0)
    assert metrics.AUC(multi_label=True, label_weights=[0.0, 0.0])(Y_TRUE, Y_PRED) == 0.0


def test_label_weights_without_multi_label_weigh_the_points():
    # A zero weight drops label 1's points: the AUC of label 0's column alone.
    auc = metrics.AUC(label_weights=[1.0, 0.0])
    assert auc(Y_TRUE, Y_PRED) == pytest.approx(metrics.AUC()(Y_TRUE[:, 0], Y_PRED[:, 0]))
    # Weight 2 on every point counts each twice: the same curve.
    doubled = metrics.AUC(label_weights=[2.0, 2.0])(Y_TRUE, Y_PRED)
    assert doubled == pytest.approx(metrics.AUC()(Y_TRUE, Y_PRED))


def test_multi_label_counts_have_a_column_per_label_and_sample_weight_applies():
    auc = metrics.AUC(multi_label=True, num_thresholds=3)  # thresholds -eps, 0.5, 1 + eps
    assert auc.true_positives is None and auc.result() == 0.0
    auc.update_state(Y_TRUE, Y_PRED, sample_weight=[1.0, 2.0, 4.0])
    # At 0.5: label 0 positives 0.7 (w 2), 0.9 (w 4); label 1 positives 0.6 (w 1, 4).
    np.testing.assert_array_equal(auc.true_positives, [[6.0, 5.0], [6.0, 5.0], [0.0, 0.0]])
    np.testing.assert_array_equal(auc.false_positives, [[1.0, 2.0], [0.0, 2.0], [0.0, 0.0]])
    auc.reset_state()
    assert auc.true_positives.shape == (3, 2) and not auc.true_positives.any()


def test_num_labels_makes_the_counts_up_front_and_checks_batches():
    auc = metrics.AUC(multi_label=True, num_labels=2, num_thresholds=4)
    assert auc.true_positives.shape == (4, 2)
    with pytest.raises(ValueError, match=r"'auc'.*\(batch, 2\).*\(3, 3\)"):
        auc.update_state(np.zeros((3, 3)), np.zeros((3, 3)))
    with pytest.raises(ValueError, match="rank 2"):
        metrics.AUC(multi_label=True).update_state([0, 1], [0.3, 0.6])
    before = auc.true_positives.copy()
    with pytest.raises(ValueError, match="label_weights has 3 entries"):
        metrics.AUC(multi_label=True, label_weights=[1, 1, 1])(Y_TRUE, Y_PRED)
    with pytest.raises(ValueError, match="label_weights has 3 entries"):
        metrics.AUC(label_weights=[1, 1, 1])(Y_TRUE, Y_PRED)
    np.testing.assert_array_equal(auc.true_positives, before)


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="num_labels is needed only with multi_label"):
        metrics.AUC(num_labels=3)
    with pytest.raises(ValueError, match="label_weights must be"):
        metrics.AUC(label_weights=[1.0, -1.0])
    with pytest.raises(ValueError, match="num_labels is 3"):
        metrics.AUC(multi_label=True, num_labels=3, label_weights=[1.0])


def test_config_round_trips_with_multi_label():
    auc = metrics.AUC(multi_label=True, num_labels=2, label_weights=[0.5, 2.0], curve="PR")
    config = auc.get_config()
    assert config["multi_label"] is True and config["label_weights"] == [0.5, 2.0]
    again = metrics.AUC.from_config(config)
    assert again.get_config() == config
    assert again(Y_TRUE, Y_PRED) == pytest.approx(auc(Y_TRUE, Y_PRED))
    assert metrics.deserialize(metrics.serialize(auc)).get_config() == config


def test_keras_config_with_tensor_label_weights_loads():
    # Keras 3 writes AUC's label_weights (a tensor) as a "__tensor__" dict in
    # `.keras` files; this is its entry for AUC(multi_label=True, label_weights=[1, 0, 2]).
    entry = {
        "module": "keras.metrics",
        "class_name": "AUC",
        "config": {
            "name": "auc",
            "dtype": "float32",
            "num_thresholds": 200,
            "curve": "ROC",
            "summation_method": "interpolation",
            "multi_label": True,
            "num_labels": 3,
            "label_weights": {
                "class_name": "__tensor__",
                "config": {"value": [1.0, 0.0, 2.0], "dtype": "float32"},
            },
            "from_logits": False,
        },
        "registered_name": None,
    }
    auc = metrics.deserialize(entry)
    assert auc.label_weights == [1.0, 0.0, 2.0] and auc.num_labels == 3
    y_true = np.array([[0, 1, 1], [1, 0, 0], [1, 1, 0], [0, 0, 1]], "float32")
    y_pred = np.array([[0.2, 0.6, 0.9], [0.7, 0.6, 0.1], [0.9, 0.3, 0.2], [0.1, 0.4, 0.3]])
    by_label = [metrics.AUC()(y_true[:, j], y_pred[:, j]) for j in range(3)]
    assert auc(y_true, y_pred) == pytest.approx((by_label[0] + 2 * by_label[2]) / 3)


def test_keras_serialized_auc_deserializes():
    keras = pytest.importorskip("keras")
    theirs = keras.metrics.AUC(label_weights=[0.5, 2.0], thresholds=[0.3, 0.6], curve="PR")
    ours = metrics.deserialize(keras.metrics.serialize(theirs))
    assert ours.label_weights == [0.5, 2.0] and ours.thresholds == pytest.approx(theirs.thresholds)
    y_true, y_pred = Y_TRUE, Y_PRED
    assert ours(y_true, y_pred) == pytest.approx(float(theirs(y_true, y_pred)), abs=1e-6)


def test_config_writes_thresholds_only_when_they_were_given():
    assert "thresholds" not in metrics.AUC(num_thresholds=7).get_config()
    given = metrics.AUC(thresholds=[0.8, 0.1, 0.5])
    config = given.get_config()
    # Sorted, without the -eps and 1 + eps ends; the count includes those ends.
    assert config["thresholds"] == [0.1, 0.5, 0.8] and config["num_thresholds"] == 5
    again = metrics.AUC.from_config(config)
    assert again.get_config() == config and again.thresholds == given.thresholds
    assert again(Y_TRUE, Y_PRED) == pytest.approx(given(Y_TRUE, Y_PRED))
    # Configs minikeras wrote before carry "thresholds": None; they still load.
    older = {**metrics.AUC(num_thresholds=7).get_config(), "thresholds": None}
    assert metrics.AUC.from_config(older).get_config() == metrics.AUC(num_thresholds=7).get_config()


@pytest.mark.parametrize(
    "kwargs",
    [{}, {"num_thresholds": 7, "curve": "PR"}, {"thresholds": [0.8, 0.1, 0.5]}],
    ids=["default", "num_thresholds", "thresholds"],
)
def test_config_has_keras_keys_and_values_both_ways(kwargs):
    keras = pytest.importorskip("keras")

    def plain(config):  # Keras writes its thresholds as numpy floats
        return {k: [float(t) for t in v] if k == "thresholds" else v for k, v in config.items()}

    theirs = plain(keras.metrics.AUC(name="auc", **kwargs).get_config())
    ours = metrics.AUC(name="auc", **kwargs).get_config()
    assert ours == theirs
    assert metrics.AUC.from_config(theirs).get_config() == ours
    assert plain(keras.metrics.AUC.from_config(ours).get_config()) == theirs


def test_scores_outside_0_1_count_as_0_or_1():
    # With even thresholds Keras clips the scores to [0, 1]: 1.5 and -0.2 count as 1 and
    # 0. Thresholds -eps, 0.5, 1 + eps then give ROC points (1, 1), (0.5, 0.5), (0, 0).
    y_true, y_pred = [1, 0, 1, 0], [1.5, -0.2, 0.5, 1.0]
    assert metrics.AUC(num_thresholds=3)(y_true, y_pred) == pytest.approx(0.5)
    assert metrics.AUC(thresholds=[0.5])(y_true, y_pred) == pytest.approx(0.5)
    multi = metrics.AUC(num_thresholds=3, multi_label=True)
    assert multi(np.reshape(y_true, (2, 2)), np.reshape(y_pred, (2, 2))) == pytest.approx(
        metrics.AUC(num_thresholds=3, multi_label=True)([[1, 0], [1, 0]], [[1.0, 0.0], [0.5, 1.0]])
    )
    # Uneven thresholds are compared with the scores as they are (Keras too):
    # 1.5 is above 1 + eps, -0.2 below -eps.
    uneven = metrics.AUC(thresholds=[0.2, 0.5])([1, 0, 1, 0], y_pred)
    assert uneven != pytest.approx(metrics.AUC(thresholds=[0.2, 0.5])(y_true, [1, 0, 0.5, 1]))


@pytest.mark.parametrize("thresholds", [None, [0.25, 0.5, 0.75], [0.2, 0.5]])
@pytest.mark.parametrize("multi_label", [False, True])
def test_scores_outside_0_1_match_keras(thresholds, multi_label):
    keras = pytest.importorskip("keras")
    rng = np.random.default_rng(5)
    y_true = (rng.random((20, 2)) > 0.5).astype("float32")
    y_pred = rng.uniform(-0.5, 1.5, (20, 2)).astype("float32")
    arguments = dict(num_thresholds=9, thresholds=thresholds, multi_label=multi_label)
    ours, theirs = metrics.AUC(**arguments), keras.metrics.AUC(**arguments)
    assert ours(y_true, y_pred) == pytest.approx(float(theirs(y_true, y_pred)), abs=1e-6)


@pytest.mark.parametrize("curve", ["ROC", "PR"])
@pytest.mark.parametrize("summation_method", ["interpolation", "minoring", "majoring"])
@pytest.mark.parametrize(
    "multi_label, label_weights", [(True, None), (True, [0.2, 1.0, 3.0]), (False, [0.2, 1.0, 3.0])]
)
def test_matches_keras(curve, summation_method, multi_label, label_weights):
    keras = pytest.importorskip("keras")
    rng = np.random.default_rng(3)
    y_true = (rng.random((40, 3)) > 0.5).astype("float32")
    y_pred = rng.random((40, 3)).astype("float32")
    weights = rng.random(40).astype("float32")
    arguments = dict(
        curve=curve,
        summation_method=summation_method,
        multi_label=multi_label,
        label_weights=label_weights,
        num_thresholds=50,
    )
    ours, theirs = metrics.AUC(**arguments), keras.metrics.AUC(**arguments)
    for metric in (ours, theirs):
        metric.update_state(y_true, y_pred, sample_weight=weights)
        metric.update_state(y_true[:7], y_pred[:7])
    assert ours.result() == pytest.approx(float(theirs.result()), abs=1e-6)
