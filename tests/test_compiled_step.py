"""The compiled training step: recorded once per kind of batch, replayed after.

Every replay must give bit for bit what the eager step gives
(`jit_compile=False`), for each model, loss and input kind that compiles;
what cannot be replayed must be refused, and then train exactly as eagerly.
"""

import autograd.numpy as anp
import numpy as np
import pytest

import minikeras as mk
from minikeras.engine.replay import Program, Recorder
from minikeras.engine.tensor import wrap
from minikeras.layers import (
    Add,
    Concatenate,
    Conv2D,
    Dense,
    Dropout,
    Flatten,
    Input,
    MaxPooling2D,
)
from minikeras.trainers import compiled_step

RNG = np.random.default_rng(0)
X = RNG.normal(size=(40, 6)).astype(np.float32)
LABELS = RNG.integers(0, 3, size=40)
ONE_HOT = np.eye(3, dtype=np.float32)[LABELS]
TARGETS = RNG.normal(size=(40, 2)).astype(np.float32)
IMAGES = RNG.normal(size=(24, 8, 8, 2)).astype(np.float32)


def mlp():
    return mk.Sequential([Input((6,)), Dense(8, activation="relu"), Dense(3)])


def functional():
    inputs = Input((6,))
    a = Dense(5, activation="tanh")(inputs)
    b = Dense(5)(inputs)
    merged = Concatenate()([Add()([a, b]), a])
    return mk.Model(inputs, Dense(3)(merged))


def shared():
    # A layer used three times, on values that have several users each: where their
    # gradients meet, a replay must sum them in the tape's order for the same bits.
    inputs = Input((6,))
    dense = Dense(6)
    first, second = Dense(6)(inputs), dense(inputs)
    third = Dense(6)(second)
    mixed = dense(Add()([first, second, third]))
    return mk.Model(inputs, Dense(2)(Add()([mixed, dense(second), third])))


def nested():
    # A base model under a new head: its layers are plain math, so the whole is replayed.
    base = mk.Sequential([Input((6,)), Dense(6, activation="relu"), Dropout(0.2)])
    return mk.Sequential([Input((6,)), base, functional(), Dense(2)])


def cnn():
    return mk.Sequential([
        Input((8, 8, 2)), Conv2D(3, 3, activation="relu"), MaxPooling2D(), Flatten(), Dense(3),
    ])  # fmt: skip


def train(make, loss, x, y, jit_compile, epochs=3, batch_size=16, optimizer="adam", callbacks=None,
          **compile_args):  # fmt: skip
    mk.utils.set_random_seed(7)
    model = make()
    model.compile(optimizer, loss, jit_compile=jit_compile, **compile_args)
    history = model.fit(x, y, batch_size=batch_size, epochs=epochs, verbose=0, shuffle=False,
                        callbacks=callbacks)  # fmt: skip
    return model, history.history


def assert_same_training(make, loss, x, y, **kwargs):
    """Trains twice, replayed and eager; returns the replayed model after comparing them."""
    compiled, compiled_history = train(make, loss, x, y, "auto", **kwargs)
    eager, eager_history = train(make, loss, x, y, False, **kwargs)
    assert compiled_history == eager_history
    for got, want in zip(compiled.weights, eager.weights):
        np.testing.assert_array_equal(got.numpy(), want.numpy(), err_msg=got.path)
    for got, want in zip(compiled.optimizer.variables, eager.optimizer.variables):
        np.testing.assert_array_equal(got.numpy(), want.numpy(), err_msg=got.name)
    return compiled


def programs(model):
    return list(model._compiled_step.programs.values())


