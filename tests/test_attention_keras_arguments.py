"""MultiHeadAttention's Keras 3 arguments beyond the projections' sizes.

Weight regularizers and constraints on all four projections, the activity
regularizer on each projection's outputs (as Keras hands it to its four
sub-layers), `sliding_window`, the gate (`use_gate`), `flash_attention` (the
same attention, refusing what Keras refuses), a query step with nothing to
attend to, and the config round trip; then the same layer in Keras 3 (skipped
when `keras` is not importable).
"""

import numpy as np
import pytest
from layer_gradients import assert_gradients_match, projection_loss

import minikeras as mk
from minikeras.layers import MultiHeadAttention

rng = np.random.default_rng(11)


def randomized(layer, query, value, **kwargs):
    layer(query, value, **kwargs)
    for weight in layer.weights:
        weight.assign(rng.standard_normal(weight.shape) * 0.5)
    return layer


def projections(layer, query, value):
    """The four projections' outputs, by hand in float64: q, k, v and the output."""
    w = {v.name: v.numpy().astype(np.float64) for v in layer.weights}
    q = np.einsum("btd,dnh->btnh", query, w["query/kernel"]) + w["query/bias"]
    k = np.einsum("bsd,dnh->bsnh", value, w["key/kernel"]) + w["key/bias"]
    v = np.einsum("bsd,dnh->bsnh", value, w["value/kernel"]) + w["value/bias"]
    logits = np.einsum("btnh,bsnh->bnts", q, k) / np.sqrt(layer.key_dim)
    weights = np.exp(logits - logits.max(-1, keepdims=True))
    weights /= weights.sum(-1, keepdims=True)
    attended = np.einsum("bnts,bsnh->btnh", weights, v)
    out = np.einsum("btnh,nho->bto", attended, w["attention_output/kernel"])
    return q, k, v, out + w["attention_output/bias"]


def test_weight_and_activity_regularizers_cover_all_four_projections():
    query, value = rng.standard_normal((2, 2, 3, 4))
    layer = MultiHeadAttention(
        2, 3, kernel_regularizer=mk.regularizers.L2(0.1), bias_regularizer=mk.regularizers.L1(0.2),
        activity_regularizer=mk.regularizers.L2(0.05), dtype="float64",
    )  # fmt: skip
    randomized(layer, query, value)
    out = layer(query, value)
    kernels = [w.numpy() for w in layer.weights if w.name.endswith("kernel")]
    biases = [w.numpy() for w in layer.weights if w.name.endswith("bias")]
    assert len(kernels) == len(biases) == 4
    weight_penalty = sum(0.1 * np.sum(k**2) for k in kernels)
    weight_penalty += sum(0.2 * np.sum(np.abs(b)) for b in biases)
    parts = projections(layer, query, value)
    np.testing.assert_allclose(out.numpy(), parts[-1], rtol=1e-10)
    activity_penalty = sum(0.05 * np.sum(part**2) / len(part) for part in parts)  # per sample
    # Not on the output alone, as the base Layer would: on all four projections.
    assert layer.activity_regularizer is None
    np.testing.assert_allclose(
        sum(float(loss) for loss in layer.losses), weight_penalty + activity_penalty, rtol=1e-10
    )


def test_constraints_hold_after_an_optimizer_step():
    x = rng.standard_normal((2, 3, 4)).astype("float32")
    layer = MultiHeadAttention(
        2, 3, kernel_constraint="non_neg", bias_constraint=mk.constraints.MaxNorm(0.5, axis=[])
    )
    layer(x, x)
    for weight in layer.weights:
        weight.assign(rng.standard_normal(weight.shape).astype("float32"))
    grads = [np.ones(w.shape, "float32") for w in layer.weights]
    mk.optimizers.SGD(0.1).apply(grads, layer.weights)
    for weight in layer.weights:
        if weight.name.endswith("kernel"):
            assert weight.numpy().min() >= 0, weight.name
        else:
            assert np.abs(weight.numpy()).max() <= 0.5 + 1e-6, weight.name


