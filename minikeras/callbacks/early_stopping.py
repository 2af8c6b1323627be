"""`EarlyStopping`: stops training when a monitored quantity stops improving."""

from minikeras.callbacks.base import Callback
from minikeras.callbacks.monitoring import _check_mode, _metric_direction, _monitored_value
from minikeras.switches import print_line

__all__ = ["EarlyStopping"]


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
        >>> stopper = mk.callbacks.EarlyStopping(monitor="loss", patience=1)
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
            print_line(f"Epoch {self.stopped_epoch + 1}: early stopping")
        if self.restore_best_weights and self.best_weights is not None:
            if self.verbose > 0:
                print_line(
                    f"Restoring model weights from the end of the best epoch {self.best_epoch + 1}."
                )
            self.model.set_weights(self.best_weights)
