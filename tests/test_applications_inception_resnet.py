"""InceptionResNetV2 and its CustomScaleLayer: channels, sides and residual scales worked out by
hand, errors, "tf" preprocessing; against Keras (when installed): the same layers and parameter
counts, and Keras's weights predict alike here.
"""

import json
import zipfile

import numpy as np
import pytest
from application_checks import compare_with_keras

import minikeras as mk
from minikeras.applications.inception_resnet_v2 import CustomScaleLayer

RNG = np.random.default_rng(6)
SMALL = (75, 75, 3)


@pytest.fixture(scope="module")
def model():
    """Built once: its 782 layers take a few seconds."""
    return mk.applications.InceptionResNetV2(weights=None, input_shape=SMALL, classes=3)


def test_reductions_concatenate_their_branches_and_halve_the_side(model):
    widths = {
        "mixed_5b": 96 + 64 + 96 + 64,
        "mixed_6a": 384 + 384 + 320,  # two strided branches and the max-pooled input
        "mixed_7a": 384 + 288 + 320 + 1088,
        "block35_1_mixed": 32 + 32 + 64,
        "block17_1_mixed": 192 + 192,
        "block8_1_mixed": 192 + 256,
    }
    for name, channels in widths.items():
        assert model.get_layer(name).output.shape[-1] == channels
    # 75 -> 37 (3x3 valid, stride 2) -> 35 -> 35 -> 17 (pool) -> 17 -> 15 -> 7 (pool)
    assert model.get_layer("mixed_5b").output.shape[1:3] == (7, 7)
    assert model.get_layer("mixed_6a").output.shape[1:3] == (3, 3)
    assert model.get_layer("mixed_7a").output.shape[1:3] == (1, 1)
    assert model.get_layer("conv_7b_ac").output.shape == (None, 1, 1, 1536)
    norms = [layer for layer in model.layers if isinstance(layer, mk.layers.BatchNormalization)]
    assert len(norms) == 5 + 7 + 10 * 6 + 4 + 20 * 4 + 7 + 10 * 4 + 1 and all(
        not layer.scale for layer in norms
    )
    names = [layer.name for layer in model.layers[-5:]]
    assert names == ["conv_7b", "conv_7b_bn", "conv_7b_ac", "avg_pool", "predictions"]


def test_blocks_add_a_scaled_biased_projection_to_their_input(model):
    scales = [layer for layer in model.layers if isinstance(layer, CustomScaleLayer)]
    assert [layer.scale for layer in scales] == [0.17] * 10 + [0.1] * 20 + [0.2] * 9 + [1.0]
    for block, channels in (("block35_3", 320), ("block17_20", 1088), ("block8_10", 2080)):
        projection = model.get_layer(f"{block}_conv")
        assert projection.filters == channels and projection.kernel_size == (1, 1)
        assert projection.bias is not None  # the only biased convolutions, unnormalized
    names = {layer.name for layer in model.layers}
    assert "block8_9_ac" in names and "block8_10_ac" not in names  # the last block is linear
    out = model.predict(RNG.uniform(-1, 1, (2, *SMALL)).astype("float32"), verbose=0)
    assert out.shape == (2, 3) and out.dtype == np.float32
    np.testing.assert_allclose(out.sum(axis=1), 1.0, rtol=1e-5)


def test_custom_scale_layer_adds_the_scaled_branch_and_checks_its_inputs():
    layer = CustomScaleLayer(0.25, name="scale")
    shortcut, branch = RNG.normal(size=(2, 2, 3)).astype("float32")
    np.testing.assert_allclose(layer([shortcut, branch]).numpy(), shortcut + 0.25 * branch)
    assert layer.weights == []
    again = CustomScaleLayer.from_config(layer.get_config())
    assert (again.scale, again.name) == (0.25, "scale")
    assert layer.compute_output_shape([(None, 3), (4, 3)]) == (4, 3)
    with pytest.raises(ValueError, match="same shape, got shapes \\(2, 3\\) and \\(2, 4\\)"):
        layer([np.ones((2, 3)), np.ones((2, 4))])
    with pytest.raises(ValueError, match="list of two tensors"):
        layer(np.ones((2, 3)))
    with pytest.raises(ValueError, match="list of two tensors"):
        layer([np.ones((2, 3))] * 3)


def test_custom_scale_layer_is_saved_under_kerass_module_and_loads(tmp_path):
    inputs = mk.Input((3,))
    branch = mk.layers.Dense(3, name="dense")(inputs)
    model = mk.Model(inputs, CustomScaleLayer(0.5, name="scale")([inputs, branch]))
    model.save(tmp_path / "model.keras")
    with zipfile.ZipFile(tmp_path / "model.keras") as archive:
        entry = json.loads(archive.read("config.json"))["config"]["layers"][-1]
    assert entry["module"] == "keras.src.applications.inception_resnet_v2"
    loaded = mk.models.load_model(tmp_path / "model.keras")
    assert isinstance(loaded.get_layer("scale"), CustomScaleLayer)
    x = RNG.normal(size=(2, 3)).astype("float32")
    np.testing.assert_allclose(loaded.predict(x, verbose=0), model.predict(x, verbose=0))


