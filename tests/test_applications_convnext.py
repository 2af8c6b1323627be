"""`mk.applications.ConvNeXtTiny`..`XLarge` and their `LayerScale` and `StochasticDepth` layers:
Keras's parameter counts, the blocks and names, the in-model normalization, ImageNet weights
from Keras's cache, errors, and (with Keras installed, `KERAS_BACKEND=jax
/work/kvenv/bin/python -m pytest`) Keras's layers, configs, weights files and predictions.
"""

import numpy as np
import pytest
from application_checks import layer_summary, randomize, write_numbered_legacy_h5

import minikeras as mk
from minikeras.applications import convnext

RNG = np.random.default_rng(4)
SMALL = (32, 32, 3)
# Keras 3.15.1's `count_params()` of each variant built with include_top=False.
KERAS_COUNTS_WITHOUT_TOP = {
    "Tiny": 27820128,
    "Small": 49454688,
    "Base": 87566464,
    "Large": 196230336,
    "XLarge": 348147968,
}


def _count_by_hand(depths, widths):
    """The weights of a ConvNeXt without its head, layer by layer."""
    total = 4 * 4 * 3 * widths[0] + widths[0] + 2 * widths[0]  # stem conv and layer norm
    for before, after in zip(widths, widths[1:]):
        total += 2 * before + 2 * 2 * before * after + after  # layer norm, 2x2 conv
    for depth, c in zip(depths, widths):
        block = 7 * 7 * c + c  # depthwise 7x7 with bias
        block += 2 * c  # layer norm
        block += c * 4 * c + 4 * c + 4 * c * c + c  # the two pointwise Dense
        block += c  # LayerScale's gamma
        total += depth * block
    return total + 2 * widths[-1]  # the final layer norm


@pytest.mark.parametrize("variant", list(KERAS_COUNTS_WITHOUT_TOP))
def test_counts_by_hand_equal_kerass_and_the_two_smallest_models(variant):
    depths, widths = convnext.VARIANTS[variant.lower()]
    assert _count_by_hand(depths, widths) == KERAS_COUNTS_WITHOUT_TOP[variant]
    if variant in ("Tiny", "Small"):  # the larger ones take seconds to initialize
        model = getattr(mk.applications, f"ConvNeXt{variant}")(
            weights=None, include_top=False, input_shape=SMALL
        )
        assert model.count_params() == KERAS_COUNTS_WITHOUT_TOP[variant]


def test_tiny_names_its_layers_after_the_model_and_stacks_four_stages():
    model = mk.applications.ConvNeXtTiny(
        weights=None, input_shape=SMALL, classes=10, name="convnext_tiny_x"
    )
    names = [layer.name for layer in model.layers]
    assert names[1:3] == [
        "convnext_tiny_x_prestem_normalization",
        "convnext_tiny_x_stem",
    ]
    assert names[-3:] == [
        "convnext_tiny_x_head_gap",
        "convnext_tiny_x_head_layernorm",
        "convnext_tiny_x_head_dense",
    ]
    stem = model.get_layer("convnext_tiny_x_stem")
    assert isinstance(stem, mk.Sequential)
    assert [layer.name for layer in stem.layers] == [
        "convnext_tiny_x_stem_conv",
        "convnext_tiny_x_stem_layernorm",
    ]
    depthwise = model.get_layer("convnext_tiny_x_stage_2_block_8_depthwise_conv")
    assert (depthwise.kernel_size, depthwise.groups, depthwise.filters) == ((7, 7), 384, 384)
    assert model.get_layer("convnext_tiny_x_stage_3_block_0_pointwise_conv_1").units == 4 * 768
    assert model.get_layer("convnext_tiny_x_downsampling_block_2").output.shape == (
        None,
        1,
        1,
        768,
    )
    scale = model.get_layer("convnext_tiny_x_stage_0_block_0_layer_scale")
    np.testing.assert_array_equal(scale.gamma.numpy(), np.full(96, 1e-6, "float32"))
    assert "convnext_tiny_x_stage_0_block_0_identity" in names  # no stochastic depth
    assert model.output_shape == (None, 10)


def test_the_model_normalizes_pixels_with_imagenets_mean_and_std():
    model = mk.applications.ConvNeXtTiny(weights=None, include_top=False, input_shape=SMALL)
    prestem = mk.Model(model.inputs, model.layers[1].output)
    pixels = RNG.uniform(0, 255, (1, *SMALL)).astype("float32")
    mean, std = np.array([0.485, 0.456, 0.406]) * 255, np.array([0.229, 0.224, 0.225]) * 255
    np.testing.assert_allclose(prestem(pixels).numpy(), (pixels - mean) / std, rtol=1e-5, atol=1e-5)
    bare = mk.applications.ConvNeXtTiny(
        weights=None, include_top=False, input_shape=SMALL, include_preprocessing=False
    )
    assert bare.layers[1].name == "convnext_tiny_stem"
    assert convnext.preprocess_input(pixels) is pixels


