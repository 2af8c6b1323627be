"""Keras's second layer names (`MaxPool2D`, `Convolution2D`, ...) are the same classes, and
configs and `.keras` files that use either name load, here and in Keras 3.

The Keras checks run when `keras` is importable and skip otherwise.
"""

import json
import os
import zipfile

import numpy as np
import pytest

import minikeras as mk
from minikeras import layers

# second name -> the class Keras names it by
ALIASES = {
    "AvgPool1D": "AveragePooling1D", "AvgPool2D": "AveragePooling2D",
    "AvgPool3D": "AveragePooling3D", "MaxPool1D": "MaxPooling1D", "MaxPool2D": "MaxPooling2D",
    "MaxPool3D": "MaxPooling3D", "GlobalAvgPool1D": "GlobalAveragePooling1D",
    "GlobalAvgPool2D": "GlobalAveragePooling2D", "GlobalAvgPool3D": "GlobalAveragePooling3D",
    "GlobalMaxPool1D": "GlobalMaxPooling1D", "GlobalMaxPool2D": "GlobalMaxPooling2D",
    "GlobalMaxPool3D": "GlobalMaxPooling3D", "Convolution1D": "Conv1D",
    "Convolution2D": "Conv2D", "Convolution3D": "Conv3D",
    "Convolution1DTranspose": "Conv1DTranspose", "Convolution2DTranspose": "Conv2DTranspose",
    "Convolution3DTranspose": "Conv3DTranspose", "SeparableConvolution1D": "SeparableConv1D",
    "SeparableConvolution2D": "SeparableConv2D",
}  # fmt: skip


def _keras():
    os.environ.setdefault("KERAS_BACKEND", "jax")
    return pytest.importorskip("keras")


@pytest.mark.parametrize("alias", sorted(ALIASES))
def test_a_second_name_is_the_same_class(alias):
    assert getattr(layers, alias) is getattr(layers, ALIASES[alias])
    assert alias in layers.__all__


@pytest.mark.parametrize("alias", sorted(ALIASES))
def test_keras_makes_the_same_names_the_same_classes(alias):
    keras = _keras()
    assert getattr(keras.layers, alias) is getattr(keras.layers, ALIASES[alias])
    assert getattr(keras.layers, alias).__name__ == getattr(layers, alias).__name__


def test_the_keras_list_of_second_names_is_the_one_here():
    keras = _keras()
    public = [n for n in dir(keras.layers) if not n.startswith("_")]
    found = {n for n in public if getattr(keras.layers, n).__name__ != n}
    assert found == set(ALIASES) | {"GroupQueryAttention"}  # (its class is GroupedQueryAttention)


def test_an_entry_written_under_a_second_name_loads_as_the_class():
    entry = {"module": "keras.layers", "class_name": "MaxPool2D", "registered_name": None,
             "config": {"pool_size": [3, 3], "name": "pool"}}  # fmt: skip
    layer = mk.saving.deserialize_keras_object(entry)
    assert type(layer) is layers.MaxPooling2D
    assert layer.pool_size == (3, 3)
    # and it is written back under the class's own name, as Keras writes it
    assert mk.saving.serialize_keras_object(layer)["class_name"] == "MaxPooling2D"


def _model(api):
    inputs = api.Input((8, 8, 3))
    x = api.layers.Convolution2D(4, 3, name="conv")(inputs)
    x = api.layers.MaxPool2D(name="pool")(x)
    x = api.layers.SeparableConvolution2D(2, 2, name="sep")(x)
    return api.Model(inputs, api.layers.GlobalAvgPool2D(name="gap")(x))


def _renamed_classes(source, target, renames):
    """A copy of the `.keras` file `source` whose config names layers by `renames`."""
    with zipfile.ZipFile(source) as zin, zipfile.ZipFile(target, "w") as zout:
        for item in zin.infolist():
            data = zin.read(item.filename)
            if item.filename == "config.json":
                text = data.decode()
                for old, new in renames.items():
                    text = text.replace(f'"class_name": "{old}"', f'"class_name": "{new}"')
                assert all(f'"class_name": "{new}"' in text for new in renames.values())
                json.loads(text)
                data = text.encode()
            zout.writestr(item, data)


RENAMES = {
    "Conv2D": "Convolution2D",
    "MaxPooling2D": "MaxPool2D",
    "SeparableConv2D": "SeparableConvolution2D",
    "GlobalAveragePooling2D": "GlobalAvgPool2D",
}


def test_a_file_naming_layers_by_their_second_names_loads(tmp_path):
    model = _model(mk)
    model.save(tmp_path / "model.keras")
    _renamed_classes(tmp_path / "model.keras", tmp_path / "renamed.keras", RENAMES)
    loaded = mk.saving.load_model(tmp_path / "renamed.keras")
    assert [type(layer).__name__ for layer in loaded.layers[1:]] == list(RENAMES)
    x = np.random.default_rng(0).standard_normal((2, 8, 8, 3)).astype("float32")
    np.testing.assert_allclose(loaded.predict(x, verbose=0), model.predict(x, verbose=0))


def test_files_with_either_name_cross_between_keras_and_minikeras(tmp_path):
    keras = _keras()
    x = np.random.default_rng(1).standard_normal((2, 8, 8, 3)).astype("float32")
    theirs = _model(keras)
    theirs.save(tmp_path / "theirs.keras")
    _renamed_classes(tmp_path / "theirs.keras", tmp_path / "theirs_renamed.keras", RENAMES)
    expected = np.asarray(theirs.predict(x, verbose=0))
    for name in ("theirs.keras", "theirs_renamed.keras"):
        back = mk.saving.load_model(tmp_path / name)
        np.testing.assert_allclose(back.predict(x, verbose=0), expected, atol=1e-5)

    ours = _model(mk)
    ours.save(tmp_path / "ours.keras")
    _renamed_classes(tmp_path / "ours.keras", tmp_path / "ours_renamed.keras", RENAMES)
    expected = ours.predict(x, verbose=0)
    for name in ("ours.keras", "ours_renamed.keras"):
        loaded = keras.saving.load_model(tmp_path / name)
        np.testing.assert_allclose(np.asarray(loaded.predict(x, verbose=0)), expected, atol=1e-5)
