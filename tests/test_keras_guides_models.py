"""The code of Keras 3's first guides, run on minikeras with the fewest edits.

Ported from keras-io `guides/keras_core/`: making_new_layers_and_models_via_subclassing,
functional_api and sequential_model (`import minikeras as keras`; datasets replaced
by small random arrays of the same shapes; sizes and epochs cut so each runs in
milliseconds). Each test asserts what the guide asserts or shows: shapes, weight
counts, that training lowers the loss, that a saved model predicts the same.
"""

import numpy as np
import pytest

import minikeras as keras
from minikeras import layers, ops


def _images(rng, n, shape=(28, 28)):
    return rng.integers(0, 256, (n, *shape)).astype("uint8")


# --- making_new_layers_and_models_via_subclassing -----------------------------------


class Linear(keras.layers.Layer):
    def __init__(self, units=32, **kwargs):
        super().__init__(**kwargs)
        self.units = units

    def build(self, input_shape):
        self.w = self.add_weight(
            shape=(input_shape[-1], self.units), initializer="random_normal", trainable=True
        )
        self.b = self.add_weight(shape=(self.units,), initializer="random_normal", trainable=True)

    def call(self, inputs):
        return ops.matmul(inputs, self.w) + self.b

    def get_config(self):
        config = super().get_config()
        config.update({"units": self.units})
        return config


def test_subclassing_guide_weights_and_composition():
    class EagerLinear(keras.layers.Layer):
        def __init__(self, units=32, input_dim=32):
            super().__init__()
            self.w = self.add_weight(
                shape=(input_dim, units), initializer="random_normal", trainable=True
            )
            self.b = self.add_weight(shape=(units,), initializer="zeros", trainable=True)

        def call(self, inputs):
            return ops.matmul(inputs, self.w) + self.b

    linear_layer = EagerLinear(4, 2)
    y = linear_layer(ops.ones((2, 2)))
    assert linear_layer.weights == [linear_layer.w, linear_layer.b]
    np.testing.assert_allclose(y.numpy()[0], linear_layer.w.numpy().sum(axis=0), rtol=1e-6)

    class ComputeSum(keras.layers.Layer):
        def __init__(self, input_dim):
            super().__init__()
            self.total = self.add_weight(initializer="zeros", shape=(input_dim,), trainable=False)

        def call(self, inputs):
            self.total.assign_add(ops.sum(inputs, axis=0))
            return self.total

    my_sum = ComputeSum(2)
    assert my_sum(ops.ones((2, 2))).numpy().tolist() == [2.0, 2.0]
    assert my_sum(ops.ones((2, 2))).numpy().tolist() == [4.0, 4.0]
    assert (len(my_sum.weights), len(my_sum.non_trainable_weights)) == (1, 1)
    assert my_sum.trainable_weights == []

    class MLPBlock(keras.layers.Layer):
        def __init__(self):
            super().__init__()
            self.linear_1 = Linear(32)
            self.linear_2 = Linear(32)
            self.linear_3 = Linear(1)

        def call(self, inputs):
            x = keras.activations.relu(self.linear_1(inputs))
            x = keras.activations.relu(self.linear_2(x))
            return self.linear_3(x)

    mlp = MLPBlock()
    assert mlp(ops.ones(shape=(3, 64))).shape == (3, 1)
    assert (len(mlp.weights), len(mlp.trainable_weights)) == (6, 6)