@pytest.mark.parametrize("pooling, shape", [(None, (None, 1, 1, 768)), ("max", (None, 768))])
def test_without_top_the_features_end_with_a_layer_normalization(pooling, shape):
    model = mk.applications.ConvNeXtTiny(
        weights=None, include_top=False, input_shape=SMALL, pooling=pooling
    )
    assert isinstance(model.layers[-1], mk.layers.LayerNormalization)
    assert model.output_shape == shape
    features = model.predict(RNG.uniform(0, 255, (2, *SMALL)).astype("float32"), verbose=0)
    np.testing.assert_allclose(features.mean(axis=-1), 0.0, atol=1e-4)  # gamma 1, beta 0


def test_layer_scale_multiplies_the_last_axis_and_round_trips_its_config():
    layer = convnext.LayerScale(0.5, 3, name="scale")
    x = RNG.normal(size=(2, 4, 3)).astype("float32")
    np.testing.assert_allclose(layer(x).numpy(), 0.5 * x, rtol=1e-6)
    assert [w.shape for w in layer.trainable_weights] == [(3,)]
    again = convnext.LayerScale.from_config(layer.get_config())
    assert (again.init_values, again.projection_dim, again.name) == (0.5, 3, "scale")
    with pytest.raises(ValueError, match="last axis 3"):
        convnext.LayerScale(0.5, 3)(np.ones((2, 4)))


def test_stochastic_depth_drops_whole_samples_and_rescales_only_in_training():
    layer = convnext.StochasticDepth(0.25)
    x = np.ones((400, 2, 3), dtype="float32")
    np.testing.assert_array_equal(layer(x).numpy(), x)
    mk.utils.set_random_seed(0)
    out = layer(x, training=True).numpy().reshape(400, -1)
    assert np.all(out == out[:, :1])  # one draw per sample
    np.testing.assert_allclose(np.unique(out), [0.0, 1 / 0.75], rtol=1e-6)
    assert 0.15 < np.mean(out[:, 0] == 0) < 0.35
    assert layer(np.ones((0, 2, 3)), training=True).shape == (0, 2, 3)
    assert convnext.StochasticDepth.from_config(layer.get_config()).drop_path_rate == 0.25
    with pytest.raises(ValueError, match="drop_path_rate"):
        convnext.StochasticDepth(1.0)


def test_layer_scale_and_stochastic_depth_are_saved_under_kerass_module_and_load(tmp_path):
    import json
    import zipfile

    inputs = mk.Input((3,))
    x = convnext.LayerScale(0.5, 3, name="scale")(mk.layers.Dense(3, name="dense")(inputs))
    model = mk.Model(inputs, convnext.StochasticDepth(0.1, name="drop")(x))
    model.save(tmp_path / "model.keras")
    with zipfile.ZipFile(tmp_path / "model.keras") as archive:
        entries = json.loads(archive.read("config.json"))["config"]["layers"]
    assert {e["module"] for e in entries[2:]} == {"keras.src.applications.convnext"}
    loaded = mk.models.load_model(tmp_path / "model.keras")
    assert isinstance(loaded.get_layer("scale"), convnext.LayerScale)
    assert loaded.get_layer("drop").drop_path_rate == 0.1
    x = RNG.normal(size=(2, 3)).astype("float32")
    np.testing.assert_allclose(loaded.predict(x, verbose=0), model.predict(x, verbose=0))


def test_imagenet_weights_load_from_kerass_cache_and_need_a_matching_name(tmp_path, monkeypatch):
    monkeypatch.setenv("KERAS_HOME", str(tmp_path))
    with pytest.raises(FileNotFoundError, match="convnext_tiny_notop.h5"):
        mk.applications.ConvNeXtTiny(include_top=False, input_shape=SMALL)
    with pytest.raises(ValueError, match="must contain 'convnext_tiny'"):
        mk.applications.ConvNeXtTiny(include_top=False, input_shape=SMALL, name="tiny")
    reference = mk.applications.ConvNeXtTiny(weights=None, include_top=False, input_shape=SMALL)
    path = tmp_path / "models" / "convnext_tiny_notop.h5"
    path.parent.mkdir()
    count = write_numbered_legacy_h5(reference, path)
    model = mk.applications.ConvNeXtTiny(include_top=False, input_shape=SMALL)
    assert np.all(model.get_layer("convnext_tiny_stem").weights[0].numpy() == 1)
    assert np.all(model.layers[-1].weights[-1].numpy() == count)


