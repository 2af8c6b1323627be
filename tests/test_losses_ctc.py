"""losses.ctc and losses.CTC: Keras 3's lengths (all logit steps, the non-zero labels), values
by hand and against Keras, reductions, names and configs."""

import itertools
import os

import numpy as np
import pytest

import minikeras as mk
from minikeras import losses

RNG = np.random.default_rng(5)


def _brute_force(labels, logits):
    """-log of the summed probability of every alignment that collapses to `labels`."""
    probabilities = np.exp(logits) / np.exp(logits).sum(-1, keepdims=True)
    steps, classes = logits.shape
    total = 0.0
    for path in itertools.product(range(classes), repeat=steps):
        collapsed = [c for i, c in enumerate(path) if c != 0 and (i == 0 or c != path[i - 1])]
        if collapsed == list(labels):
            total += np.prod([probabilities[t, c] for t, c in enumerate(path)])
    return -np.log(total)


def test_lengths_are_the_non_zero_labels_and_every_logit_step():
    y_true = np.array([[1, 2, 0, 0], [2, 2, 1, 0], [1, 0, 0, 0]])
    y_pred = RNG.normal(size=(3, 5, 3)).astype("float32")
    got = losses.ctc(y_true, y_pred).numpy()
    want = [_brute_force([c for c in row if c], logits) for row, logits in zip(y_true, y_pred)]
    assert got.shape == (3,) and got.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=1e-5)


def test_the_class_reduces_and_reads_float_labels_as_integers():
    y_true = np.array([[1.0, 2.0, 0.0], [2.0, 0.0, 0.0]])
    y_pred = RNG.normal(size=(2, 4, 3)).astype("float32")
    each = losses.ctc(y_true.astype("int64"), y_pred).numpy()
    np.testing.assert_allclose(losses.CTC(reduction=None)(y_true, y_pred).numpy(), each)
    np.testing.assert_allclose(float(losses.CTC()(y_true, y_pred)), each.mean(), rtol=1e-6)
    weighted = losses.CTC(reduction="sum")(y_true, y_pred, sample_weight=[2.0, 0.5])
    np.testing.assert_allclose(float(weighted), 2.0 * each[0] + 0.5 * each[1], rtol=1e-6)


def test_names_config_and_errors():
    assert losses.get("ctc") is losses.ctc
    loss = losses.get("CTC")
    assert isinstance(loss, losses.CTC) and loss.name == "ctc"
    config = losses.CTC(reduction="sum", name="c").get_config()
    assert config == {"name": "c", "reduction": "sum"}
    assert losses.deserialize(losses.serialize(losses.CTC(reduction="sum"))).reduction == "sum"
    with pytest.raises(
        ValueError, match=r"y_true must be integer labels \(batch_size, max_length\)"
    ):
        losses.ctc(np.ones((2, 3, 1)), np.zeros((2, 4, 3)))
    with pytest.raises(ValueError, match=r"y_pred must be logits \(batch_size, max_length, num_"):
        losses.ctc(np.ones((2, 3)), np.zeros((2, 4)))


def test_a_model_trains_on_ctc_from_compile():
    inputs = mk.Input((6, 4))
    model = mk.Model(inputs, mk.layers.Dense(3)(inputs))
    model.compile(optimizer=mk.optimizers.Adam(0.05), loss="ctc")
    x = np.random.default_rng(0).normal(size=(8, 6, 4)).astype("float32")
    y = np.tile([[1, 2, 1, 0]], (8, 1))
    history = model.fit(x, y, epochs=20, verbose=0).history["loss"]
    assert history[-1] < 0.7 * history[0]


def test_same_values_as_keras():
    os.environ.setdefault("KERAS_BACKEND", "jax")
    keras = pytest.importorskip("keras")
    y_true = np.array([[1, 3, 3, 0, 0], [2, 0, 0, 0, 0], [3, 1, 2, 1, 0], [1, 1, 0, 0, 0]])
    y_pred = RNG.normal(size=(4, 7, 4)).astype("float32")
    want = keras.ops.convert_to_numpy(keras.losses.ctc(y_true, y_pred))
    np.testing.assert_allclose(losses.ctc(y_true, y_pred).numpy(), want, rtol=1e-5)
    for reduction in ("sum_over_batch_size", "sum", None):
        theirs = keras.losses.CTC(reduction=reduction)(y_true, y_pred, sample_weight=[1, 2, 0, 1])
        ours = losses.CTC(reduction=reduction)(y_true, y_pred, sample_weight=[1, 2, 0, 1])
        np.testing.assert_allclose(ours.numpy(), keras.ops.convert_to_numpy(theirs), rtol=1e-5)
    assert losses.CTC().get_config() == keras.losses.CTC().get_config()
