"""Masked attention as Keras 3.15 computes it (on JAX): which rows of scores a mask
empties, what a query step with nothing to attend to outputs, which masks count.

By hand first (numpy, float64): Keras's fused kernel (no scores returned, no
dropout rate) averages the values uniformly over a row every mask empties, its
explicit softmax (scores returned) gives the row zeros; `MultiHeadAttention`
reads only the mask the query carries. Then every mask combination against
`keras` itself (skipped when it is not importable).
"""

import itertools
import warnings

import numpy as np
import pytest

import minikeras as mk
from minikeras.layers import GroupQueryAttention, MultiHeadAttention

rng = np.random.default_rng(5)


def attended_by_hand(layer, query, value, allowed, uniform_empty_rows):
    """MultiHeadAttention's output in float64, a row with nothing allowed uniform or zero."""
    w = {v.name: v.numpy().astype(np.float64) for v in layer.weights}
    q = np.einsum("btd,dnh->btnh", query, w["query/kernel"]) + w["query/bias"]
    k = np.einsum("bsd,dnh->bsnh", value, w["key/kernel"]) + w["key/bias"]
    v = np.einsum("bsd,dnh->bsnh", value, w["value/kernel"]) + w["value/bias"]
    logits = np.einsum("btnh,bsnh->bnts", q, k) / np.sqrt(layer.key_dim)
    logits = np.where(allowed[:, None], logits, -np.inf)
    empty = ~allowed.any(-1)[:, None, :, None]  # (B, 1, T, 1)
    logits = np.where(empty, 0.0, logits)  # a uniform row, until zeroed below
    weights = np.exp(logits - logits.max(-1, keepdims=True))
    weights /= weights.sum(-1, keepdims=True)
    if not uniform_empty_rows:
        weights = np.where(empty, 0.0, weights)
    attended = np.einsum("bnts,bsnh->btnh", weights, v)
    out = np.einsum("btnh,nho->bto", attended, w["attention_output/kernel"])
    return out + w["attention_output/bias"], weights


def padded(tokens, features=4, seed=0):
    """Embedded tokens carrying the mask of their nonzero ids (Embedding(mask_zero=True))."""
    initializer = mk.initializers.RandomNormal(seed=seed)
    embedding = mk.layers.Embedding(9, features, initializer, mask_zero=True)
    return embedding(np.asarray(tokens))


def test_a_padded_query_step_averages_the_values_unless_the_scores_are_returned():
    query = padded([[3, 0, 2]], seed=1)  # its middle step is padding: nothing to attend to
    value = padded([[4, 5, 0, 0]], seed=2)
    layer = MultiHeadAttention(2, 3, bias_initializer="random_normal")
    layer(query, value)
    allowed = np.array([[1, 0, 1]], bool)[:, :, None] & np.array([[1, 1, 0, 0]], bool)[:, None]
    q, v = query.numpy().astype(np.float64), value.numpy().astype(np.float64)
    for scores_too, uniform in ((False, True), (True, False)):
        expected, weights = attended_by_hand(layer, q, v, allowed, uniform)
        got = layer(query, value, return_attention_scores=scores_too)
        out = got[0] if scores_too else got
        np.testing.assert_allclose(out.numpy(), expected, rtol=1e-5, atol=1e-6)
        if scores_too:
            np.testing.assert_allclose(got[1].numpy(), weights, atol=1e-7)
            np.testing.assert_array_equal(out.numpy()[0, 1], layer.output_bias.numpy())
    # The fused path's empty row: the mean of every value step, padded ones too.
    assert not np.allclose(layer(query, value).numpy()[0, 1], layer.output_bias.numpy())


def test_a_dropout_rate_keeps_the_explicit_softmax_even_in_inference():
    query, value = padded([[3, 0]], seed=1), padded([[4, 5, 6]], seed=2)
    layer = MultiHeadAttention(1, 2, dropout=0.5, bias_initializer="random_normal")
    out = layer(query, value, training=False)
    np.testing.assert_array_equal(out.numpy()[0, 1], layer.output_bias.numpy())