@pytest.mark.parametrize(
    "make, loss, x, y, metric",
    [
        (mlp, mk.losses.SparseCategoricalCrossentropy(from_logits=True), X, LABELS, "accuracy"),
        (mlp, mk.losses.CategoricalCrossentropy(from_logits=True), X, ONE_HOT, "accuracy"),
        (functional, "mse", X, np.pad(TARGETS, ((0, 0), (0, 1))), "mae"),
        (functional, mk.losses.MeanAbsoluteError(), X, np.pad(TARGETS, ((0, 0), (0, 1))), "mse"),
        (shared, "mse", X, TARGETS, "mae"),
        (
            cnn,
            mk.losses.SparseCategoricalCrossentropy(from_logits=True),
            IMAGES,
            LABELS[:24],
            "accuracy",
        ),
        (nested, "mse", X, TARGETS, "mae"),
    ],
    ids=[
        "mlp-sparse",
        "mlp-categorical",
        "functional-mse",
        "functional-mae",
        "shared",
        "cnn",
        "nested",
    ],  # fmt: skip
)
def test_a_replayed_fit_trains_bit_for_bit_as_the_eager_one(make, loss, x, y, metric):
    model = assert_same_training(make, loss, x, y, metrics=[metric])
    # 16 per batch and a smaller last one: two kinds of batch, each recorded once.
    assert model._compiled_step.reason is None
    assert len(programs(model)) == 2
    assert all(isinstance(program, Program) for program in programs(model))


def test_float64_inputs_are_cast_as_the_model_would_and_replayed():
    model = assert_same_training(mlp, "sparse_categorical_crossentropy", X, LABELS)
    assert programs(model)  # the string loss takes probabilities: refused, but trained alike
    logits = mk.losses.SparseCategoricalCrossentropy(from_logits=True)
    model = assert_same_training(mlp, logits, X.astype(np.float64), LABELS)
    assert all(isinstance(program, Program) for program in programs(model))


def test_train_on_batch_replays_too():
    results = {}
    for jit_compile in ("auto", False):
        mk.utils.set_random_seed(3)
        model = mlp()
        model.compile("sgd", mk.losses.SparseCategoricalCrossentropy(from_logits=True),
                      jit_compile=jit_compile)  # fmt: skip
        results[jit_compile] = [model.train_on_batch(X[:16], LABELS[:16]) for _ in range(4)]
        if jit_compile == "auto":
            assert isinstance(programs(model)[0], Program)
    assert results["auto"] == results[False]


def test_a_bad_label_in_a_replayed_step_raises_the_eager_error_and_changes_nothing():
    model = mlp()
    model.compile("adam", mk.losses.SparseCategoricalCrossentropy(from_logits=True))
    model.train_on_batch(X[:16], LABELS[:16])
    model.train_on_batch(X[:16], LABELS[:16])
    assert isinstance(programs(model)[0], Program)
    before = [w.numpy().copy() for w in model.weights]
    bad = LABELS[:16].copy()
    for label in (3, -1):
        bad[5] = label
        with pytest.raises(ValueError, match=r"labels must lie in \[0, 3\)"):
            model.train_on_batch(X[:16], bad)
    for weight, value in zip(model.weights, before):
        np.testing.assert_array_equal(weight.numpy(), value)


@pytest.mark.parametrize(
    "make, reason",
    [
        (
            lambda: mk.Sequential([Input((6,)), Dense(8), mk.layers.GaussianNoise(0.3), Dense(3)]),
            "GaussianNoise",
        ),
        (
            lambda: mk.Sequential([Input((6,)), mk.layers.Lambda(lambda t: t * 2), Dense(3)]),
            "Lambda",
        ),
        (lambda: mk.Sequential([Input((6,)), Dense(3, activation=lambda t: t)]), "activation"),
        (lambda: mk.Sequential([Input((6,)), Dense(3, activity_regularizer="l2")]), "adds losses"),
    ],
    ids=["noise-drawn-in-python", "lambda", "user-activation", "activity-regularizer"],
)
def test_models_a_replay_cannot_see_through_run_eagerly_and_say_why(make, reason):
    model = assert_same_training(make, mk.losses.CategoricalCrossentropy(from_logits=True), X,
                                 ONE_HOT)  # fmt: skip
    assert reason in model._compiled_step.reason
    assert programs(model) == []


def with_model_loss():
    # A loss the model adds from Python (here a count of steps): its value is fixed
    # in a recording, so such a model is not compiled.
    inputs = Input((6,))
    model = mk.Model(inputs, Dense(3)(inputs))
    steps = iter(range(1000))
    model.add_loss(lambda: 0.01 * next(steps))
    return model


@pytest.mark.parametrize(
    "make, reason",
    [
        (with_model_loss, "the model adds losses"),
        (
            lambda: mk.Sequential(
                [
                    Input((6,)),
                    Dense(3, kernel_regularizer=lambda w: 0.01 * mk.ops.sum(w * w)),
                ]
            ),  # fmt: skip
            "a regularizer minikeras does not define",
        ),
    ],
    ids=["model-add-loss", "user-regularizer"],
)
def test_losses_added_from_python_are_not_compiled(make, reason):
    model = assert_same_training(make, mk.losses.CategoricalCrossentropy(from_logits=True), X,
                                 ONE_HOT)  # fmt: skip
    assert reason in model._compiled_step.reason


