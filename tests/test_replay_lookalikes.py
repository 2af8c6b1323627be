"""Code that looks built in to a replay but is not, found by a review: it must stay eager.

A recorded model call (`models.replayed_call`) or training step
(`trainers.compiled_step`) fixes every Python number the recording saw, so
it may only replay what minikeras defines. A function wrapped with
`functools.wraps` carries the wrapped function's module, and a method set on
an instance hides behind its class: each of these once passed for built in.
Each test runs the code replayed-if-allowed and eagerly, and asks for the
same numbers, and a reason for staying eager.
"""

import functools

import numpy as np
import pytest

import minikeras as mk
from minikeras.layers import Dense, Input
from minikeras.models import replayed_call

RNG = np.random.default_rng(3)
BATCHES = [RNG.normal(size=(16, 6)).astype(np.float32) * (i + 1) for i in range(5)]
X = RNG.normal(size=(64, 6)).astype(np.float32)
TARGETS = (RNG.normal(size=(64, 1)) * np.repeat([0.1, 1.0, 10.0, 3.0], 16)[:, None]).astype(
    np.float32
)


@functools.wraps(mk.activations.relu)
def scaled_relu(x):
    """A relu scaled by a Python number taken from the data."""
    out = mk.activations.relu(x)
    return out / float(np.abs(np.asarray(out)).max() + 1.0)


def custom_loop(make, eagerly):
    """Losses and gradients of a `GradientTape` loop over `BATCHES`, and the model."""
    mk.utils.set_random_seed(0)
    model = make()
    if eagerly:
        model.compile("sgd", "mse", run_eagerly=True)
    results = []
    for x in BATCHES:
        with mk.GradientTape() as tape:
            y = model(x)
            loss = mk.ops.sum(y * y)
        grads = tape.gradient(loss, model.trainable_weights)
        results.append([loss.numpy()] + [g.numpy() for g in grads])
    return results, model


def assert_loops_agree(make):
    (replayed, model), (eager, _) = custom_loop(make, False), custom_loop(make, True)
    for got, want in zip(replayed, eager, strict=True):
        for a, b in zip(got, want, strict=True):
            np.testing.assert_array_equal(a, b)
    return model


def test_an_activation_wrapped_with_functools_wraps_keeps_the_call_eager():
    def make():
        return mk.Sequential([Input((6,)), Dense(8, activation=scaled_relu), Dense(3)])

    model = assert_loops_agree(make)
    assert "activation minikeras does not define" in replayed_call.not_replayable(model)


@pytest.mark.parametrize("where", ["layer", "model"])
def test_a_call_replaced_on_an_instance_keeps_the_call_eager(where):
    seen = []

    def make():
        model = mk.Sequential([Input((6,)), Dense(8), Dense(3)])
        patched = model.layers[0] if where == "layer" else model
        original = patched.call

        def call(inputs, *args, **kwargs):  # a forward hook and a number from the data
            out = original(inputs, *args, **kwargs)
            seen.append(where)
            return out / float(np.abs(np.asarray(out)).max())

        patched.call = call
        return model

    model = assert_loops_agree(make)
    assert len(seen) == 2 * len(BATCHES)  # (the hook ran at every call of both loops)
    assert "replaced on the instance" in replayed_call.not_replayable(model)


def train_on_batches(loss, jit_compile, regularizer=None):
    mk.utils.set_random_seed(0)
    model = mk.Sequential([Input((6,)), Dense(1, kernel_regularizer=regularizer)])
    model.compile(mk.optimizers.SGD(0.01), loss, jit_compile=jit_compile)
    losses = [model.train_on_batch(X[i : i + 16], TARGETS[i : i + 16]) for i in range(0, 64, 16)]
    return losses, model


def assert_steps_agree(loss, regularizer=None):
    got, compiled = train_on_batches(loss, "auto", regularizer)
    want, eager = train_on_batches(loss, False, regularizer)
    assert got == want
    for a, b in zip(compiled.get_weights(), eager.get_weights(), strict=True):
        np.testing.assert_array_equal(a, b)
    return compiled._compiled_step.reason


def test_a_loss_wrapped_with_functools_wraps_is_not_compiled():
    @functools.wraps(mk.losses.mean_squared_error)
    def spread_mse(y_true, y_pred):  # MSE over the spread of each batch's targets
        spread = float(np.std(np.asarray(y_true))) + 1e-3
        return mk.losses.mean_squared_error(y_true, y_pred) / spread

    assert "not replayable" in assert_steps_agree(spread_mse)


def test_a_built_in_loss_with_its_function_replaced_is_not_compiled():
    loss = mk.losses.MeanSquaredError()

    def spread_mse(y_true, y_pred):
        spread = float(np.std(np.asarray(y_true))) + 1e-3
        return mk.losses.mean_squared_error(y_true, y_pred) / spread

    loss.fn = spread_mse
    assert "a function of its own" in assert_steps_agree(loss)


def test_a_regularizer_wrapped_with_functools_wraps_is_not_compiled():
    l2 = mk.regularizers.L2(0.01)

    @functools.wraps(mk.regularizers.L2)
    def spread_l2(weight):  # a penalty scaled by a Python number from the weight
        return l2(weight) * float(np.abs(np.asarray(weight)).max())

    assert "regularizer minikeras does not define" in assert_steps_agree("mse", spread_l2)
