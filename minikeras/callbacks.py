"""Callbacks: code that `fit` runs at fixed points of training.

A callback subclasses `Callback` and overrides the hooks it needs. `fit`
wraps the list it is given in a `CallbackList`, which calls each hook on
every callback in order and appends a `History` last, so the history records
keys the other callbacks add to the logs (such as `"learning_rate"`).

What a callback may rely on (the contract with `minikeras.trainer`):
- `self.model`: the model being trained, with `stop_training` (set it to
  True to stop after the current batch or epoch), `optimizer.learning_rate`
  (a settable float), `get_weights()`, `set_weights(list)` and `name`;
- `self.params`: a dict with `epochs`, `steps` and `verbose`;
- `logs`: a dict of Python floats. Epoch logs hold the epoch's averages
  (`{"loss": 0.3, "val_loss": 0.4, ...}`); batch logs hold running averages.
  Epoch logs are shared: a key a callback adds is seen by the callbacks after it.

Names, arguments and defaults are Keras 3's. `ModelCheckpoint` saves with
`Model.save` / `save_weights` (see `minikeras.saving`); progress bars are
drawn by the trainer.
"""

import csv
import inspect
import math
import numbers
import os
import warnings

import numpy as np

# Names of the hooks, in the order of Keras's `Callback`; LambdaCallback accepts these.
_HOOKS = (
    "on_train_begin", "on_train_end", "on_epoch_begin", "on_epoch_end",
    "on_train_batch_begin", "on_train_batch_end", "on_test_begin", "on_test_end",
    "on_test_batch_begin", "on_test_batch_end", "on_predict_begin", "on_predict_end",
    "on_predict_batch_begin", "on_predict_batch_end", "on_batch_begin", "on_batch_end",
)  # fmt: skip


