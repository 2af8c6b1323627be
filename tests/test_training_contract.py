"""Keras 3's training contract: overridable steps, compile variants, fit's data, callbacks' logs.

Written as Keras users write it (the guides' code with `mk` for `keras`); the
expected values are computed by hand or by an independent numpy loop.
"""

import warnings

import numpy as np
import pytest

import minikeras as mk
from minikeras.layers.tracking import TrackingWarning


def regression(n=32, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 3)).astype("float32")
    return x, (x @ np.array([[1.0], [-2.0], [0.5]], "float32")).astype("float32")


class GuideModel(mk.Sequential):
    """The "customizing what happens in fit" guide's first model."""

    def train_step(self, data):
        x, y = data[0], data[1]
        with mk.GradientTape() as tape:
            y_pred = self(x, training=True)
            loss = self.compute_loss(y=y, y_pred=y_pred)
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply(grads, self.trainable_variables)
        for metric in self.metrics:
            if metric.name == "loss":
                metric.update_state(loss)
            else:
                metric.update_state(y, y_pred)
        return {m.name: m.result() for m in self.metrics}


def test_the_guides_custom_train_step_trains_like_the_default_step():
    x, y = regression()
    mk.utils.set_random_seed(3)
    custom = GuideModel([mk.Input((3,)), mk.layers.Dense(1)])
    default = mk.Sequential([mk.Input((3,)), mk.layers.Dense(1)])
    default.set_weights(custom.get_weights())
    for model in (custom, default):
        model.compile(mk.optimizers.SGD(0.05), "mse", metrics=["mae"])
    seen = []
    callback = mk.callbacks.LambdaCallback(on_train_batch_end=lambda b, logs: seen.append(logs))
    h_custom = custom.fit(x, y, batch_size=8, epochs=3, shuffle=False, verbose=0,
                          callbacks=[callback])  # fmt: skip
    h_default = default.fit(x, y, batch_size=8, epochs=3, shuffle=False, verbose=0)
    for a, b in zip(custom.get_weights(), default.get_weights()):
        np.testing.assert_allclose(a, b, rtol=1e-6)
    # The guide's tracker averages batch losses unweighted; batches are equal here.
    np.testing.assert_allclose(h_custom.history["loss"], h_default.history["loss"], rtol=1e-5)
    np.testing.assert_allclose(h_custom.history["mae"], h_default.history["mae"], rtol=1e-5)
    assert len(seen) == 12 and set(seen[0]) == {"loss", "mae"}


def test_an_override_changes_the_logs_the_callbacks_and_the_progress_bar_see(capsys):
    class Counting(mk.Sequential):
        def train_step(self, data):
            logs = super().train_step(data)
            return {**logs, "doubled": 2 * logs["loss"]}

    x, y = regression()
    model = Counting([mk.Input((3,)), mk.layers.Dense(1)])
    model.compile("sgd", "mse")
    history = model.fit(x, y, batch_size=16, epochs=2, verbose=2)
    np.testing.assert_allclose(history.history["doubled"], 2 * np.array(history.history["loss"]))
    assert "doubled:" in capsys.readouterr().out


class GAN(mk.Model):
    """Two models, two optimizers, and a compile override, as in the Keras GAN example."""

    def __init__(self, discriminator, generator, latent_dim):
        super().__init__()
        self.discriminator, self.generator, self.latent_dim = discriminator, generator, latent_dim
        self.d_loss_tracker = mk.metrics.Mean(name="d_loss")
        self.g_loss_tracker = mk.metrics.Mean(name="g_loss")

    def compile(self, d_optimizer, g_optimizer, loss_fn):
        super().compile()
        self.d_optimizer, self.g_optimizer, self.loss_fn = d_optimizer, g_optimizer, loss_fn

    def call(self, z):
        return self.generator(z)

    def train_step(self, data):
        real = data[0] if isinstance(data, tuple) else data
        n = real.shape[0]
        z = np.random.default_rng(0).normal(size=(n, self.latent_dim)).astype("float32")
        fake = self.generator(z)
        both = mk.ops.concatenate([fake, mk.ops.convert_to_tensor(real)], axis=0)
        labels = np.concatenate([np.ones((n, 1)), np.zeros((n, 1))]).astype("float32")
        with mk.GradientTape() as tape:
            d_loss = self.loss_fn(labels, self.discriminator(both))
        grads = tape.gradient(d_loss, self.discriminator.trainable_weights)
        self.d_optimizer.apply_gradients(zip(grads, self.discriminator.trainable_weights))
        with mk.GradientTape() as tape:
            g_loss = self.loss_fn(
                np.zeros((n, 1), "float32"), self.discriminator(self.generator(z))
            )
        grads = tape.gradient(g_loss, self.generator.trainable_weights)
        self.g_optimizer.apply(grads, self.generator.trainable_weights)
        self.d_loss_tracker.update_state(d_loss)
        self.g_loss_tracker.update_state(g_loss)
        return {"d_loss": self.d_loss_tracker.result(), "g_loss": self.g_loss_tracker.result()}


