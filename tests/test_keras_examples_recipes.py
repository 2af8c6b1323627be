"""Gaps keras-io's examples and recipes (Keras 3 versions) ran into, each reproduced small.

Found by running generative/vae, dcgan_overriding_train_step, vision/autoencoder,
siamese_contrastive, supervised-contrastive-learning, token_learner, the nlp
examples and keras_recipes side by side with Keras 3. Each test is our own
minimal model of what an example does, not the example.
"""

import numpy as np
import pytest

import minikeras as keras


def euclidean_distance(vectors):
    x, y = vectors
    return keras.ops.sqrt(keras.ops.sum(keras.ops.square(x - y), axis=1, keepdims=True))


def _siamese_head(k):
    first, second = k.Input((3,)), k.Input((3,))
    distance = k.layers.Lambda(euclidean_distance, output_shape=(1,))([first, second])
    return k.Model([first, second], distance)


def test_config_of_a_lambda_of_an_unregistered_function_rebuilds_with_custom_objects(tmp_path):
    # siamese_contrastive merges its towers with a Lambda of a plain module-level
    # function; the model's get_config describes it, as Keras's does.
    model = _siamese_head(keras)
    config = model.get_config()
    rebuilt = keras.Model.from_config(
        config, custom_objects={"euclidean_distance": euclidean_distance}
    )
    pair = [np.ones((2, 3), "float32"), np.zeros((2, 3), "float32")]
    np.testing.assert_allclose(
        rebuilt.predict(pair, verbose=0), np.full((2, 1), np.sqrt(3.0)), rtol=1e-6
    )
    again = keras.models.model_from_json(
        model.to_json(), custom_objects={"euclidean_distance": euclidean_distance}
    )
    assert again.layers[2].function is euclidean_distance
    with pytest.raises(ValueError, match="euclidean_distance"):
        keras.Model.from_config(config)  # (found by name only: nothing is imported)
    # A file names it as the config does (Keras too), and loads with the same custom_objects.
    model.save(tmp_path / "siamese.keras")
    with pytest.raises(ValueError, match="euclidean_distance.*custom_objects"):
        keras.models.load_model(tmp_path / "siamese.keras")
    loaded = keras.models.load_model(
        tmp_path / "siamese.keras", custom_objects={"euclidean_distance": euclidean_distance}
    )
    np.testing.assert_array_equal(loaded.predict(pair, verbose=0), rebuilt.predict(pair, verbose=0))


def test_config_of_a_lambda_of_an_unregistered_function_matches_keras():
    k = pytest.importorskip("keras")
    theirs = _siamese_head(k).get_config()["layers"][2]["config"]
    ours = _siamese_head(keras).get_config()["layers"][2]["config"]
    assert ours["output_shape"] == tuple(theirs["output_shape"])
    assert theirs["function"]["config"] == ours["function"]["function_name"] == "euclidean_distance"


def test_array_to_img_and_back_in_a_gan_monitor(tmp_path):
    # dcgan_overriding_train_step's GANMonitor saves generated images with
    # keras.utils.array_to_img(...).save(path).
    pytest.importorskip("PIL")
    generated = np.array([[[0.0], [0.25]], [[0.5], [1.0]]], "float32") * 255
    image = keras.utils.array_to_img(generated)
    assert image.mode == "L" and image.size == (2, 2)
    np.testing.assert_array_equal(np.asarray(image), [[0, 63], [127, 255]])  # stretched to [0, 255]
    rgb = keras.utils.array_to_img(np.full((3, 2, 3), 7.0), scale=False)
    assert rgb.mode == "RGB" and rgb.size == (2, 3)
    path = tmp_path / "generated_img_0_0.png"
    keras.utils.save_img(path, generated)
    back = keras.utils.img_to_array(keras.utils.load_img(path, color_mode="grayscale"))
    assert back.dtype == np.float32 and back.shape == (2, 2, 1)
    np.testing.assert_array_equal(back[:, :, 0], [[0, 63], [127, 255]])
    wide = keras.utils.load_img(path, target_size=(4, 6), interpolation="bilinear")
    assert wide.mode == "RGB" and keras.utils.img_to_array(
        wide, data_format="channels_first"
    ).shape == (3, 4, 6)
    assert keras.preprocessing.image.img_to_array is keras.utils.img_to_array
    with pytest.raises(ValueError, match="rank 3"):
        keras.utils.array_to_img(np.zeros((2, 2)))
    with pytest.raises(ValueError, match="channels"):
        keras.utils.array_to_img(np.zeros((2, 2, 2)))
    with pytest.raises(ValueError, match="color_mode"):
        keras.utils.load_img(path, color_mode="cmyk")


