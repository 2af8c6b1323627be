"""Callbacks that watch or log training: `TerminateOnNaN`, `CSVLogger`, `LambdaCallback`.

And `ProgbarLogger`, which Keras code passes and whose work `fit` does itself.
"""

import csv
import math
import os

from minikeras.callbacks.base import _HOOKS, Callback
from minikeras.switches import print_line

__all__ = ["CSVLogger", "LambdaCallback", "ProgbarLogger", "TerminateOnNaN"]


class ProgbarLogger(Callback):
    """Keras's progress-bar callback; in minikeras `fit`, `evaluate` and `predict` draw it.

    Keras adds one to every `fit` with `verbose` other than 0, and none more
    when one is given. minikeras's trainer draws the same display itself,
    by `verbose` (1: a bar, 2: a line per epoch, 0: nothing; see
    `minikeras.progress`), so a `ProgbarLogger` in `callbacks` is accepted
    and adds nothing to it: the output is the one Keras gives with it.

    Example:
        >>> model = mk.Sequential([mk.Input((2,)), mk.layers.Dense(1)])
        >>> model.compile(optimizer="sgd", loss="mse")
        >>> progbar = mk.callbacks.ProgbarLogger()
        >>> history = model.fit(np.ones((4, 2)), np.ones((4, 1)), verbose=0, callbacks=[progbar])
        >>> len(history.history["loss"])
        1
    """


class TerminateOnNaN(Callback):
    """Stops training as soon as a batch's loss is NaN or infinite.

    Prints which batch it was and sets `model.stop_training`, which ends the
    epoch after that batch and the training after that epoch.

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

    def on_train_batch_end(self, batch, logs=None):
        loss = (logs or {}).get("loss")
        if loss is not None and not math.isfinite(float(loss)):
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
