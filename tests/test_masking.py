"""Masks: made by Embedding(mask_zero=True), carried by Sequential and functional models.

The check that matters: a padded batch through a masking model gives each
sample what the same layers give on that sample without its padding.
"""

import numpy as np
import pytest

import minikeras as mk
from minikeras import layers, ops
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


# ------------------------------------------ losses, metrics and pooling use the mask

MASK = IDS != 0  # the kept steps: 4 + 2 + 5 of 15


def _log_softmax(x):
    shifted = x - x.max(axis=-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))


def _step_losses(logits, labels):
    """Sparse softmax cross-entropy per step, in float64."""
    picked = np.take_along_axis(_log_softmax(logits.astype(np.float64)), labels[..., None], -1)
    return -picked[..., 0]


def test_apply_mask_weighs_kept_entries_as_keras_does():
    weights = mk.losses.apply_mask(None, MASK, "float32").numpy()
    np.testing.assert_allclose(weights, np.where(MASK, 15 / 11, 0.0), rtol=1e-6)
    assert weights.dtype == np.float32
    summed = mk.losses.apply_mask(None, MASK, "float32", reduction="sum").numpy()
    np.testing.assert_array_equal(summed, MASK.astype(np.float32))
    per_sample = mk.losses.apply_mask([1.0, 2.0, 0.5], MASK, "float32", reduction="sum")
    np.testing.assert_allclose(per_sample.numpy(), MASK * np.array([[1.0], [2.0], [0.5]]))
    nothing_kept = mk.losses.apply_mask(None, np.zeros((2, 3), bool), "float32").numpy()
    np.testing.assert_array_equal(nothing_kept, np.zeros((2, 3)))
    with pytest.raises(ValueError, match=r"sample_weight of shape \(2,\).*mask of shape \(3, 5\)"):
        mk.losses.apply_mask([1.0, 2.0], MASK, "float32")


@pytest.mark.parametrize("reduction", ["sum_over_batch_size", "mean", "sum", "none"])
def test_a_loss_with_a_mask_counts_the_kept_steps_only(reduction):
    rng = np.random.default_rng(0)
    logits = rng.standard_normal((3, 5, 4)).astype(np.float32)
    labels = rng.integers(0, 4, (3, 5))
    loss = mk.losses.SparseCategoricalCrossentropy(from_logits=True, reduction=reduction)
    got = loss(labels, logits, mask=MASK).numpy()
    per_step = _step_losses(logits, labels)
    expected = {
        "sum_over_batch_size": per_step[MASK].mean(),
        "mean": per_step[MASK].mean(),
        "sum": per_step[MASK].sum(),
        "none": per_step * MASK,
    }[reduction]
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)
    weighted = loss(labels, logits, sample_weight=[1.0, 0.0, 2.0], mask=MASK).numpy()
    weights = MASK * np.array([[1.0], [0.0], [2.0]])
    scale = 15 / 11 if reduction in ("sum_over_batch_size", "mean") else 1.0
    expected_weighted = {
        "sum": (per_step * weights).sum(),
        "none": per_step * weights,
    }.get(reduction, (per_step * weights * scale).sum() / 15)
    np.testing.assert_allclose(weighted, expected_weighted, rtol=1e-5, atol=1e-6)


def test_a_mask_that_does_not_fit_the_losses_is_an_error():
    loss = mk.losses.SparseCategoricalCrossentropy(from_logits=True)
    with pytest.raises(ValueError, match=r"mask has shape \(3, 4\).*losses have shape \(3, 5\)"):
        loss(np.zeros((3, 5), int), np.zeros((3, 5, 4), np.float32), mask=np.ones((3, 4), bool))


def test_global_average_pooling_1d_averages_the_kept_steps_only():
    rng = np.random.default_rng(1)
    x = mk.Tensor(rng.standard_normal((3, 5, 2)).astype(np.float32))
    mask = MASK.copy()
    mask[1] = False  # a sample with nothing kept pools to zeros
    pooling = layers.GlobalAveragePooling1D()
    with mk.GradientTape() as tape:
        tape.watch(x)
        pooled = pooling(x, mask=mask)
    values = x.numpy()
    for sample in (0, 2):
        np.testing.assert_allclose(pooled.numpy()[sample], values[sample][mask[sample]].mean(0))
    np.testing.assert_array_equal(pooled.numpy()[1], [0.0, 0.0])
    # d(sum of outputs)/dx: 1 / kept at each kept step, 0 elsewhere.
    kept = np.maximum(mask.sum(axis=1, keepdims=True), 1)
    expected = np.broadcast_to((mask / kept)[..., None], values.shape)
    np.testing.assert_allclose(tape.gradient(pooled, x).numpy(), expected, rtol=1e-6)
    assert pooling.compute_mask(x, mask) is None
    with pytest.raises(ValueError, match=r"mask must have shape \(batch, steps\) \(3, 5\)"):
        pooling(x, mask=np.ones((3, 4), bool))


