"""The compiled training step at its edges: what a replay must refuse or notice.

A second review of `trainers.compiled_step` and `engine.replay`: each test is
user code that once made a replayed step differ from the eager one
(`jit_compile=False`) or fail where the eager step trains.
"""

import zipfile

import numpy as np
import pytest

import minikeras as mk
from minikeras.engine.replay import Program, Recorder
from minikeras.layers import Dense, Input
from minikeras.saving.keras_file import MINIKERAS_MEMBER

RNG = np.random.default_rng(1)
X = RNG.normal(size=(40, 6)).astype(np.float32)
ONE_HOT = np.eye(3, dtype=np.float32)[RNG.integers(0, 3, size=40)]
LOGITS = mk.losses.CategoricalCrossentropy(from_logits=True)
SPARSE_LOGITS = mk.losses.SparseCategoricalCrossentropy(from_logits=True)


def assert_same_state(compiled, eager):
    for got, want in zip(compiled.weights, eager.weights, strict=True):
        np.testing.assert_array_equal(got.numpy(), want.numpy(), err_msg=got.path)
    for got, want in zip(compiled.optimizer.variables, eager.optimizer.variables, strict=True):
        np.testing.assert_array_equal(got.numpy(), want.numpy(), err_msg=got.name)


def in_a_list():
    inputs = Input((6,))
    return mk.Model(inputs, [Dense(3)(Dense(4, activation="relu")(inputs))])


def in_a_tuple():
    inputs = Input((6,))
    return mk.Model(inputs, (Dense(3)(inputs),))


def in_a_dict():
    inputs = Input((6,))
    return mk.Model(inputs, {"scores": Dense(3)(inputs)})


@pytest.mark.parametrize("make", [in_a_list, in_a_tuple, in_a_dict], ids=["list", "tuple", "dict"])
def test_a_model_whose_one_output_is_in_a_list_or_dict_trains_as_eagerly(make):
    # Model(inputs, [outputs]) is common Keras code; its step used to be recorded and
    # then crash in Program.build (a list has no value to replay).
    results = {}
    for jit_compile in ("auto", False):
        mk.utils.set_random_seed(2)
        model = make()
        model.compile("adam", LOGITS, jit_compile=jit_compile)
        history = model.fit(X, ONE_HOT, batch_size=16, epochs=2, verbose=0, shuffle=False)
        results[jit_compile] = model, history.history
    assert results["auto"][1] == results[False][1]
    assert_same_state(results["auto"][0], results[False][0])
    assert "list, tuple or dict" in results["auto"][0]._compiled_step.reason


@pytest.mark.parametrize("owner", ["model", "layer"])
def test_a_loss_added_after_the_step_was_recorded_is_trained_on(owner):
    # add_loss(callable) outside call() changes what the step computes without
    # changing what the model tracks: the replay, recorded without it, dropped it.
    results = {}
    for jit_compile in ("auto", False):
        mk.utils.set_random_seed(3)
        model = mk.Sequential([Input((6,)), Dense(8, activation="relu"), Dense(3)])
        model.compile("sgd", LOGITS, jit_compile=jit_compile)
        losses = [model.train_on_batch(X[:16], ONE_HOT[:16]) for _ in range(2)]
        kernel = model.layers[0].kernel
        (model if owner == "model" else model.layers[0]).add_loss(
            lambda kernel=kernel: 0.1 * mk.ops.sum(kernel * kernel)
        )
        losses += [model.train_on_batch(X[:16], ONE_HOT[:16]) for _ in range(2)]
        results[jit_compile] = model, losses
    assert results["auto"][1] == results[False][1]
    assert_same_state(results["auto"][0], results[False][0])
    assert "adds losses" in results["auto"][0]._compiled_step.reason


def test_a_loss_added_by_a_callback_during_fit_is_trained_on():
    class AddPenalty(mk.callbacks.Callback):
        def on_epoch_end(self, epoch, logs=None):
            if epoch == 0:
                kernel = self.model.layers[0].kernel
                self.model.add_loss(lambda: 0.1 * mk.ops.sum(kernel * kernel))

    results = {}
    for jit_compile in ("auto", False):
        mk.utils.set_random_seed(3)
        model = mk.Sequential([Input((6,)), Dense(8, activation="relu"), Dense(3)])
        model.compile("adam", LOGITS, jit_compile=jit_compile)
        history = model.fit(X, ONE_HOT, batch_size=16, epochs=3, verbose=0, shuffle=False,
                            callbacks=[AddPenalty()])  # fmt: skip
        results[jit_compile] = model, history.history
    assert results["auto"][1] == results[False][1]
    assert_same_state(results["auto"][0], results[False][0])