class Callback:
    """Base class of callbacks: every hook is a no-op until overridden.

    `fit` calls the `on_train_*`, `on_epoch_*` and `on_batch_*` hooks, and the
    `on_test_*` hooks while it validates; `evaluate` calls the `on_test_*`
    hooks and `predict` the `on_predict_*` hooks, as in Keras.

    Attributes:
        model: the model being trained, set by `set_model`.
        params: a dict with `epochs`, `steps` and `verbose`, set by `set_params`.

    Example:
        >>> class CountEpochs(Callback):
        ...     def on_train_begin(self, logs=None):
        ...         self.count = 0
        ...     def on_epoch_end(self, epoch, logs=None):
        ...         self.count += 1
        >>> counter = CountEpochs()
        >>> counter.on_train_begin(); counter.on_epoch_end(0); counter.count
        1
    """

    def __init__(self):
        self.model = None
        self.params = {}

    def set_model(self, model):
        """Sets `self.model`, the model being trained; `fit` calls it first.

        Args:
            model: the model.

        Example:
            >>> from minikeras import Sequential, layers
            >>> model = Sequential([layers.Dense(1)]); model.compile("sgd", "mse")
            >>> callback = Callback()
            >>> _ = model.fit(np.ones((4, 2)), np.ones((4, 1)), verbose=0, callbacks=[callback])
            >>> callback.model is model
            True
        """
        self.model = model

    def set_params(self, params):
        """Sets `self.params`; `fit` calls it before training.

        Args:
            params: a dict with `epochs`, `steps` (batches per epoch) and `verbose`.

        Example:
            >>> from minikeras import Sequential, layers
            >>> model = Sequential([layers.Dense(1)]); model.compile("sgd", "mse")
            >>> callback = Callback()
            >>> _ = model.fit(np.ones((4, 2)), np.ones((4, 1)), epochs=2, verbose=0,
            ...               callbacks=[callback])
            >>> callback.params
            {'epochs': 2, 'steps': 1, 'verbose': 0}
        """
        self.params = params

    def on_train_begin(self, logs=None):
        """Called once at the start of `fit`, before the first epoch.

        Args:
            logs: None (`fit` passes no logs here).

        Example:
            >>> from minikeras import Sequential, layers
            >>> model = Sequential([layers.Dense(1)]); model.compile("sgd", "mse")
            >>> class Announce(Callback):
            ...     def on_train_begin(self, logs=None):
            ...         print("training for", self.params["epochs"], "epochs")
            >>> _ = model.fit(np.ones((4, 2)), np.ones((4, 1)), epochs=3, verbose=0,
            ...               callbacks=[Announce()])
            training for 3 epochs
        """

    def on_train_end(self, logs=None):
        """Called once at the end of `fit`, also when training stopped early.

        Args:
            logs: the last epoch's logs, or None if no epoch ran.

        Example:
            >>> from minikeras import Sequential, layers
            >>> model = Sequential([layers.Dense(1)]); model.compile("sgd", "mse")
            >>> class Done(Callback):
            ...     def on_train_end(self, logs=None):
            ...         print("done:", sorted(logs))
            >>> _ = model.fit(np.ones((4, 2)), np.ones((4, 1)), verbose=0, callbacks=[Done()])
            done: ['loss']
        """

    def on_epoch_begin(self, epoch, logs=None):
        """Called at the start of each epoch of `fit`.

        Args:
            epoch: the epoch's index, counted from 0.
            logs: None (`fit` passes no logs here).

        Example:
            >>> from minikeras import Sequential, layers
            >>> model = Sequential([layers.Dense(1)]); model.compile("sgd", "mse")
            >>> class Epochs(Callback):
            ...     def on_epoch_begin(self, epoch, logs=None):
            ...         print("epoch", epoch)
            >>> _ = model.fit(np.ones((4, 2)), np.ones((4, 1)), epochs=2, verbose=0,
            ...               callbacks=[Epochs()])
            epoch 0
            epoch 1
        """

    def on_epoch_end(self, epoch, logs=None):
        """Called at the end of each epoch of `fit`, after validation.

        Args:
            epoch: the epoch's index, counted from 0.
            logs: a dict of floats: the epoch's mean loss and metrics, and
                with validation data the same prefixed `val_`. A key a callback
                adds is seen by the callbacks after it, and by `History`.

        Example:
            >>> from minikeras import Sequential, layers
            >>> model = Sequential([layers.Dense(1)]); model.compile("sgd", "mse")
            >>> class Keys(Callback):
            ...     def on_epoch_end(self, epoch, logs=None):
            ...         print(epoch, sorted(logs))
            >>> _ = model.fit(np.ones((4, 2)), np.ones((4, 1)), validation_split=0.5,
            ...               verbose=0, callbacks=[Keys()])
            0 ['loss', 'val_loss']
        """

    def on_train_batch_begin(self, batch, logs=None):
        """Called before each training step; by default it calls `on_batch_begin`.

        Args:
            batch: the step's index, counted from 0 in each epoch.
            logs: None (`fit` passes no logs here).

        Example:
            >>> from minikeras import Sequential, layers
            >>> model = Sequential([layers.Dense(1)]); model.compile("sgd", "mse")
            >>> class Steps(Callback):
            ...     def on_train_batch_begin(self, batch, logs=None):
            ...         print("step", batch)
            >>> _ = model.fit(np.ones((10, 2)), np.ones((10, 1)), batch_size=4, verbose=0,
            ...               callbacks=[Steps()])
            step 0
            step 1
            step 2
        """
        self.on_batch_begin(batch, logs=logs)

    def on_train_batch_end(self, batch, logs=None):
        """Called after each training step; by default it calls `on_batch_end`.

        Args:
            batch: the step's index, counted from 0 in each epoch.
            logs: a dict of floats: the running means of the loss and metrics
                over the epoch's steps so far.

        Example:
            >>> from minikeras import Sequential, layers
            >>> model = Sequential([layers.Dense(1)]); model.compile("sgd", "mse")
            >>> class Losses(Callback):
            ...     def on_train_batch_end(self, batch, logs=None):
            ...         print(batch, sorted(logs))
            >>> _ = model.fit(np.ones((8, 2)), np.ones((8, 1)), batch_size=4, verbose=0,
            ...               callbacks=[Losses()])
            0 ['loss']
            1 ['loss']
        """
        self.on_batch_end(batch, logs=logs)

    def on_batch_begin(self, batch, logs=None):
        """Keras's older name for `on_train_batch_begin`, which calls it.

        Args:
            batch: the step's index, counted from 0 in each epoch.
            logs: None (`fit` passes no logs here).

        Example:
            >>> from minikeras import Sequential, layers
            >>> model = Sequential([layers.Dense(1)]); model.compile("sgd", "mse")
            >>> class Steps(Callback):
            ...     def on_batch_begin(self, batch, logs=None):
            ...         print("step", batch)
            >>> _ = model.fit(np.ones((4, 2)), np.ones((4, 1)), verbose=0, callbacks=[Steps()])
            step 0
        """

    def on_batch_end(self, batch, logs=None):
        """Keras's older name for `on_train_batch_end`, which calls it.

        Args:
            batch: the step's index, counted from 0 in each epoch.
            logs: the running means of the loss and metrics, as for `on_train_batch_end`.

        Example:
            >>> from minikeras import Sequential, layers
            >>> model = Sequential([layers.Dense(1)]); model.compile("sgd", "mse")
            >>> class Steps(Callback):
            ...     def on_batch_end(self, batch, logs=None):
            ...         print("step", batch, sorted(logs))
            >>> _ = model.fit(np.ones((4, 2)), np.ones((4, 1)), verbose=0, callbacks=[Steps()])
            step 0 ['loss']
        """

    def on_test_begin(self, logs=None):
        """Called when an evaluation starts (`evaluate`, or validation in `fit`).

        Args:
            logs: a dict of floats, or None.

        Example:
            >>> class Log(Callback):
            ...     def on_test_begin(self, logs=None):
            ...         print("on_test_begin")
            >>> CallbackList([Log()]).on_test_begin()
            on_test_begin
        """

    def on_test_end(self, logs=None):
        """Called at the end of an evaluation, with its logs.

        Args:
            logs: a dict of floats, or None.

        Example:
            >>> class Log(Callback):
            ...     def on_test_end(self, logs=None):
            ...         print("on_test_end")
            >>> CallbackList([Log()]).on_test_end()
            on_test_end
        """

    def on_test_batch_begin(self, batch, logs=None):
        """Called before each evaluation batch.

        Args:
            batch: the batch's index, counted from 0.
            logs: a dict of floats, or None.

        Example:
            >>> class Log(Callback):
            ...     def on_test_batch_begin(self, batch, logs=None):
            ...         print("on_test_batch_begin", batch)
            >>> CallbackList([Log()]).on_test_batch_begin(0)
            on_test_batch_begin 0
        """

    def on_test_batch_end(self, batch, logs=None):
        """Called after each evaluation batch, with the running logs.

        Args:
            batch: the batch's index, counted from 0.
            logs: a dict of floats, or None.

        Example:
            >>> class Log(Callback):
            ...     def on_test_batch_end(self, batch, logs=None):
            ...         print("on_test_batch_end", batch)
            >>> CallbackList([Log()]).on_test_batch_end(0)
            on_test_batch_end 0
        """

    def on_predict_begin(self, logs=None):
        """Called when `predict` starts.

        Args:
            logs: a dict of floats, or None.

        Example:
            >>> class Log(Callback):
            ...     def on_predict_begin(self, logs=None):
            ...         print("on_predict_begin")
            >>> CallbackList([Log()]).on_predict_begin()
            on_predict_begin
        """

    def on_predict_end(self, logs=None):
        """Called when `predict` ends.

        Args:
            logs: a dict of floats, or None.

        Example:
            >>> class Log(Callback):
            ...     def on_predict_end(self, logs=None):
            ...         print("on_predict_end")
            >>> CallbackList([Log()]).on_predict_end()
            on_predict_end
        """

    def on_predict_batch_begin(self, batch, logs=None):
        """Called before each `predict` batch.

        Args:
            batch: the batch's index, counted from 0.
            logs: a dict of floats, or None.

        Example:
            >>> class Log(Callback):
            ...     def on_predict_batch_begin(self, batch, logs=None):
            ...         print("on_predict_batch_begin", batch)
            >>> CallbackList([Log()]).on_predict_batch_begin(0)
            on_predict_batch_begin 0
        """

    def on_predict_batch_end(self, batch, logs=None):
        """Called after each `predict` batch; `logs["outputs"]` holds its outputs.

        Args:
            batch: the batch's index, counted from 0.
            logs: a dict of floats, or None.

        Example:
            >>> class Log(Callback):
            ...     def on_predict_batch_end(self, batch, logs=None):
            ...         print("on_predict_batch_end", batch)
            >>> CallbackList([Log()]).on_predict_batch_end(0)
            on_predict_batch_end 0
        """