def test_embedding_then_average_pooling_gives_each_sample_its_unpadded_result():
    model = mk.Sequential(
        [Embedding(VOCABULARY, WIDTH, mask_zero=True), layers.GlobalAveragePooling1D(), Dense(2)]
    )
    for got, expected in zip(model(IDS).numpy(), per_sample(model)):
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)


def _sequence_model():
    mk.utils.set_random_seed(3)
    model = mk.Sequential(
        [
            Input((5,), dtype="int64"),
            Embedding(VOCABULARY, WIDTH, mask_zero=True),
            LSTM(4, return_sequences=True),
            Dense(VOCABULARY),
        ]
    )
    model.compile(
        "adam", mk.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"]
    )
    return model


def test_evaluate_counts_the_kept_steps_only_in_the_loss_and_the_metrics():
    model = _sequence_model()
    labels = np.random.default_rng(2).integers(0, VOCABULARY, (3, 5))
    loss, accuracy = model.evaluate(IDS, labels, verbose=0)
    logits = model.predict(IDS, verbose=0)
    per_step = _step_losses(logits, labels)
    np.testing.assert_allclose(loss, per_step[MASK].mean(), rtol=1e-5)
    hits = logits.argmax(-1) == labels
    np.testing.assert_allclose(accuracy, hits[MASK].mean(), rtol=1e-6)
    # Targets at padded steps change nothing.
    relabelled = np.where(MASK, labels, (labels + 1) % VOCABULARY)
    np.testing.assert_allclose(model.evaluate(IDS, relabelled, verbose=0), [loss, accuracy])


def test_weighted_metrics_take_per_step_sample_weights_with_the_mask():
    # Weights of shape (batch, steps) meet the (batch, steps) mask: they were reshaped
    # to (batch * steps, 1) and failed to broadcast; (batch, steps, 1) ones are squeezed,
    # as Keras does (they failed to broadcast too).
    model = _sequence_model()
    model.compile(
        "adam",
        mk.losses.SparseCategoricalCrossentropy(from_logits=True),
        weighted_metrics=["accuracy"],
    )
    labels = np.random.default_rng(6).integers(0, VOCABULARY, (3, 5))
    per_step = np.random.default_rng(7).random((3, 5))
    for weights in (per_step, np.array([1.0, 0.5, 2.0]), per_step[..., None]):
        _, accuracy = model.evaluate(IDS, labels, sample_weight=weights, verbose=0)
        hits = model.predict(IDS, verbose=0).argmax(-1) == labels
        w = MASK * (weights.reshape(3, -1) if weights.ndim > 1 else weights[:, None])
        np.testing.assert_allclose(accuracy, (hits * w).sum() / w.sum(), rtol=1e-5)


def test_targets_at_padded_steps_do_not_move_the_weights():
    labels = np.random.default_rng(4).integers(0, VOCABULARY, (3, 5))
    relabelled = np.where(MASK, labels, (labels + 3) % VOCABULARY)
    trained = []
    for targets in (labels, relabelled):
        model = _sequence_model()
        model.fit(IDS, targets, epochs=2, batch_size=3, verbose=0)
        trained.append(model.get_weights())
    for first, second in zip(*trained):
        np.testing.assert_array_equal(first, second)


def test_train_and_test_on_batch_use_the_mask_too():
    labels = np.random.default_rng(5).integers(0, VOCABULARY, (3, 5))
    relabelled = np.where(MASK, labels, (labels + 2) % VOCABULARY)
    model = _sequence_model()
    assert model.test_on_batch(IDS, labels) == pytest.approx(
        model.test_on_batch(IDS, relabelled), rel=1e-6
    )
    twin = _sequence_model()
    model.train_on_batch(IDS, labels)
    twin.train_on_batch(IDS, relabelled)
    for first, second in zip(model.get_weights(), twin.get_weights()):
        np.testing.assert_array_equal(first, second)