@pytest.mark.filterwarnings("ignore:.*received no gradient")  # the spare layer's weights
def test_a_replay_is_given_the_weights_it_was_recorded_with():
    # A layer held in a list attribute and removed from it in place: the weights list
    # changes without a tracking change; replayed with it, the ops misread their
    # slots (here a matmul of mismatched shapes), where the eager step trains.
    results = {}
    for jit_compile in ("auto", False):
        mk.utils.set_random_seed(4)
        spare = Dense(8)
        spare.build((None, 6))
        inputs = Input((6,))
        model = mk.Model(inputs, Dense(3)(Dense(8, activation="relu")(inputs)))
        model.spares = [spare]
        model.compile("sgd", LOGITS, jit_compile=jit_compile, report_unchanged=False)
        model.fit(X, ONE_HOT, batch_size=16, epochs=1, verbose=0, shuffle=False)
        model.spares.pop()
        losses = [model.train_on_batch(X[:16], ONE_HOT[:16]) for _ in range(3)]
        results[jit_compile] = model, losses
    assert results["auto"][1] == results[False][1]
    assert_same_state(results["auto"][0], results[False][0])
    program = results["auto"][0]._compiled_step.programs[
        ((16, 6), np.dtype("<f4"), (16, 3), np.dtype("<f4"))
    ]
    assert isinstance(program, Program)  # recorded again, with the new list
    assert list(program.sources) == results["auto"][0].trainable_weights


def test_a_replay_sums_an_indexing_gradient_as_the_tape_does():
    # autograd's indexing VJP gives a SparseObject, which the tape's backward pass
    # makes dense as it adds; a replay kept it as it was (AttributeError: 'SparseObject'
    # object has no attribute 'dtype', or a crash in the next VJP).
    w = mk.Variable(np.arange(6.0, dtype=np.float32).reshape(2, 3))
    x = np.array([1.0, -2.0, 3.0], np.float32)
    with mk.GradientTape() as tape, Recorder(tape._trace_id) as recorder:
        row = w[1]
        loss = mk.ops.sum(row * x + w[0] * row + row * row)
    program, reason = Program.build(recorder, tape, [x], [w], [loss])
    assert reason is None
    (want,) = tape.gradient(loss, [w])
    # By hand: d/dw[0] = w[1]; d/dw[1] = x + w[0] + 2 w[1].
    value = w.numpy()
    by_hand = np.stack([value[1], x + value[0] + 2 * value[1]])
    np.testing.assert_array_equal(want.numpy(), by_hand)
    (total,), (got,) = program.run([x], [w])
    assert type(got) is np.ndarray
    np.testing.assert_array_equal(got, want.numpy())
    assert float(total) == float(loss)


@pytest.mark.parametrize("jit_compile", ["auto", False])
def test_a_regularizer_given_to_a_weight_between_train_on_batch_calls_counts(jit_compile):
    # As in Keras 3, `variable.regularizer` adds a penalty; train_on_batch kept the
    # weights with a penalty found on its first call, so a later one did not count.
    mk.utils.set_random_seed(5)
    model = mk.Sequential([Input((6,)), Dense(4), Dense(3)])
    model.compile("sgd", LOGITS, jit_compile=jit_compile)
    for _ in range(2):
        model.train_on_batch(X[:16], ONE_HOT[:16])
    kernel = model.layers[0].kernel
    kernel.regularizer = mk.regularizers.L2(0.5)
    data_loss = float(LOGITS(ONE_HOT[:16], model(X[:16])))
    penalty = 0.5 * float(np.sum(np.square(kernel.numpy(), dtype=np.float64)))
    loss = model.train_on_batch(X[:16], ONE_HOT[:16])
    assert loss == pytest.approx(data_loss + penalty, rel=1e-6)


