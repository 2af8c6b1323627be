"""Keras 3's guides to custom training steps and loops, run on minikeras.

Ported from keras-io `guides/keras_core/`: custom_train_step_in_tensorflow and
writing_a_custom_training_loop_in_tensorflow, with `tf.GradientTape` as
`keras.GradientTape`, `tf.concat`/`tf.shape`/`tf.random` as their `keras.ops` /
`keras.random` twins, `tf.data` as array slices, and `tf.function` dropped.
"""

import numpy as np

import minikeras as keras
from minikeras import layers, ops


def _data(n=64, seed=0):
    rng = np.random.default_rng(seed)
    return rng.random((n, 32)), rng.random((n, 1))


def _linear(model_class):
    inputs = keras.Input(shape=(32,))
    return model_class(inputs, keras.layers.Dense(1)(inputs))


def test_custom_train_step_guide_first_example():
    class CustomModel(keras.Model):
        def train_step(self, data):
            x, y = data  # fit hands over (x, y): no sample weights were given
            with keras.GradientTape() as tape:
                y_pred = self(x, training=True)
                loss = self.compute_loss(y=y, y_pred=y_pred)
            trainable_vars = self.trainable_variables
            gradients = tape.gradient(loss, trainable_vars)
            self.optimizer.apply(gradients, trainable_vars)
            for metric in self.metrics:
                if metric.name == "loss":
                    metric.update_state(loss)
                else:
                    metric.update_state(y, y_pred)
            return {m.name: m.result() for m in self.metrics}

    model = _linear(CustomModel)
    model.compile(optimizer=keras.optimizers.Adam(0.05), loss="mse", metrics=["mae"])
    x, y = _data()
    history = model.fit(x, y, epochs=4, verbose=0).history
    assert set(history) == {"loss", "mae"}
    assert history["loss"][-1] < history["loss"][0]


def test_custom_train_step_guide_own_metrics_and_loss():
    class CustomModel(keras.Model):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.loss_tracker = keras.metrics.Mean(name="loss")
            self.mae_metric = keras.metrics.MeanAbsoluteError(name="mae")
            self.loss_fn = keras.losses.MeanSquaredError()

        def train_step(self, data):
            x, y = data
            with keras.GradientTape() as tape:
                y_pred = self(x, training=True)
                loss = self.loss_fn(y, y_pred)
            trainable_vars = self.trainable_variables
            gradients = tape.gradient(loss, trainable_vars)
            self.optimizer.apply(gradients, trainable_vars)
            self.loss_tracker.update_state(loss)
            self.mae_metric.update_state(y, y_pred)
            return {"loss": self.loss_tracker.result(), "mae": self.mae_metric.result()}

        @property
        def metrics(self):
            return [self.loss_tracker, self.mae_metric]

    model = _linear(CustomModel)
    model.compile(optimizer=keras.optimizers.Adam(0.05))
    x, y = _data()
    seen = []

    class Count(keras.callbacks.Callback):
        def on_epoch_begin(self, epoch, logs=None):
            seen.append(float(model.loss_tracker.result()))

    history = model.fit(x, y, epochs=4, batch_size=16, verbose=0, callbacks=[Count()]).history
    assert seen == [0.0] * 4  # the listed metrics are reset at each epoch
    assert history["loss"][-1] < history["loss"][0]


def test_custom_train_step_guide_sample_weight_and_test_step():
    class CustomModel(keras.Model):
        def train_step(self, data):
            if len(data) == 3:
                x, y, sample_weight = data
            else:
                sample_weight = None
                x, y = data
            with keras.GradientTape() as tape:
                y_pred = self(x, training=True)
                loss = self.compute_loss(y=y, y_pred=y_pred, sample_weight=sample_weight)
            gradients = tape.gradient(loss, self.trainable_variables)
            self.optimizer.apply(gradients, self.trainable_variables)
            self.seen_weights = sample_weight
            for metric in self.metrics:
                if metric.name == "loss":
                    metric.update_state(loss)
                else:
                    metric.update_state(y, y_pred, sample_weight=sample_weight)
            return {m.name: m.result() for m in self.metrics}

        def test_step(self, data):
            x, y = data
            y_pred = self(x, training=False)
            loss = self.compute_loss(y=y, y_pred=y_pred)
            for metric in self.metrics:
                if metric.name == "loss":
                    metric.update_state(loss)
                else:
                    metric.update_state(y, y_pred)
            return {m.name: m.result() for m in self.metrics}

    model = _linear(CustomModel)
    model.compile(optimizer="adam", loss="mse", metrics=["mae"])
    x, y = _data()
    sw = np.random.default_rng(1).random((64, 1))
    model.fit(x, y, sample_weight=sw, batch_size=64, epochs=1, shuffle=False, verbose=0)
    np.testing.assert_allclose(np.asarray(model.seen_weights), sw)
    model.fit(x, y, batch_size=64, epochs=1, verbose=0)
    assert model.seen_weights is None
    loss, mae = model.evaluate(x, y, verbose=0)
    error = model.predict(x, verbose=0) - y
    np.testing.assert_allclose([loss, mae], [np.mean(error**2), np.mean(np.abs(error))], rtol=1e-5)


