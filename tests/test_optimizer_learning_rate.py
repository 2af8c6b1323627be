"""`optimizer.learning_rate` as Keras 3 has it: a float32 Variable for a float rate.

Compared with Keras where it is importable (the names and order of the
optimizer's variables, the config, the `.keras` files both ways), with hand
values otherwise: the rate each update uses, the callbacks that change it,
and the `.minikeras` files written before the rate was a Variable.
"""

import os
import shutil
from pathlib import Path

import numpy as np
import pytest

import minikeras as mk
from minikeras import optimizers
from minikeras.engine.variable import Variable
from minikeras.optimizers import schedules

LEGACY = Path(__file__).resolve().parent / "fixtures" / "minikeras_float_lr"


def _keras():
    os.environ.setdefault("KERAS_BACKEND", "jax")
    return pytest.importorskip("keras")


def _sgd_step(optimizer, gradient=1.0):
    """The change of the optimizer's one weight (a new one of 0 at first) in one update."""
    w = optimizer._trainable_variables[0] if optimizer.built else Variable([0.0], name="w")
    before = float(w.numpy()[0])
    optimizer.apply([np.array([gradient], np.float32)], [w])
    return float(w.numpy()[0]) - before


# ------------------------------------------------------------------ the Variable


def test_a_float_rate_is_a_float32_variable_listed_after_the_iteration_count():
    optimizer = optimizers.Adam(learning_rate=0.01, name="opt")
    rate = optimizer.learning_rate
    assert isinstance(rate, Variable) and rate is optimizer.learning_rate
    assert (rate.name, rate.path, rate.dtype, rate.shape) == (
        "learning_rate",
        "opt/learning_rate",
        np.float32,
        (),
    )
    assert not rate.trainable
    assert rate.numpy() == np.float32(0.01) and float(rate) == float(np.float32(0.01))
    assert mk.ops.convert_to_numpy(rate) == np.float32(0.01)
    optimizer.build([Variable([1.0], name="w")])
    assert [(v.name, v.path) for v in optimizer.variables] == [
        ("iteration", "opt/iteration"),
        ("learning_rate", "opt/learning_rate"),
        ("w_momentum", "opt/w_momentum"),
        ("w_velocity", "opt/w_velocity"),
    ]


def test_assigning_the_variable_or_setting_the_property_changes_the_next_update():
    optimizer = optimizers.SGD(learning_rate=0.5)
    rate = optimizer.learning_rate
    rate.assign(0.25)
    assert _sgd_step(optimizer) == -0.25
    optimizer.learning_rate = np.float64(0.125)  # into the same float32 Variable
    assert optimizer.learning_rate is rate and rate.dtype == np.float32
    assert _sgd_step(optimizer) == -0.125
    optimizer.learning_rate = mk.Variable(0.0625)
    assert optimizer.learning_rate is rate and _sgd_step(optimizer) == -0.0625


def test_each_update_uses_the_float32_value_of_the_rate():
    # 0.1 held in float32 is 0.10000000149..., and a float64 weight moves by exactly it.
    w = Variable(np.zeros(1), dtype="float64")
    optimizers.SGD(learning_rate=0.1).apply([np.ones(1)], [w])
    assert w.numpy()[0] == -float(np.float32(0.1)) != -0.1


@pytest.mark.parametrize("bad", [-1.0, float("nan"), "fast", None])
def test_setting_an_invalid_rate_raises_before_anything_changes(bad):
    optimizer = optimizers.SGD(learning_rate=0.5)
    with pytest.raises(ValueError, match="SGD.*learning_rate"):
        optimizer.learning_rate = bad
    assert float(optimizer.learning_rate) == 0.5
    assert [v.name for v in optimizer.variables] == ["iteration", "learning_rate"]


def test_a_schedule_has_no_variable_and_its_value_is_the_property():
    optimizer = optimizers.SGD(learning_rate=schedules.ExponentialDecay(1.0, 1, 0.5))
    assert [v.name for v in optimizer.variables] == ["iteration"]
    assert optimizer.learning_rate == 1.0
    assert _sgd_step(optimizer) == -1.0
    assert optimizer.learning_rate == 0.5  # at iterations == 1
    with pytest.raises(TypeError, match="schedule.*float learning_rate"):
        optimizer.learning_rate = 0.1
    assert optimizer.learning_rate == 0.5


def test_a_callable_rate_is_called_with_the_step():
    optimizer = optimizers.SGD(learning_rate=lambda step: 1.0 / (step + 1))
    assert [v.name for v in optimizer.variables] == ["iteration"]
    assert _sgd_step(optimizer) == -1.0 and optimizer.learning_rate == 0.5
    with pytest.raises(TypeError, match="float learning_rate"):
        optimizer.learning_rate = 0.1


