"""MultiHeadAttention against attention written with explicit loops over heads.

Values with and without masks (given and causal); gradients to the inputs and
all eight weights against central differences in float64; the functional API
with value and mask as inputs of the model; dropout only in training; errors.
"""

import numpy as np
import pytest
from layer_gradients import assert_gradients_match, projection_loss

import minikeras
from minikeras import Model
from minikeras.layers import Dense, Input, MultiHeadAttention

rng = np.random.default_rng(5)


def naive_attention(layer, query, value, key=None, mask=None):
    """Per batch element and head: project, score, mask, softmax, mix, project back."""
    key = value if key is None else key
    w = {v.name: v.numpy().astype(np.float64) for v in layer.weights}
    batch, steps = query.shape[:2]
    output = np.zeros((batch, steps, w["attention_output/kernel"].shape[-1]))
    scores = np.zeros((batch, layer.num_heads, steps, key.shape[1]))
    for b in range(batch):
        for h in range(layer.num_heads):
            q = query[b] @ w["query/kernel"][:, h] + w["query/bias"][h]
            k = key[b] @ w["key/kernel"][:, h] + w["key/bias"][h]
            v = value[b] @ w["value/kernel"][:, h] + w["value/bias"][h]
            logits = q @ k.T / np.sqrt(layer.key_dim)
            if mask is not None:
                logits = np.where(mask[b], logits, -1e9)
            weights = np.exp(logits - logits.max(axis=-1, keepdims=True))
            weights /= weights.sum(axis=-1, keepdims=True)
            if mask is not None:  # a row with nothing allowed gets no weight (Keras's softmax)
                weights = np.where(mask[b], weights, 0.0)
            scores[b, h] = weights
            output[b] += (weights @ v) @ w["attention_output/kernel"][h]
        output[b] += w["attention_output/bias"]
    return output, scores


def randomized(layer, *inputs, **kwargs):
    layer(*inputs, **kwargs)
    for weight in layer.weights:
        weight.assign(rng.standard_normal(weight.shape) * 0.5)
    return layer


def test_self_attention_matches_loops_over_heads():
    x = rng.standard_normal((2, 4, 6)).astype("float32")
    layer = randomized(MultiHeadAttention(num_heads=3, key_dim=2), x, x)
    out, scores = layer(x, x, return_attention_scores=True)
    expected, expected_scores = naive_attention(layer, x, x)
    assert out.dtype == np.float32 and scores.dtype == np.float32
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(scores.numpy(), expected_scores, rtol=1e-4, atol=1e-6)


def test_cross_attention_with_key_value_dim_and_output_shape():
    query = rng.standard_normal((2, 3, 5))
    value, key = rng.standard_normal((2, 2, 4, 7))
    layer = MultiHeadAttention(2, key_dim=3, value_dim=4, output_shape=6, dtype="float64")
    randomized(layer, query, value, key=key)
    assert [w.shape for w in layer.weights] == [
        (5, 2, 3), (2, 3), (7, 2, 3), (2, 3), (7, 2, 4), (2, 4), (2, 4, 6), (6,),
    ]  # fmt: skip
    out = layer(query, value, key)
    np.testing.assert_allclose(out.numpy(), naive_attention(layer, query, value, key)[0], 1e-10)
    assert out.shape == (2, 3, 6) == layer.compute_output_shape((2, 3, 5))


def test_attention_mask_and_causal_mask():
    query = rng.standard_normal((2, 4, 3))
    value = rng.standard_normal((2, 5, 3))
    mask = rng.random((2, 4, 5)) > 0.4
    mask[:, :, 0] = True  # every query sees something
    layer = randomized(MultiHeadAttention(2, 2, dtype="float64"), query, value)
    out, scores = layer(query, value, attention_mask=mask, return_attention_scores=True)
    expected, expected_scores = naive_attention(layer, query, value, mask=mask)
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-10)
    np.testing.assert_allclose(scores.numpy(), expected_scores, rtol=1e-10, atol=1e-300)
    assert np.all(scores.numpy()[np.broadcast_to(~mask[:, None], scores.shape)] == 0)

    causal = np.tril(np.ones((4, 5), dtype=bool))  # query i sees keys <= i (Keras's mask)
    out, scores = layer(query, value, use_causal_mask=True, return_attention_scores=True)
    np.testing.assert_allclose(
        out.numpy(), naive_attention(layer, query, value, mask=[causal] * 2)[0], rtol=1e-10
    )
    both = layer(query, value, attention_mask=mask, use_causal_mask=True)
    np.testing.assert_allclose(
        both.numpy(), naive_attention(layer, query, value, mask=mask & causal)[0], rtol=1e-10
    )


