"""ctc_loss: against every alignment enumerated, gradients (second order, float32), Keras's
values, its node through .keras files."""

import itertools

import numpy as np
import pytest
from finite_differences import check_float32, check_gradients, check_second_order
from op_graphs import assert_saves_and_crosses_to_keras

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
    assert 1e5 < impossible[0] < 1e5 + 100  # finite: one forbidden move at 1e5


def test_an_impossible_target_costs_what_keras_on_jax_gives_by_hand():
    # Two labels in one step: the best the recursion has is one forbidden move (the
    # finite "log 0" of -1e5, optax's and Keras's JAX backend's) to reach label 2's
    # state, emitting label 2 (from two states) or a blank (from one), so the loss is
    # 1e5 - log(3 p(2) + 2 p(blank)).
    logits = RNG.normal(size=(1, 1, 4))
    probs = np.exp(logits[0, 0]) / np.exp(logits[0, 0]).sum()
    loss = ops.ctc_loss([[1, 2]], logits.astype("float32"), [2], [1]).numpy()
    np.testing.assert_allclose(loss[0], 1e5 - np.log(3 * probs[2] + 2 * probs[0]), atol=0.02)


def test_possible_and_impossible_targets_match_keras():
    keras = pytest.importorskip("keras")
    rng = np.random.default_rng(3)
    for _ in range(30):
        steps, classes, longest = rng.integers(1, 7), rng.integers(2, 5), rng.integers(1, 5)
        logits = (rng.standard_normal((3, steps, classes)) * 2).astype("float32")
        blank = int(rng.integers(0, classes))
        labels = rng.integers(0, classes, (3, longest))
        labels = np.where(labels == blank, (labels + 1) % classes, labels)
        arguments = (labels, logits, rng.integers(0, longest + 1, 3), rng.integers(0, steps + 1, 3))
        theirs = keras.ops.convert_to_numpy(keras.ops.ctc_loss(*arguments, mask_index=blank))
        ours = ops.ctc_loss(*arguments, mask_index=blank).numpy()
        np.testing.assert_allclose(ours, theirs, rtol=1e-6, atol=1e-5)


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
    assert_saves_and_crosses_to_keras(
        _graph,
        [TARGET, LOGITS, TARGET_LENGTH.astype("int32"), OUTPUT_LENGTH.astype("int32")],
        tmp_path,
    )


def _all_labellings(log_probs, blank=0):
    """Every labelling's log-probability, summed over its alignments, by enumeration."""
    found = {}
    for path in itertools.product(range(log_probs.shape[-1]), repeat=log_probs.shape[0]):
        merged = [k for i, k in enumerate(path) if i == 0 or k != path[i - 1]]
        labels = tuple(k for k in merged if k != blank)
        score = sum(log_probs[i, k] for i, k in enumerate(path))
        found[labels] = np.logaddexp(found.get(labels, -np.inf), score)
    return found


def test_greedy_decode_by_hand():
    scores = np.log([[[0.1, 0.9], [0.2, 0.8], [0.9, 0.1], [0.3, 0.7]]]).astype("float32")
    decoded, score = ops.ctc_decode(scores, [4])
    np.testing.assert_array_equal(decoded.numpy(), [[[1, 1, -1, -1]]])
    np.testing.assert_allclose(score.numpy(), [[-np.log(0.9 * 0.8 * 0.9 * 0.7)]], rtol=1e-6)
    unmerged, _ = ops.ctc_decode(scores, [4], merge_repeated=False)
    np.testing.assert_array_equal(unmerged.numpy(), [[[1, 1, 1, -1]]])
    short, score = ops.ctc_decode(scores, [2])  # (steps past the length are not read)
    np.testing.assert_array_equal(short.numpy(), [[[1, -1, -1, -1]]])
    assert decoded.dtype == np.int32 and score.dtype == np.float32


def test_beam_search_finds_the_most_probable_labellings():
    logits = LOGITS[1, :5]
    log_probs = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    exact = sorted(_all_labellings(log_probs.astype(float)).items(), key=lambda item: -item[1])
    decoded, scores = ops.ctc_decode(logits[None], [5], strategy="beam_search", top_paths=3)
    for p, (labels, score) in enumerate(exact[:3]):
        np.testing.assert_array_equal(decoded.numpy()[p, 0, : len(labels)], labels)
        assert (decoded.numpy()[p, 0, len(labels) :] == -1).all()
        np.testing.assert_allclose(scores.numpy()[0, p], score, rtol=1e-5)
    few, scores = ops.ctc_decode(LOGITS[:1, :1], [1], strategy="beam_search", top_paths=6)
    assert np.isneginf(scores.numpy()[0, -2:]).all()  # (one step: four labellings at most)


