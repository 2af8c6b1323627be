"""`ReversibleEmbedding`: lookups and reverse logits by hand, tied and untied, soft cap,
reverse dtype, masks, gradients, configs, and Keras 3 with the same weights (`.keras` files
both ways) when `keras` is installed."""

import os

import numpy as np
import pytest
from finite_differences import check_gradients

import minikeras as mk
from minikeras import layers


def _table(rng, shape=(6, 3)):
    return rng.standard_normal(shape).astype("float32")


def test_reverse_gives_logits_against_the_table():
    layer = layers.ReversibleEmbedding(3, 2)
    layer.build(None)
    layer.embeddings.assign(np.array([[1.0, 0.0], [0.0, 2.0], [1.0, 1.0]]))
    np.testing.assert_array_equal(layer(np.array([2, 1])).numpy(), [[1.0, 1.0], [0.0, 2.0]])
    # (1, 3) . rows: 1, 6, 4
    np.testing.assert_array_equal(layer(np.array([[1.0, 3.0]]), reverse=True).numpy(), [[1, 6, 4]])
    assert [w.name for w in layer.weights] == ["embeddings"]


def test_untied_weights_use_their_own_matrix():
    rng = np.random.default_rng(0)
    layer = layers.ReversibleEmbedding(6, 3, tie_weights=False)
    layer.build(None)
    assert [w.name for w in layer.weights] == ["embeddings", "reverse_embeddings"]
    assert layer.reverse_embeddings.shape == (3, 6) and layer.reverse_embeddings.trainable
    reverse = _table(rng, (3, 6))
    layer.reverse_embeddings.assign(reverse)
    x = rng.standard_normal((2, 5, 3)).astype("float32")
    np.testing.assert_allclose(layer(x, reverse=True).numpy(), x @ reverse, rtol=1e-6)


def test_the_soft_cap_bounds_the_logits():
    layer = layers.ReversibleEmbedding(3, 1, logit_soft_cap=2.0)
    layer.build(None)
    layer.embeddings.assign([[1.0], [10.0], [-100.0]])
    out = layer(np.array([[1.0]], "float32"), reverse=True).numpy()
    np.testing.assert_allclose(out, [[2 * np.tanh(0.5), 2 * np.tanh(5.0), -2.0]], rtol=1e-6)


def test_reverse_dtype_computes_and_returns_in_that_dtype():
    layer = layers.ReversibleEmbedding(4, 2, dtype="float16", reverse_dtype="float32")
    vectors = layer(np.array([[1, 3]]))
    assert vectors.dtype == np.float16
    logits = layer(vectors, reverse=True)
    assert logits.dtype == np.float32
    expected = vectors.numpy().astype("float32") @ layer.embeddings.numpy().astype("float32").T
    np.testing.assert_allclose(logits.numpy(), expected, rtol=1e-6)
    symbolic = layer(mk.Input((None, 2), dtype="float16"), reverse=True)
    assert symbolic.dtype == "float32" and symbolic.shape == (None, None, 4)


def test_masks_come_from_lookups_only():
    layer = layers.ReversibleEmbedding(5, 2, mask_zero=True)
    ids = np.array([[3, 0, 1]])
    vectors = layer(ids)
    np.testing.assert_array_equal(vectors._keras_mask.numpy(), [[True, False, True]])
    assert getattr(layer(vectors, reverse=True), "_keras_mask", None) is None
    inputs = mk.Input((None,), dtype="int32")
    hidden = layer(inputs)
    logits = layer(hidden, reverse=True)
    assert hidden._keras_mask is not None and getattr(logits, "_keras_mask", None) is None


def test_shapes_with_unknown_sizes_and_a_language_model():
    layer = layers.ReversibleEmbedding(7, 4)
    assert layer.compute_output_shape((None, None)) == (None, None, 4)
    assert layer.compute_output_shape((None, None, 4), reverse=True) == (None, None, 7)
    inputs = mk.Input((None,), dtype="int32")
    hidden = layers.Dense(4)(layer(inputs))
    model = mk.Model(inputs, layer(hidden, reverse=True))
    assert model.output_shape == (None, None, 7)
    ids = np.array([[1, 2, 3], [4, 5, 6]])
    assert model.predict(ids, verbose=0).shape == (2, 3, 7)
    assert len(model.weights) == 3  # one shared table, the Dense's kernel and bias


