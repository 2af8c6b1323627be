"""Attention and AdditiveAttention: values against numpy, masks (query, value, causal, from the
inputs), dropout, gradients against central differences, symbolic calls, configs and errors."""

import numpy as np
import pytest
from layer_gradients import assert_gradients_match, projection_loss

import minikeras as mk
from minikeras import Input, Model, layers

rng = np.random.default_rng(17)


def softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def reference(query, value, key, scores_fn, value_mask=None, query_mask=None, causal=False):
    scores = scores_fn(query, key)
    allowed = np.ones(scores.shape, bool)
    if value_mask is not None:
        allowed &= value_mask[:, None, :]
    if causal:
        allowed &= np.tril(np.ones(scores.shape[-2:], bool))
    weights = softmax(np.where(allowed, scores, scores - 1e9))
    out = weights @ value
    if query_mask is not None:
        out = out * query_mask[..., None]
    return out, weights


def dot_scores(scale=1.0):
    return lambda q, k: scale * q @ np.swapaxes(k, -1, -2)


def concat_scores(weight=1.0, scale=1.0):
    return lambda q, k: weight * np.tanh(scale * (q[:, :, None] + k[:, None])).sum(-1)


def additive_scores(scale):
    return lambda q, k: (scale * np.tanh(q[:, :, None] + k[:, None])).sum(-1)


def qvk(tq=3, tv=4, dim=5, dim_v=2):
    return (
        rng.standard_normal((2, tq, dim)).astype("float32"),
        rng.standard_normal((2, tv, dim_v)).astype("float32"),
        rng.standard_normal((2, tv, dim)).astype("float32"),
    )


def test_dot_attention_by_hand():
    # scores 0 and log 3 give weights 1/4 and 3/4 of values 4 and 8: 7
    query = np.array([[[1.0]]])
    key = np.array([[[0.0], [np.log(3.0)]]])
    value = np.array([[[4.0], [8.0]]])
    out, weights = layers.Attention()([query, value, key], return_attention_scores=True)
    np.testing.assert_allclose(weights.numpy(), [[[0.25, 0.75]]], rtol=1e-6)
    np.testing.assert_allclose(out.numpy(), [[[7.0]]], rtol=1e-6)


@pytest.mark.parametrize("score_mode", ["dot", "concat"])
@pytest.mark.parametrize("use_scale", [False, True])
def test_attention_matches_numpy(score_mode, use_scale):
    query, value, key = qvk()
    layer = layers.Attention(use_scale=use_scale, score_mode=score_mode)
    layer([query, value, key])
    if use_scale:
        layer.scale.assign(np.float32(0.7))
    if score_mode == "concat":
        layer.concat_score_weight.assign(np.float32(1.3))
    out, weights = layer([query, value, key], return_attention_scores=True)
    scale = 0.7 if use_scale else 1.0
    fn = dot_scores(scale) if score_mode == "dot" else concat_scores(1.3, scale)
    expected_out, expected_weights = reference(query, value, key, fn)
    np.testing.assert_allclose(weights.numpy(), expected_weights, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out.numpy(), expected_out, rtol=1e-5, atol=1e-6)
    assert out.dtype == np.float32 and out.shape == (2, 3, 2)


def test_masks_and_causal_mask_match_numpy():
    query, value, key = qvk(tq=4, tv=4)
    query_mask = np.array([[True, True, True, False], [True, False, True, True]])
    value_mask = np.array([[True, False, True, True], [True, True, True, False]])
    for causal in (False, True):
        out, weights = layers.Attention()(
            [query, value, key],
            mask=[query_mask, value_mask],
            use_causal_mask=causal,
            return_attention_scores=True,
        )
        expected_out, expected_weights = reference(
            query, value, key, dot_scores(), value_mask, query_mask, causal
        )
        np.testing.assert_allclose(weights.numpy(), expected_weights, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(out.numpy(), expected_out, rtol=1e-5, atol=1e-6)
        assert np.all(weights.numpy()[0, :, 1] < 1e-6)  # the masked value step
        assert np.all(out.numpy()[0, 3] == 0)  # the masked query step


def test_additive_attention_matches_numpy():
    query, value, key = qvk()
    layer = layers.AdditiveAttention()
    out, weights = layer([query, value, key], return_attention_scores=True)
    assert layer.scale.shape == (5,)
    expected_out, expected_weights = reference(
        query, value, key, additive_scores(layer.scale.numpy())
    )
    np.testing.assert_allclose(weights.numpy(), expected_weights, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out.numpy(), expected_out, rtol=1e-5, atol=1e-6)
    plain = layers.AdditiveAttention(use_scale=False)
    value_mask = np.array([[True] * 3 + [False]] * 2)
    out = plain([query, value, key], mask=[None, value_mask])
    expected, _ = reference(query, value, key, additive_scores(1.0), value_mask)
    assert plain.scale is None
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-5, atol=1e-6)


