"""The training guarantee: fit trains `model.trainable_weights`, nothing else, and says so.

- gradients are computed for the tracked trainable weights only;
- frozen layers and non-trainable weights stay exactly as they were;
- the first step surfaces the tracking warnings (Variables read in the forward
  pass that the model does not track) and names weights that get no gradient;
- the end of fit names trainable weights whose values never changed.
"""

import warnings

import numpy as np
import pytest

import minikeras as mk
from minikeras import GradientTape, Model, Sequential, TrackingWarning, Variable, layers, ops


@pytest.fixture(autouse=True)
def _seeded():
    mk.utils.set_random_seed(0)


def data(n=32, features=3, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, features)).astype("float32")
    return x, (x.sum(axis=1, keepdims=True) + 1.0).astype("float32")


def mlp(**dense_kwargs):
    return Sequential(
        [
            layers.Input((3,)),
            layers.Dense(4, activation="tanh", name="first"),
            layers.Dense(4, activation="tanh", name="middle", **dense_kwargs),
            layers.Dense(1, name="last"),
        ]
    )


def values(variables):
    return [v.numpy() for v in variables]


def fit_recording_warnings(model, x, y, **kwargs):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        history = model.fit(x, y, verbose=0, **kwargs)
    return history, [w for w in caught if issubclass(w.category, TrackingWarning)]


def messages(caught):
    return [str(w.message) for w in caught]


# ------------------------------------------------- what gets gradients


class WithNonTrainable(Model):
    """A Dense plus a non-trainable scale, both used in call()."""

    def __init__(self):
        super().__init__(name="with_non_trainable")
        self.dense = layers.Dense(1)
        self.scale = self.add_weight("scale", (), initializer="ones", trainable=False)

    def call(self, inputs):
        return self.dense(inputs) * self.scale


def test_gradients_are_asked_for_the_trainable_weights_and_nothing_else(monkeypatch):
    model = WithNonTrainable()
    model.compile(mk.optimizers.Adam(0.01), "mse")
    x, y = data()
    model(x[:1])
    asked, applied = [], []
    gradient = GradientTape.gradient

    def recording_gradient(self, target, sources, **kwargs):
        asked.append(list(sources))
        return gradient(self, target, sources, **kwargs)

    def recording_apply(grads, variables):
        applied.append(list(variables))
        return type(model.optimizer).apply(model.optimizer, grads, variables)

    monkeypatch.setattr(GradientTape, "gradient", recording_gradient)
    monkeypatch.setattr(model.optimizer, "apply", recording_apply)
    scale_before = model.scale.numpy()
    model.fit(x, y, batch_size=8, epochs=2, verbose=0)

    trainable = model.trainable_weights
    assert [id(w) for w in trainable] == [id(model.dense.kernel), id(model.dense.bias)]
    assert len(asked) == len(applied) == 8
    for sources, variables in zip(asked, applied):
        assert [id(s) for s in sources] == [id(w) for w in trainable]
        assert [id(v) for v in variables] == [id(w) for w in trainable]
    np.testing.assert_array_equal(model.scale.numpy(), scale_before)


def test_frozen_layers_stay_exactly_as_they_were():
    model = mlp()
    middle = model.layers[1]
    middle.trainable = False
    model.compile(mk.optimizers.Adam(0.05), "mse")
    frozen_before = values(middle.weights)
    others_before = values([*model.layers[0].weights, *model.layers[2].weights])
    x, y = data()
    _, caught = fit_recording_warnings(model, x, y, epochs=3, batch_size=8)
    assert caught == []
    for after, before in zip(values(middle.weights), frozen_before):
        assert np.array_equal(after, before)
    # Gradients still flow through the frozen layer to the one before it.
    others_after = values([*model.layers[0].weights, *model.layers[2].weights])
    assert all(not np.array_equal(a, b) for a, b in zip(others_after, others_before))


def test_a_layer_frozen_at_construction_stays_as_built():
    model = mlp(trainable=False)
    model.compile(mk.optimizers.SGD(0.1), "mse")
    before = values(model.layers[1].weights)
    model.fit(*data(), epochs=2, verbose=0)
    assert all(np.array_equal(a, b) for a, b in zip(values(model.layers[1].weights), before))


def test_model_trainable_false_after_compile_takes_effect_at_the_next_fit():
    model = mlp()
    model.compile(mk.optimizers.Adam(0.05), "mse")
    x, y = data()
    model.fit(x, y, verbose=0)  # the optimizer is built for every weight
    model.trainable = False
    before = values(model.weights)
    _, caught = fit_recording_warnings(model, x, y, epochs=2)
    assert all(np.array_equal(a, b) for a, b in zip(values(model.weights), before))
    assert any("has no trainable weights" in m for m in messages(caught))

    model.trainable = True
    model.layers[0].trainable = False
    first_before = values(model.layers[0].weights)
    model.fit(x, y, verbose=0)
    assert all(np.array_equal(a, b) for a, b in zip(values(model.layers[0].weights), first_before))
    assert not np.array_equal(model.layers[2].kernel.numpy(), before[-2])


# ------------------------------------------------ what escapes tracking

HIDDEN_GLOBAL = Variable(np.full((3, 1), 0.5, "float32"), name="hidden_global")


class Holder:
    """A plain object: what it holds is out of tracking's reach."""

    def __init__(self):
        self.offset = Variable(np.ones((3, 1), "float32"), name="hidden_offset")


