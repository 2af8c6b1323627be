"""`BackupAndRestore` (a killed fit resumes bit-exactly); `TensorBoard` (its files read back)."""

import os
import struct

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


def make_model():
    mk.utils.set_random_seed(11)
    model = mk.Sequential([
        mk.Input((4,)),
        mk.layers.Dense(8, activation="relu"),
        mk.layers.Dropout(0.3, seed=5, name="drop"),
        mk.layers.Dense(3),
    ])  # fmt: skip
    model.compile(mk.optimizers.Adam(0.01), mk.losses.SparseCategoricalCrossentropy(True))
    return model


def data():
    rng = np.random.default_rng(0)
    return rng.normal(size=(40, 4)).astype("float32"), rng.integers(0, 3, 40)


def test_a_killed_fit_resumes_bit_exactly_weights_optimizer_and_random_streams(tmp_path):
    x, y = data()
    straight = make_model()
    full = straight.fit(x, y, batch_size=8, epochs=6, verbose=0).history["loss"]
    after = mk.random.generator().bit_generator.state

    killed = make_model()
    backup = mk.callbacks.BackupAndRestore(tmp_path / "backup")
    with pytest.raises(KeyboardInterrupt):
        killed.fit(x, y, batch_size=8, epochs=6, verbose=0, callbacks=[backup, Kill(3)])
    assert os.path.exists(tmp_path / "backup" / "training_metadata.json")

    resumed = make_model()  # a new process: the same code, fresh weights and streams
    mk.random.generator().normal(size=7)  # whatever it drew meanwhile is overwritten
    history = resumed.fit(x, y, batch_size=8, epochs=6, verbose=0, callbacks=[backup])
    assert history.epoch == [3, 4, 5]
    assert history.history["loss"] == full[3:]
    for a, b in zip(resumed.get_weights(), straight.get_weights()):
        np.testing.assert_array_equal(a, b)
    for a, b in zip(resumed.optimizer.variables, straight.optimizer.variables):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert mk.random.generator().bit_generator.state == after
    assert not os.path.exists(tmp_path / "backup" / "training_metadata.json")  # done: deleted


def test_backup_and_restore_refuses_a_foreign_backup(tmp_path):
    x, y = data()
    backup = mk.callbacks.BackupAndRestore(tmp_path, delete_checkpoint=False)
    make_model().fit(x, y, epochs=1, verbose=0, callbacks=[backup])
    other = mk.Sequential([mk.Input((4,)), mk.layers.Dense(3)])
    other.compile("adam", mk.losses.SparseCategoricalCrossentropy(True))
    before = other.get_weights()
    with pytest.raises(ValueError, match="written by another model"):
        other.fit(x, y, epochs=1, verbose=0, callbacks=[backup])
    for a, b in zip(before, other.get_weights()):
        np.testing.assert_array_equal(a, b)


def read_scalars(directory):
    """(tag, step, value) of every scalar in the event files of `directory`, by the format.

    An event file is a sequence of records: length (uint64), its CRC (uint32),
    the bytes of an `Event` protocol buffer, their CRC (uint32).
    """
    from tensorboardX.proto import event_pb2

    found = []
    for name in sorted(os.listdir(directory)):
        with open(os.path.join(directory, name), "rb") as stream:
            raw = stream.read()
        offset = 0
        while offset < len(raw):
            (length,) = struct.unpack("<Q", raw[offset : offset + 8])
            event = event_pb2.Event.FromString(raw[offset + 12 : offset + 12 + length])
            offset += 12 + length + 4
            for value in event.summary.value:
                found.append((value.tag, event.step, value.simple_value))
    return found


