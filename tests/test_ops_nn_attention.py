"""`ops.dot_product_attention`: against a per-head loop by hand, gradients, Keras's values
and dtypes (multi-head, grouped-query, masks, bias, causal), and its node through .keras."""

import math

import numpy as np
import pytest
from finite_differences import check_float32, check_gradients, check_second_order
from op_graphs import assert_saves_and_crosses_to_keras

from minikeras import ops

RNG = np.random.default_rng(7)
QUERY = RNG.normal(size=(2, 3, 4, 5)).astype("float32")  # (B, T, N, H)
KEY = RNG.normal(size=(2, 6, 2, 5)).astype("float32")  # (B, S, K, H): two query heads each
VALUE = RNG.normal(size=(2, 6, 2, 5)).astype("float32")
MASK = RNG.random((2, 1, 3, 6)) > 0.4
BIAS = RNG.normal(size=(4, 3, 6)).astype("float32")


def _by_hand(query, key, value, bias=None, mask=None, scale=None, is_causal=False):
    """One head at a time, in float64: the definition written out."""
    batch, steps, heads, size = query.shape
    key_steps, groups = key.shape[1], heads // key.shape[2]
    scale = 1 / math.sqrt(size) if scale is None else scale
    allowed = np.ones((batch, heads, steps, key_steps), bool)
    if mask is not None:
        allowed &= np.broadcast_to(mask, allowed.shape)
    if is_causal:
        allowed &= np.tril(np.ones((steps, key_steps), bool))
    out = np.zeros(query.shape)
    for b in range(batch):
        for n in range(heads):
            logits = query[b, :, n].astype(float) @ key[b, :, n // groups].T * scale
            if bias is not None:
                logits = logits + np.broadcast_to(bias, allowed.shape)[b, n]
            logits = np.where(allowed[b, n], logits, -np.inf)
            if not allowed[b, n].any(axis=-1).all():  # (a row with nothing allowed: uniform)
                logits = np.where(allowed[b, n].any(-1, keepdims=True), logits, 0.0)
            weights = np.exp(logits - logits.max(-1, keepdims=True))
            out[b, :, n] = weights / weights.sum(-1, keepdims=True) @ value[b, :, n // groups]
    return out


CASES = {
    "plain": {},
    "scale": {"scale": 0.3},
    "causal": {"is_causal": True},
    "mask": {"mask": MASK},
    "bias_and_mask_and_causal": {"bias": BIAS, "mask": MASK[0, 0], "is_causal": True},
    "nothing_allowed": {"mask": np.zeros((1, 1, 1, 6), bool)},
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_the_definition_by_hand(name):
    got = ops.dot_product_attention(QUERY, KEY, VALUE, **CASES[name])
    assert got.dtype == np.float32 and got.shape == QUERY.shape
    want = _by_hand(QUERY, KEY, VALUE, **CASES[name])
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=1e-6)


def test_multi_head_and_one_key_head():
    same_heads = ops.dot_product_attention(QUERY, QUERY, QUERY).numpy()
    np.testing.assert_allclose(same_heads, _by_hand(QUERY, QUERY, QUERY), rtol=1e-5, atol=1e-6)
    one = ops.dot_product_attention(QUERY, KEY[:, :, :1], VALUE[:, :, :1]).numpy()
    np.testing.assert_allclose(
        one, _by_hand(QUERY, KEY[:, :, :1], VALUE[:, :, :1]), rtol=1e-5, atol=1e-6
    )


def test_soft_cap_and_flash_attention_arguments():
    capped = ops.dot_product_attention(QUERY, KEY, VALUE, attn_logits_soft_cap=0.5, scale=1.0)
    logits_by_hand = np.einsum("btnh,bsnh->bnts", QUERY, np.repeat(KEY, 2, axis=2))
    capped_by_hand = logits_by_hand / (1 + np.abs(logits_by_hand) / 0.5)
    weights = np.exp(capped_by_hand) / np.exp(capped_by_hand).sum(-1, keepdims=True)
    want = np.einsum("bnts,bsnh->btnh", weights, np.repeat(VALUE, 2, axis=2))
    np.testing.assert_allclose(capped.numpy(), want, rtol=1e-5, atol=1e-6)
    for flash in (True, False):
        flashed = ops.dot_product_attention(QUERY, KEY, VALUE, flash_attention=flash)
        np.testing.assert_array_equal(flashed.numpy(), ops.dot_product_attention(QUERY, KEY, VALUE))


def test_gradients_match_finite_differences():
    def attend(query, key, value, bias):
        return ops.dot_product_attention(
            query, key, value, bias=bias, mask=MASK[:1, :, :2, :3], scale=0.7
        )

    data = [QUERY[:1, :2], KEY[:1, :3], VALUE[:1, :3], BIAS[:, :2, :3]]
    check_gradients(attend, data)
    check_second_order(attend, data)
    check_float32(attend, data)


def test_bad_shapes_are_named():
    with pytest.raises(ValueError, match="dot_product_attention: query, key and value must be 4-D"):
        ops.dot_product_attention(QUERY[0], KEY[0], VALUE[0])
    with pytest.raises(ValueError, match="with N a multiple of K"):
        ops.dot_product_attention(QUERY[:, :, :3], KEY, VALUE)
    with pytest.raises(ValueError, match="with N a multiple of K"):
        ops.dot_product_attention(QUERY, KEY, VALUE[..., :4])
    with pytest.raises(ValueError, match=r"mask of shape \(3, 5\) does not broadcast"):
        ops.dot_product_attention(QUERY, KEY, VALUE, mask=np.ones((3, 5), bool))


def test_the_same_values_and_dtypes_as_keras():
    keras = pytest.importorskip("keras")
    half = [t.astype("float16") for t in (QUERY, KEY, VALUE)]
    cases = [
        ((QUERY, KEY, VALUE), {}), ((QUERY, KEY[:, :, :1], VALUE[:, :, :1]), {}),
        ((QUERY, QUERY, QUERY), {"is_causal": True, "scale": 0.5}),
        ((QUERY, KEY, VALUE), {"mask": MASK, "bias": BIAS}),
        ((QUERY, KEY, VALUE), {"mask": np.zeros((2, 1, 3, 6), bool)}),
        ((QUERY[:, :2], KEY, VALUE), {"mask": MASK[0, 0, :2], "is_causal": True}),
        (tuple(half), {}), ((QUERY, half[1], VALUE), {"flash_attention": False}),
    ]  # fmt: skip
    for args, kwargs in cases:
        theirs = keras.ops.convert_to_numpy(keras.ops.dot_product_attention(*args, **kwargs))
        mine = ops.dot_product_attention(*args, **kwargs).numpy()
        assert mine.dtype == theirs.dtype and mine.shape == theirs.shape, list(kwargs)
        tolerance = 2e-3 if mine.dtype == np.float16 else 1e-5
        np.testing.assert_allclose(mine, theirs, rtol=tolerance, atol=tolerance)


def _graph(lib):
    query = lib.Input((3, 4, 5), name="query")
    key = lib.Input((6, 2, 5), name="key")
    o = lib.ops
    return lib.Model(
        [query, key],
        [
            o.dot_product_attention(query, key, key, is_causal=True),
            o.dot_product_attention(query, key, key * 2.0, mask=MASK[:1], scale=0.5),
        ],
    )


def test_models_of_it_save_and_cross_to_keras(tmp_path):
    assert_saves_and_crosses_to_keras(_graph, [QUERY, KEY], tmp_path, atol=1e-6)
