"""Callbacks driven by hand on a fake model, then by `fit` on a real one."""

import csv
import math
import types

import numpy as np
import pytest

import minikeras
from minikeras import callbacks


class FakeOptimizer:
    def __init__(self, learning_rate=0.1):
        self.learning_rate = learning_rate


class FakeModel:
    """What the trainer hands callbacks: stop_training, optimizer, weights, name."""

    def __init__(self, learning_rate=0.1):
        self.name = "fake"
        self.stop_training = False
        self.optimizer = FakeOptimizer(learning_rate)
        self.weights = [np.zeros(2)]

    def get_weights(self):
        return [w.copy() for w in self.weights]

    def set_weights(self, weights):
        self.weights = [np.array(w) for w in weights]


def run_epochs(callback, values, key="val_loss", model=None):
    """Plays `fit`'s epoch loop with scripted logs; weights hold the epoch index.

    Returns the model and the epochs that ran.
    """
    model = model or FakeModel()
    callback_list = callbacks.CallbackList([callback], model=model, epochs=len(values), steps=1)
    model.stop_training = False
    callback_list.on_train_begin()
    ran = []
    for epoch, value in enumerate(values):
        callback_list.on_epoch_begin(epoch)
        model.weights = [np.full(2, float(epoch))]
        callback_list.on_epoch_end(epoch, {key: value})
        ran.append(epoch)
        if model.stop_training:
            break
    callback_list.on_train_end()
    return model, ran


# ----------------------------------------------------------- CallbackList, History


HOOKS = sorted(name for name in dir(callbacks.Callback) if name.startswith("on_"))


def test_callback_list_calls_every_hook_on_each_callback_in_order():
    calls = []

    def recorder(tag):
        def hook(name):
            return lambda *args: calls.append((tag, name, args))

        return callbacks.LambdaCallback(**{name: hook(name) for name in HOOKS})

    callback_list = callbacks.CallbackList([recorder("a"), recorder("b")])
    callback_list.on_train_begin({"x": 1})
    callback_list.on_epoch_end(3, {"loss": 1.0})
    callback_list.on_predict_batch_end(2)
    assert calls == [
        ("a", "on_train_begin", ({"x": 1},)),
        ("b", "on_train_begin", ({"x": 1},)),
        ("a", "on_epoch_end", (3, {"loss": 1.0})),
        ("b", "on_epoch_end", (3, {"loss": 1.0})),
        ("a", "on_predict_batch_end", (2, {})),
        ("b", "on_predict_batch_end", (2, {})),
    ]
    for name in HOOKS:
        if name in ("on_batch_begin", "on_batch_end"):
            continue  # called through on_train_batch_*, not by the list
        calls.clear()
        args = (0,) if "batch" in name or "epoch" in name else ()
        getattr(callback_list, name)(*args)
        assert [(tag, hook) for tag, hook, _ in calls] == [("a", name), ("b", name)]


def test_batch_hooks_go_only_to_the_callbacks_that_define_them(monkeypatch):
    # As in Keras: an inherited (empty) batch hook is not called at each step.
    inherited, default = [], callbacks.Callback.on_train_batch_end

    def spy(self, batch, logs=None):
        inherited.append(type(self).__name__)
        default(self, batch, logs)

    monkeypatch.setattr(callbacks.Callback, "on_train_batch_end", spy)
    seen = []

    class Own(callbacks.Callback):
        def on_train_batch_end(self, batch, logs=None):
            seen.append(("own", batch))

    class Older(callbacks.Callback):
        def on_batch_end(self, batch, logs=None):  # Keras's older name still counts
            seen.append(("older", batch))

    patched = callbacks.Callback()
    callback_list = callbacks.CallbackList([callbacks.Callback(), Own(), Older(), patched])
    callback_list.on_train_batch_end(0)
    patched.on_train_batch_end = lambda batch, logs=None: seen.append(("patched", batch))
    callback_list.on_epoch_begin(0)  # (hooks set on a callback are found again each epoch)
    late = Own()
    callback_list.append(late)
    callback_list.on_train_batch_end(1)
    assert seen == [("own", 0), ("older", 0), ("own", 1), ("older", 1), ("patched", 1), ("own", 1)]
    assert inherited == ["Older", "Older"]  # never the plain Callback's empty hook


