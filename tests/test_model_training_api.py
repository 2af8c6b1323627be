"""`Model`'s training methods are declared in `models/` and run their bodies in `trainers/`.

The loops call a step's body directly when the model does not override it
(`trainers.steps.step_of`), and the model's own step (its class's, or one set
on the instance) when it does: these tests show both reach the same place.
"""

import numpy as np
import pytest

import minikeras as mk
from minikeras.models.model_steps import ModelSteps
from minikeras.trainers import steps


def model_and_data():
    model = mk.Sequential([mk.Input((3,)), mk.layers.Dense(2, kernel_initializer="ones")])
    model.compile(mk.optimizers.SGD(0.1), "mse", jit_compile=False)
    x = np.arange(12, dtype="float32").reshape(4, 3) / 10
    return model, x, np.zeros((4, 2), "float32")


@pytest.mark.parametrize("name", ["train_step", "test_step", "predict_step"])
def test_a_step_not_overridden_is_its_body_with_the_model(name):
    model, _, _ = model_and_data()
    step = steps.step_of(model, name)
    assert step.func is getattr(steps, name) and step.args == (model,)


def test_the_default_body_and_the_method_give_the_same_step():
    first, x, y = model_and_data()
    second, _, _ = model_and_data()
    logs_body = steps.step_of(first, "train_step")((x, y, None))
    logs_method = second.train_step((x, y, None))
    assert logs_body == logs_method
    for a, b in zip(first.weights, second.weights):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    # (one SGD step on mse from all-ones kernels changed them)
    assert not np.array_equal(first.weights[0].numpy(), np.ones((3, 2), "float32"))


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
        assert steps.step_of(model, name) is getattr(model, name)
    model.fit(x, y, batch_size=2, epochs=1, verbose=0)
    model.evaluate(x, y, batch_size=4, verbose=0)
    model.predict(x, batch_size=4, verbose=0)
    assert calls == ["train_step"] * 2 + ["test_step", "predict_step"]


def test_fit_calls_a_subclass_step_and_its_super_runs_the_default():
    seen = []

    class Counting(mk.Sequential):
        def train_step(self, data):
            seen.append(len(data[0]))
            return super().train_step(data)

    model = Counting([mk.Input((3,)), mk.layers.Dense(2)])
    model.compile("sgd", "mse")
    assert steps.step_of(model, "train_step") == model.train_step
    history = model.fit(np.ones((6, 3)), np.zeros((6, 2)), batch_size=4, epochs=2, verbose=0)
    assert seen == [4, 2, 4, 2] and len(history.history["loss"]) == 2


def test_the_training_methods_are_attributes_of_the_model_class():
    names = (
        "compile fit evaluate predict train_on_batch test_on_batch predict_on_batch "
        "train_step test_step predict_step compute_loss compute_metrics reset_metrics "
        "get_metrics_result"
    )
    for name in names.split():
        method = getattr(mk.Model, name)
        assert callable(method) and method.__doc__ and "Example:" in method.__doc__, name
