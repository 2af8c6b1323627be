"""`BackupAndRestore`: a `fit` that was killed resumes from its last backup, bit for bit."""

import json
import os
import shutil
import uuid
import zipfile

import numpy as np

from minikeras.callbacks.base import Callback

__all__ = ["BackupAndRestore"]


def _write_atomically(path, write):
    temporary = path + ".tmp"
    with open(temporary, "wb") as stream:
        write(stream)
    os.replace(temporary, path)


class BackupAndRestore(Callback):
    """Backs up the training state after every epoch (or every N batches); `fit` resumes from it.

    A backup holds the model's weights, every optimizer's variables
    (moments, iteration count and a float learning rate, so a rate a
    callback changed comes back), the epoch to resume at and the states of
    the random generators (the global one, which shuffles, and those layers
    hold), written to `backup_dir`. When `fit` starts and a backup is
    there, all of it is restored and training resumes from it.

    With `save_freq="epoch"`, a backup is written after each epoch and
    training resumes at the next epoch, so a run killed part-way and run
    again ends with the same weights, bit for bit, as a run that was never
    stopped (for the same model, data and arguments).

    With an integer `save_freq`, a backup is written every `save_freq`
    batches, counted across epochs (and across the `fit`s this callback
    serves), and none at an epoch's end, as in Keras 3. A backup taken inside
    epoch `e` resumes, as Keras's does, at the start of epoch `e`, from the
    weights and optimizer state after the backed-up batch: the batches of
    epoch `e` before it are trained twice. The resumed run is, bit for bit,
    a run that started epoch `e` afresh right after that batch (the random
    streams carry on from there, so a shuffle draws a new order). Keras
    writes epoch 0 for a backup taken before the first epoch end of a
    callback made after a restore (a second kill then restarts training at
    `fit`'s `initial_epoch`); here a backup always names the epoch in
    progress.

    The backup is deleted when training completes; after a Ctrl-C, which
    stops `fit` cleanly inside an epoch, it is kept (the last one written:
    that of the last complete epoch with `save_freq="epoch"`) for a new
    `fit` to resume from, as a Keras `fit` that a `KeyboardInterrupt` stops
    keeps it. With `steps_per_epoch`, only epochs that end where a pass over
    the data ends resume bit for bit: the place inside a pass (or a
    generator's state) is not backed up, so a resumed `fit` starts a new pass.

    Args:
        backup_dir: the directory of the backup (created if missing).
        save_freq: `"epoch"`, or a positive int: back up every that many
            batches. (Keras also accepts `False`, meant for TensorFlow's
            preemption checkpointing, and 0 or a negative int: each backs up
            after every batch there; here they are errors.)
        double_checkpoint: also keep the backup before the last one
            (`*.bkp`); when the last one cannot be read, `fit` resumes from
            that one, a backup earlier.
        delete_checkpoint: delete the backup(s) when training ends.

    Raises:
        ValueError: for a `save_freq` that is neither `"epoch"` nor a
            positive int; when `fit` starts (before anything changes), for a
            backup that cannot be read (a cut file, or its two files of
            different backups) without a readable previous one, or that
            another model wrote.

    Example:
        >>> import tempfile
        >>> class Kill(mk.callbacks.Callback):
        ...     def on_epoch_begin(self, epoch, logs=None):
        ...         if epoch == 2:
        ...             raise RuntimeError("killed")
        >>> backup = mk.callbacks.BackupAndRestore(tempfile.mkdtemp())
        >>> model = mk.Sequential([mk.Input((2,)), mk.layers.Dense(1)])
        >>> model.compile("sgd", "mse")
        >>> x, y = np.ones((4, 2)), np.ones((4, 1))
        >>> try:
        ...     model.fit(x, y, epochs=5, verbose=0, callbacks=[backup, Kill()])
        ... except RuntimeError:
        ...     pass
        >>> model.fit(x, y, epochs=5, verbose=0, callbacks=[backup]).epoch
        [2, 3, 4]
    """

    def __init__(self, backup_dir, save_freq="epoch", double_checkpoint=False,
                 delete_checkpoint=True):  # fmt: skip
        super().__init__()
        if not backup_dir:
            raise ValueError("BackupAndRestore: backup_dir is empty; give a directory")
        if save_freq != "epoch" and (
            isinstance(save_freq, bool) or not isinstance(save_freq, int) or save_freq <= 0
        ):
            raise ValueError(
                "BackupAndRestore: save_freq must be 'epoch' or a positive int (a backup "
                f"every that many batches), got {save_freq!r}"
            )
        self.backup_dir = os.fspath(backup_dir)
        self.save_freq = save_freq
        self.double_checkpoint = double_checkpoint
        self.delete_checkpoint = delete_checkpoint
        self._arrays_path = os.path.join(self.backup_dir, "latest.npz")
        self._metadata_path = os.path.join(self.backup_dir, "training_metadata.json")
        # As Keras's: the batch count carries on across epochs and fits.
        self._batches_since_backup = 0
        self._epoch = 0

    def _backups(self):
        """The (arrays, metadata) paths of the backups, newest first."""
        latest = (self._arrays_path, self._metadata_path)
        previous = tuple(path + ".bkp" for path in latest)
        return [latest, previous] if self.double_checkpoint else [latest]

    def on_train_begin(self, logs=None):
        failures = []
        for paths in self._backups():
            if not all(os.path.exists(path) for path in paths):
                continue
            try:
                metadata, values = _read(*paths)
            except ValueError as error:
                failures.append(str(error))
                continue
            self._restore(metadata, values)
            latest = self._backups()[0]
            if paths != latest:  # as Keras: the previous backup becomes the last one again,
                # so the next rotation keeps it as the previous, not an unreadable leftover
                for source, target in zip(paths, latest):
                    shutil.copyfile(source, target)
            return
        if failures:
            raise ValueError(
                f"BackupAndRestore: cannot read the backup in {self.backup_dir!r} "
                f"({'; '.join(failures)}); delete it to start afresh"
            )

    def on_epoch_begin(self, epoch, logs=None):
        self._epoch = epoch

    def on_train_batch_end(self, batch, logs=None):
        if self.save_freq == "epoch":
            return
        self._batches_since_backup += 1
        if self._batches_since_backup >= self.save_freq:
            self._batches_since_backup = 0
            self._save(self._epoch, batch)  # resumes at this epoch's start, as in Keras

    def on_epoch_end(self, epoch, logs=None):
        if self.save_freq == "epoch" and not self._interrupted():
            self._save(epoch + 1)

    def on_train_end(self, logs=None):
        if self.delete_checkpoint and not self._interrupted():
            latest = (self._arrays_path, self._metadata_path)  # (and a previous one, if any)
            for paths in (latest, tuple(path + ".bkp" for path in latest)):
                for path in paths:
                    if os.path.exists(path):
                        os.remove(path)

    def _interrupted(self):
        """Whether Ctrl-C stopped `fit` inside an epoch: that epoch is not backed up."""
        return getattr(self.model, "_fit_interrupted", False)

    def _variables(self, by_creation=False):
        """The model's weights, then every optimizer's variables, in the backup's order.

        `by_creation`: for a backup of a minikeras that listed weights by
        creation, not in Keras's order (its metadata has no `weights_order`);
        an optimizer not built yet is built in that order, so that its slots
        come where the backup has them.
        """
        model = self.model
        variables, trainable = list(model.weights), model.trainable_weights
        if by_creation:
            variables.sort(key=_creation)
            trainable = sorted(trainable, key=_creation)
        for optimizer in model._optimizers():
            if not optimizer.built:
                optimizer.build(trainable)
            elif by_creation and not _in_creation_order(optimizer):
                raise ValueError(
                    f"BackupAndRestore: the backup in {self.backup_dir!r} was written by a "
                    "minikeras that listed weights by creation; its optimizer state follows "
                    f"that order, but optimizer {optimizer.name!r} was built in another. "
                    "Restore it before the optimizer's first step (in a new process), or "
                    "delete it to start afresh"
                )
            variables += list(optimizer.variables)
        return variables

    def _save(self, epoch, batch=None):
        """Writes a backup to resume at `epoch` (`batch`: the last batch run, inside it)."""
        os.makedirs(self.backup_dir, exist_ok=True)
        arrays = {f"v{i}": variable.numpy() for i, variable in enumerate(self._variables())}
        generators = self.model._random_generators()
        # (uuid, not the random streams a backup restores)
        metadata = {
            "epoch": epoch,
            "batch": batch,
            "id": uuid.uuid4().hex,
            "variables": len(arrays),
            "weights_order": "keras",  # (older backups list the weights by creation)
            "random": {key: g.bit_generator.state for key, g in generators.items()},
        }
        # The epoch and an id in both files: a crash between the two writes is found on restore
        # (two backups inside one epoch have the same epoch).
        arrays["epoch"] = np.array(epoch)
        arrays["id"] = np.array(metadata["id"])
        if self.double_checkpoint:  # the last backup becomes the previous one
            for path in (self._arrays_path, self._metadata_path):
                if os.path.exists(path):
                    os.replace(path, path + ".bkp")
        _write_atomically(self._arrays_path, lambda stream: np.savez(stream, **arrays))
        _write_atomically(
            self._metadata_path, lambda stream: stream.write(json.dumps(metadata).encode())
        )

    def _restore(self, metadata, values):
        variables = self._variables(by_creation=metadata.get("weights_order") != "keras")
        if len(values) != len(variables):
            # A backup written while a float learning rate was no Variable (it is not
            # in the backup; the optimizer keeps the rate it has).
            rates = {id(o._learning_rate) for o in self.model._optimizers()}
            variables = [v for v in variables if id(v) not in rates]
        shapes = [tuple(v.shape) for v in variables]
        if len(values) != len(variables) or [v.shape for v in values] != shapes:
            raise ValueError(
                f"BackupAndRestore: the backup in {self.backup_dir!r} holds {len(values)} "
                f"arrays that do not fit this model and optimizer ({len(variables)} variables); "
                "it was written by another model. Delete it to start afresh"
            )
        generators = self.model._random_generators()
        missing = set(metadata["random"]) - set(generators)
        if missing:
            raise ValueError(
                f"BackupAndRestore: the backup holds random generators {sorted(missing)} "
                "that this model does not have; it was written by another model"
            )
        for variable, value in zip(variables, values):
            variable.assign(value)
        for key, state in metadata["random"].items():
            generators[key].bit_generator.state = state
        self.model._initial_epoch = int(metadata["epoch"])


