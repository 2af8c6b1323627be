"""`BackupAndRestore` against what goes wrong: broken files, a fallback, Ctrl-C."""

import json
import os
import signal

import numpy as np
import pytest

import minikeras as mk


class Kill(mk.callbacks.Callback):
    def __init__(self, epoch):
        super().__init__()
        self.epoch = epoch

    def on_epoch_begin(self, epoch, logs=None):
        if epoch == self.epoch:
            raise KeyboardInterrupt("killed")


class CtrlC(mk.callbacks.Callback):
    """Presses Ctrl-C after a step: fit stops cleanly once the step is done."""

    def __init__(self, epoch, batch):
        super().__init__()
        self.at, self.epoch = (epoch, batch), None

    def on_epoch_begin(self, epoch, logs=None):
        self.epoch = epoch

    def on_train_batch_end(self, batch, logs=None):
        if (self.epoch, batch) == self.at:
            os.kill(os.getpid(), signal.SIGINT)


def make_model():
    mk.utils.set_random_seed(3)
    model = mk.Sequential(
        [mk.Input((4,)), mk.layers.Dense(6, activation="relu"), mk.layers.Dense(1)]
    )
    model.compile(mk.optimizers.Adam(0.01), "mse")
    return model


def data():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(24, 4)).astype("float32")
    return x, x[:, :1] * 2.0


def killed_at(directory, epoch, double_checkpoint=False, epochs=5):
    backup = mk.callbacks.BackupAndRestore(
        directory, double_checkpoint=double_checkpoint, delete_checkpoint=False
    )
    with pytest.raises(KeyboardInterrupt):
        make_model().fit(
            *data(), batch_size=8, epochs=epochs, verbose=0, callbacks=[backup, Kill(epoch)]
        )
    return backup


BROKEN = [
    ("latest.npz", b""),  # an empty file: numpy raises EOFError
    ("latest.npz", b"\x93NUMPY"),  # a cut .npy header
    ("training_metadata.json", b"[3]"),  # JSON, but not the metadata's dict
    ("training_metadata.json", b'{"epoch": 3}'),  # a key missing
    ("training_metadata.json", b'{"epoch": 3, "variables": 9, "random": 1}'),
]


@pytest.mark.parametrize("name, content", BROKEN)
def test_any_unreadable_backup_is_the_value_error_naming_the_file(tmp_path, name, content):
    backup = killed_at(tmp_path, 3)
    (tmp_path / name).write_bytes(content)
    model = make_model()
    before = model.get_weights()
    with pytest.raises(ValueError, match=rf"cannot read the backup .*{name}: .*start afresh"):
        model.fit(*data(), epochs=5, verbose=0, callbacks=[backup])
    for a, b in zip(before, model.get_weights()):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("name, content", BROKEN)
def test_double_checkpoint_falls_back_from_any_unreadable_last_backup(tmp_path, name, content):
    backup = killed_at(tmp_path, 3, double_checkpoint=True)
    (tmp_path / name).write_bytes(content)
    history = make_model().fit(*data(), batch_size=8, epochs=5, verbose=0, callbacks=[backup])
    assert history.epoch == [2, 3, 4]  # the previous backup is epoch 2's


def test_after_a_fallback_the_previous_backup_is_still_a_good_one(tmp_path):
    straight = make_model()
    straight.fit(*data(), batch_size=8, epochs=5, verbose=0)
    backup = killed_at(tmp_path, 3, double_checkpoint=True)  # backups of epochs 3 and 2
    (tmp_path / "latest.npz").write_bytes(b"")
    # Resumed from epoch 2's backup, killed again after one epoch (a new epoch-3 backup).
    with pytest.raises(KeyboardInterrupt):
        make_model().fit(*data(), batch_size=8, epochs=5, verbose=0, callbacks=[backup, Kill(3)])
    previous = json.loads((tmp_path / "training_metadata.json.bkp").read_text())
    assert previous["epoch"] == 2  # the good epoch-2 backup, not the broken file moved there
    (tmp_path / "latest.npz").write_bytes(b"")  # and the last one breaks again
    resumed = make_model()
    history = resumed.fit(*data(), batch_size=8, epochs=5, verbose=0, callbacks=[backup])
    assert history.epoch == [2, 3, 4]
    for a, b in zip(resumed.get_weights(), straight.get_weights()):
        np.testing.assert_array_equal(a, b)


