"""Masks: made by Embedding(mask_zero=True), carried by Sequential and functional models.

The check that matters: a padded batch through a masking model gives each
sample what the same layers give on that sample without its padding.
"""

import numpy as np
import pytest

import minikeras as mk
from minikeras import layers
from minikeras.layers import GRU, LSTM, Bidirectional, Dense, Embedding, Input, Layer, SimpleRNN

VOCABULARY, WIDTH = 9, 3
# Right-padded with id 0; the lengths are 4, 2 and 5.
IDS = np.array([[3, 1, 4, 1, 0], [5, 8, 0, 0, 0], [2, 6, 5, 3, 5]])
LENGTHS = [4, 2, 5]


def per_sample(model, ids=IDS, lengths=LENGTHS):
    """The model run on each sample alone, without its padding."""
    return [model(ids[i : i + 1, :length]).numpy()[0] for i, length in enumerate(lengths)]


@pytest.mark.parametrize("rnn", [LSTM, GRU, SimpleRNN])
def test_sequential_rnn_skips_padding(rnn):
    model = mk.Sequential([Embedding(VOCABULARY, WIDTH, mask_zero=True), rnn(4), Dense(2)])
    outputs = model(IDS).numpy()
    for got, expected in zip(outputs, per_sample(model)):
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)
    # Without the mask the padding counts, and the answer differs.
    model.layers[0].mask_zero = False
    assert not np.allclose(model(IDS).numpy()[1], outputs[1])


def test_functional_model_carries_masks_through_stacked_rnns():
    ids = Input(shape=(None,), dtype="int32")
    hidden = Embedding(VOCABULARY, WIDTH, mask_zero=True)(ids)
    hidden = LSTM(4, return_sequences=True)(hidden)
    hidden = GRU(3, go_backwards=True)(hidden)
    model = mk.Model(ids, Dense(2)(hidden))
    for got, expected in zip(model(IDS).numpy(), per_sample(model)):
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)


def test_bidirectional_in_a_sequential_skips_padding():
    model = mk.Sequential(
        [
            Embedding(VOCABULARY, WIDTH, mask_zero=True),
            Bidirectional(LSTM(3, return_sequences=True)),
            Bidirectional(GRU(2)),
        ]
    )
    for got, expected in zip(model(IDS).numpy(), per_sample(model)):
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)


def test_return_sequences_passes_the_mask_on_and_the_model_reports_it():
    model = mk.Sequential(
        [Embedding(VOCABULARY, WIDTH, mask_zero=True), SimpleRNN(2, return_sequences=True)]
    )
    model(IDS)
    np.testing.assert_array_equal(np.asarray(model.compute_mask(IDS)), IDS != 0)
    model.add(SimpleRNN(2))
    model(IDS)
    assert model.compute_mask(IDS) is None


class Recorder(Layer):
    """Passes inputs through and remembers the mask its call() received."""

    def __init__(self, supports_masking, **kwargs):
        super().__init__(**kwargs)
        self.supports_masking = supports_masking
        self.seen = "not called"

    def call(self, inputs, mask=None):
        self.seen = mask
        return inputs


class NoMaskArgument(Layer):
    def call(self, inputs):
        return inputs


def test_masks_pass_through_supporting_layers_and_stop_at_others():
    passing, stopping, after = Recorder(True), Recorder(False), Recorder(True)
    embedding = Embedding(VOCABULARY, WIDTH, mask_zero=True)
    model = mk.Sequential([embedding, NoMaskArgument(), passing, stopping, after])
    model(IDS)
    # A layer whose call() does not name `mask` is still called (without it), and,
    # not supporting masking, ends it.
    assert passing.seen is None and stopping.seen is None
    model = mk.Sequential([embedding, passing, stopping, after])
    model(IDS)
    np.testing.assert_array_equal(np.asarray(passing.seen), IDS != 0)
    np.testing.assert_array_equal(np.asarray(stopping.seen), IDS != 0)
    assert after.seen is None and model.compute_mask(IDS) is None


def test_a_nested_sequential_hands_its_mask_to_the_next_layer():
    inner = mk.Sequential([Embedding(VOCABULARY, WIDTH, mask_zero=True), Recorder(True)])
    recorder = Recorder(True)
    mk.Sequential([inner, recorder])(IDS)
    np.testing.assert_array_equal(np.asarray(recorder.seen), IDS != 0)


def test_functional_models_take_and_report_masks():
    inputs = Input(shape=(5, WIDTH))
    recorder = Recorder(True)
    model = mk.Model(inputs, recorder(Recorder(False)(layers.Dense(2)(inputs))))
    mask = IDS != 0
    model(np.ones((3, 5, WIDTH)), mask=mask)
    # Dense passes the mask on (as in Keras); a layer without mask support stops it.
    assert recorder.seen is None

    passthrough = mk.Model(inputs, recorder(inputs))
    passthrough(np.ones((3, 5, WIDTH)), mask=mask)
    np.testing.assert_array_equal(recorder.seen, mask)
    np.testing.assert_array_equal(passthrough.compute_mask(None), mask)


def test_dense_dropout_and_activation_pass_masks_on():
    embedding = Embedding(VOCABULARY, WIDTH, mask_zero=True)
    recorder = Recorder(True)
    middle = [layers.Dense(3), layers.Dropout(0.5), layers.Activation("relu")]
    mk.Sequential([embedding, *middle, recorder])(IDS)
    np.testing.assert_array_equal(np.asarray(recorder.seen), IDS != 0)


def test_an_explicit_mask_reaches_an_rnn_called_by_hand():
    embedding, lstm = Embedding(VOCABULARY, WIDTH, mask_zero=True), LSTM(2)
    vectors = embedding(IDS)
    masked = lstm(vectors, mask=embedding.compute_mask(IDS)).numpy()
    trimmed = lstm(vectors[1:2, :2]).numpy()
    np.testing.assert_allclose(masked[1], trimmed[0], rtol=1e-5, atol=1e-6)


def test_models_without_masks_report_none():
    model = mk.Sequential([Dense(2), Dense(1)])
    model(np.ones((2, 3)))
    assert model.compute_mask(np.ones((2, 3))) is None


def test_a_masked_model_trains_with_fit():
    model = mk.Sequential(
        [Embedding(VOCABULARY, WIDTH, mask_zero=True), LSTM(4), Dense(2, activation="softmax")]
    )
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    history = model.fit(IDS, np.array([0, 1, 0]), epochs=3, verbose=0)
    assert np.isfinite(history.history["loss"]).all()