def test_custom_metrics_and_losses_without_mask_support_still_work_on_masked_models():
    class WholeSequence(mk.metrics.Metric):  # one value per sample: no per-step weights
        def __init__(self):
            super().__init__(name="whole")
            self.hits, self.count = 0.0, 0

        def update_state(self, y_true, y_pred, sample_weight=None):
            hits = (np.argmax(y_pred, -1) == y_true).all(axis=1)
            self.hits += float(hits.sum())
            self.count += len(hits)

        def result(self):
            return self.hits / max(self.count, 1)

        def reset_state(self):
            self.hits, self.count = 0.0, 0

    class Plain(mk.losses.Loss):  # a __call__ of its own, without mask=
        def __call__(self, y_true, y_pred, sample_weight=None):
            return ops.mean(ops.square(y_pred))

    model = _sequence_model()
    model.compile("adam", Plain(), metrics=[WholeSequence()])
    labels = np.random.default_rng(6).integers(0, 2, (3, 5))
    loss, whole = model.evaluate(IDS, labels, verbose=0)
    np.testing.assert_allclose(loss, np.mean(np.square(model.predict(IDS, verbose=0))), rtol=1e-5)
    assert 0.0 <= whole <= 1.0


def test_a_mask_that_does_not_mark_the_output_is_not_used():
    """A subclass that pools its graph's sequence output leaves that mask behind."""
    ids = Input((5,), dtype="int64")
    steps = Dense(4)(
        LSTM(3, return_sequences=True)(Embedding(VOCABULARY, WIDTH, mask_zero=True)(ids))
    )

    class Pooled(mk.Model):
        def call(self, x, training=None, mask=None):
            return ops.mean(super().call(x, training=training, mask=mask), axis=1)

    model = Pooled(ids, steps)
    model.compile("adam", mk.losses.SparseCategoricalCrossentropy(from_logits=True))
    labels = np.array([0, 1, 2])
    expected = _step_losses(model.predict(IDS, verbose=0), labels).mean()
    np.testing.assert_allclose(model.evaluate(IDS, labels, verbose=0), expected, rtol=1e-5)


def test_a_subclassed_models_compute_mask_is_used():
    class Tagger(mk.Model):
        def __init__(self):
            super().__init__()
            self.embedding = Embedding(VOCABULARY, WIDTH)
            self.out = Dense(VOCABULARY)

        def call(self, x):
            return self.out(self.embedding(x))

        def compute_mask(self, inputs, mask=None):
            return np.asarray(inputs) != 0

    model = Tagger()
    model.compile("adam", mk.losses.SparseCategoricalCrossentropy(from_logits=True))
    labels = np.random.default_rng(7).integers(0, VOCABULARY, (3, 5))
    per_step = _step_losses(model.predict(IDS, verbose=0), labels)
    np.testing.assert_allclose(
        model.evaluate(IDS, labels, verbose=0), per_step[MASK].mean(), rtol=1e-5
    )


def test_a_mask_with_a_trailing_axis_of_one_and_inf_at_masked_steps():
    loss = mk.losses.MeanSquaredError()
    y_pred = np.array([[[1.0], [2.0]], [[3.0], [4.0]]], np.float32)
    value = loss(np.zeros((2, 2, 1)), y_pred, mask=np.array([[[True], [False]], [[True], [True]]]))
    np.testing.assert_allclose(float(value), (1 + 9 + 16) / 3, rtol=1e-6)
    steps = np.array([[[1.0], [np.inf]], [[2.0], [4.0]]], np.float32)
    pooled = layers.GlobalAveragePooling1D()(steps, mask=np.array([[True, False], [True, True]]))
    np.testing.assert_array_equal(pooled.numpy(), [[1.0], [3.0]])


# --------------------------------------------- masks as Keras code meets them (issue #13)

PADDED = np.array([[3, 5, 2, 0, 0], [7, 1, 0, 0, 0], [4, 4, 4, 4, 4]])


@pytest.mark.parametrize(
    "make_rnn",
    [
        lambda: layers.SimpleRNN(3),
        lambda: layers.GRU(3),
        lambda: layers.LSTM(3),
        lambda: layers.Bidirectional(layers.LSTM(3)),
        lambda: layers.LSTM(3, return_sequences=True),
    ],
)
def test_a_padded_batch_gives_each_sequence_its_unpadded_result(make_rnn):
    # Keras's masking guide: padding with mask_zero changes nothing for the real steps.
    mk.utils.set_random_seed(0)
    model = mk.Sequential([layers.Embedding(10, 4, mask_zero=True), make_rnn()])
    padded = model(PADDED).numpy()
    for row, ids in enumerate(PADDED):
        length = int((ids != 0).sum())
        alone = model(ids[None, :length]).numpy()
        expected = alone[0] if alone.ndim == 2 else alone[0]
        got = padded[row] if padded.ndim == 2 else padded[row, :length]
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)


