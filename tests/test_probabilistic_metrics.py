"""KLDivergence and the cross-entropy metrics: the mean of the loss of the same name over
every sample seen, by name in `compile(metrics=[...])` as in Keras 3; by hand, and against
Keras when it is installed.
"""

import numpy as np
import pytest

import minikeras as mk
from minikeras import metrics

LOG2 = np.log(2.0)
LOGITS = np.array([[0.0, 0.0], [5.0, 1.0], [2.0, 3.0], [1.0, -1.0]], "float32")
LABELS = np.array([0, -1, 1, -1])
KEPT = np.array([LOG2, np.log1p(np.exp(-1.0))])  # -log softmax of rows 0 and 2 at their labels


def test_values_by_hand():
    bce = metrics.BinaryCrossentropy()
    assert bce([[0, 1], [0, 0]], [[0.5, 0.5], [0.5, 0.5]]) == pytest.approx(LOG2)
    kl = metrics.KLDivergence()([[0.5, 0.5]], [[0.25, 0.75]])
    assert kl == pytest.approx(0.5 * np.log(2.0) + 0.5 * np.log(2.0 / 3.0))
    cce = metrics.CategoricalCrossentropy()(
        [[0, 1, 0], [0, 0, 1]], [[0.05, 0.95, 0], [0.1, 0.8, 0.1]]
    )
    assert cce == pytest.approx((-np.log(0.95) - np.log(0.1)) / 2, rel=1e-6)
    scce = metrics.SparseCategoricalCrossentropy()([1, 2], [[0.05, 0.95, 0], [0.1, 0.8, 0.1]])
    assert scce == pytest.approx(cce, rel=1e-6)


def test_options_reach_the_loss_and_weights_weigh_samples():
    # Logit 0 is probability 1/2; smoothing 0.2 makes target 1 into 0.9: still log 2.
    bce = metrics.BinaryCrossentropy(from_logits=True, label_smoothing=0.2)
    assert bce([[1.0]], [[0.0]]) == pytest.approx(LOG2)
    # Smoothing 0.5 over 2 classes: targets 0.75 / 0.25 against 0.5 / 0.5 -> log 2.
    cce = metrics.CategoricalCrossentropy(label_smoothing=0.5, axis=0)
    assert cce([[1.0], [0.0]], [[0.5], [0.5]]) == pytest.approx(LOG2)
    scce = metrics.SparseCategoricalCrossentropy(from_logits=True)
    scce.update_state([0, 1], LOGITS[:2], sample_weight=[3.0, 0.0])
    scce.update_state([1], LOGITS[2:3])
    assert scce.result() == pytest.approx((3 * LOG2 + KEPT[1]) / 4, rel=1e-6)
    scce.reset_state()
    assert scce.result() == 0.0


def test_ignore_class_as_keras_weighs_it():
    # Without sample_weight the ignored entries count as zeros, as in Keras 3 ...
    unweighted = metrics.SparseCategoricalCrossentropy(from_logits=True, ignore_class=-1)
    assert unweighted(LABELS, LOGITS) == pytest.approx(KEPT.sum() / 4, rel=1e-6)
    # ... with one they get weight 0 and leave the mean.
    weighted = metrics.SparseCategoricalCrossentropy(from_logits=True, ignore_class=-1)
    value = weighted(LABELS, LOGITS, sample_weight=[1.0, 7.0, 3.0, 2.0])
    assert value == pytest.approx((KEPT[0] + 3 * KEPT[1]) / 4, rel=1e-6)
    # Labels (batch, steps) with a weight per sample covering its steps.
    steps = metrics.SparseCategoricalCrossentropy(from_logits=True, ignore_class=-1)
    value = steps(LABELS.reshape(2, 2), LOGITS.reshape(2, 2, 2), sample_weight=[2.0, 1.0])
    assert value == pytest.approx((2 * KEPT[0] / 2 + KEPT[1] / 2) / (2 * 0.5 + 0.5), rel=1e-6)