def test_group_query_attention_empties_rows_as_keras_does():
    query, value = padded([[3, 0, 2]], seed=1), padded([[4, 5, 0, 0]], seed=2)
    layer = GroupQueryAttention(3, 4, 1, bias_initializer="random_normal")
    out, scores = layer(query, value, return_attention_scores=True)
    fused = layer(query, value)
    np.testing.assert_array_equal(out.numpy()[0, 1], layer.output_dense.bias.numpy())
    np.testing.assert_allclose(fused.numpy()[[0], [0, 2]], out.numpy()[[0], [0, 2]], rtol=1e-6)
    # Uniform weights over the 4 key steps: the mean of the projected values, projected.
    values = np.einsum("bsd,dnh->bsnh", value.numpy(), layer.value_dense.kernel.numpy())
    values = values + layer.value_dense.bias.numpy()
    attended = np.repeat(values.mean(1), 4, axis=1)  # the 4 query heads share one value head
    expected = np.einsum("nh,nho->o", attended[0], layer.output_dense.kernel.numpy())
    expected = expected + layer.output_dense.bias.numpy()
    np.testing.assert_allclose(fused.numpy()[0, 1], expected, rtol=1e-5, atol=1e-6)
    assert np.all(scores.numpy()[0, :, 1] == 0)