def test_refuses_small_inputs_and_bad_arguments_and_looks_for_kerass_file(tmp_path, monkeypatch):
    with pytest.raises(ValueError, match="at least 75x75"):
        mk.applications.InceptionResNetV2(weights=None, include_top=False, input_shape=(71, 75, 3))
    with pytest.raises(ValueError, match=r"should be \(299, 299, 3\)"):
        mk.applications.InceptionResNetV2(input_shape=(224, 224, 3))
    with pytest.raises(ValueError, match="pooling"):
        mk.applications.InceptionResNetV2(weights=None, include_top=False, pooling="min")
    with pytest.raises(ValueError, match="classes` must be 1000"):
        mk.applications.InceptionResNetV2(classes=10)
    monkeypatch.setenv("KERAS_HOME", str(tmp_path))
    with pytest.raises(
        FileNotFoundError, match="inception_resnet_v2_weights_tf_dim_ordering_tf_kernels_notop.h5"
    ):
        mk.applications.InceptionResNetV2(include_top=False)


def test_preprocess_input_is_tf_mode():
    images = RNG.uniform(0, 255, (2, 3, 4, 3)).astype("float32")
    out = mk.applications.inception_resnet_v2.preprocess_input(images)
    np.testing.assert_allclose(out, images / 127.5 - 1, rtol=1e-6, atol=1e-6)


# Against Keras, when it is installed (KERAS_BACKEND=jax /work/kvenv/bin/python -m pytest).
# Keras under JAX takes a minute or more to build this model, so it is built once.


def test_layers_weights_files_and_predictions_equal_kerass(tmp_path):
    keras = pytest.importorskip("keras")
    arguments = {"input_shape": SMALL, "classes": 10}
    images = RNG.uniform(0, 255, (8, *SMALL)).astype("float32")
    x = mk.applications.inception_resnet_v2.preprocess_input(images)
    theirs, ours = compare_with_keras(keras, "InceptionResNetV2", arguments, x, tmp_path)
    scale = theirs.get_layer("custom_scale_layer").get_config()
    ours_scale = [layer for layer in ours.layers if isinstance(layer, CustomScaleLayer)][0]
    assert ours_scale.get_config() | {"name": scale["name"], "dtype": scale["dtype"]} == scale
    # A .keras file crosses both ways (its CustomScaleLayers found under Keras's module).
    theirs.save(tmp_path / "theirs.keras")
    loaded = mk.models.load_model(tmp_path / "theirs.keras")
    expected = theirs.predict(x, verbose=0)
    np.testing.assert_allclose(loaded.predict(x, verbose=0), expected, rtol=1e-4, atol=1e-6)
    loaded.save(tmp_path / "ours.keras")
    back = keras.saving.load_model(tmp_path / "ours.keras")
    np.testing.assert_allclose(back.predict(x, verbose=0), expected, rtol=1e-4, atol=1e-6)


def test_custom_scale_layer_files_cross_both_ways_with_keras(tmp_path):
    pytest.importorskip("keras")
    import keras
    from keras.src.applications.inception_resnet_v2 import CustomScaleLayer as KerasScale

    inputs = keras.Input((3,))
    branch = keras.layers.Dense(3, name="dense")(inputs)
    theirs = keras.Model(inputs, KerasScale(0.5, name="scale")([inputs, branch]))
    theirs.save(tmp_path / "theirs.keras")
    ours = mk.models.load_model(tmp_path / "theirs.keras")
    assert isinstance(ours.get_layer("scale"), CustomScaleLayer)
    x = RNG.normal(size=(2, 3)).astype("float32")
    expected = theirs.predict(x, verbose=0)
    np.testing.assert_allclose(ours.predict(x, verbose=0), expected, rtol=1e-6)
    ours.save(tmp_path / "ours.keras")
    back = keras.saving.load_model(tmp_path / "ours.keras")
    assert isinstance(back.get_layer("scale"), KerasScale)
    np.testing.assert_allclose(back.predict(x, verbose=0), expected, rtol=1e-6)


@pytest.mark.parametrize("data_format", ["channels_last", "channels_first"])
def test_preprocess_input_gives_kerass_values(data_format):
    keras = pytest.importorskip("keras")
    images = RNG.uniform(0, 255, (2, 3, 4, 3)).astype("float32")
    ours = mk.applications.inception_resnet_v2.preprocess_input(images, data_format=data_format)
    theirs = keras.applications.inception_resnet_v2.preprocess_input(
        images.copy(), data_format=data_format
    )
    np.testing.assert_allclose(ours, np.asarray(theirs), rtol=1e-6)