def test_a_gan_with_two_optimizers_and_its_own_compile_trains():
    generator = mk.Sequential([mk.Input((2,)), mk.layers.Dense(3)])
    discriminator = mk.Sequential([mk.Input((3,)), mk.layers.Dense(1, activation="sigmoid")])
    gan = GAN(discriminator, generator, latent_dim=2)
    gan.compile(mk.optimizers.Adam(0.01), mk.optimizers.Adam(0.01), mk.losses.BinaryCrossentropy())
    before = [w.copy() for w in gan.get_weights()]
    history = gan.fit(np.ones((16, 3), "float32"), batch_size=8, epochs=2, verbose=0)
    assert set(history.history) == {"d_loss", "g_loss"}
    assert [m.name for m in gan.metrics] == ["loss", "d_loss", "g_loss"]
    assert int(gan.d_optimizer.iterations.numpy()) == int(gan.g_optimizer.iterations.numpy()) == 4
    assert all(not np.array_equal(a, b) for a, b in zip(before, gan.get_weights()))

    def images():  # batches of inputs alone, as the Keras GAN example's dataset gives
        while True:
            yield np.ones((8, 3), "float32")

    gan.fit(images(), steps_per_epoch=3, verbose=0)
    assert int(gan.d_optimizer.iterations.numpy()) == 7


def test_a_custom_step_still_names_weights_that_never_changed_and_untracked_ones():
    class Partial(mk.Sequential):
        def train_step(self, data):
            x, y = data[0], data[1]
            first = self.layers[0]
            with mk.GradientTape() as tape:
                loss = self.compute_loss(y=y, y_pred=self(x, training=True))
            grads = tape.gradient(loss, [first.kernel])
            self.optimizer.apply(grads, [first.kernel])
            return {"loss": loss}

    x, y = regression()
    model = Partial([mk.Input((3,)), mk.layers.Dense(1)])
    model.compile("sgd", "mse")
    with pytest.warns(TrackingWarning, match=r"'dense.*bias'.* never changed"):
        model.fit(x, y, epochs=1, verbose=0)

    class Hidden(mk.Model):
        def __init__(self):
            super().__init__()
            self.dense = mk.layers.Dense(1)
            self.hidden = {frozenset([1])}  # a set cannot be tracked

        def call(self, x):
            return self.dense(x)

        def train_step(self, data):
            return super().train_step(data)

    model = Hidden()
    model.hidden = {mk.layers.Dense(2)}
    model.compile("sgd", "mse")
    with pytest.warns(TrackingWarning, match="set"):
        model.fit(x, y, epochs=1, verbose=0)


def test_compile_without_a_loss_trains_a_model_that_uses_add_loss():
    class Penalized(mk.layers.Layer):
        def call(self, x):
            self.add_loss(mk.ops.mean(mk.ops.square(x - 1.0)))
            return x

    inputs = mk.Input((3,))
    model = mk.Model(inputs, Penalized()(mk.layers.Dense(3, kernel_initializer="zeros")(inputs)))
    model.compile(mk.optimizers.SGD(0.1))
    history = model.fit(np.ones((8, 3), "float32"), batch_size=8, epochs=1, verbose=0)
    # Zero kernel and bias: outputs 0, loss mean((0 - 1)^2) = 1 on the first step.
    assert history.history["loss"] == [pytest.approx(1.0)]
    bare = mk.Sequential([mk.Input((3,)), mk.layers.Dense(1)])
    bare.compile("sgd")
    with pytest.raises(ValueError, match="no loss to compute"):
        bare.fit(np.ones((4, 3)), verbose=0)


def test_run_eagerly_jit_compile_and_steps_per_execution_are_accepted():
    model = mk.Sequential([mk.Input((3,)), mk.layers.Dense(1)])
    model.compile("sgd", "mse", run_eagerly=True, jit_compile=True, steps_per_execution=4)
    assert model.run_eagerly and model.steps_per_execution == 4
    model.fit(*regression(8), verbose=0)


