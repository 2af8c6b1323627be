"""`InputLayer`: a functional model lists one per Input, where and as Keras 3 lists them."""

import numpy as np
import pytest

import minikeras as mk
from minikeras.layers import InputLayer


def _two_branches(lib):
    x = lib.Input((3,), name="x")
    z = lib.Input((3,))
    hidden = lib.layers.Dense(3, name="hidden")(x)
    joined = lib.layers.Add(name="join")([hidden, z])
    return lib.Model([x, z], lib.layers.Dense(2, name="out")(joined)), x, z


def test_a_functional_model_lists_an_input_layer_per_input_in_keras_order():
    model, x, z = _two_branches(mk)
    kinds = [type(layer).__name__ for layer in model.layers]
    # Keras's order: by decreasing depth; z joins one step before the output's Dense.
    assert kinds == ["InputLayer", "Dense", "InputLayer", "Add", "Dense"]
    first, second = model.layers[0], model.layers[2]
    assert first.output is x and second.output is z
    assert first.name == "x" and first.batch_shape == (None, 3) and first.dtype == "float32"
    assert model.get_layer("x") is first and model.get_layer(index=0) is first
    assert model.operations == model.layers  # (no operation nodes here)
    assert model.layers is not model.layers  # a new list each time, as before
    assert model.count_params() == 12 + 8 and not first.weights


def test_the_listing_matches_keras():
    keras = pytest.importorskip("keras")
    mine, _, _ = _two_branches(mk)
    theirs, _, _ = _two_branches(keras)
    assert [type(layer).__name__ for layer in mine.layers] == [
        type(layer).__name__ for layer in theirs.layers
    ]
    assert [layer.name for layer in mine.layers][:2] == [layer.name for layer in theirs.layers][:2]
    sequential = keras.Sequential([keras.layers.InputLayer((3,)), keras.layers.Dense(2)])
    assert [type(layer).__name__ for layer in sequential.layers] == ["Dense"]
    config = keras.layers.InputLayer(shape=(3,), name="x").get_config()
    assert InputLayer(shape=(3,), name="x").get_config() == {**config, "batch_shape": [None, 3]}


def test_the_summary_lists_inputs_where_the_layers_list_them(capsys):
    model, _, _ = _two_branches(mk)
    model.summary()
    rows = [line.split()[0] for line in capsys.readouterr().out.splitlines()[4:9]]
    assert rows == [layer.name for layer in model.layers]


def test_the_same_input_has_the_same_input_layer_in_every_model():
    x = mk.Input((4,))
    first = mk.Model(x, mk.layers.Dense(2)(x))
    second = mk.Model(x, mk.layers.Dense(3)(x))
    assert first.layers[0] is second.layers[0] and first.layers[0].output is x


def test_an_input_layer_starts_a_model_as_an_input_does():
    layer = InputLayer(shape=(5,), name="features")
    model = mk.Model(layer.output, mk.layers.Dense(2)(layer.output))
    assert model.layers[0] is layer
    stack = mk.Sequential([InputLayer(batch_shape=(None, 5)), mk.layers.Dense(2)])
    assert [type(item).__name__ for item in stack.layers] == ["Dense"]  # as in Keras
    assert stack.output_shape == (None, 2) and stack.operations == stack.layers
    x = np.ones((3, 5), np.float32)
    np.testing.assert_allclose(
        stack(x).numpy(), x @ stack.layers[0].kernel.numpy() + stack.layers[0].bias.numpy()
    )