@pytest.mark.parametrize(
    "regularizer", ["l1", "l2", mk.regularizers.L1L2(1e-3, 2e-3)], ids=["l1", "l2", "l1_l2"]
)
def test_the_regularizers_minikeras_defines_are_compiled_bit_for_bit(regularizer):
    # Their penalty scales a full sum, a box of a numpy scalar, which the recording follows.
    def make():
        return mk.Sequential([
            Input((6,)),
            Dense(8, activation="relu", kernel_regularizer=regularizer, bias_regularizer="l2"),
            Dense(3, kernel_regularizer=regularizer),
        ])  # fmt: skip

    model = assert_same_training(make, mk.losses.CategoricalCrossentropy(from_logits=True), X,
                                 ONE_HOT)  # fmt: skip
    assert model._compiled_step.reason is None
    assert programs(model) and all(isinstance(program, Program) for program in programs(model))


def test_a_regularizer_annealed_by_a_callback_records_the_step_again():
    # The step holds the regularizer's numbers (l2, and L1L2's `if self.l1`): a set is seen.
    class Anneal(mk.callbacks.Callback):
        def on_epoch_begin(self, epoch, logs=None):
            regularizer = self.model.layers[0].kernel_regularizer
            regularizer.l2, regularizer.l1 = 0.5 * (epoch + 1), 0.0 if epoch else 0.1

    def make():
        return mk.Sequential([Input((6,)), Dense(2, kernel_regularizer=mk.regularizers.L1L2(0.1))])

    compiled = assert_same_training(make, "mse", X, TARGETS, batch_size=8, optimizer="sgd",
                                    callbacks=[Anneal()])  # fmt: skip
    assert programs(compiled) and all(isinstance(p, Program) for p in programs(compiled))


def test_a_subclassed_model_with_python_in_its_call_is_left_alone():
    class Branching(mk.Model):
        def __init__(self):
            super().__init__()
            self.dense = Dense(3)

        def call(self, inputs, training=None):
            if training:  # a branch: another call could take the other path
                return self.dense(inputs * 0.5)
            return self.dense(inputs)

    model = assert_same_training(Branching, "mse", X, ONE_HOT)
    assert "Branching.call has a POP_JUMP" in model._compiled_step.reason


def test_a_subclassed_model_of_plain_calls_is_compiled_bit_for_bit():
    class Plain(mk.Model):
        def __init__(self):
            super().__init__()
            self.hidden = Dense(8, activation="relu")
            self.drop = Dropout(0.3)
            self.out = Dense(3)

        def call(self, inputs, training=None):
            hidden = self.drop(self.hidden(inputs), training=training)
            return self.out(mk.ops.concatenate([hidden, inputs * 0.5], axis=-1))

    model = assert_same_training(Plain, mk.losses.CategoricalCrossentropy(from_logits=True), X,
                                 ONE_HOT)  # fmt: skip
    assert model._compiled_step.reason is None
    assert programs(model) and all(isinstance(p, Program) for p in programs(model))


@pytest.mark.parametrize("seed", [None, 5], ids=["default-generator", "seeded"])
def test_dropout_draws_a_fresh_mask_at_each_replay(seed):
    # The mask is drawn inside its op: a replay draws again, from the same generator.
    def make():
        return mk.Sequential([Input((6,)), Dense(8), Dropout(0.5, seed=seed), Dense(3)])

    model = assert_same_training(make, mk.losses.CategoricalCrossentropy(from_logits=True), X,
                                 ONE_HOT)  # fmt: skip
    assert programs(model) and all(isinstance(p, Program) for p in programs(model))


def test_noise_drawn_outside_the_ops_refuses_the_recording(monkeypatch):
    # GaussianNoise draws its noise in Python: were it let through, Program.build
    # would find an array the recorded ops did not compute, and keep the step eager.
    monkeypatch.setattr(
        compiled_step,
        "REPLAYABLE_LAYERS",
        compiled_step.REPLAYABLE_LAYERS | {mk.layers.GaussianNoise},
    )

    def make():
        return mk.Sequential([Input((6,)), Dense(8), mk.layers.GaussianNoise(0.3), Dense(3)])

    model = assert_same_training(make, mk.losses.CategoricalCrossentropy(from_logits=True), X,
                                 ONE_HOT)  # fmt: skip
    assert programs(model)
    assert all("computed outside the recorded ops" in reason for reason in programs(model))


