"""`ModelCheckpoint`'s file suffixes and `BackupAndRestore`'s arguments, against Keras 3.

Keras 3 checks `ModelCheckpoint`'s `filepath` when the callback is made:
`.weights.h5` with `save_weights_only=True`, else `.keras` (or its legacy
`.h5`). minikeras takes its own `.minikeras` / `.weights.minikeras` too and
writes no legacy HDF5 model. The Keras tests skip when Keras is not importable.
"""

import inspect

import numpy as np
import pytest

import minikeras as mk

# (suffix, save_weights_only, minikeras accepts, Keras accepts)
SUFFIXES = [
    ("ckpt.keras", False, True, True),
    ("ckpt-{epoch:02d}.keras", False, True, True),
    ("ckpt.minikeras", False, True, False),
    ("ckpt.h5", False, False, True),
    ("ckpt.weights.h5", False, False, True),
    ("ckpt.weights.minikeras", False, False, False),
    ("ckpt.npz", False, False, False),
    ("ckpt", False, False, False),
    ("ckpt.weights.h5", True, True, True),
    ("w-{epoch}.weights.h5", True, True, True),
    ("ckpt.weights.minikeras", True, True, False),
    ("ckpt.h5", True, False, False),
    ("ckpt.keras", True, False, False),
    ("ckpt.minikeras", True, False, False),
]


@pytest.mark.parametrize(("name", "weights_only", "accepted", "_"), SUFFIXES)
def test_model_checkpoint_checks_the_suffix_when_made(tmp_path, name, weights_only, accepted, _):
    path = str(tmp_path / name)
    if accepted:
        mk.callbacks.ModelCheckpoint(path, save_weights_only=weights_only)
        return
    expected = ".weights.h5" if weights_only else ".keras"
    with pytest.raises(ValueError, match=rf"ModelCheckpoint: .*must end in '{expected}'"):
        mk.callbacks.ModelCheckpoint(path, save_weights_only=weights_only)


def test_model_checkpoint_errors_say_what_to_do():
    with pytest.raises(ValueError, match="for weights only, pass save_weights_only=True"):
        mk.callbacks.ModelCheckpoint("best.weights.h5")
    with pytest.raises(ValueError, match="minikeras writes no legacy HDF5 model file"):
        mk.callbacks.ModelCheckpoint("best.h5")
    with pytest.raises(ValueError, match=r"got filepath='best.keras'"):
        mk.callbacks.ModelCheckpoint("best.keras", save_weights_only=True)


def _fitted_with(callback):
    model = mk.Sequential([mk.Input((2,)), mk.layers.Dense(1)])
    model.compile("sgd", "mse")
    x = np.linspace(0.0, 1.0, 16, dtype="float32").reshape(8, 2)
    model.fit(x, x[:, :1], epochs=2, verbose=0, callbacks=[callback])
    return model


def test_model_checkpoint_writes_keras_files_that_load_back(tmp_path):
    model = _fitted_with(mk.callbacks.ModelCheckpoint(str(tmp_path / "m-{epoch}.keras")))
    loaded = mk.saving.load_model(tmp_path / "m-2.keras")
    for a, b in zip(loaded.get_weights(), model.get_weights(), strict=True):
        np.testing.assert_array_equal(a, b)
    checkpoint = mk.callbacks.ModelCheckpoint(
        str(tmp_path / "w.weights.h5"), save_weights_only=True
    )
    model = _fitted_with(checkpoint)
    other = mk.Sequential([mk.Input((2,)), mk.layers.Dense(1)])
    other.load_weights(tmp_path / "w.weights.h5")
    for a, b in zip(other.get_weights(), model.get_weights(), strict=True):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize(("name", "weights_only", "_", "keras_accepts"), SUFFIXES)
def test_the_suffixes_keras_accepts(tmp_path, name, weights_only, _, keras_accepts):
    keras = pytest.importorskip("keras")
    path = str(tmp_path / name)
    if keras_accepts:
        keras.callbacks.ModelCheckpoint(path, save_weights_only=weights_only)
    else:
        with pytest.raises(ValueError, match="must end in"):
            keras.callbacks.ModelCheckpoint(path, save_weights_only=weights_only)


@pytest.mark.parametrize("name", ["ModelCheckpoint", "BackupAndRestore"])
def test_arguments_and_defaults_are_keras_s(name):
    keras = pytest.importorskip("keras")

    def signature(cls):
        return [(p.name, p.default) for p in inspect.signature(cls).parameters.values()]

    assert signature(getattr(mk.callbacks, name)) == signature(getattr(keras.callbacks, name))


def saves_with_an_unlogged_monitor(library, folder):
    """The files a save_best_only checkpoint watching val_loss writes in a fit without it."""
    x = np.arange(12, dtype="float32").reshape(6, 2)
    model = library.Sequential([library.Input((2,)), library.layers.Dense(1)])
    model.compile("sgd", "mse")
    path = str(folder / "m-{epoch}.keras")
    checkpoint = library.callbacks.ModelCheckpoint(path, monitor="val_loss", save_best_only=True)
    with pytest.warns(UserWarning, match="val_loss"):
        model.fit(x, x[:, :1], epochs=2, verbose=0, callbacks=[checkpoint])
    return sorted(p.name for p in folder.iterdir())


def test_save_best_only_saves_with_a_warning_when_the_monitor_is_not_logged(tmp_path):
    # As Keras 3: nothing to compare, so every epoch is saved (and a warning says why).
    assert saves_with_an_unlogged_monitor(mk, tmp_path) == ["m-1.keras", "m-2.keras"]


def test_save_best_only_without_the_monitor_matches_keras(tmp_path):
    keras = pytest.importorskip("keras")
    (tmp_path / "keras").mkdir()
    (tmp_path / "minikeras").mkdir()
    assert saves_with_an_unlogged_monitor(mk, tmp_path / "minikeras") == (
        saves_with_an_unlogged_monitor(keras, tmp_path / "keras")
    )


def test_save_best_only_saves_the_epochs_validation_freq_skips(tmp_path):
    # As Keras 3 (checked by hand against Keras 3.15): no val_loss, so those epochs save too.
    x = np.arange(12, dtype="float32").reshape(6, 2)
    model = mk.Sequential([mk.Input((2,)), mk.layers.Dense(1)])
    model.compile(mk.optimizers.SGD(0.0), "mse", report_unchanged=False)  # val_loss stays put
    path = str(tmp_path / "m-{epoch}.keras")
    checkpoint = mk.callbacks.ModelCheckpoint(path, save_best_only=True)
    with pytest.warns(UserWarning, match="val_loss"):
        model.fit(x, x[:, :1], epochs=4, validation_data=(x, x[:, :1]), validation_freq=2,
                  verbose=0, callbacks=[checkpoint])  # fmt: skip
    # Epoch 2 is the first validated (saved), epoch 4 does not improve on it.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m-1.keras", "m-2.keras", "m-3.keras"]