def test_masks_are_float32_safe():
    x = rng.standard_normal((1, 3, 4)).astype("float32") * 100
    layer = MultiHeadAttention(1, 4)
    mask = np.array([[[True, False, False], [False, False, False], [True, True, True]]])
    out, scores = layer(x, x, attention_mask=mask, return_attention_scores=True)
    scores = scores.numpy()
    assert np.all(np.isfinite(out.numpy())) and scores.dtype == np.float32
    np.testing.assert_array_equal(scores[0, 0, 0], [1.0, 0.0, 0.0])
    # Nothing allowed: zero weights, as Keras's masked softmax, so the output is the bias.
    np.testing.assert_array_equal(scores[0, 0, 1], [0.0, 0.0, 0.0])
    np.testing.assert_array_equal(out.numpy()[0, 1], layer.output_bias.numpy())


@pytest.mark.parametrize("masking", ["none", "given", "causal"])
def test_gradients_match_finite_differences(masking):
    query, value, key = rng.standard_normal((3, 2, 3, 4))
    layer = MultiHeadAttention(2, key_dim=2, value_dim=3, dtype="float64")
    randomized(layer, query, value, key=key)
    kwargs = {}
    if masking == "given":
        mask = rng.random((2, 3, 3)) > 0.5
        mask[:, :, 1] = True
        kwargs["attention_mask"] = mask
    elif masking == "causal":
        kwargs["use_causal_mask"] = True

    def loss(q, v, k):
        return projection_loss(layer(q, v, key=k, return_attention_scores=True, **kwargs))

    assert_gradients_match(loss, [query, value, key], layer.weights, rtol=1e-5, atol=1e-8)


def test_attention_over_two_middle_axes_flattens_them():
    query, value = rng.standard_normal((2, 2, 2, 3, 4))
    layer = randomized(MultiHeadAttention(2, 3, dtype="float64"), query, value)
    out, scores = layer(query, value, return_attention_scores=True)
    flat_q, flat_v = query.reshape(2, 6, 4), value.reshape(2, 6, 4)
    expected, expected_scores = naive_attention(layer, flat_q, flat_v)
    np.testing.assert_allclose(out.numpy(), expected.reshape(2, 2, 3, 4), rtol=1e-10)
    assert scores.shape == (2, 2, 2, 3, 2, 3)
    np.testing.assert_allclose(scores.numpy().reshape(2, 2, 6, 6), expected_scores, rtol=1e-10)


def test_functional_model_with_value_and_mask_inputs():
    minikeras.utils.set_random_seed(3)
    query, value = Input(shape=(4, 6)), Input(shape=(5, 3))
    mask = Input(shape=(4, 5), dtype="bool")
    attention = MultiHeadAttention(2, 4)
    attended = attention(query, value, attention_mask=mask)
    model = Model([query, value, mask], Dense(1)(attended))
    assert len(model.weights) == 10 and attended.shape == (None, 4, 6)
    q = rng.standard_normal((3, 4, 6)).astype("float32")
    v = rng.standard_normal((3, 5, 3)).astype("float32")
    m = rng.random((3, 4, 5)) > 0.3
    head = model.layers[-1]
    expected = naive_attention(attention, q, v, mask=m)[0] @ head.kernel.numpy() + head.bias.numpy()
    np.testing.assert_allclose(model([q, v, m]).numpy(), expected, rtol=1e-4, atol=1e-5)
    model.compile(optimizer="adam", loss="mse")
    before = attention.query_kernel.numpy()
    model.fit([q, v, m], np.zeros((3, 4, 1), "float32"), epochs=1, verbose=0)
    assert not np.array_equal(attention.query_kernel.numpy(), before)


def test_dropout_on_scores_only_in_training():
    x = rng.standard_normal((2, 3, 4)).astype("float32")
    layer = MultiHeadAttention(2, 2, dropout=0.5, seed=0)
    plain = MultiHeadAttention.from_config({**layer.get_config(), "dropout": 0.0, "name": "p"})
    plain(x, x)
    layer(x, x)
    plain.set_weights(layer.get_weights())
    np.testing.assert_allclose(layer(x, x).numpy(), plain(x, x).numpy(), rtol=1e-6)
    assert not np.allclose(layer(x, x, training=True).numpy(), plain(x, x).numpy())
    # The returned scores are those before dropout, as in Keras.
    _, scores = layer(x, x, training=True, return_attention_scores=True)
    np.testing.assert_allclose(scores.numpy().sum(-1), 1.0, rtol=1e-6)