def test_batch_hooks_follow_a_callback_list_changed_by_hand():
    # `callbacks` is a plain list: an entry replaced or removed (the length kept)
    # must not leave the old callback's hook called, nor the new one's skipped.
    seen = []

    class Tagged(callbacks.Callback):
        def __init__(self, tag):
            super().__init__()
            self.tag = tag

        def on_train_batch_end(self, batch, logs=None):
            seen.append((self.tag, batch))

    callback_list = callbacks.CallbackList([Tagged("a")])
    callback_list.on_train_batch_end(0)
    callback_list.callbacks[0] = Tagged("b")
    callback_list.on_train_batch_end(1)
    callback_list.callbacks.pop()
    callback_list.callbacks.append(callbacks.Callback())
    callback_list.on_train_batch_end(2)
    callback_list.callbacks = [Tagged("c")]
    callback_list.on_train_batch_end(3)
    assert seen == [("a", 0), ("b", 1), ("c", 3)]


def test_a_batch_hook_replaced_between_batches_is_the_one_called():
    # A hook found at the epoch's first batch is looked up again at each call:
    # replaced (or removed) on the instance, the old one is not called any more.
    seen = []
    callback = callbacks.LambdaCallback(on_train_batch_end=lambda batch, logs: seen.append(batch))
    callback_list = callbacks.CallbackList([callback])
    callback_list.on_epoch_begin(0)
    callback_list.on_train_batch_end(0)
    callback.on_train_batch_end = lambda batch, logs: seen.append(("new", batch))
    callback_list.on_train_batch_end(1)
    del callback.on_train_batch_end  # back to the inherited, empty hook
    callback_list.on_train_batch_end(2)
    assert seen == [0, ("new", 1)]


def test_callback_list_sets_model_and_params_and_keeps_history_last():
    model = FakeModel()
    first = callbacks.TerminateOnNaN()
    callback_list = callbacks.CallbackList(
        [first], model=model, add_history=True, epochs=3, steps=5, verbose=0
    )
    later = callbacks.LambdaCallback()
    callback_list.append(later)
    history = callback_list.history
    assert callback_list.callbacks == [first, later, history]
    assert isinstance(history, callbacks.History)
    for callback in callback_list.callbacks:
        assert callback.model is model
        assert callback.params == {"epochs": 3, "steps": 5, "verbose": 0}
    assert model.history is history


def test_callback_list_uses_a_given_history_instead_of_adding_one():
    history = callbacks.History()
    callback_list = callbacks.CallbackList([history], add_history=True)
    assert callback_list.callbacks == [history]
    assert callback_list.history is history
    assert callbacks.CallbackList([]).history is None


def test_callback_list_rejects_what_is_not_a_callback():
    with pytest.raises(TypeError, match="expected a minikeras.callbacks.Callback"):
        callbacks.CallbackList([lambda logs: None])


def test_old_batch_hook_names_are_called_by_the_train_batch_hooks():
    seen = []

    class OldStyle(callbacks.Callback):
        def on_batch_end(self, batch, logs=None):
            seen.append((batch, logs))

    callbacks.CallbackList([OldStyle()]).on_train_batch_end(4, {"loss": 1.0})
    assert seen == [(4, {"loss": 1.0})]


def test_history_records_every_key_and_epoch_and_restarts_with_training():
    model = FakeModel()
    callback_list = callbacks.CallbackList(model=model, add_history=True)
    callback_list.on_train_begin()
    callback_list.on_epoch_end(0, {"loss": 0.5, "val_loss": 0.6})
    callback_list.on_epoch_end(1, {"loss": 0.25, "val_loss": 0.5})
    history = callback_list.history
    assert history.history == {"loss": [0.5, 0.25], "val_loss": [0.6, 0.5]}
    assert history.epoch == [0, 1]
    assert model.history is history
    history.on_train_begin()
    assert history.history == {} and history.epoch == []


def test_history_records_keys_that_earlier_callbacks_add():
    schedule = callbacks.LearningRateScheduler(lambda epoch: 0.5 / (epoch + 1))
    callback_list = callbacks.CallbackList([schedule], model=FakeModel(), add_history=True)
    callback_list.on_train_begin()
    for epoch in range(2):
        callback_list.on_epoch_begin(epoch)
        callback_list.on_epoch_end(epoch, {"loss": 1.0})
    assert callback_list.history.history["learning_rate"] == [0.5, 0.25]


# ------------------------------------------------------------------ EarlyStopping


def test_early_stopping_stops_after_patience_epochs_without_improvement():
    stopper = callbacks.EarlyStopping(patience=2)
    model, ran = run_epochs(stopper, [1.0, 0.8, 0.9, 0.85, 0.7, 0.6])
    assert ran == [0, 1, 2, 3]
    assert model.stop_training
    assert (stopper.stopped_epoch, stopper.best, stopper.best_epoch, stopper.wait) == (3, 0.8, 1, 2)


