"""A model called outside any tape (`predict`, `evaluate`, `model(x)`): its forward pass replayed.

The replay must give bit for bit what the eager call gives (the replay
switched off), read the weights as they are at each call, and leave eager
whatever a replay could get wrong.
"""

import threading

import numpy as np
import pytest

import minikeras as mk
from minikeras.engine.replay import Program
from minikeras.layers import (
    Add,
    Concatenate,
    Conv2D,
    Dense,
    Dropout,
    Flatten,
    Input,
    MaxPooling2D,
    Softmax,
)
from minikeras.models import recorded_calls, replayed_call

RNG = np.random.default_rng(1)
X = RNG.normal(size=(16, 6)).astype(np.float32)
LABELS = RNG.integers(0, 3, size=16)
IMAGES = RNG.normal(size=(8, 6, 6, 2)).astype(np.float32)


def mlp():
    return mk.Sequential([Input((6,)), Dense(8, activation="relu"), Dropout(0.3), Dense(3)])


def functional():
    inputs = Input((6,))
    shared = Dense(5, activation="tanh")
    a, b = Dense(5)(inputs), Dense(5, activation="gelu")(inputs)
    merged = Concatenate()([Add()([shared(a), b, shared(b)]), a])
    return mk.Model(inputs, Softmax()(Dense(3)(merged)))


def cnn():
    return mk.Sequential(
        [Input((6, 6, 2)), Conv2D(3, 3, activation="relu"), MaxPooling2D(), Flatten(), Dense(3)]
    )


def nested():
    inputs = Input((6,))
    return mk.Model(inputs, Dense(3)(mlp()(inputs)))


MODELS = [(mlp, X), (functional, X), (cnn, IMAGES), (nested, X)]
IDS = ["mlp", "functional", "cnn", "nested"]


def eager(monkeypatch):
    monkeypatch.setattr(replayed_call, "inference_call", lambda model, inputs, kwargs: None)


def inferences(monkeypatch, kind="infer"):
    """Counts `Program.infer`'s replays (the forward pass alone)."""
    count = [0]
    original = Program.infer

    def counted(self, inputs, sources):
        count[0] += 1
        return original(self, inputs, sources)

    monkeypatch.setattr(Program, "infer", counted)
    return count


def calls(make, x, training):
    """Outputs of repeated calls, with a weight changed in between (read afresh)."""
    mk.utils.set_random_seed(0)
    model = make()
    seen = []
    for step in range(4):
        kwargs = {} if training == "absent" else {"training": training}
        seen.append(model(x, **kwargs).numpy())
        kernel = model.trainable_weights[0]
        kernel.assign(kernel.numpy() * 0.9 + 0.01 * step)
    return seen


@pytest.mark.parametrize("training", ["absent", None, False, True])
@pytest.mark.parametrize("make, x", MODELS, ids=IDS)
def test_replayed_calls_give_the_eager_outputs_bit_for_bit(make, x, training, monkeypatch):
    count = inferences(monkeypatch)
    replayed = calls(make, x, training)
    assert count[0] == 2  # (the first call eager, the second recorded, then replays)
    eager(monkeypatch)
    for got, want in zip(replayed, calls(make, x, training), strict=True):
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("make, x", MODELS, ids=IDS)
def test_predict_and_evaluate_replay_and_match_eager(make, x, monkeypatch):
    def run():
        mk.utils.set_random_seed(0)
        model = make()
        model.compile("adam", mk.losses.SparseCategoricalCrossentropy(), metrics=["accuracy"])
        labels = LABELS[: len(x)]
        first = model.predict(x, batch_size=3, verbose=0)  # (a last batch of another size)
        model.fit(x, labels, batch_size=4, epochs=2, verbose=0, shuffle=False)
        second = model.predict(x, batch_size=3, verbose=0)
        scores = model.evaluate(x, labels, batch_size=3, verbose=0)
        return first, second, np.array(scores)

    count = inferences(monkeypatch)
    replayed = run()
    assert count[0] > 0
    eager(monkeypatch)
    for got, want in zip(replayed, run(), strict=True):
        np.testing.assert_array_equal(got, want)