class CountsCalls(mk.layers.Layer):
    """Counts its calls in a Variable, with Python arithmetic a replay cannot repeat."""

    def build(self, input_shape):
        self.calls = self.add_weight("calls", (), initializer="zeros", trainable=False)

    def call(self, inputs):
        self.calls.assign(self.calls.numpy() + 1.0)
        return inputs


def test_a_variable_assigned_during_the_step_refuses_the_recording(monkeypatch):
    # The check behind the layer list: an assignment let through must still be caught
    # (a moving statistic's is replayed, being the value of an op: not this one).
    monkeypatch.setattr(
        compiled_step, "REPLAYABLE_LAYERS", compiled_step.REPLAYABLE_LAYERS | {CountsCalls}
    )

    def make():
        return mk.Sequential([Input((6,)), Dense(8), CountsCalls(), Dense(3)])

    model = assert_same_training(make, mk.losses.CategoricalCrossentropy(from_logits=True), X,
                                 ONE_HOT)  # fmt: skip
    assert programs(model)
    assert all(reason == "a Variable was assigned during the step" for reason in programs(model))


def test_the_recording_check_fires_when_an_input_is_not_recognised(monkeypatch):
    # Were the inputs not known as such, what the ops computed from them would be
    # taken for constants and a replay would reuse the first batch: refused instead.
    built = []
    original = Program.build.__func__

    def build_without_inputs(cls, recorder, tape, inputs, sources, outputs, input_nodes=None,
                             **options):  # fmt: skip
        built.append(True)
        empty = [np.empty(0) for _ in inputs]
        return original(cls, recorder, tape, empty, sources, outputs, **options)

    monkeypatch.setattr(Program, "build", classmethod(build_without_inputs))
    model = mk.Sequential([Input((6,)), Dense(3)])
    model.compile("sgd", mk.losses.SparseCategoricalCrossentropy(from_logits=True))
    model.fit(X, LABELS, batch_size=16, epochs=1, verbose=0)
    assert built and all("outside the recorded ops" in reason for reason in programs(model))


@pytest.mark.parametrize(
    "flag", [{"jit_compile": False}, {"run_eagerly": True}], ids=["jit_compile", "run_eagerly"]
)
def test_jit_compile_false_or_run_eagerly_records_nothing(flag):
    mk.utils.set_random_seed(0)
    model = mlp()
    model.compile("adam", mk.losses.SparseCategoricalCrossentropy(from_logits=True), **flag)
    model.fit(X, LABELS, batch_size=16, epochs=2, verbose=0)
    assert "_compiled_step" not in vars(model)


def test_a_change_to_what_the_model_tracks_records_the_step_again():
    compiled, _ = train(mlp, mk.losses.SparseCategoricalCrossentropy(from_logits=True), X,
                        LABELS, "auto", epochs=1)  # fmt: skip
    eager, _ = train(mlp, mk.losses.SparseCategoricalCrossentropy(from_logits=True), X, LABELS,
                     False, epochs=1)  # fmt: skip
    state = compiled._compiled_step
    for model in (compiled, eager):
        model.layers[0].trainable = False  # the first layer's weights are out of the list
        model.fit(X, LABELS, batch_size=16, epochs=2, verbose=0, shuffle=False)
    assert compiled._compiled_step is not state
    for got, want in zip(compiled.weights, eager.weights):
        np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_train_on_batch_sees_a_metric_attribute_or_a_frozen_layer_added_between_calls():
    model = mlp()
    model.compile("sgd", mk.losses.SparseCategoricalCrossentropy(from_logits=True))
    assert list(model.train_on_batch(X[:16], LABELS[:16], return_dict=True)) == ["loss"]
    model.extra = mk.metrics.Mean(name="extra")
    assert list(model.train_on_batch(X[:16], LABELS[:16], return_dict=True)) == ["loss", "extra"]
    model.layers[0].trainable = False
    frozen = model.layers[0].kernel.numpy().copy()
    model.train_on_batch(X[:16], LABELS[:16])
    np.testing.assert_array_equal(model.layers[0].kernel.numpy(), frozen)