def test_early_stopping_with_zero_patience_never_stops_at_epoch_zero():
    stopper = callbacks.EarlyStopping(monitor="loss")
    _, ran = run_epochs(stopper, [1.0, 1.0, 0.5], key="loss")
    assert ran == [0, 1]
    assert stopper.stopped_epoch == 1


def test_early_stopping_runs_every_epoch_while_improving():
    stopper = callbacks.EarlyStopping(patience=0)
    model, ran = run_epochs(stopper, [1.0, 0.9, 0.8, 0.7])
    assert ran == [0, 1, 2, 3]
    assert not model.stop_training
    assert stopper.stopped_epoch == 0 and stopper.best_epoch == 3


def test_early_stopping_min_delta_ignores_small_improvements():
    stopper = callbacks.EarlyStopping(min_delta=-0.1, patience=1)  # the sign is ignored
    _, ran = run_epochs(stopper, [1.0, 0.95, 0.85, 0.5])
    assert ran == [0, 1]
    assert stopper.min_delta == 0.1
    assert stopper.best == 1.0


def test_early_stopping_max_mode_and_auto_mode_for_accuracy():
    for mode in ("max", "auto"):
        stopper = callbacks.EarlyStopping(monitor="val_accuracy", patience=1, mode=mode)
        _, ran = run_epochs(stopper, [0.5, 0.7, 0.6, 0.9], key="val_accuracy")
        assert ran == [0, 1, 2], mode
        assert stopper.best == 0.7


def test_early_stopping_min_mode_on_a_metric_named_like_accuracy():
    stopper = callbacks.EarlyStopping(monitor="val_accuracy", patience=1, mode="min")
    _, ran = run_epochs(stopper, [0.5, 0.7, 0.4], key="val_accuracy")
    assert ran == [0, 1]


def test_early_stopping_auto_mode_follows_a_model_metric_direction():
    class Metric:
        name = "score"
        _direction = "up"

    model = FakeModel()
    model.metrics = [Metric()]
    stopper = callbacks.EarlyStopping(monitor="val_score", patience=1)
    _, ran = run_epochs(stopper, [0.1, 0.2, 0.15], key="val_score", model=model)
    assert ran == [0, 1, 2] and stopper.best == 0.2


@pytest.mark.parametrize(
    "monitor, maximized",
    [("val_auc", True), ("precision", True), ("val_recall", True), ("val_mae", False),
     ("mean_squared_error", False), ("val_loss", False)],
)  # fmt: skip
def test_early_stopping_auto_mode_tells_direction_from_common_names(monitor, maximized):
    stopper = callbacks.EarlyStopping(monitor=monitor, patience=1)
    _, ran = run_epochs(stopper, [1.0, 2.0, 1.5], key=monitor)
    assert ran == ([0, 1, 2] if maximized else [0, 1])


def test_early_stopping_auto_mode_refuses_to_guess_an_unknown_metric():
    stopper = callbacks.EarlyStopping(monitor="val_zork")
    with pytest.raises(ValueError, match="mode='max'"):
        run_epochs(stopper, [1.0], key="val_zork")


def test_early_stopping_unknown_mode_warns_and_falls_back_to_auto():
    with pytest.warns(UserWarning, match="fallback to auto"):
        stopper = callbacks.EarlyStopping(mode="lowest")
    assert stopper.mode == "auto"


def test_early_stopping_baseline_keeps_counting_until_a_value_beats_it():
    # Improvements that do not beat the baseline leave `wait` growing; the first
    # epoch without improvement then stops at once (Keras 3).
    stopper = callbacks.EarlyStopping(patience=2, baseline=0.5)
    _, ran = run_epochs(stopper, [1.0, 0.9, 0.95, 0.8])
    assert ran == [0, 1, 2]
    assert stopper.wait == 3 and stopper.best == 0.9
    stopper = callbacks.EarlyStopping(patience=1, baseline=0.5)
    _, ran = run_epochs(stopper, [0.6, 0.4, 0.45, 0.3])
    assert ran == [0, 1, 2]
    assert stopper.best == 0.4


def test_early_stopping_start_from_epoch_ignores_warm_up_epochs():
    stopper = callbacks.EarlyStopping(patience=0, start_from_epoch=2)
    _, ran = run_epochs(stopper, [0.1, 0.5, 1.0, 1.2, 0.9])
    assert ran == [0, 1, 2, 3]
    assert (stopper.best, stopper.best_epoch) == (1.0, 2)


