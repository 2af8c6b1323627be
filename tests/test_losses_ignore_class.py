"""`ignore_class` of sparse categorical cross-entropy: zero loss, zero gradient, and (in the
`Loss`) left out of the mean, as Keras 3 does; checked by hand, by finite differences and
against Keras itself when it is installed.
"""

import inspect

import numpy as np
import pytest
from finite_differences import check_gradients

import minikeras as mk
from minikeras import losses

LOGITS = np.array([[0.0, 0.0], [5.0, 1.0], [2.0, 3.0], [1.0, -1.0]], "float32")
LABELS = np.array([0, -1, 1, -1])
# -log softmax: row 0, label 0: log 2; row 2, label 1: log(1 + e^-1).
KEPT = np.array([np.log(2.0), np.log1p(np.exp(-1.0))])


def test_the_function_gives_zero_for_ignored_entries():
    values = losses.sparse_categorical_crossentropy(LABELS, LOGITS, True, ignore_class=-1)
    np.testing.assert_allclose(values.numpy(), [KEPT[0], 0.0, KEPT[1], 0.0], rtol=1e-6)
    assert values.dtype == np.float32
    # A label of (batch, 1), an ignored class past the last one, probabilities with a nan.
    probabilities = np.array([[0.25, 0.75], [np.nan, 0.5]], "float32")
    values = losses.sparse_categorical_crossentropy(
        np.array([[1], [255]]), probabilities, ignore_class=255
    )
    np.testing.assert_allclose(values.numpy(), [-np.log(0.75), 0.0], rtol=1e-6)
    # The class axis elsewhere: the same losses as with it last.
    scores = np.random.default_rng(0).standard_normal((3, 4, 5)).astype("float32")
    labels = np.array([[0, 2, -1, 3, 0], [-1, 1, 1, 2, 0], [2, 3, 0, -1, -1]])
    first = losses.sparse_categorical_crossentropy(labels, scores, True, -1, axis=1)
    last = losses.sparse_categorical_crossentropy(labels, scores.transpose(0, 2, 1), True, -1)
    np.testing.assert_allclose(first.numpy(), last.numpy(), rtol=1e-6)
    assert not first.numpy()[labels == -1].any() and first.numpy()[labels != -1].all()


def test_the_loss_means_over_the_entries_kept():
    loss = losses.SparseCategoricalCrossentropy(from_logits=True, ignore_class=-1)
    assert float(loss(LABELS, LOGITS)) == pytest.approx(KEPT.mean(), rel=1e-6)
    weights = np.array([1.0, 7.0, 3.0, 2.0])
    # Keras's mask weight total / kept = 4 / 2 on the kept, then the mean over all 4.
    assert float(loss(LABELS, LOGITS, sample_weight=weights)) == pytest.approx(
        (KEPT[0] * 1.0 + KEPT[1] * 3.0) / 2, rel=1e-6
    )
    summed = losses.SparseCategoricalCrossentropy(True, -1, reduction="sum")
    assert float(summed(LABELS, LOGITS)) == pytest.approx(KEPT.sum(), rel=1e-6)
    by_weight = losses.SparseCategoricalCrossentropy(True, -1, "mean_with_sample_weight")
    assert float(by_weight(LABELS, LOGITS, sample_weight=weights)) == pytest.approx(
        (KEPT[0] * 1.0 + KEPT[1] * 3.0) / 4.0, rel=1e-6
    )
    unreduced = losses.SparseCategoricalCrossentropy(True, -1, reduction=None)
    np.testing.assert_allclose(unreduced(LABELS, LOGITS).numpy(), [KEPT[0], 0, KEPT[1], 0], 1e-6)
    every_one = losses.SparseCategoricalCrossentropy(True, ignore_class=0)
    assert float(every_one([0, 0], LOGITS[:2])) == 0.0


def test_a_given_mask_and_the_ignored_class_combine():
    loss = losses.SparseCategoricalCrossentropy(from_logits=True, ignore_class=-1)
    mask = np.array([False, True, True, True])
    assert float(loss(LABELS, LOGITS, mask=mask)) == pytest.approx(KEPT[1], rel=1e-6)
    with pytest.raises(ValueError, match=r"mask has shape \(3,\).*\(4,\)"):
        loss(LABELS, LOGITS, mask=mask[:3])


def test_ignored_entries_get_no_gradient():
    labels = np.array([[2, -1, 0], [-1, 1, 1]])
    scores = np.random.default_rng(0).standard_normal((2, 3, 3))
    check_gradients(
        lambda x: losses.sparse_categorical_crossentropy(labels, x, True, ignore_class=-1),
        [scores],
    )
    loss = losses.SparseCategoricalCrossentropy(ignore_class=-1)
    probabilities = np.random.default_rng(1).uniform(0.1, 1.0, (2, 3, 3))
    check_gradients(lambda p: loss(labels, p), [probabilities])
    with mk.GradientTape() as tape:
        logits = mk.Tensor(scores)
        tape.watch(logits)
        value = losses.SparseCategoricalCrossentropy(True, -1)(labels, logits)
    gradient = tape.gradient(value, logits).numpy()
    assert not gradient[0, 1].any() and not gradient[1, 0].any() and gradient[0, 0].any()


