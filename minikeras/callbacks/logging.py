"""Callbacks that watch or log training: `TerminateOnNaN`, `CSVLogger`, `LambdaCallback`.

And `ProgbarLogger`, which draws a progress bar from hooks called by hand; in
`fit`, `evaluate` and `predict` the trainer draws its own display instead.
"""

import csv
import math
import os

from minikeras.callbacks.base import _HOOKS, Callback
from minikeras.switches import print_line
from minikeras.utils.progbar import Progbar

__all__ = ["CSVLogger", "LambdaCallback", "ProgbarLogger", "TerminateOnNaN"]


class ProgbarLogger(Callback):
    """Draws a Keras progress bar (`mk.utils.Progbar`) from the hooks it is given.

    Driven by hand (`set_params({"verbose": 1, "epochs": 2, "steps": 10})`,
    then `on_epoch_begin`, `on_train_batch_end`, ..., as a custom loop or a
    `CallbackList` calls them), it draws what Keras's does: "Epoch i/n" when
    there are several epochs, a bar (`verbose=1`) updated at each batch end
    with the batch logs, or one line at the end (`verbose=2`), for training
    epochs, evaluation and prediction; evaluation inside training is not
    drawn. `params["verbose"]` `"auto"` means 1; `params["steps"]` None
    means the count is learnt at the end.

    Passed to `fit`, `evaluate` or `predict`, it draws nothing: the trainer
    draws the display itself, by `verbose` (see `minikeras.progress`), so
    there is one display, as Keras gives with it. (Keras draws that display
    with this logger's bar; minikeras with its own.)

    Example:
        >>> logger = mk.callbacks.ProgbarLogger()
        >>> logger.set_params({"verbose": 2, "epochs": 1, "steps": 2})
        >>> logger.on_train_begin(); logger.on_epoch_begin(0)
        >>> logger.on_train_batch_end(0, {"loss": 0.5})
        >>> logger.on_train_batch_end(1, {"loss": 0.25})
        >>> logger.on_epoch_end(0, {"loss": 0.25})  # doctest: +ELLIPSIS
        2/2 - 0s - ...s/step - loss: 0.2500
    """

    def __init__(self):
        super().__init__()
        self.seen = 0
        self.progbar = None
        self.target = None
        self.verbose = 1
        self.epochs = 1
        self._called_in_fit = False
        self._drawn_by_trainer = None  # the phase ("train", "test", "predict") a trainer draws

    def set_params(self, params):
        super().set_params(params)
        verbose = params.get("verbose", 1)
        self.verbose = 1 if verbose == "auto" else verbose
        self.epochs = params.get("epochs", 1)
        self.target = params.get("steps")
        self._drawn_by_trainer = None  # (a trainer says so after giving its params)

    def on_train_begin(self, logs=None):
        self._called_in_fit = True  # evaluation inside training is not drawn

    def on_train_end(self, logs=None):
        self._called_in_fit = False
        self._ended("train")

    def on_epoch_begin(self, epoch, logs=None):
        self._start()
        if self._draws() and self.verbose and self.epochs > 1:
            print_line(f"Epoch {epoch + 1}/{self.epochs}")

    def on_train_batch_end(self, batch, logs=None):
        self._update(batch, logs)

    def on_epoch_end(self, epoch, logs=None):
        self._finish(logs)

    def on_test_begin(self, logs=None):
        if not self._called_in_fit:
            self._start()

    def on_test_batch_end(self, batch, logs=None):
        if not self._called_in_fit:
            self._update(batch, logs)

    def on_test_end(self, logs=None):
        if not self._called_in_fit:
            self._finish(logs)
            self._ended("test")

    def on_predict_begin(self, logs=None):
        self._start()

    def on_predict_batch_end(self, batch, logs=None):
        self._update(batch, None)  # (not the outputs)

    def on_predict_end(self, logs=None):
        self._finish(logs)
        self._ended("predict")

    def _draws(self):
        return self._drawn_by_trainer is None

    def _ended(self, phase):
        if self._drawn_by_trainer == phase:
            self._drawn_by_trainer = None

    def _start(self):
        self.seen = 0
        self.progbar = None
        if self._draws():
            self._bar()

    def _bar(self):
        if self.progbar is None:
            # (stateless_metrics empty: the logs are shown as given, already averaged)
            self.progbar = Progbar(
                self.target, verbose=self.verbose, unit_name="step", stateless_metrics=set()
            )
        return self.progbar

    def _update(self, batch, logs):
        if not self._draws():
            return
        self.seen = batch + 1
        if self.verbose == 1:
            self._bar().update(self.seen, list((logs or {}).items()), finalize=False)

    def _finish(self, logs):
        if not self._draws():
            return
        bar = self._bar()
        if self.target is None:
            self.target = bar.target = self.seen
        bar.update(self.target, list((logs or {}).items()), finalize=True)


def _drawn_by_trainer(callbacks, phase):
    """Tells the `ProgbarLogger`s among `callbacks` that the trainer draws `phase` itself."""
    for callback in callbacks:
        if isinstance(callback, ProgbarLogger):
            callback._drawn_by_trainer = phase


class TerminateOnNaN(Callback):
    """Stops training as soon as a batch's loss is NaN or infinite.

    By default it prints which batch it was and sets `model.stop_training`,
    which ends the epoch after that batch and the training after that epoch
    (the other callbacks' `on_train_end` still run). With `raise_error=True`
    it raises instead, at once, so that no callback's `on_train_end` runs (a
    `BackupAndRestore` keeps its backup, say), as Keras 3.15 does.

    Args:
        raise_error: False to stop gracefully; True to raise a `RuntimeError`.

    Raises:
        RuntimeError: (from `on_train_batch_end`) on a NaN or infinite loss
            when `raise_error` is True.

    Example:
        >>> class FakeModel:
        ...     stop_training = False
        >>> model = FakeModel()
        >>> terminate = mk.callbacks.TerminateOnNaN()
        >>> terminate.set_model(model)
        >>> terminate.on_train_batch_end(7, {"loss": float("nan")})
        Batch 7: Invalid loss nan, terminating training
        >>> model.stop_training
        True
    """

    def __init__(self, raise_error=False):
        super().__init__()
        self.raise_error = raise_error

    def on_train_batch_end(self, batch, logs=None):
        loss = (logs or {}).get("loss")
        if loss is not None and not math.isfinite(float(loss)):
            if self.raise_error:
                raise RuntimeError(
                    f"TerminateOnNaN: NaN or Inf loss encountered at batch {batch}. "
                    f"Loss value: {float(loss)}. Terminating training immediately."
                )
            print_line(f"Batch {batch}: Invalid loss {float(loss)}, terminating training")
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
        >>> logger = mk.callbacks.CSVLogger(path)
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
        >>> printer = mk.callbacks.LambdaCallback(
        ...     on_epoch_end=lambda epoch, logs: print(epoch, logs)
        ... )
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