def test_early_stopping_restores_best_weights_when_patience_runs_out():
    stopper = callbacks.EarlyStopping(patience=2, restore_best_weights=True)
    model, ran = run_epochs(stopper, [1.0, 0.5, 0.7, 0.6, 0.1])
    assert ran == [0, 1, 2, 3]
    np.testing.assert_array_equal(model.weights[0], [1.0, 1.0])


def test_early_stopping_restores_best_weights_when_training_ends_normally():
    stopper = callbacks.EarlyStopping(patience=5, restore_best_weights=True)
    model, ran = run_epochs(stopper, [1.0, 0.5, 0.7])
    assert ran == [0, 1, 2] and stopper.stopped_epoch == 0
    np.testing.assert_array_equal(model.weights[0], [1.0, 1.0])


def test_early_stopping_keeps_last_weights_without_restore_best_weights():
    stopper = callbacks.EarlyStopping(patience=1)
    model, _ = run_epochs(stopper, [1.0, 0.5, 0.7])
    np.testing.assert_array_equal(model.weights[0], [2.0, 2.0])


def test_early_stopping_is_reset_by_a_new_training():
    stopper = callbacks.EarlyStopping(patience=1, restore_best_weights=True)
    run_epochs(stopper, [0.1, 0.2, 0.3])
    model, ran = run_epochs(stopper, [1.0, 0.9, 0.8])
    assert ran == [0, 1, 2] and stopper.best == 0.8 and stopper.stopped_epoch == 0
    np.testing.assert_array_equal(model.weights[0], [2.0, 2.0])


def test_early_stopping_warns_naming_available_keys_when_monitor_is_missing():
    stopper = callbacks.EarlyStopping(patience=0)
    with pytest.warns(UserWarning, match="`val_loss` which is not available.*are: loss$"):
        model, ran = run_epochs(stopper, [1.0, 2.0, 3.0], key="loss")
    assert ran == [0, 1, 2] and not model.stop_training


def test_early_stopping_verbose_prints_stop_and_restore(capsys):
    stopper = callbacks.EarlyStopping(patience=1, restore_best_weights=True, verbose=1)
    run_epochs(stopper, [1.0, 2.0, 3.0])
    assert capsys.readouterr().out.splitlines() == [
        "Epoch 2: early stopping",
        "Restoring model weights from the end of the best epoch 1.",
    ]


# --------------------------------------------------------- LearningRateScheduler


def test_learning_rate_scheduler_sets_each_epochs_rate_and_logs_it():
    model = FakeModel(learning_rate=1.0)
    scheduler = callbacks.LearningRateScheduler(lambda epoch, lr: lr if epoch < 2 else lr / 10)
    scheduler.set_model(model)
    rates, logged = [], []
    for epoch in range(4):
        scheduler.on_epoch_begin(epoch)
        rates.append(model.optimizer.learning_rate)
        logs = {"loss": 1.0}
        scheduler.on_epoch_end(epoch, logs)
        logged.append(logs["learning_rate"])
    np.testing.assert_allclose(rates, [1.0, 1.0, 0.1, 0.01])
    assert logged == rates
    assert all(type(rate) is float for rate in rates)


def test_learning_rate_scheduler_accepts_one_argument_schedules_and_numpy_numbers():
    model = FakeModel()
    scheduler = callbacks.LearningRateScheduler(lambda epoch: np.float32(0.5) ** epoch)
    scheduler.set_model(model)
    scheduler.on_epoch_begin(3)
    assert model.optimizer.learning_rate == 0.125
    assert type(model.optimizer.learning_rate) is float


def test_learning_rate_scheduler_lets_errors_inside_the_schedule_through():
    def schedule(epoch, lr):
        raise TypeError("bug inside the schedule")

    scheduler = callbacks.LearningRateScheduler(schedule)
    scheduler.set_model(FakeModel())
    with pytest.raises(TypeError, match="bug inside"):
        scheduler.on_epoch_begin(0)


def test_learning_rate_scheduler_rejects_a_schedule_returning_no_number():
    scheduler = callbacks.LearningRateScheduler(lambda epoch, lr: "fast")
    scheduler.set_model(FakeModel())
    with pytest.raises(ValueError, match="should return a float.*'fast' of type str at epoch 0"):
        scheduler.on_epoch_begin(0)
    with pytest.raises(TypeError, match="schedule must be a function"):
        callbacks.LearningRateScheduler(0.1)


def test_learning_rate_scheduler_verbose_prints_the_new_rate(capsys):
    scheduler = callbacks.LearningRateScheduler(lambda epoch: 0.5, verbose=1)
    scheduler.set_model(FakeModel())
    scheduler.on_epoch_begin(0)
    assert "Epoch 1: LearningRateScheduler setting learning rate to 0.5." in capsys.readouterr().out