def two_outputs():
    inputs = mk.Input((3,), name="features")
    hidden = mk.layers.Dense(4, name="hidden")(inputs)
    out1 = mk.layers.Dense(1, name="out1", kernel_initializer="zeros")(hidden)
    out2 = mk.layers.Dense(1, name="out2", kernel_initializer="zeros")(hidden)
    return mk.Model(inputs, [out1, out2])


@pytest.mark.parametrize("form", ["list", "dict"])
def test_multi_output_losses_weights_and_metrics_are_named_as_in_keras(form):
    model = two_outputs()
    if form == "list":
        model.compile("sgd", ["mse", "mae"], loss_weights=[1.0, 0.5], metrics=[["mae"], ["mse"]])
    else:
        model.compile(
            "sgd",
            {"out2": "mae", "out1": "mse"},
            loss_weights={"out1": 1.0, "out2": 0.5},
            metrics={"out1": ["mae"], "out2": ["mse"]},
        )
    x = np.ones((4, 3), "float32")
    y1, y2 = np.full((4, 1), 2.0, "float32"), np.full((4, 1), -3.0, "float32")
    logs = model.evaluate(x, [y1, y2], verbose=0, return_dict=True)
    # Zero output kernels: out1 = out2 = bias 0. mse(2) = 4, mae(-3) = 3; total 4 + 0.5 * 3.
    assert logs == pytest.approx(
        {"loss": 5.5, "out1_loss": 4.0, "out2_loss": 3.0, "out1_mae": 2.0, "out2_mse": 9.0}
    )
    assert list(logs) == ["loss", "out1_loss", "out2_loss", "out1_mae", "out2_mse"]
    history = model.fit(
        x, {"out1": y1, "out2": y2}, epochs=2, verbose=0, validation_data=(x, [y1, y2])
    )
    assert set(history.history) == {*logs, *("val_" + k for k in logs)}


def test_a_metrics_list_for_several_outputs_has_one_entry_per_output():
    model = two_outputs()
    model.compile("sgd", "mse", metrics=["mae", "mse"])  # out1: mae, out2: mse, as in Keras 3
    x, y = np.ones((4, 3), "float32"), np.ones((4, 1), "float32")
    logs = model.evaluate(x, [y, y], verbose=0, return_dict=True)
    assert list(logs) == ["loss", "out1_loss", "out2_loss", "out1_mae", "out2_mse"]
    model = two_outputs()
    model.compile("sgd", "mse", metrics=["mae", "mse", "mae"])
    before = model.get_weights()
    with pytest.raises(ValueError, match=r"metrics has 3 entries but the model has 2 outputs"):
        model.fit(x, [y, y], verbose=0)
    for a, b in zip(before, model.get_weights()):
        np.testing.assert_array_equal(a, b)


def test_weighted_metrics_are_weighted_and_named_weighted_when_the_name_is_taken():
    model = mk.Sequential([mk.Input((1,)), mk.layers.Dense(1, kernel_initializer="zeros")])
    model.compile("sgd", "mae", metrics=["mae"], weighted_metrics=["mae"])
    y = np.array([[1.0], [3.0]], "float32")
    logs = model.evaluate(np.zeros((2, 1)), y, sample_weight=np.array([3.0, 1.0]), verbose=0,
                          return_dict=True)  # fmt: skip
    # Unweighted mae (1 + 3) / 2 = 2; weighted (3 * 1 + 1 * 3) / 4 = 1.5; the loss is
    # weighted and averaged over the batch: (3 + 3) / 2 = 3.
    assert logs == pytest.approx({"loss": 3.0, "mae": 2.0, "weighted_mae": 1.5})


def test_fit_takes_dicts_keyed_by_input_name_and_one_element_batches():
    a, b = mk.Input((2,), name="a"), mk.Input((1,), name="b")
    model = mk.Model([a, b], mk.layers.Dense(1)(mk.layers.Concatenate()([a, b])))
    model.compile("sgd", "mse")
    x = {"b": np.ones((6, 1)), "a": np.ones((6, 2))}
    assert len(model.fit(x, np.ones((6, 1)), epochs=2, verbose=0).history["loss"]) == 2

    class OnlyAdded(mk.layers.Layer):
        def call(self, x):
            self.add_loss(mk.ops.sum(mk.ops.square(x)))
            return x

    inputs = mk.Input((2,))
    added = mk.Model(inputs, OnlyAdded()(mk.layers.Dense(2)(inputs)))
    added.compile("sgd")
    batches = [(np.ones((3, 2), "float32"),) for _ in range(4)]
    assert added.fit(batches, verbose=0).params["steps"] == 4