def test_subclassing_guide_losses_config_and_dropout():
    class ActivityRegularizationLayer(keras.layers.Layer):
        def __init__(self, rate=1e-2):
            super().__init__()
            self.rate = rate

        def call(self, inputs):
            self.add_loss(self.rate * ops.mean(inputs))
            return inputs

    class OuterLayer(keras.layers.Layer):
        def __init__(self):
            super().__init__()
            self.activity_reg = ActivityRegularizationLayer(1e-2)

        def call(self, inputs):
            return self.activity_reg(inputs)

    layer = OuterLayer()
    assert len(layer.losses) == 0
    _ = layer(ops.zeros((1, 1)))
    assert len(layer.losses) == 1
    _ = layer(ops.zeros((1, 1)))
    assert len(layer.losses) == 1

    class OuterLayerWithKernelRegularizer(keras.layers.Layer):
        def __init__(self):
            super().__init__()
            self.dense = keras.layers.Dense(32, kernel_regularizer=keras.regularizers.l2(1e-3))

        def call(self, inputs):
            return self.dense(inputs)

    layer = OuterLayerWithKernelRegularizer()
    _ = layer(ops.zeros((1, 1)))
    expected = 1e-3 * np.sum(layer.dense.kernel.numpy() ** 2)
    np.testing.assert_allclose(float(layer.losses[0]), expected, rtol=1e-5)

    layer = Linear(64)
    config = layer.get_config()
    assert config["units"] == 64 and Linear.from_config(config).units == 64

    class CustomDropout(keras.layers.Layer):
        def __init__(self, rate, **kwargs):
            super().__init__(**kwargs)
            self.rate = rate

        def call(self, inputs, training=None):
            if training:
                return keras.random.dropout(inputs, rate=self.rate)
            return inputs

    dropped = ops.convert_to_numpy(CustomDropout(0.5)(ops.ones((4, 50)), training=True))
    assert set(np.unique(dropped)) <= {0.0, 2.0} and 0 < (dropped == 0).sum() < dropped.size


def test_subclassing_guide_vae_trains_with_its_kl_loss():
    class Sampling(layers.Layer):
        def call(self, inputs):
            z_mean, z_log_var = inputs
            batch = ops.shape(z_mean)[0]
            dim = ops.shape(z_mean)[1]
            epsilon = keras.random.normal(shape=(batch, dim))
            return z_mean + ops.exp(0.5 * z_log_var) * epsilon

    class Encoder(layers.Layer):
        def __init__(self, latent_dim=32, intermediate_dim=64, name="encoder", **kwargs):
            super().__init__(name=name, **kwargs)
            self.dense_proj = layers.Dense(intermediate_dim, activation="relu")
            self.dense_mean = layers.Dense(latent_dim)
            self.dense_log_var = layers.Dense(latent_dim)
            self.sampling = Sampling()

        def call(self, inputs):
            x = self.dense_proj(inputs)
            z_mean = self.dense_mean(x)
            z_log_var = self.dense_log_var(x)
            z = self.sampling((z_mean, z_log_var))
            return z_mean, z_log_var, z

    class Decoder(layers.Layer):
        def __init__(self, original_dim, intermediate_dim=64, name="decoder", **kwargs):
            super().__init__(name=name, **kwargs)
            self.dense_proj = layers.Dense(intermediate_dim, activation="relu")
            self.dense_output = layers.Dense(original_dim, activation="sigmoid")

        def call(self, inputs):
            return self.dense_output(self.dense_proj(inputs))

    class VariationalAutoEncoder(keras.Model):
        def __init__(
            self, original_dim, intermediate_dim=64, latent_dim=32, name="autoencoder", **kwargs
        ):
            super().__init__(name=name, **kwargs)
            self.original_dim = original_dim
            self.encoder = Encoder(latent_dim=latent_dim, intermediate_dim=intermediate_dim)
            self.decoder = Decoder(original_dim, intermediate_dim=intermediate_dim)

        def call(self, inputs):
            z_mean, z_log_var, z = self.encoder(inputs)
            reconstructed = self.decoder(z)
            kl_loss = -0.5 * ops.mean(z_log_var - ops.square(z_mean) - ops.exp(z_log_var) + 1)
            self.add_loss(kl_loss)
            return reconstructed

    keras.utils.set_random_seed(0)
    x_train = _images(np.random.default_rng(0), 128).reshape(128, 784).astype("float32") / 255
    vae = VariationalAutoEncoder(784, 64, 32)
    vae.compile(keras.optimizers.Adam(learning_rate=1e-3), loss=keras.losses.MeanSquaredError())
    history = vae.fit(x_train, x_train, epochs=3, batch_size=64, verbose=0)
    losses = history.history["loss"]
    assert losses[-1] < losses[0]
    assert len(vae.losses) == 1  # the KL term of the last forward pass
    assert vae.count_params() == 107_472  # the guide's summary: 54,400 + 53,072


