"""GroupQueryAttention: values against a numpy reference (shared key/value heads, masks,
causal and sliding windows, gate), equal to MultiHeadAttention with as many key/value heads,
gradients against central differences, symbolic calls, configs, saving and errors."""

import numpy as np
import pytest
from layer_gradients import assert_gradients_match, projection_loss

import minikeras as mk
from minikeras import Input, Model, layers

rng = np.random.default_rng(23)


def project(x, dense):
    out = np.einsum("btm,muh->btuh", x, dense.kernel.numpy())
    return out if dense.bias is None else out + dense.bias.numpy()


def reference(layer, query, value, key=None, allowed=None):
    """Each query head u attends with key/value head u // (query heads / key-value heads)."""
    key = value if key is None else key
    q = project(query, layer.query_dense) / np.sqrt(layer.head_dim)
    k, v = project(key, layer.key_dense), project(value, layer.value_dense)
    repeats = layer.num_query_heads // layer.num_key_value_heads
    k, v = np.repeat(k, repeats, axis=2), np.repeat(v, repeats, axis=2)
    scores = np.einsum("bquh,bkuh->buqk", q, k)
    if allowed is not None:
        scores = np.where(allowed[:, None], scores, -1e9)
    weights = np.exp(scores - scores.max(-1, keepdims=True))
    weights /= weights.sum(-1, keepdims=True)
    if allowed is not None:
        weights = np.where(allowed[:, None], weights, 0.0)
    attended = np.einsum("buqk,bkuh->bquh", weights, v)
    if layer.gate_dense is not None:
        attended = attended / (1 + np.exp(-project(query, layer.gate_dense)))
    out = np.einsum("bquh,uhm->bqm", attended, layer.output_dense.kernel.numpy())
    return out + layer.output_dense.bias.numpy(), weights


def make(**kwargs):
    kwargs = {"head_dim": 3, "num_query_heads": 4, "num_key_value_heads": 2, **kwargs}
    return layers.GroupQueryAttention(bias_initializer="random_normal", **kwargs)


@pytest.mark.parametrize("kv_heads", [1, 2, 4])
def test_matches_the_numpy_reference(kv_heads):
    layer = make(num_key_value_heads=kv_heads)
    query = rng.standard_normal((2, 5, 6)).astype("float32")
    value = rng.standard_normal((2, 3, 6)).astype("float32")
    key = rng.standard_normal((2, 3, 7)).astype("float32")
    out, scores = layer(query, value, key, return_attention_scores=True)
    assert layer.key_dense.kernel.shape == (7, kv_heads, 3)
    expected_out, expected_scores = reference(layer, query, value, key)
    np.testing.assert_allclose(scores.numpy(), expected_scores, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out.numpy(), expected_out, rtol=1e-4, atol=1e-5)
    assert out.dtype == np.float32 and out.shape == (2, 5, 6)


def test_masks_causal_window_and_gate_match_the_reference():
    layer = make(sliding_window=2, use_gate=True)
    query = rng.standard_normal((2, 4, 6)).astype("float32")
    value = rng.standard_normal((2, 4, 6)).astype("float32")
    query_mask = np.array([[True, True, True, False], [True, True, True, True]])
    value_mask = np.array([[True, False, True, True], [True, True, True, False]])
    out, scores = layer(
        query,
        value,
        query_mask=query_mask,
        value_mask=value_mask,
        use_causal_mask=True,
        return_attention_scores=True,
    )
    steps = np.arange(4)
    window = np.abs(steps[:, None] - steps[None, :]) < 2
    allowed = query_mask[:, :, None] & value_mask[:, None, :] & np.tril(window)[None]
    expected_out, expected_scores = reference(layer, query, value, allowed=allowed)
    np.testing.assert_allclose(scores.numpy(), expected_scores, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out.numpy(), expected_out, rtol=1e-4, atol=1e-5)
    # The padded query step attends to nothing: the output bias alone.
    np.testing.assert_allclose(out.numpy()[0, 3], layer.output_dense.bias.numpy(), rtol=1e-5)


