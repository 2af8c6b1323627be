"""Keras arguments of Precision, Recall, AUC and SparseCategoricalCrossentropy, found by a
review against Keras 3: `top_k` and `class_id` count as Keras counts them, scores meet
thresholds in float32, and Keras's default configs load.
"""

import numpy as np
import pytest

import minikeras as mk
from minikeras import metrics

Y_TRUE = np.array([[0, 1, 1], [1, 0, 0], [1, 1, 0]], "float32")
Y_PRED = np.array([[0.2, 0.9, 0.8], [0.6, 0.7, 0.1], [0.3, 0.4, 0.55]], "float32")


def test_top_k_alone_makes_each_samples_top_k_its_positives():
    # Top 1 per row: class 1, class 1, class 2 -> true? yes, no, no.
    assert metrics.Precision(top_k=1)(Y_TRUE, Y_PRED) == pytest.approx(1 / 3)
    # Top 2 per row: {1, 2} (2 right), {1, 0} (1 right), {2, 1} (1 right) of 6 positives.
    assert metrics.Precision(top_k=2)(Y_TRUE, Y_PRED) == pytest.approx(4 / 6)
    assert metrics.Recall(top_k=2)(Y_TRUE, Y_PRED) == pytest.approx(4 / 5)


def test_top_k_with_a_threshold_needs_both():
    # Top 2 per row, and above 0.5: 0.9, 0.8 | 0.7, 0.6 | 0.55 -> right: 2, 1, 0 of 5.
    assert metrics.Precision(top_k=2, thresholds=0.5)(Y_TRUE, Y_PRED) == pytest.approx(3 / 5)


def test_class_id_counts_one_column():
    # Column 0: scores 0.2, 0.6, 0.3 against 0, 1, 1 at 0.5 -> tp 1, fp 0, fn 1.
    assert metrics.Precision(class_id=0)(Y_TRUE, Y_PRED) == 1.0
    assert metrics.Recall(class_id=0)(Y_TRUE, Y_PRED) == 0.5
    with pytest.raises(ValueError, match="class_id=3"):
        metrics.Recall(class_id=3)(Y_TRUE, Y_PRED)
    with pytest.raises(ValueError, match="top_k must be None or an int >= 1"):
        metrics.Precision(top_k=0)


@pytest.mark.parametrize(
    "dtype, precision, recall", [("float16", 2 / 3, 1.0), ("float64", 1.0, 0.5)]
)
def test_scores_meet_thresholds_in_float32(dtype, precision, recall):
    # As Keras casts them: float64's 0.3 becomes float32's 0.3, the threshold itself (not
    # above it); float16's 0.3 is 0.30005, above it. Keras gives these figures.
    y_true, y_pred = [1, 0, 1, 0], np.array([0.3, 0.3, 0.9, 0.1], dtype)
    assert metrics.Precision(thresholds=0.3)(y_true, y_pred) == pytest.approx(precision)
    assert metrics.Recall(thresholds=0.3)(y_true, y_pred) == pytest.approx(recall)


KERAS_CONFIGS = {  # as Keras 3 writes them for the defaults
    metrics.AUC: {
        "name": "auc", "dtype": "float32", "num_thresholds": 200, "curve": "ROC",
        "summation_method": "interpolation", "multi_label": False, "num_labels": None,
        "label_weights": None, "from_logits": False,
    },
    metrics.Precision: {
        "name": "precision", "dtype": "float32", "thresholds": None, "top_k": None,
        "class_id": None,
    },
    mk.losses.SparseCategoricalCrossentropy: {
        "name": "sparse_categorical_crossentropy", "reduction": "sum_over_batch_size",
        "dtype": None, "from_logits": False, "ignore_class": None,
    },
}  # fmt: skip


@pytest.mark.parametrize("cls", list(KERAS_CONFIGS), ids=lambda cls: cls.__name__)
def test_keras_default_configs_load_and_round_trip(cls):
    made = cls.from_config(KERAS_CONFIGS[cls])
    assert made.get_config().keys() >= KERAS_CONFIGS[cls].keys() - {"dtype"}