def test_setting_a_schedule_drops_the_variable_as_keras_does():
    optimizer = optimizers.SGD(learning_rate=0.1)
    optimizer.learning_rate = schedules.ExponentialDecay(0.5, 1, 0.5)
    assert [v.name for v in optimizer.variables] == ["iteration"]
    assert optimizer.learning_rate == 0.5 and _sgd_step(optimizer) == -0.5
    optimizer.build([Variable([1.0], name="w")])
    assert [v.name for v in optimizer.variables] == ["iteration"]


def test_get_config_writes_the_current_float32_value_as_a_float():
    optimizer = optimizers.Adam(learning_rate=0.01)
    config = optimizer.get_config()
    assert type(config["learning_rate"]) is float
    assert config["learning_rate"] == float(np.float32(0.01))
    optimizer.learning_rate.assign(1e-4)
    assert optimizer.get_config()["learning_rate"] == float(np.float32(1e-4))
    again = optimizers.Adam.from_config(optimizer.get_config())
    assert again.learning_rate.numpy() == np.float32(1e-4)


def test_a_user_rule_still_receives_the_rate_as_a_python_float():
    seen = []

    class Plain(optimizers.Optimizer):
        def update_step(self, gradient, variable, learning_rate):
            seen.append(learning_rate)
            self.assign_sub(variable, learning_rate * gradient)

    optimizer = Plain(learning_rate=0.5)
    w = Variable([1.0], name="w")
    for rate in (0.5, 0.25, 0.25):
        optimizer.learning_rate = rate
        optimizer.apply([np.ones(1, np.float32)], [w])
    assert [type(rate) for rate in seen] == [float] * len(seen)
    assert seen[0] == 0.5 and seen[-1] == 0.25
    np.testing.assert_array_equal(w.numpy(), np.array([0.0], np.float32))  # 1 - .5 - .25 - .25


def test_a_rule_reading_self_learning_rate_is_still_replayed_and_follows_the_rate():
    class ReadsTheVariable(optimizers.Optimizer):
        def update_step(self, gradient, variable, learning_rate):
            rate = mk.ops.cast(self.learning_rate, variable.dtype)  # (as Keras code may)
            self.assign_sub(variable, mk.ops.multiply(gradient, rate))

    optimizer = ReadsTheVariable(learning_rate=0.5)
    steps = []
    for step in range(6):
        if step == 3:
            optimizer.learning_rate.assign(0.25)
        steps.append(_sgd_step(optimizer))
    assert steps == [-0.5] * 3 + [-0.25] * 3
    runner, w = optimizer._rule_runner, optimizer._trainable_variables[0]
    assert not runner.spoiled and runner.programs.get(id(w)) is not None  # (traced, replayed)


# ------------------------------------------------------------------ callbacks


def _model():
    mk.utils.set_random_seed(0)
    model = mk.Sequential([mk.Input((3,)), mk.layers.Dense(1)])
    model.compile(optimizers.SGD(learning_rate=0.1), "mse")
    return model


def test_the_scheduler_callbacks_set_the_variable_and_log_floats():
    x, y = np.ones((4, 3), np.float32), np.zeros((4, 1), np.float32)
    model = _model()
    rate = model.optimizer.learning_rate
    scheduler = mk.callbacks.LearningRateScheduler(lambda epoch, lr: lr / 2)
    history = model.fit(x, y, epochs=3, callbacks=[scheduler], verbose=0)
    logged = history.history["learning_rate"]
    assert [type(value) for value in logged] == [float] * 3
    assert logged == [float(np.float32(0.1 / 2**n)) for n in (1, 2, 3)]
    assert model.optimizer.learning_rate is rate and float(rate) == logged[-1]

    model = _model()
    plateau = mk.callbacks.ReduceLROnPlateau(monitor="loss", factor=0.5, patience=0, min_delta=1e9)
    history = model.fit(x, y, epochs=2, callbacks=[plateau], verbose=0)
    logged = history.history["learning_rate"]
    assert [type(value) for value in logged] == [float] * 2
    # (logged before the reduction each epoch end makes: epoch 0 improved, epoch 1 did not)
    assert logged == [float(np.float32(0.1))] * 2
    assert float(model.optimizer.learning_rate) == float(np.float32(0.05))