def test_input_layer_arguments_as_keras_takes_them():
    assert InputLayer(input_shape=(2, 3)).batch_shape == (None, 2, 3)  # Keras's older name
    assert InputLayer(batch_input_shape=(4, 2)).batch_shape == (4, 2)
    assert InputLayer(shape=(2,), batch_size=8, dtype="int32").output.shape == (8, 2)
    tensor = mk.Input((3,), name="t")
    wrapped = InputLayer(input_tensor=tensor, shape=(3,))
    assert wrapped.output is tensor and mk.layers.inputs.input_layer_of(tensor) is wrapped
    with pytest.raises(ValueError, match="shape disagree.*input_tensor"):
        InputLayer(input_tensor=mk.Input((3,)), shape=(4,))
    with pytest.raises(TypeError, match="input_tensor.*minikeras.Input.*ndarray"):
        InputLayer(input_tensor=np.ones(3))
    with pytest.raises(ValueError, match="exactly one of `shape`"):
        InputLayer()
    with pytest.raises(ValueError, match="`sparse=True` is not supported"):
        InputLayer(shape=(3,), sparse=True)
    with pytest.raises(ValueError, match="unrecognized keyword arguments \\['units'\\]"):
        InputLayer(shape=(3,), units=2)


def test_an_input_layer_round_trips_its_config():
    layer = InputLayer(shape=(None, 4), dtype="int32", name="tokens")
    config = layer.get_config()
    assert config == {
        "batch_shape": [None, None, 4],
        "dtype": "int32",
        "sparse": False,
        "ragged": False,
        "name": "tokens",
        "optional": False,
    }
    again = InputLayer.from_config(config)
    assert again.batch_shape == (None, None, 4) and again.dtype == "int32"
    assert again.name == "tokens"


@pytest.mark.parametrize("suffix", ["minikeras", "keras"])
def test_a_loaded_functional_model_lists_its_input_layers(tmp_path, suffix):
    model, _, _ = _two_branches(mk)
    model.save(tmp_path / f"m.{suffix}")
    loaded = mk.models.load_model(tmp_path / f"m.{suffix}")
    kinds = [type(layer).__name__ for layer in loaded.layers]
    assert kinds == ["InputLayer", "Dense", "InputLayer", "Add", "Dense"]
    assert loaded.layers[0].name == "x" and loaded.layers[0].output is loaded.inputs[0]
    data = [np.ones((2, 3), np.float32), np.zeros((2, 3), np.float32)]
    np.testing.assert_array_equal(loaded.predict(data, verbose=0), model.predict(data, verbose=0))


def test_an_unnamed_input_keeps_its_input_layers_name_through_a_file(tmp_path):
    x = mk.Input((3,))  # named by the layer counter, as Keras names it
    model = mk.Model(x, mk.layers.Dense(2, name="d")(x))
    name = model.layers[0].name
    assert name.startswith("input_layer")
    for suffix in ("minikeras", "keras"):
        model.save(tmp_path / f"m.{suffix}")
        assert mk.models.load_model(tmp_path / f"m.{suffix}").layers[0].name == name


@pytest.mark.parametrize("input_dtype", ["float16", "float32"])
@pytest.mark.parametrize("data_dtype", ["float16", "float32"])
def test_a_functional_model_computes_in_its_input_s_dtype(input_dtype, data_dtype):
    # As Keras: the data is converted to the Input's dtype, so results have the symbolic
    # output's dtype (the model's float32 policy casts on the way in; the Input's wins).
    x = mk.Input((3,), dtype=input_dtype)
    model = mk.Model(x, mk.ops.exp(x))
    assert model.output.dtype == input_dtype
    data = np.array([[0.0, 1.0, 0.1]] * 2, data_dtype)
    expected = np.exp(data.astype(input_dtype))
    for result in (model(data), model.predict(data, verbose=0)):
        assert np.dtype(result.dtype) == input_dtype
        np.testing.assert_array_equal(np.asarray(result), expected)


@pytest.mark.parametrize("input_dtype", ["float16", "float32"])
@pytest.mark.parametrize("data_dtype", ["float16", "float32"])
def test_a_functional_model_s_result_dtype_as_keras(input_dtype, data_dtype):
    keras = pytest.importorskip("keras")
    data = np.ones((2, 3), data_dtype)
    results = []
    for lib in (mk, keras):
        x = lib.Input((3,), dtype=input_dtype)
        results.append(np.dtype(lib.Model(x, lib.ops.exp(x))(data).dtype))
    assert results[0] == results[1] == input_dtype
