"""State that is safe to share: each thread has its own tapes, calls, names and random stream.

Threads run with a tiny switch interval, so that they interleave inside
single steps; their results must equal the same work done one after the other.
"""

import sys
import threading

import numpy as np
import pytest

import minikeras as mk
from minikeras import GradientTape, ops
from minikeras.engine import context


@pytest.fixture(autouse=True)
def frequent_switches():
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(interval)


def run_in_threads(functions):
    """Runs each function in a thread of its own, started together; returns their results."""
    results, errors = [None] * len(functions), []
    barrier = threading.Barrier(len(functions))

    def run(index, function):
        try:
            barrier.wait()
            results[index] = function()
        except BaseException as error:  # reported below, in the test's thread
            errors.append(error)

    threads = [threading.Thread(target=run, args=item) for item in enumerate(functions)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]
    return results


def train(seed):
    """Seeds, builds and fits a small model (shuffled, with dropout); returns weights and losses."""
    mk.utils.set_random_seed(seed)
    data = np.random.default_rng(seed)
    x = data.standard_normal((96, 8)).astype("float32")
    y = data.integers(0, 3, 96)
    model = mk.Sequential(
        [
            mk.Input((8,)),
            mk.layers.Dense(16, activation="relu"),
            mk.layers.Dropout(0.25),
            mk.layers.Dense(3),
        ]
    )
    model.compile(
        optimizer=mk.optimizers.Adam(1e-2),
        loss=mk.losses.SparseCategoricalCrossentropy(from_logits=True),
    )
    history = model.fit(x, y, batch_size=16, epochs=3, shuffle=True, verbose=0)
    return model.get_weights(), history.history["loss"]


def test_two_threads_training_their_own_models_match_a_serial_run():
    serial = [train(1), train(2)]
    threaded = run_in_threads([lambda: train(1), lambda: train(2)])
    assert not np.allclose(serial[0][1], serial[1][1])  # the two trainings differ
    for (weights, losses), (expected_weights, expected_losses) in zip(threaded, serial):
        assert losses == expected_losses
        for got, expected in zip(weights, expected_weights):
            np.testing.assert_array_equal(got, expected)


def test_four_threads_predicting_with_one_model_match_a_serial_predict():
    mk.utils.set_random_seed(0)
    model = mk.Sequential(
        [mk.Input((6,)), mk.layers.Dense(32, activation="relu"), mk.layers.Dense(4)]
    )
    inputs = [np.random.default_rng(i).standard_normal((64, 6)).astype("float32") for i in range(4)]
    expected = [model.predict(x, batch_size=8, verbose=0) for x in inputs]

    def predict_many(x):
        return [model.predict(x, batch_size=8, verbose=0) for _ in range(5)]

    results = run_in_threads([lambda x=x: predict_many(x) for x in inputs])
    for outputs, want in zip(results, expected):
        for output in outputs:
            np.testing.assert_array_equal(output, want)


def test_tapes_in_other_threads_do_not_record_this_threads_work():
    x = mk.Variable(np.array([1.0, 2.0], "float32"))
    started, finish = threading.Event(), threading.Event()

    def hold_a_tape():
        with GradientTape() as tape:
            started.set()
            finish.wait(5)
            loss = ops.sum(x * x)
        return tape.gradient(loss, x).numpy()

    thread_result = []
    thread = threading.Thread(target=lambda: thread_result.append(hold_a_tape()))
    thread.start()
    started.wait(5)
    # Another thread's tape is recording, but this thread's read is plain.
    assert type(ops.multiply(x, 3.0)._value) is np.ndarray
    assert context.state.active_tapes == []
    finish.set()
    thread.join()
    np.testing.assert_array_equal(thread_result[0], [2.0, 4.0])


def test_clear_session_restarts_names_and_forgets_the_seed():
    mk.utils.clear_session()
    first = [mk.layers.Dense(2).name, mk.layers.Dense(2).name]
    mk.utils.clear_session(free_memory=False)
    assert first == ["dense", "dense_1"]
    assert mk.layers.Dense(2).name == "dense"
    mk.utils.set_random_seed(5)
    seeded = mk.random.generator().random(4)
    mk.utils.set_random_seed(5)
    mk.utils.clear_session()
    assert not np.array_equal(mk.random.generator().random(4), seeded)


def test_each_thread_counts_names_from_the_start():
    mk.utils.clear_session()
    here = [mk.layers.Dense(2).name for _ in range(3)]
    there = run_in_threads([lambda: [mk.layers.Dense(2).name for _ in range(2)]])[0]
    assert here == ["dense", "dense_1", "dense_2"]
    assert there == ["dense", "dense_1"]
    assert mk.layers.Dense(2).name == "dense_3"