class Squares(mk.utils.PyDataset):
    def __init__(self, batches, batch_size):
        super().__init__()
        self.batches, self.batch_size, self.epochs_ended = batches, batch_size, 0

    def __len__(self):
        return self.batches

    def __getitem__(self, index):
        x = np.full((self.batch_size, 1), float(index), "float32")
        return x, 2 * x

    def on_epoch_end(self):
        self.epochs_ended += 1


def test_a_py_dataset_feeds_fit_evaluate_and_predict_and_hears_each_epoch_end():
    data = Squares(3, 4)
    model = mk.Sequential([mk.Input((1,)), mk.layers.Dense(1)])
    model.compile("sgd", "mse")
    history = model.fit(data, epochs=3, verbose=0, validation_data=Squares(2, 2))
    assert data.epochs_ended == 3 and history.params["steps"] == 3
    assert "val_loss" in history.history
    assert model.predict(data).shape == (12, 1)
    kernel, bias = (float(w.ravel()[0]) for w in model.get_weights())
    xs = np.repeat(np.arange(3.0), 4)
    expected = np.mean((kernel * xs + bias - 2 * xs) ** 2)
    np.testing.assert_allclose(model.evaluate(data, verbose=0), expected, rtol=1e-5)


def test_steps_validation_steps_validation_freq_and_class_weight():
    def forever():
        while True:
            yield np.ones((2, 1), "float32"), np.ones((2, 1), "float32")

    model = mk.Sequential([mk.Input((1,)), mk.layers.Dense(1)])
    model.compile("sgd", "mse")
    validated = []
    callback = mk.callbacks.LambdaCallback(on_test_begin=lambda logs: validated.append(1))
    history = model.fit(forever(), steps_per_epoch=3, epochs=4, validation_data=forever(),
                        validation_steps=2, validation_freq=2, verbose=0,
                        callbacks=[callback])  # fmt: skip
    assert len(validated) == 2 and len(history.history["val_loss"]) == 2
    with pytest.raises(TypeError, match="validation_freq must be an int"):
        model.fit(forever(), steps_per_epoch=1, validation_freq=[1, 2], verbose=0)
    with pytest.raises(ValueError, match="validation_batch_size must be an int >= 1"):
        model.fit(np.ones((4, 1)), np.ones((4, 1)), validation_batch_size=0, verbose=0)
    # class_weight scales each sample's loss: the same as sample_weight by class.
    x, labels = np.ones((4, 1), "float32"), np.array([0, 1, 1, 1])
    weighted = mk.Sequential([mk.Input((1,)), mk.layers.Dense(2, kernel_initializer="zeros")])
    weighted.compile("sgd", mk.losses.SparseCategoricalCrossentropy(from_logits=True))
    logs = weighted.fit(x, labels, class_weight={0: 3.0, 1: 2.0}, verbose=0).history
    # Equal logits: every sample's loss is ln 2; weights 3, 2, 2, 2 summed over 4 samples.
    assert logs["loss"] == [pytest.approx(np.log(2) * 9 / 4)]


def test_every_hook_gets_a_logs_dict_and_params_are_set_before_training_begins():
    received = {}

    class Recorder(mk.callbacks.Callback):
        def __getattribute__(self, name):
            if name.startswith("on_"):

                def hook(*args):
                    if name == "on_train_begin":
                        received["params"] = dict(self.params)
                        received["model"] = self.model
                    received.setdefault(name, []).append(args[-1])

                return hook
            return super().__getattribute__(name)

    x, y = regression(8)
    model = mk.Sequential([mk.Input((3,)), mk.layers.Dense(1)])
    model.compile("sgd", "mse")
    model.fit(x, y, batch_size=4, epochs=1, validation_data=(x, y), verbose=0,
              callbacks=[Recorder()])  # fmt: skip
    model.predict(x, callbacks=[Recorder()])
    assert received["params"] == {"epochs": 1, "steps": 2, "verbose": 0}
    assert received["model"] is model
    for name, logs in received.items():
        if name.startswith("on_"):
            assert all(isinstance(entry, dict) for entry in logs), name
    assert set(received["on_epoch_end"][0]) == {"loss", "val_loss"}
    assert set(received["on_train_end"][0]) == {"loss", "val_loss"}
    assert set(received["on_predict_batch_end"][0]) == {"outputs"}