def test_a_batch_whose_targets_are_its_inputs_is_not_replayed_with_the_inputs_of_another():
    # train_on_batch(x, x) (an autoencoder): the recording cannot tell the targets
    # from the inputs by identity; a replay on (x2, y2) must not read y2 as x2.
    first, inputs, targets = (RNG.normal(size=(16, 6)).astype(np.float32) for _ in range(3))
    results = {}
    for jit_compile in ("auto", False):
        mk.utils.set_random_seed(3)
        model = mk.Sequential([Input((6,)), Dense(6)])
        model.compile("sgd", "mse", jit_compile=jit_compile)
        results[jit_compile] = [model.train_on_batch(first, first)]
        results[jit_compile] += [model.train_on_batch(inputs, targets) for _ in range(2)]
    assert results["auto"] == results[False]


def test_an_array_given_to_an_op_by_keyword_refuses_the_recording():
    # autograd's primitives take keywords (anp.clip(x, a_min=...)); an array there
    # is as much computed outside the recorded ops as a positional one.
    w = mk.Variable([1.0, 2.0, 3.0])
    x = np.ones(3, np.float32)
    with mk.GradientTape() as tape, Recorder(tape._trace_id) as recorder:
        clipped = anp.clip((w * x)._value, a_min=np.full(3, 1.5, np.float32), a_max=None)
        loss = mk.ops.sum(wrap(clipped))
    program, reason = Program.build(recorder, tape, [x], [w], [loss])
    assert program is None
    assert "by keyword" in reason


def test_a_recording_step_lets_go_of_what_it_recorded_before_the_update():
    # Held op arguments would keep the weights' arrays: the optimizer would then
    # write into spares, and the whole graph would live through the backward pass.
    model = mlp()
    model.compile("sgd", mk.losses.SparseCategoricalCrossentropy(from_logits=True))
    model.train_on_batch(X[:16], LABELS[:16])
    arrays = [id(weight._value) for weight in model.weights]
    model.train_on_batch(X[:8], LABELS[:8])  # a new kind of batch: recorded
    assert isinstance(
        model._compiled_step.programs[((8, 6), np.dtype("<f4"), (8,), np.dtype("<i8"))], Program
    )
    assert [id(weight._value) for weight in model.weights] == arrays


def test_dropout_draws_its_mask_as_before_and_differentiates_twice():
    x = mk.Variable(np.arange(1.0, 13.0).reshape(3, 4))
    layer = Dropout(0.25, seed=11)
    keep = np.random.default_rng(11).random((3, 4), dtype=np.float32) >= 0.25
    mask = keep.astype(np.float32) / np.float32(0.75)
    np.testing.assert_array_equal(layer(x.numpy(), training=True).numpy(), x.numpy() * mask)
    layer = Dropout(0.25, seed=11)
    with mk.GradientTape() as outer:
        with mk.GradientTape() as inner:
            y = mk.ops.sum(layer(x * x, training=True))
        first = inner.gradient(y, x)  # 2 x mask
        second = outer.gradient(mk.ops.sum(first), x)  # 2 mask
    np.testing.assert_allclose(first.numpy(), 2 * x.numpy() * mask, rtol=1e-6)
    np.testing.assert_allclose(second.numpy(), 2 * mask, rtol=1e-6)


def test_a_second_fit_replays_what_the_first_recorded():
    model, _ = train(mlp, mk.losses.SparseCategoricalCrossentropy(from_logits=True), X, LABELS,
                     "auto", epochs=1)  # fmt: skip
    state, recorded = model._compiled_step, list(programs(model))
    model.fit(X, LABELS, batch_size=16, epochs=1, verbose=0)  # (fit sets model.history)
    assert model._compiled_step is state
    assert all(a is b for a, b in zip(programs(model), recorded))
    model.compile("sgd", mk.losses.SparseCategoricalCrossentropy(from_logits=True))
    model.fit(X, LABELS, batch_size=16, epochs=1, verbose=0)
    assert model._compiled_step is not state  # a new compile records again