def test_tensorboard_writes_epoch_and_batch_scalars_that_read_back(tmp_path):
    pytest.importorskip("tensorboardX")
    x, y = data()
    model = make_model()
    board = mk.callbacks.TensorBoard(log_dir=tmp_path, update_freq=2)
    history = model.fit(x, y, batch_size=10, epochs=3, validation_split=0.25, verbose=0,
                        callbacks=[board])  # fmt: skip
    train = read_scalars(tmp_path / "train")
    epoch_loss = [(step, value) for tag, step, value in train if tag == "epoch_loss"]
    assert [s for s, _ in epoch_loss] == [0, 1, 2]
    np.testing.assert_allclose([v for _, v in epoch_loss], history.history["loss"], rtol=1e-6)
    validation = read_scalars(tmp_path / "validation")
    np.testing.assert_allclose(
        [v for tag, _, v in validation if tag == "epoch_loss"], history.history["val_loss"],
        rtol=1e-6,
    )  # fmt: skip
    # 3 batches an epoch, 9 in all: batch logs at global batches 2, 4, 6, 8.
    assert [s for tag, s, _ in train if tag == "batch_loss"] == [2, 4, 6, 8]


def test_tensorboard_refuses_what_it_cannot_write_and_names_the_missing_extra(monkeypatch):
    with pytest.raises(ValueError, match="histogram_freq=1 is not supported"):
        mk.callbacks.TensorBoard(histogram_freq=1)
    with pytest.raises(ValueError, match="update_freq"):
        mk.callbacks.TensorBoard(update_freq=0)
    import builtins

    real_import = builtins.__import__

    def no_tensorboardx(name, *args, **kwargs):
        if name.startswith("tensorboardX"):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_tensorboardx)
    model = make_model()
    before = model.get_weights()
    with pytest.raises(ImportError, match=r"minikeras\[tensorboard\]"):
        model.fit(*data(), verbose=0, callbacks=[mk.callbacks.TensorBoard("unused")])
    for a, b in zip(before, model.get_weights()):
        np.testing.assert_array_equal(a, b)


def test_double_checkpoint_resumes_from_the_previous_backup_when_the_last_is_unreadable(
    tmp_path,
):
    x, y = data()
    straight = make_model()
    full = straight.fit(x, y, batch_size=8, epochs=5, verbose=0).history["loss"]

    killed = make_model()
    backup = mk.callbacks.BackupAndRestore(tmp_path, double_checkpoint=True)
    with pytest.raises(KeyboardInterrupt):
        killed.fit(x, y, batch_size=8, epochs=5, verbose=0, callbacks=[backup, Kill(3)])
    assert sorted(os.listdir(tmp_path)) == [
        "latest.npz", "latest.npz.bkp", "training_metadata.json", "training_metadata.json.bkp"
    ]  # fmt: skip
    (tmp_path / "latest.npz").write_bytes(b"half a file")  # the epoch-3 backup, unreadable

    resumed = make_model()
    history = resumed.fit(x, y, batch_size=8, epochs=5, verbose=0, callbacks=[backup])
    assert history.epoch == [2, 3, 4]  # from the epoch-2 backup
    assert history.history["loss"] == full[2:]
    for a, b in zip(resumed.get_weights(), straight.get_weights()):
        np.testing.assert_array_equal(a, b)
    assert os.listdir(tmp_path) == []  # both backups deleted at the end


def test_an_unreadable_or_half_written_backup_is_an_error_before_any_change(tmp_path):
    x, y = data()
    backup = mk.callbacks.BackupAndRestore(tmp_path, delete_checkpoint=False)
    model = make_model()
    model.fit(x, y, epochs=2, verbose=0, callbacks=[backup])
    metadata = (tmp_path / "training_metadata.json").read_text()
    # A crash after the arrays of epoch 2 were written, before its metadata: epoch 1's.
    (tmp_path / "training_metadata.json").write_text(metadata.replace('"epoch": 2', '"epoch": 1'))
    before = model.get_weights()
    with pytest.raises(ValueError, match=r"arrays are of epoch 2 but its metadata of epoch 1"):
        model.fit(x, y, epochs=3, verbose=0, callbacks=[backup])
    (tmp_path / "latest.npz").write_bytes(b"half a file")
    with pytest.raises(ValueError, match=r"cannot read the backup in .*delete it to start afresh"):
        model.fit(x, y, epochs=3, verbose=0, callbacks=[backup])
    for a, b in zip(before, model.get_weights()):
        np.testing.assert_array_equal(a, b)