class CallbackList(Callback):
    """Calls every hook on each of its callbacks, in order.

    With `add_history=True` a `History` is appended, unless one was given; it
    stays last (`append` inserts before it), so it records the keys other
    callbacks add to the epoch logs.

    Args:
        callbacks: a list of `Callback`s, or None.
        model: the model to give every callback, or None.
        add_history: whether to add a `History` if none is present.
        **params: `epochs`, `steps`, `verbose`, given to every callback.

    Raises:
        TypeError: if an entry is not a `Callback`.

    Example:
        >>> callbacks = CallbackList([], add_history=True, epochs=2)
        >>> callbacks.on_train_begin()
        >>> callbacks.on_epoch_end(0, {"loss": 0.5}); callbacks.on_epoch_end(1, {"loss": 0.25})
        >>> callbacks.history.history, callbacks.history.params
        ({'loss': [0.5, 0.25]}, {'epochs': 2})
    """

    def __init__(self, callbacks=None, model=None, add_history=False, **params):
        super().__init__()
        self.callbacks = []
        self._history = None
        self._history_added = False
        for callback in callbacks or []:
            self.append(callback)
        if add_history and self._history is None:
            self._history = History()
            self._history_added = True
            self.callbacks.append(self._history)
        if model is not None:
            self.set_model(model)
        if params:
            self.set_params(params)

    @property
    def history(self):
        """The `History` among the callbacks, or None."""
        return self._history

    def append(self, callback):
        """Adds a callback (before a `History` this list added itself).

        Args:
            callback: a `Callback`.

        Returns:
            None.

        Raises:
            TypeError: if `callback` is not a `Callback`.

        Example:
            >>> callbacks = CallbackList(add_history=True)
            >>> callbacks.append(TerminateOnNaN())
            >>> [type(c).__name__ for c in callbacks.callbacks]
            ['TerminateOnNaN', 'History']
        """
        if not isinstance(callback, Callback):
            raise TypeError(
                f"CallbackList: expected a minikeras.callbacks.Callback, got {callback!r} "
                f"of type {type(callback).__name__}"
            )
        if isinstance(callback, History) and self._history is None:
            self._history = callback
        if self._history_added:
            self.callbacks.insert(len(self.callbacks) - 1, callback)
        else:
            self.callbacks.append(callback)
        if self.model is not None:
            callback.set_model(self.model)
        if self.params:
            callback.set_params(self.params)

    def set_model(self, model):
        """Gives `model` to every callback and sets `model.history` (as Keras does)."""
        super().set_model(model)
        if self._history is not None:
            model.history = self._history
        for callback in self.callbacks:
            callback.set_model(model)

    def set_params(self, params):
        """Gives `params` to every callback."""
        super().set_params(params)
        for callback in self.callbacks:
            callback.set_params(params)

    def _call(self, hook, *args):
        for callback in self.callbacks:
            getattr(callback, hook)(*args)

    def on_train_begin(self, logs=None):
        self._call("on_train_begin", logs)

    def on_train_end(self, logs=None):
        self._call("on_train_end", logs)

    def on_epoch_begin(self, epoch, logs=None):
        self._call("on_epoch_begin", epoch, logs)

    def on_epoch_end(self, epoch, logs=None):
        self._call("on_epoch_end", epoch, logs)

    def on_train_batch_begin(self, batch, logs=None):
        self._call("on_train_batch_begin", batch, logs)

    def on_train_batch_end(self, batch, logs=None):
        self._call("on_train_batch_end", batch, logs)

    def on_test_begin(self, logs=None):
        self._call("on_test_begin", logs)

    def on_test_end(self, logs=None):
        self._call("on_test_end", logs)

    def on_test_batch_begin(self, batch, logs=None):
        self._call("on_test_batch_begin", batch, logs)

    def on_test_batch_end(self, batch, logs=None):
        self._call("on_test_batch_end", batch, logs)

    def on_predict_begin(self, logs=None):
        self._call("on_predict_begin", logs)

    def on_predict_end(self, logs=None):
        self._call("on_predict_end", logs)

    def on_predict_batch_begin(self, batch, logs=None):
        self._call("on_predict_batch_begin", batch, logs)

    def on_predict_batch_end(self, batch, logs=None):
        self._call("on_predict_batch_end", batch, logs)


