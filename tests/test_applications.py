"""`mk.applications` without Keras: shapes and parameter counts worked out by hand, the
preprocessing arithmetic, the class index read from Keras's cache, weights files, errors.

The comparisons with Keras itself are in tests/test_applications_keras.py.
"""

import json

import numpy as np
import pytest

import minikeras as mk
from minikeras.applications import imagenet_utils

RNG = np.random.default_rng(0)
SMALL = (32, 32, 3)


def _conv_params(kernel, channels_in, channels_out, bias=True):
    return kernel * kernel * channels_in * channels_out + (channels_out if bias else 0)


def test_vgg16_without_top_has_its_thirteen_convolutions_and_five_halvings():
    model = mk.applications.VGG16(weights=None, include_top=False, input_shape=SMALL)
    widths = [3, 64, 64, 128, 128, 256, 256, 256, 512, 512, 512, 512, 512, 512]
    expected = sum(_conv_params(3, a, b) for a, b in zip(widths, widths[1:]))
    assert model.count_params() == expected
    assert model.output_shape == (None, 1, 1, 512)  # 32 halved five times
    assert model.name == "vgg16"
    assert [layer.name for layer in model.layers if "pool" in layer.name][-1] == "block5_pool"


def test_vgg19_top_is_flatten_two_dense_4096_and_the_classifier():
    model = mk.applications.VGG19(weights=None, input_shape=SMALL, classes=7)
    widths = [3, 64, 64, 128, 128] + [256] * 4 + [512] * 8
    convs = sum(_conv_params(3, a, b) for a, b in zip(widths, widths[1:]))
    dense = (512 * 4096 + 4096) + (4096 * 4096 + 4096) + (4096 * 7 + 7)
    assert model.count_params() == convs + dense
    assert [layer.name for layer in model.layers[-4:]] == ["flatten", "fc1", "fc2", "predictions"]
    assert model.output_shape == (None, 7)


@pytest.mark.parametrize("pooling, shape", [(None, (None, 2, 2, 2048)), ("max", (None, 2048))])
def test_resnet50_features_are_2048_channels_at_a_32nd_of_the_side(pooling, shape):
    model = mk.applications.ResNet50(
        weights=None, include_top=False, input_shape=(64, 64, 3), pooling=pooling
    )
    assert model.output_shape == shape
    if pooling is not None:
        assert model.layers[-1].name == f"{pooling}_pool"


def test_resnet50_top_predicts_a_float32_distribution():
    model = mk.applications.ResNet50(weights=None, input_shape=SMALL, classes=5)
    out = model.predict(RNG.uniform(0, 255, (2, *SMALL)).astype("float32"), verbose=0)
    assert out.shape == (2, 5) and out.dtype == np.float32
    np.testing.assert_allclose(out.sum(axis=1), 1.0, rtol=1e-5)
    # the stem, four stages of 3, 4, 6, 3 blocks, and a Dense of 2048 * 5 + 5
    assert model.get_layer("conv5_block3_out") is not None
    assert model.get_layer("predictions").count_params() == 2048 * 5 + 5


def test_resnet50v2_blocks_are_pre_activated_and_end_with_post_bn():
    model = mk.applications.ResNet50V2(weights=None, include_top=False, input_shape=SMALL)
    names = [layer.name for layer in model.layers]
    assert names.index("conv2_block1_preact_bn") < names.index("conv2_block1_1_conv")
    assert names[-2:] == ["post_bn", "post_relu"]
    assert "conv1_bn" not in names
    assert model.output_shape == (None, 1, 1, 2048)


def test_mobilenet_v2_widths_follow_alpha_rounded_to_multiples_of_eight():
    model = mk.applications.MobileNetV2(SMALL, alpha=0.35, include_top=False, weights=None)
    assert model.name == "mobilenetv2_0.35_32"
    assert model.get_layer("Conv1").filters == 16  # 32 * 0.35 = 11.2, rounded up to 16
    assert model.get_layer("block_16_project").filters == 112  # 320 * 0.35
    assert model.get_layer("Conv_1").filters == 1280  # kept at 1280 for alpha <= 1
    assert model.output_shape == (None, 1, 1, 1280)
    wide = mk.applications.MobileNetV2(SMALL, alpha=1.4, include_top=False, weights=None)
    assert wide.get_layer("Conv_1").filters == 1792  # 1280 * 1.4


