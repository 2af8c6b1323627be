"""MobileNet (v1), MobileNetV3Small and MobileNetV3Large: widths worked out by hand, the
built-in rescaling, squeeze-and-excite, errors; against Keras (when installed): the same
layers and parameter counts, and Keras's weights predict alike here.
"""

import numpy as np
import pytest
from application_checks import compare_with_keras

import minikeras as mk

RNG = np.random.default_rng(3)
SMALL = (32, 32, 3)


def _images(count=2):
    return RNG.uniform(0, 255, (count, *SMALL)).astype("float32")


def test_mobilenet_v3_small_widths_and_kernels_follow_its_table():
    model = mk.applications.MobileNetV3Small(SMALL, weights=None, include_top=False)
    assert model.get_layer("conv").filters == 16
    # block 0: no expansion, squeeze-excite to 16 * 0.25 = 4, rounded up to 8
    assert model.get_layer("expanded_conv_squeeze_excite_conv").filters == 8
    assert model.get_layer("expanded_conv_1_expand").filters == 72  # 16 * 72 / 16
    assert model.get_layer("expanded_conv_3_depthwise").kernel_size == (5, 5)
    assert model.get_layer("conv_1").filters == 6 * 96
    assert model.output_shape == (None, 1, 1, 576)  # 32 halved five times
    swishes = [layer for layer in model.layers if isinstance(layer, mk.layers.Activation)]
    assert swishes and all(
        layer.get_config()["activation"] in ("hard_swish", "hard_silu") for layer in swishes
    )


def test_minimalistic_has_3x3_kernels_relu_and_no_squeeze_excite():
    model = mk.applications.MobileNetV3Large(
        SMALL, weights=None, include_top=False, minimalistic=True
    )
    names = [layer.name for layer in model.layers]
    assert not any("squeeze_excite" in name for name in names)
    assert not any(isinstance(layer, mk.layers.Activation) for layer in model.layers)
    assert model.get_layer("expanded_conv_3_depthwise").kernel_size == (3, 3)
    assert model.get_layer("conv_1").filters == 6 * 160


def test_mobilenet_v3_top_is_two_1x1_convolutions_and_alpha_widens_the_first():
    model = mk.applications.MobileNetV3Large(SMALL, alpha=1.25, weights=None, dropout_rate=0)
    assert model.get_layer("conv_2").filters == 1600  # 1280 * 1.25
    assert model.get_layer("logits").filters == 1000
    assert not any(isinstance(layer, mk.layers.Dropout) for layer in model.layers)
    assert model.layers[-1].name == "predictions" and model.output_shape == (None, 1000)
    small = mk.applications.MobileNetV3Small(SMALL, weights=None, classes=3)
    assert small.get_layer("conv_2").filters == 1024
    assert sum(isinstance(layer, mk.layers.Dropout) for layer in small.layers) == 1


def test_mobilenet_v3_rescales_0_to_255_itself():
    model = mk.applications.MobileNetV3Small(SMALL, weights=None, classes=5)
    bare = mk.applications.MobileNetV3Small(
        SMALL, weights=None, classes=5, include_preprocessing=False
    )
    assert isinstance(model.layers[1], mk.layers.Rescaling)
    assert not any(isinstance(layer, mk.layers.Rescaling) for layer in bare.layers)
    bare.set_weights(model.get_weights())
    images = _images()
    out = model.predict(images, verbose=0)
    np.testing.assert_allclose(out.sum(axis=1), 1.0, rtol=1e-5)
    np.testing.assert_allclose(
        bare.predict(images / 127.5 - 1, verbose=0), out, rtol=1e-4, atol=1e-6
    )
    assert mk.applications.mobilenet_v3.preprocess_input(images) is images


def test_squeeze_excite_scales_each_channel_by_a_hard_sigmoid_of_its_mean():
    model = mk.applications.MobileNetV3Small(SMALL, weights=None, include_top=False)
    prefix = "expanded_conv_"
    probe = mk.Model(
        model.inputs,
        [
            model.get_layer(f"{prefix}depthwise_bn").output,
            model.get_layer(f"{prefix}squeeze_excite_mul").output,
        ],
    )
    features, scaled = probe.predict(_images(1), verbose=0)
    features = np.maximum(features, 0)  # the block's first activation is ReLU
    squeeze = model.get_layer(f"{prefix}squeeze_excite_conv")
    excite = model.get_layer(f"{prefix}squeeze_excite_conv_1")
    pooled = features.mean(axis=(1, 2))
    hidden = np.maximum(pooled @ squeeze.kernel.numpy()[0, 0] + squeeze.bias.numpy(), 0)
    gate = hidden @ excite.kernel.numpy()[0, 0] + excite.bias.numpy()
    gate = np.clip(gate + 3, 0, 6) / 6
    np.testing.assert_allclose(scaled, features * gate[:, None, None, :], rtol=1e-4, atol=1e-6)


def test_mobilenet_v3_refuses_bad_arguments():
    with pytest.raises(ValueError, match="at least 32x32"):
        mk.applications.MobileNetV3Small((16, 64, 3), weights=None)
    with pytest.raises(ValueError, match="alpha must be 0.75 or 1.0"):
        mk.applications.MobileNetV3Large(alpha=0.5)
    with pytest.raises(ValueError, match="minimalistic"):
        mk.applications.MobileNetV3Small(alpha=0.75, minimalistic=True)
    with pytest.raises(ValueError, match="pooling"):
        mk.applications.MobileNetV3Small(weights=None, include_top=False, pooling="sum")
    with pytest.raises(ValueError, match="does not match"):
        mk.applications.MobileNetV3Small((32, 32, 3), input_tensor=mk.Input((64, 64, 3)))