# --- functional_api ------------------------------------------------------------------


def test_functional_guide_mnist_model_fits_saves_and_reloads(tmp_path):
    inputs = keras.Input(shape=(784,))
    assert (inputs.shape, inputs.dtype) == ((None, 784), "float32")
    x = layers.Dense(64, activation="relu")(inputs)
    x = layers.Dense(64, activation="relu")(x)
    outputs = layers.Dense(10)(x)
    model = keras.Model(inputs=inputs, outputs=outputs, name="mnist_model")
    assert model.count_params() == 55_050

    rng = np.random.default_rng(1)
    x_train = _images(rng, 200).reshape(200, 784).astype("float32") / 255
    y_train = rng.integers(0, 10, 200).astype("uint8")
    model.compile(
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        optimizer=keras.optimizers.RMSprop(),
        metrics=["accuracy"],
    )
    history = model.fit(x_train, y_train, batch_size=64, epochs=2, validation_split=0.2, verbose=0)
    assert set(history.history) == {"loss", "accuracy", "val_loss", "val_accuracy"}
    test_loss, test_accuracy = model.evaluate(x_train[:50], y_train[:50], verbose=0)
    assert 0.0 <= test_accuracy <= 1.0 and test_loss > 0

    predicted = model.predict(x_train[:3], verbose=0)
    model.save(tmp_path / "my_model.keras")
    del model
    model = keras.models.load_model(tmp_path / "my_model.keras")
    np.testing.assert_allclose(model.predict(x_train[:3], verbose=0), predicted, rtol=1e-5)


def _encoder(name):
    encoder_input = keras.Input(shape=(28, 28, 1), name=name)
    x = layers.Conv2D(16, 3, activation="relu")(encoder_input)
    x = layers.Conv2D(32, 3, activation="relu")(x)
    x = layers.MaxPooling2D(3)(x)
    x = layers.Conv2D(32, 3, activation="relu")(x)
    x = layers.Conv2D(16, 3, activation="relu")(x)
    return encoder_input, layers.GlobalMaxPooling2D()(x)


def _decoder_stack(x):
    x = layers.Reshape((4, 4, 1))(x)
    x = layers.Conv2DTranspose(16, 3, activation="relu")(x)
    x = layers.Conv2DTranspose(32, 3, activation="relu")(x)
    x = layers.UpSampling2D(3)(x)
    x = layers.Conv2DTranspose(16, 3, activation="relu")(x)
    return layers.Conv2DTranspose(1, 3, activation="relu")(x)