def test_sliding_window_is_a_band_of_allowed_pairs():
    query, value = rng.standard_normal((2, 2, 5, 3))
    layer = randomized(MultiHeadAttention(2, 2, sliding_window=2, dtype="float64"), query, value)
    band = np.array([[abs(i - j) < 2 for j in range(5)] for i in range(5)])
    out, scores = layer(query, value, return_attention_scores=True)
    plain = MultiHeadAttention.from_config({**layer.get_config(), "sliding_window": None})
    plain(query, value)
    plain.set_weights(layer.get_weights())
    np.testing.assert_allclose(out.numpy(), plain(query, value, attention_mask=band).numpy())
    assert np.all(scores.numpy()[..., ~band] == 0) and np.all(scores.numpy()[..., band] > 0)
    # With the causal mask: the previous step and itself, as Keras composes them.
    causal_band = band & np.tril(np.ones((5, 5), bool))
    np.testing.assert_allclose(
        layer(query, value, use_causal_mask=True).numpy(),
        plain(query, value, attention_mask=causal_band).numpy(),
    )


def test_sliding_window_gradients_match_finite_differences():
    query, value = rng.standard_normal((2, 2, 4, 3))
    layer = randomized(MultiHeadAttention(2, 2, sliding_window=2, dtype="float64"), query, value)

    def loss(q, v):
        return projection_loss(layer(q, v, return_attention_scores=True))

    assert_gradients_match(loss, [query, value], layer.weights, rtol=1e-5, atol=1e-8)


def test_a_query_step_with_nothing_to_attend_to_gives_the_output_bias():
    ids = np.array([[3, 0, 2]])  # the middle step is padding
    embedded = mk.layers.Embedding(5, 4, mask_zero=True)(ids)
    layer = MultiHeadAttention(2, 2, bias_initializer="random_normal")
    out, scores = layer(embedded, embedded, return_attention_scores=True)
    assert np.all(scores.numpy()[0, :, 1] == 0)  # its row: every key step masked
    np.testing.assert_array_equal(out.numpy()[0, 1], layer.output_bias.numpy())
    assert np.all(scores.numpy()[0, :, [0, 2], 1] == 0)  # nobody attends to it
    np.testing.assert_allclose(scores.numpy()[0, :, [0, 2]].sum(-1), 1.0, rtol=1e-6)


def test_config_round_trip_with_the_new_arguments():
    layer = MultiHeadAttention(
        2, 3, sliding_window=3, flash_attention=False, kernel_regularizer="l2",
        bias_regularizer=mk.regularizers.L1(0.3), activity_regularizer="l1",
        kernel_constraint="non_neg", bias_constraint=mk.constraints.MaxNorm(2.0),
        use_gate=False, name="mha",
    )  # fmt: skip
    config = layer.get_config()
    assert config["sliding_window"] == 3 and config["use_gate"] is False
    assert config["activity_regularizer"]["class_name"] == "L1"
    assert config["bias_constraint"]["config"]["max_value"] == 2.0
    clone = MultiHeadAttention.from_config(config)
    assert clone.get_config() == config
    plain = MultiHeadAttention(2, 3).get_config()
    assert plain["kernel_regularizer"] is None and plain["sliding_window"] is None


def gated(layer, query, value):
    """The output with the gate, by hand in float64: each head's attended values times
    sigmoid(query @ gate_kernel + gate_bias), then the output projection."""
    w = {v.path.split("/", 1)[-1]: v.numpy().astype(np.float64) for v in layer.weights}
    q, k, v, _ = projections(layer, query, value)
    logits = np.einsum("btnh,bsnh->bnts", q, k) / np.sqrt(layer.key_dim)
    weights = np.exp(logits - logits.max(-1, keepdims=True))
    weights /= weights.sum(-1, keepdims=True)
    attended = np.einsum("bnts,bsnh->btnh", weights, v)
    gate = 1 / (1 + np.exp(-(np.einsum("btd,dnh->btnh", query, w["kernel"]) + w["bias"])))
    out = np.einsum("btnh,nho->bto", attended * gate, w["attention_output/kernel"])
    return out + w["attention_output/bias"], gate