class History(Callback):
    """Records the epoch logs; `fit` returns it and sets it as `model.history`.

    Attributes:
        history: a dict mapping each log name to the list of its values.
        epoch: the list of epoch indices recorded.

    Both are emptied at the start of training.

    Example:
        >>> history = History()
        >>> history.on_train_begin()
        >>> history.on_epoch_end(0, {"loss": 0.5, "accuracy": 0.75})
        >>> history.history, history.epoch
        ({'loss': [0.5], 'accuracy': [0.75]}, [0])
    """

    def __init__(self):
        super().__init__()
        self.history = {}
        self.epoch = []

    def on_train_begin(self, logs=None):
        self.history = {}
        self.epoch = []
        if self.model is not None:
            self.model.history = self

    def on_epoch_end(self, epoch, logs=None):
        self.epoch.append(epoch)
        for key, value in (logs or {}).items():
            self.history.setdefault(key, []).append(value)


def _metric_direction(monitor, model):
    """Returns "min" or "max" for a monitored quantity, or None when it cannot be told.

    Keras 3's rule (a loss is minimized; a metric of the model that declares
    `_direction` "up"/"down" says so), then the names of common metrics.
    """
    name = monitor.removeprefix("val_")
    if name == "loss":
        return "min"
    metrics = list(getattr(model, "metrics", None) or [])
    for metric in metrics:
        metrics.extend(getattr(metric, "metrics", None) or [])  # containers of metrics
        direction = getattr(metric, "_direction", None)
        if getattr(metric, "name", None) == name and direction in ("up", "down"):
            return "max" if direction == "up" else "min"
    if any(hint in name for hint in ("acc", "auc", "precision", "recall", "f1")):
        return "max"
    lower_is_better = ("loss", "error", "mse", "mae", "mape", "msle", "crossentropy", "hinge")
    if any(hint in name for hint in (*lower_is_better, "divergence", "poisson", "logcosh")):
        return "min"
    return None


def _check_mode(owner, mode):
    if mode not in ("auto", "min", "max"):
        warnings.warn(f"{owner} mode {mode!r} is unknown, fallback to auto mode.", stacklevel=3)
        return "auto"
    return mode


def _monitored_value(owner, monitor, logs):
    value = (logs or {}).get(monitor)
    if value is None:
        warnings.warn(
            f"{owner} conditioned on metric `{monitor}` which is not available. "
            f"Available metrics are: {','.join(logs or {})}",
            stacklevel=3,
        )
    return value


