"""Keras 3's masking guide (keras-io `guides/keras_core/understanding_masking_and_padding.py`)
run on minikeras with the fewest edits, and the ops it and the subclassing guide use.

The tests that compare with Keras itself skip when it is not importable.
"""

import numpy as np
import pytest

import minikeras as keras
from minikeras import layers, ops

RAW_INPUTS = [[711, 632, 71], [73, 8, 3215, 55, 927], [83, 91, 1, 645, 1253, 927]]
LENGTHS = [3, 5, 6]


def _padded():
    return keras.utils.pad_sequences(RAW_INPUTS, padding="post")


def _expected_mask():
    return np.arange(6)[None, :] < np.array(LENGTHS)[:, None]


def test_masking_guide_mask_generating_layers():
    padded_inputs = _padded()
    assert padded_inputs.shape == (3, 6) and padded_inputs[0, 3:].tolist() == [0, 0, 0]
    embedding = layers.Embedding(input_dim=5000, output_dim=16, mask_zero=True)
    masked_output = embedding(padded_inputs)
    np.testing.assert_array_equal(ops.convert_to_numpy(masked_output._keras_mask), _expected_mask())

    unmasked_embedding = ops.cast(
        ops.tile(ops.expand_dims(padded_inputs, axis=-1), [1, 1, 10]), dtype="float32"
    )
    assert unmasked_embedding.shape == (3, 6, 10)
    masked_embedding = layers.Masking()(unmasked_embedding)
    np.testing.assert_array_equal(
        ops.convert_to_numpy(masked_embedding._keras_mask), _expected_mask()
    )

    class TemporalSplit(keras.layers.Layer):
        def call(self, inputs):
            return ops.split(inputs, 2, axis=1)

        def compute_mask(self, inputs, mask=None):
            if mask is None:
                return None
            return ops.split(mask, 2, axis=1)

    first_half, second_half = TemporalSplit()(masked_embedding)
    np.testing.assert_array_equal(np.asarray(first_half._keras_mask), _expected_mask()[:, :3])
    np.testing.assert_array_equal(np.asarray(second_half._keras_mask), _expected_mask()[:, 3:])


def test_masking_guide_mask_reaches_the_lstm():
    padded_inputs = _padded()
    embedding = layers.Embedding(input_dim=5000, output_dim=16, mask_zero=True)
    lstm = layers.LSTM(8)
    model = keras.Sequential([embedding, lstm])
    inputs = keras.Input(shape=(None,), dtype="int32")
    functional = keras.Model(inputs, lstm(embedding(inputs)))
    # A masked LSTM skips the padding: each row equals the LSTM run on its own tokens
    # (to float32 rounding: the products differ in shape; an atol, since the random
    # weights, which the tests run before set, can put an output near zero).
    vectors = embedding(padded_inputs).numpy()
    for row, length in enumerate(LENGTHS):
        alone = lstm(vectors[row : row + 1, :length]).numpy()
        close = {"rtol": 1e-5, "atol": 1e-7}
        np.testing.assert_allclose(model(padded_inputs).numpy()[row], alone[0], **close)
        np.testing.assert_allclose(functional(padded_inputs).numpy()[row], alone[0], **close)

    class MyLayer(layers.Layer):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.embedding = layers.Embedding(input_dim=5000, output_dim=16, mask_zero=True)
            self.lstm = layers.LSTM(32)

        def call(self, inputs):
            x = self.embedding(inputs)
            mask = self.embedding.compute_mask(inputs)
            return self.lstm(x, mask=mask)

    x = (np.random.default_rng(0).random((32, 10)) * 100).astype("int32")
    assert MyLayer()(x).shape == (32, 32)