def test_ctrl_c_keeps_the_last_complete_epoch_s_backup_to_resume_from(tmp_path):
    straight = make_model()
    straight.fit(*data(), batch_size=8, epochs=5, verbose=0)

    backup = mk.callbacks.BackupAndRestore(tmp_path)
    history = make_model().fit(
        *data(), batch_size=8, epochs=5, verbose=0, callbacks=[backup, CtrlC(2, 1)]
    )
    assert history.epoch == [0, 1, 2]  # the interrupted epoch's logs, as fit documents
    # Epoch 2 did not complete: the backup stays that of epoch 1's end, kept to resume.
    assert json.loads((tmp_path / "training_metadata.json").read_text())["epoch"] == 2
    resumed = make_model()
    history = resumed.fit(*data(), batch_size=8, epochs=5, verbose=0, callbacks=[backup])
    assert history.epoch == [2, 3, 4]
    for a, b in zip(resumed.get_weights(), straight.get_weights()):
        np.testing.assert_array_equal(a, b)
    assert not (tmp_path / "training_metadata.json").exists()  # completed: deleted


def test_a_completed_fit_deletes_the_previous_backup_too(tmp_path):
    killed_at(tmp_path, 3, double_checkpoint=True)  # latest.* and their *.bkp
    backup = mk.callbacks.BackupAndRestore(tmp_path)  # double_checkpoint=False now
    history = make_model().fit(*data(), batch_size=8, epochs=5, verbose=0, callbacks=[backup])
    assert history.epoch == [3, 4]
    assert list(tmp_path.iterdir()) == []  # as Keras, which deletes the whole backup_dir


class CtrlCAtEpochEnd(mk.callbacks.Callback):
    def __init__(self, epoch):
        super().__init__()
        self.epoch = epoch

    def on_epoch_end(self, epoch, logs=None):
        if epoch == self.epoch:
            os.kill(os.getpid(), signal.SIGINT)


def test_ctrl_c_between_epochs_keeps_the_backup_of_the_epoch_just_done(tmp_path):
    backup = mk.callbacks.BackupAndRestore(tmp_path)
    callbacks = [backup, CtrlCAtEpochEnd(1)]  # after the backup of epoch 1 is written
    history = make_model().fit(*data(), batch_size=8, epochs=5, verbose=0, callbacks=callbacks)
    assert history.epoch == [0, 1]
    assert json.loads((tmp_path / "training_metadata.json").read_text())["epoch"] == 2
    history = make_model().fit(*data(), batch_size=8, epochs=5, verbose=0, callbacks=[backup])
    assert history.epoch == [2, 3, 4]


def test_a_half_written_last_backup_leaves_a_good_previous_one_too(tmp_path):
    backup = killed_at(tmp_path, 3, double_checkpoint=True)  # backups of epochs 3 and 2
    # A crash between the two writes of epoch 3's backup: its arrays, no metadata.
    (tmp_path / "training_metadata.json").unlink()
    with pytest.raises(KeyboardInterrupt):  # resumed from epoch 2, killed after one epoch
        make_model().fit(*data(), batch_size=8, epochs=5, verbose=0, callbacks=[backup, Kill(3)])
    (tmp_path / "latest.npz").write_bytes(b"")
    history = make_model().fit(*data(), batch_size=8, epochs=5, verbose=0, callbacks=[backup])
    assert history.epoch == [2, 3, 4]  # the previous backup was readable