def test_an_explicit_query_mask_is_ignored_with_a_warning_as_keras_reads_the_querys_own():
    query = rng.standard_normal((2, 3, 4)).astype("float32")
    value = rng.standard_normal((2, 5, 4)).astype("float32")
    layer = MultiHeadAttention(2, 2)
    plain = layer(query, value).numpy()
    with pytest.warns(UserWarning, match="ignores query_mask"):
        masked = layer(query, value, query_mask=np.array([[1, 0, 1], [0, 0, 1]], bool))
    np.testing.assert_array_equal(masked.numpy(), plain)
    # The mask the query carries still counts.
    carried = padded([[3, 0, 2], [0, 0, 1]], seed=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = layer(carried, value, return_attention_scores=True)[1]
    assert np.all(out.numpy()[0, :, 1] == 0) and np.all(out.numpy()[1, :, :2] == 0)


def _mask_of(tensor):
    mask = getattr(tensor, "_keras_mask", None)
    return None if mask is None else np.asarray(getattr(mask, "numpy", lambda: mask)())


@pytest.mark.parametrize("kind", ["MultiHeadAttention", "GroupQueryAttention"])
def test_the_scores_carry_the_mask_they_were_computed_with_as_kerass_do(kind):
    layer = (
        MultiHeadAttention(2, 3) if kind == "MultiHeadAttention" else GroupQueryAttention(3, 2, 1)
    )
    query = rng.standard_normal((2, 3, 4)).astype("float32")
    value = rng.standard_normal((2, 5, 4)).astype("float32")
    value_mask = np.array([[1, 1, 1, 0, 0], [1, 0, 0, 0, 0]], bool)
    _, scores = layer(query, value, return_attention_scores=True)
    assert _mask_of(scores) is None  # nothing masked
    _, scores = layer(query, value, value_mask=value_mask, return_attention_scores=True)
    np.testing.assert_array_equal(_mask_of(scores), value_mask[:, None, None, :])
    _, scores = layer(query, value, use_causal_mask=True, return_attention_scores=True)
    np.testing.assert_array_equal(_mask_of(scores), np.tril(np.ones((1, 1, 3, 5), bool)))
    out, scores = layer(padded([[3, 0, 2], [1, 1, 0]]), value, return_attention_scores=True)
    query_mask = np.array([[1, 0, 1], [1, 1, 0]], bool)
    np.testing.assert_array_equal(_mask_of(out), query_mask)
    np.testing.assert_array_equal(_mask_of(scores), query_mask[:, None, :, None])
    # A functional model: the symbolic scores have no mask, the model's eager ones do.
    tokens, values = mk.Input((3,), dtype="int32"), mk.Input((5, 4))
    embedded = mk.layers.Embedding(9, 4, mask_zero=True)(tokens)
    out, scores = layer(embedded, values, return_attention_scores=True)
    assert getattr(scores, "_keras_mask", None) is None
    model = mk.Model([tokens, values], [out, scores])
    out, scores = model([np.array([[3, 0, 2], [1, 1, 0]]), value])
    np.testing.assert_array_equal(_mask_of(scores), query_mask[:, None, :, None])


# ---------------------------------------------------------------- against Keras 3


def _masks_cases(batch, steps, sources):
    value_mask = rng.random((batch, sources)) > 0.3
    key_mask = rng.random((batch, sources)) > 0.3
    attention_mask = rng.random((batch, steps, sources)) > 0.3
    chosen = {"value_mask": value_mask, "key_mask": key_mask, "attention_mask": attention_mask}
    for names in [(), *itertools.combinations(chosen, 1), tuple(chosen)]:
        for causal in (False, True):
            yield {name: chosen[name] for name in names}, causal


@pytest.mark.parametrize("kind", ["MultiHeadAttention", "GroupQueryAttention"])
def test_scores_and_outputs_match_keras_under_every_mask(kind):
    keras = pytest.importorskip("keras")
    from keras.src.backend import get_keras_mask

    tokens = np.array([[3, 1, 0, 0], [5, 6, 7, 8], [0, 0, 2, 4]])  # padding right and left
    value_tokens = np.array([[1, 2, 0, 0, 0], [1, 2, 3, 4, 5], [0, 0, 0, 0, 6]])
    theirs_embedding = keras.layers.Embedding(9, 6, mask_zero=True)
    ours_embedding = mk.layers.Embedding(9, 6, mask_zero=True)
    theirs_embedding.build(None)
    ours_embedding.build(None)
    ours_embedding.set_weights(theirs_embedding.get_weights())
    args = (2, 3) if kind == "MultiHeadAttention" else (3, 4, 2)
    theirs = getattr(keras.layers, kind)(*args, bias_initializer="random_normal")
    ours = getattr(mk.layers, kind)(*args)
    theirs(theirs_embedding(tokens), theirs_embedding(value_tokens))
    ours(ours_embedding(tokens), ours_embedding(value_tokens))
    ours.set_weights(theirs.get_weights())
    convert = keras.ops.convert_to_numpy
    for masks, causal in _masks_cases(3, 4, 5):
        for scores_too in (False, True):
            # Fresh inputs each call: Keras's MultiHeadAttention takes the masks off its inputs.
            got = [
                layer(embed(tokens), embed(value_tokens), use_causal_mask=causal,
                      return_attention_scores=scores_too, **masks)
                for layer, embed in ((theirs, theirs_embedding), (ours, ours_embedding))
            ]  # fmt: skip
            if not scores_too:
                got = [(out, None) for out in got]
            (their_out, their_scores), (our_out, our_scores) = got
            where = f"{kind} {sorted(masks)} causal={causal} scores={scores_too}"
            np.testing.assert_allclose(
                our_out.numpy(), convert(their_out), rtol=1e-5, atol=1e-6, err_msg=where
            )
            if scores_too:
                np.testing.assert_allclose(
                    our_scores.numpy(), convert(their_scores), atol=1e-6, err_msg=where
                )
            for their, our in ((their_out, our_out), (their_scores, our_scores)):
                their_mask = None if their is None else get_keras_mask(their)
                if their_mask is None:
                    assert our is None or _mask_of(our) is None, where
                else:
                    np.testing.assert_array_equal(_mask_of(our), convert(their_mask), where)