# -------------------------------------------------------------- ReduceLROnPlateau


def reduce_on(values, key="val_loss", learning_rate=1.0, **kwargs):
    """The learning rate logged at each epoch's end, and the rate after the last."""
    model = FakeModel(learning_rate)
    reducer = callbacks.ReduceLROnPlateau(**{"monitor": key, **kwargs})
    reducer.set_model(model)
    reducer.on_train_begin()
    logged = []
    for epoch, value in enumerate(values):
        logs = {key: value}
        reducer.on_epoch_end(epoch, logs)
        logged.append(logs["learning_rate"])
    return logged, model.optimizer.learning_rate


def test_reduce_lr_on_plateau_multiplies_by_factor_after_patience_epochs():
    logged, final = reduce_on([1.0, 1.0, 1.0, 1.0, 1.0], factor=0.5, patience=2)
    assert logged == [1.0, 1.0, 1.0, 0.5, 0.5]
    assert final == 0.25


def test_reduce_lr_on_plateau_improvement_resets_the_wait():
    _, final = reduce_on([1.0, 1.0, 0.5, 0.5, 0.4, 0.4], factor=0.5, patience=2)
    assert final == 1.0


def test_reduce_lr_on_plateau_min_delta_ignores_small_improvements():
    _, final = reduce_on([1.0, 0.99, 0.98], factor=0.5, patience=2, min_delta=0.05)
    assert final == 0.5
    _, final = reduce_on([1.0, 0.99, 0.98], factor=0.5, patience=2, min_delta=0.0)
    assert final == 1.0


def test_reduce_lr_on_plateau_cooldown_pauses_counting_after_a_reduction():
    values = [1.0] * 7
    logged, final = reduce_on(values, factor=0.5, patience=1, cooldown=2)
    # Reductions at epochs 1, 3 and 5: as in Keras, the cooldown counter is decremented
    # before the check, so cooldown=2 skips one epoch.
    assert logged == [1.0, 1.0, 0.5, 0.5, 0.25, 0.25, 0.125]
    assert final == 0.125
    logged, _ = reduce_on(values, factor=0.5, patience=1, cooldown=0)
    assert logged == [1.0, 1.0, 0.5, 0.25, 0.125, 0.0625, 0.03125]


def test_reduce_lr_on_plateau_stops_at_min_lr():
    logged, final = reduce_on([1.0] * 6, factor=0.1, patience=1, min_lr=0.005)
    np.testing.assert_allclose(logged, [1.0, 1.0, 0.1, 0.01, 0.005, 0.005])
    assert final == 0.005


def test_reduce_lr_on_plateau_does_not_reduce_a_rate_already_at_min_lr(capsys):
    # float32(0.001) lies above 0.001 (an optimizer keeping its rate in float32 reads
    # it back so); float32(0.7) lies below 0.7.
    for rate, min_lr in [(float(np.float32(0.001)), 0.001), (0.7, 0.7)]:
        model = FakeModel(rate)
        reducer = callbacks.ReduceLROnPlateau(monitor="loss", patience=1, min_lr=min_lr, verbose=1)
        reducer.set_model(model)
        for epoch in range(3):
            reducer.on_epoch_end(epoch, {"loss": 1.0})
        assert model.optimizer.learning_rate == rate
    assert capsys.readouterr().out == ""


def test_reduce_lr_on_plateau_direction_for_accuracy_and_explicit_modes():
    _, final = reduce_on([0.5, 0.6, 0.7], key="val_accuracy", factor=0.5, patience=1)
    assert final == 1.0
    _, final = reduce_on([0.5, 0.6, 0.7], key="val_accuracy", factor=0.5, patience=1, mode="min")
    assert final == 0.25
    _, final = reduce_on([0.5, 0.6, 0.7], factor=0.5, patience=1, mode="max")
    assert final == 1.0


def test_reduce_lr_on_plateau_rejects_a_factor_of_one_or_more():
    with pytest.raises(ValueError, match="factor >= 1.0, got factor=1.5"):
        callbacks.ReduceLROnPlateau(factor=1.5)
    with pytest.raises(ValueError):
        callbacks.ReduceLROnPlateau(factor=1.0)


def test_reduce_lr_on_plateau_warns_when_monitor_is_missing_and_still_logs_the_rate():
    with pytest.warns(UserWarning, match="`val_loss` which is not available"):
        logged, final = reduce_on([1.0, 1.0, 1.0], key="loss", monitor="val_loss", patience=1)
    assert logged == [1.0, 1.0, 1.0] and final == 1.0


