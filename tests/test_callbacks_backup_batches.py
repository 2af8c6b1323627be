"""`BackupAndRestore(save_freq=<int>)`: a backup every N batches, resumed as Keras 3 resumes it.

Keras 3 counts the batches across epochs, writes no backup at an epoch's
end, and resumes a backup taken inside epoch `e` at the start of epoch `e`,
from the weights and optimizer state after the backed-up batch.
"""

import json
import os
import signal

import numpy as np
import pytest

import minikeras as mk

X = np.linspace(-1.0, 1.0, 24, dtype="float32").reshape(12, 2)
Y = (X @ np.array([[1.5], [-0.5]], "float32") + 0.25).astype("float32")
BATCH = 4  # three batches an epoch


def _model(module):
    initializer = module.initializers.Constant([[0.2], [0.1]])
    model = module.Sequential(
        [module.Input((2,)), module.layers.Dense(1, kernel_initializer=initializer)]
    )
    model.compile(module.optimizers.Adam(0.05), "mse")
    return model


def _killer(module, epoch, batch):
    """A callback (of `module`) that kills fit after the given batch, as a crash would."""

    class Kill(module.callbacks.Callback):
        def on_epoch_begin(self, epoch, logs=None):
            self.epoch = epoch

        def on_train_batch_end(self, batch, logs=None):
            if (self.epoch, batch) == at:
                raise KeyboardInterrupt("killed")

    at = (epoch, batch)
    return Kill()


def _fit(model, backup, epochs=4, more=()):
    return model.fit(X, Y, batch_size=BATCH, epochs=epochs, shuffle=False, verbose=0,
                     callbacks=[backup, *more])  # fmt: skip


def _killed_and_resumed(module, directory, kill_at, save_freq=2):
    backup = module.callbacks.BackupAndRestore(str(directory), save_freq=save_freq)
    with pytest.raises(KeyboardInterrupt):
        _fit(_model(module), backup, more=[_killer(module, *kill_at)])
    with open(os.path.join(directory, "training_metadata.json")) as stream:
        metadata = json.load(stream)
    resumed = _model(module)
    history = _fit(resumed, module.callbacks.BackupAndRestore(str(directory), save_freq))
    return resumed, history.epoch, metadata


@pytest.mark.parametrize(
    "kill_at, backed_up, batches",
    [
        # Backups after batches 2, 4, 6, 8 of the run (three a epoch): the 8th is
        # epoch 2's batch 1; killed after epoch 2's batch 2, the resumed fit
        # starts epoch 2 again from the weights after its batch 1.
        ((2, 2), (2, 1), [0, 1, 2] * 2 + [0, 1] + [0, 1, 2] * 2),
        # The 4th batch is epoch 1's first: a backup counted across the epoch's end.
        ((1, 1), (1, 0), [0, 1, 2] + [0] + [0, 1, 2] * 3),
        # The 6th batch ends epoch 1, yet the backup resumes epoch 1 (no epoch-end backup).
        ((2, 0), (1, 2), [0, 1, 2] * 2 + [0, 1, 2] * 3),
    ],
)
def test_a_killed_fit_resumes_from_the_last_batch_backup(tmp_path, kill_at, backed_up, batches):
    resumed, epochs, metadata = _killed_and_resumed(mk, tmp_path, kill_at)
    assert (metadata["epoch"], metadata["batch"]) == backed_up
    assert epochs == list(range(backed_up[0], 4))
    # The same batches, one by one, without a kill: what Keras's semantics give.
    straight = _model(mk)
    for index in batches:
        rows = slice(index * BATCH, (index + 1) * BATCH)
        straight.train_on_batch(X[rows], Y[rows])
    for ours, expected in zip(resumed.get_weights(), straight.get_weights(), strict=True):
        np.testing.assert_array_equal(ours, expected)
    assert int(resumed.optimizer.iterations.numpy()) == len(batches)
    assert not os.path.exists(tmp_path / "training_metadata.json")  # completed: deleted