class HalfTracked(Model):
    """One registered weight, one Variable in a plain object, one global: all read in call()."""

    def __init__(self):
        super().__init__(name="half_tracked")
        self.kernel = self.add_weight("kernel", (3, 1), initializer="ones")
        self.holder = Holder()

    def call(self, inputs):
        kernel = self.kernel + self.holder.offset + HIDDEN_GLOBAL
        return ops.matmul(inputs, kernel)


def test_regression_only_the_registered_weight_trains_and_the_others_are_named():
    model = HalfTracked()
    model.compile(mk.optimizers.SGD(0.05), "mse")
    offset, hidden = model.holder.offset, HIDDEN_GLOBAL
    before = [model.kernel.numpy(), offset.numpy(), hidden.numpy()]
    x, y = data()
    _, caught = fit_recording_warnings(model, x, y, epochs=3, batch_size=8)

    assert not np.array_equal(model.kernel.numpy(), before[0])
    np.testing.assert_array_equal(offset.numpy(), before[1])
    np.testing.assert_array_equal(hidden.numpy(), before[2])
    assert [w.path for w in model.trainable_weights] == ["half_tracked/kernel"]
    text = messages(caught)
    assert any("'hidden_offset'" in m and "half_tracked.holder.offset" in m for m in text), text
    assert any("'hidden_offset'" in m and "is used in call()" in m for m in text), text
    assert any("'hidden_global'" in m and "is used in call()" in m for m in text), text
    assert not any("'half_tracked/kernel'" in m for m in text)  # the tracked one is fine
    # Each warning points at the user's line (the fit call), not inside minikeras.
    assert {w.filename for w in caught} == {__file__}


def test_the_tracking_warnings_come_on_the_first_step_only():
    model = HalfTracked()
    model.compile(mk.optimizers.SGD(0.05), "mse")
    x, y = data()
    steps_warned = []

    class Watch(mk.callbacks.Callback):
        def on_train_batch_end(self, batch, logs=None):
            steps_warned.append(len(caught))

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model.fit(x, y, batch_size=8, epochs=2, verbose=0, callbacks=[Watch()])
    assert steps_warned[0] >= 3 and len(set(steps_warned)) == 1


class WithUnusedWeight(Model):
    def __init__(self):
        super().__init__(name="with_unused")
        self.dense = layers.Dense(1)
        self.unused = self.add_weight("unused", (2,), initializer="ones")

    def call(self, inputs):
        return self.dense(inputs)


def test_a_weight_without_gradient_is_named_once_on_the_first_step():
    model = WithUnusedWeight()
    model.compile(mk.optimizers.Adam(0.01), "mse")
    x, y = data()
    _, caught = fit_recording_warnings(model, x, y, batch_size=8, epochs=2)
    no_gradient = [m for m in messages(caught) if "received no gradient" in m]
    assert len(no_gradient) == 1 and "'with_unused/unused'" in no_gradient[0]
    np.testing.assert_array_equal(model.unused.numpy(), np.ones(2, "float32"))


class WithDeadGate(Model):
    """`gate` is multiplied by zero: it gets a gradient, always 0, so it never changes."""

    def __init__(self, name="with_dead_gate"):
        super().__init__(name=name)
        self.dense = layers.Dense(1)
        self.gate = self.add_weight("gate", (1,), initializer="ones")

    def call(self, inputs):
        return self.dense(inputs) + self.gate * 0.0


def test_a_trainable_weight_that_never_changed_is_named_at_the_end():
    model = WithDeadGate()
    model.compile(mk.optimizers.SGD(0.05), "mse")
    _, caught = fit_recording_warnings(model, *data(), epochs=2)
    assert [m for m in messages(caught) if "received no gradient" in m] == []
    unchanged = [m for m in messages(caught) if "never changed" in m]
    assert len(unchanged) == 1
    # Named by its tracked path, as in model.tracking_report().
    assert "'gate'" in unchanged[0] and "report_unchanged=False" in unchanged[0]
    assert "kernel" not in unchanged[0] and "bias" not in unchanged[0]
    assert caught[-1].filename == __file__


def test_report_unchanged_false_switches_the_end_of_fit_check_off():
    model = WithDeadGate(name="quiet_dead_gate")
    model.compile(mk.optimizers.SGD(0.05), "mse", report_unchanged=False)
    _, caught = fit_recording_warnings(model, *data(), epochs=2)
    assert caught == []


def test_a_clean_model_trains_without_any_warning():
    model = mlp()
    model.compile("adam", "mse", metrics=["mae"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model.fit(*data(), epochs=2, validation_split=0.25, verbose=0)


@pytest.mark.parametrize("step", ["fit", "train_on_batch"])
def test_training_updates_a_models_own_trainable_weights_property(step):
    """A model class may narrow what trains by overriding `trainable_weights`."""

    class HeadOnly(Sequential):
        @property
        def trainable_weights(self):
            return self.layers[-1].trainable_weights

    model = HeadOnly([layers.Dense(3), layers.Dense(1)])
    model.compile(mk.optimizers.SGD(0.1), "mse")
    x = np.ones((4, 2), np.float32)
    model(x)
    body, head = model.layers[0].kernel.numpy(), model.layers[1].kernel.numpy()
    if step == "fit":
        model.fit(x, x[:, :1] * 5, epochs=1, verbose=0)
    else:
        model.train_on_batch(x, x[:, :1] * 5)
    np.testing.assert_array_equal(model.layers[0].kernel.numpy(), body)
    assert not np.array_equal(model.layers[1].kernel.numpy(), head)
