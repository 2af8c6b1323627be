"""Keras 3's training guides run on minikeras with the fewest edits.

Ported from keras-io `guides/keras_core/`: training_with_built_in_methods and
writing_your_own_callbacks (`import minikeras as keras`; MNIST replaced by small
random arrays of its shapes; tf.data and torch DataLoader sections replaced by a
Python generator; epochs and sizes cut). The tests assert what the guides show:
log keys, that training lowers the loss, callbacks' effects.
"""

import os

import numpy as np

import minikeras as keras
from minikeras import layers, ops


def _mnist(n=200, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 256, (n, 28, 28)).astype("uint8").reshape(n, 784).astype("float32") / 255
    y = rng.integers(0, 10, n).astype("float32")
    return x, y


def get_uncompiled_model():
    inputs = keras.Input(shape=(784,), name="digits")
    x = layers.Dense(64, activation="relu", name="dense_1")(inputs)
    x = layers.Dense(64, activation="relu", name="dense_2")(x)
    outputs = layers.Dense(10, activation="softmax", name="predictions")(x)
    return keras.Model(inputs=inputs, outputs=outputs)


def get_compiled_model():
    model = get_uncompiled_model()
    model.compile(
        optimizer="rmsprop",
        loss="sparse_categorical_crossentropy",
        metrics=["sparse_categorical_accuracy"],
    )
    return model


def test_built_in_training_guide_end_to_end():
    x_train, y_train = _mnist()
    x_val, y_val = x_train[-50:], y_train[-50:]
    model = get_uncompiled_model()
    model.compile(
        optimizer=keras.optimizers.RMSprop(),
        loss=keras.losses.SparseCategoricalCrossentropy(),
        metrics=[keras.metrics.SparseCategoricalAccuracy()],
    )
    history = model.fit(
        x_train[:-50], y_train[:-50], batch_size=64, epochs=2, validation_data=(x_val, y_val),
        verbose=0,
    )  # fmt: skip
    assert set(history.history) == {
        "loss", "sparse_categorical_accuracy", "val_loss", "val_sparse_categorical_accuracy",
    }  # fmt: skip
    results = model.evaluate(x_val, y_val, batch_size=128, verbose=0)
    assert len(results) == 2
    predictions = model.predict(x_val[:3], verbose=0)
    assert predictions.shape == (3, 10)
    np.testing.assert_allclose(predictions.sum(axis=1), 1.0, rtol=1e-5)


def test_built_in_training_guide_custom_losses_and_metric():
    x_train, y_train = _mnist()

    def custom_mean_squared_error(y_true, y_pred):
        return ops.mean(ops.square(y_true - y_pred), axis=-1)

    class CustomMSE(keras.losses.Loss):
        def __init__(self, regularization_factor=0.1, name="custom_mse"):
            super().__init__(name=name)
            self.regularization_factor = regularization_factor

        def call(self, y_true, y_pred):
            mse = ops.mean(ops.square(y_true - y_pred), axis=-1)
            reg = ops.mean(ops.square(0.5 - y_pred), axis=-1)
            return mse + reg * self.regularization_factor

    y_train_one_hot = ops.one_hot(y_train, num_classes=10)
    for loss in (custom_mean_squared_error, CustomMSE()):
        model = get_uncompiled_model()
        model.compile(optimizer=keras.optimizers.Adam(), loss=loss)
        losses = model.fit(x_train, y_train_one_hot, batch_size=64, epochs=3, verbose=0)
        assert losses.history["loss"][-1] < losses.history["loss"][0]

    class CategoricalTruePositives(keras.metrics.Metric):
        def __init__(self, name="categorical_true_positives", **kwargs):
            super().__init__(name=name, **kwargs)
            self.true_positives = self.add_variable(shape=(), name="ctp", initializer="zeros")

        def update_state(self, y_true, y_pred, sample_weight=None):
            y_pred = ops.reshape(ops.argmax(y_pred, axis=1), (-1, 1))
            values = ops.cast(y_true, "int32") == ops.cast(y_pred, "int32")
            values = ops.cast(values, "float32")
            if sample_weight is not None:
                values = ops.multiply(values, ops.cast(sample_weight, "float32"))
            self.true_positives.assign_add(ops.sum(values))

        def result(self):
            return self.true_positives

        def reset_state(self):
            self.true_positives.assign(0.0)

    model = get_uncompiled_model()
    model.compile(
        optimizer=keras.optimizers.RMSprop(learning_rate=1e-3),
        loss=keras.losses.SparseCategoricalCrossentropy(),
        metrics=[CategoricalTruePositives()],
    )
    model.fit(x_train, y_train, batch_size=64, epochs=1, verbose=0)
    # The guide's metric compares (batch,) labels with (batch, 1) predictions: a
    # broadcast (batch, batch) count, as in Keras. Checked on one evaluation batch:
    metric = CategoricalTruePositives()
    predicted = model.predict(x_train[:20], verbose=0)
    metric.update_state(y_train[:20], predicted)
    expected = (y_train[:20][None, :] == predicted.argmax(axis=1)[:, None]).sum()
    assert float(metric.result()) == expected