@pytest.mark.parametrize("kill_at", [(2, 2), (1, 1), (2, 0)])
def test_a_killed_fit_resumes_from_a_batch_backup_as_keras_does(tmp_path, kill_at):
    keras = pytest.importorskip("keras")
    theirs, their_epochs, their_metadata = _killed_and_resumed(keras, tmp_path / "k", kill_at)
    ours, our_epochs, our_metadata = _killed_and_resumed(mk, tmp_path / "mk", kill_at)
    assert our_epochs == their_epochs
    assert (our_metadata["epoch"], our_metadata["batch"]) == (
        their_metadata["epoch"],
        their_metadata["batch"],
    )
    for a, b in zip(ours.get_weights(), theirs.get_weights(), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_a_callback_made_after_a_restore_backs_up_the_epoch_in_progress(tmp_path):
    # Keras 3.15 writes epoch 0 here (its count starts at 0 in a new callback), so a
    # second kill would restart training at epoch 0; the epoch in progress is meant.
    for _ in range(2):
        backup = mk.callbacks.BackupAndRestore(tmp_path, save_freq=2)
        with pytest.raises(KeyboardInterrupt):
            _fit(_model(mk), backup, more=[_killer(mk, 2, 2)])
    metadata = json.loads((tmp_path / "training_metadata.json").read_text())
    # The second fit resumed at epoch 2 and backed up after its batches 1 (and no later).
    assert (metadata["epoch"], metadata["batch"]) == (2, 1)


class DropoutModel:
    """A model whose training draws random numbers: a shuffle and a dropout mask per step."""

    @staticmethod
    def make():
        mk.utils.set_random_seed(11)
        model = mk.Sequential([
            mk.Input((4,)),
            mk.layers.Dense(8, activation="relu"),
            mk.layers.Dropout(0.3, seed=5, name="drop"),
            mk.layers.Dense(1),
        ])  # fmt: skip
        model.compile(mk.optimizers.Adam(0.01), "mse")
        return model

    x = np.random.default_rng(0).normal(size=(40, 4)).astype("float32")
    y = x[:, :1] * 2.0


class StopAfter(mk.callbacks.Callback):
    def __init__(self, epoch, batch):
        super().__init__()
        self.at = (epoch, batch)

    def on_epoch_begin(self, epoch, logs=None):
        self.epoch = epoch

    def on_train_batch_end(self, batch, logs=None):
        if (self.epoch, batch) == self.at:
            self.model.stop_training = True


def test_the_resumed_fit_is_bit_for_bit_one_that_starts_the_epoch_afresh(tmp_path):
    data = DropoutModel.x, DropoutModel.y
    # Uninterrupted: stop right after epoch 2's batch 1, then start epoch 2 afresh.
    straight = DropoutModel.make()
    straight.fit(*data, batch_size=8, epochs=3, verbose=0, callbacks=[StopAfter(2, 1)])
    straight.fit(*data, batch_size=8, epochs=5, initial_epoch=2, verbose=0)
    after = mk.random.generator().bit_generator.state

    backup = mk.callbacks.BackupAndRestore(tmp_path, save_freq=3)  # 5 batches an epoch
    killed = DropoutModel.make()
    with pytest.raises(KeyboardInterrupt):  # the last backup: batch 12, epoch 2's batch 1
        killed.fit(*data, batch_size=8, epochs=5, verbose=0, callbacks=[backup, _killer(mk, 2, 3)])
    resumed = DropoutModel.make()
    mk.random.generator().normal(size=7)  # whatever it drew meanwhile is overwritten
    history = resumed.fit(*data, batch_size=8, epochs=5, verbose=0, callbacks=[backup])
    assert history.epoch == [2, 3, 4]
    for a, b in zip(resumed.get_weights(), straight.get_weights(), strict=True):
        np.testing.assert_array_equal(a, b)
    for a, b in zip(resumed.optimizer.variables, straight.optimizer.variables, strict=True):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert mk.random.generator().bit_generator.state == after


class CtrlC(mk.callbacks.Callback):
    def on_epoch_begin(self, epoch, logs=None):
        self.epoch = epoch

    def on_train_batch_end(self, batch, logs=None):
        if (self.epoch, batch) == (2, 2):
            os.kill(os.getpid(), signal.SIGINT)


def test_ctrl_c_keeps_the_last_batch_backup_to_resume_from(tmp_path):
    backup = mk.callbacks.BackupAndRestore(tmp_path, save_freq=2)
    history = _fit(_model(mk), backup, more=[CtrlC()])
    assert history.epoch == [0, 1, 2]
    metadata = json.loads((tmp_path / "training_metadata.json").read_text())
    assert (metadata["epoch"], metadata["batch"]) == (2, 1)
    resumed = _model(mk)
    assert _fit(resumed, mk.callbacks.BackupAndRestore(tmp_path, 2)).epoch == [2, 3]


def test_a_crash_between_the_two_writes_of_a_batch_backup_is_found(tmp_path):
    backup = mk.callbacks.BackupAndRestore(tmp_path, save_freq=1, delete_checkpoint=False)
    with pytest.raises(KeyboardInterrupt):
        _fit(_model(mk), backup, more=[_killer(mk, 1, 1)])
    metadata = (tmp_path / "training_metadata.json").read_text()
    # One more backup of the same epoch, cut after its arrays: the metadata is the last one's.
    backup._save(1, 2)
    (tmp_path / "training_metadata.json").write_text(metadata)
    model = _model(mk)
    before = model.get_weights()
    with pytest.raises(ValueError, match="of two backups of epoch 1"):
        _fit(model, backup)
    for a, b in zip(before, model.get_weights(), strict=True):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("save_freq", [0, -2, True, False, 2.0, "batch", None])
def test_save_freq_must_be_epoch_or_a_positive_int(tmp_path, save_freq):
    with pytest.raises(ValueError, match=f"positive int .*got {save_freq!r}"):
        mk.callbacks.BackupAndRestore(tmp_path, save_freq=save_freq)


def _killed_twice(module, directory):
    """Two fits killed after epoch 2's batch 2 with one callback: the metadata left."""
    backup = module.callbacks.BackupAndRestore(str(directory), save_freq=2)
    for _ in range(2):
        with pytest.raises(KeyboardInterrupt):
            _fit(_model(module), backup, more=[_killer(module, 2, 2)])
    with open(os.path.join(directory, "training_metadata.json")) as stream:
        return json.load(stream)


def test_one_callback_counts_batches_across_its_fits(tmp_path):
    # First fit: backups after batches 2, 4, 6, 8, and one more batch counted. The
    # second resumes epoch 2: its batch 0 is the second counted, its batch 2 the next.
    metadata = _killed_twice(mk, tmp_path)
    assert (metadata["epoch"], metadata["batch"]) == (2, 2)


def test_one_callback_counts_batches_across_its_fits_as_keras_does(tmp_path):
    keras = pytest.importorskip("keras")
    theirs = _killed_twice(keras, tmp_path / "k")
    ours = _killed_twice(mk, tmp_path / "mk")
    assert (ours["epoch"], ours["batch"]) == (theirs["epoch"], theirs["batch"])


def test_double_checkpoint_falls_back_to_the_batch_backup_before_the_last(tmp_path):
    backup = mk.callbacks.BackupAndRestore(tmp_path, save_freq=2, double_checkpoint=True)
    with pytest.raises(KeyboardInterrupt):  # backups after batches 6 (epoch 1) and 8 (epoch 2)
        _fit(_model(mk), backup, more=[_killer(mk, 2, 2)])
    (tmp_path / "latest.npz").write_bytes(b"")  # the last one is unreadable
    resumed = _model(mk)
    assert _fit(resumed, backup).epoch == [1, 2, 3]
    straight = _model(mk)
    for index in [0, 1, 2] * 2 + [0, 1, 2] * 3:
        rows = slice(index * BATCH, (index + 1) * BATCH)
        straight.train_on_batch(X[rows], Y[rows])
    for ours, expected in zip(resumed.get_weights(), straight.get_weights(), strict=True):
        np.testing.assert_array_equal(ours, expected)
