"""DenseNet121/169/201: channel counts worked out by hand, errors, the "torch" preprocessing;
against Keras (when installed): the same layers and parameter counts, and Keras's weights
predict alike here.
"""

import numpy as np
import pytest
from application_checks import compare_with_keras

import minikeras as mk

RNG = np.random.default_rng(2)
SMALL = (32, 32, 3)


def test_dense_blocks_add_32_channels_a_layer_and_transitions_halve_them():
    model = mk.applications.DenseNet121(weights=None, include_top=False, input_shape=SMALL)
    channels = 64
    for stage, blocks in zip((2, 3, 4, 5), (6, 12, 24, 16)):
        channels += 32 * blocks
        assert model.get_layer(f"conv{stage}_block{blocks}_concat").output.shape[-1] == channels
        if stage < 5:
            channels //= 2
            assert model.get_layer(f"pool{stage}_conv").filters == channels
    assert channels == 1024
    # 32 -> 16 (stem) -> 8 (max pool) -> 4 -> 2 -> 1 (three transitions)
    assert model.output_shape == (None, 1, 1, 1024)
    assert [layer.name for layer in model.layers[-2:]] == ["bn", "relu"]


def test_each_layer_of_a_dense_block_has_its_bottleneck_and_3x3_convolution():
    model = mk.applications.DenseNet121(weights=None, include_top=False, input_shape=SMALL)
    first = model.get_layer("conv2_block1_1_conv")
    assert first.kernel.shape == (1, 1, 64, 128) and first.bias is None
    assert model.get_layer("conv2_block2_1_conv").kernel.shape == (1, 1, 96, 128)
    assert model.get_layer("conv2_block1_2_conv").kernel.shape == (3, 3, 128, 32)


@pytest.mark.parametrize("function, channels", [("DenseNet169", 1664), ("DenseNet201", 1920)])
def test_deeper_densenets_end_with_their_channels(function, channels):
    model = getattr(mk.applications, function)(
        weights=None, include_top=False, input_shape=SMALL, pooling="max"
    )
    assert model.output_shape == (None, channels)
    assert model.layers[-1].name == "max_pool"
    assert model.name == function.lower()


def test_densenet_top_predicts_a_float32_distribution():
    model = mk.applications.DenseNet121(weights=None, input_shape=SMALL, classes=4)
    out = model.predict(RNG.uniform(-2, 2, (2, *SMALL)).astype("float32"), verbose=0)
    assert out.shape == (2, 4) and out.dtype == np.float32
    np.testing.assert_allclose(out.sum(axis=1), 1.0, rtol=1e-5)
    assert model.get_layer("predictions").count_params() == 1024 * 4 + 4


def test_densenet_refuses_channels_first_and_bad_arguments():
    mk.config.set_image_data_format("channels_first")
    try:
        with pytest.raises(ValueError, match="channels_last"):
            mk.applications.DenseNet121(weights=None, input_shape=(3, 32, 32))
    finally:
        mk.config.set_image_data_format("channels_last")
    with pytest.raises(ValueError, match="at least 32x32"):
        mk.applications.DenseNet169(weights=None, input_shape=(16, 16, 3))
    with pytest.raises(ValueError, match="classes` must be 1000"):
        mk.applications.DenseNet201(classes=10)


def test_densenet_imagenet_weights_are_looked_for_in_kerass_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("KERAS_HOME", str(tmp_path))
    with pytest.raises(
        FileNotFoundError, match="densenet169_weights_tf_dim_ordering_tf_kernels_notop"
    ):
        mk.applications.DenseNet169(include_top=False)


def test_densenet_preprocess_input_is_torch_mode_by_hand():
    rgb = np.array([[[0.0, 127.5, 255.0]]], dtype="float32")
    out = mk.applications.densenet.preprocess_input(rgb)
    expected = [(0 - 0.485) / 0.229, (0.5 - 0.456) / 0.224, (1 - 0.406) / 0.225]
    np.testing.assert_allclose(out[0, 0], expected, rtol=1e-6)


# Against Keras, when it is installed (KERAS_BACKEND=jax /work/kvenv/bin/python -m pytest).


def test_densenet121_layers_weights_and_predictions_equal_kerass(tmp_path):
    keras = pytest.importorskip("keras")
    images = mk.applications.densenet.preprocess_input(RNG.uniform(0, 255, (4, *SMALL)))
    arguments = {"input_shape": SMALL, "classes": 10}
    compare_with_keras(keras, "DenseNet121", arguments, images.astype("float32"), tmp_path)


@pytest.mark.parametrize("data_format", ["channels_last", "channels_first"])
def test_densenet_preprocess_input_gives_kerass_values(data_format):
    keras = pytest.importorskip("keras")
    images = RNG.uniform(0, 255, (2, 3, 4, 3)).astype("float32")
    ours = mk.applications.densenet.preprocess_input(images, data_format=data_format)
    theirs = keras.applications.densenet.preprocess_input(images.copy(), data_format=data_format)
    np.testing.assert_allclose(ours, np.asarray(theirs), rtol=1e-6)