def test_built_in_training_guide_add_loss_layers():
    x_train, y_train = _mnist()

    class ActivityRegularizationLayer(layers.Layer):
        def call(self, inputs):
            self.add_loss(ops.sum(inputs) * 0.1)
            return inputs

    inputs = keras.Input(shape=(784,), name="digits")
    x = layers.Dense(64, activation="relu", name="dense_1")(inputs)
    x = ActivityRegularizationLayer()(x)
    x = layers.Dense(64, activation="relu", name="dense_2")(x)
    outputs = layers.Dense(10, name="predictions")(x)
    model = keras.Model(inputs=inputs, outputs=outputs)
    model.compile(
        optimizer=keras.optimizers.RMSprop(learning_rate=1e-3),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
    )
    history = model.fit(x_train, y_train, batch_size=64, epochs=2, verbose=0).history
    assert history["loss"][0] > 3.0  # "much higher than before" (the layer's term)
    assert history["loss"][-1] < history["loss"][0]

    class LogisticEndpoint(keras.layers.Layer):
        def __init__(self, name=None):
            super().__init__(name=name)
            self.loss_fn = keras.losses.BinaryCrossentropy(from_logits=True)

        def call(self, targets, logits, sample_weights=None):
            self.add_loss(self.loss_fn(targets, logits, sample_weights))
            return ops.softmax(logits)

    inputs = keras.Input(shape=(3,), name="inputs")
    targets = keras.Input(shape=(10,), name="targets")
    logits = keras.layers.Dense(10)(inputs)
    predictions = LogisticEndpoint(name="predictions")(targets, logits)
    model = keras.Model(inputs=[inputs, targets], outputs=predictions)
    model.compile(optimizer="adam")
    rng = np.random.default_rng(1)
    data = {"inputs": rng.random((3, 3)), "targets": rng.random((3, 10))}
    history = model.fit(data, epochs=5, verbose=0).history
    assert history["loss"][-1] < history["loss"][0]


def test_built_in_training_guide_data_sources_and_weights():
    x_train, y_train = _mnist()
    x_val, y_val = _mnist(64, seed=1)
    model = get_compiled_model()
    history = model.fit(x_train, y_train, batch_size=64, validation_split=0.2, epochs=1, verbose=0)
    assert "val_loss" in history.history

    def batches():  # the guide's tf.data.Dataset, as a generator of batches
        for i in range(0, len(x_train), 64):
            yield x_train[i : i + 64], y_train[i : i + 64]

    assert "loss" in get_compiled_model().fit(batches(), epochs=1, verbose=0).history

    class ExamplePyDataset(keras.utils.PyDataset):
        def __init__(self, x, y, batch_size, **kwargs):
            super().__init__(**kwargs)
            self.x, self.y, self.batch_size = x, y, batch_size

        def __len__(self):
            return int(np.ceil(len(self.x) / float(self.batch_size)))

        def __getitem__(self, idx):
            batch = slice(idx * self.batch_size, (idx + 1) * self.batch_size)
            return self.x[batch], self.y[batch]

    for workers in (1, 4):
        train = ExamplePyDataset(x_train, y_train, batch_size=32, workers=workers)
        val = ExamplePyDataset(x_val, y_val, batch_size=32, workers=workers)
        model = get_compiled_model()
        history = model.fit(train, batch_size=64, validation_data=val, epochs=1, verbose=0)
        assert "val_sparse_categorical_accuracy" in history.history
        assert len(model.evaluate(val, verbose=0)) == 2

    class_weight = {i: 1.0 for i in range(10)}
    class_weight[5] = 2.0
    get_compiled_model().fit(
        x_train, y_train, class_weight=class_weight, batch_size=64, epochs=1, verbose=0
    )
    sample_weight = np.ones(shape=(len(y_train),))
    sample_weight[y_train == 5] = 2.0
    get_compiled_model().fit(
        x_train, y_train, sample_weight=sample_weight, batch_size=64, epochs=1, verbose=0
    )


