"""String inputs, as Keras writes them: `Input(dtype="string")`, and string data in `predict`."""

import json
import zipfile

import numpy as np
import pytest

import minikeras as mk

WORDS = np.array([["a"], ["b"], ["c"], ["a"]])


def _lookup_model():
    x = mk.Input((1,), dtype="string", name="word")
    return mk.Model(x, mk.layers.StringLookup(vocabulary=["a", "b"])(x))


def test_string_is_kerass_name_for_str():
    assert mk.config.standardize_dtype("string") == "str"
    assert mk.Input((1,), dtype="string").dtype == mk.Input((1,), dtype=str).dtype == "str"


def test_predict_and_evaluate_take_strings():
    model = _lookup_model()
    expected = [[1], [2], [0], [1]]  # (index 0 is the out-of-vocabulary token)
    np.testing.assert_array_equal(model(WORDS).numpy(), expected)
    np.testing.assert_array_equal(model.predict(WORDS, batch_size=3, verbose=0), expected)


def test_fit_on_strings_through_a_lookup():
    x = mk.Input((1,), dtype="string")
    hot = mk.layers.StringLookup(vocabulary=["a", "b"], output_mode="one_hot")(x)
    model = mk.Model(x, mk.layers.Dense(1, kernel_initializer="zeros")(hot))
    model.compile(mk.optimizers.SGD(0.5), "mse")
    y = np.array([[1.0], [-1.0], [0.0], [1.0]], "float32")
    model.fit(WORDS, y, epochs=30, batch_size=4, verbose=0)
    np.testing.assert_allclose(model.predict(WORDS, verbose=0), y, atol=1e-2)


def test_a_numeric_model_still_refuses_strings_by_name():
    model = mk.Sequential([mk.Input((2,)), mk.layers.Dense(1)])
    with pytest.raises(TypeError, match="sequential.*dtype <U1"):
        model.predict(np.array([["a", "b"]]), verbose=0)


@pytest.mark.parametrize("extension", ["keras", "minikeras"])
def test_saved_files_write_kerass_name_and_load(tmp_path, extension):
    model = _lookup_model()
    path = tmp_path / f"model.{extension}"
    model.save(path)
    loaded = mk.saving.load_model(path)
    assert loaded.inputs[0].dtype == "str"
    np.testing.assert_array_equal(loaded(WORDS).numpy(), model(WORDS).numpy())
    if extension == "keras":
        layers = json.loads(zipfile.ZipFile(path).read("config.json"))["config"]["layers"]
        assert layers[0]["config"]["dtype"] == "string"


def test_sequential_config_writes_kerass_name():
    model = mk.Sequential([mk.Input((1,), dtype="string"), mk.layers.Identity()])
    assert model.get_config()["layers"][0]["config"]["dtype"] == "string"
    assert mk.Sequential.from_config(model.get_config()).inputs[0].dtype == "str"


def test_reads_a_string_input_keras_wrote(tmp_path):
    keras = pytest.importorskip("keras")
    x = keras.Input((1,), dtype="string", name="word")
    path = tmp_path / "keras_model.keras"
    keras.Model(x, keras.layers.Identity()(x)).save(path)
    loaded = mk.saving.load_model(path)
    assert loaded.inputs[0].dtype == "str"
    np.testing.assert_array_equal(loaded(WORDS).numpy(), WORDS)


def test_a_model_with_a_string_input_passes_strings_through():
    x = mk.Input((1,), dtype="string")
    model = mk.Model(x, mk.layers.Identity()(x))
    np.testing.assert_array_equal(model(WORDS).numpy(), WORDS)
    np.testing.assert_array_equal(mk.layers.Identity()(WORDS).numpy(), WORDS)
