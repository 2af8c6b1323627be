"""`ModelCheckpoint`: saves the model or its weights during training."""

import os
import warnings

from minikeras.callbacks.base import Callback
from minikeras.callbacks.monitoring import _check_mode, _metric_direction
from minikeras.switches import print_line

__all__ = ["ModelCheckpoint"]

_WEIGHTS_SUFFIXES = (".weights.h5", ".weights.minikeras")
_MODEL_SUFFIXES = (".keras", ".minikeras")


def _check_filepath(filepath, save_weights_only):
    """`filepath`, if its suffix names a file of the kind to save (as Keras 3 checks it)."""
    if save_weights_only:
        if not filepath.endswith(_WEIGHTS_SUFFIXES):
            raise ValueError(
                "ModelCheckpoint: with save_weights_only=True, filepath must end in "
                "'.weights.h5' (Keras's weights file) or '.weights.minikeras', got "
                f"filepath={filepath!r}"
            )
    elif filepath.endswith(_WEIGHTS_SUFFIXES) or not filepath.endswith(_MODEL_SUFFIXES):
        hint = (
            "; for weights only, pass save_weights_only=True"
            if filepath.endswith(_WEIGHTS_SUFFIXES)
            else "; minikeras writes no legacy HDF5 model file"
            if filepath.endswith(".h5")
            else ""
        )
        raise ValueError(
            "ModelCheckpoint: filepath must end in '.keras' (Keras's model file) or "
            f"'.minikeras' when it saves the whole model, got filepath={filepath!r}{hint}"
        )
    return filepath


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
    When the logs lack `monitor` (`"val_loss"` in a fit without validation,
    or in an epoch that `validation_freq` skips), the save happens, with a
    warning, as in Keras 3: a fixed `filepath` then holds the last model,
    not the best one.

    As Keras 3 does, the file's suffix is checked when the callback is made:
    a whole model goes to a `.keras` file (Keras's format, which Keras
    loads) or a `.minikeras` one; weights only (`save_weights_only=True`) to
    a `.weights.h5` file (Keras's) or a `.weights.minikeras` one. Keras also
    takes a `.h5` model file (its legacy HDF5 format); minikeras writes none.

    Args:
        filepath: the path, possibly with format fields, ending in one of
            the suffixes above.
        monitor: the log key that `save_best_only` watches.
        verbose: 1 prints a line at each save or skipped save.
        save_best_only: save only when `monitor` improves.
        save_weights_only: `model.save_weights(path)` instead of `model.save(path)`.
        mode: "min", "max", or "auto" (chosen as for `EarlyStopping`).
        save_freq: "epoch", or an int: save every that many batches.
        initial_value_threshold: the value `monitor` must beat at first.

    Raises:
        ValueError: for a `save_freq` that is neither "epoch" nor a positive
            int, or a `filepath` suffix that does not fit `save_weights_only`;
            at the first save, if mode "auto" cannot tell the direction.
        KeyError: if `filepath` names a field that the logs do not hold.

    Example:
        >>> import tempfile, pathlib
        >>> from minikeras import Sequential, layers
        >>> folder = pathlib.Path(tempfile.mkdtemp())
        >>> model = Sequential([layers.Input((2,)), layers.Dense(1)])
        >>> model.compile("sgd", "mse")
        >>> checkpoint = mk.callbacks.ModelCheckpoint(
        ...     str(folder / "ckpt-{epoch:02d}.minikeras"), monitor="loss"
        ... )
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
        self.filepath = _check_filepath(os.fspath(filepath), save_weights_only)
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
        current = (logs or {}).get(self.monitor) if self.save_best_only else None
        if current is None:
            if self.save_best_only:  # as Keras 3: with nothing to compare, save and say why
                warnings.warn(
                    f"ModelCheckpoint: save_best_only needs {self.monitor!r} in the logs, "
                    f"which hold {', '.join(logs or {}) or 'nothing'}; saving at every save",
                    UserWarning,
                    stacklevel=2,
                )
            if self.verbose > 0:
                print_line(f"Epoch {epoch + 1}: saving model to {filepath}")
        else:
            if not self._is_improvement(current):
                if self.verbose > 0:
                    print_line(
                        f"Epoch {epoch + 1}: {self.monitor} did not improve from {self.best:.5f}"
                    )
                return
            if self.verbose > 0:
                previous = "nothing" if self.best is None else f"{self.best:.5f}"
                print_line(
                    f"Epoch {epoch + 1}: {self.monitor} improved from {previous} to "
                    f"{current:.5f}, saving model to {filepath}"
                )
            self.best = current
        directory = os.path.dirname(filepath)
        if directory:
            os.makedirs(directory, exist_ok=True)
        if self.save_weights_only:
            self.model.save_weights(filepath)
        else:
            self.model.save(filepath)