def test_mobilenet_v2_pads_odd_and_even_sides_before_each_strided_depthwise():
    # Conv1 (same, stride 2): 33 -> 17, 35 -> 18; then each of the four stride-2 blocks pads
    # an odd side by (1, 1) and an even one by (0, 1) and convolves 3x3 "valid":
    # 17 -> 9, 18 -> 9, then 9 -> 5 -> 3 -> 2.
    model = mk.applications.MobileNetV2((33, 35, 3), alpha=1.3, include_top=False, weights=None)
    assert model.get_layer("block_1_pad").padding == ((1, 1), (0, 1))
    assert model.output_shape == (None, 2, 2, 1664)  # 1280 * 1.3, a multiple of 8
    assert model.name == "mobilenetv2_1.30_33"


def test_mobilenet_v2_learns_four_labelled_images():
    mk.utils.set_random_seed(0)
    model = mk.applications.MobileNetV2(SMALL, alpha=0.35, weights=None, classes=3)
    model.compile(optimizer=mk.optimizers.Adam(1e-3), loss="sparse_categorical_crossentropy")
    x = np.random.default_rng(0).uniform(-1, 1, (4, *SMALL)).astype("float32")
    y = np.array([0, 1, 2, 0])
    losses = [float(model.train_on_batch(x, y)) for _ in range(8)]  # noisy at first (batch norm)
    assert np.all(np.isfinite(losses)) and losses[-1] < 0.5 * losses[0]


def test_an_input_tensor_is_built_on_and_the_model_starts_from_its_source():
    source = mk.Input(SMALL)
    scaled = mk.layers.Rescaling(1 / 127.5, offset=-1)(source)
    model = mk.applications.MobileNetV2(
        input_tensor=scaled, alpha=0.35, include_top=False, pooling="avg", weights=None
    )
    assert model.inputs[0] is source
    assert model.output_shape == (None, 1280)
    with pytest.raises(TypeError, match="symbolic tensor"):
        mk.applications.VGG16(weights=None, include_top=False, input_tensor=np.ones((1, *SMALL)))


def test_weights_from_a_file_are_loaded_by_the_weights_argument(tmp_path):
    model = mk.applications.MobileNetV2(SMALL, alpha=0.35, include_top=False, weights=None)
    path = tmp_path / "mobilenet.weights.h5"
    model.save_weights(path)
    again = mk.applications.MobileNetV2(SMALL, alpha=0.35, include_top=False, weights=str(path))
    for ours, theirs in zip(model.get_weights(), again.get_weights()):
        np.testing.assert_array_equal(ours, theirs)


def _write_legacy_h5(model, path, values):
    """Writes `values` (one array per weight of `model`, in `model.weights` order) in Keras's
    older layout, by hand: layer_names, and per layer its weight_names then the arrays."""
    import h5py

    position = {id(variable): i for i, variable in enumerate(model.weights)}
    with h5py.File(path, "w") as handle:
        named = [layer for layer in model.layers if layer.weights]
        handle.attrs["layer_names"] = [layer.name.encode() for layer in named]
        for layer in named:
            group = handle.create_group(layer.name)
            ordered = layer.trainable_weights + layer.non_trainable_weights
            names = [f"{layer.name}/{variable.name}:0" for variable in ordered]
            group.attrs["weight_names"] = [name.encode() for name in names]
            for name, variable in zip(names, ordered):
                group[name] = values[position[id(variable)]]


def test_imagenet_weights_in_kerass_cache_load_from_kerass_older_h5_layout(tmp_path, monkeypatch):
    monkeypatch.setenv("KERAS_HOME", str(tmp_path))
    shape = (96, 96, 3)
    reference = mk.applications.MobileNetV2(shape, alpha=0.35, include_top=False, weights=None)
    values = [RNG.uniform(0.5, 1.5, w.shape).astype("float32") for w in reference.weights]
    (tmp_path / "models").mkdir()
    name = "mobilenet_v2_weights_tf_dim_ordering_tf_kernels_0.35_96_no_top.h5"
    _write_legacy_h5(reference, tmp_path / "models" / name, values)
    model = mk.applications.MobileNetV2(shape, alpha=0.35, include_top=False)
    for variable, value in zip(model.weights, values):
        np.testing.assert_array_equal(variable.numpy(), value)