def test_functional_guide_autoencoders_and_nested_models():
    encoder_input, encoder_output = _encoder("img")
    encoder = keras.Model(encoder_input, encoder_output, name="encoder")
    autoencoder = keras.Model(encoder_input, _decoder_stack(encoder_output), name="autoencoder")
    assert encoder.output_shape == (None, 16) and encoder.count_params() == 18_672
    assert autoencoder.output_shape == (None, 28, 28, 1) and autoencoder.count_params() == 28_241

    encoder_input, encoder_output = _encoder("original_img")
    encoder = keras.Model(encoder_input, encoder_output, name="encoder")
    decoder_input = keras.Input(shape=(16,), name="encoded_img")
    decoder = keras.Model(decoder_input, _decoder_stack(decoder_input), name="decoder")
    autoencoder_input = keras.Input(shape=(28, 28, 1), name="img")
    decoded_img = decoder(encoder(autoencoder_input))
    autoencoder = keras.Model(autoencoder_input, decoded_img, name="autoencoder")
    assert autoencoder.count_params() == 28_241
    assert autoencoder(np.zeros((2, 28, 28, 1), "float32")).shape == (2, 28, 28, 1)
    lines = []
    autoencoder.summary(print_fn=lines.append)  # nested models are rows, as Keras names them
    assert [line.split()[:2] for line in lines if "Functional" in line] == [
        ["encoder", "(Functional)"],
        ["decoder", "(Functional)"],
    ]

    def get_model():
        inputs = keras.Input(shape=(128,))
        return keras.Model(inputs, layers.Dense(1)(inputs))

    model1, model2, model3 = get_model(), get_model(), get_model()
    inputs = keras.Input(shape=(128,))
    outputs = layers.average([model1(inputs), model2(inputs), model3(inputs)])
    ensemble_model = keras.Model(inputs=inputs, outputs=outputs)
    x = np.random.default_rng(2).random((2, 128)).astype("float32")
    mean = (model1(x).numpy() + model2(x).numpy() + model3(x).numpy()) / 3
    np.testing.assert_allclose(ensemble_model(x).numpy(), mean, rtol=1e-5, atol=1e-6)


def test_functional_guide_multi_input_multi_output_model_trains():
    num_tags, num_words, num_departments = 12, 10000, 4
    title_input = keras.Input(shape=(None,), name="title")
    body_input = keras.Input(shape=(None,), name="body")
    tags_input = keras.Input(shape=(num_tags,), name="tags")
    title_features = layers.LSTM(16)(layers.Embedding(num_words, 8)(title_input))
    body_features = layers.LSTM(4)(layers.Embedding(num_words, 8)(body_input))
    x = layers.concatenate([title_features, body_features, tags_input])
    priority_pred = layers.Dense(1, name="priority")(x)
    department_pred = layers.Dense(num_departments, name="department")(x)
    model = keras.Model(
        inputs=[title_input, body_input, tags_input],
        outputs={"priority": priority_pred, "department": department_pred},
    )
    model.compile(
        optimizer=keras.optimizers.RMSprop(1e-3),
        loss=[
            keras.losses.BinaryCrossentropy(from_logits=True),
            keras.losses.CategoricalCrossentropy(from_logits=True),
        ],
        loss_weights=[1.0, 0.2],
    )
    model.compile(
        optimizer=keras.optimizers.RMSprop(1e-2),
        loss={
            "priority": keras.losses.BinaryCrossentropy(from_logits=True),
            "department": keras.losses.CategoricalCrossentropy(from_logits=True),
        },
        loss_weights={"priority": 1.0, "department": 0.2},
    )
    rng = np.random.default_rng(3)
    inputs = {
        "title": rng.integers(num_words, size=(32, 10)),
        "body": rng.integers(num_words, size=(32, 20)),
        "tags": rng.integers(2, size=(32, num_tags)).astype("float32"),
    }
    targets = {
        "priority": rng.random(size=(32, 1)),
        "department": rng.integers(2, size=(32, num_departments)),
    }
    history = model.fit(inputs, targets, epochs=3, batch_size=16, verbose=0).history
    assert set(history) == {"loss", "priority_loss", "department_loss"}
    assert history["loss"][-1] < history["loss"][0]
    total = np.array(history["priority_loss"]) + 0.2 * np.array(history["department_loss"])
    np.testing.assert_allclose(history["loss"], total, rtol=1e-4)