def test_built_in_training_guide_multi_input_multi_output():
    image_input = keras.Input(shape=(32, 32, 3), name="img_input")
    timeseries_input = keras.Input(shape=(None, 10), name="ts_input")
    x1 = layers.GlobalMaxPooling2D()(layers.Conv2D(3, 3)(image_input))
    x2 = layers.GlobalMaxPooling1D()(layers.Conv1D(3, 3)(timeseries_input))
    x = layers.concatenate([x1, x2])
    score_output = layers.Dense(1, name="score_output")(x)
    class_output = layers.Dense(5, name="class_output")(x)
    model = keras.Model(
        inputs=[image_input, timeseries_input], outputs=[score_output, class_output]
    )
    rng = np.random.default_rng(2)
    img_data, ts_data = rng.random((10, 32, 32, 3)), rng.random((10, 20, 10))
    score_targets, class_targets = rng.random((10, 1)), rng.random((10, 5))
    model.compile(
        optimizer=keras.optimizers.RMSprop(1e-3),
        loss={
            "score_output": keras.losses.MeanSquaredError(),
            "class_output": keras.losses.CategoricalCrossentropy(),
        },
        metrics={
            "score_output": [
                keras.metrics.MeanAbsolutePercentageError(),
                keras.metrics.MeanAbsoluteError(),
            ],
            "class_output": [keras.metrics.CategoricalAccuracy()],
        },
        loss_weights={"score_output": 2.0, "class_output": 1.0},
    )
    history = model.fit(
        [img_data, ts_data], [score_targets, class_targets], batch_size=32, epochs=1, verbose=0
    ).history
    assert set(history) == {
        "loss", "score_output_loss", "class_output_loss",
        "score_output_mean_absolute_percentage_error", "score_output_mean_absolute_error",
        "class_output_categorical_accuracy",
    }  # fmt: skip
    np.testing.assert_allclose(
        history["loss"][0],
        2.0 * history["score_output_loss"][0] + history["class_output_loss"][0],
        rtol=1e-5,
    )
    model.compile(
        optimizer=keras.optimizers.RMSprop(1e-3),
        loss=[keras.losses.MeanSquaredError(), keras.losses.CategoricalCrossentropy()],
    )
    model.fit(
        {"img_input": img_data, "ts_input": ts_data},
        {"score_output": score_targets, "class_output": class_targets},
        batch_size=32,
        epochs=1,
        verbose=0,
    )


def test_built_in_training_guide_callbacks_and_checkpoints(tmp_path):
    x_train, y_train = _mnist()
    model = get_compiled_model()
    stopper = keras.callbacks.EarlyStopping(monitor="val_loss", min_delta=1e-2, patience=2)
    history = model.fit(
        x_train, y_train, epochs=20, batch_size=64, callbacks=[stopper], validation_split=0.2,
        verbose=0,
    )  # fmt: skip
    assert len(history.history["loss"]) < 20 and stopper.stopped_epoch > 0

    class LossHistory(keras.callbacks.Callback):
        def on_train_begin(self, logs):
            self.per_batch_losses = []

        def on_batch_end(self, batch, logs):
            self.per_batch_losses.append(logs.get("loss"))

    losses = LossHistory()
    model.fit(x_train, y_train, epochs=1, batch_size=64, callbacks=[losses], verbose=0)
    assert len(losses.per_batch_losses) == 4  # ceil(200 / 64) batches

    callbacks = [
        keras.callbacks.ModelCheckpoint(
            filepath=str(tmp_path / "mymodel_{epoch}.keras"),
            save_best_only=True,
            monitor="val_loss",
        )
    ]
    get_compiled_model().fit(
        x_train, y_train, epochs=2, batch_size=64, callbacks=callbacks, validation_split=0.2,
        verbose=0,
    )  # fmt: skip
    assert "mymodel_1.keras" in os.listdir(tmp_path)

    checkpoint_dir = tmp_path / "ckpt"
    checkpoint_dir.mkdir()

    def make_or_restore_model():
        checkpoints = [checkpoint_dir / name for name in os.listdir(checkpoint_dir)]
        if checkpoints:
            return keras.models.load_model(max(checkpoints, key=os.path.getctime))
        return get_compiled_model()

    for run in range(2):
        model = make_or_restore_model()
        # A restored model resumes its optimizer: saved after batch 3 or 6 of 7.
        assert int(model.optimizer.iterations.numpy()) in ((3, 6) if run else (0,))
        callbacks = [
            keras.callbacks.ModelCheckpoint(
                filepath=str(checkpoint_dir / "model-loss={loss:.2f}.keras"), save_freq=3
            )
        ]
        model.fit(x_train, y_train, epochs=1, callbacks=callbacks, verbose=0)
    assert len(os.listdir(checkpoint_dir)) >= 2

    lr_schedule = keras.optimizers.schedules.ExponentialDecay(
        0.1, decay_steps=100000, decay_rate=0.96, staircase=True
    )
    optimizer = keras.optimizers.RMSprop(learning_rate=lr_schedule)
    np.testing.assert_allclose(float(optimizer.learning_rate), 0.1, rtol=1e-6)


# --- writing_your_own_callbacks ------------------------------------------------------


