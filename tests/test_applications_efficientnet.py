"""`mk.applications.EfficientNetB0`..`B7`: Keras's parameter counts, the blocks' structure,
the in-model preprocessing, drop connect, ImageNet weights from Keras's cache, and (with Keras
installed, `KERAS_BACKEND=jax /work/kvenv/bin/python -m pytest`) Keras's layers, weights files
and predictions.
"""

import math

import numpy as np
import pytest
from application_checks import layer_summary, randomize, write_numbered_legacy_h5

import minikeras as mk
from minikeras.applications import efficientnet

RNG = np.random.default_rng(2)
SMALL = (32, 32, 3)
# Keras 3.15.1's `count_params()` of each variant built with include_top=False.
KERAS_COUNTS_WITHOUT_TOP = {
    "B0": 4049571,
    "B1": 6575239,
    "B2": 7768569,
    "B3": 10783535,
    "B4": 17673823,
    "B5": 28513527,
    "B6": 40960143,
    "B7": 64097687,
}


@pytest.fixture
def zero_convolutions(monkeypatch):
    """Convolutions initialized to zeros: the counts are the same, the build 5x faster (most of
    it is drawing truncated normal values)."""
    monkeypatch.setattr(efficientnet, "conv_initializer", lambda: "zeros")


@pytest.mark.parametrize("variant", ["B0", "B1", "B2", "B3", "B4", "B5", "B6", "B7"])
def test_parameter_counts_without_top_equal_kerass(variant, zero_convolutions):
    model = getattr(mk.applications, f"EfficientNet{variant}")(
        weights=None, include_top=False, input_shape=SMALL
    )
    assert model.count_params() == KERAS_COUNTS_WITHOUT_TOP[variant]
    assert model.name == f"efficientnet{variant.lower()}"


def test_round_filters_scales_to_multiples_of_eight_never_losing_a_tenth():
    assert efficientnet.round_filters(32, 1.0) == 32
    assert efficientnet.round_filters(32, 1.1) == 32  # 35.2 rounds to 32, above 90% of it
    assert efficientnet.round_filters(40, 1.1) == 48  # 44 rounds half up to 48
    assert efficientnet.round_filters(1280, 1.4) == 1792
    assert efficientnet.round_filters(16, 1.2) == 24  # 19.2 rounds to 16, under 90%: one more 8
    assert efficientnet.round_filters(20, 1.0) == 24  # 20 + 4 = 24, a multiple of 8


def test_b0_blocks_expand_depthwise_squeeze_project_and_add_when_shapes_keep():
    model = mk.applications.EfficientNetB0(weights=None, input_shape=SMALL, classes=10)
    names = [layer.name for layer in model.layers]
    assert "block1a_expand_conv" not in names  # the first stage does not expand
    assert model.get_layer("block2a_expand_conv").filters == 16 * 6
    assert model.get_layer("block2a_dwconv_pad").padding == ((0, 1), (0, 1))  # even side 16
    assert model.get_layer("block3a_dwconv").kernel_size == (5, 5)
    assert model.get_layer("block2a_se_reduce").filters == 4  # a quarter of its 16 inputs
    assert model.get_layer("block2a_se_expand").filters == 96
    assert "block2a_add" not in names and "block2b_add" in names
    assert names[-4:] == ["top_activation", "avg_pool", "top_dropout", "predictions"]
    assert model.get_layer("top_dropout").rate == 0.2
    # 16 blocks: drop connect rises as 0.2 * index / 16 over the blocks that add their input
    assert model.get_layer("block2b_drop").rate == pytest.approx(0.2 * 2 / 16)
    assert model.get_layer("block7a_project_bn").output.shape == (None, 1, 1, 320)
    assert model.output_shape == (None, 10)


def test_depth_coefficient_rounds_the_repeats_up():
    model = mk.applications.EfficientNetB1(weights=None, include_top=False, input_shape=SMALL)
    names = {layer.name for layer in model.layers}
    # B0's repeats 1, 2, 2, 3, 3, 4, 1 times 1.1, rounded up: 2, 3, 3, 4, 4, 5, 2
    for stage, repeats in enumerate([2, 3, 3, 4, 4, 5, 2], 1):
        last = chr(ord("a") + repeats - 1)
        assert f"block{stage}{last}_project_bn" in names
        assert f"block{stage}{chr(ord(last) + 1)}_project_bn" not in names
    drops = [layer.rate for layer in model.layers if layer.name.endswith("_drop")]
    assert drops[-1] == pytest.approx(0.2 * 22 / 23)


def test_drop_connect_drops_whole_samples_only_in_training():
    model = mk.applications.EfficientNetB0(weights=None, include_top=False, input_shape=SMALL)
    drop = model.get_layer("block6d_drop")
    x = np.ones((64, 2, 2, 3), dtype="float32")
    np.testing.assert_array_equal(drop(x).numpy(), x)
    mk.utils.set_random_seed(1)
    out = drop(x, training=True).numpy()
    per_sample = out.reshape(64, -1)
    kept = per_sample[:, 0] > 0
    assert np.all(per_sample == per_sample[:, :1])  # one draw per sample
    np.testing.assert_allclose(per_sample[kept], 1 / (1 - drop.rate), rtol=1e-6)
    assert 0 < kept.sum() < 64