@pytest.mark.parametrize("channels", [1, 3, 4])
@pytest.mark.parametrize("scale", [True, False])
def test_image_utils_match_keras(tmp_path, channels, scale):
    k = pytest.importorskip("keras")
    pytest.importorskip("PIL")
    x = np.random.default_rng(channels).uniform(0, 200, (5, 7, channels)).astype("float32")
    ours, theirs = keras.utils.array_to_img(x, scale=scale), k.utils.array_to_img(x, scale=scale)
    assert ours.mode == theirs.mode and ours.size == theirs.size
    np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))
    first = x.transpose(2, 0, 1)
    np.testing.assert_array_equal(
        np.asarray(keras.utils.array_to_img(first, data_format="channels_first")),
        np.asarray(k.utils.array_to_img(first, data_format="channels_first")),
    )
    path = str(tmp_path / "x.png")
    k.utils.save_img(path, x, scale=scale)
    for mode in ("rgb", "rgba", "grayscale"):
        for size, keep in ((None, False), ((3, 4), False), ((3, 4), True)):
            arguments = dict(color_mode=mode, target_size=size, keep_aspect_ratio=keep)
            ours = keras.utils.img_to_array(keras.utils.load_img(path, **arguments))
            theirs = k.utils.img_to_array(k.utils.load_img(path, **arguments))
            assert ours.dtype == theirs.dtype
            np.testing.assert_array_equal(ours, theirs)


def test_top_level_base_classes_as_in_keras():
    # keras-io code subclasses keras.Loss / keras.Metric, makes keras.InputSpec,
    # and checks isinstance(x, keras.KerasTensor).
    class Halved(keras.Loss):
        def call(self, y_true, y_pred):
            return keras.ops.mean(keras.ops.abs(y_true - y_pred), axis=-1) / 2

    assert float(Halved()(np.zeros((2, 1)), np.full((2, 1), 4.0))) == 2.0
    assert keras.Metric is keras.metrics.Metric and keras.Optimizer is keras.optimizers.Optimizer
    assert isinstance(keras.initializers.Zeros(), keras.Initializer)
    assert isinstance(keras.regularizers.L2(0.1), keras.Regularizer)
    assert keras.InputSpec(ndim=2).ndim == 2
    assert isinstance(keras.Input((2,)), keras.KerasTensor)
    assert not isinstance(keras.ops.ones((2,)), keras.KerasTensor)
    assert keras.version() == keras.__version__


def test_top_level_names_cover_kerass_base_classes():
    k = pytest.importorskip("keras")
    for name in (
        "Loss",
        "Metric",
        "Optimizer",
        "Initializer",
        "Regularizer",
        "InputSpec",
        "KerasTensor",
    ):
        assert isinstance(getattr(keras, name), type) and isinstance(getattr(k, name), type)
    assert isinstance(k.version(), str) and isinstance(keras.version(), str)


def _standardized_conv(k):
    # keras_recipes/subclassing_conv_layers: override only the convolution.
    class StandardizedConv2D(k.layers.Conv2D):
        def convolution_op(self, inputs, kernel):
            kernel = k.ops.convert_to_tensor(kernel)
            mean, var = k.ops.moments(kernel, axes=[0, 1, 2], keepdims=True)
            return super().convolution_op(inputs, (kernel - mean) / k.ops.sqrt(var + 1e-10))

    return StandardizedConv2D