class EarlyStopping(Callback):
    """Stops training when a monitored quantity has stopped improving.

    At each epoch end from `start_from_epoch` on, `current = logs[monitor]` is
    an improvement when, in "min" mode, `current + min_delta < best` (in
    "max" mode `current - min_delta > best`); the first value always is.
    `wait` counts the epochs since the last improvement that also beat
    `baseline`; once `wait >= patience` (never at epoch 0) `stopped_epoch` is
    set and `model.stop_training` turned on. With `restore_best_weights` the
    weights of `best_epoch` are put back at the end of training, whether it
    stopped early or ran all its epochs (Keras 3).

    Args:
        monitor: the log key to watch.
        min_delta: the smallest change that counts as an improvement.
        patience: epochs without improvement before stopping.
        verbose: 1 prints when stopping and restoring.
        mode: "min", "max", or "auto": "min" for a loss; a model metric's
            declared direction; "max" for names holding "acc", "auc",
            "precision", "recall" or "f1"; "min" for error-like names.
        baseline: a value to beat; until a value beats it, improvements over
            earlier epochs do not reset `wait`.
        restore_best_weights: put back the weights of the best epoch at the end.
        start_from_epoch: epochs to wait before watching at all (warm-up).

    Raises:
        ValueError: at the first epoch end, if mode "auto" cannot tell the direction.

    Example:
        >>> class FakeModel:
        ...     stop_training = False
        >>> stopper = EarlyStopping(monitor="loss", patience=1)
        >>> stopper.set_model(FakeModel()); stopper.on_train_begin()
        >>> for epoch, loss in enumerate([0.5, 0.4, 0.45, 0.41]):
        ...     stopper.on_epoch_end(epoch, {"loss": loss})
        ...     if stopper.model.stop_training:
        ...         break
        >>> stopper.stopped_epoch, stopper.best, stopper.best_epoch
        (2, 0.4, 1)
    """

    def __init__(
        self,
        monitor="val_loss",
        min_delta=0,
        patience=0,
        verbose=0,
        mode="auto",
        baseline=None,
        restore_best_weights=False,
        start_from_epoch=0,
    ):
        super().__init__()
        self.monitor = monitor
        self.min_delta = abs(min_delta)
        self.patience = patience
        self.verbose = verbose
        self.mode = _check_mode("EarlyStopping", mode)
        self.baseline = baseline
        self.restore_best_weights = restore_best_weights
        self.start_from_epoch = start_from_epoch
        self._direction = None
        self.on_train_begin()

    def on_train_begin(self, logs=None):
        # Reset, so one instance can serve several `fit` calls.
        self.wait = 0
        self.stopped_epoch = 0
        self.best = None
        self.best_epoch = 0
        self.best_weights = None

    def _resolve_direction(self):
        direction = self.mode
        if direction == "auto":
            direction = _metric_direction(self.monitor, self.model)
        if direction is None:
            raise ValueError(
                f"EarlyStopping received monitor={self.monitor!r} but cannot tell whether it "
                "should be maximized or minimized. Pass mode='max' to stop on the highest "
                "value, or mode='min' to stop on the lowest."
            )
        return direction

    def _is_improvement(self, value, reference):
        if reference is None:
            return True
        if self._direction == "min":
            return value + self.min_delta < reference
        return value - self.min_delta > reference

    def on_epoch_end(self, epoch, logs=None):
        if self._direction is None:
            self._direction = self._resolve_direction()
        current = _monitored_value("Early stopping", self.monitor, logs)
        if current is None or epoch < self.start_from_epoch:
            return
        if self.restore_best_weights and self.best_weights is None:
            # Nothing stored yet, so the current weights are the best so far.
            self.best_weights = self.model.get_weights()
            self.best_epoch = epoch
        self.wait += 1
        if self._is_improvement(current, self.best):
            self.best = current
            self.best_epoch = epoch
            if self.restore_best_weights:
                self.best_weights = self.model.get_weights()
            if self.baseline is None or self._is_improvement(current, self.baseline):
                self.wait = 0
            return
        if self.wait >= self.patience and epoch > 0:
            self.stopped_epoch = epoch
            self.model.stop_training = True

    def on_train_end(self, logs=None):
        if self.stopped_epoch > 0 and self.verbose > 0:
            print(f"Epoch {self.stopped_epoch + 1}: early stopping")
        if self.restore_best_weights and self.best_weights is not None:
            if self.verbose > 0:
                print(
                    f"Restoring model weights from the end of the best epoch {self.best_epoch + 1}."
                )
            self.model.set_weights(self.best_weights)


def _learning_rate(owner, model):
    optimizer = getattr(model, "optimizer", None)
    if optimizer is None or not hasattr(optimizer, "learning_rate"):
        raise ValueError(
            f"{owner}: model '{getattr(model, 'name', model)}' needs an optimizer with a "
            "`learning_rate`; compile the model first"
        )
    return float(optimizer.learning_rate)


def _takes_learning_rate(schedule):
    try:
        inspect.signature(schedule).bind(0, 0.1)
    except TypeError:
        return False
    except ValueError:  # no signature to inspect (some builtins): assume Keras's two arguments
        return True
    return True


class LearningRateScheduler(Callback):
    """Sets the learning rate at the start of each epoch from a schedule.

    At epoch begin: `model.optimizer.learning_rate = schedule(epoch, lr)`,
    with `lr` the current rate, or `schedule(epoch)` for a function of one
    argument. At epoch end the rate is added to the logs as "learning_rate".

    Args:
        schedule: a function `(epoch, lr) -> float` or `(epoch) -> float`,
            with `epoch` counted from 0.
        verbose: 1 prints each new rate.

    Raises:
        ValueError: at epoch begin, if the optimizer has no `learning_rate`
            or the schedule returns something other than a real number.

    Example:
        >>> class FakeOptimizer:
        ...     learning_rate = 0.1
        >>> class FakeModel:
        ...     optimizer = FakeOptimizer()
        >>> scheduler = LearningRateScheduler(lambda epoch, lr: lr * 0.5)
        >>> scheduler.set_model(FakeModel())
        >>> scheduler.on_epoch_begin(0); scheduler.on_epoch_begin(1)
        >>> FakeModel.optimizer.learning_rate
        0.025
    """

    def __init__(self, schedule, verbose=0):
        super().__init__()
        if not callable(schedule):
            raise TypeError(f"LearningRateScheduler: schedule must be a function, got {schedule!r}")
        self.schedule = schedule
        self.verbose = verbose
        self._takes_learning_rate = _takes_learning_rate(schedule)

    def on_epoch_begin(self, epoch, logs=None):
        learning_rate = _learning_rate("LearningRateScheduler", self.model)
        if self._takes_learning_rate:
            learning_rate = self.schedule(epoch, learning_rate)
        else:
            learning_rate = self.schedule(epoch)
        if isinstance(learning_rate, bool) or not isinstance(learning_rate, numbers.Real):
            raise ValueError(
                f"LearningRateScheduler: the schedule should return a float learning rate, "
                f"got {learning_rate!r} of type {type(learning_rate).__name__} at epoch {epoch}"
            )
        self.model.optimizer.learning_rate = float(learning_rate)
        if self.verbose > 0:
            print(
                f"Epoch {epoch + 1}: LearningRateScheduler setting learning rate to "
                f"{float(learning_rate)}."
            )

    def on_epoch_end(self, epoch, logs=None):
        if logs is not None:
            logs["learning_rate"] = _learning_rate("LearningRateScheduler", self.model)