def test_additive_attention_without_scale_by_hand():
    # query 0, keys 0 and atanh(0.5) in one feature: scores 0 and 0.5
    query = np.zeros((1, 1, 1))
    key = np.array([[[0.0], [np.arctanh(0.5)]]])
    value = np.array([[[1.0], [3.0]]])
    _, weights = layers.AdditiveAttention(use_scale=False)(
        [query, value, key], return_attention_scores=True
    )
    expected = np.exp([0.0, 0.5]) / np.exp([0.0, 0.5]).sum()
    np.testing.assert_allclose(weights.numpy()[0, 0], expected, rtol=1e-6)


@pytest.mark.parametrize(
    "make",
    [lambda: layers.Attention(use_scale=True, score_mode="concat", dtype="float64"),
     lambda: layers.AdditiveAttention(dtype="float64")],
)  # fmt: skip
def test_gradients_match_finite_differences(make):
    layer = make()
    query, value, key = (x.astype(np.float64) for x in qvk(tq=2, tv=3, dim=2, dim_v=2))
    mask = [None, np.array([[True, True, False], [True, True, True]])]
    layer([query, value, key])
    if layer.scale is not None and layer.scale.shape == ():
        layer.scale.assign(0.8)
    variables = list(layer.trainable_weights)
    grads = assert_gradients_match(
        lambda q, v, k: projection_loss(layer([q, v, k], mask=mask)),
        [query, value, key],
        variables,
        rtol=1e-4,
    )
    assert len(grads) == 3 + len(variables)


def test_dropout_only_in_training_and_seeded():
    query, value, key = qvk()
    layer = layers.Attention(dropout=0.5, seed=3)
    _, plain = layer([query, value, key], return_attention_scores=True)
    np.testing.assert_allclose(plain.numpy().sum(-1), 1.0, rtol=1e-6)
    _, dropped = layer([query, value, key], return_attention_scores=True, training=True)
    kept = dropped.numpy() != 0
    assert 0 < kept.mean() < 1
    np.testing.assert_allclose(dropped.numpy()[kept], 2 * plain.numpy()[kept], rtol=1e-5)
    again = layers.Attention(dropout=0.5, seed=3)
    _, repeated = again([query, value, key], return_attention_scores=True, training=True)
    np.testing.assert_array_equal(repeated.numpy(), dropped.numpy())


def test_masks_come_from_the_inputs_in_a_model():
    ids_q, ids_v = Input((3,), dtype="int32"), Input((4,), dtype="int32")
    embed = layers.Embedding(10, 2, mask_zero=True)
    out, weights = layers.Attention()([embed(ids_q), embed(ids_v)], return_attention_scores=True)
    assert out.shape == (None, 3, 2) and weights.shape == (None, 3, 4)
    pooled = layers.GlobalAveragePooling1D()(out)  # uses the query mask the outputs keep
    model = Model([ids_q, ids_v], [out, weights, pooled])
    q, v = np.array([[1, 2, 0]]), np.array([[3, 0, 4, 5]])
    out, weights, pooled = model.predict([q, v], verbose=0)
    assert np.all(weights[0, :, 1] < 1e-6)
    np.testing.assert_array_equal(out[0, 2], [0.0, 0.0])
    np.testing.assert_allclose(pooled[0], out[0, :2].mean(0), rtol=1e-5)


def test_config_round_trip_and_saving(tmp_path):
    for layer in (
        layers.Attention(use_scale=True, score_mode="concat", dropout=0.1, seed=2, name="a"),
        layers.AdditiveAttention(use_scale=False, dropout=0.2, name="b"),
    ):
        clone = type(layer).from_config(layer.get_config())
        assert clone.get_config() == layer.get_config()
    assert "score_mode" not in layers.AdditiveAttention().get_config()
    q, v = Input((3, 4)), Input((5, 4))
    model = Model([q, v], layers.AdditiveAttention()([q, v]))
    x = [rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 5, 4))]
    model.save(tmp_path / "att.keras")
    loaded = mk.saving.load_model(tmp_path / "att.keras")
    np.testing.assert_allclose(loaded.predict(x, verbose=0), model.predict(x, verbose=0))


def test_errors_name_the_layer():
    query, value, key = qvk()
    with pytest.raises(ValueError, match="`score_mode` must be 'dot' or 'concat'"):
        layers.Attention(score_mode="general")
    with pytest.raises(ValueError, match=r"`dropout` must be in \[0, 1\)"):
        layers.AdditiveAttention(dropout=1.0)
    with pytest.raises(
        ValueError, match=r"'a' must be called on a list .* got one tensor of shape \(2, 3, 5\)"
    ):
        layers.Attention(name="a")(query)
    with pytest.raises(ValueError, match="got a list of length 4"):
        layers.Attention()([query, value, key, key])
    with pytest.raises(ValueError, match="takes mask as a list .* got ndarray"):
        layers.Attention()([query, value, key], mask=np.ones((2, 4), bool))
    with pytest.raises(
        ValueError,
        match=r"query and key with the same last axis, got shapes \(2, 3, 5\) and \(2, 4, 2\)",
    ):
        layers.Attention()([query, value])
    with pytest.raises(ValueError, match="value and key with the same steps"):
        layers.Attention()([query, value, key[:, :3]])
    with pytest.raises(ValueError, match=r"shape \(batch, steps, features\)"):
        layers.Attention()([query[0], value[0]])