def test_config_round_trips_and_bad_values_are_named():
    loss = losses.SparseCategoricalCrossentropy(from_logits=True, ignore_class=255)
    config = loss.get_config()
    assert config["ignore_class"] == 255
    again = losses.deserialize(losses.serialize(loss))
    assert again.get_config() == config
    assert float(again([255, 1], LOGITS[:2])) == pytest.approx(np.log1p(np.exp(4.0)), rel=1e-6)
    with pytest.raises(ValueError, match="SparseCategoricalCrossentropy: ignore_class"):
        losses.SparseCategoricalCrossentropy(ignore_class=0.5)
    with pytest.raises(ValueError, match="ignore_class must be None or an int"):
        losses.sparse_categorical_crossentropy([0], LOGITS[:1], ignore_class="void")
    with pytest.raises(ValueError, match="out of range|label"):
        losses.sparse_categorical_crossentropy([5], LOGITS[:1], True, ignore_class=-1)


def test_fit_leaves_the_ignored_class_out():
    model = mk.Sequential([mk.Input((2,)), mk.layers.Dense(3)])
    loss = losses.SparseCategoricalCrossentropy(from_logits=True, ignore_class=-1)
    model.compile(optimizer="sgd", loss=loss)
    x = np.random.default_rng(0).standard_normal((8, 2)).astype("float32")
    y = np.array([0, 1, 2, -1, 0, -1, 1, 2])
    evaluated = model.evaluate(x, y, batch_size=8, verbose=0)
    expected = loss(y[y != -1], model.predict(x[y != -1], verbose=0))
    assert evaluated == pytest.approx(float(expected), rel=1e-5)


@pytest.mark.parametrize(
    "reduction", ["sum_over_batch_size", "sum", "mean_with_sample_weight", "none"]
)
@pytest.mark.parametrize("from_logits", [True, False])
@pytest.mark.parametrize("weighted", [False, True])
def test_matches_keras(reduction, from_logits, weighted):
    keras = pytest.importorskip("keras")
    rng = np.random.default_rng(2)
    scores = rng.standard_normal((4, 5, 3)).astype("float32")
    if not from_logits:
        scores = np.exp(scores) / np.exp(scores).sum(-1, keepdims=True)
    labels = rng.integers(0, 3, (4, 5))
    labels[rng.random((4, 5)) < 0.3] = 7
    weights = rng.random((4, 5)).astype("float32") if weighted else None
    arguments = dict(from_logits=from_logits, ignore_class=7, reduction=reduction)
    ours = losses.SparseCategoricalCrossentropy(**arguments)(labels, scores, weights)
    theirs = keras.losses.SparseCategoricalCrossentropy(**arguments)(labels, scores, weights)
    np.testing.assert_allclose(ours.numpy(), np.asarray(theirs), rtol=1e-5, atol=1e-6)
    function = losses.sparse_categorical_crossentropy(labels, scores, from_logits, 7)
    reference = keras.losses.sparse_categorical_crossentropy(labels, scores, from_logits, 7)
    np.testing.assert_allclose(function.numpy(), np.asarray(reference), rtol=1e-5, atol=1e-6)


def test_the_loss_class_takes_keras_axis_argument():
    # Keras 3's class takes axis (after reduction); it was a TypeError here.
    rng = np.random.default_rng(3)
    logits = rng.normal(size=(4, 3, 5)).astype("float32")  # classes on axis 1
    labels = rng.integers(0, 3, (4, 5))
    loss = mk.losses.SparseCategoricalCrossentropy(from_logits=True, axis=1)
    moved = np.moveaxis(logits, 1, -1)
    expected = -np.take_along_axis(
        moved - np.log(np.exp(moved).sum(-1, keepdims=True)), labels[..., None], -1
    ).mean()
    np.testing.assert_allclose(float(loss(labels, logits)), expected, rtol=1e-5)
    assert loss.get_config()["axis"] == 1
    again = mk.losses.SparseCategoricalCrossentropy.from_config(loss.get_config())
    np.testing.assert_allclose(float(again(labels, logits)), expected, rtol=1e-5)
    ignored = mk.losses.SparseCategoricalCrossentropy(True, ignore_class=0, axis=1)
    kept = labels != 0
    per_entry = -np.take_along_axis(
        moved - np.log(np.exp(moved).sum(-1, keepdims=True)), labels[..., None], -1
    )[..., 0]
    np.testing.assert_allclose(float(ignored(labels, logits)), per_entry[kept].mean(), rtol=1e-5)
    with pytest.raises(ValueError, match="axis"):
        mk.losses.SparseCategoricalCrossentropy(axis=1.5)
    keras = pytest.importorskip("keras")  # (its JAX backend computes the last axis only)
    signature = inspect.signature(keras.losses.SparseCategoricalCrossentropy)
    ours = inspect.signature(mk.losses.SparseCategoricalCrossentropy)
    assert list(ours.parameters) == list(signature.parameters)