def test_an_explicit_key_mask_is_honoured_without_a_key():
    # Keras 3.15 applies key_mask whenever it is given, with key=None too.
    layer = make()
    query = rng.standard_normal((2, 4, 6)).astype("float32")
    value = rng.standard_normal((2, 5, 6)).astype("float32")
    key_mask = np.array([[True, False, True, True, False], [True, True, True, True, False]])
    out, scores = layer(query, value, key_mask=key_mask, return_attention_scores=True)
    expected_out, expected_scores = reference(layer, query, value, allowed=key_mask[:, None])
    np.testing.assert_allclose(scores.numpy(), expected_scores, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out.numpy(), expected_out, rtol=1e-4, atol=1e-5)


def test_the_activity_penalty_covers_each_projection_and_the_outputs():
    # As Keras 3.15: the regularizer is the layer's (its outputs, the scores too when
    # returned) and each projection's, the output projection's repeating the layer's.
    layer = make(activity_regularizer=mk.regularizers.L2(0.1), use_gate=True)
    query = rng.standard_normal((2, 4, 6)).astype("float32")
    value = rng.standard_normal((2, 5, 6)).astype("float32")
    out, scores = layer(query, value, return_attention_scores=True)
    gate = 1 / (1 + np.exp(-project(query, layer.gate_dense)))
    projected = [project(query, layer.query_dense), project(value, layer.key_dense),
                 project(value, layer.value_dense), gate, out.numpy(), out.numpy(),
                 scores.numpy()]  # fmt: skip
    expected = sorted(0.1 * np.sum(np.square(x.astype(np.float64))) / 2 for x in projected)
    np.testing.assert_allclose(sorted(float(loss) for loss in layer.losses), expected, rtol=1e-5)


def test_as_many_key_value_heads_is_multi_head_attention():
    gqa = layers.GroupQueryAttention(3, 2, 2, bias_initializer="random_normal")
    mha = layers.MultiHeadAttention(num_heads=2, key_dim=3)
    query = rng.standard_normal((2, 4, 5)).astype("float32")
    value = rng.standard_normal((2, 6, 5)).astype("float32")
    gqa(query, value)
    mha(query, value)
    for part in ("query", "key", "value"):
        dense = getattr(gqa, f"{part}_dense")
        getattr(mha, f"{part}_kernel").assign(dense.kernel.numpy())
        getattr(mha, f"{part}_bias").assign(dense.bias.numpy())
    mha.output_kernel.assign(gqa.output_dense.kernel.numpy())
    mha.output_bias.assign(gqa.output_dense.bias.numpy())
    np.testing.assert_allclose(
        gqa(query, value).numpy(), mha(query, value).numpy(), rtol=1e-5, atol=1e-6
    )


def test_gradients_match_finite_differences():
    layer = layers.GroupQueryAttention(
        2, 2, 1, use_gate=True, bias_initializer="random_normal", dtype="float64"
    )
    query, value = rng.standard_normal((1, 3, 2)), rng.standard_normal((1, 2, 2))
    layer(query, value)
    variables = list(layer.trainable_weights)
    assert len(variables) == 10
    assert_gradients_match(
        lambda q, v: projection_loss(layer(q, v, use_causal_mask=True)),
        [query, value],
        variables,
        rtol=1e-4,
    )


def test_the_gate_is_built_between_key_and_value_as_keras():
    # Keras's order of the weights, which get_weights, set_weights and its files follow.
    layer = make(use_gate=True)
    x = rng.standard_normal((2, 4, 6)).astype("float32")
    layer(x, x)
    parts = [w.path.split("/")[-2] for w in layer.weights]
    assert (
        parts
        == ["query"] * 2 + ["key"] * 2 + ["gate"] * 2 + ["value"] * 2 + ["attention_output"] * 2
    )