def test_functional_guide_feature_extraction_and_custom_layer_config(tmp_path):
    inputs = keras.Input((8, 8, 3))
    x = layers.Conv2D(4, 3)(inputs)
    small = keras.Model(inputs, layers.Dense(5)(layers.Flatten()(x)))
    features_list = [layer.output for layer in small.layers]  # the InputLayer's first
    feat_extraction_model = keras.Model(inputs=small.input, outputs=features_list)
    features = feat_extraction_model(np.random.random((1, 8, 8, 3)).astype("float32"))
    assert [tuple(f.shape) for f in features] == [(1, 8, 8, 3), (1, 6, 6, 4), (1, 144), (1, 5)]

    class CustomDense(layers.Layer):
        def __init__(self, units=32):
            super().__init__()
            self.units = units

        def build(self, input_shape):
            self.w = self.add_weight(
                shape=(input_shape[-1], self.units), initializer="random_normal", trainable=True
            )
            self.b = self.add_weight(
                shape=(self.units,), initializer="random_normal", trainable=True
            )

        def call(self, inputs):
            return ops.matmul(inputs, self.w) + self.b

        def get_config(self):
            return {"units": self.units}

    inputs = keras.Input((4,))
    model = keras.Model(inputs, CustomDense(10)(inputs))
    config = model.get_config()  # an unregistered custom layer: a config, not a file
    new_model = keras.Model.from_config(config, custom_objects={"CustomDense": CustomDense})
    assert isinstance(new_model.layers[-1], CustomDense) and new_model.output_shape == (None, 10)
    with pytest.raises(ValueError, match="custom_objects"):
        keras.Model.from_config(config)
    # JSON too, as Keras's to_json; and a file, loaded with the same custom_objects.
    text = model.to_json()
    rebuilt = keras.models.model_from_json(text, custom_objects={"CustomDense": CustomDense})
    assert isinstance(rebuilt.layers[-1], CustomDense)
    model.save(tmp_path / "custom.keras")
    with pytest.raises(ValueError, match="'CustomDense'.*custom_objects"):
        keras.models.load_model(tmp_path / "custom.keras")
    loaded = keras.models.load_model(
        tmp_path / "custom.keras", custom_objects={"CustomDense": CustomDense}
    )
    x = np.ones((2, 4), "float32")
    np.testing.assert_array_equal(loaded.predict(x, verbose=0), model.predict(x, verbose=0))


def test_functional_guide_custom_rnn_mixed_with_a_functional_model():
    units, timesteps, input_dim, batch_size = 32, 10, 5, 16
    inputs = keras.Input((None, units))
    classifier = keras.Model(inputs, layers.Dense(1)(layers.GlobalAveragePooling1D()(inputs)))

    class CustomRNN(layers.Layer):
        def __init__(self, classifier):
            super().__init__()
            self.units = units
            self.projection_1 = layers.Dense(units=units, activation="tanh")
            self.projection_2 = layers.Dense(units=units, activation="tanh")
            self.classifier = classifier

        def call(self, inputs):
            outputs = []
            state = ops.zeros(shape=(inputs.shape[0], self.units))
            for t in range(inputs.shape[1]):
                h = self.projection_1(inputs[:, t, :])
                state = h + self.projection_2(state)
                outputs.append(state)
            return self.classifier(ops.stack(outputs, axis=1))

    assert CustomRNN(classifier)(ops.zeros((1, timesteps, input_dim))).shape == (1, 1)
    inputs = keras.Input(batch_shape=(batch_size, timesteps, input_dim))
    x = layers.Conv1D(32, 3)(inputs)
    model = keras.Model(inputs, CustomRNN(layers.Dense(1))(x))
    assert model.output_shape == (16, 8, 1)


# --- sequential_model ----------------------------------------------------------------