def test_channels_first_and_bad_arguments_are_refused():
    mk.config.set_image_data_format("channels_first")
    try:
        with pytest.raises(ValueError, match="channels_first"):
            mk.applications.ConvNeXtTiny(weights=None, include_top=False)
    finally:
        mk.config.set_image_data_format("channels_last")
    with pytest.raises(ValueError, match="classes` must be 1000"):
        mk.applications.ConvNeXtSmall(classes=10)
    with pytest.raises(ValueError, match="at least 32x32"):
        mk.applications.ConvNeXtBase(weights=None, input_shape=(16, 16, 3))


# ----------------------------------------------------------------- against Keras


def test_tiny_with_top_has_kerass_layers_and_its_weights_file_predicts_alike(tmp_path):
    keras = pytest.importorskip("keras")
    theirs = keras.applications.ConvNeXtTiny(weights=None, input_shape=SMALL, classes=10)
    randomize(theirs, RNG)
    theirs.save_weights(tmp_path / "tiny.weights.h5")
    ours = mk.applications.ConvNeXtTiny(
        weights=str(tmp_path / "tiny.weights.h5"), input_shape=SMALL, classes=10
    )
    assert layer_summary(ours) == layer_summary(theirs)
    assert ours.count_params() == theirs.count_params()
    pixels = RNG.uniform(0, 255, (2, *SMALL)).astype("float32")
    np.testing.assert_allclose(
        ours.predict(pixels, verbose=0), theirs.predict(pixels, verbose=0), rtol=1e-4, atol=1e-5
    )
    scale = theirs.get_layer("convnext_tiny_stage_0_block_0_layer_scale")
    ours_scale = ours.get_layer("convnext_tiny_stage_0_block_0_layer_scale")
    assert ours_scale.get_config() == scale.get_config() | {
        "dtype": ours_scale.get_config()["dtype"]
    }


def test_keras_files_cross_both_ways(tmp_path):
    keras = pytest.importorskip("keras")
    theirs = keras.applications.ConvNeXtTiny(weights=None, input_shape=SMALL, classes=10)
    randomize(theirs, RNG)
    theirs.save(tmp_path / "theirs.keras")
    ours = mk.models.load_model(tmp_path / "theirs.keras")
    pixels = RNG.uniform(0, 255, (2, *SMALL)).astype("float32")
    expected = theirs.predict(pixels, verbose=0)
    np.testing.assert_allclose(ours.predict(pixels, verbose=0), expected, rtol=1e-4, atol=1e-5)
    ours.save(tmp_path / "ours.keras")
    back = keras.saving.load_model(tmp_path / "ours.keras")
    np.testing.assert_allclose(back.predict(pixels, verbose=0), expected, rtol=1e-4, atol=1e-5)


def test_tiny_features_of_an_odd_input_take_kerass_weights_and_predict_alike():
    keras = pytest.importorskip("keras")
    shape = (35, 33, 3)
    arguments = {"include_top": False, "input_shape": shape, "pooling": "avg"}
    theirs = keras.applications.ConvNeXtTiny(weights=None, **arguments)
    ours = mk.applications.ConvNeXtTiny(weights=None, **arguments)
    assert layer_summary(ours) == layer_summary(theirs)
    randomize(theirs, RNG)
    ours.set_weights(theirs.get_weights())
    pixels = RNG.uniform(0, 255, (2, *shape)).astype("float32")
    np.testing.assert_allclose(
        ours.predict(pixels, verbose=0), theirs.predict(pixels, verbose=0), rtol=1e-4, atol=1e-4
    )


def test_stochastic_depth_config_is_kerass():
    pytest.importorskip("keras")
    from keras.src.applications.convnext import StochasticDepth

    theirs = StochasticDepth(0.1, name="drop").get_config()
    ours = convnext.StochasticDepth(0.1, name="drop").get_config()
    assert ours | {"dtype": theirs["dtype"]} == theirs


def test_preprocess_input_is_kerass_pass_through():
    keras = pytest.importorskip("keras")
    pixels = RNG.uniform(0, 255, (2, 3, 4, 3)).astype("float32")
    theirs = keras.applications.convnext.preprocess_input(pixels.copy())
    np.testing.assert_array_equal(convnext.preprocess_input(pixels), theirs)
