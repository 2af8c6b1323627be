"""The adaptive pooling layers: Keras 3's values, shapes, configs and `.keras` files."""

import os

import numpy as np
import pytest

import minikeras as mk
from minikeras import layers

NAMES = [f"Adaptive{kind}Pooling{rank}D" for kind in ("Average", "Max") for rank in (1, 2, 3)]
SPATIAL = {1: (7,), 2: (7, 5), 3: (5, 4, 6)}
SIZES = {1: 3, 2: (3, 2), 3: (2, 3, 4)}


def _rank(name):
    return int(name[-2])


def _windows(length, size):
    return [(i * length // size, -(-(i + 1) * length // size)) for i in range(size)]


def test_1d_windows_are_keras_and_pytorch_windows_by_hand():
    x = np.arange(2 * 7 * 3, dtype="float32").reshape(2, 7, 3) ** 1.5
    for name, reduce in (("AdaptiveAveragePooling1D", np.mean), ("AdaptiveMaxPooling1D", np.max)):
        got = getattr(layers, name)(3)(x).numpy()
        want = np.stack([reduce(x[:, a:b], axis=1) for a, b in _windows(7, 3)], axis=1)
        np.testing.assert_allclose(got, want, rtol=1e-6)


@pytest.mark.parametrize("name", NAMES)
def test_channels_first_is_channels_last_transposed(name):
    rank = _rank(name)
    x = np.random.default_rng(0).normal(size=(2, *SPATIAL[rank], 3)).astype("float32")
    last = getattr(layers, name)(SIZES[rank])(x).numpy()
    moved = np.moveaxis(x, -1, 1)
    first = getattr(layers, name)(SIZES[rank], data_format="channels_first")(moved).numpy()
    np.testing.assert_allclose(np.moveaxis(first, 1, -1), last, rtol=1e-6)


@pytest.mark.parametrize("name", NAMES)
def test_output_shape_with_unknown_sizes_and_config_round_trip(name):
    rank = _rank(name)
    layer = getattr(layers, name)(2, data_format="channels_first", name="pool")
    assert layer.output_size == (2,) * rank
    assert layer.compute_output_shape((None, 3, *(None,) * rank)) == (None, 3, *(2,) * rank)
    symbolic = layer(mk.Input((3, *(None,) * rank)))
    assert tuple(symbolic.shape) == (None, 3, *(2,) * rank)
    config = layer.get_config()
    assert config["output_size"] == (2,) * rank and config["data_format"] == "channels_first"
    assert type(layer).from_config(config).get_config() == config


def test_bad_arguments_and_inputs_raise_clear_errors():
    with pytest.raises(TypeError, match="output_size"):
        layers.AdaptiveAveragePooling2D("3")
    with pytest.raises(ValueError, match="output_size"):
        layers.AdaptiveMaxPooling1D((2, 2))
    with pytest.raises(ValueError, match="output_size"):
        layers.AdaptiveMaxPooling3D((2, 0, 2))
    with pytest.raises(ValueError, match="data_format"):
        layers.AdaptiveMaxPooling2D(2, data_format="nhwc")
    with pytest.raises(ValueError, match=r"rank 4 .*got shape \(2, 5, 3\)"):
        layers.AdaptiveAveragePooling2D(2)(np.ones((2, 5, 3), "float32"))


def test_average_gradient_spreads_each_output_over_its_window():
    x = mk.Variable(np.zeros((1, 5, 1), "float32"))
    with mk.GradientTape() as tape:
        y = mk.ops.sum(layers.AdaptiveAveragePooling1D(2)(x))
    grad = tape.gradient(y, x).numpy()[0, :, 0]
    # windows [0, 3) and [2, 5): step 2 is in both.
    np.testing.assert_allclose(grad, [1 / 3, 1 / 3, 2 / 3, 1 / 3, 1 / 3], rtol=1e-6)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("data_format", ["channels_last", "channels_first"])
def test_same_values_as_keras_and_keras_files_cross_both_ways(tmp_path, name, data_format):
    os.environ.setdefault("KERAS_BACKEND", "jax")
    keras = pytest.importorskip("keras")
    rank = _rank(name)
    shape = (*SPATIAL[rank], 3) if data_format == "channels_last" else (3, *SPATIAL[rank])
    x = np.random.default_rng(1).normal(size=(2, *shape)).astype("float32")

    def build(lib):
        inputs = lib.Input(shape)
        return lib.Model(inputs, getattr(lib.layers, name)(SIZES[rank], data_format)(inputs))

    ours, theirs = build(mk), build(keras)
    want = np.asarray(theirs.predict(x, verbose=0))
    np.testing.assert_allclose(ours.predict(x, verbose=0), want, rtol=1e-5, atol=1e-6)
    ours.save(tmp_path / "ours.keras")
    again = keras.saving.load_model(tmp_path / "ours.keras")
    np.testing.assert_allclose(np.asarray(again.predict(x, verbose=0)), want, rtol=1e-5, atol=1e-6)
    theirs.save(tmp_path / "theirs.keras")
    back = mk.models.load_model(tmp_path / "theirs.keras")
    np.testing.assert_allclose(back.predict(x, verbose=0), want, rtol=1e-5, atol=1e-6)