@pytest.mark.parametrize("hook", ["on_train_begin", "on_epoch_begin", "on_train_batch_end",
                                  "on_test_end", "on_epoch_end"])  # fmt: skip
def test_stop_training_works_from_any_hook(hook):
    class Stop(mk.callbacks.Callback):
        pass

    setattr(Stop, hook, lambda self, *args: setattr(self.model, "stop_training", True))
    x, y = regression(8)
    model = mk.Sequential([mk.Input((3,)), mk.layers.Dense(1)])
    model.compile("sgd", "mse")
    history = model.fit(x, y, batch_size=4, epochs=5, validation_data=(x, y), verbose=0,
                        callbacks=[Stop()])  # fmt: skip
    steps = int(model.optimizer.iterations.numpy())
    # As Keras reads it, after each batch and each epoch: set before the first batch, it
    # still lets that batch and the epoch's end run (one epoch in the history).
    assert steps == {"on_test_end": 2, "on_epoch_end": 2}.get(hook, 1)
    assert len(history.history["loss"]) == 1


def test_compute_loss_includes_added_losses_and_regularizers():
    model = mk.Sequential([
        mk.Input((2,)),
        mk.layers.Dense(1, kernel_initializer="ones", kernel_regularizer=mk.regularizers.L2(0.1)),
    ])  # fmt: skip
    model.compile("sgd", "mse")
    x, y = np.ones((2, 2), "float32"), np.zeros((2, 1), "float32")
    # outputs 2: mse 4, plus 0.1 * (1 + 1) = 0.2.
    assert float(model.compute_loss(x, y, model(x))) == pytest.approx(4.2)
    assert model.compute_metrics(x, y, model(x)) == {"loss": 0.0}
    model.reset_metrics()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert model.test_on_batch(x, y) == pytest.approx(4.2)


@pytest.mark.parametrize("suffix", [".minikeras", ".keras"])
def test_a_multi_output_compile_saves_and_loads_with_its_weights_and_metrics(tmp_path, suffix):
    model = two_outputs()
    model.compile(
        "adam",
        {"out1": "mse", "out2": mk.losses.Huber()},
        loss_weights=[1.0, 0.5],
        metrics={"out1": ["mae"], "out2": ["mse"]},
        weighted_metrics={"out1": "mae", "out2": ["mae"]},
    )
    x = np.ones((4, 3), "float32")
    ys = [np.ones((4, 1), "float32"), np.full((4, 1), -1.0, "float32")]
    model.fit(x, ys, epochs=2, verbose=0)
    model.save(tmp_path / f"model{suffix}")
    loaded = mk.saving.load_model(tmp_path / f"model{suffix}")
    assert loaded.loss_weights == [1.0, 0.5]
    expected = model.evaluate(x, ys, verbose=0, return_dict=True)
    assert loaded.evaluate(x, ys, verbose=0, return_dict=True) == expected
    assert "out1_weighted_mae" in expected and "out2_mae" in expected


def test_a_metric_with_variables_held_by_the_model_is_a_metric_not_a_weight():
    class Count(mk.metrics.Metric):
        def __init__(self, name="count"):
            super().__init__(name=name)
            self.n = self.add_variable(shape=(), initializer="zeros", name="n")

        def update_state(self, y_true, y_pred, sample_weight=None):
            self.n.assign_add(float(len(y_true)))

        def result(self):
            return self.n

    class Counting(mk.Sequential):
        def __init__(self, layers):
            super().__init__(layers)
            self.seen = Count(name="seen")

        def compute_metrics(self, x, y, y_pred, sample_weight=None):
            logs = super().compute_metrics(x, y, y_pred, sample_weight)
            self.seen.update_state(y, y_pred)
            return {**logs, "seen": self.seen.result()}

    model = Counting([mk.Input((2,)), mk.layers.Dense(1)])
    model.compile("sgd", "mse")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        history = model.fit(np.ones((8, 2)), np.ones((8, 1)), batch_size=4, epochs=2, verbose=0)
    assert history.history["seen"] == [8.0, 8.0]  # reset each epoch, 2 batches of 4
    assert len(model.weights) == 2 and all(
        w.path.endswith(("kernel", "bias")) for w in model.weights
    )
    assert model.metrics_names == ["loss", "seen"]


