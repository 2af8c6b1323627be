"""BinaryIoU (thresholded scores), OneHotIoU and OneHotMeanIoU (one-hot targets): IoU after
the inputs become class ids; by hand, and against Keras 3 when it is installed.
"""

import numpy as np
import pytest

from minikeras import metrics

ONE_HOT = np.array([[0, 0, 1], [1, 0, 0], [0, 1, 0], [1, 0, 0]], "float32")
SCORES = np.array([[0.2, 0.3, 0.5], [0.1, 0.2, 0.7], [0.5, 0.3, 0.1], [0.1, 0.4, 0.5]], "float32")
# Classes 2, 0, 1, 0 against argmax 2, 2, 0, 2. Class 0: tp 0, fp 1, fn 2; class 1: tp 0,
# fn 1; class 2: tp 1, fp 2 -> IoU 0, 0, 1/3.


def test_binary_iou_by_hand():
    # Scores >= 0.3 are class 1: predicted 0, 0, 1, 1 against 0, 1, 0, 1: 1/3 each class.
    metric = metrics.BinaryIoU(target_class_ids=[0, 1], threshold=0.3)
    assert metric([0, 1, 0, 1], [0.1, 0.2, 0.4, 0.7]) == pytest.approx(1 / 3)
    # A score equal to the threshold is class 1; weights count per sample.
    metric = metrics.BinaryIoU(target_class_ids=[1], threshold=0.5)
    value = metric([1, 1, 0, 0], [0.5, 0.4, 0.6, 0.1], sample_weight=[3, 1, 2, 5])
    assert value == pytest.approx(3 / (3 + 2 + 1))  # tp 3, fp 2, fn 1
    np.testing.assert_array_equal(metric.total_cm.numpy(), [[5, 2], [1, 3]])
    metric.reset_state()
    assert metric.result() == 0.0 and not metric.total_cm.numpy().any()


def test_one_hot_iou_by_hand():
    assert metrics.OneHotIoU(3, [0, 2])(ONE_HOT, SCORES) == pytest.approx((0 + 1 / 3) / 2)
    assert metrics.OneHotIoU(3, [2])(ONE_HOT, SCORES) == pytest.approx(1 / 3)
    assert metrics.OneHotMeanIoU(3)(ONE_HOT, SCORES) == pytest.approx(1 / 9)
    # Predicted class ids instead of scores; class 0 of the targets ignored.
    sparse = metrics.OneHotMeanIoU(3, sparse_y_pred=True, ignore_class=0)
    # Left: targets 2, 1 against 2, 0 -> class 0: fp 1; class 1: fn 1; class 2: tp 1.
    assert sparse(ONE_HOT, SCORES.argmax(-1)) == pytest.approx(1 / 3)


@pytest.mark.parametrize("cls", [metrics.MeanIoU, metrics.OneHotMeanIoU])
def test_mean_iou_of_a_numpy_num_classes_averages_every_class(cls):
    # np.int64(3) (say, from y.max() + 1) means all 3 classes, as the int 3 does.
    made = cls(num_classes=np.int64(3))
    assert made.target_class_ids == [0, 1, 2]
    y_true = ONE_HOT if cls is metrics.OneHotMeanIoU else ONE_HOT.argmax(-1)
    y_pred = SCORES if cls is metrics.OneHotMeanIoU else SCORES.argmax(-1)
    assert made(y_true, y_pred) == pytest.approx(1 / 9)  # IoU 0, 0, 1/3


def test_bad_input_is_named_before_state_changes():
    with pytest.raises(ValueError, match="BinaryIoU: target_class_ids must be class ids in"):
        metrics.BinaryIoU(target_class_ids=[2])
    with pytest.raises(ValueError, match="BinaryIoU: threshold must be a float"):
        metrics.BinaryIoU(threshold="high")
    with pytest.raises(ValueError, match="OneHotIoU: num_classes must be >= 1"):
        metrics.OneHotIoU(0, [0])
    metric = metrics.BinaryIoU()
    with pytest.raises(ValueError, match=r"'binary_io_u'.*\(3,\).*\(2,\)"):
        metric.update_state([0, 1, 1], [0.2, 0.7])
    with pytest.raises(ValueError, match=r"'binary_io_u': sample_weight of shape \(3,\)"):
        metric.update_state([0, 1], [0.2, 0.7], sample_weight=[1.0, 1.0, 1.0])
    assert not metric.total_cm.numpy().any()


@pytest.mark.parametrize(
    "metric",
    [
        metrics.BinaryIoU(target_class_ids=[1], threshold=0.25, name="positives"),
        metrics.OneHotIoU(4, [1, 3], ignore_class=0, sparse_y_pred=True),
        metrics.OneHotMeanIoU(5, axis=1),
    ],
    ids=lambda metric: type(metric).__name__,
)
def test_config_round_trips_in_keras_shape(metric):
    config = metric.get_config()
    assert "sparse_y_true" not in config
    again = type(metric).from_config(config)
    assert again.get_config() == config
    assert metrics.deserialize(metrics.serialize(metric)).get_config() == config


def test_keras_config_keys():
    assert set(metrics.BinaryIoU().get_config()) == {
        "target_class_ids", "threshold", "name", "dtype"
    }  # fmt: skip
    assert set(metrics.OneHotIoU(3, [0]).get_config()) == {
        "num_classes", "target_class_ids", "name", "dtype", "ignore_class", "sparse_y_pred",
        "axis",
    }  # fmt: skip
    assert metrics.get("binary_io_u").name == "binary_io_u"


def test_matches_keras():
    keras = pytest.importorskip("keras")
    rng = np.random.default_rng(4)
    y_true = (rng.random(30) > 0.5).astype("float32")
    y_pred = rng.random(30).astype("float32")
    weights = rng.integers(0, 4, 30).astype("float32")  # Keras truncates fractional weights
    for threshold in (0.3, 0.5):
        for ids in ([0, 1], [1], [0]):
            ours = metrics.BinaryIoU(ids, threshold)
            theirs = keras.metrics.BinaryIoU(ids, threshold)
            for metric in (ours, theirs):
                metric.update_state(y_true, y_pred, sample_weight=weights)
            assert ours.result() == pytest.approx(float(theirs.result()), abs=1e-6)
    one_hot = np.eye(3)[rng.integers(0, 3, 12)]
    scores = rng.random((12, 3)).astype("float32")
    pairs = [
        (metrics.OneHotIoU(3, [0, 2]), keras.metrics.OneHotIoU(3, [0, 2]), scores),
        (metrics.OneHotMeanIoU(3), keras.metrics.OneHotMeanIoU(3), scores),
        (
            metrics.OneHotMeanIoU(3, sparse_y_pred=True, ignore_class=1),
            keras.metrics.OneHotMeanIoU(3, sparse_y_pred=True, ignore_class=1),
            scores.argmax(-1),
        ),
    ]
    for ours, theirs, predictions in pairs:
        assert ours(one_hot, predictions) == pytest.approx(float(theirs(one_hot, predictions)))