def test_each_kind_of_batch_is_recorded_once_though_the_optimizer_builds_its_slots(monkeypatch):
    # The first step's update creates the optimizer's slot Variables: new Variables are in
    # no layer, so they must not count as a change to what the model tracks.
    built = []
    real_build = Program.build.__func__

    def counting_build(cls, recorder, tape, inputs, *rest, **kwargs):
        built.append(inputs[0].shape)
        return real_build(cls, recorder, tape, inputs, *rest, **kwargs)

    monkeypatch.setattr(Program, "build", classmethod(counting_build))
    model = mlp()
    model.compile("adam", mk.losses.SparseCategoricalCrossentropy(from_logits=True))
    model.fit(X, LABELS, batch_size=16, epochs=3, verbose=0)  # batches of 16, 16 and 8
    assert sorted(built) == [(8, 6), (16, 6)]


class _Pickled(mk.Model):
    """A subclassed model at module level, as pickle needs it."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.hidden = Dense(8, activation="relu")
        self.out = Dense(3)

    def call(self, inputs):
        return self.out(self.hidden(inputs))


@pytest.mark.parametrize(
    "make", [mlp, functional, _Pickled], ids=["sequential", "functional", "subclassed"]
)
def test_a_fitted_model_pickles_and_trains_on_as_the_original(make):
    # Keras models pickle; the recorded step's replay is generated code, which pickle
    # cannot name: the copy leaves it behind and records its own.
    import pickle

    mk.utils.set_random_seed(0)
    model = make()
    loss = mk.losses.SparseCategoricalCrossentropy(from_logits=True)
    model.compile("adam", loss, metrics=["accuracy"])
    model.fit(X, LABELS, batch_size=8, epochs=2, shuffle=False, verbose=0)
    compiled = model._compiled_step.reason is None  # (a subclassed call is not replayed)
    assert bool(model._compiled_step.programs) == compiled  # (what made pickle fail)
    model.evaluate(X, LABELS, verbose=0)
    copy = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(copy.predict(X, verbose=0), model.predict(X, verbose=0))
    for each in (model, copy):
        each.fit(X, LABELS, batch_size=8, epochs=1, shuffle=False, verbose=0)
    for mine, theirs in zip(model.weights, copy.weights):
        np.testing.assert_array_equal(mine.numpy(), theirs.numpy())
    assert int(copy.optimizer.iterations.numpy()) == 15
    assert bool(copy._compiled_step.programs) == compiled  # recorded anew


class _HalfSGD(mk.optimizers.Optimizer):
    """A user's rule (`update_step`): its updates are traced and replayed."""

    def update_step(self, gradient, variable, learning_rate):
        self.assign_sub(variable, 0.5 * learning_rate * gradient)


def test_a_model_with_every_kind_of_recording_pickles_and_trains_on_alike():
    # The compiled step, the model's call replayed in a tape and a user optimizer's
    # replayed rule each keep generated code: the copy leaves all three behind.
    import pickle

    mk.utils.set_random_seed(0)
    model = mlp()
    model.compile(_HalfSGD(0.1), "mse")
    model.fit(X, ONE_HOT, batch_size=8, epochs=2, shuffle=False, verbose=0)
    for _ in range(3):
        with mk.GradientTape():
            model(X, training=True)
    held = (model._compiled_step, model._replayed_calls, model.optimizer._rule_runner)
    assert all(holder is not None and holder.programs for holder in held)
    copy = pickle.loads(pickle.dumps(model))
    assert copy._compiled_step is None and copy.optimizer._rule_runner is None
    for each in (model, copy):
        each.fit(X, ONE_HOT, batch_size=8, epochs=2, shuffle=False, verbose=0)
    for mine, theirs in zip(model.weights, copy.weights):
        np.testing.assert_array_equal(mine.numpy(), theirs.numpy())


def test_float64_targets_are_cast_once_as_kerass_adapters_do_and_the_step_compiles():
    # Keras's array adapters cast floating data to floatx; float64 targets (what numpy
    # arithmetic gives) used to keep every step eager, through the loss's own cast.
    def fit(targets):
        mk.utils.set_random_seed(0)
        model = mlp()
        model.compile("adam", "mse", metrics=["mae"])
        history = model.fit(X, targets, batch_size=8, epochs=2, shuffle=False, verbose=0)
        return model, history.history

    wide, wide_logs = fit(TARGETS[:, :1].repeat(3, 1).astype(np.float64))
    narrow, narrow_logs = fit(TARGETS[:, :1].repeat(3, 1))
    assert wide_logs == narrow_logs
    for mine, theirs in zip(wide.weights, narrow.weights):
        np.testing.assert_array_equal(mine.numpy(), theirs.numpy())
    programs = wide._compiled_step.programs
    assert [type(program) for program in programs.values()] == [Program]
    assert all(signature[3] == np.float32 for signature in programs)