def test_sequential_guide_building_and_popping():
    model = keras.Sequential(
        [
            layers.Dense(2, activation="relu", name="layer1"),
            layers.Dense(3, activation="relu", name="layer2"),
            layers.Dense(4, name="layer3"),
        ]
    )
    x = ops.ones((3, 3))
    y = model(x)
    layer1, layer2, layer3 = model.layers
    np.testing.assert_allclose(y.numpy(), layer3(layer2(layer1(x))).numpy(), rtol=1e-6)

    model = keras.Sequential()
    model.add(layers.Dense(2, activation="relu"))
    model.add(layers.Dense(3, activation="relu"))
    model.add(layers.Dense(4))
    model.pop()
    assert len(model.layers) == 2

    layer = layers.Dense(3)
    assert layer.weights == []
    layer(ops.ones((1, 4)))
    assert [tuple(w.shape) for w in layer.weights] == [(4, 3), (3,)]

    model = keras.Sequential([layers.Dense(2, activation="relu"), layers.Dense(4)])
    assert model.weights == []
    model(ops.ones((1, 4)))
    assert len(model.weights) == 4

    model = keras.Sequential()
    model.add(keras.Input(shape=(250, 250, 3)))
    model.add(layers.Conv2D(32, 5, strides=2, activation="relu"))
    model.add(layers.Conv2D(32, 3, activation="relu"))
    model.add(layers.MaxPooling2D(3))
    assert model.output_shape == (None, 40, 40, 32)  # "The answer was: (40, 40, 32)"
    for _ in range(2):
        model.add(layers.Conv2D(32, 3, activation="relu"))
        model.add(layers.Conv2D(32, 3, activation="relu"))
        model.add(layers.MaxPooling2D(3 if _ == 0 else 2))
    assert model.output_shape == (None, 4, 4, 32)
    model.add(layers.GlobalMaxPooling2D())
    model.add(layers.Dense(10))
    assert model.output_shape == (None, 10)


def test_sequential_guide_feature_extractor_from_its_inputs_list():
    initial_model = keras.Sequential(
        [
            keras.Input(shape=(25, 25, 3)),
            layers.Conv2D(4, 5, strides=2, activation="relu"),
            layers.Conv2D(4, 3, activation="relu", name="my_intermediate_layer"),
            layers.Conv2D(4, 3, activation="relu"),
        ]
    )
    x = ops.ones((1, 25, 25, 3))
    # `inputs` is a one-item list: the model still takes the bare batch, as in Keras.
    feature_extractor = keras.Model(
        inputs=initial_model.inputs, outputs=[layer.output for layer in initial_model.layers]
    )
    features = feature_extractor(x)
    assert [tuple(f.shape) for f in features] == [(1, 11, 11, 4), (1, 9, 9, 4), (1, 7, 7, 4)]
    np.testing.assert_allclose(features[-1].numpy(), initial_model(x).numpy(), rtol=1e-6)
    feature_extractor = keras.Model(
        inputs=initial_model.inputs,
        outputs=initial_model.get_layer(name="my_intermediate_layer").output,
    )
    assert feature_extractor(x).shape == (1, 9, 9, 4)
    assert feature_extractor.predict(np.ones((2, 25, 25, 3)), verbose=0).shape == (2, 9, 9, 4)
    assert feature_extractor([x]).shape == (1, 9, 9, 4)


def test_sequential_guide_transfer_learning_blueprints(tmp_path):
    model = keras.Sequential(
        [
            keras.Input(shape=(784,)),
            layers.Dense(32, activation="relu"),
            layers.Dense(32, activation="relu"),
            layers.Dense(10),
        ]
    )
    model.save_weights(tmp_path / "pretrained.weights.h5")
    model.load_weights(tmp_path / "pretrained.weights.h5")
    for layer in model.layers[:-1]:
        layer.trainable = False
    model.compile("adam", "mse")
    before = [w.numpy().copy() for w in model.weights]
    rng = np.random.default_rng(4)
    model.fit(rng.random((8, 784)), rng.random((8, 10)), verbose=0)
    changed = [not np.allclose(a, w.numpy()) for a, w in zip(before, model.weights)]
    assert changed == [False, False, False, False, True, True]

    base_model = keras.Sequential([keras.Input((6,)), layers.Dense(5), layers.BatchNormalization()])
    base_model.trainable = False
    model = keras.Sequential([base_model, layers.Dense(3)])
    model.compile("adam", "mse")
    model.fit(rng.random((8, 6)), rng.random((8, 3)), verbose=0)
    assert (len(model.trainable_weights), len(model.non_trainable_weights)) == (2, 6)
