"""`mk.applications.EfficientNetV2B0`..`B3`, `S`, `M`, `L`: Keras's parameter counts, fused and
unfused blocks, `include_preprocessing`, ImageNet weights from Keras's cache, and (with Keras
installed, `KERAS_BACKEND=jax /work/kvenv/bin/python -m pytest`) Keras's layers, weights files
and predictions.
"""

import numpy as np
import pytest
from application_checks import layer_summary, randomize, write_numbered_legacy_h5

import minikeras as mk
from minikeras.applications import efficientnet, efficientnet_v2

RNG = np.random.default_rng(3)
SMALL = (32, 32, 3)
# Keras 3.15.1's `count_params()` of each variant built with include_top=False.
KERAS_COUNTS_WITHOUT_TOP = {
    "B0": 5919312,
    "B1": 6931124,
    "B2": 8769374,
    "B3": 12930622,
    "S": 20331360,
    "M": 53150388,
    "L": 117746848,
}


@pytest.fixture
def zero_convolutions(monkeypatch):
    """Convolutions initialized to zeros: the same counts, built much faster."""
    monkeypatch.setattr(efficientnet, "conv_initializer", lambda: "zeros")
    monkeypatch.setattr(efficientnet_v2, "conv_initializer", lambda: "zeros")


@pytest.mark.parametrize("variant", list(KERAS_COUNTS_WITHOUT_TOP))
def test_parameter_counts_without_top_equal_kerass(variant, zero_convolutions):
    model = getattr(mk.applications, f"EfficientNetV2{variant}")(
        weights=None, include_top=False, input_shape=SMALL
    )
    assert model.count_params() == KERAS_COUNTS_WITHOUT_TOP[variant]
    assert model.name == f"efficientnetv2-{variant.lower()}"


def test_round_filters_goes_to_the_nearest_multiple_of_eight():
    assert efficientnet_v2.round_filters(16, 1.2) == 16  # 19.2: EfficientNet's would give 24
    assert efficientnet_v2.round_filters(112, 1.1) == 120  # 123.2
    assert efficientnet_v2.round_filters(1280, 1.2) == 1536
    assert efficientnet_v2.round_filters(2, 1.0) == 8


def test_b0_fused_blocks_first_then_depthwise_blocks_with_squeeze_excite():
    model = mk.applications.EfficientNetV2B0(weights=None, input_shape=SMALL, classes=10)
    names = [layer.name for layer in model.layers]
    # block1a: expand ratio 1, so its projection is the full 3x3 convolution, with swish
    assert model.get_layer("block1a_project_conv").kernel_size == (3, 3)
    assert "block1a_project_activation" in names and "block1a_expand_conv" not in names
    # block2a: fused, the strided 3x3 expansion, then a 1x1 projection without activation
    expand = model.get_layer("block2a_expand_conv")
    assert (expand.kernel_size, expand.strides, expand.filters) == ((3, 3), (2, 2), 64)
    assert model.get_layer("block2a_project_conv").kernel_size == (1, 1)
    assert "block2a_dwconv2" not in names and "block2a_se_squeeze" not in names
    # block4a: MBConv, 1x1 expansion, strided depthwise, squeeze-excite at a quarter of 48
    assert model.get_layer("block4a_expand_conv").kernel_size == (1, 1)
    assert model.get_layer("block4a_dwconv2").strides == (2, 2)
    assert model.get_layer("block4a_se_reduce").filters == 12
    assert model.get_layer("stem_bn").momentum == 0.9
    assert model.get_layer("block6h_project_bn").output.shape == (None, 1, 1, 192)
    # 21 blocks: the drop connect rate of block k (from 0) is 0.2 * k / 21; block1a has none
    assert "block1a_drop" not in names
    assert model.get_layer("block6h_drop").rate == pytest.approx(0.2 * 20 / 21)
    assert names[-3:] == ["avg_pool", "top_dropout", "predictions"]
    assert model.output_shape == (None, 10)


