"""`Model`'s training methods are declared in `models/` and run their bodies in `trainers/`.

The loops look the step up on the model at each batch: a step that is the
default method runs its body directly (`trainers.steps`), and any other (a
subclass's, one set on the instance, a patch of the class, one a callback
swaps in mid-fit) is called as it is.
"""

import numpy as np
import pytest

import minikeras as mk
from minikeras.models.model_steps import DEFAULT_STEPS, ModelSteps


def model_and_data():
    model = mk.Sequential([mk.Input((3,)), mk.layers.Dense(2, kernel_initializer="ones")])
    model.compile(mk.optimizers.SGD(0.1), "mse", jit_compile=False)
    x = np.arange(12, dtype="float32").reshape(4, 3) / 10
    return model, x, np.zeros((4, 2), "float32")


def run_all(model, x, y):
    model.fit(x, y, batch_size=2, epochs=1, verbose=0)
    model.evaluate(x, y, batch_size=4, verbose=0)
    model.predict(x, batch_size=4, verbose=0)


def test_the_defaults_are_the_methods_as_defined():
    for name, function in DEFAULT_STEPS.items():
        assert getattr(mk.Model, name) is function is ModelSteps.__dict__[name]


def test_fit_evaluate_and_predict_call_a_step_set_on_the_instance():
    model, x, y = model_and_data()
    calls = []

    def counted(name):
        method = getattr(ModelSteps, name).__get__(model)

        def step(data):
            calls.append(name)
            return method(data)

        return step

    for name in ("train_step", "test_step", "predict_step"):
        setattr(model, name, counted(name))
    run_all(model, x, y)
    assert calls == ["train_step"] * 2 + ["test_step", "predict_step"]


def test_a_patch_of_the_class_is_called(monkeypatch):
    # (what a tracing or monitoring tool does to a framework's step)
    model, x, y = model_and_data()
    calls = []
    for name in ("train_step", "test_step", "predict_step", "compute_loss"):
        original = getattr(ModelSteps, name)

        def patched(self, *args, _original=original, _name=name, **kwargs):
            calls.append(_name)
            return _original(self, *args, **kwargs)

        monkeypatch.setattr(ModelSteps, name, patched)
    run_all(model, x, y)
    assert calls == ["train_step", "compute_loss"] * 2 + ["test_step", "compute_loss"] + [
        "predict_step"
    ]


def test_a_step_a_callback_swaps_in_during_fit_runs_from_then_on():
    model, x, y = model_and_data()

    class Swap(mk.callbacks.Callback):
        def on_epoch_begin(self, epoch, logs=None):
            if epoch == 1:
                self.model.train_step = lambda data: {"loss": -1.0}

    history = model.fit(x, y, batch_size=2, epochs=3, verbose=0, callbacks=[Swap()])
    losses = history.history["loss"]
    assert losses[0] > 0 and losses[1:] == [-1.0, -1.0]


def test_fit_calls_a_subclass_step_and_its_super_runs_the_default():
    seen = []

    class Counting(mk.Sequential):
        def train_step(self, data):
            seen.append(len(data[0]))
            return super().train_step(data)

    model = Counting([mk.Input((3,)), mk.layers.Dense(2)])
    model.compile("sgd", "mse")
    history = model.fit(np.ones((6, 3)), np.zeros((6, 2)), batch_size=4, epochs=2, verbose=0)
    assert seen == [4, 2, 4, 2] and len(history.history["loss"]) == 2


@pytest.mark.parametrize("takes_training", [True, False])
def test_a_custom_step_may_call_keras_private_compute_loss(takes_training):
    # Keras 3's steps call `_compute_loss`, and its docstring asks custom steps to.
    seen = []

    class Custom(mk.Sequential):
        if takes_training:

            def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
                seen.append(training)
                return super().compute_loss(x, y, y_pred, sample_weight, training)

        else:  # (the signature before Keras 3.3: called without `training`)

            def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None):
                seen.append(None)
                return super().compute_loss(x, y, y_pred, sample_weight)

        def test_step(self, data):
            x, y = data[0], data[1]
            loss = self._compute_loss(x=x, y=y, y_pred=self(x), training=False)
            return {"loss": float(loss)}

    model = Custom([mk.Input((3,)), mk.layers.Dense(1, kernel_initializer="zeros")])
    model.compile("sgd", "mse")
    logs = model.evaluate(np.ones((4, 3)), np.full((4, 1), 3.0), verbose=0, return_dict=True)
    assert logs == {"loss": 9.0}
    assert seen == ([False] if takes_training else [None])


def test_the_training_methods_are_attributes_of_the_model_class():
    names = (
        "compile fit evaluate predict train_on_batch test_on_batch predict_on_batch "
        "train_step test_step predict_step compute_loss compute_metrics reset_metrics "
        "get_metrics_result"
    )
    for name in names.split():
        method = getattr(mk.Model, name)
        assert callable(method) and method.__doc__ and "Example:" in method.__doc__, name