def test_a_rate_a_callback_changed_is_saved_and_restored(tmp_path):
    x, y = np.ones((4, 3), np.float32), np.zeros((4, 1), np.float32)
    model = _model()
    scheduler = mk.callbacks.LearningRateScheduler(lambda epoch: 0.03)
    model.fit(x, y, epochs=1, callbacks=[scheduler], verbose=0)
    for suffix in ("minikeras", "keras"):
        model.save(tmp_path / f"m.{suffix}")
        loaded = mk.saving.load_model(tmp_path / f"m.{suffix}")
        assert loaded.optimizer.learning_rate.numpy() == np.float32(0.03), suffix
        assert int(loaded.optimizer.iterations.numpy()) == 1
        assert [v.name for v in loaded.optimizer.variables][:2] == ["iteration", "learning_rate"]


def test_a_minikeras_file_from_before_the_variable_loads_its_state():
    # Made by make_fixtures.py there, with the code of before: an Adam at 0.01 for two
    # steps, at 0.005 (a callback's) for two more; `iterations` then the slots in the file.
    data = np.load(LEGACY / "adam_trained.npz")
    model = mk.saving.load_model(LEGACY / "adam_trained.minikeras")
    optimizer = model.optimizer
    assert optimizer.learning_rate.numpy() == np.float32(data["learning_rate"])
    assert int(optimizer.iterations.numpy()) == int(data["state_iterations"]) == 4
    assert optimizer.iterations.dtype == np.int32  # (the file has it as int64)
    slots = optimizer.variables[2:]
    assert sorted(v.name for v in slots) == sorted(
        key[len("state_") :] for key in data.files if key.startswith("state_dense")
    )
    for slot in slots:
        np.testing.assert_array_equal(slot.numpy(), data[f"state_{slot.name}"])
    model.fit(data["x"], data["y"], batch_size=8, epochs=1, shuffle=False, verbose=0)
    dense = model.layers[0]
    np.testing.assert_allclose(dense.kernel.numpy(), data["after_step_kernel"], rtol=1e-6)
    np.testing.assert_allclose(dense.bias.numpy(), data["after_step_bias"], rtol=1e-6)


def test_a_backup_from_before_the_variable_restores(tmp_path):
    # Made by make_fixtures.py there: a backup after the first of two epochs, its
    # optimizer arrays `iterations` and the slots, without the rate.
    shutil.copytree(LEGACY / "backup", tmp_path / "backup")
    data = np.load(LEGACY / "backup_weights.npz")
    mk.utils.set_random_seed(1)  # (other initial weights: the backup must replace them)
    model = mk.Sequential([mk.Input((3,)), mk.layers.Dense(2, name="dense")])
    model.compile(optimizers.Adam(learning_rate=0.01), "mse")
    backup = mk.callbacks.BackupAndRestore(str(tmp_path / "backup"))
    x, y = np.ones((4, 3), np.float32), np.zeros((4, 2), np.float32)
    model.fit(x, y, epochs=1, callbacks=[backup], verbose=0)  # (restored; no epoch left)
    np.testing.assert_array_equal(model.layers[0].kernel.numpy(), data["kernel"])
    np.testing.assert_array_equal(model.layers[0].bias.numpy(), data["bias"])
    assert int(model.optimizer.iterations.numpy()) == int(data["iterations"]) == 2
    assert model.optimizer.learning_rate.numpy() == np.float32(0.01)


def test_a_backup_restores_the_rate_a_callback_changed(tmp_path):
    x, y = np.ones((4, 3), np.float32), np.zeros((4, 1), np.float32)

    class StopAfterFirstEpoch(mk.callbacks.Callback):
        def on_epoch_end(self, epoch, logs=None):
            raise RuntimeError("interrupted")

    model = _model()
    callbacks = [
        mk.callbacks.LearningRateScheduler(lambda epoch: 0.05),
        mk.callbacks.BackupAndRestore(str(tmp_path / "backup")),
        StopAfterFirstEpoch(),
    ]
    with pytest.raises(RuntimeError, match="interrupted"):
        model.fit(x, y, epochs=2, callbacks=callbacks, verbose=0)
    resumed = _model()
    backup = mk.callbacks.BackupAndRestore(str(tmp_path / "backup"))
    resumed.fit(x, y, epochs=1, callbacks=[backup], verbose=0)  # (restored; no epoch left)
    assert resumed.optimizer.learning_rate.numpy() == np.float32(0.05)


# ------------------------------------------------------------------ Keras