def test_evaluate_and_predict_call_overridden_test_step_and_predict_step():
    class Doubled(mk.Sequential):
        def test_step(self, data):
            x, y = data[0], data[1]
            error = mk.ops.mean(mk.ops.abs(self(x) - y))
            return {"double_mae": 2 * float(error)}

        def predict_step(self, data):
            x = data[0] if isinstance(data, tuple) else data
            return self(x) * 10.0

    model = Doubled([mk.Input((1,)), mk.layers.Dense(1, kernel_initializer="zeros")])
    model.compile("sgd", "mse")
    x, y = np.ones((6, 1), "float32"), np.full((6, 1), 3.0, "float32")
    assert model.evaluate(x, y, batch_size=4, verbose=0, return_dict=True) == {"double_mae": 6.0}
    model.layers[0].bias.assign([0.5])
    np.testing.assert_allclose(model.predict(x, batch_size=4), np.full((6, 1), 5.0))
    history = model.fit(x, y, epochs=1, validation_data=(x, y), verbose=0)
    assert "val_double_mae" in history.history


def test_a_metric_with_one_value_per_class_is_logged_as_its_array(capsys):
    # F1Score(average=None) gives one score per class; Keras keeps the array in the logs.
    rng = np.random.default_rng(0)
    x = rng.standard_normal((30, 4)).astype("float32")
    y = mk.utils.to_categorical(rng.integers(0, 3, 30), 3)
    model = mk.Sequential([mk.Input((4,)), mk.layers.Dense(3, activation="softmax")])
    model.compile("adam", "categorical_crossentropy", metrics=[mk.metrics.F1Score()])
    history = model.fit(x, y, epochs=2, batch_size=10, validation_split=0.2, verbose=2)
    assert [scores.shape for scores in history.history["f1_score"]] == [(3,), (3,)]
    assert history.history["val_f1_score"][-1].dtype == np.float32
    assert isinstance(history.history["loss"][-1], float)
    line = capsys.readouterr().out.strip().splitlines()[-1]
    assert "f1_score: [" in line
    expected = mk.metrics.F1Score()
    expected.update_state(y, model.predict(x, verbose=0))
    logs = model.evaluate(x, y, verbose=0, return_dict=True)
    np.testing.assert_allclose(logs["f1_score"], expected.result(), rtol=1e-6)


def test_fit_with_use_ema_ends_on_the_moving_averages():
    # Keras's fit calls optimizer.finalize_variable_values at the end: with use_ema
    # the model keeps the averages. The average is followed here by hand.
    x = np.ones((4, 1), "float32")
    y = np.zeros((4, 1), "float32")
    model = mk.Sequential([mk.Input((1,)), mk.layers.Dense(1, use_bias=False)])
    model.layers[0].kernel.assign([[1.0]])
    optimizer = mk.optimizers.SGD(0.25, use_ema=True, ema_momentum=0.5)
    model.compile(optimizer, "mse")
    weight, average = 1.0, None
    for _ in range(3):  # mse gradient 2 * w * x * x, mean over the batch: 2 w
        weight -= 0.25 * 2 * weight
        average = weight if average is None else 0.5 * average + 0.5 * weight
    model.fit(x, y, epochs=3, batch_size=4, verbose=0)
    np.testing.assert_allclose(model.layers[0].kernel.numpy(), [[average]], rtol=1e-6)
    assert average != weight


def test_metrics_held_in_attributes_lists_tuples_and_dicts_are_listed_as_keras_lists_them():
    # Keras 3.15.1 lists, for this model: loss, compile_metrics, m1, ml0, ml1, mda, mt0
    # (minikeras lists the compiled `mae` itself where Keras has `compile_metrics`).
    class Net(mk.Model):
        def __init__(self):
            super().__init__()
            self.dense = mk.layers.Dense(2)
            self.m1 = mk.metrics.Mean(name="m1")
            self.ml = [mk.metrics.Mean(name="ml0"), mk.metrics.Mean(name="ml1")]
            self.md = {"a": mk.metrics.Mean(name="mda")}
            self.mt = (mk.metrics.Mean(name="mt0"),)

        def call(self, x):
            return self.dense(x)

    model = Net()
    model(np.ones((1, 3), np.float32))
    assert [m.name for m in model.metrics] == ["m1", "ml0", "ml1", "mda", "mt0"]
    model.compile("sgd", "mse", metrics=["mae"])
    model.fit(np.ones((4, 3), np.float32), np.ones((4, 2), np.float32), verbose=0)
    assert [m.name for m in model.metrics] == ["loss", "mae", "m1", "ml0", "ml1", "mda", "mt0"]