def test_reduce_lr_on_plateau_verbose_prints_the_reduction(capsys):
    reduce_on([1.0, 1.0], factor=0.5, patience=1, verbose=1)
    assert "Epoch 2: ReduceLROnPlateau reducing learning rate to 0.5." in capsys.readouterr().out


# ------------------------------------------------------------------ TerminateOnNaN


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf"), np.float32("nan")])
def test_terminate_on_nan_stops_on_a_non_finite_loss(bad, capsys):
    model = FakeModel()
    terminate = callbacks.TerminateOnNaN()
    terminate.set_model(model)
    terminate.on_train_batch_end(0, {"loss": 0.5})
    assert not model.stop_training
    terminate.on_train_batch_end(3, {"loss": bad})
    assert model.stop_training
    assert capsys.readouterr().out == f"Batch 3: Invalid loss {float(bad)}, terminating training\n"


def test_terminate_on_nan_ignores_logs_without_a_loss():
    model = FakeModel()
    terminate = callbacks.TerminateOnNaN()
    terminate.set_model(model)
    terminate.on_train_batch_end(0, None)
    terminate.on_train_batch_end(1, {"accuracy": math.nan})
    assert not model.stop_training


# ---------------------------------------------------------------------- CSVLogger


def log_epochs(logger, epoch_logs):
    logger.on_train_begin()
    for epoch, logs in enumerate(epoch_logs):
        logger.on_epoch_end(epoch, logs)
    logger.on_train_end()


def test_csv_logger_writes_a_header_then_one_row_per_epoch(tmp_path):
    path = tmp_path / "log.csv"
    logger = callbacks.CSVLogger(path)
    log_epochs(logger, [{"val_loss": 0.4, "loss": 0.5, "accuracy": 0.75}, {"loss": 0.25}])
    assert path.read_text() == (
        "epoch,accuracy,loss,val_loss\n0,0.75,0.5,0.4\n1,NA,0.25,NA\n"
    )  # fmt: skip
    assert logger.csv_file is None


def test_csv_logger_flushes_each_epoch(tmp_path):
    path = tmp_path / "log.csv"
    logger = callbacks.CSVLogger(path, separator=";")
    logger.on_train_begin()
    logger.on_epoch_end(0, {"loss": 0.5, "mae": 0.25})
    assert path.read_text() == "epoch;loss;mae\n0;0.5;0.25\n"
    logger.on_train_end()
    assert logger.csv_file is None


def test_csv_logger_overwrites_unless_appending(tmp_path):
    path = tmp_path / "log.csv"
    log_epochs(callbacks.CSVLogger(path), [{"loss": 1.0}])
    log_epochs(callbacks.CSVLogger(path), [{"loss": 2.0}])
    assert path.read_text() == "epoch,loss\n0,2.0\n"


def test_csv_logger_append_keeps_the_existing_header_and_its_columns(tmp_path):
    path = tmp_path / "log.csv"
    log_epochs(callbacks.CSVLogger(path), [{"loss": 1.0, "val_loss": 1.5}])
    log_epochs(callbacks.CSVLogger(path, append=True), [{"val_loss": 0.5, "loss": 0.25}])
    with open(path, newline="") as file:
        rows = list(csv.reader(file))
    assert rows == [["epoch", "loss", "val_loss"], ["0", "1.0", "1.5"], ["0", "0.25", "0.5"]]


def test_csv_logger_append_to_a_new_file_writes_the_header(tmp_path):
    path = tmp_path / "new.csv"
    log_epochs(callbacks.CSVLogger(path, append=True), [{"loss": 1.0}])
    assert path.read_text() == "epoch,loss\n0,1.0\n"


# ------------------------------------------------------------------ LambdaCallback


def test_lambda_callback_calls_its_functions_in_fit_order():
    calls = []
    recorder = callbacks.LambdaCallback(
        on_train_begin=lambda logs: calls.append("train_begin"),
        on_epoch_begin=lambda epoch, logs: calls.append(f"epoch_begin {epoch}"),
        on_train_batch_begin=lambda batch, logs: calls.append(f"batch_begin {batch}"),
        on_train_batch_end=lambda batch, logs: calls.append(f"batch_end {batch} {logs}"),
        on_epoch_end=lambda epoch, logs: calls.append(f"epoch_end {epoch} {logs}"),
        on_train_end=lambda logs: calls.append("train_end"),
        on_test_end=lambda logs: calls.append("test_end"),
    )
    callback_list = callbacks.CallbackList([recorder], model=FakeModel())
    callback_list.on_train_begin()
    for epoch in range(2):
        callback_list.on_epoch_begin(epoch)
        callback_list.on_train_batch_begin(0)
        callback_list.on_train_batch_end(0, {"loss": 1.0})
        callback_list.on_test_begin()
        callback_list.on_test_end()
        callback_list.on_epoch_end(epoch, {"loss": 1.0})
    callback_list.on_train_end()
    assert calls == [
        "train_begin",
        "epoch_begin 0", "batch_begin 0", "batch_end 0 {'loss': 1.0}", "test_end",
        "epoch_end 0 {'loss': 1.0}",
        "epoch_begin 1", "batch_begin 0", "batch_end 0 {'loss': 1.0}", "test_end",
        "epoch_end 1 {'loss': 1.0}",
        "train_end",
    ]  # fmt: skip