def _gan_parts(latent_dim):
    discriminator = keras.Sequential(
        [
            keras.Input(shape=(28, 28, 1)),
            layers.Conv2D(8, (3, 3), strides=(2, 2), padding="same"),
            layers.LeakyReLU(negative_slope=0.2),
            layers.Conv2D(8, (3, 3), strides=(2, 2), padding="same"),
            layers.LeakyReLU(negative_slope=0.2),
            layers.GlobalMaxPooling2D(),
            layers.Dense(1),
        ],
        name="discriminator",
    )
    generator = keras.Sequential(
        [
            keras.Input(shape=(latent_dim,)),
            layers.Dense(7 * 7 * 8),
            layers.LeakyReLU(negative_slope=0.2),
            layers.Reshape((7, 7, 8)),
            layers.Conv2DTranspose(8, (4, 4), strides=(2, 2), padding="same"),
            layers.LeakyReLU(negative_slope=0.2),
            layers.Conv2DTranspose(8, (4, 4), strides=(2, 2), padding="same"),
            layers.LeakyReLU(negative_slope=0.2),
            layers.Conv2D(1, (7, 7), padding="same", activation="sigmoid"),
        ],
        name="generator",
    )
    return discriminator, generator


def test_custom_training_loop_guide_metrics_and_added_losses():
    def get_model(regularized=False):
        inputs = keras.Input(shape=(784,), name="digits")
        x = keras.layers.Dense(64, activation="relu")(inputs)
        if regularized:
            x = ActivityRegularizationLayer()(x)
        x = keras.layers.Dense(64, activation="relu")(x)
        outputs = keras.layers.Dense(10, name="predictions")(x)
        return keras.Model(inputs=inputs, outputs=outputs)

    class ActivityRegularizationLayer(keras.layers.Layer):
        def call(self, inputs):
            self.add_loss(1e-2 * ops.sum(inputs))
            return inputs

    rng = np.random.default_rng(2)
    x_train = rng.integers(0, 256, (96, 784)).astype("float32") / 255
    y_train = rng.integers(0, 10, 96)
    batch_size = 32
    for regularized in (False, True):
        model = get_model(regularized)
        optimizer = keras.optimizers.Adam(learning_rate=1e-3)
        loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
        train_acc_metric = keras.metrics.SparseCategoricalAccuracy()
        epoch_losses = []
        for _epoch in range(3):
            total = 0.0
            for start in range(0, len(x_train), batch_size):
                x_batch = x_train[start : start + batch_size]
                y_batch = y_train[start : start + batch_size]
                with keras.GradientTape() as tape:
                    logits = model(x_batch, training=True)
                    loss_value = loss_fn(y_batch, logits)
                    loss_value += sum(model.losses)
                grads = tape.gradient(loss_value, model.trainable_weights)
                optimizer.apply(grads, model.trainable_weights)
                train_acc_metric.update_state(y_batch, logits)
                total += float(loss_value)
            assert 0.0 <= float(train_acc_metric.result()) <= 1.0
            train_acc_metric.reset_state()
            epoch_losses.append(total)
        assert len(model.losses) == int(regularized)
        assert epoch_losses[-1] < epoch_losses[0]