class ReduceLROnPlateau(Callback):
    """Multiplies the learning rate by `factor` when a quantity stops improving.

    At each epoch end: the current rate is logged as "learning_rate". During
    `cooldown` epochs after a reduction `wait` stays 0. Otherwise a value
    better than `best` by more than `min_delta` resets `wait`; else `wait`
    grows, and at `patience` the rate becomes `max(lr * factor, min_lr)`
    (unless it is at `min_lr` already) and the cooldown starts.

    Args:
        monitor: the log key to watch.
        factor: the multiplier, below 1.
        patience: epochs without improvement before a reduction.
        verbose: 1 prints each reduction.
        mode: "min", "max" or "auto" (as `EarlyStopping`, but names it cannot
            tell are minimized, as Keras does).
        min_delta: the smallest change that counts as an improvement.
        cooldown: epochs to wait after a reduction before counting again.
        min_lr: the lowest learning rate.

    Raises:
        ValueError: if `factor >= 1`.

    Example:
        >>> class FakeOptimizer:
        ...     learning_rate = 0.1
        >>> class FakeModel:
        ...     optimizer = FakeOptimizer()
        >>> reducer = ReduceLROnPlateau(monitor="loss", factor=0.5, patience=1)
        >>> reducer.set_model(FakeModel()); reducer.on_train_begin()
        >>> for epoch, loss in enumerate([1.0, 1.0, 0.5, 0.6]):
        ...     reducer.on_epoch_end(epoch, {"loss": loss})
        >>> FakeModel.optimizer.learning_rate
        0.025
    """

    def __init__(
        self,
        monitor="val_loss",
        factor=0.1,
        patience=10,
        verbose=0,
        mode="auto",
        min_delta=1e-4,
        cooldown=0,
        min_lr=0.0,
    ):
        super().__init__()
        if factor >= 1.0:
            raise ValueError(
                f"ReduceLROnPlateau does not support a factor >= 1.0, got factor={factor}"
            )
        self.monitor = monitor
        self.factor = factor
        self.patience = patience
        self.verbose = verbose
        self.mode = _check_mode("ReduceLROnPlateau", mode)
        self.min_delta = min_delta
        self.cooldown = cooldown
        self.min_lr = min_lr
        self._reset()

    def _reset(self):
        self._direction = self.mode if self.mode != "auto" else None
        self.best = None
        self.wait = 0
        self.cooldown_counter = 0

    def on_train_begin(self, logs=None):
        self._reset()

    def in_cooldown(self):
        """Whether a reduction happened fewer than `cooldown` epochs ago.

        Returns:
            True during the `cooldown` epochs after a reduction.

        Example:
            >>> class FakeOptimizer:
            ...     learning_rate = 0.1
            >>> class FakeModel:
            ...     optimizer = FakeOptimizer()
            >>> reducer = ReduceLROnPlateau(monitor="loss", patience=1, cooldown=2)
            >>> reducer.set_model(FakeModel()); reducer.on_train_begin()
            >>> reducer.on_epoch_end(0, {"loss": 1.0}); reducer.in_cooldown()
            False
            >>> reducer.on_epoch_end(1, {"loss": 1.0}); reducer.in_cooldown()
            True
        """
        return self.cooldown_counter > 0

    def _is_improvement(self, value):
        if self.best is None:
            return True
        if self._direction == "min":
            return value < self.best - self.min_delta
        return value > self.best + self.min_delta

    def on_epoch_end(self, epoch, logs=None):
        if self._direction is None:
            self._direction = _metric_direction(self.monitor, self.model) or "min"
        logs = {} if logs is None else logs
        logs["learning_rate"] = _learning_rate("ReduceLROnPlateau", self.model)
        current = _monitored_value("Learning rate reduction", self.monitor, logs)
        if current is None:
            return
        if self.in_cooldown():
            self.cooldown_counter -= 1
            self.wait = 0
        if self._is_improvement(current):
            self.best = current
            self.wait = 0
            return
        if self.in_cooldown():
            return
        self.wait += 1
        if self.wait < self.patience:
            return
        old_lr = logs["learning_rate"]
        new_lr = max(old_lr * self.factor, self.min_lr)
        # float32 compare as Keras: an optimizer keeping the rate in float32 reads it
        # back a hair above min_lr, which must not count as room to reduce.
        if old_lr > np.float32(self.min_lr) and new_lr < old_lr:
            self.model.optimizer.learning_rate = new_lr
            if self.verbose > 0:
                print(f"Epoch {epoch + 1}: ReduceLROnPlateau reducing learning rate to {new_lr}.")
            self.cooldown_counter = self.cooldown
            self.wait = 0