def test_mobilenet_v3_free_input_size_and_imagenet_file_name(tmp_path, monkeypatch):
    model = mk.applications.MobileNetV3Small(weights=None, include_top=False, pooling="avg")
    assert model.input_shape == (None, None, None, 3) and model.output_shape == (None, 576)
    monkeypatch.setenv("KERAS_HOME", str(tmp_path))
    with pytest.raises(FileNotFoundError, match="large_minimalistic_224_1.0_float_no_top_v2"):
        mk.applications.MobileNetV3Large((224, 224, 3), include_top=False, minimalistic=True)


def test_mobilenet_widths_depth_multiplier_and_bottom_right_padding():
    model = mk.applications.MobileNet(
        (33, 35, 3), alpha=0.25, depth_multiplier=2, weights=None, include_top=False
    )
    assert model.name == "mobilenet_0.25_33"
    assert model.get_layer("conv1").filters == 8  # int(32 * 0.25)
    assert model.get_layer("conv_dw_1").kernel.shape == (3, 3, 8, 2)
    assert model.get_layer("conv_pw_13").filters == 256
    assert model.get_layer("conv_pad_2").padding == ((0, 1), (0, 1))
    # conv1 "same" stride 2: 33 -> 17, 35 -> 18; then four times (pad bottom-right by one,
    # 3x3 "valid" stride 2, n -> n // 2): 17 -> 8 -> 4 -> 2 -> 1 and 18 -> 9 -> 4 -> 2 -> 1
    assert model.get_layer("conv_dw_2").output.shape[1:3] == (8, 9)
    assert model.output_shape == (None, 1, 1, 256)


def test_mobilenet_top_and_its_errors():
    model = mk.applications.MobileNet(SMALL, alpha=0.25, weights=None, classes=4)
    assert [layer.name for layer in model.layers[-4:]] == [
        "dropout",
        "conv_preds",
        "reshape_2",
        "predictions",
    ]
    out = model.predict(mk.applications.mobilenet.preprocess_input(_images()), verbose=0)
    assert out.shape == (2, 4) and out.dtype == np.float32
    np.testing.assert_allclose(out.sum(axis=1), 1.0, rtol=1e-5)
    with pytest.raises(ValueError, match="depth_multiplier must be 1"):
        mk.applications.MobileNet(depth_multiplier=2)
    with pytest.raises(ValueError, match="alpha must be one of"):
        mk.applications.MobileNet(alpha=0.3)
    with pytest.raises(ValueError, match=r"should be \(224, 224, 3\)"):
        mk.applications.MobileNet((100, 100, 3))


# Against Keras, when it is installed (KERAS_BACKEND=jax /work/kvenv/bin/python -m pytest).
# Keras under JAX takes 10-20 s to build each of these, so the cases are few.

CASES = {
    "v3_small_top": (
        "MobileNetV3Small",
        {"input_shape": SMALL, "classes": 10, "dropout_rate": 0.0},
    ),
    "v3_large_avg": (
        "MobileNetV3Large",
        {"input_shape": SMALL, "include_top": False, "pooling": "avg"},
    ),
    "v1_top": (
        "MobileNet",
        {"input_shape": SMALL, "alpha": 0.25, "classes": 10, "dropout": 0.0},
    ),
}


_models = {}


@pytest.mark.parametrize("case", list(CASES))
def test_layers_weights_and_predictions_equal_kerass(case, tmp_path):
    keras = pytest.importorskip("keras")
    function, arguments = CASES[case]
    family = "mobilenet" if function == "MobileNet" else "mobilenet_v3"
    x = getattr(mk.applications, family).preprocess_input(_images(4))
    _models[case] = compare_with_keras(keras, function, arguments, x, tmp_path)


def test_mobilenet_v3_keras_files_cross_both_ways(tmp_path):
    # The hard sigmoid is tensor arithmetic (`x + 3`, `* (1 / 6)`), not layers, in both.
    keras = pytest.importorskip("keras")
    if "v3_small_top" not in _models:
        pytest.skip("needs the models of test_layers_weights_and_predictions_equal_kerass")
    theirs, ours = _models["v3_small_top"]
    x = _images(4)
    expected = np.asarray(theirs(x, training=True))
    theirs.save(tmp_path / "theirs.keras")
    loaded = mk.models.load_model(tmp_path / "theirs.keras")
    got = mk.ops.convert_to_numpy(loaded(x, training=True))
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)
    ours.save(tmp_path / "ours.keras")
    back = keras.saving.load_model(tmp_path / "ours.keras")
    np.testing.assert_allclose(np.asarray(back(x, training=True)), expected, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("family", ["mobilenet", "mobilenet_v3"])
def test_preprocess_input_gives_kerass_values(family):
    keras = pytest.importorskip("keras")
    images = _images()
    ours = getattr(mk.applications, family).preprocess_input(images.copy())
    theirs = getattr(keras.applications, family).preprocess_input(images.copy())
    np.testing.assert_allclose(ours, np.asarray(theirs), rtol=1e-6)


@pytest.mark.parametrize(
    "arguments, file",
    [
        ({"alpha": 0.25, "input_shape": (128, 128, 3)}, "mobilenet_2_5_128_tf.h5"),
        (
            {"alpha": 0.75, "include_top": False, "input_shape": (224, 224, 3)},
            "mobilenet_7_5_224_tf_no_top.h5",
        ),
    ],
)
def test_mobilenet_imagenet_file_names_spell_alpha_as_keras_does(
    arguments, file, tmp_path, monkeypatch
):
    monkeypatch.setenv("KERAS_HOME", str(tmp_path))
    with pytest.raises(FileNotFoundError, match=file):
        mk.applications.MobileNet(**arguments)