def test_lambda_callback_rejects_unknown_hooks_and_non_functions():
    with pytest.raises(TypeError, match="'on_epoch_ends' is not a callback hook"):
        callbacks.LambdaCallback(on_epoch_ends=print)
    with pytest.raises(TypeError, match="on_epoch_end must be a function"):
        callbacks.LambdaCallback(on_epoch_end=3)


# ----------------------------------------------------------- with a real `fit`

needs_fit = pytest.mark.skipif(not hasattr(minikeras.Model, "fit"), reason="no Model.fit yet")


def small_model_and_data():
    minikeras.utils.set_random_seed(0)
    model = minikeras.Sequential([minikeras.layers.Input((3,)), minikeras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    x = np.random.default_rng(0).normal(size=(32, 3)).astype("float32")
    y = x @ np.array([[1.0], [-2.0], [0.5]], dtype="float32")
    return model, x, y


@needs_fit
def test_fit_with_callbacks_logs_history_csv_and_learning_rates(tmp_path):
    model, x, y = small_model_and_data()
    path = tmp_path / "fit.csv"
    history = model.fit(
        x, y, epochs=3, batch_size=8, validation_split=0.25, verbose=0,
        callbacks=[
            callbacks.LearningRateScheduler(lambda epoch: 0.01 * (epoch + 1)),
            callbacks.CSVLogger(path),
        ],
    )  # fmt: skip
    assert model.history is history
    assert history.epoch == [0, 1, 2]
    np.testing.assert_allclose(history.history["learning_rate"], [0.01, 0.02, 0.03])
    assert set(history.history) == {"loss", "val_loss", "learning_rate"}
    with open(path, newline="") as file:
        rows = list(csv.DictReader(file))
    assert [row["epoch"] for row in rows] == ["0", "1", "2"]
    np.testing.assert_allclose([float(row["loss"]) for row in rows], history.history["loss"])


@needs_fit
def test_fit_stops_early_and_restores_the_best_weights():
    model, x, y = small_model_and_data()
    weights_per_epoch = []
    record = callbacks.LambdaCallback(
        on_epoch_end=lambda epoch, logs: weights_per_epoch.append(model.get_weights())
    )
    # A small rate for three epochs, then one so large that the loss grows.
    schedule = callbacks.LearningRateScheduler(lambda epoch: 0.05 if epoch < 3 else 5.0)
    stopper = callbacks.EarlyStopping(monitor="loss", patience=1, restore_best_weights=True)
    history = model.fit(
        x, y, epochs=10, batch_size=8, verbose=0, callbacks=[record, schedule, stopper]
    )
    assert history.epoch == [0, 1, 2, 3]
    assert (stopper.stopped_epoch, stopper.best_epoch) == (3, 2)
    assert history.history["loss"][3] > history.history["loss"][2]
    for restored, expected in zip(model.get_weights(), weights_per_epoch[2]):
        np.testing.assert_array_equal(restored, expected)
    assert not np.array_equal(weights_per_epoch[3][0], weights_per_epoch[2][0])


def test_evaluate_predict_and_validation_call_the_test_and_predict_hooks():
    import minikeras as mk
    from minikeras import layers

    calls = []

    class Recorder(callbacks.Callback):
        def on_test_begin(self, logs=None):
            calls.append("test_begin")

        def on_test_batch_end(self, batch, logs=None):
            calls.append(f"test_batch_{batch}:{sorted(logs)}")

        def on_test_end(self, logs=None):
            calls.append(f"test_end:{sorted(logs)}")

        def on_predict_begin(self, logs=None):
            calls.append("predict_begin")

        def on_predict_batch_end(self, batch, logs=None):
            calls.append(f"predict_batch_{batch}:{logs['outputs'].shape}")

        def on_predict_end(self, logs=None):
            calls.append("predict_end")

    model = mk.Sequential([mk.Input((2,)), layers.Dense(1)])
    model.compile("sgd", "mse")
    x, y = np.ones((6, 2), "float32"), np.ones((6, 1), "float32")
    model.evaluate(x, y, batch_size=4, verbose=0, callbacks=[Recorder()])
    assert calls == ["test_begin", "test_batch_0:['loss']", "test_batch_1:['loss']",
                     "test_end:['loss']"]  # fmt: skip
    calls.clear()
    model.predict(x, batch_size=4, callbacks=[Recorder()])
    assert calls == ["predict_begin", "predict_batch_0:(4, 1)", "predict_batch_1:(2, 1)",
                     "predict_end"]  # fmt: skip
    calls.clear()
    model.fit(x, y, epochs=1, batch_size=6, validation_data=(x, y), verbose=0,
              callbacks=[Recorder()])  # fmt: skip
    # As in Keras 3, the test hooks see the evaluation's own names; the epoch logs get val_.
    assert calls == ["test_begin", "test_batch_0:['loss']", "test_end:['loss']"]


# ------------------------------------------------ the direction of a metric

_ARGUMENTS = {  # what each metric needs to be made
    "IoU": dict(num_classes=2, target_class_ids=[0]),
    "MeanIoU": dict(num_classes=2),
    "OneHotIoU": dict(num_classes=2, target_class_ids=[0]),
    "OneHotMeanIoU": dict(num_classes=2),
    "SensitivityAtSpecificity": dict(specificity=0.5),
    "SpecificityAtSensitivity": dict(sensitivity=0.5),
    "PrecisionAtRecall": dict(recall=0.5),
    "RecallAtPrecision": dict(precision=0.5),
}
_DIRECTED = [
    "Accuracy", "BinaryAccuracy", "CategoricalAccuracy", "SparseCategoricalAccuracy",
    "TopKCategoricalAccuracy", "SparseTopKCategoricalAccuracy", "AUC", "Precision", "Recall",
    "FBetaScore", "F1Score", "IoU", "MeanIoU", "BinaryIoU", "OneHotIoU", "OneHotMeanIoU",
    "R2Score", "CosineSimilarity", "SensitivityAtSpecificity", "SpecificityAtSensitivity",
    "PrecisionAtRecall", "RecallAtPrecision", "Hinge", "SquaredHinge", "CategoricalHinge",
    "MeanSquaredError", "MeanAbsoluteError", "RootMeanSquaredError",
    "MeanAbsolutePercentageError", "MeanSquaredLogarithmicError", "LogCoshError", "Poisson",
    "KLDivergence", "BinaryCrossentropy", "CategoricalCrossentropy",
    "SparseCategoricalCrossentropy",
]  # fmt: skip


def _made(module, name):
    return getattr(module.metrics, name)(**_ARGUMENTS.get(name, {}))


@pytest.mark.parametrize("name", _DIRECTED)
def test_callbacks_in_auto_mode_know_each_metrics_direction(name):
    # Keras 3's metrics declare whether higher is better; callbacks in mode="auto"
    # read it (binary_io_u, r2_score, sensitivity_at_specificity... were refused).
    metric = _made(minikeras, name)
    expected = {"up": "max", "down": "min"}[metric._direction]
    model = types.SimpleNamespace(metrics=[minikeras.metrics.Mean(name="loss"), metric])
    stopper = callbacks.EarlyStopping(monitor="val_" + metric.name)
    stopper.set_model(model)
    assert stopper._resolve_direction() == expected
    checkpoint = callbacks.ModelCheckpoint("m.keras", monitor=metric.name, save_best_only=True)
    checkpoint.set_model(model)
    checkpoint._is_improvement(0.5)
    assert checkpoint._direction == expected
    keras = pytest.importorskip("keras")
    assert _made(keras, name)._direction == metric._direction


def test_early_stopping_follows_binary_iou_in_a_fit():
    model = minikeras.Sequential([minikeras.Input((2,)), minikeras.layers.Dense(1, "sigmoid")])
    model.compile("sgd", "binary_crossentropy", metrics=[minikeras.metrics.BinaryIoU()])
    x, y = np.ones((4, 2), "float32"), np.ones((4, 1), "float32")
    stopper = callbacks.EarlyStopping(monitor="val_binary_io_u")
    model.fit(x, y, validation_data=(x, y), epochs=2, verbose=0, callbacks=[stopper])
    assert stopper._direction == "max"


def test_the_mean_of_a_loss_function_is_minimized():
    metric = minikeras.metrics.MeanMetricWrapper(minikeras.losses.mean_squared_error)
    assert metric._direction == "down"
    assert minikeras.metrics.Mean()._direction is None