def test_bad_input_is_named_before_state_changes():
    with pytest.raises(ValueError, match="SparseCategoricalCrossentropy: ignore_class"):
        metrics.SparseCategoricalCrossentropy(ignore_class=1.5)
    metric = metrics.SparseCategoricalCrossentropy(ignore_class=-1)
    metric.update_state([0], [[0.5, 0.5]])
    with pytest.raises(ValueError, match=r"'sparse_categorical_crossentropy'.*shape \(3,\)"):
        metric.update_state([0, 1, 1], [[0.5, 0.5], [0.5, 0.5]], sample_weight=[1.0, 1.0, 1.0])
    with pytest.raises(ValueError, match="'sparse_categorical_crossentropy': sample_weight"):
        metric.update_state([0, 1], [[0.5, 0.5], [0.5, 0.5]], sample_weight=[1.0, 1.0, 1.0])
    with pytest.raises(ValueError, match="'categorical_crossentropy'.*shape"):
        metrics.CategoricalCrossentropy()([[0, 1]], [[0.5, 0.5, 0.0]])
    assert metric.result() == pytest.approx(LOG2) and metric.count == 1.0


@pytest.mark.parametrize("cls", [metrics.BinaryCrossentropy, metrics.CategoricalCrossentropy])
def test_label_smoothing_is_checked_when_made(cls):
    # Keras takes any value; a smoothing outside [0, 1] makes targets outside
    # [0, 1], so it is refused when the metric is made rather than at its first batch.
    for bad in (1.5, -0.5):
        with pytest.raises(ValueError, match=f"{cls.__name__}: label_smoothing must lie in"):
            cls(label_smoothing=bad)
    assert cls(label_smoothing=1).get_config()["label_smoothing"] == 1


@pytest.mark.parametrize(
    "metric",
    [
        metrics.KLDivergence(name="kl"),
        metrics.BinaryCrossentropy(from_logits=True, label_smoothing=0.1),
        metrics.CategoricalCrossentropy(label_smoothing=0.2, axis=1),
        metrics.SparseCategoricalCrossentropy(from_logits=True, ignore_class=255, axis=1),
    ],
    ids=lambda metric: type(metric).__name__,
)
def test_config_round_trips(metric):
    config = metric.get_config()
    again = type(metric).from_config(config)
    assert again.get_config() == config
    assert metrics.deserialize(metrics.serialize(metric)).get_config() == config


def test_keras_config_keys():
    assert metrics.BinaryCrossentropy().get_config() == {
        "name": "binary_crossentropy", "dtype": "float32", "from_logits": False,
        "label_smoothing": 0,
    }  # fmt: skip
    assert metrics.SparseCategoricalCrossentropy().get_config() == {
        "name": "sparse_categorical_crossentropy", "dtype": "float32", "from_logits": False,
        "ignore_class": None, "axis": -1,
    }  # fmt: skip
    assert metrics.KLDivergence().get_config() == {"name": "kl_divergence", "dtype": "float32"}


@pytest.mark.parametrize(
    "name, cls",
    [
        ("binary_crossentropy", metrics.BinaryCrossentropy),
        ("bce", metrics.BinaryCrossentropy),
        ("BCE", metrics.BinaryCrossentropy),
        ("categorical_crossentropy", metrics.CategoricalCrossentropy),
        ("sparse_categorical_crossentropy", metrics.SparseCategoricalCrossentropy),
        ("kl_divergence", metrics.KLDivergence),
        ("poisson", metrics.Poisson),
        ("KLDivergence", metrics.KLDivergence),
    ],
)
def test_names_in_get(name, cls):
    metric = metrics.get(name)
    assert type(metric) is cls
    if name.islower():
        assert metric.name == name