def test_train_on_batch_sees_a_metric_appended_to_a_list_attribute_in_place():
    # Metrics held in a list attribute are the model's (as Keras tracks them); an
    # append moves no TrackingGeneration, and train_on_batch kept its first list.
    model = mk.Sequential([Input((6,)), Dense(3)])
    model.compile("sgd", LOGITS)
    model.extra_metrics = [mk.metrics.Mean(name="first")]
    assert list(model.train_on_batch(X[:16], ONE_HOT[:16], return_dict=True)) == [
        "loss",
        "first",
    ]
    model.extra_metrics.append(mk.metrics.Mean(name="second"))
    logs = model.train_on_batch(X[:16], ONE_HOT[:16], return_dict=True)
    assert list(logs) == ["loss", "first", "second"]


def _without_own_record(path):
    # What Keras itself writes: the file without minikeras's member, read as Keras's.
    with zipfile.ZipFile(path) as archive:
        contents = {name: archive.read(name) for name in archive.namelist()}
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in contents.items():
            if name != MINIKERAS_MEMBER:
                archive.writestr(name, data)
    return path


@pytest.mark.parametrize("suffix", [".keras", ".minikeras", "keras-only"])
@pytest.mark.parametrize(
    "jit_compile, run_eagerly", [(False, False), (True, False), ("auto", True)]
)
def test_a_saved_model_loads_with_the_compile_flags_it_was_saved_with(
    tmp_path, suffix, jit_compile, run_eagerly
):
    # Keras's compile_from_config passes them back to compile; they were written, then
    # dropped on loading (every model came back jit_compile="auto", run_eagerly=False).
    model = mk.Sequential([Input((6,)), Dense(3)])
    model.compile("adam", LOGITS, jit_compile=jit_compile, run_eagerly=run_eagerly)
    path = tmp_path / ("model.keras" if suffix == "keras-only" else "model" + suffix)
    model.save(path)
    if suffix == "keras-only":
        _without_own_record(path)
    restored = mk.saving.load_model(path)
    assert (restored.jit_compile, restored.run_eagerly) == (jit_compile, run_eagerly)


@pytest.mark.parametrize("seed", [None, 6], ids=["default-generator", "seeded"])
def test_a_replay_that_gives_up_leaves_the_dropout_generators_as_it_found_them(seed):
    # A bad label is found by the loss's replay_guard, after the replay drew the
    # dropout masks; the eager step then ran (to raise the op's error) and drew them
    # again, so every later mask differed from an eager run's that skipped the batch.
    labels = RNG.integers(0, 3, size=16)
    bad = labels.copy()
    bad[0] = 5
    results = {}
    for jit_compile in ("auto", False):
        mk.utils.set_random_seed(6)
        model = mk.Sequential([Input((6,)), Dense(8), mk.layers.Dropout(0.5, seed=seed), Dense(3)])
        model.compile("sgd", SPARSE_LOGITS, jit_compile=jit_compile)
        losses = [model.train_on_batch(X[:16], labels) for _ in range(2)]
        with pytest.raises(ValueError, match="labels"):
            model.train_on_batch(X[:16], bad)
        losses += [model.train_on_batch(X[:16], labels) for _ in range(2)]
        states = [g.bit_generator.state for g in model._random_generators().values()]
        results[jit_compile] = model, losses, states
    assert results["auto"][1] == results[False][1]
    assert results["auto"][2] == results[False][2]
    assert_same_state(results["auto"][0], results[False][0])
    assert isinstance(next(iter(results["auto"][0]._compiled_step.programs.values())), Program)


def test_a_dropout_rate_changed_by_a_callback_mid_fit_is_used_by_later_steps():
    # (a compiled Keras step keeps the rate it traced; minikeras records the step again)
    class Anneal(mk.callbacks.Callback):
        def on_epoch_end(self, epoch, logs=None):
            self.model.layers[1].rate = 0.1

    results = {}
    for jit_compile in ("auto", False):
        mk.utils.set_random_seed(8)
        model = mk.Sequential([Input((6,)), Dense(8), mk.layers.Dropout(0.5), Dense(3)])
        model.compile("adam", LOGITS, jit_compile=jit_compile)
        history = model.fit(X, ONE_HOT, batch_size=16, epochs=3, verbose=0, shuffle=False,
                            callbacks=[Anneal()])  # fmt: skip
        results[jit_compile] = history.history
    assert results["auto"] == results[False]