def test_the_call_recorded_under_a_tape_serves_the_inference_and_back(monkeypatch):
    count = inferences(monkeypatch)
    model = mlp()
    model(X)
    with mk.GradientTape():
        model(X, training=False)  # recorded under the user's tape
    assert len(replayed_call_programs(model)) == 1
    want = model(X, training=False).numpy()
    assert count[0] == 1 and len(replayed_call_programs(model)) == 1
    model(X + 1, training=True)  # recorded under a tape of its own
    with mk.GradientTape() as tape:
        total = mk.ops.sum(model(X, training=True))  # replayed as one node of this tape
    assert len(replayed_call_programs(model)) == 2
    assert all(g is not None for g in tape.gradient(total, model.trainable_weights))
    eager(monkeypatch)
    np.testing.assert_array_equal(want, model(X, training=False).numpy())


def replayed_call_programs(model):
    recorded = model.__dict__.get("_replayed_calls")
    return {} if recorded is None else recorded.programs


def test_calls_that_must_stay_eager_record_nothing(monkeypatch):
    count = inferences(monkeypatch)
    model = mlp()
    model(X)
    symbolic = mk.Model(model.inputs, model(model.inputs[0]))  # a symbolic call: a graph
    for _ in range(3):
        model(X.tolist())  # (a list: converted by the eager call)
        model(X, training=np.bool_(True))  # (not a Python bool)
        model(mk.Tensor(X), mask=None)
        symbolic(X)  # (a model around it: replayed itself, the inner call not alone)
    assert count[0] == 1
    assert replayed_call_programs(model) == {}


def test_a_frozen_model_replays_as_eagerly_outside_a_tape_and_for_a_traced_input(monkeypatch):
    def run():
        mk.utils.set_random_seed(0)
        model = functional()
        model.trainable = False  # (a feature extractor: no trainable weight)
        outputs = [model(X).numpy() for _ in range(3)]
        x = mk.Tensor(X)
        for _ in range(3):
            with mk.GradientTape() as tape:
                tape.watch(x)
                total = mk.ops.sum(model(x))
            outputs.append(tape.gradient(total, x).numpy())
        with mk.GradientTape() as tape:  # (nothing watched: no gradient, no node)
            total = mk.ops.sum(model(X))
        assert tape.gradient(total, model.weights[0]) is None
        return model, outputs

    count = inferences(monkeypatch)
    model, replayed = run()
    assert count[0] == 1
    # (under a tape, the traced input's gradient is the only one a node gives)
    assert [type(p) for p in replayed_call_programs(model).values()] == [Program, Program]
    assert np.abs(replayed[-1]).sum() > 0
    eager(monkeypatch)
    for got, want in zip(replayed, run()[1], strict=True):
        np.testing.assert_array_equal(got, want)


def test_calls_that_raise_record_nothing_and_do_not_end_the_recordings(monkeypatch):
    count = inferences(monkeypatch)
    model = mlp()
    model(X)
    for _ in range(recorded_calls.MOST_RECORDINGS + 2):
        with pytest.raises(ValueError):
            model(np.ones((4, 5), np.float32))
    for size in (3, 4, 5):
        model(X[:size])
        model(X[:size])
    assert count[0] == 3


def test_a_model_compiled_for_eager_steps_is_called_eagerly(monkeypatch):
    count = inferences(monkeypatch)
    model = mlp()
    model.compile("adam", "mse", run_eagerly=True)
    for _ in range(3):
        model.predict(X, verbose=0)
    assert count[0] == 0 and replayed_call_programs(model) == {}


def test_a_wrong_input_still_gets_the_layers_error_and_records_nothing():
    model = mlp()
    model(X)
    model(X)
    for _ in range(2):
        with pytest.raises(ValueError, match="dense"):
            model(np.ones((4, 5), np.float32))
    assert set(replayed_call_programs(model)) == {(X.shape, np.dtype("float32"), None, False)}


def test_an_attribute_set_on_a_layer_is_seen_by_the_next_call(monkeypatch):
    def run():
        mk.utils.set_random_seed(0)
        model = mk.Sequential([Input((6,)), Dense(4, activation="relu")])
        outputs = [model(X).numpy() for _ in range(3)]
        model.layers[0].activation = mk.activations.get("tanh")
        return outputs + [model(X).numpy() for _ in range(3)]

    replayed = run()
    assert replayed[-1].min() < 0  # (tanh, not relu)
    eager(monkeypatch)
    for got, want in zip(replayed, run(), strict=True):
        np.testing.assert_array_equal(got, want)