def test_masking_guide_custom_mask_layers_in_functional_models():
    class CustomEmbedding(keras.layers.Layer):
        def __init__(self, input_dim, output_dim, mask_zero=False, **kwargs):
            super().__init__(**kwargs)
            self.input_dim = input_dim
            self.output_dim = output_dim
            self.mask_zero = mask_zero

        def build(self, input_shape):
            self.embeddings = self.add_weight(
                shape=(self.input_dim, self.output_dim),
                initializer="random_normal",
                dtype="float32",
            )

        def call(self, inputs):
            return ops.take(self.embeddings, ops.cast(inputs, "int32"))

        def compute_mask(self, inputs, mask=None):
            if not self.mask_zero:
                return None
            return ops.not_equal(inputs, 0)

    layer = CustomEmbedding(10, 32, mask_zero=True)
    x = np.array([[1, 0, 3], [0, 0, 2]])
    # The guide's take has no axis: it indexes the flattened table (in Keras too).
    np.testing.assert_array_equal(layer(x).numpy(), layer.embeddings.numpy().ravel()[x])
    np.testing.assert_array_equal(np.asarray(layer.compute_mask(x)), x != 0)

    class MyActivation(keras.layers.Layer):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.supports_masking = True

        def call(self, inputs):
            return ops.relu(inputs)

    inputs = keras.Input(shape=(None,), dtype="int32")
    x = layers.Embedding(input_dim=5000, output_dim=16, mask_zero=True)(inputs)
    x = MyActivation()(x)
    assert x._keras_mask.shape == (None, None) and x._keras_mask.dtype == "bool"
    model = keras.Model(inputs, layers.LSTM(32)(x))
    assert model(np.random.default_rng(1).integers(0, 5000, size=(4, 7))).shape == (4, 32)

    class TemporalSoftmax(keras.layers.Layer):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.supports_masking = True

        def call(self, inputs, mask=None):
            assert mask is not None
            broadcast_float_mask = ops.expand_dims(ops.cast(mask, "float32"), -1)
            inputs_exp = ops.exp(inputs) * broadcast_float_mask
            inputs_sum = ops.sum(inputs_exp * broadcast_float_mask, axis=1, keepdims=True)
            return inputs_exp / inputs_sum

    inputs = keras.Input(shape=(None,), dtype="int32")
    x = layers.Embedding(input_dim=10, output_dim=32, mask_zero=True)(inputs)
    x = layers.Dense(1)(x)
    outputs = TemporalSoftmax()(x)  # traced with a mask: its call asserts one
    model = keras.Model(inputs, outputs)
    assert model.output_shape == (None, None, 1)
    tokens = np.array([[3, 1, 0, 0], [4, 5, 6, 0]])
    y = model(tokens).numpy()[..., 0]
    np.testing.assert_array_equal(y == 0, tokens == 0)  # the padding gets no weight
    np.testing.assert_allclose(y.sum(axis=1), [1.0, 1.0], rtol=1e-6)


def test_symbolic_mask_follows_compute_mask():
    inputs = keras.Input(shape=(5, 3))
    assert not hasattr(inputs, "_keras_mask")
    masked = layers.Masking()(inputs)
    assert masked._keras_mask.shape == (None, 5)
    assert not hasattr(layers.Dense(2)(inputs), "_keras_mask")
    # A layer that drops the time axis drops the mask (an LSTM without return_sequences).
    assert getattr(layers.LSTM(2)(masked), "_keras_mask", None) is None
    assert layers.LSTM(2, return_sequences=True)(masked)._keras_mask.shape == (None, 5)


def test_ops_shape_convert_to_numpy_and_tile():
    x = keras.Variable(np.arange(6, dtype="float32").reshape(2, 3))
    assert ops.shape(x) == (2, 3) and ops.shape(np.ones((4,))) == (4,)
    assert ops.shape(keras.Input((None, 4))) == (None, None, 4)
    values = ops.convert_to_numpy(x)
    assert isinstance(values, np.ndarray) and values.dtype == np.float32
    np.testing.assert_array_equal(values, x.numpy())
    assert ops.convert_to_numpy(ops.ones((2,), dtype="int32")).dtype == np.int32
    np.testing.assert_array_equal(ops.tile(x, [2, 1]).numpy(), np.tile(x.numpy(), [2, 1]))
    np.testing.assert_array_equal(ops.tile(x, 2).numpy(), np.tile(x.numpy(), 2))
    with keras.GradientTape() as tape:
        total = ops.sum(ops.tile(x, [1, 2]) * ops.arange(6, dtype="float32"))
    # d/dx[i, j] of sum(tile(x)[i, k] * k): x[i, j] appears at k = j and k = j + 3.
    np.testing.assert_array_equal(tape.gradient(total, x).numpy(), [[3, 5, 7], [3, 5, 7]])
    with pytest.raises(ValueError, match="tile"):
        ops.tile(x, [-1, 1])


def test_ops_match_keras():
    k = pytest.importorskip("keras")
    x = np.arange(6, dtype="float32").reshape(2, 3)
    for repeats in ([2, 1], [1, 1, 2], 3):
        np.testing.assert_array_equal(
            ops.convert_to_numpy(ops.tile(x, repeats)),
            k.ops.convert_to_numpy(k.ops.tile(x, repeats)),
        )
    assert tuple(ops.shape(x)) == tuple(k.ops.shape(x))
    for value in (2.0, [1, 2], x, keras.Variable(x)):
        ours, theirs = ops.convert_to_numpy(value), k.ops.convert_to_numpy(np.asarray(value))
        assert ours.dtype == theirs.dtype
        np.testing.assert_array_equal(ours, theirs)