def test_compile_flags_from_a_file_are_read_as_compile_takes_them():
    flags = mk.saving.keras_config.compile_flags
    assert flags() == {"run_eagerly": False, "jit_compile": "auto"}
    assert flags(True, False) == {"run_eagerly": True, "jit_compile": False}
    assert flags("yes", ["xla"]) == {"run_eagerly": False, "jit_compile": "auto"}


def test_a_replay_lets_a_vjp_overwrite_exactly_the_gradients_the_tape_would():
    from autograd.extend import defvjp_argnums, primitive

    from minikeras.engine.primitive import call_primitive
    from minikeras.engine.tape import may_overwrite

    seen = []

    @primitive
    def probe(x):
        return x * 1.0

    @primitive
    def pair(x, z):
        return x + z

    def probe_vjp(argnums, ans, args, kwargs):
        def vjp(g):
            seen.append(may_overwrite(g))
            return [g * 1.0]

        return vjp

    defvjp_argnums(probe, probe_vjp)
    # Both parents get the very same array: neither VJP may write into it while both hold it.
    defvjp_argnums(pair, lambda argnums, ans, args, kwargs: lambda g: [g for _ in argnums])

    def step(w, x):
        a = mk.Tensor(call_primitive(probe, (w * x)._value))
        b = mk.Tensor(call_primitive(probe, (w * 3.0)._value))
        return mk.ops.sum(mk.Tensor(call_primitive(pair, a._value, b._value)))

    w, x = mk.Variable([1.0, 2.0]), np.array([2.0, 5.0], np.float32)
    with mk.GradientTape() as tape, Recorder(tape._trace_id) as recorder:
        loss = step(w, x)
    program, reason = Program.build(recorder, tape, [x], [w], [loss])
    # The generator a tape's node runs (models.replayed_call) counts its locals alike.
    generator, _ = Program.build(recorder, tape, [x], [w], [loss], seeded=False)
    assert reason is None
    tape.gradient(loss, w)
    by_tape, seen[:] = list(seen), []
    program.run([x], [w])
    assert seen == by_tape == [False, True]
    seen[:] = []
    _, backward = generator.start([x], [w])
    backward.send(np.ones((), np.float32))
    assert seen == by_tape


def test_a_layer_frozen_by_a_callback_mid_fit_is_replayed_again_from_the_next_fit():
    # The frozen weights stay in the list fit started with, so that fit's new recording
    # is refused; the refusal must not outlive it (it kept every later fit eager).
    def run(jit_compile):
        mk.utils.set_random_seed(0)
        inputs = Input((6,))
        frozen = Dense(5)
        model = mk.Model(inputs, Dense(3)(frozen(Dense(5)(inputs))))
        model.compile(mk.optimizers.SGD(0.05), LOGITS, jit_compile=jit_compile)

        class Freeze(mk.callbacks.Callback):
            def on_train_batch_end(self, batch, logs=None):
                if batch == 2:
                    frozen.trainable = False

        model.fit(X, ONE_HOT, batch_size=8, verbose=0, shuffle=False, callbacks=[Freeze()])
        model.fit(X, ONE_HOT, batch_size=8, epochs=2, verbose=0, shuffle=False)
        return model

    compiled = run("auto")
    assert [type(p) for p in compiled._compiled_step.programs.values()] == [Program]
    assert_same_state(compiled, run(False))


def test_the_default_train_step_of_a_sequential_not_yet_built_builds_and_then_replays():
    # A Sequential without an Input has no graph before its first call: the step
    # runs eagerly (and builds it), later ones are recorded and replayed as usual.
    batch = (np.ones((2, 3), np.float32), np.zeros((2, 1), np.float32))
    models = []
    for _ in range(2):
        model = mk.Sequential([mk.layers.Dense(1, kernel_initializer="ones")])
        model.compile(mk.optimizers.SGD(0.01), "mse")
        models.append(model)
    assert models[0].train_step(batch) == {"loss": 9.0}
    for _ in range(3):
        models[0].train_step(batch)
    for _ in range(4):
        models[1].train_on_batch(*batch)
    for got, want in zip(models[0].weights, models[1].weights, strict=True):
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    assert any(type(p).__name__ == "Program" for p in models[0]._compiled_step.programs.values())
