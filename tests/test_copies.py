"""A model pickled or deep-copied mid-training trains on exactly as the original does.

Keras models pickle and deep-copy (ensembles, a "best so far" snapshot,
joblib, scikit-learn's `clone` of a fitted estimator). What speeds
minikeras's steps up is kept beside the state and must not travel with it:
the recorded programs (generated code), the optimizer's spares and packed
arrays (slots and values that are views of one array, which copies are not)
and its maps keyed by `id`. A copy leaves them behind and makes them anew.
"""

import copy
import pickle

import numpy as np
import pytest

import minikeras as mk

RNG = np.random.default_rng(0)
X = RNG.normal(size=(48, 5)).astype(np.float32)
Y = (X @ RNG.normal(size=(5, 2))).astype(np.float32)


class ElementwiseMomentum(mk.optimizers.Optimizer):
    """A user's rule declared elementwise: run packed on the small variables."""

    elementwise_rule = True

    def build(self, variables):
        super().build(variables)
        self.velocities = self.add_optimizer_variables(variables, "velocity")

    def update_step(self, gradient, variable, learning_rate):
        velocity = self.velocities[self._get_variable_index(variable)]
        self.assign(velocity, 0.9 * velocity + gradient)
        self.assign_sub(variable, learning_rate * velocity)


class NormScaled(ElementwiseMomentum):
    """A user's rule that reads a norm: traced and replayed one variable at a time."""

    elementwise_rule = False

    def update_step(self, gradient, variable, learning_rate):
        scale = 1.0 / (1.0 + mk.ops.sqrt(mk.ops.sum(mk.ops.square(gradient))))
        self.assign_sub(variable, learning_rate * scale * gradient)


def _decay_all_but_biases():
    optimizer = mk.optimizers.AdamW(0.01, weight_decay=0.1)
    optimizer.exclude_from_weight_decay(var_names=["bias"])
    return optimizer


def _by_layer():
    mapping = mk.optimizers.OptimizerMap(mk.optimizers.Adam(0.01), {"bias": mk.optimizers.SGD(0.1)})
    return mk.optimizers.MultiOptimizer(mapping)


OPTIMIZERS = {
    "adam": lambda: mk.optimizers.Adam(0.01),
    "adamw": lambda: mk.optimizers.AdamW(0.01, weight_decay=0.1),
    "adamw excluding biases": _decay_all_but_biases,
    "sgd momentum": lambda: mk.optimizers.SGD(0.01, momentum=0.9, nesterov=True),
    "rmsprop centered": lambda: mk.optimizers.RMSprop(0.01, centered=True),
    "adam ema clipnorm": lambda: mk.optimizers.Adam(0.01, use_ema=True, clipnorm=1.0),
    "user elementwise": lambda: ElementwiseMomentum(0.01),
    "user norm": lambda: NormScaled(0.01),
    "multi": _by_layer,
}
COPIES = {"deepcopy": copy.deepcopy, "pickle": lambda obj: pickle.loads(pickle.dumps(obj))}


def _model(optimizer):
    mk.utils.set_random_seed(0)
    model = mk.Sequential(
        [mk.Input((5,)), mk.layers.Dense(8, activation="relu"), mk.layers.Dense(2)]
    )
    model.compile(optimizer, "mse")
    return model


def _fit(model, epochs=2):
    model.fit(X, Y, batch_size=8, epochs=epochs, shuffle=False, verbose=0)


@pytest.mark.parametrize("how", COPIES)
@pytest.mark.parametrize("name", OPTIMIZERS)
def test_a_copy_mid_training_trains_on_as_the_original(name, how):
    model = _model(OPTIMIZERS[name]())
    _fit(model)
    twin = COPIES[how](model)
    for each in (model, twin):  # (a copy writing into the original's arrays would show here)
        _fit(each)
    for mine, theirs in zip(model.weights, twin.weights):
        np.testing.assert_array_equal(mine.numpy(), theirs.numpy(), err_msg=mine.path)
    for mine, theirs in zip(model.optimizer.variables, twin.optimizer.variables):
        np.testing.assert_array_equal(mine.numpy(), theirs.numpy(), err_msg=mine.path)


@pytest.mark.parametrize("how", COPIES)
def test_a_weight_left_out_of_decay_stays_out_in_a_copy_made_before_building(how):
    # (the optimizer is built at the first update, after the copy)
    model = _model(mk.optimizers.AdamW(0.1, weight_decay=0.5))
    model.optimizer.exclude_from_weight_decay(var_list=[model.layers[0].bias])
    twin = COPIES[how](model)
    for each in (model, twin):
        _fit(each, epochs=1)
    np.testing.assert_array_equal(twin.optimizer._decayed, [True, False, True, True])
    for mine, theirs in zip(model.weights, twin.weights):
        np.testing.assert_array_equal(mine.numpy(), theirs.numpy())


def test_a_copy_records_its_own_programs_and_leaves_the_original_untouched():
    model = _model(ElementwiseMomentum(0.01))
    _fit(model)
    with mk.GradientTape():
        model(X, training=True)
    before = [weight.numpy().copy() for weight in model.weights]
    twin = pickle.loads(pickle.dumps(model))
    assert twin._compiled_step is None and twin.optimizer._rule_runner is None
    assert twin.optimizer._packed_rule is None
    _fit(twin)
    assert twin._compiled_step.programs and twin.optimizer._rule_runner is not None
    for weight, value in zip(model.weights, before):
        np.testing.assert_array_equal(weight.numpy(), value)


class Replacing(mk.Model):
    """A subclassed model that sets an attribute twice: Keras keeps both layers."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.proj = mk.layers.Dense(3, name="first_proj")
        self.head = mk.layers.Dense(2, name="head")
        self.proj = mk.layers.Dense(4, name="proj")

    def call(self, inputs):
        return self.head(self.proj(inputs))


@pytest.mark.parametrize("how", COPIES)
def test_a_copy_keeps_the_keras_order_of_a_models_layers(how):
    model = Replacing()
    model(X)
    twin = COPIES[how](model)
    assert [layer.name for layer in twin.layers] == ["first_proj", "head", "proj"]
    assert [w.path for w in twin.weights] == [w.path for w in model.weights]
    twin.extra = mk.layers.Dense(1, name="extra")  # (assigned after the copy: last)
    assert [layer.name for layer in twin.layers][-1] == "extra"


def test_a_model_pickled_in_another_process_trains_without_warnings(monkeypatch):
    # A fresh process counts its Variables from 0: the pickled ones carry the other
    # process's creation indices, which must not make them look made inside a call.
    import warnings

    from minikeras.engine.variable import Variable

    model = mk.Sequential([mk.Input((5,)), mk.layers.Dense(3), mk.layers.Dense(2)])
    model.compile("sgd", "mse")
    model.fit(X, Y, epochs=1, verbose=0)
    data = pickle.dumps(model)
    order = [w.path for w in model.weights]
    monkeypatch.setattr(Variable, "_uid", 0)  # (as in a new process)
    loaded = pickle.loads(data)
    assert Variable._uid >= max(w._index for w in loaded.weights)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        loaded.fit(X, Y, epochs=1, verbose=0)
    assert [w.path for w in loaded.weights] == order
    fresh = mk.Variable([1.0])  # (made after them: later in the order)
    assert fresh._index > max(w._index for w in loaded.weights)