def test_the_model_takes_pixels_rescales_by_255_and_normalizes_per_channel():
    model = mk.applications.EfficientNetB0(weights=None, include_top=False, input_shape=SMALL)
    rescaling, normalization = model.layers[1:3]
    assert isinstance(rescaling, mk.layers.Rescaling) and rescaling.scale == 1 / 255
    assert isinstance(normalization, mk.layers.Normalization) and normalization.axis == (3,)
    pixels = RNG.uniform(0, 255, (1, *SMALL)).astype("float32")
    assert efficientnet.preprocess_input(pixels) is pixels


def test_imagenet_weights_load_from_kerass_cache_with_the_extra_std_rescaling(
    tmp_path, monkeypatch, zero_convolutions
):
    monkeypatch.setenv("KERAS_HOME", str(tmp_path))
    with pytest.raises(FileNotFoundError, match="efficientnetb0_notop.h5"):
        mk.applications.EfficientNetB0(include_top=False, input_shape=SMALL)
    reference = mk.applications.EfficientNetB0(weights=None, include_top=False, input_shape=SMALL)
    (tmp_path / "models").mkdir()
    count = write_numbered_legacy_h5(reference, tmp_path / "models" / "efficientnetb0_notop.h5")
    model = mk.applications.EfficientNetB0(include_top=False, input_shape=SMALL)
    with_weights = [layer for layer in model.layers if layer.weights]
    assert len(with_weights) == count
    for number, layer in enumerate(with_weights, 1):
        for weight in layer.weights:
            assert np.all(weight.numpy() == number), (layer.name, weight.name)
    std_scaling = model.layers[3]
    assert isinstance(std_scaling, mk.layers.Rescaling)
    expected = [1 / math.sqrt(s) for s in (0.229, 0.224, 0.225)]
    np.testing.assert_allclose(std_scaling.scale, expected)


def test_channels_first_normalizes_and_squeezes_on_axis_one(zero_convolutions):
    mk.config.set_image_data_format("channels_first")
    try:
        model = mk.applications.EfficientNetB0(
            weights=None, include_top=False, input_shape=(3, 32, 32)
        )
    finally:
        mk.config.set_image_data_format("channels_last")
    assert model.layers[2].axis == (1,)
    assert model.get_layer("stem_bn").axis in (1, [1])
    assert model.get_layer("block2a_se_reshape").target_shape == (96, 1, 1)
    assert model.output_shape == (None, 1280, 1, 1)
    x = RNG.uniform(0, 255, (1, 3, 32, 32)).astype("float32")
    assert model.predict(x, verbose=0).shape == (1, 1280, 1, 1)


def test_an_input_tensor_is_built_on(zero_convolutions):
    source = mk.Input(SMALL)
    flipped = mk.layers.RandomFlip(seed=0)(source)
    model = mk.applications.EfficientNetB0(
        weights=None, include_top=False, input_tensor=flipped, pooling="max"
    )
    assert model.inputs[0] is source and model.layers[-1].name == "max_pool"
    assert model.output_shape == (None, 1280)


@pytest.mark.parametrize(
    "arguments, message",
    [
        ({"weights": "imagenet", "classes": 10}, "classes` must be 1000"),
        ({"weights": None, "input_shape": (16, 16, 3)}, "at least 32x32"),
        ({"weights": "imagenet", "input_shape": (64, 64, 3)}, r"should be \(224, 224, 3\)"),
        ({"weights": None, "include_top": False, "pooling": "sum"}, "pooling"),
    ],
)
def test_bad_arguments_are_refused_with_the_argument_named(arguments, message):
    with pytest.raises(ValueError, match=message):
        mk.applications.EfficientNetB0(**arguments)


# ----------------------------------------------------------------- against Keras


def test_b0_with_top_has_kerass_layers_and_its_weights_file_predicts_alike(tmp_path):
    keras = pytest.importorskip("keras")
    theirs = keras.applications.EfficientNetB0(weights=None, input_shape=SMALL, classes=10)
    randomize(theirs, RNG)
    theirs.save_weights(tmp_path / "b0.weights.h5")
    ours = mk.applications.EfficientNetB0(
        weights=str(tmp_path / "b0.weights.h5"), input_shape=SMALL, classes=10
    )
    assert layer_summary(ours) == layer_summary(theirs)
    assert ours.count_params() == theirs.count_params()
    pixels = RNG.uniform(0, 255, (2, *SMALL)).astype("float32")
    expected = theirs.predict(pixels, verbose=0)
    np.testing.assert_allclose(ours.predict(pixels, verbose=0), expected, rtol=1e-4, atol=1e-6)
    theirs.save(tmp_path / "theirs.keras")
    loaded = mk.models.load_model(tmp_path / "theirs.keras")
    np.testing.assert_allclose(loaded.predict(pixels, verbose=0), expected, rtol=1e-4, atol=1e-6)
    ours.save(tmp_path / "ours.keras")
    back = keras.saving.load_model(tmp_path / "ours.keras")
    np.testing.assert_allclose(back.predict(pixels, verbose=0), expected, rtol=1e-4, atol=1e-6)


def test_b2_features_of_an_odd_input_take_kerass_weights_and_predict_alike():
    keras = pytest.importorskip("keras")
    shape = (33, 35, 3)
    theirs = keras.applications.EfficientNetB2(weights=None, include_top=False, input_shape=shape)
    ours = mk.applications.EfficientNetB2(weights=None, include_top=False, input_shape=shape)
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
    theirs = keras.applications.efficientnet.preprocess_input(pixels.copy())
    np.testing.assert_array_equal(efficientnet.preprocess_input(pixels), theirs)