def test_four_threads_calling_one_model_match_serial_calls():
    model = functional()
    inputs = [RNG.normal(size=(5, 6)).astype(np.float32) for _ in range(4)]
    expected = [model(x).numpy() for x in inputs]
    results, errors = {}, []

    def worker(index):
        try:
            results[index] = [model(inputs[index]).numpy() for _ in range(20)]
        except Exception as error:  # (reported below)
            errors.append(error)

    threads = [threading.Thread(target=worker, args=(index,)) for index in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    for index, want in enumerate(expected):
        for got in results[index]:
            np.testing.assert_array_equal(got, want)


def test_float64_inputs_and_a_frozen_layers_changed_weights_match_eager(monkeypatch):
    def run():
        mk.utils.set_random_seed(0)
        model = mlp()
        model.layers[0].trainable = False  # (its weights are data to the recording)
        wide = X.astype(np.float64)
        seen = []
        for step in range(4):
            seen.append(model(wide).numpy())
            kernel = model.layers[0].kernel
            kernel.assign(kernel.numpy() + 0.1 * step)
        return seen

    count = inferences(monkeypatch)
    replayed = run()
    assert count[0] == 2
    eager(monkeypatch)
    for got, want in zip(replayed, run(), strict=True):
        assert got.dtype == want.dtype == np.float32
        np.testing.assert_array_equal(got, want)


def test_an_inference_replay_frees_each_value_as_the_eager_call_does(monkeypatch):
    import tracemalloc

    model = mk.Sequential([Input((64,)), *[Dense(256, activation="relu") for _ in range(6)]])
    x = RNG.normal(size=(512, 64)).astype(np.float32)

    def peak():
        model(x)  # (warm)
        tracemalloc.start()
        try:
            model(x)
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    count = inferences(monkeypatch)
    model(x)
    replayed = peak()
    assert count[0] == 1
    eager(monkeypatch)
    # Each layer's output is 0.5 MB; keeping all six to the end would take 3 MB.
    assert replayed <= peak() + 600_000


def test_max_pooling_skips_its_winners_in_an_inference_replay(monkeypatch):
    from minikeras.ops import pooling

    wanted = []
    original = pooling._max_and_winners
    monkeypatch.setattr(
        pooling, "_max_and_winners", lambda *args: wanted.append(args[-1]) or original(*args)
    )
    model = cnn()
    outputs = [model(IMAGES).numpy() for _ in range(4)]
    assert wanted == [False, True, False, False]  # (eager, recorded under a tape, replays)
    for got in outputs[1:]:
        np.testing.assert_array_equal(got, outputs[0])


@pytest.mark.parametrize("dtype", ["uint8", "int32", "bool"])
@pytest.mark.parametrize("make", [mlp, cnn, nested], ids=["mlp", "cnn", "nested"])
def test_integer_inputs_replay_cast_as_the_first_layers_cast_them(make, dtype, monkeypatch):
    x = (IMAGES if make is cnn else X) * 3
    x = (x > 0) if dtype == "bool" else np.abs(x).astype(dtype)

    def run():
        mk.utils.set_random_seed(0)
        model = make()
        return [model(x).numpy() for _ in range(4)]

    count = inferences(monkeypatch)
    replayed = run()
    assert count[0] == 2
    eager(monkeypatch)
    for got, want in zip(replayed, run(), strict=True):
        assert got.dtype == want.dtype == np.float32
        np.testing.assert_array_equal(got, want)


def test_integer_inputs_that_a_layer_reads_as_integers_stay_eager(monkeypatch):
    inputs = Input((6,))
    model = mk.Model(inputs, Dense(3)(Add()([inputs, inputs])))  # (uint8 sums wrap around)
    count = inferences(monkeypatch)
    x = np.full((4, 6), 200, np.uint8)
    outputs = [model(x).numpy() for _ in range(4)]
    assert count[0] == 0
    for got in outputs[1:]:
        np.testing.assert_array_equal(got, outputs[0])
    assert model(x.astype(np.float32)).numpy().tolist() != outputs[0].tolist()