def test_gradients_of_the_reverse_call_match_finite_differences():
    rng = np.random.default_rng(1)
    for tie in (True, False):
        layer = layers.ReversibleEmbedding(
            5, 3, tie_weights=tie, logit_soft_cap=3.0, dtype="float64"
        )
        layer.build(None)
        check_gradients(
            lambda x, layer=layer: layer(x, reverse=True), [rng.standard_normal((2, 3))]
        )


def test_bad_arguments_and_inputs_are_refused():
    with pytest.raises(ValueError, match="logit_soft_cap"):
        layers.ReversibleEmbedding(5, 2, logit_soft_cap=0.0)
    with pytest.raises(ValueError, match="output_dim"):
        layers.ReversibleEmbedding(5, 0)
    layer = layers.ReversibleEmbedding(5, 2)
    with pytest.raises(ValueError, match=r"last axis is output_dim=2, got shape \(1, 3\)"):
        layer(np.ones((1, 3), "float32"), reverse=True)


def test_config_round_trip_and_a_saved_model(tmp_path):
    layer = layers.ReversibleEmbedding(
        6, 3, tie_weights=False, reverse_dtype="float32", logit_soft_cap=5.0, mask_zero=True
    )
    config = layer.get_config()
    assert (config["tie_weights"], config["reverse_dtype"], config["logit_soft_cap"]) == (
        False,
        "float32",
        5.0,
    )
    assert layers.ReversibleEmbedding.from_config(config).get_config() == config
    inputs = mk.Input((None,), dtype="int32")
    model = mk.Model(inputs, layer(layer(inputs), reverse=True))
    model.save(tmp_path / "m.keras")
    loaded = mk.saving.load_model(tmp_path / "m.keras")
    ids = np.array([[1, 2, 0]])
    np.testing.assert_allclose(loaded.predict(ids, verbose=0), model.predict(ids, verbose=0))


def _keras():
    os.environ.setdefault("KERAS_BACKEND", "jax")
    return pytest.importorskip("keras")


@pytest.mark.parametrize(
    "options", [{}, {"tie_weights": False}, {"logit_soft_cap": 0.5, "reverse_dtype": "float32"}]
)
def test_keras_computes_the_same_with_the_same_weights(options):
    keras = _keras()
    rng = np.random.default_rng(2)
    ours = layers.ReversibleEmbedding(6, 3, **options)
    theirs = keras.layers.ReversibleEmbedding(6, 3, **options)
    ours.build(None)
    theirs.build((None, 2))
    assert [w.shape for w in ours.weights] == [tuple(w.shape) for w in theirs.weights]
    for mine, other in zip(ours.weights, theirs.weights):
        value = rng.standard_normal(mine.shape).astype("float32")
        mine.assign(value)
        other.assign(value)
    ids = np.array([[0, 5, 2]])
    np.testing.assert_allclose(ours(ids).numpy(), np.asarray(theirs(ids)))
    x = rng.standard_normal((2, 4, 3)).astype("float32")
    np.testing.assert_allclose(
        ours(x, reverse=True).numpy(), np.asarray(theirs(x, reverse=True)), rtol=1e-5, atol=1e-6
    )
    assert list(ours.get_config()) == [
        k for k in theirs.get_config() if k != "activity_regularizer"
    ]


@pytest.mark.parametrize("tie_weights", [True, False])
def test_keras_files_cross_both_ways(tmp_path, tie_weights):
    keras = _keras()
    rng = np.random.default_rng(3)
    ids = np.array([[1, 4, 0], [2, 2, 3]])

    def build(api):
        inputs = api.Input((None,), dtype="int32")
        layer = api.layers.ReversibleEmbedding(5, 3, tie_weights=tie_weights, mask_zero=True)
        model = api.Model(inputs, layer(layer(inputs), reverse=True))
        return model, layer

    values = [_table(rng, (5, 3)), _table(rng, (3, 5))][: 1 if tie_weights else 2]
    ours, layer = build(mk)
    for variable, value in zip(layer.weights, values):
        variable.assign(value)
    ours.save(tmp_path / "ours.keras")
    loaded = keras.saving.load_model(tmp_path / "ours.keras")
    np.testing.assert_allclose(
        np.asarray(loaded.predict(ids, verbose=0)), ours.predict(ids, verbose=0), atol=1e-5
    )

    theirs, layer = build(keras)
    for variable, value in zip(layer.weights, values):
        variable.assign(value)
    theirs.save(tmp_path / "theirs.keras")
    back = mk.saving.load_model(tmp_path / "theirs.keras")
    np.testing.assert_allclose(
        back.predict(ids, verbose=0), np.asarray(theirs.predict(ids, verbose=0)), atol=1e-5
    )
