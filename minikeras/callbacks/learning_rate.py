"""Callbacks that set the learning rate: `LearningRateScheduler` and `ReduceLROnPlateau`."""

import inspect
import numbers

import numpy as np

from minikeras.callbacks.base import Callback
from minikeras.callbacks.monitoring import _check_mode, _metric_direction, _monitored_value
from minikeras.switches import print_line

__all__ = ["LearningRateScheduler", "ReduceLROnPlateau"]


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
        >>> scheduler = mk.callbacks.LearningRateScheduler(lambda epoch, lr: lr * 0.5)
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
            print_line(
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
        >>> reducer = mk.callbacks.ReduceLROnPlateau(monitor="loss", factor=0.5, patience=1)
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
            >>> reducer = mk.callbacks.ReduceLROnPlateau(monitor="loss", patience=1, cooldown=2)
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
                print_line(
                    f"Epoch {epoch + 1}: ReduceLROnPlateau reducing learning rate to {new_lr}."
                )
            self.cooldown_counter = self.cooldown
            self.wait = 0