def test_float_lengths_are_cast_to_int32_as_keras_does():
    # keras-io's ASR example decodes with `np.ones(batch) * steps`: float lengths.
    floats = OUTPUT_LENGTH.astype("float64")
    for strategy in ("greedy", "beam_search"):
        got, want = (ops.ctc_decode(LOGITS, n, strategy=strategy) for n in (floats, OUTPUT_LENGTH))
        np.testing.assert_array_equal(got[0].numpy(), want[0].numpy())
    truncated = ops.ctc_loss(TARGET, LOGITS, TARGET_LENGTH + 0.9, floats - 0.5).numpy()
    expected = ops.ctc_loss(TARGET, LOGITS, TARGET_LENGTH, OUTPUT_LENGTH - 1).numpy()
    np.testing.assert_allclose(truncated, expected, rtol=1e-6)


def test_decode_refuses_bad_arguments():
    with pytest.raises(ValueError, match="ctc_decode: strategy must be 'greedy' or 'beam_search'"):
        ops.ctc_decode(LOGITS, OUTPUT_LENGTH, strategy="beam")
    with pytest.raises(ValueError, match="ctc_decode: sequence_lengths must be 4 integers up to 6"):
        ops.ctc_decode(LOGITS, OUTPUT_LENGTH + 1)
    with pytest.raises(ValueError, match="beam_width and top_paths must be at least 1"):
        ops.ctc_decode(LOGITS, OUTPUT_LENGTH, strategy="beam_search", beam_width=0)


def test_decode_gives_keras_results():
    keras = pytest.importorskip("keras")
    cases = [
        {}, {"merge_repeated": False}, {"mask_index": 3},
        {"strategy": "beam_search", "top_paths": 3, "beam_width": 5},
        {"strategy": "beam_search", "top_paths": 2, "beam_width": 2, "mask_index": 2},
    ]  # fmt: skip
    for kwargs in cases:
        theirs = keras.ops.ctc_decode(LOGITS * 2, OUTPUT_LENGTH, **kwargs)
        mine = ops.ctc_decode(LOGITS * 2, OUTPUT_LENGTH, **kwargs)
        for got, want in zip(mine, theirs):
            want = keras.ops.convert_to_numpy(want)
            assert got.dtype == want.dtype and got.shape == want.shape, kwargs
            np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, err_msg=str(kwargs))


def _decoding_graph(lib):
    logits = lib.Input((6, 4), name="logits")
    lengths = lib.Input((), dtype="int32", name="lengths")
    greedy = lib.ops.ctc_decode(logits, lengths)
    beams = lib.ops.ctc_decode(logits, lengths, strategy="beam_search", beam_width=4, top_paths=2)
    return lib.Model([logits, lengths], [*greedy, *beams])


def test_decoding_models_save_and_cross_to_keras(tmp_path):
    data = [LOGITS, OUTPUT_LENGTH.astype("int32")]
    assert_saves_and_crosses_to_keras(_decoding_graph, data, tmp_path)


# ---------------------------------------------------------------- the CTC loss


def test_ctc_loss_function_counts_the_labels_other_than_the_blank():
    # TARGET's rows are padded with the blank 0: their lengths are 3, 2, 1, 0.
    got = mk.losses.ctc(TARGET, LOGITS).numpy()
    want = [
        _by_enumeration(LOGITS[b].astype(float), TARGET[b, : TARGET_LENGTH[b]], 6) for b in range(4)
    ]
    np.testing.assert_allclose(got, want, rtol=1e-5)
    loss = mk.losses.CTC()
    np.testing.assert_allclose(float(loss(TARGET, LOGITS)), np.mean(want), rtol=1e-5)
    assert mk.losses.get("ctc") is mk.losses.ctc and isinstance(mk.losses.get("CTC"), mk.losses.CTC)
    assert mk.losses.deserialize(mk.losses.serialize(loss)).name == "ctc"
    with pytest.raises(ValueError, match=r"ctc: y_true must be .*got shape \(4, 3, 1\)"):
        mk.losses.ctc(TARGET[..., None], LOGITS)
    with pytest.raises(ValueError, match=r"ctc: y_pred must be logits .*got shape \(4, 6\)"):
        mk.losses.ctc(TARGET, LOGITS[..., 0])


def test_a_model_compiled_with_the_ctc_loss_trains():
    mk.utils.set_random_seed(0)
    model = mk.Sequential(
        [mk.Input((6, 3)), mk.layers.GRU(8, return_sequences=True), mk.layers.Dense(4)]
    )
    model.compile(mk.optimizers.Adam(0.05), loss=mk.losses.CTC())
    features = RNG.normal(size=(4, 6, 3)).astype("float32")
    history = model.fit(features, TARGET[:3].repeat(2, axis=0)[:4], epochs=15, verbose=0)
    assert history.history["loss"][-1] < 0.5 * history.history["loss"][0]


def test_ctc_loss_matches_keras():
    keras = pytest.importorskip("keras")
    np.testing.assert_allclose(
        mk.losses.ctc(TARGET, LOGITS).numpy(),
        np.asarray(keras.losses.ctc(TARGET, LOGITS)),
        rtol=1e-5,
    )
    ours, theirs = mk.losses.CTC(reduction="sum"), keras.losses.CTC(reduction="sum")
    weights = np.array([1.0, 0.5, 2.0, 0.0], "float32")
    np.testing.assert_allclose(
        float(ours(TARGET, LOGITS, weights)), float(theirs(TARGET, LOGITS, weights)), rtol=1e-5
    )