def test_the_gate_multiplies_each_heads_attended_values_by_a_sigmoid_of_the_query():
    query, value = rng.standard_normal((2, 4, 5)), rng.standard_normal((2, 3, 6))
    layer = randomized(MultiHeadAttention(2, 3, use_gate=True, dtype="float64"), query, value)
    expected, gate = gated(layer, query, value)
    np.testing.assert_allclose(layer(query, value).numpy(), expected, rtol=1e-10)
    assert layer.gate_dense.kernel.shape == (5, 2, 3) and layer.gate_dense.bias.shape == (2, 3)
    # Keras's order (get_weights, set_weights and its files follow it): the gate after the key.
    parts = [w.path.split("/")[-2] for w in layer.weights]
    assert (
        parts
        == ["query"] * 2 + ["key"] * 2 + ["gate"] * 2 + ["value"] * 2 + ["attention_output"] * 2
    )
    assert MultiHeadAttention(2, 3).get_config()["use_gate"] is False
    clone = MultiHeadAttention.from_config(layer.get_config())
    assert clone.use_gate and clone.get_config() == layer.get_config()
    # The gate's penalties join the others: weights, and its (sigmoid) outputs per sample.
    penalized = MultiHeadAttention(
        2, 3, use_gate=True, kernel_regularizer=mk.regularizers.L2(0.1),
        activity_regularizer=mk.regularizers.L1(0.05), dtype="float64",
    )  # fmt: skip
    penalized.build(query.shape, value.shape)
    penalized.set_weights(layer.get_weights())
    penalized(query, value)
    kernels = [w.numpy() for w in penalized.weights if w.name.endswith("kernel")]
    parts = projections(penalized, query, value)
    activity = sum(0.05 * np.sum(np.abs(part)) / 2 for part in parts[:3])
    activity += 0.05 * np.sum(np.abs(gate)) / 2 + 0.05 * np.sum(np.abs(expected)) / 2
    np.testing.assert_allclose(
        sum(float(loss) for loss in penalized.losses),
        sum(0.1 * np.sum(k**2) for k in kernels) + activity,
        rtol=1e-10,
    )


def test_the_gate_over_two_middle_axes_and_without_biases():
    query = rng.standard_normal((2, 3, 2, 4)).astype("float32")
    layer = MultiHeadAttention(2, 3, use_gate=True, use_bias=False, output_shape=(2, 5))
    out = layer(query, query)
    assert out.shape == (2, 3, 2, 2, 5) and layer.gate_dense.bias is None
    assert layer.gate_dense.kernel.shape == (4, 2, 3)
    assert layer(query[:0], query[:0]).shape == (0, 3, 2, 2, 5)  # an empty batch too


def test_the_gate_gradients_match_finite_differences():
    query, value = rng.standard_normal((2, 2, 3, 4))
    layer = randomized(MultiHeadAttention(2, 2, use_gate=True, dtype="float64"), query, value)

    def loss(q, v):
        return projection_loss(layer(q, v, return_attention_scores=True))

    assert_gradients_match(loss, [query, value], layer.weights, rtol=1e-5, atol=1e-8)


def test_flash_attention_computes_the_same_attention_and_refuses_what_keras_refuses():
    query, value = rng.standard_normal((2, 2, 4, 3)).astype("float32")
    plain = MultiHeadAttention(2, 3, bias_initializer="random_normal")
    flash = MultiHeadAttention(2, 3, flash_attention=True, name="fa")
    plain(query, value)
    flash(query, value)
    flash.set_weights(plain.get_weights())
    mask = rng.random((2, 4, 4)) > 0.3
    for kwargs in ({}, {"attention_mask": mask}, {"use_causal_mask": True}):
        np.testing.assert_array_equal(
            flash(query, value, **kwargs).numpy(), plain(query, value, **kwargs).numpy()
        )
    with pytest.raises(ValueError, match="'fa': return_attention_scores=True is not supported"):
        flash(query, value, return_attention_scores=True)
    with pytest.raises(ValueError, match=r"dropout \(0.1\) is not supported with flash_attention"):
        MultiHeadAttention(2, 3, dropout=0.1, flash_attention=True)
    MultiHeadAttention(2, 3, dropout=0.1, flash_attention=False)  # only True refuses
    # A symbolic call asks for no scores yet (Keras refuses them when it runs).
    inputs = mk.Input((4, 3))
    assert len(flash(inputs, inputs, return_attention_scores=True)) == 2
    assert "flash_attention" not in flash.get_config()  # as Keras writes it


def test_arguments_minikeras_does_not_have_are_refused_by_name():
    with pytest.raises(ValueError, match="`sliding_window` must be a positive int"):
        MultiHeadAttention(2, 3, sliding_window=0)
    layer = MultiHeadAttention(2, 3, sliding_window=2, name="att")
    with pytest.raises(ValueError, match="'att': sliding_window needs inputs with one steps axis"):
        layer(np.ones((1, 2, 2, 4)), np.ones((1, 2, 2, 4)))


