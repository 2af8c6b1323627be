"""InceptionV3 and Xception: channels and sides worked out by hand, errors, "tf" preprocessing;
against Keras (when installed): the same layers and parameter counts, and Keras's weights
predict alike here.
"""

import numpy as np
import pytest
from application_checks import compare_with_keras

import minikeras as mk

RNG = np.random.default_rng(4)


def test_inception_v3_modules_concatenate_their_branches_widths():
    model = mk.applications.InceptionV3(weights=None, input_shape=(75, 75, 3), classes=3)
    widths = {
        "mixed0": 64 + 64 + 96 + 32,
        "mixed1": 64 + 64 + 96 + 64,
        "mixed3": 384 + 96 + 288,  # two strided branches and the max-pooled input
        "mixed7": 4 * 192,
        "mixed8": 320 + 192 + 768,
        "mixed9_0": 2 * 384,
        "mixed10": 320 + 768 + 768 + 192,
    }
    for name, channels in widths.items():
        assert model.get_layer(name).output.shape[-1] == channels
    # 75 -> 37 (3x3 valid, stride 2) -> 35 -> 35 -> 17 (pool) -> 17 -> 15 -> 7 (pool)
    assert model.get_layer("mixed2").output.shape[1:3] == (7, 7)
    assert model.get_layer("mixed3").output.shape[1:3] == (3, 3)
    assert model.get_layer("mixed10").output.shape[1:3] == (1, 1)
    norms = [layer for layer in model.layers if isinstance(layer, mk.layers.BatchNormalization)]
    assert len(norms) == 94 and all(not layer.scale for layer in norms)
    assert [layer.name for layer in model.layers[-2:]] == ["avg_pool", "predictions"]
    out = model.predict(RNG.uniform(-1, 1, (1, 75, 75, 3)).astype("float32"), verbose=0)
    assert out.shape == (1, 3) and out.dtype == np.float32
    np.testing.assert_allclose(out.sum(), 1.0, rtol=1e-5)


def test_xception_blocks_halve_the_side_and_add_a_strided_shortcut():
    model = mk.applications.Xception(weights=None, include_top=False, input_shape=(71, 71, 3))
    # 71 -> 35 (3x3 valid, stride 2) -> 33 -> 17 -> 9 -> 5 (entry blocks) -> 3 (block13)
    for block, side in (("block2", 17), ("block3", 9), ("block4", 5), ("block13", 3)):
        assert model.get_layer(f"{block}_pool").output.shape[1:3] == (side, side)
    shortcuts = [layer for layer in model.layers if isinstance(layer, mk.layers.Conv2D)]
    shortcuts = [layer for layer in shortcuts if layer.kernel_size == (1, 1)]
    assert [layer.filters for layer in shortcuts] == [128, 256, 728, 1024]
    assert all(layer.strides == (2, 2) for layer in shortcuts)
    adds = [layer for layer in model.layers if isinstance(layer, mk.layers.Add)]
    assert len(adds) == 3 + 8 + 1
    names = {layer.name for layer in model.layers}
    assert "block2_sepconv1_act" not in names and "block3_sepconv1_act" in names
    assert model.output_shape == (None, 3, 3, 2048)


def test_inception_and_xception_refuse_small_inputs_and_bad_arguments(tmp_path, monkeypatch):
    with pytest.raises(ValueError, match="at least 75x75"):
        mk.applications.InceptionV3(weights=None, include_top=False, input_shape=(71, 71, 3))
    with pytest.raises(ValueError, match="at least 71x71"):
        mk.applications.Xception(weights=None, include_top=False, input_shape=(64, 64, 3))
    with pytest.raises(ValueError, match=r"should be \(299, 299, 3\)"):
        mk.applications.Xception(input_shape=(224, 224, 3))
    with pytest.raises(ValueError, match="pooling"):
        mk.applications.InceptionV3(weights=None, include_top=False, pooling="min")
    monkeypatch.setenv("KERAS_HOME", str(tmp_path))
    with pytest.raises(FileNotFoundError, match="inception_v3_weights_tf_dim_ordering_tf_kernels"):
        mk.applications.InceptionV3()


@pytest.mark.parametrize("family", ["inception_v3", "xception"])
def test_preprocess_input_is_tf_mode(family):
    images = RNG.uniform(0, 255, (2, 3, 4, 3)).astype("float32")
    out = getattr(mk.applications, family).preprocess_input(images)
    np.testing.assert_allclose(out, images / 127.5 - 1, rtol=1e-6, atol=1e-6)


# Against Keras, when it is installed (KERAS_BACKEND=jax /work/kvenv/bin/python -m pytest).
# Keras under JAX takes 10-40 s to build each of these, so the cases are few.

CASES = {
    "inception_v3_top": ("InceptionV3", {"input_shape": (75, 75, 3), "classes": 10}),
    "xception_top": ("Xception", {"input_shape": (71, 71, 3), "classes": 10}),
}


@pytest.mark.parametrize("case", list(CASES))
def test_layers_weights_and_predictions_equal_kerass(case, tmp_path):
    keras = pytest.importorskip("keras")
    function, arguments = CASES[case]
    images = RNG.uniform(0, 255, (4, *arguments["input_shape"])).astype("float32")
    x = mk.applications.xception.preprocess_input(images)
    compare_with_keras(keras, function, arguments, x, tmp_path)


@pytest.mark.parametrize("family", ["inception_v3", "xception"])
@pytest.mark.parametrize("data_format", ["channels_last", "channels_first"])
def test_preprocess_input_gives_kerass_values(family, data_format):
    keras = pytest.importorskip("keras")
    images = RNG.uniform(0, 255, (2, 3, 4, 3)).astype("float32")
    ours = getattr(mk.applications, family).preprocess_input(images, data_format=data_format)
    theirs = getattr(keras.applications, family).preprocess_input(
        images.copy(), data_format=data_format
    )
    np.testing.assert_allclose(ours, np.asarray(theirs), rtol=1e-6)


@pytest.mark.parametrize(
    "function, file",
    [
        ("Xception", "xception_weights_tf_dim_ordering_tf_kernels_notop.h5"),
        ("InceptionV3", "inception_v3_weights_tf_dim_ordering_tf_kernels_notop.h5"),
    ],
)
def test_imagenet_weights_are_kerass_file_in_its_cache(function, file, tmp_path, monkeypatch):
    monkeypatch.setenv("KERAS_HOME", str(tmp_path))
    with pytest.raises(FileNotFoundError, match=file):
        getattr(mk.applications, function)(include_top=False)