def test_an_older_h5_file_that_does_not_fit_changes_nothing(tmp_path):
    small = mk.applications.MobileNetV2(SMALL, alpha=0.35, include_top=False, weights=None)
    values = [np.ones(w.shape, "float32") for w in small.weights]
    _write_legacy_h5(small, tmp_path / "small.h5", values)
    with pytest.raises(ValueError, match="layers with weights"):  # Conv_1 and its BN missing
        mk.applications.MobileNetV2(SMALL, alpha=0.35, weights=str(tmp_path / "small.h5"))
    wide = mk.applications.MobileNetV2(SMALL, alpha=0.5, include_top=False, weights=None)
    before = [w.numpy().copy() for w in wide.weights]
    from minikeras.applications.legacy_weights import load_legacy_h5

    with pytest.raises(ValueError, match="has shape"):
        load_legacy_h5(wide, tmp_path / "small.h5")
    for variable, value in zip(wide.weights, before):
        np.testing.assert_array_equal(variable.numpy(), value)


def test_imagenet_weights_not_in_kerass_cache_are_refused_before_building(tmp_path, monkeypatch):
    monkeypatch.setenv("KERAS_HOME", str(tmp_path))
    with pytest.raises(FileNotFoundError, match="cannot download") as error:
        mk.applications.ResNet50(include_top=False)
    assert "resnet50_weights_tf_dim_ordering_tf_kernels_notop.h5" in str(error.value)
    assert "weights=" in str(error.value)
    with pytest.raises(FileNotFoundError, match=r"_0\.35_96_no_top\.h5"):
        mk.applications.MobileNetV2((96, 96, 3), alpha=0.35, include_top=False)


@pytest.mark.parametrize(
    "arguments, message",
    [
        ({"weights": "no/such/file.h5"}, "weights"),
        ({"weights": "imagenet", "classes": 10}, "classes` must be 1000"),
        ({"weights": None, "classes": 0}, "positive int"),
        ({"weights": None, "include_top": False, "pooling": "mean"}, "pooling"),
        ({"weights": None, "input_shape": (16, 16, 3)}, "at least 32x32"),
        ({"weights": None, "input_shape": (32, 32)}, "three integers"),
        ({"weights": None, "input_shape": (None, None, 3)}, "static input_shape"),
        ({"weights": "imagenet", "input_shape": (64, 64, 3)}, r"should be \(224, 224, 3\)"),
        ({"weights": "imagenet", "classifier_activation": "relu"}, "None or 'softmax'"),
    ],
)
def test_bad_arguments_are_refused_with_the_argument_named(arguments, message):
    with pytest.raises(ValueError, match=message):
        mk.applications.ResNet50(**arguments)


def test_mobilenet_v2_imagenet_alpha_must_be_one_it_was_trained_with():
    with pytest.raises(ValueError, match="alpha must be one of"):
        mk.applications.MobileNetV2(alpha=0.6, include_top=False)


def test_preprocess_modes_by_hand():
    rgb = np.array([[[[10.0, 20.0, 30.0]]]], dtype="float32")
    caffe = mk.applications.vgg16.preprocess_input(rgb.copy())
    np.testing.assert_allclose(caffe[0, 0, 0], [30 - 103.939, 20 - 116.779, 10 - 123.68], rtol=1e-6)
    tf_mode = mk.applications.mobilenet_v2.preprocess_input(rgb)
    np.testing.assert_allclose(tf_mode[0, 0, 0], [10 / 127.5 - 1, 20 / 127.5 - 1, 30 / 127.5 - 1])
    torch = imagenet_utils.preprocess_input(rgb, mode="torch")
    expected = [
        (v / 255 - m) / s
        for v, m, s in zip((10, 20, 30), imagenet_utils.TORCH_MEAN, imagenet_utils.TORCH_STD)
    ]
    np.testing.assert_allclose(torch[0, 0, 0], expected, rtol=1e-6)
    np.testing.assert_array_equal(rgb, [[[[10.0, 20.0, 30.0]]]])  # the caller's array unchanged