def test_b_variants_normalize_like_imagenet_and_s_m_l_map_pixels_to_minus_one_one(
    zero_convolutions,
):
    pixels = RNG.uniform(0, 255, (1, 1, 1, 3)).astype("float32")
    b1 = mk.applications.EfficientNetV2B1(weights=None, include_top=False, input_shape=SMALL)
    normalize = mk.Model(b1.inputs, b1.layers[2].output)
    mean, std = np.array([0.485, 0.456, 0.406]), np.array([0.229, 0.224, 0.225])
    np.testing.assert_allclose(normalize(pixels).numpy(), (pixels / 255 - mean) / std, rtol=1e-5)
    image = mk.Input(SMALL)
    s = mk.Model(image, efficientnet_v2._preprocessing(image, "s", SMALL))
    np.testing.assert_allclose(s(pixels).numpy(), pixels / 128 - 1, rtol=1e-6)
    with pytest.warns(UserWarning, match="1 or 3 input channels"):
        four = mk.applications.EfficientNetV2B0(
            weights=None, include_top=False, input_shape=(32, 32, 4)
        )
    assert four.layers[1].scale == 1 / 128  # not 3 channels: the [-1, 1] map
    bare = mk.applications.EfficientNetV2B0(
        weights=None, include_top=False, input_shape=SMALL, include_preprocessing=False
    )
    assert bare.layers[1].name == "stem_conv"
    assert efficientnet_v2.preprocess_input(pixels) is pixels


def test_imagenet_weights_load_from_kerass_cache(tmp_path, monkeypatch, zero_convolutions):
    monkeypatch.setenv("KERAS_HOME", str(tmp_path))
    with pytest.raises(FileNotFoundError, match="efficientnetv2-b0_notop.h5"):
        mk.applications.EfficientNetV2B0(include_top=False, input_shape=SMALL)
    reference = mk.applications.EfficientNetV2B0(weights=None, include_top=False, input_shape=SMALL)
    path = tmp_path / "models" / "efficientnetv2-b0_notop.h5"
    path.parent.mkdir()
    count = write_numbered_legacy_h5(reference, path)
    model = mk.applications.EfficientNetV2B0(include_top=False, input_shape=SMALL)
    assert np.all(model.get_layer("stem_conv").kernel.numpy() == 1)
    assert np.all(model.get_layer("top_bn").moving_variance.numpy() == count)


@pytest.mark.parametrize(
    "arguments, message",
    [
        ({"weights": "imagenet", "classes": 10}, "classes` must be 1000"),
        ({"weights": None, "input_shape": (31, 64, 3)}, "at least 32x32"),
        ({"weights": "imagenet", "input_shape": (224, 224, 3)}, r"should be \(384, 384, 3\)"),
    ],
)
def test_bad_arguments_are_refused_with_the_argument_named(arguments, message):
    with pytest.raises(ValueError, match=message):
        mk.applications.EfficientNetV2S(**arguments)


# ----------------------------------------------------------------- against Keras


def test_b0_with_top_has_kerass_layers_and_its_weights_file_predicts_alike(tmp_path):
    keras = pytest.importorskip("keras")
    theirs = keras.applications.EfficientNetV2B0(weights=None, input_shape=SMALL, classes=10)
    randomize(theirs, RNG)
    theirs.save_weights(tmp_path / "b0.weights.h5")
    ours = mk.applications.EfficientNetV2B0(
        weights=str(tmp_path / "b0.weights.h5"), input_shape=SMALL, classes=10
    )
    assert layer_summary(ours) == layer_summary(theirs)
    assert ours.count_params() == theirs.count_params()
    pixels = RNG.uniform(0, 255, (2, *SMALL)).astype("float32")
    np.testing.assert_allclose(
        ours.predict(pixels, verbose=0), theirs.predict(pixels, verbose=0), rtol=1e-4, atol=1e-6
    )


def test_s_features_of_an_odd_input_take_kerass_weights_and_predict_alike():
    keras = pytest.importorskip("keras")
    shape = (33, 35, 3)
    theirs = keras.applications.EfficientNetV2S(weights=None, include_top=False, input_shape=shape)
    ours = mk.applications.EfficientNetV2S(weights=None, include_top=False, input_shape=shape)
    assert layer_summary(ours) == layer_summary(theirs)
    randomize(theirs, RNG)
    ours.set_weights(theirs.get_weights())
    pixels = RNG.uniform(0, 255, (2, *shape)).astype("float32")
    np.testing.assert_allclose(
        ours.predict(pixels, verbose=0), theirs.predict(pixels, verbose=0), rtol=1e-4, atol=1e-5
    )


def test_preprocess_input_is_kerass_pass_through():
    keras = pytest.importorskip("keras")
    pixels = RNG.uniform(0, 255, (2, 3, 4, 3)).astype("float32")
    theirs = keras.applications.efficientnet_v2.preprocess_input(pixels.copy())
    np.testing.assert_array_equal(efficientnet_v2.preprocess_input(pixels), theirs)
