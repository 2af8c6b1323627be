"""The compiled step against the eager one where user code touches the numbers between steps.

From a differential review of the fast paths (`trainers.compiled_step`, the
optimizers' packed updates): each test runs a fit with `jit_compile="auto"`
(replayed, checked to be) and with `jit_compile=False`, and asks for the same
numbers bit for bit where user code writes the weights between steps, or
keeps what a step handed it (a metric's `y_pred`, a rule's gradient).
"""

import numpy as np

import minikeras as mk
from minikeras.engine.replay import Program
from minikeras.layers import Dense, Input

RNG = np.random.default_rng(3)
X = RNG.normal(size=(24, 5)).astype(np.float32)
Y = RNG.normal(size=(24, 40)).astype(np.float32)


def _model(jit_compile, optimizer, metrics=()):
    mk.utils.set_random_seed(4)
    model = mk.Sequential([Input((5,)), Dense(30, activation="relu"), Dense(40)])
    model.compile(optimizer, "mse", metrics=list(metrics), jit_compile=jit_compile)
    return model


def _replayed(model):
    return any(type(p) is Program for p in model._compiled_step.programs.values())


class _Shrink(mk.callbacks.Callback):
    """Writes the first kernel after every batch, and all weights at each epoch's start."""

    def on_train_batch_end(self, batch, logs=None):
        kernel = self.model.layers[0].kernel
        kernel.assign(kernel.numpy() * 0.9)

    def on_epoch_begin(self, epoch, logs=None):
        self.model.set_weights([w + 0.01 for w in self.model.get_weights()])


def test_weights_written_by_a_callback_between_replayed_steps_are_read_as_eagerly():
    results = {}
    for jit_compile in ("auto", False):
        model = _model(jit_compile, mk.optimizers.Adam(0.01))
        history = model.fit(X, Y, batch_size=8, epochs=3, shuffle=False, verbose=0,
                            callbacks=[_Shrink()])  # fmt: skip
        results[jit_compile] = model, history.history["loss"]
    assert _replayed(results["auto"][0])
    assert results["auto"][1] == results[False][1]
    for got, want in zip(results["auto"][0].weights, results[False][0].weights, strict=True):
        np.testing.assert_array_equal(got.numpy(), want.numpy(), err_msg=got.path)


class _Keep(mk.metrics.Metric):
    """A metric that keeps every `y_pred` it is given (as a user's collecting metric may)."""

    def __init__(self):
        super().__init__(name="keep")
        self.kept = []
        self.total = self.add_variable(shape=(), initializer="zeros", name="total")

    def update_state(self, y_true, y_pred, sample_weight=None):
        self.kept.append(y_pred)  # (not a copy: a buffer reused by the next step would show)
        self.total.assign_add(mk.ops.sum(y_pred))

    def result(self):
        return self.total


class _PreviousGradient(mk.optimizers.Optimizer):
    """A rule with a slot that holds the previous step's gradient, assigned as given."""

    def build(self, var_list):
        if self.built:
            return
        super().build(var_list)
        self.previous = [self.add_variable_from_reference(v, "previous") for v in var_list]

    def update_step(self, gradient, variable, learning_rate):
        previous = self.previous[self._get_variable_index(variable)]
        self.assign_sub(variable, (gradient + 0.5 * previous) * learning_rate)
        self.assign(previous, gradient)


def test_what_a_metric_or_a_rule_keeps_from_a_replayed_step_is_not_overwritten_by_the_next():
    results = {}
    for jit_compile in ("auto", False):
        metric = _Keep()
        model = _model(jit_compile, _PreviousGradient(learning_rate=0.01), [metric])
        model.fit(X, Y, batch_size=8, epochs=2, shuffle=False, verbose=0)
        results[jit_compile] = model, [np.array(kept) for kept in metric.kept]
    assert _replayed(results["auto"][0])
    for got, want in zip(results["auto"][1], results[False][1], strict=True):
        np.testing.assert_array_equal(got, want)
    optimizers = results["auto"][0].optimizer, results[False][0].optimizer
    for got, want in zip(*(o.variables for o in optimizers), strict=True):
        np.testing.assert_array_equal(got.numpy(), want.numpy(), err_msg=got.name)


def test_a_frozen_base_given_new_weights_between_fits_trains_as_eagerly():
    results = {}
    for jit_compile in ("auto", False):
        mk.utils.set_random_seed(5)
        base = mk.Sequential([Input((5,)), Dense(6, activation="relu"), Dense(4)])
        model = mk.Sequential([Input((5,)), base, Dense(40)])
        base.trainable = False
        model.compile(mk.optimizers.SGD(0.01), "mse", jit_compile=jit_compile)
        model.fit(X, Y, batch_size=8, shuffle=False, verbose=0)
        base.set_weights([w * -1.5 for w in base.get_weights()])  # (pretrained weights, say)
        history = model.fit(X, Y, batch_size=8, shuffle=False, verbose=0)
        results[jit_compile] = model, history.history["loss"]
    assert results["auto"][1] == results[False][1]
    for got, want in zip(results["auto"][0].weights, results[False][0].weights, strict=True):
        np.testing.assert_array_equal(got.numpy(), want.numpy(), err_msg=got.path)