def test_conv_subclass_overriding_convolution_op():
    layer = _standardized_conv(keras)(3, 2, activation="relu", bias_initializer="ones")
    inputs = keras.Input((5, 5, 2))
    model = keras.Model(inputs, layer(inputs))  # the symbolic call runs the override too
    assert model.output_shape == (None, 4, 4, 3)
    x = np.random.default_rng(0).normal(size=(2, 5, 5, 2)).astype("float32")
    kernel = layer.kernel.numpy()
    standardized = (kernel - kernel.mean((0, 1, 2))) / np.sqrt(kernel.var((0, 1, 2)) + 1e-10)
    plain = keras.layers.Conv2D(3, 2, activation="relu", bias_initializer="ones")
    plain.build(x.shape)
    plain.kernel.assign(standardized)
    np.testing.assert_allclose(model.predict(x, verbose=0), plain(x).numpy(), rtol=1e-5, atol=1e-5)
    assert layer.convolution_op(x, layer.kernel).shape == (2, 4, 4, 3)  # no bias, no relu
    np.testing.assert_allclose(
        layer.convolution_op(x, layer.kernel).numpy(),
        keras.layers.Conv2D.convolution_op(plain, x, plain.kernel).numpy(),
        rtol=1e-5,
        atol=1e-5,
    )


def test_conv_subclass_overriding_convolution_op_matches_keras():
    k = pytest.importorskip("keras")
    x = np.random.default_rng(1).normal(size=(2, 6, 6, 2)).astype("float32")
    ours, theirs = (
        _standardized_conv(keras)(4, 3, strides=2),
        _standardized_conv(k)(4, 3, strides=2),
    )
    theirs.build(x.shape)
    ours.build(x.shape)
    ours.set_weights([w + 0.1 for w in theirs.get_weights()])
    theirs.set_weights(ours.get_weights())
    np.testing.assert_allclose(
        ours(x).numpy(), k.ops.convert_to_numpy(theirs(x)), rtol=1e-4, atol=1e-5
    )


class _LookupEmbedding(keras.layers.Layer):
    # memory_efficient_embeddings' QREmbedding in small: a StringLookup inside a custom layer.
    def __init__(self, vocabulary, **kwargs):
        super().__init__(**kwargs)
        self.lookup = keras.layers.StringLookup(
            vocabulary=vocabulary, mask_token=None, num_oov_indices=0
        )
        self.embedding = keras.layers.Embedding(len(vocabulary), 2, embeddings_initializer="ones")

    def call(self, inputs):
        return self.embedding(self.lookup(inputs))


def test_string_inputs_reach_string_lookups_in_fit_and_predict():
    # memory_efficient_embeddings: keras.Input(shape=(), dtype="string") feeding a
    # StringLookup, trained with fit on a dict of string arrays.
    users, movies = (
        keras.Input(name="user_id", shape=(), dtype="string"),
        keras.Input(name="movie_id", shape=(), dtype="string"),
    )
    assert users.dtype == "str"
    user_vectors = keras.Sequential(
        [
            keras.layers.StringLookup(
                vocabulary=["a", "b", "c"], mask_token=None, num_oov_indices=0
            ),
            keras.layers.Embedding(3, 2),
        ]
    )(users)
    movie_vectors = _LookupEmbedding(["x", "y"])(movies)
    score = keras.ops.sum(user_vectors * movie_vectors, axis=1, keepdims=True)
    model = keras.Model([users, movies], score)
    assert model.output_shape == (None, 1)
    data = {
        "user_id": np.array(["a", "c", "b", "a"]),
        "movie_id": np.array(["y", "x", "x", "y"], dtype=object),
    }
    model.compile("sgd", "mse")
    history = model.fit(data, np.ones(4, "float32"), batch_size=2, epochs=1, verbose=0).history
    assert np.isfinite(history["loss"][0])
    table = (
        model.layers[2].layers[1].embeddings.numpy()
    )  # movie vectors stay ones until trained: read users'
    movie_table = model.layers[3].embedding.embeddings.numpy()
    expected = [table[i] @ movie_table[j] for i, j in ((0, 1), (2, 0), (1, 0), (0, 1))]
    np.testing.assert_allclose(model.predict(data, verbose=0)[:, 0], expected, rtol=1e-6)
    assert np.isfinite(model.evaluate(data, np.ones(4), verbose=0))