def _creation(variable):
    return variable._index


def _in_creation_order(optimizer):
    """Whether an optimizer's variables (and so its slots) are listed by creation."""
    built_on = [variable._index for variable in getattr(optimizer, "_trainable_variables", ())]
    return built_on == sorted(built_on)


def _read(arrays_path, metadata_path):
    """The metadata and the arrays of one backup, checked whole.

    Raises a ValueError naming the file for anything that is not one
    backup: a cut or empty file, JSON of another shape, arrays that are not
    the ones the metadata counts, or the two files of two backups.
    """
    try:
        with open(metadata_path, encoding="utf-8") as stream:
            metadata = json.load(stream)  # (json's decode error is a ValueError)
        epoch, count, states = metadata["epoch"], metadata["variables"], metadata["random"]
        if not (isinstance(epoch, int) and isinstance(count, int) and isinstance(states, dict)):
            raise ValueError("its epoch, variables or random entry is of the wrong type")
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise ValueError(f"{metadata_path}: {error!r}") from error
    try:
        with np.load(arrays_path) as arrays:
            names = set(arrays.files) - {"epoch", "id"}
            if names != {f"v{i}" for i in range(count)}:
                raise ValueError(f"it holds {len(names)} arrays where its metadata counts {count}")
            values = [arrays[f"v{i}"] for i in range(count)]
            arrays_epoch = int(arrays["epoch"]) if "epoch" in arrays.files else epoch
            arrays_id = str(arrays["id"]) if "id" in arrays.files else metadata.get("id")
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as error:
        raise ValueError(f"{arrays_path}: {error!r}") from error
    if arrays_epoch != epoch:
        raise ValueError(
            f"{arrays_path}: its arrays are of epoch {arrays_epoch} but its metadata of epoch "
            f"{epoch} (a crash between the two writes)"
        )
    if arrays_id != metadata.get("id"):
        raise ValueError(
            f"{arrays_path}: its arrays and its metadata are of two backups of epoch {epoch} "
            "(a crash between the two writes)"
        )
    return metadata, values