def test_names_in_compile():
    model = mk.Sequential([mk.Input((2,)), mk.layers.Dense(3, activation="softmax")])
    model.compile(
        optimizer="sgd",
        loss="categorical_crossentropy",
        metrics=["categorical_crossentropy", "kl_divergence", "bce"],
    )
    x = np.random.default_rng(0).standard_normal((6, 2)).astype("float32")
    y = np.eye(3, dtype="float32")[[0, 1, 2, 0, 1, 2]]
    logs = model.evaluate(x, y, batch_size=3, return_dict=True, verbose=0)
    assert logs["categorical_crossentropy"] == pytest.approx(logs["loss"], rel=1e-5)
    # For one-hot targets the divergence is the cross-entropy (less eps-sized terms).
    assert logs["kl_divergence"] == pytest.approx(logs["loss"], rel=1e-4)
    expected = metrics.BinaryCrossentropy()(y, model.predict(x, verbose=0))
    assert logs["bce"] == pytest.approx(expected, rel=1e-5)


@pytest.mark.parametrize("extension", [".keras", ".minikeras"])
def test_numpy_arguments_save_in_both_formats(tmp_path, extension):
    # Arguments that are numpy scalars or arrays (as from a config computed with
    # numpy) are written as JSON numbers and lists in both file formats.
    compiled = [
        metrics.BinaryCrossentropy(label_smoothing=np.float32(0.25)),
        metrics.CategoricalCrossentropy(axis=np.int64(-1)),
        metrics.SparseCategoricalCrossentropy(from_logits=np.bool_(True), ignore_class=-1),
        metrics.AUC(thresholds=np.array([0.25, 0.5], "float32")),
        metrics.Precision(thresholds=np.float32(0.75)),
    ]
    model = mk.Sequential([mk.Input((2,)), mk.layers.Dense(3, activation="softmax")])
    model.compile(optimizer="sgd", loss="categorical_crossentropy", metrics=compiled)
    path = str(tmp_path / f"model{extension}")
    model.save(path)
    loaded = {metric.name: metric for metric in mk.models.load_model(path).metrics}
    assert loaded["binary_crossentropy"].label_smoothing == 0.25
    assert loaded["categorical_crossentropy"].axis == -1
    assert loaded["sparse_categorical_crossentropy"].from_logits is True
    assert loaded["auc"].thresholds[1:-1] == [0.25, 0.5]
    assert loaded["precision"].thresholds == [0.75]


@pytest.mark.parametrize(
    "name, arguments, kind",
    [
        ("KLDivergence", {}, "probabilities"),
        ("BinaryCrossentropy", {}, "binary"),
        ("BinaryCrossentropy", {"from_logits": True, "label_smoothing": 0.1}, "binary_logits"),
        ("CategoricalCrossentropy", {}, "probabilities"),
        ("CategoricalCrossentropy", {"from_logits": True, "label_smoothing": 0.2}, "logits"),
        ("SparseCategoricalCrossentropy", {}, "sparse"),
        ("SparseCategoricalCrossentropy", {"from_logits": True}, "sparse_logits"),
        (
            "SparseCategoricalCrossentropy",
            {"from_logits": True, "ignore_class": 1},
            "sparse_logits",
        ),
    ],
)
@pytest.mark.parametrize("weighted", [False, True])
def test_matches_keras(name, arguments, kind, weighted):
    keras = pytest.importorskip("keras")
    rng = np.random.default_rng(5)
    scores = rng.random((12, 3)).astype("float32")
    probabilities = scores / scores.sum(-1, keepdims=True)
    one_hot = np.eye(3, dtype="float32")[rng.integers(0, 3, 12)]
    binary = (rng.random((12, 3)) > 0.5).astype("float32")
    y_true, y_pred = {
        "probabilities": (one_hot if "Categorical" in name else probabilities[::-1], probabilities),
        "logits": (one_hot, 3 * scores),
        "binary": (binary, scores),
        "binary_logits": (binary, 4 * scores - 2),
        "sparse": (one_hot.argmax(-1), probabilities),
        "sparse_logits": (one_hot.argmax(-1), 3 * scores),
    }[kind]
    weights = rng.random(12).astype("float32") if weighted else None
    ours = getattr(metrics, name)(**arguments)
    theirs = getattr(keras.metrics, name)(**arguments)
    for metric in (ours, theirs):
        metric.update_state(y_true, y_pred, sample_weight=weights)
        metric.update_state(y_true[:5], y_pred[:5])
    assert ours.result() == pytest.approx(float(theirs.result()), rel=1e-5)