def test_eager_outputs_carry_the_mask_and_the_next_layer_uses_it():
    embedding = layers.Embedding(10, 4, mask_zero=True)
    vectors = embedding(PADDED)
    np.testing.assert_array_equal(np.asarray(vectors._keras_mask), PADDED != 0)
    lstm = layers.LSTM(2)
    automatic = lstm(vectors).numpy()
    explicit = lstm(vectors, mask=PADDED != 0).numpy()
    unmasked = lstm(vectors, mask=np.ones(PADDED.shape, bool)).numpy()
    np.testing.assert_array_equal(automatic, explicit)
    assert not np.allclose(automatic, unmasked)
    # A layer that supports masking passes it on; the RNN's output has no time axis left.
    dense_out = layers.Dense(3)(vectors)
    np.testing.assert_array_equal(np.asarray(dense_out._keras_mask), PADDED != 0)
    assert getattr(automatic, "_keras_mask", None) is None


def test_masks_reach_layers_nested_in_a_subclassed_model():
    class Encoder(mk.Model):
        def __init__(self):
            super().__init__()
            self.embed = layers.Embedding(10, 4, mask_zero=True)
            self.rnn = layers.GRU(3)

        def call(self, ids):
            return self.rnn(self.embed(ids))  # no mask= written: Keras passes it on

    mk.utils.set_random_seed(1)
    encoder = Encoder()
    padded = encoder(PADDED).numpy()
    alone = encoder(PADDED[1:2, :2]).numpy()
    np.testing.assert_allclose(padded[1], alone[0], rtol=1e-5, atol=1e-6)


def test_a_custom_layer_taking_mask_receives_it_from_its_inputs():
    seen = []

    class MaskedMean(layers.Layer):
        def call(self, inputs, mask=None):
            seen.append(mask)
            weights = mk.ops.cast(mask, inputs.dtype)[..., None]
            return mk.ops.sum(inputs * weights, axis=1) / mk.ops.sum(weights, axis=1)

    vectors = layers.Embedding(10, 4, mask_zero=True)(PADDED)
    out = MaskedMean()(vectors).numpy()
    np.testing.assert_array_equal(np.asarray(seen[0]), PADDED != 0)
    np.testing.assert_allclose(out[1], vectors.numpy()[1, :2].mean(axis=0), rtol=1e-6)


def test_multi_head_attention_ignores_padded_value_steps_and_keeps_the_query_mask():
    mk.utils.set_random_seed(2)
    ids = mk.Input((None,), dtype="int32")
    vectors = layers.Embedding(10, 4, mask_zero=True)(ids)
    attended = layers.MultiHeadAttention(num_heads=2, key_dim=2)(vectors, vectors)
    model = mk.Model(ids, attended)
    padded = model(PADDED).numpy()
    alone = model(PADDED[1:2, :2]).numpy()
    # Real query steps see only real value steps: the same as without the padding.
    np.testing.assert_allclose(padded[1, :2], alone[0], rtol=1e-5, atol=1e-6)
    output = model(PADDED)
    np.testing.assert_array_equal(np.asarray(output._keras_mask), PADDED != 0)
    np.testing.assert_array_equal(np.asarray(model.compute_mask(PADDED)), PADDED != 0)


def test_masking_marks_and_zeroes_the_steps_equal_to_mask_value():
    x = np.array([[[1.0, 2.0], [-1.0, -1.0], [3.0, -1.0]]], "float32")
    layer = layers.Masking(mask_value=-1.0)
    out = layer(x)
    np.testing.assert_array_equal(out.numpy(), [[[1.0, 2.0], [0.0, 0.0], [3.0, -1.0]]])
    np.testing.assert_array_equal(np.asarray(out._keras_mask), [[True, False, True]])
    assert layer.compute_output_shape((None, None, 2)) == (None, None, 2)
    assert layers.Masking.from_config(layer.get_config()).mask_value == -1.0


def test_masking_before_an_lstm_skips_the_masked_steps_as_keras_guide_says():
    mk.utils.set_random_seed(0)
    x = np.random.default_rng(0).standard_normal((2, 6, 3)).astype("float32")
    x[0, 4:] = 0.0  # the first sequence has 4 real steps
    model = mk.Sequential([mk.Input((None, 3)), layers.Masking(), layers.LSTM(4)])
    padded = model(x).numpy()
    alone = model(x[:1, :4]).numpy()
    np.testing.assert_allclose(padded[0], alone[0], rtol=1e-5, atol=1e-6)
    assert model.layers[0].output.shape == (None, None, 3)


