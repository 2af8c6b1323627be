"""Keras 3's transfer learning guide (keras-io `guides/keras_core/transfer_learning.py`)
run on minikeras: the `trainable` API as written, and the end-to-end workflow with a
small convolutional base standing in for Xception and random images for cats vs dogs.
"""

import numpy as np

import minikeras as keras
from minikeras import layers


def test_transfer_guide_trainable_attribute():
    counts = []
    for make in (lambda: keras.layers.Dense(3), keras.layers.BatchNormalization):
        layer = make()
        layer.build((None, 4))
        counts.append(
            (len(layer.weights), len(layer.trainable_weights), len(layer.non_trainable_weights))
        )
    layer = keras.layers.Dense(3)
    layer.build((None, 4))
    layer.trainable = False
    counts.append(
        (len(layer.weights), len(layer.trainable_weights), len(layer.non_trainable_weights))
    )
    assert counts == [(2, 2, 0), (4, 2, 2), (2, 0, 2)]

    keras.utils.set_random_seed(0)
    layer1 = keras.layers.Dense(3, activation="relu")
    layer2 = keras.layers.Dense(3, activation="sigmoid")
    model = keras.Sequential([keras.Input(shape=(3,)), layer1, layer2])
    layer1.trainable = False
    initial_layer1_weights_values = layer1.get_weights()
    model.compile(optimizer="adam", loss="mse")
    rng = np.random.default_rng(0)
    model.fit(rng.random((16, 3)), rng.random((16, 3)), verbose=0)
    final_layer1_weights_values = layer1.get_weights()
    for initial, final in zip(initial_layer1_weights_values, final_layer1_weights_values):
        np.testing.assert_allclose(initial, final)

    inner_model = keras.Sequential(
        [
            keras.Input(shape=(3,)),
            keras.layers.Dense(3, activation="relu"),
            keras.layers.Dense(3, activation="relu"),
        ]
    )
    model = keras.Sequential(
        [keras.Input(shape=(3,)), inner_model, keras.layers.Dense(3, activation="sigmoid")]
    )
    model.trainable = False
    assert inner_model.trainable is False
    assert inner_model.layers[0].trainable is False


def test_transfer_guide_end_to_end_workflow():
    rng = np.random.default_rng(1)
    resize_fn = keras.layers.Resizing(15, 15)
    images = (rng.random((16, 20, 24, 3)) * 255).astype("float32")
    images = resize_fn(images).numpy()
    assert images.shape == (16, 15, 15, 3)
    labels = rng.integers(0, 2, (16, 1))
    augmentation_layers = [layers.RandomFlip("horizontal"), layers.RandomRotation(0.1)]

    def data_augmentation(x):
        for layer in augmentation_layers:
            x = layer(x)
        return x

    assert data_augmentation(np.expand_dims(images[0], 0)).shape == (1, 15, 15, 3)
    base_model = keras.Sequential(
        [keras.Input((15, 15, 3)), layers.Conv2D(4, 3), layers.BatchNormalization()],
        name="base",
    )
    base_model.trainable = False
    inputs = keras.Input(shape=(15, 15, 3))
    x = keras.layers.Rescaling(scale=1 / 127.5, offset=-1)(inputs)
    x = base_model(x, training=False)
    x = keras.layers.GlobalAveragePooling2D()(x)
    dropout = keras.layers.Dropout(0.2)
    x = dropout(x)
    outputs = keras.layers.Dense(1)(x)
    model = keras.Model(inputs, outputs)
    lines = []
    model.summary(show_trainable=True, print_fn=lines.append)
    trainable_column = {line.split()[0]: line.split()[-1] for line in lines if "(" in line}
    assert trainable_column["base"] == "N" and trainable_column[dropout.name] == "-"
    assert trainable_column[model.layers[-1].name] == "Y"

    def compile_model(learning_rate):
        model.compile(
            optimizer=keras.optimizers.Adam(learning_rate),
            loss=keras.losses.BinaryCrossentropy(from_logits=True),
            metrics=[keras.metrics.BinaryAccuracy()],
        )

    train_ds = [(data_augmentation(images[i : i + 8]), labels[i : i + 8]) for i in range(0, 16, 8)]
    compile_model(1e-3)
    frozen = [w.numpy().copy() for w in base_model.weights]
    history = model.fit(train_ds, epochs=2, validation_data=[(images, labels)], verbose=0)
    assert set(history.history) == {"loss", "binary_accuracy", "val_loss", "val_binary_accuracy"}
    for before, weight in zip(frozen, base_model.weights):
        np.testing.assert_array_equal(before, weight.numpy())  # the frozen base is unchanged

    base_model.trainable = True
    lines.clear()
    model.summary(show_trainable=True, print_fn=lines.append)
    assert any(line.startswith("base (Sequential)") and line.endswith("Y") for line in lines)
    compile_model(1e-5)
    kernel = base_model.layers[0].kernel.numpy().copy()
    model.fit(images, labels, epochs=1, verbose=0)
    assert not np.array_equal(kernel, base_model.layers[0].kernel.numpy())  # fine-tuned
    loss, accuracy = model.evaluate(images, labels, verbose=0)
    assert loss > 0 and 0 <= accuracy <= 1