def get_model():
    model = keras.Sequential()
    model.add(keras.layers.Dense(1))
    model.compile(
        optimizer=keras.optimizers.RMSprop(learning_rate=0.1),
        loss="mean_squared_error",
        metrics=["mean_absolute_error"],
    )
    return model


def test_callbacks_guide_hooks_and_their_log_keys():
    seen = []

    class CustomCallback(keras.callbacks.Callback):
        pass

    hooks = [
        "on_train_begin", "on_train_end", "on_epoch_begin", "on_epoch_end", "on_test_begin",
        "on_test_end", "on_predict_begin", "on_predict_end", "on_train_batch_begin",
        "on_train_batch_end", "on_test_batch_begin", "on_test_batch_end",
        "on_predict_batch_begin", "on_predict_batch_end",
    ]  # fmt: skip
    for hook in hooks:

        def record(self, *args, hook=hook):
            seen.append((hook, sorted(args[-1].keys())))

        setattr(CustomCallback, hook, record)

    x_train, y_train = _mnist(256)
    model = get_model()
    model.fit(
        x_train, y_train, batch_size=128, epochs=1, verbose=0, validation_split=0.5,
        callbacks=[CustomCallback()],
    )  # fmt: skip
    train_keys = ["loss", "mean_absolute_error"]
    val_keys = train_keys + ["val_loss", "val_mean_absolute_error"]
    assert seen == [
        ("on_train_begin", []),
        ("on_epoch_begin", []),
        ("on_train_batch_begin", []),
        ("on_train_batch_end", train_keys),
        ("on_test_begin", []),
        ("on_test_batch_begin", []),
        ("on_test_batch_end", train_keys),
        ("on_test_end", train_keys),
        ("on_epoch_end", val_keys),
        ("on_train_end", val_keys),
    ]
    seen.clear()
    model.evaluate(x_train, y_train, batch_size=128, verbose=0, callbacks=[CustomCallback()])
    assert [hook for hook, _ in seen] == [
        "on_test_begin", "on_test_batch_begin", "on_test_batch_end", "on_test_batch_begin",
        "on_test_batch_end", "on_test_end",
    ]  # fmt: skip
    seen.clear()
    model.predict(x_train, batch_size=128, callbacks=[CustomCallback()], verbose=0)
    assert seen[2] == ("on_predict_batch_end", ["outputs"])


def test_callbacks_guide_early_stopping_at_min_loss_and_lr_schedule():
    x_train, y_train = _mnist(256)

    class EarlyStoppingAtMinLoss(keras.callbacks.Callback):
        def __init__(self, patience=0):
            super().__init__()
            self.patience = patience
            self.best_weights = None

        def on_train_begin(self, logs=None):
            self.wait, self.stopped_epoch, self.best = 0, 0, np.inf

        def on_epoch_end(self, epoch, logs=None):
            current = logs.get("loss")
            if np.less(current, self.best):
                self.best, self.wait = current, 0
                self.best_weights = self.model.get_weights()
            else:
                self.wait += 1
                if self.wait >= self.patience:
                    self.stopped_epoch = epoch
                    self.model.stop_training = True
                    self.model.set_weights(self.best_weights)

    stopper = EarlyStoppingAtMinLoss()
    model = get_model()
    history = model.fit(x_train, y_train, batch_size=64, epochs=30, verbose=0, callbacks=[stopper])
    assert len(history.history["loss"]) == stopper.stopped_epoch + 1 < 30
    for kept, best in zip(model.get_weights(), stopper.best_weights):
        np.testing.assert_array_equal(kept, best)

    class CustomLearningRateScheduler(keras.callbacks.Callback):
        def __init__(self, schedule):
            super().__init__()
            self.schedule = schedule
            self.rates = []

        def on_epoch_begin(self, epoch, logs=None):
            lr = self.model.optimizer.learning_rate
            scheduled_lr = self.schedule(epoch, lr)
            self.model.optimizer.learning_rate = scheduled_lr
            self.rates.append(float(np.array(scheduled_lr)))

    schedule = [(3, 0.05), (6, 0.01), (9, 0.005), (12, 0.001)]

    def lr_schedule(epoch, lr):
        if epoch < schedule[0][0] or epoch > schedule[-1][0]:
            return lr
        for start, rate in schedule:
            if epoch == start:
                return rate
        return lr

    scheduler = CustomLearningRateScheduler(lr_schedule)
    model = get_model()
    model.fit(x_train, y_train, batch_size=128, epochs=15, verbose=0, callbacks=[scheduler])
    expected = [0.1] * 3 + [0.05] * 3 + [0.01] * 3 + [0.005] * 3 + [0.001] * 3
    np.testing.assert_allclose(scheduler.rates, expected, rtol=1e-6)