def test_masking_gradient_flows_to_kept_steps_only():
    x = mk.Tensor(np.array([[[1.0], [0.0], [2.0]]], "float32"))
    with mk.GradientTape() as tape:
        tape.watch(x)
        y = mk.ops.sum(layers.Masking()(x) * 3.0)
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [[[3.0], [0.0], [3.0]]])


class _SumOfPair(Layer):
    """Adds its two inputs and passes their masks on (`supports_masking`), as a Transformer
    decoder called on `[tokens, encoder_outputs]` does."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.supports_masking = True

    def call(self, inputs, mask=None):
        return inputs[0] + inputs[1]


def test_a_layer_of_two_inputs_gives_its_output_the_first_inputs_mask():
    # Keras pairs the outputs with compute_mask's leaves in order: the first input's mask.
    tokens, other = Input((None,), dtype="int32"), Input((None, WIDTH))
    vectors = Embedding(VOCABULARY, WIDTH, mask_zero=True)(tokens)
    logits = Dense(VOCABULARY)(_SumOfPair()([vectors, other]))
    model = mk.Model([tokens, other], logits)
    assert logits._keras_mask.shape == (None, None)
    data = [IDS, np.ones((3, 5, WIDTH), "float32")]
    np.testing.assert_array_equal(model(data)._keras_mask.numpy(), MASK)
    eager = _SumOfPair()([Embedding(VOCABULARY, WIDTH, mask_zero=True)(IDS), data[1]])
    np.testing.assert_array_equal(eager._keras_mask.numpy(), MASK)
    # ... and so the loss counts the kept steps only.
    model.compile("sgd", mk.losses.SparseCategoricalCrossentropy(from_logits=True))
    labels = np.random.default_rng(4).integers(0, VOCABULARY, (3, 5))
    per_step = _step_losses(model.predict(data, verbose=0), labels)
    loss = model.evaluate(data, labels, verbose=0)
    np.testing.assert_allclose(loss, per_step[MASK].mean(), rtol=1e-5)


def test_a_two_input_layers_output_mask_matches_keras():
    keras = pytest.importorskip("keras")
    from keras.src.backend import get_keras_mask

    def build(library):
        class SumOfPair(library.layers.Layer):
            def __init__(self):
                super().__init__()
                self.supports_masking = True

            def call(self, inputs, mask=None):
                return inputs[0] + inputs[1]

        tokens, other = library.Input((None,), dtype="int32"), library.Input((None, WIDTH))
        vectors = library.layers.Embedding(VOCABULARY, WIDTH, mask_zero=True)(tokens)
        masked_second = SumOfPair()([other, vectors])  # the mask of the second input only
        return library.Model([tokens, other], [SumOfPair()([vectors, other]), masked_second])

    data = [IDS, np.ones((3, 5, WIDTH), "float32")]
    theirs = [get_keras_mask(out) for out in build(keras)(data)]
    ours = [getattr(out, "_keras_mask", None) for out in build(mk)(data)]
    np.testing.assert_array_equal(np.asarray(ours[0]), np.asarray(theirs[0]))
    assert theirs[1] is None and ours[1] is None


class _SequenceAndTail(mk.layers.Layer):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.supports_masking = True

    def call(self, x):
        return x, x[:, 1:]


def test_one_mask_goes_to_the_first_of_several_outputs_only():
    # As Keras pairs masks with outputs: the tail (another shape) gets no mask, so a
    # pooling over it runs (it got the (3, 3) mask of a (3, 2, 4) tensor and failed).
    tokens = np.array([[1, 2, 0], [3, 0, 0], [1, 2, 3]])
    embedding = mk.layers.Embedding(10, 4, mask_zero=True)
    sequence, tail = _SequenceAndTail()(embedding(tokens))
    np.testing.assert_array_equal(sequence._keras_mask, tokens != 0)
    assert getattr(tail, "_keras_mask", None) is None
    pooled = mk.layers.GlobalAveragePooling1D()(tail)
    np.testing.assert_allclose(pooled.numpy(), tail.numpy().mean(axis=1), rtol=1e-6)
    x = mk.Input((3,), dtype="int32")
    seq, rest = _SequenceAndTail()(embedding(x))
    model = mk.Model(x, mk.layers.GlobalAveragePooling1D()(rest))
    np.testing.assert_allclose(model(tokens).numpy(), pooled.numpy(), rtol=1e-6)