class TerminateOnNaN(Callback):
    """Stops training as soon as a batch's loss is NaN or infinite.

    Prints which batch it was and sets `model.stop_training`, which ends the
    epoch after that batch and the training after that epoch.

    Example:
        >>> class FakeModel:
        ...     stop_training = False
        >>> model = FakeModel(); terminate = TerminateOnNaN(); terminate.set_model(model)
        >>> terminate.on_train_batch_end(7, {"loss": float("nan")})
        Batch 7: Invalid loss nan, terminating training
        >>> model.stop_training
        True
    """

    def on_train_batch_end(self, batch, logs=None):
        loss = (logs or {}).get("loss")
        if loss is not None and not math.isfinite(float(loss)):
            print(f"Batch {batch}: Invalid loss {float(loss)}, terminating training")
            self.model.stop_training = True


class CSVLogger(Callback):
    """Writes the logs of each epoch as a row of a CSV file.

    Columns: "epoch", then the sorted keys of the first epoch's logs; a key
    missing later is written as "NA". The file is flushed each epoch and
    closed at the end of training.

    Args:
        filename: the path of the CSV file.
        separator: the field separator.
        append: add to an existing file (its header, if any, is kept and its
            columns are used) instead of overwriting it.

    Example:
        >>> import tempfile
        >>> from pathlib import Path
        >>> path = Path(tempfile.mkdtemp()) / "log.csv"
        >>> logger = CSVLogger(path)
        >>> logger.on_train_begin()
        >>> logger.on_epoch_end(0, {"loss": 0.5, "accuracy": 0.75}); logger.on_train_end()
        >>> print(path.read_text(), end="")
        epoch,accuracy,loss
        0,0.75,0.5
    """

    def __init__(self, filename, separator=",", append=False):
        super().__init__()
        self.filename = os.fspath(filename)
        self.sep = separator
        self.append = append
        self.keys = None
        self.csv_file = None
        self._writer = None
        self._write_header = True

    def on_train_begin(self, logs=None):
        self.keys = None
        self._write_header = True
        if self.append and os.path.exists(self.filename):
            with open(self.filename, newline="") as existing:
                header = next(csv.reader(existing, delimiter=self.sep), None)
            if header:
                self.keys = [key for key in header if key != "epoch"]
                self._write_header = False
        self.csv_file = open(self.filename, "a" if self.append else "w", newline="")  # noqa: SIM115
        self._writer = csv.writer(self.csv_file, delimiter=self.sep, lineterminator="\n")

    def on_epoch_end(self, epoch, logs=None):
        logs = logs or {}
        if self.keys is None:
            self.keys = sorted(logs)
        if self._write_header:
            self._writer.writerow(["epoch", *self.keys])
            self._write_header = False
        self._writer.writerow([epoch, *(logs.get(key, "NA") for key in self.keys)])
        self.csv_file.flush()

    def on_train_end(self, logs=None):
        if self.csv_file is not None:
            self.csv_file.close()
        self.csv_file = self._writer = None


class LambdaCallback(Callback):
    """A callback made of plain functions, one per hook.

    Each function takes the hook's arguments: `(logs)` for train begin and
    end, `(epoch, logs)` for epochs, `(batch, logs)` for batches.

    Args:
        on_epoch_begin: a function of `(epoch, logs)`, or None.
        on_epoch_end: a function of `(epoch, logs)`, or None.
        on_train_begin: a function of `(logs)`, or None.
        on_train_end: a function of `(logs)`, or None.
        on_train_batch_begin: a function of `(batch, logs)`, or None.
        on_train_batch_end: a function of `(batch, logs)`, or None.
        **kwargs: functions for the other hooks, such as `on_batch_end`.

    Raises:
        TypeError: for a keyword that names no hook, or a value that is not callable.

    Example:
        >>> printer = LambdaCallback(on_epoch_end=lambda epoch, logs: print(epoch, logs))
        >>> printer.on_epoch_end(3, {"loss": 0.5})
        3 {'loss': 0.5}
    """

    def __init__(
        self,
        on_epoch_begin=None,
        on_epoch_end=None,
        on_train_begin=None,
        on_train_end=None,
        on_train_batch_begin=None,
        on_train_batch_end=None,
        **kwargs,
    ):
        super().__init__()
        hooks = dict(
            on_epoch_begin=on_epoch_begin, on_epoch_end=on_epoch_end,
            on_train_begin=on_train_begin, on_train_end=on_train_end,
            on_train_batch_begin=on_train_batch_begin, on_train_batch_end=on_train_batch_end,
        )  # fmt: skip
        for name, function in {**hooks, **kwargs}.items():
            if name not in _HOOKS:
                raise TypeError(
                    f"LambdaCallback: {name!r} is not a callback hook; expected one of "
                    f"{', '.join(_HOOKS)}"
                )
            if function is None:
                continue
            if not callable(function):
                raise TypeError(f"LambdaCallback: {name} must be a function, got {function!r}")
            setattr(self, name, function)


