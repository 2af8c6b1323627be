"""Layers where a review against Keras 3 found minikeras apart: merges combine their
inputs' masks, normalization and noise layers pass a mask on, BatchNormalization's batch
statistics leave masked steps out, `Reshape((-1, n))` of an input of unknown size has an
unknown axis, MultiHeadAttention takes its default `attention_axes` written out, and
`Flatten` takes `data_format`.
"""

import numpy as np
import pytest

import minikeras as mk
from minikeras import layers

MASK_A = np.array([[True, True, False, False], [True, True, True, False]])
MASK_B = np.array([[True, False, True, False], [True, True, True, True]])


@pytest.mark.parametrize(
    "cls", [layers.Add, layers.Multiply, layers.Average, layers.Maximum, layers.Minimum]
)
def test_a_merge_keeps_a_step_where_any_masked_input_keeps_it(cls):
    # Keras 3.15's Merge.compute_mask: the masks' logical OR, None once an input has none.
    x = np.ones((2, 4, 3), "float32")
    out = cls()([mk.Tensor(x), mk.Tensor(x)], mask=[MASK_A, MASK_B])
    np.testing.assert_array_equal(np.asarray(out._keras_mask), MASK_A | MASK_B)
    assert cls().compute_mask([x, x], [MASK_A, None]) is None
    assert cls().compute_mask([x, x], [None, None]) is None


def test_concatenate_joins_masks_counting_an_input_without_one_as_kept():
    x = np.ones((2, 4, 3), "float32")
    along_time = layers.Concatenate(axis=1).compute_mask([x, x], [MASK_A, None])
    np.testing.assert_array_equal(along_time, np.concatenate([MASK_A, np.ones((2, 4), bool)], 1))
    along_features = layers.Concatenate().compute_mask([x, x], [MASK_A, MASK_B])
    np.testing.assert_array_equal(along_features, MASK_A | MASK_B)  # (Keras's `any`)


def test_a_functional_residual_add_keeps_the_embedding_mask():
    inputs = layers.Input((4,), dtype="int32")
    embedded = layers.Embedding(5, 3, mask_zero=True)(inputs)
    summed = layers.Add()([embedded, layers.Dense(3)(embedded)])
    model = mk.Model(inputs, layers.GlobalAveragePooling1D()(summed))
    ids = np.array([[1, 2, 0, 0]])
    full = mk.Model(inputs, summed)(ids).numpy()  # (averaged over the two kept steps only)
    np.testing.assert_allclose(model(ids).numpy(), full[:, :2].mean(axis=1), rtol=1e-6)


@pytest.mark.parametrize(
    "make",
    [layers.LayerNormalization, layers.BatchNormalization, lambda: layers.GaussianNoise(0.1)],
)
def test_normalization_and_noise_pass_the_mask_on(make):
    out = make()(np.ones((2, 4, 3), "float32"), mask=MASK_A)
    np.testing.assert_array_equal(np.asarray(out._keras_mask), MASK_A)


def test_batch_normalization_leaves_masked_steps_out_of_its_batch_statistics():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(2, 4, 3)).astype("float32")
    layer = layers.BatchNormalization(momentum=0.0, epsilon=1e-3)
    out = layer(x, training=True, mask=MASK_A).numpy()
    kept = x[MASK_A]  # (5, 3): the steps the mask keeps
    mean, variance = kept.mean(axis=0), kept.var(axis=0)
    np.testing.assert_allclose(layer.moving_mean.numpy(), mean, rtol=1e-5)
    np.testing.assert_allclose(layer.moving_variance.numpy(), variance, rtol=1e-5)
    np.testing.assert_allclose(out, (x - mean) / np.sqrt(variance + 1e-3), rtol=1e-4, atol=1e-5)


def test_reshape_minus_one_of_an_unknown_size_is_unknown():
    assert layers.Reshape((-1, 2)).compute_output_shape((None, None, 4)) == (None, None, 2)
    inputs = layers.Input((None, 4))
    model = mk.Model(inputs, layers.Conv1D(3, 3)(layers.Reshape((-1, 2))(inputs)))
    assert model.predict(np.ones((1, 5, 4), "float32"), verbose=0).shape == (1, 8, 3)


def test_multi_head_attention_takes_the_default_attention_axes_written_out():
    rng = np.random.default_rng(2)
    q, v = (
        rng.normal(size=(2, 5, 4)).astype("float32"),
        rng.normal(size=(2, 3, 4)).astype("float32"),
    )
    default = layers.MultiHeadAttention(2, 3, seed=0)
    written = layers.MultiHeadAttention(2, 3, attention_axes=(1,), seed=0)
    default(q, v)
    written(q, v)
    written.set_weights(default.get_weights())
    np.testing.assert_array_equal(written(q, v).numpy(), default(q, v).numpy())
    assert layers.MultiHeadAttention.from_config(written.get_config()).attention_axes == (1,)
    with pytest.raises(ValueError, match=r"only attention over.*\(1, 2\).*attention_axes=\(2,\)"):
        x = np.ones((1, 2, 3, 4), "float32")
        layers.MultiHeadAttention(2, 3, attention_axes=2)(x, x)


def test_flatten_channels_first_flattens_in_the_channels_last_order():
    x = np.arange(24, dtype="float32").reshape(2, 3, 4)  # (batch, channels, steps)
    out = layers.Flatten(data_format="channels_first")(x).numpy()
    np.testing.assert_array_equal(out, x.transpose(0, 2, 1).reshape(2, 12))
    config = layers.Flatten(data_format="channels_first").get_config()
    assert layers.Flatten.from_config(config).data_format == "channels_first"
    with pytest.raises(ValueError, match="data_format"):
        layers.Flatten(data_format="nchw")


@pytest.mark.parametrize(
    "make, weight",
    [
        (lambda **kw: layers.BatchNormalization(**kw), "gamma"),
        (lambda **kw: layers.LayerNormalization(**kw), "gamma"),
        (lambda **kw: layers.Embedding(5, 3, **kw), "embeddings"),
    ],
    ids=["BatchNormalization", "LayerNormalization", "Embedding"],
)
def test_keras_regularizers_and_constraints_of_normalization_and_embedding(make, weight):
    prefix = "embeddings" if weight == "embeddings" else "gamma"
    layer = make(**{f"{prefix}_regularizer": "l2", f"{prefix}_constraint": "non_neg"})
    x = np.array([[1, 2, 3]]) if weight == "embeddings" else np.ones((2, 3), "float32")
    layer(x)
    variable = getattr(layer, weight)
    penalty = 0.01 * np.sum(variable.numpy() ** 2)
    assert float(sum(float(loss) for loss in layer.losses)) == pytest.approx(penalty, rel=1e-5)
    mk.optimizers.SGD(1.0).apply([np.full(variable.shape, 10.0, "float32")], [variable])
    assert variable.numpy().min() == 0.0  # (the constraint clipped what went negative)
    config = layer.get_config()
    again = type(layer).from_config(config)
    assert again.get_config()[f"{prefix}_regularizer"] == config[f"{prefix}_regularizer"]