@pytest.mark.parametrize(
    "make",
    [
        lambda o: o.Adam(0.01, name="opt"),
        lambda o: o.Adam(0.01, amsgrad=True, use_ema=True, name="opt"),
        lambda o: o.SGD(0.1, momentum=0.9, name="opt"),
        lambda o: o.RMSprop(0.01, centered=True, momentum=0.5, name="opt"),
        lambda o: o.Adam(o.schedules.ExponentialDecay(0.1, 10, 0.5), name="opt"),
    ],
    ids=["adam", "adam_amsgrad_ema", "sgd_momentum", "rmsprop", "schedule"],
)
def test_the_variables_are_named_and_ordered_as_kerass(make):
    keras = _keras()
    theirs = make(keras.optimizers)
    ours = make(optimizers)
    theirs.build([keras.Variable(np.zeros(2, np.float32), name="w")])
    ours.build([Variable(np.zeros(2, np.float32), name="w")])
    assert [(v.name, v.path) for v in ours.variables] == [
        (v.name, v.path) for v in theirs.variables
    ]
    assert [v.trainable for v in ours.variables] == [v.trainable for v in theirs.variables]
    rate = ours.get_config()["learning_rate"]
    if not isinstance(rate, dict):  # (a schedule's entry is checked with the schedules)
        assert rate == theirs.get_config()["learning_rate"]


def test_the_rate_reads_and_writes_as_kerass():
    keras = _keras()
    theirs, ours = keras.optimizers.Adam(0.01), optimizers.Adam(0.01)
    for optimizer in (theirs, ours):
        optimizer.learning_rate.assign(1e-4)
    assert ours.learning_rate.numpy() == keras.ops.convert_to_numpy(theirs.learning_rate)
    assert ours.get_config()["learning_rate"] == theirs.get_config()["learning_rate"]
    for optimizer in (theirs, ours):
        optimizer.learning_rate = 0.5
    assert float(ours.learning_rate) == float(theirs.learning_rate) == 0.5
    assert str(ours.learning_rate.dtype) == str(theirs.learning_rate.dtype) == "float32"


def _keras_model(keras):
    keras.utils.set_random_seed(0)
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2, name="dense")])
    model.compile(keras.optimizers.Adam(0.01), "mse")
    return model


def test_the_rate_and_iterations_cross_from_keras_and_back(tmp_path):
    keras = _keras()
    rng = np.random.default_rng(0)
    x = rng.standard_normal((8, 3)).astype("float32")
    y = rng.standard_normal((8, 2)).astype("float32")
    model = _keras_model(keras)
    model.fit(x, y, batch_size=4, epochs=1, verbose=0)
    model.optimizer.learning_rate.assign(0.003)
    model.fit(x, y, batch_size=4, epochs=1, verbose=0)
    model.save(tmp_path / "keras.keras")
    ours = mk.saving.load_model(tmp_path / "keras.keras")
    theirs_state = [np.asarray(v.numpy()) for v in model.optimizer.variables]
    assert ours.optimizer.learning_rate.numpy() == theirs_state[1] == np.float32(0.003)
    assert int(ours.optimizer.iterations.numpy()) == int(theirs_state[0]) == 4

    # And back: minikeras trains on, changes the rate, and Keras reads both.
    ours.fit(x, y, batch_size=4, epochs=1, verbose=0)
    ours.optimizer.learning_rate = 0.0007
    ours.save(tmp_path / "ours.keras")
    again = keras.saving.load_model(tmp_path / "ours.keras")
    assert keras.ops.convert_to_numpy(again.optimizer.learning_rate) == np.float32(0.0007)
    assert int(again.optimizer.iterations) == 6
    assert (
        again.optimizer.get_config()["learning_rate"]
        == (ours.optimizer.get_config()["learning_rate"])
    )


def test_the_learning_rate_variable_takes_the_default_float_dtype():
    mk.config.set_floatx("float64")
    try:
        optimizer = mk.optimizers.SGD(0.1)
        assert optimizer.learning_rate.dtype == np.float64 and float(optimizer.learning_rate) == 0.1
    finally:
        mk.config.set_floatx("float32")
    assert mk.optimizers.SGD(0.1).learning_rate.dtype == np.float32


def test_a_callable_of_no_argument_is_called_with_none_as_keras_calls_it():
    rates = iter([0.5, 0.25])
    optimizer = optimizers.SGD(learning_rate=lambda: next(rates))
    w = Variable([0.0])
    optimizer.apply([np.ones(1)], [w])
    optimizer.apply([np.ones(1)], [w])
    np.testing.assert_allclose(w.numpy(), [-0.75])
    holder = Variable(0.125)  # Keras's common form: a rate read from elsewhere
    optimizer.learning_rate = lambda: holder
    assert optimizer.learning_rate == 0.125
    optimizer.learning_rate = lambda step=0: 1.0 + step  # (a default: called with none)
    assert optimizer.learning_rate == 1.0