class ModelCheckpoint(Callback):
    """Saves the model (or its weights) during training, every epoch or every few batches.

    `filepath` may hold `str.format` fields filled from the epoch (counted
    from 1), the batch (with an integer `save_freq`) and the logs:
    `"ckpt-{epoch:02d}-{val_loss:.2f}.minikeras"`. Missing directories are
    created. Each save is atomic (see `minikeras.saving`), so a crash never
    leaves a half-written checkpoint.

    With `save_best_only`, a save happens only when `logs[monitor]` improves
    on the best value so far (which starts at `initial_value_threshold`, if
    given): in "min" mode `current < best`, in "max" mode `current > best`.

    Args:
        filepath: the path, possibly with format fields.
        monitor: the log key that `save_best_only` watches.
        verbose: 1 prints a line at each save or skipped save.
        save_best_only: save only when `monitor` improves.
        save_weights_only: `model.save_weights(path)` instead of `model.save(path)`.
        mode: "min", "max", or "auto" (chosen as for `EarlyStopping`).
        save_freq: "epoch", or an int: save every that many batches.
        initial_value_threshold: the value `monitor` must beat at first.

    Raises:
        ValueError: for a `save_freq` that is neither "epoch" nor a positive
            int; at the first save, if mode "auto" cannot tell the direction.
        KeyError: if `filepath` names a field that the logs do not hold.

    Example:
        >>> import tempfile, pathlib
        >>> from minikeras import Sequential, layers
        >>> folder = pathlib.Path(tempfile.mkdtemp())
        >>> model = Sequential([layers.Input((2,)), layers.Dense(1)])
        >>> model.compile("sgd", "mse")
        >>> checkpoint = ModelCheckpoint(str(folder / "ckpt-{epoch:02d}.minikeras"), monitor="loss")
        >>> _ = model.fit(np.ones((8, 2)), np.ones((8, 1)), epochs=2, verbose=0,
        ...               callbacks=[checkpoint])
        >>> sorted(path.name for path in folder.iterdir())
        ['ckpt-01.minikeras', 'ckpt-02.minikeras']
    """

    def __init__(
        self,
        filepath,
        monitor="val_loss",
        verbose=0,
        save_best_only=False,
        save_weights_only=False,
        mode="auto",
        save_freq="epoch",
        initial_value_threshold=None,
    ):
        super().__init__()
        if save_freq != "epoch" and (
            isinstance(save_freq, bool) or not isinstance(save_freq, int) or save_freq <= 0
        ):
            raise ValueError(
                f"ModelCheckpoint: save_freq must be 'epoch' or a positive int, got {save_freq!r}"
            )
        self.filepath = os.fspath(filepath)
        self.monitor = monitor
        self.verbose = verbose
        self.save_best_only = save_best_only
        self.save_weights_only = save_weights_only
        self.mode = _check_mode("ModelCheckpoint", mode)
        self.save_freq = save_freq
        self.best = initial_value_threshold
        self._direction = None
        self._current_epoch = 0
        self._batches_since_save = 0
        self._last_batch = -1

    def on_epoch_begin(self, epoch, logs=None):
        self._current_epoch = epoch

    def on_train_batch_end(self, batch, logs=None):
        if self.save_freq == "epoch":
            return
        # Batches restart from 0 each epoch: count what was run since the last call.
        run = batch + 1 if batch <= self._last_batch else batch - self._last_batch
        self._batches_since_save += run
        self._last_batch = batch
        if self._batches_since_save >= self.save_freq:
            self._batches_since_save = 0
            self._save(self._current_epoch, batch, logs)

    def on_epoch_end(self, epoch, logs=None):
        if self.save_freq == "epoch":
            self._save(epoch, None, logs)

    def _filepath(self, epoch, batch, logs):
        fields = dict(logs or {})
        fields["epoch"] = epoch + 1
        if batch is not None:
            fields.setdefault("batch", batch + 1)
        try:
            return self.filepath.format(**fields)
        except KeyError as error:
            raise KeyError(
                f"ModelCheckpoint: filepath {self.filepath!r} names {error}, which the logs do "
                f"not hold; available: {', '.join(sorted(fields))}"
            ) from None

    def _is_improvement(self, current):
        if self._direction is None:
            direction = self.mode
            if direction == "auto":
                direction = _metric_direction(self.monitor, self.model)
            if direction is None:
                raise ValueError(
                    f"ModelCheckpoint received monitor={self.monitor!r} but cannot tell whether "
                    "it should be maximized or minimized. Pass mode='max' or mode='min'."
                )
            self._direction = direction
        if self.best is None:
            return True
        return current < self.best if self._direction == "min" else current > self.best

    def _save(self, epoch, batch, logs):
        filepath = self._filepath(epoch, batch, logs)
        if self.save_best_only:
            current = _monitored_value("ModelCheckpoint", self.monitor, logs)
            if current is None:
                return
            if not self._is_improvement(current):
                if self.verbose > 0:
                    print(f"Epoch {epoch + 1}: {self.monitor} did not improve from {self.best:.5f}")
                return
            if self.verbose > 0:
                previous = "nothing" if self.best is None else f"{self.best:.5f}"
                print(
                    f"Epoch {epoch + 1}: {self.monitor} improved from {previous} to "
                    f"{current:.5f}, saving model to {filepath}"
                )
            self.best = current
        elif self.verbose > 0:
            print(f"Epoch {epoch + 1}: saving model to {filepath}")
        directory = os.path.dirname(filepath)
        if directory:
            os.makedirs(directory, exist_ok=True)
        if self.save_weights_only:
            self.model.save_weights(filepath)
        else:
            self.model.save(filepath)
