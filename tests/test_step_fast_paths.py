"""The fast paths of a custom training loop's step (issue #17), each against its general path.

Each fast path skips general machinery in the common case; the general path
still serves the rest. Both must give the same bits, and the checks that
protect users must still fire.
"""

import numpy as np
import pytest

import minikeras as mk
from minikeras.engine import variable_reads
from minikeras.engine.replay import Program
from minikeras.layers import Dense, Input

RNG = np.random.default_rng(0)
X = RNG.normal(size=(16, 6)).astype(np.float32)
LABELS = RNG.integers(0, 3, size=16)


def mlp(frozen=False):
    model = mk.Sequential([Input((6,)), Dense(8, activation="relu"), Dense(3)])
    if frozen:
        model.layers[0].trainable = False
    return model


def loop(model, steps=4, before_step=None, optimizer=None):
    """A custom loop; returns per step (loss, gradients), and the final weights."""
    loss_fn = mk.losses.SparseCategoricalCrossentropy(from_logits=True)
    optimizer = optimizer or mk.optimizers.SGD(0.1)
    seen = []
    for step in range(steps):
        with mk.GradientTape() as tape:
            if before_step is not None:
                before_step(tape, step)
            loss = loss_fn(LABELS, model(X, training=True))
        grads = tape.gradient(loss, model.trainable_weights)
        optimizer.apply_gradients(zip(grads, model.trainable_weights))
        seen.append((loss.numpy(), [g.numpy() for g in grads]))
    return seen, [w.numpy() for w in model.weights]


def assert_same_bits(a, b):
    (steps_a, weights_a), (steps_b, weights_b) = a, b
    for (loss_a, grads_a), (loss_b, grads_b) in zip(steps_a, steps_b, strict=True):
        np.testing.assert_array_equal(loss_a, loss_b)
        for got, want in zip(grads_a, grads_b, strict=True):
            np.testing.assert_array_equal(got, want)
    for got, want in zip(weights_a, weights_b, strict=True):
        np.testing.assert_array_equal(got, want)


# ----------------------------------------------- a replayed call's weight reads


@pytest.mark.parametrize("frozen", [False, True])
def test_a_replayed_call_reads_its_weights_alike_with_or_without_read_observers(frozen):
    # Without observers the replay takes the weights' roots from the tape directly;
    # with one it reads each weight through `read_variable`, which tells the observer.
    weights = mlp(frozen).get_weights()

    def run(observe):
        model = mlp(frozen)
        model.set_weights(weights)
        seen = []
        if observe:
            variable_reads.add_read_observer(seen.append)
        try:  # (the last step's reads: a replayed call's, recorded at the second)
            result = loop(model, before_step=lambda tape, step: seen.clear())
        finally:
            if observe:
                variable_reads.remove_read_observer(seen.append)
        return result, seen, model

    fast, _, _ = run(False)
    general, seen, model = run(True)
    assert_same_bits(fast, general)
    assert [type(p) for p in model._replayed_calls.programs.values()] == [Program]
    # The replayed step told the observer of every weight, the frozen ones too.
    read = {id(variable) for variable in seen}
    assert all(id(w) in read for w in model.weights)
    if frozen:
        assert [len(g) for _, g in fast[0]] == [2] * 4


@pytest.mark.parametrize("observe", [False, True])
def test_a_replayed_call_with_a_watched_frozen_weight_runs_eagerly_either_way(observe):
    # (the tape watches a weight the recording read as data: the eager call differentiates it)
    model = mlp(frozen=True)
    kernel = model.layers[0].kernel
    if observe:
        variable_reads.add_read_observer(id)
    try:
        for step in range(3):  # (recorded at the second call, replayed from the third)
            with mk.GradientTape() as tape:
                if step == 2:
                    tape.watch(kernel)
                total = mk.ops.sum(model(X, training=True))
    finally:
        if observe:
            variable_reads.remove_read_observer(id)
    assert tape.gradient(total, kernel) is not None  # (a replay would give None)