def test_preprocess_channels_first_flips_and_centres_axis_one_or_zero():
    batch = np.arange(3 * 4, dtype="float32").reshape(1, 3, 2, 2)
    out = mk.applications.resnet.preprocess_input(batch, data_format="channels_first")
    np.testing.assert_allclose(out[0, 0], batch[0, 2] - 103.939, rtol=1e-6)
    one = mk.applications.resnet.preprocess_input(batch[0], data_format="channels_first")
    np.testing.assert_allclose(one, out[0], rtol=1e-6)


def test_preprocess_integer_images_become_float32_and_tensors_stay_tensors():
    out = mk.applications.resnet_v2.preprocess_input(np.full((2, 2, 3), 255, dtype="uint8"))
    assert out.dtype == np.float32 and np.all(out == 1.0)
    tensor = mk.applications.vgg19.preprocess_input(mk.ops.ones((1, 2, 2, 3)))
    assert isinstance(tensor, mk.Tensor)
    np.testing.assert_allclose(
        mk.ops.convert_to_numpy(tensor)[0, 0, 0], [1 - 103.939, 1 - 116.779, 1 - 123.68], rtol=1e-6
    )


def test_preprocess_refuses_unknown_mode_and_data_format():
    with pytest.raises(ValueError, match="mode"):
        imagenet_utils.preprocess_input(np.zeros((1, 1, 3)), mode="keras")
    with pytest.raises(ValueError, match="data_format"):
        imagenet_utils.preprocess_input(np.zeros((1, 1, 3)), data_format="channels_middle")


def test_decode_predictions_reads_the_class_index_from_kerass_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("KERAS_HOME", str(tmp_path))
    monkeypatch.setattr(imagenet_utils, "_class_index", None)
    with pytest.raises(FileNotFoundError, match="imagenet_class_index.json"):
        mk.applications.resnet50.decode_predictions(np.zeros((1, 1000)))
    (tmp_path / "models").mkdir()
    index = {str(i): [f"n{i:08d}", f"class_{i}"] for i in range(1000)}
    (tmp_path / "models" / "imagenet_class_index.json").write_text(json.dumps(index))
    preds = np.zeros((2, 1000), dtype="float32")
    preds[0, [3, 7, 5]] = [0.5, 0.3, 0.2]
    preds[1, 999] = 1.0
    decoded = mk.applications.vgg16.decode_predictions(preds, top=3)
    assert [entry[:2] for entry in decoded[0]] == [
        ("n00000003", "class_3"),
        ("n00000007", "class_7"),
        ("n00000005", "class_5"),
    ]
    assert decoded[0][0][2] == pytest.approx(0.5)
    assert decoded[1][0][:2] == ("n00000999", "class_999") and len(decoded[1]) == 3
    monkeypatch.setattr(imagenet_utils, "_class_index", None)


def test_channels_first_puts_channels_on_axis_one_everywhere():
    mk.config.set_image_data_format("channels_first")
    try:
        model = mk.applications.MobileNetV2(
            (3, 32, 32), alpha=0.35, include_top=False, weights=None
        )
        resnet = mk.applications.ResNet50V2(
            weights=None, include_top=False, input_shape=(3, 32, 32)
        )
    finally:
        mk.config.set_image_data_format("channels_last")
    assert model.output_shape == (None, 1280, 1, 1)
    assert model.get_layer("bn_Conv1").axis in (1, [1])
    assert resnet.output_shape == (None, 2048, 1, 1)
    x = RNG.uniform(-1, 1, (1, 3, 32, 32)).astype("float32")
    assert model.predict(x, verbose=0).shape == (1, 1280, 1, 1)


def test_an_unusual_number_of_channels_is_built_with_a_warning():
    with pytest.warns(UserWarning, match="1 or 3 input channels"):
        model = mk.applications.VGG16(weights=None, include_top=False, input_shape=(32, 32, 4))
    assert model.get_layer("block1_conv1").kernel.shape == (3, 3, 4, 64)
