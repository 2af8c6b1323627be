"""ctc_loss: against every alignment enumerated, gradients (second order, float32), Keras's
values, its node through .keras files."""

import itertools

import numpy as np
import pytest
from finite_differences import check_float32, check_gradients, check_second_order

import minikeras as mk
from minikeras import ops

RNG = np.random.default_rng(17)
LOGITS = RNG.normal(size=(4, 6, 4)).astype("float32")  # (batch, steps, classes)
TARGET = np.array([[1, 2, 2], [3, 1, 0], [2, 0, 0], [0, 0, 0]], "int32")  # (0 is blank)
TARGET_LENGTH = np.array([3, 2, 1, 0])
OUTPUT_LENGTH = np.array([6, 5, 3, 2])


def _by_enumeration(logits, labels, steps, blank=0):
    """-log of the summed probability of every path that collapses to `labels`."""
    log_probs = logits[:steps] - np.log(np.exp(logits[:steps]).sum(-1, keepdims=True))
    total = -np.inf
    for path in itertools.product(range(logits.shape[-1]), repeat=steps):
        merged = [k for i, k in enumerate(path) if i == 0 or k != path[i - 1]]
        if [k for k in merged if k != blank] == list(labels):
            total = np.logaddexp(total, sum(log_probs[i, k] for i, k in enumerate(path)))
    return -total


def test_matches_every_alignment_enumerated():
    loss = ops.ctc_loss(TARGET, LOGITS, TARGET_LENGTH, OUTPUT_LENGTH)
    assert loss.dtype == np.float32 and loss.shape == (4,)
    want = [
        _by_enumeration(LOGITS[b].astype(float), TARGET[b, : TARGET_LENGTH[b]], OUTPUT_LENGTH[b])
        for b in range(4)
    ]
    np.testing.assert_allclose(loss.numpy(), want, rtol=1e-5)


def test_another_blank_and_an_impossible_target():
    shifted = (TARGET + 3) % 4  # (labels moved so that 3 is free to be the blank)
    loss = ops.ctc_loss(shifted, LOGITS, TARGET_LENGTH, OUTPUT_LENGTH, mask_index=3)
    want = _by_enumeration(LOGITS[0].astype(float), shifted[0], 6, blank=3)
    np.testing.assert_allclose(float(loss[0]), want, rtol=1e-5)
    # "2 2" needs a blank between: three steps at least; with two none is possible.
    impossible = ops.ctc_loss([[2, 2]], LOGITS[:1], [2], [2]).numpy()
    assert impossible[0] > 1e29 and np.isfinite(impossible[0])


def test_gradients_match_finite_differences():
    def loss(logits):
        return ops.ctc_loss(TARGET[:2], logits, TARGET_LENGTH[:2], [4, 3])

    data = [LOGITS[:2, :4]]
    check_gradients(loss, data)
    check_second_order(loss, data)
    check_float32(loss, data)


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="ctc_loss: expected target"):
        ops.ctc_loss(TARGET[0], LOGITS, TARGET_LENGTH, OUTPUT_LENGTH)
    with pytest.raises(ValueError, match=r"ctc_loss: output_length must lie in \[0, 6\]"):
        ops.ctc_loss(TARGET, LOGITS, TARGET_LENGTH, OUTPUT_LENGTH + 1)
    with pytest.raises(ValueError, match="ctc_loss: target_length must be 4 integers"):
        ops.ctc_loss(TARGET, LOGITS, TARGET_LENGTH[:3], OUTPUT_LENGTH)
    with pytest.raises(ValueError, match="other than the blank 0"):
        ops.ctc_loss(TARGET, LOGITS, np.array([3, 3, 1, 0]), OUTPUT_LENGTH)  # (a 0 counts)


def test_the_same_values_as_keras():
    keras = pytest.importorskip("keras")
    for dtype in ("float32", "float16"):
        args = (TARGET, LOGITS.astype(dtype), TARGET_LENGTH, OUTPUT_LENGTH)
        theirs = keras.ops.convert_to_numpy(keras.ops.ctc_loss(*args))
        mine = ops.ctc_loss(*args).numpy()
        assert mine.dtype == theirs.dtype and mine.shape == theirs.shape
        np.testing.assert_allclose(mine, theirs, rtol=1e-5 if dtype == "float32" else 1e-3)


def _graph(lib):
    target = lib.Input((3,), dtype="int32", name="target")
    logits = lib.Input((6, 4), name="logits")
    target_length = lib.Input((), dtype="int32", name="target_length")
    output_length = lib.Input((), dtype="int32", name="output_length")
    loss = lib.ops.ctc_loss(target, logits, target_length, output_length, mask_index=0)
    return lib.Model([target, logits, target_length, output_length], loss)


def test_models_of_it_save_and_cross_to_keras(tmp_path):
    data = [TARGET, LOGITS, TARGET_LENGTH.astype("int32"), OUTPUT_LENGTH.astype("int32")]
    model = _graph(mk)
    for suffix in ("minikeras", "keras"):
        model.save(tmp_path / f"m.{suffix}")
        loaded = mk.models.load_model(tmp_path / f"m.{suffix}")
        np.testing.assert_array_equal(loaded(data).numpy(), model(data).numpy())
    keras = pytest.importorskip("keras")
    theirs = _graph(keras)
    theirs.save(tmp_path / "keras_made.keras")
    ours = mk.models.load_model(tmp_path / "keras_made.keras")
    want = keras.ops.convert_to_numpy(theirs(data))
    np.testing.assert_allclose(ours(data).numpy(), want, rtol=1e-5)
    again = keras.saving.load_model(tmp_path / "m.keras")
    got = keras.ops.convert_to_numpy(again(data))
    np.testing.assert_allclose(got, model(data).numpy(), rtol=1e-5)