def test_string_inputs_to_a_model_without_string_layers_are_refused():
    inputs = keras.Input((2,))
    model = keras.Model(inputs, keras.layers.Dense(1)(inputs))
    with pytest.raises(TypeError, match="takes numbers or booleans.*StringLookup"):
        model.predict(np.array([["a", "b"]], dtype=object), verbose=0)
    with pytest.raises(ValueError, match="x must be numeric, got dtype object"):
        model.predict(np.array([[{"a": 1}, 2]], dtype=object), verbose=0)
    with pytest.raises(TypeError, match="not a dtype"):
        keras.Input((2,), dtype="strings")


def test_reading_a_functional_models_layers_keeps_its_replayed_step():
    # Transfer-learning code walks `for layer in model.layers` before fit; the
    # InputLayers that list holds are not weights of the model, nor layers a
    # replayed (compiled) step must refuse.
    inputs = keras.Input((3,))
    model = keras.Model(inputs, keras.layers.Dense(2)(inputs))
    assert [type(layer).__name__ for layer in model.layers] == ["InputLayer", "Dense"]
    assert [layer.name for layer in keras.layers.tracking.tracked_layers(model)] == [
        model.layers[1].name
    ]
    model.compile("sgd", "mse")
    model.fit(np.ones((8, 3)), np.ones((8, 2)), epochs=2, verbose=0)
    assert model._compiled_step.reason is None


def _walk_layers(layer, names):
    # packaging_keras_models_for_wide_distribution walks a model's graph so.
    if hasattr(layer, "layers"):
        for inner in layer.layers:
            _walk_layers(inner, names)
    else:
        names.append(type(layer).__name__)
    return names


def _nested(k):
    inputs = k.Input((4,))
    block = k.Sequential([k.layers.Dense(3), k.layers.Dropout(0.1)])
    return k.Model(inputs, k.layers.Dense(2)(block(inputs)))


def test_only_models_have_layers_so_a_walk_reaches_every_layer():
    assert not hasattr(keras.layers.Dense(2), "layers")
    assert _walk_layers(_nested(keras), []) == ["InputLayer", "Dense", "Dropout", "Dense"]
    assert len(keras.layers.Pipeline([keras.layers.Rescaling(0.5)]).layers) == 1


def test_only_models_have_layers_as_in_keras():
    k = pytest.importorskip("keras")
    assert _walk_layers(_nested(keras), []) == _walk_layers(_nested(k), [])
    assert hasattr(keras.layers.Dense(2), "layers") == hasattr(k.layers.Dense(2), "layers")


def _cross_attention(k, seed):
    # The Perceiver's cross-attention: a latent array of batch 1 attends to a batch of data.
    rng = np.random.default_rng(seed)
    latent = rng.normal(size=(1, 4, 3)).astype("float32")
    data = rng.normal(size=(5, 6, 3)).astype("float32")
    layer = k.layers.Attention(use_scale=True)
    return layer, latent, data


def test_attention_broadcasts_a_query_of_batch_one_over_the_values():
    layer, latent, data = _cross_attention(keras, 0)
    outputs, scores = layer([latent, data, data], return_attention_scores=True)
    assert outputs.shape == (5, 4, 3) and scores.shape == (5, 4, 6)
    logits = np.einsum("qf,bkf->bqk", latent[0], data)
    weights = np.exp(logits - logits.max(-1, keepdims=True))
    weights /= weights.sum(-1, keepdims=True)
    np.testing.assert_allclose(scores.numpy(), weights, rtol=1e-5)
    np.testing.assert_allclose(outputs.numpy(), weights @ data, rtol=1e-5, atol=1e-6)
    assert layer.compute_output_shape([(1, 4, 3), (5, 6, 3)]) == (5, 4, 3)
    assert layer.compute_output_shape([(None, 4, 3), (5, 6, 3)]) == (5, 4, 3)
    with pytest.raises(ValueError, match="broadcastable"):
        layer([np.ones((2, 4, 3)), np.ones((5, 6, 3))])


def test_attention_broadcasting_matches_keras():
    k = pytest.importorskip("keras")
    theirs, latent, data = _cross_attention(k, 1)
    ours = _cross_attention(keras, 1)[0]
    expected = k.ops.convert_to_numpy(theirs([latent, data, data]))
    np.testing.assert_allclose(ours([latent, data, data]).numpy(), expected, rtol=1e-5, atol=1e-6)