def test_custom_training_loop_guide_gan_steps():
    latent_dim, batch_size = 16, 8
    discriminator, generator = _gan_parts(latent_dim)
    d_optimizer = keras.optimizers.Adam(learning_rate=0.0003)
    g_optimizer = keras.optimizers.Adam(learning_rate=0.0004)
    loss_fn = keras.losses.BinaryCrossentropy(from_logits=True)
    seed_generator = keras.random.SeedGenerator(1337)

    def train_step(real_images):
        random_latent_vectors = keras.random.normal(
            shape=(batch_size, latent_dim), seed=seed_generator
        )
        generated_images = generator(random_latent_vectors)
        combined_images = ops.concatenate([generated_images, real_images], axis=0)
        labels = ops.concatenate(
            [ops.ones((batch_size, 1)), ops.zeros((real_images.shape[0], 1))], axis=0
        )
        labels += 0.05 * keras.random.uniform(ops.shape(labels), seed=seed_generator)
        g_before = [w.numpy().copy() for w in generator.trainable_weights]
        with keras.GradientTape() as tape:
            d_loss = loss_fn(labels, discriminator(combined_images))
        grads = tape.gradient(d_loss, discriminator.trainable_weights)
        d_optimizer.apply(grads, discriminator.trainable_weights)
        for before, weight in zip(g_before, generator.trainable_weights):
            np.testing.assert_array_equal(before, weight.numpy())  # d step: generator fixed
        d_before = [w.numpy().copy() for w in discriminator.trainable_weights]
        random_latent_vectors = keras.random.normal(
            shape=(batch_size, latent_dim), seed=seed_generator
        )
        misleading_labels = ops.zeros((batch_size, 1))
        with keras.GradientTape() as tape:
            predictions = discriminator(generator(random_latent_vectors))
            g_loss = loss_fn(misleading_labels, predictions)
        grads = tape.gradient(g_loss, generator.trainable_weights)
        g_optimizer.apply(grads, generator.trainable_weights)
        for before, weight in zip(d_before, discriminator.trainable_weights):
            np.testing.assert_array_equal(before, weight.numpy())  # g step: discriminator fixed
        return d_loss, g_loss, generated_images

    images = np.random.default_rng(3).random((16, 28, 28, 1)).astype("float32")
    for start in range(0, 16, batch_size):
        d_loss, g_loss, generated = train_step(images[start : start + batch_size])
    assert generated.shape == (batch_size, 28, 28, 1)
    assert np.isfinite(float(d_loss)) and np.isfinite(float(g_loss))
    assert int(d_optimizer.iterations.numpy()) == int(g_optimizer.iterations.numpy()) == 2


def test_custom_train_step_guide_gan_fits_without_a_call():
    latent_dim = 16
    discriminator, generator = _gan_parts(latent_dim)

    class GAN(keras.Model):  # the guide's GAN: a train_step and no call()
        def __init__(self, discriminator, generator, latent_dim):
            super().__init__()
            self.discriminator = discriminator
            self.generator = generator
            self.latent_dim = latent_dim
            self.d_loss_tracker = keras.metrics.Mean(name="d_loss")
            self.g_loss_tracker = keras.metrics.Mean(name="g_loss")
            self.seed_generator = keras.random.SeedGenerator(1337)

        @property
        def metrics(self):
            return [self.d_loss_tracker, self.g_loss_tracker]

        def compile(self, d_optimizer, g_optimizer, loss_fn):
            super().compile()
            self.d_optimizer = d_optimizer
            self.g_optimizer = g_optimizer
            self.loss_fn = loss_fn

        def train_step(self, real_images):
            if isinstance(real_images, tuple):
                real_images = real_images[0]
            batch_size = ops.shape(real_images)[0]
            random_latent_vectors = keras.random.normal(
                shape=(batch_size, self.latent_dim), seed=self.seed_generator
            )
            generated_images = self.generator(random_latent_vectors)
            combined_images = ops.concatenate([generated_images, real_images], axis=0)
            labels = ops.concatenate(
                [ops.ones((batch_size, 1)), ops.zeros((batch_size, 1))], axis=0
            )
            labels += 0.05 * keras.random.uniform(ops.shape(labels), seed=self.seed_generator)
            with keras.GradientTape() as tape:
                d_loss = self.loss_fn(labels, self.discriminator(combined_images))
            grads = tape.gradient(d_loss, self.discriminator.trainable_weights)
            self.d_optimizer.apply(grads, self.discriminator.trainable_weights)
            random_latent_vectors = keras.random.normal(
                shape=(batch_size, self.latent_dim), seed=self.seed_generator
            )
            misleading_labels = ops.zeros((batch_size, 1))
            with keras.GradientTape() as tape:
                predictions = self.discriminator(self.generator(random_latent_vectors))
                g_loss = self.loss_fn(misleading_labels, predictions)
            grads = tape.gradient(g_loss, self.generator.trainable_weights)
            self.g_optimizer.apply(grads, self.generator.trainable_weights)
            self.d_loss_tracker.update_state(d_loss)
            self.g_loss_tracker.update_state(g_loss)
            return {"d_loss": self.d_loss_tracker.result(), "g_loss": self.g_loss_tracker.result()}

    all_digits = np.random.default_rng(4).random((32, 28, 28, 1)).astype("float32")
    gan = GAN(discriminator=discriminator, generator=generator, latent_dim=latent_dim)
    gan.compile(
        d_optimizer=keras.optimizers.Adam(learning_rate=0.0003),
        g_optimizer=keras.optimizers.Adam(learning_rate=0.0003),
        loss_fn=keras.losses.BinaryCrossentropy(from_logits=True),
    )
    history = gan.fit(all_digits, epochs=1, batch_size=16, verbose=0).history
    assert sorted(history) == ["d_loss", "g_loss"]
    assert int(gan.d_optimizer.iterations.numpy()) == int(gan.g_optimizer.iterations.numpy()) == 2