def frozen_base():
    base = mk.Sequential([Input((6,)), Dense(8, activation="relu"), Dense(8, activation="relu")])
    base.trainable = False  # (transfer learning: the base's weights are data to the step)
    return mk.Sequential([Input((6,)), base, Dense(3)])


def test_a_model_with_frozen_layers_is_replayed_reading_their_weights_afresh():
    # The tape does not watch frozen weights: their arrays reach the ops as plain data,
    # which the recording used to refuse ("computed outside the recorded ops").
    loss = mk.losses.SparseCategoricalCrossentropy(from_logits=True)
    model = assert_same_training(frozen_base, loss, X, LABELS, metrics=["accuracy"])
    assert len(programs(model)) == 2
    assert all(isinstance(program, Program) for program in programs(model))
    assert [len(program.frozen) for program in programs(model)] == [4, 4]

    def refit(jit_compile):  # new frozen weights between fits: read at each replay
        model, _ = train(frozen_base, loss, X, LABELS, jit_compile, epochs=1)
        base = model.layers[0]
        base.set_weights([2 * w for w in base.get_weights()])
        base.layers[0].kernel.assign(-base.layers[0].kernel)
        model.fit(X, LABELS, batch_size=16, epochs=1, verbose=0, shuffle=False)
        return model

    replayed, eager = refit("auto"), refit(False)
    assert all(isinstance(program, Program) for program in programs(replayed))
    for got, want in zip(replayed.weights, eager.weights):
        np.testing.assert_array_equal(got.numpy(), want.numpy(), err_msg=got.path)


def test_labels_with_a_trailing_axis_of_one_are_replayed_as_flat_ones():
    # CIFAR-10's labels come as (n, 1): the fused loss takes them as they are.
    loss = mk.losses.SparseCategoricalCrossentropy(from_logits=True)
    column = assert_same_training(mlp, loss, X, LABELS[:, None], metrics=["accuracy"])
    assert [type(program) for program in programs(column)] == [Program, Program]
    flat, _ = train(mlp, loss, X, LABELS, "auto", metrics=["accuracy"])
    for got, want in zip(column.weights, flat.weights):
        np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_the_fused_loss_of_column_labels_equals_that_of_flat_ones_and_its_gradients():
    logits = mk.Variable(RNG.normal(size=(6, 4)).astype(np.float32))
    labels = RNG.integers(0, 4, 6)
    mean = mk.ops.cross_entropy.mean_sparse_categorical_crossentropy
    results = []
    for target in (labels, labels[:, None]):
        with mk.GradientTape(persistent=True) as outer:
            with mk.GradientTape() as inner:
                loss = mean(target, logits)
            grad = inner.gradient(loss, logits)
            curvature = mk.ops.sum(grad * grad)
        results.append((loss.numpy(), grad.numpy(), outer.gradient(curvature, logits).numpy()))
    for flat, column in zip(*results):
        np.testing.assert_array_equal(flat, column)
    with pytest.raises(ValueError, match=r"labels must lie in \[0, 4\)"):
        mean(np.full((6, 1), 4), logits)


def test_targets_are_cast_to_floatx_never_to_a_float16_models_dtype():
    # Keras's adapters cast to floatx (float32): float16 would overflow 1e5 (inf, and fit
    # refused "NaN or infinite" targets) and round 1 + 1e-4 to 1.
    mk.mixed_precision.set_global_policy("float16")
    try:
        model = mk.Sequential([Input((6,)), Dense(1, kernel_initializer="zeros")])
        model.compile("sgd", "mae", metrics=["mae"])
        targets = (1e5 + np.arange(len(X)) * 1e-1).reshape(-1, 1)
        logs = model.evaluate(X, targets, verbose=0, return_dict=True)
    finally:
        mk.mixed_precision.set_global_policy("float32")
    assert logs["mae"] == pytest.approx(float(np.mean(targets.astype(np.float32))), rel=1e-6)