def test_a_trained_keras_model_with_a_gate_loads_and_trains_on(tmp_path):
    keras = pytest.importorskip("keras")
    x = rng.standard_normal((4, 5, 6)).astype("float32")
    y = rng.standard_normal((4, 5, 6)).astype("float32")
    inputs = keras.Input((5, 6))
    attention = keras.layers.GroupQueryAttention(3, 4, 2, use_gate=True, name="gqa")
    theirs = keras.Model(inputs, attention(inputs, inputs))
    theirs.compile(keras.optimizers.Adam(0.01), "mse")
    theirs.train_on_batch(x, y)
    theirs.save(tmp_path / "gqa.keras")
    ours = mk.saving.load_model(tmp_path / "gqa.keras")
    np.testing.assert_allclose(ours.predict(x, verbose=0), theirs.predict(x, verbose=0), atol=1e-5)
    np.testing.assert_allclose(ours.train_on_batch(x, y), theirs.train_on_batch(x, y), rtol=1e-5)


def test_dropout_symbolic_call_and_saving(tmp_path):
    layer = make(dropout=0.5, seed=1)
    x = rng.standard_normal((2, 4, 6)).astype("float32")
    np.testing.assert_array_equal(layer(x, x).numpy(), layer(x, x).numpy())
    assert not np.allclose(layer(x, x, training=True).numpy(), layer(x, x).numpy())
    inputs = Input((None, 6))
    out, scores = make()(inputs, inputs, return_attention_scores=True)
    assert out.shape == (None, None, 6) and scores.shape == (None, 4, None, None)
    model = Model(inputs, out)
    model.save(tmp_path / "gqa.keras")
    loaded = mk.saving.load_model(tmp_path / "gqa.keras")
    np.testing.assert_allclose(loaded.predict(x, verbose=0), model.predict(x, verbose=0))
    config = layer.get_config()
    clone = layers.GroupQueryAttention.from_config(config)
    assert clone.get_config() == config
    assert layers.GroupQueryAttention is layers.GroupedQueryAttention


def test_errors_name_the_layer_and_shapes():
    with pytest.raises(
        ValueError,
        match=r"`num_query_heads` \(4\) must be a multiple of `num_key_value_heads` \(3\)",
    ):
        layers.GroupQueryAttention(2, 4, 3)
    with pytest.raises(ValueError, match="`head_dim` must be a positive int"):
        layers.GroupQueryAttention(0, 4, 2)
    with pytest.raises(ValueError, match="`sliding_window` must be a positive int"):
        layers.GroupQueryAttention(2, 4, 2, sliding_window=0)
    # flash_attention computes the same attention, refusing what Keras refuses.
    with pytest.raises(ValueError, match=r"GroupQueryAttention: dropout \(0.5\) is not supported"):
        layers.GroupQueryAttention(2, 4, 2, dropout=0.5, flash_attention=True)
    flash, plain = make(flash_attention=True, name="fa"), make()
    x = rng.standard_normal((2, 4, 6)).astype("float32")
    flash(x, x)
    plain(x, x)
    flash.set_weights(plain.get_weights())
    np.testing.assert_array_equal(
        flash(x, x, use_causal_mask=True).numpy(), plain(x, x, use_causal_mask=True).numpy()
    )
    with pytest.raises(ValueError, match="'fa': return_attention_scores=True is not supported"):
        flash(x, x, return_attention_scores=True)
    layer = layers.GroupQueryAttention(2, 4, 2, name="g")
    with pytest.raises(
        ValueError,
        match=r"'g' needs query and value with the same known last axis, got shapes "
        r"\(1, 3, 4\) and \(1, 2, 5\)",
    ):
        layer(np.ones((1, 3, 4)), np.ones((1, 2, 5)))
    with pytest.raises(ValueError, match="needs query, value and key of shape"):
        layer(np.ones((3, 4)), np.ones((2, 4)))
    layer(np.ones((1, 3, 4)), np.ones((1, 2, 4)))
    with pytest.raises(
        ValueError,
        match=r"masks that broadcast to .* \(1, 3, 2\), got an attention mask of shape \(1, 3, 3\)",
    ):
        layer(np.ones((1, 3, 4)), np.ones((1, 2, 4)), attention_mask=np.ones((1, 3, 3), bool))