def test_config_round_trip():
    layer = MultiHeadAttention(4, 8, value_dim=2, dropout=0.1, use_bias=False,
                               output_shape=(5,), seed=1, name="mha")  # fmt: skip
    clone = MultiHeadAttention.from_config(layer.get_config())
    assert clone.get_config() == layer.get_config()
    x = np.ones((1, 2, 3))
    assert clone(x, x).shape == (1, 2, 5) and len(clone.weights) == 4


def test_errors_name_the_layer_and_shapes():
    with pytest.raises(ValueError, match="`num_heads` must be a positive int"):
        MultiHeadAttention(0, 4)
    with pytest.raises(ValueError, match="`dropout` must be in"):
        MultiHeadAttention(2, 4, dropout=1.0)
    with pytest.raises(ValueError, match="attention_axes must be None or ints"):
        MultiHeadAttention(2, 4, attention_axes=("time",))
    layer = MultiHeadAttention(2, 4, name="att")
    with pytest.raises(TypeError, match="'att'.*missing a required argument: 'value'"):
        layer(np.ones((1, 2, 3)))
    with pytest.raises(ValueError, match=r"'att' needs query of shape .* got shape \(2, 3\)"):
        layer(np.ones((2, 3)), np.ones((2, 3)))
    x = np.ones((2, 3, 4))
    layer(x, x)
    with pytest.raises(ValueError, match=r"one batch size, got shapes \(2, 3, 4\), \(1, 3, 4\)"):
        layer(x, np.ones((1, 3, 4)))
    with pytest.raises(ValueError, match=r"value and key with the same steps"):
        layer(x, x, key=np.ones((2, 5, 4)))
    with pytest.raises(
        ValueError, match=r"built for value with last axis 4, got shape \(2, 3, 7\)"
    ):
        layer(x, np.ones((2, 3, 7)))
    with pytest.raises(
        ValueError, match=r"attention_mask that broadcasts to .* got shape \(2, 2\)"
    ):
        layer(x, x, attention_mask=np.ones((2, 2), bool))
    with pytest.raises(ValueError, match="use_causal_mask needs inputs with one steps axis"):
        layer(np.ones((2, 3, 3, 4)), np.ones((2, 3, 3, 4)), use_causal_mask=True)


def test_return_attention_scores_in_a_masked_functional_model():
    ids = Input((3,), dtype="int32")
    embedded = minikeras.layers.Embedding(10, 4, mask_zero=True)(ids)
    out, scores = minikeras.layers.MultiHeadAttention(2, 2)(
        embedded, embedded, return_attention_scores=True
    )
    assert out.shape == (None, 3, 4) and scores.shape == (None, 2, 3, 3)
    model = Model(ids, [out, scores])
    out, scores = model.predict(np.array([[1, 2, 0]]), verbose=0)
    assert out.shape == (1, 3, 4) and np.all(scores[0, :, :2, 2] < 1e-6)


def test_kernels_take_keras_315s_fans():
    # Keras 3.15 initializes the (dim, heads, key_dim) kernels with fan_in = dim and
    # fan_out = heads * key_dim (the output kernel: heads * value_dim and dim), not as
    # convolution kernels, whose fans would be 4 and 16 times larger here.
    layer = MultiHeadAttention(num_heads=4, key_dim=16)
    x = np.ones((1, 3, 32), "float32")
    layer(x, x)
    limit = np.sqrt(6 / (32 + 64))  # glorot_uniform, the same for all four kernels
    for kernel in [layer.query_kernel, layer.key_kernel, layer.value_kernel, layer.output_kernel]:
        largest = np.abs(kernel.numpy()).max()
        assert 0.95 * limit < largest <= limit, kernel.name
    assert layer.get_config()["kernel_initializer"]["config"] == {"seed": None}


@pytest.mark.parametrize("key_given", [False, True])
def test_an_explicit_key_mask_is_honoured_without_a_key(key_given):
    # Keras 3.15 applies key_mask whenever it is given, the key being the value or not.
    query = rng.standard_normal((2, 3, 4))
    value = rng.standard_normal((2, 5, 4))
    key_mask = np.array([[1, 0, 1, 1, 0], [1, 1, 1, 1, 0]], bool)
    layer = randomized(MultiHeadAttention(2, 3, dtype="float64"), query, value)
    key = value if key_given else None
    out, scores = layer(query, value, key, key_mask=key_mask, return_attention_scores=True)
    expected, expected_scores = naive_attention(layer, query, value, mask=key_mask[:, None])
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-10)
    np.testing.assert_allclose(scores.numpy(), expected_scores, rtol=1e-10, atol=1e-300)