# ---------------------------------------------------------------- against Keras 3


def _keras_twin(keras, layer, query, value, **kwargs):
    config = {k: v for k, v in layer.get_config().items() if k != "dtype"}
    twin = keras.layers.MultiHeadAttention.from_config(config)
    twin(query, value)
    twin.set_weights(layer.get_weights())
    return twin


def test_against_keras_regularizers_window_and_a_fully_masked_row():
    keras = pytest.importorskip("keras")
    # Three samples: both divide each activity penalty by the batch size.
    query = rng.standard_normal((3, 4, 6)).astype("float32")
    value = rng.standard_normal((3, 5, 6)).astype("float32")
    layer = MultiHeadAttention(
        2, 3, sliding_window=2, kernel_regularizer=mk.regularizers.L2(0.1),
        bias_regularizer="l1", activity_regularizer=mk.regularizers.L2(0.01),
        bias_initializer="random_normal",
    )  # fmt: skip
    layer(query, value)
    twin = _keras_twin(keras, layer, query, value)
    mask = np.ones((3, 4, 5), bool)
    mask[0, 2] = False  # query step 2 attends to nothing
    for kwargs in ({}, {"attention_mask": mask}, {"use_causal_mask": True}):
        ours, our_scores = layer(query, value, return_attention_scores=True, **kwargs)
        theirs, their_scores = twin(query, value, return_attention_scores=True, **kwargs)
        convert = keras.ops.convert_to_numpy
        np.testing.assert_allclose(ours.numpy(), convert(theirs), rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(our_scores.numpy(), convert(their_scores), atol=1e-6)
    # The losses of the latest call: four weight penalties each, four activity penalties.
    their_losses = sum(float(keras.ops.convert_to_numpy(x)) for x in twin.losses)
    our_losses = sum(float(x) for x in layer.losses)
    np.testing.assert_allclose(our_losses, their_losses, rtol=1e-5)
    assert len(layer.losses) == len(twin.losses) == 12


def test_keras_config_of_the_new_arguments_loads_here():
    keras = pytest.importorskip("keras")
    theirs = keras.layers.MultiHeadAttention(
        2, 3, sliding_window=4, kernel_regularizer="l2", activity_regularizer="l1",
        bias_constraint="non_neg", name="mha",
    )  # fmt: skip
    config = {k: v for k, v in theirs.get_config().items() if k != "dtype"}
    ours = MultiHeadAttention.from_config(config)
    assert ours.sliding_window == 4 and ours.kernel_regularizer.l2 == pytest.approx(0.01)
    assert isinstance(ours.bias_constraint, mk.constraints.NonNeg)
    mine = ours.get_config()
    assert set(config) <= set(mine)


def test_kernels_are_drawn_with_keras_fans():
    keras = pytest.importorskip("keras")
    x = np.ones((1, 3, 24), "float32")
    theirs, ours = keras.layers.MultiHeadAttention(3, 8), MultiHeadAttention(3, 8)
    theirs(x, x)
    ours(x, x)
    for mine, their in zip(ours.weights, theirs.weights):
        # Uniform draws with the same limit: their largest values agree to a few percent.
        limits = np.abs(mine.numpy()).max(), np.abs(np.asarray(their)).max()
        np.testing.assert_allclose(*limits, rtol=0.05, err_msg=mine.name)


def _regularized_model(api):
    inputs = api.Input((5, 6))
    attention = api.layers.MultiHeadAttention(
        2, 3, sliding_window=2, kernel_regularizer=api.regularizers.L2(0.1),
        bias_regularizer=api.regularizers.L1(0.2), activity_regularizer=api.regularizers.L2(0.05),
        bias_initializer="random_normal", name="mha",
    )  # fmt: skip
    hidden = attention(inputs, inputs, use_causal_mask=True)
    outputs = api.layers.Dense(6, activity_regularizer=api.regularizers.L1(0.01))(hidden)
    model = api.Model(inputs, outputs)
    model.compile(api.optimizers.SGD(0.1), "mse")
    return model


def test_penalties_in_fit_of_a_functional_model_match_keras():
    # Each call's weight and activity penalties count once, divided as Keras divides
    # them, over batches of several sizes (the last one short) and in evaluate.
    keras = pytest.importorskip("keras")
    x = rng.standard_normal((8, 5, 6)).astype("float32")
    y = rng.standard_normal((8, 5, 6)).astype("float32")
    theirs, ours = _regularized_model(keras), _regularized_model(mk)
    ours.set_weights(theirs.get_weights())
    for size in (8, 3):
        np.testing.assert_allclose(
            ours.train_on_batch(x[:size], y[:size]), theirs.train_on_batch(x[:size], y[:size]),
            rtol=1e-5,
        )  # fmt: skip
    fit = dict(batch_size=3, epochs=2, verbose=0, shuffle=False)
    np.testing.assert_allclose(
        ours.fit(x, y, **fit).history["loss"], theirs.fit(x, y, **fit).history["loss"], rtol=1e-5
    )
    np.testing.assert_allclose(
        ours.evaluate(x, y, batch_size=3, verbose=0),
        theirs.evaluate(x, y, batch_size=3, verbose=0),
        rtol=1e-5,
    )
    for mine, their in zip(ours.get_weights(), theirs.get_weights()):
        np.testing.assert_allclose(mine, their, rtol=1e-4, atol=1e-5)


def test_the_gate_matches_keras_and_its_files_cross_both_ways(tmp_path):
    keras = pytest.importorskip("keras")
    query = rng.standard_normal((3, 4, 6)).astype("float32")
    value = rng.standard_normal((3, 5, 8)).astype("float32")
    for kwargs in ({}, {"use_bias": False, "output_shape": 7}):
        theirs = keras.layers.MultiHeadAttention(2, 3, use_gate=True, **kwargs)
        theirs(query, value)
        ours = MultiHeadAttention(2, 3, use_gate=True, **kwargs)
        ours(query, value)
        assert [w.shape for w in ours.weights] == [tuple(w.shape) for w in theirs.weights]
        ours.set_weights([np.asarray(w) for w in theirs.get_weights()])
        mask = np.ones((3, 4, 5), bool)
        mask[1, :, 2:] = False
        for call in ({}, {"attention_mask": mask}, {"use_causal_mask": True}):
            # With the scores: Keras's explicit path (its fused one wants value_dim == key_dim).
            out, scores = ours(query, value, return_attention_scores=True, **call)
            their_out, their_scores = theirs(query, value, return_attention_scores=True, **call)
            np.testing.assert_allclose(out.numpy(), np.asarray(their_out), rtol=1e-5, atol=1e-6)
            np.testing.assert_allclose(scores.numpy(), np.asarray(their_scores), atol=1e-6)
    self_query = rng.standard_normal((3, 4, 6)).astype("float32")
    x = rng.standard_normal((3, 4, 6)).astype("float32")
    inputs = keras.Input((4, 6))
    attention = keras.layers.MultiHeadAttention(2, 3, use_gate=True, bias_initializer="ones")
    model = keras.Model(inputs, attention(inputs, inputs))
    model.save(tmp_path / "theirs.keras")
    loaded = mk.saving.load_model(tmp_path / "theirs.keras")
    expected = model.predict(self_query, verbose=0)
    np.testing.assert_allclose(loaded.predict(self_query, verbose=0), expected, atol=1e-5)
    loaded.layers[-1].gate_dense.kernel.assign(np.zeros((6, 2, 3), "float32"))
    loaded.save(tmp_path / "ours.keras")
    back = keras.saving.load_model(tmp_path / "ours.keras")
    np.testing.assert_allclose(back.predict(x, verbose=0), loaded.predict(x, verbose=0), atol=1e-5)
    assert not np.allclose(back.predict(x, verbose=0), model.predict(x, verbose=0), atol=1e-3)


def test_flash_attention_refuses_what_keras_refuses():
    keras = pytest.importorskip("keras")
    for lib in (keras.layers, mk.layers):
        with pytest.raises(ValueError, match="[Dd]ropout"):
            lib.MultiHeadAttention(2, 3, dropout=0.2, flash_attention=True)
        with pytest.raises(ValueError, match="[Dd]ropout"):
            lib.GroupQueryAttention(2, 2, 1, dropout=0.2, flash_attention=True)
        layer = lib.MultiHeadAttention(2, 3, flash_attention=True)
        with pytest.raises(ValueError, match="attention scores|return_attention_scores"):
            layer(np.ones((1, 2, 4), "float32"), np.ones((1, 2, 4), "float32"),
                  return_attention_scores=True)  # fmt: skip
        assert "flash_attention" not in layer.get_config()
