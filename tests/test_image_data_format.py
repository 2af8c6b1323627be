"""`mk.config.set_image_data_format("channels_first")`: what reads it, and what it computes.

Layers made with `data_format=None` take the setting when made and keep it in
their config; ops called with `data_format=None` read it when called. Checked
against explicit `data_format="channels_first"` everywhere, and against Keras
3 under the same setting (same weights, same outputs) where `keras` imports.
"""

import importlib
import inspect

import numpy as np
import pytest

import minikeras as mk
from minikeras import layers, ops
from minikeras.layers.preprocessing.image import ImageLayer

rng = np.random.default_rng(3)


@pytest.fixture
def channels_first():
    """The global layout set to channels first, in minikeras and (if installed) Keras."""
    try:
        keras = importlib.import_module("keras")
    except ImportError:
        keras = None
    mk.config.set_image_data_format("channels_first")
    if keras is not None:
        keras.config.set_image_data_format("channels_first")
    try:
        yield keras
    finally:
        mk.config.set_image_data_format("channels_last")
        if keras is not None:
            keras.config.set_image_data_format("channels_last")


def _need(keras):
    if keras is None:
        pytest.skip("keras is not installed")
    return keras


# ------------------------------------------------------------ which layers read it

# Every layer with a `data_format`, made with none given (module of layers -> layer).
MADE = {
    "Conv1D": lambda lib: lib.Conv1D(2, 3),
    "Conv2D": lambda lib: lib.Conv2D(2, 3),
    "Conv3D": lambda lib: lib.Conv3D(2, 3),
    "Conv1DTranspose": lambda lib: lib.Conv1DTranspose(2, 3),
    "Conv2DTranspose": lambda lib: lib.Conv2DTranspose(2, 3),
    "Conv3DTranspose": lambda lib: lib.Conv3DTranspose(2, 3),
    "DepthwiseConv1D": lambda lib: lib.DepthwiseConv1D(3),
    "DepthwiseConv2D": lambda lib: lib.DepthwiseConv2D(3),
    "SeparableConv1D": lambda lib: lib.SeparableConv1D(2, 3),
    "SeparableConv2D": lambda lib: lib.SeparableConv2D(2, 3),
    "MaxPooling1D": lambda lib: lib.MaxPooling1D(),
    "MaxPooling2D": lambda lib: lib.MaxPooling2D(),
    "MaxPooling3D": lambda lib: lib.MaxPooling3D(),
    "AveragePooling1D": lambda lib: lib.AveragePooling1D(2),
    "AveragePooling2D": lambda lib: lib.AveragePooling2D(2),
    "AveragePooling3D": lambda lib: lib.AveragePooling3D(2),
    "GlobalMaxPooling1D": lambda lib: lib.GlobalMaxPooling1D(),
    "GlobalMaxPooling2D": lambda lib: lib.GlobalMaxPooling2D(),
    "GlobalMaxPooling3D": lambda lib: lib.GlobalMaxPooling3D(),
    "GlobalAveragePooling1D": lambda lib: lib.GlobalAveragePooling1D(),
    "GlobalAveragePooling2D": lambda lib: lib.GlobalAveragePooling2D(),
    "GlobalAveragePooling3D": lambda lib: lib.GlobalAveragePooling3D(),
    "Flatten": lambda lib: lib.Flatten(),
    "AdaptiveMaxPooling1D": lambda lib: lib.AdaptiveMaxPooling1D(2),
    "AdaptiveMaxPooling2D": lambda lib: lib.AdaptiveMaxPooling2D(2),
    "AdaptiveMaxPooling3D": lambda lib: lib.AdaptiveMaxPooling3D(2),
    "AdaptiveAveragePooling1D": lambda lib: lib.AdaptiveAveragePooling1D(2),
    "AdaptiveAveragePooling2D": lambda lib: lib.AdaptiveAveragePooling2D(2),
    "AdaptiveAveragePooling3D": lambda lib: lib.AdaptiveAveragePooling3D(2),
    "ConvLSTM1D": lambda lib: lib.ConvLSTM1D(2, 3),
    "ConvLSTM2D": lambda lib: lib.ConvLSTM2D(2, 3),
    "ConvLSTM3D": lambda lib: lib.ConvLSTM3D(2, 3),
    "STFTSpectrogram": lambda lib: lib.STFTSpectrogram(frame_length=8),
    "ZeroPadding1D": lambda lib: lib.ZeroPadding1D(),
    "ZeroPadding2D": lambda lib: lib.ZeroPadding2D(),
    "ZeroPadding3D": lambda lib: lib.ZeroPadding3D(),
    "Cropping2D": lambda lib: lib.Cropping2D(),
    "Cropping3D": lambda lib: lib.Cropping3D(),
    "UpSampling2D": lambda lib: lib.UpSampling2D(),
    "UpSampling3D": lambda lib: lib.UpSampling3D(),
    "SpatialDropout1D": lambda lib: lib.SpatialDropout1D(0.2),
    "SpatialDropout2D": lambda lib: lib.SpatialDropout2D(0.2),
    "SpatialDropout3D": lambda lib: lib.SpatialDropout3D(0.2),
    "AutoContrast": lambda lib: lib.AutoContrast(),
    "CenterCrop": lambda lib: lib.CenterCrop(2, 2),
    "CutMix": lambda lib: lib.CutMix(),
    "MixUp": lambda lib: lib.MixUp(),
    "RandomBrightness": lambda lib: lib.RandomBrightness(0.1),
    "RandomContrast": lambda lib: lib.RandomContrast(0.1),
    "RandomCrop": lambda lib: lib.RandomCrop(2, 2),
    "RandomErasing": lambda lib: lib.RandomErasing(),
    "RandomFlip": lambda lib: lib.RandomFlip(),
    "RandomGrayscale": lambda lib: lib.RandomGrayscale(),
    "RandomInvert": lambda lib: lib.RandomInvert(),
    "RandomPosterization": lambda lib: lib.RandomPosterization(4),
    "RandomRotation": lambda lib: lib.RandomRotation(0.1),
    "RandomTranslation": lambda lib: lib.RandomTranslation(0.1, 0.1),
    "RandomZoom": lambda lib: lib.RandomZoom(0.1),
    "Resizing": lambda lib: lib.Resizing(2, 2),
    "Solarization": lambda lib: lib.Solarization(),
    "Equalization": lambda lib: lib.Equalization(),
    "RandomHue": lambda lib: lib.RandomHue(0.1),
    "RandomSaturation": lambda lib: lib.RandomSaturation(0.1),
    "RandomColorJitter": lambda lib: lib.RandomColorJitter(),
    "RandomColorDegeneration": lambda lib: lib.RandomColorDegeneration(0.1),
    "RandomSharpness": lambda lib: lib.RandomSharpness(0.1),
    "RandomGaussianBlur": lambda lib: lib.RandomGaussianBlur(),
    "RandomShear": lambda lib: lib.RandomShear(0.1),
    "RandomPerspective": lambda lib: lib.RandomPerspective(),
    "RandomElasticTransform": lambda lib: lib.RandomElasticTransform(),
    "RandAugment": lambda lib: lib.RandAugment(),
    "AugMix": lambda lib: lib.AugMix(),
    "ContrastLimitedAdaptiveHistogramEqualization": (
        lambda lib: lib.ContrastLimitedAdaptiveHistogramEqualization()
    ),
}
# Keras's layers without a data_format, which keep channels (or steps) where they are.
CHANNELS_LAST_ALWAYS = {"SpatialDropout1D"}


def test_the_table_names_every_layer_with_a_data_format():
    found = set()
    for name in dir(layers):
        cls = getattr(layers, name)
        if not (inspect.isclass(cls) and issubclass(cls, layers.Layer)):
            continue
        if issubclass(cls, ImageLayer) or "data_format" in inspect.signature(cls).parameters:
            found.add(cls.__name__)
    assert found == set(MADE)


@pytest.mark.parametrize("name", sorted(MADE))
def test_layers_take_the_setting_when_made_and_keep_it(name, channels_first):
    layer = MADE[name](layers)
    want = "channels_last" if name in CHANNELS_LAST_ALWAYS else "channels_first"
    assert layer.data_format == want
    config = layer.get_config()
    assert config.get("data_format", "channels_last") == want
    mk.config.set_image_data_format("channels_last")
    assert type(layer).from_config(config).data_format == want  # the config holds it
    assert MADE[name](layers).data_format == "channels_last"  # a new layer reads anew
    if channels_first is not None:
        channels_first.config.set_image_data_format("channels_first")
        theirs = MADE[name](channels_first.layers).get_config()
        assert config.get("data_format") == theirs.get("data_format")


def test_cropping1d_and_upsampling1d_take_no_data_format_whatever_the_setting(channels_first):
    x = np.arange(12, dtype="float32").reshape(1, 4, 3)  # (batch, steps, features)
    np.testing.assert_array_equal(layers.Cropping1D((1, 1))(x).numpy(), x[:, 1:3])
    np.testing.assert_array_equal(layers.UpSampling1D(2)(x).numpy(), np.repeat(x, 2, axis=1))
    assert "data_format" not in layers.Cropping1D().get_config()


# ------------------------------------------------------------ what a model computes


def _cnn(lib, **data_format):
    return lib.Sequential(
        [
            lib.Input((3, 10, 9)),
            lib.layers.ZeroPadding2D(1, **data_format),
            lib.layers.Conv2D(4, 3, activation="relu", **data_format),
            lib.layers.DepthwiseConv2D(3, depth_multiplier=2, padding="same", **data_format),
            lib.layers.MaxPooling2D(2, **data_format),
            lib.layers.SeparableConv2D(5, 2, **data_format),
            lib.layers.UpSampling2D(2, **data_format),
            lib.layers.Conv2DTranspose(3, 3, strides=2, padding="same", **data_format),
            lib.layers.Cropping2D(((1, 0), (0, 2)), **data_format),
            lib.layers.AveragePooling2D(2, **data_format),
            lib.layers.SpatialDropout2D(0.5, **data_format),
            lib.layers.Flatten(**data_format),
            lib.layers.Dense(3),
        ]
    )


def _global_average_cnn(lib, **data_format):
    inputs = lib.Input((2, 9))
    x = lib.layers.Conv1D(4, 3, padding="same", **data_format)(inputs)
    x = lib.layers.MaxPooling1D(2, **data_format)(x)
    return lib.Model(inputs, lib.layers.GlobalAveragePooling1D(**data_format)(x))


@pytest.mark.parametrize("make, shape", [(_cnn, (2, 3, 10, 9)), (_global_average_cnn, (3, 2, 9))])
def test_a_cnn_made_under_the_setting_is_the_explicit_channels_first_one(
    make, shape, channels_first
):
    x = rng.standard_normal(shape).astype("float32")
    implicit = make(mk)
    mk.config.set_image_data_format("channels_last")
    explicit = make(mk, data_format="channels_first")
    assert [layer.data_format for layer in implicit.layers if hasattr(layer, "data_format")] == [
        "channels_first"
    ] * sum(hasattr(layer, "data_format") for layer in implicit.layers)
    explicit.set_weights(implicit.get_weights())
    np.testing.assert_array_equal(implicit(x).numpy(), explicit(x).numpy())
    assert implicit.predict(x, verbose=0).shape == explicit(x).shape
    if channels_first is None:
        return
    theirs = make(channels_first)  # under Keras's own channels-first setting
    theirs.set_weights(implicit.get_weights())
    want = channels_first.ops.convert_to_numpy(theirs(x))
    np.testing.assert_allclose(implicit(x).numpy(), want, rtol=1e-4, atol=1e-5)


def test_a_model_saved_under_the_setting_loads_channels_first_under_the_default(
    channels_first, tmp_path
):
    x = rng.standard_normal((2, 3, 10, 9)).astype("float32")
    model = _cnn(mk)
    model.save(tmp_path / "m.keras")
    mk.config.set_image_data_format("channels_last")
    loaded = mk.models.load_model(tmp_path / "m.keras")
    np.testing.assert_array_equal(loaded(x).numpy(), model(x).numpy())


def test_flatten_under_the_setting_flattens_in_keras_order(channels_first):
    x = np.arange(2 * 3 * 2 * 4, dtype="float32").reshape(2, 3, 2, 4)  # (batch, c, h, w)
    out = layers.Flatten()(x).numpy()
    np.testing.assert_array_equal(out, x.transpose(0, 2, 3, 1).reshape(2, -1))
    if channels_first is not None:
        want = channels_first.ops.convert_to_numpy(channels_first.layers.Flatten()(x))
        np.testing.assert_array_equal(out, want)


# ------------------------------------------------------------ image preprocessing

IMAGES = rng.uniform(0, 255, (2, 3, 6, 5)).astype("float32")  # (batch, channels, rows, cols)


@pytest.mark.parametrize(
    "make",
    [
        lambda lib: lib.Resizing(4, 3),
        lambda lib: lib.Resizing(4, 4, crop_to_aspect_ratio=True),
        lambda lib: lib.CenterCrop(4, 3),
    ],
    ids=["resizing", "resizing-crop", "center-crop"],
)
def test_image_layers_under_the_setting_compute_as_keras(make, channels_first):
    out = make(layers)(IMAGES, training=False).numpy()
    mk.config.set_image_data_format("channels_last")
    last = make(layers)(np.moveaxis(IMAGES, 1, -1), training=False).numpy()
    np.testing.assert_allclose(out, np.moveaxis(last, -1, 1), rtol=1e-5, atol=1e-4)
    keras = _need(channels_first)
    keras.config.set_image_data_format("channels_first")
    want = keras.ops.convert_to_numpy(make(keras.layers)(IMAGES, training=False))
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-3)


@pytest.mark.parametrize(
    "make",
    [
        lambda lib: lib.RandomRotation(0.2, seed=1),
        lambda lib: lib.RandomZoom(0.2, seed=1),
        lambda lib: lib.RandomTranslation(0.2, 0.2, seed=1),
        lambda lib: lib.RandomCrop(4, 3, seed=1),
    ],
    ids=["rotation", "zoom", "translation", "crop"],
)
def test_random_image_layers_under_the_setting_give_keras_shapes(make, channels_first):
    out = make(layers)(IMAGES, training=True).numpy()
    assert out.shape[:2] == (2, 3)  # the channels stay on axis 1
    keras = _need(channels_first)
    assert out.shape == tuple(make(keras.layers)(IMAGES, training=True).shape)


def test_random_flip_and_grayscale_under_the_setting_work_on_channels_first(channels_first):
    flipped = layers.RandomFlip("horizontal", seed=2)(IMAGES, training=True).numpy()
    for image, out in zip(IMAGES, flipped):  # width is the last axis
        assert np.array_equal(out, image) or np.array_equal(out, image[..., ::-1])
    gray = layers.RandomGrayscale(1.0, seed=2)(IMAGES, training=True).numpy()
    assert gray.shape == IMAGES.shape
    np.testing.assert_allclose(gray[:, 0], gray[:, 1], rtol=1e-6)
    np.testing.assert_allclose(gray[:, 0], gray[:, 2], rtol=1e-6)


# ------------------------------------------------------------ ops read it when called


def _kernel(*shape):
    return rng.standard_normal(shape).astype("float32")


# op name -> its arguments after the inputs (channels-first inputs of shape (2, 3, 6, 5))
OPS = {
    "conv": dict(kernel=_kernel(2, 2, 3, 4), strides=2, padding="same"),
    "depthwise_conv": dict(kernel=_kernel(3, 3, 3, 2)),
    "separable_conv": dict(depthwise_kernel=_kernel(2, 2, 3, 1),
                           pointwise_kernel=_kernel(1, 1, 3, 4)),
    "conv_transpose": dict(kernel=_kernel(3, 3, 2, 3), strides=2),
    "max_pool": dict(pool_size=2, strides=2),  # Keras's jax max_pool fails on strides=None
    "average_pool": dict(pool_size=3, strides=2, padding="same"),
    "adaptive_average_pool": dict(output_size=(2, 3)),
    "adaptive_max_pool": dict(output_size=2),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(OPS))
def test_ops_read_the_setting_when_called(name, channels_first):
    op, arguments = getattr(ops, name), OPS[name]
    x = rng.standard_normal((2, 3, 6, 5)).astype("float32")
    last = op(np.moveaxis(x, 1, -1), data_format="channels_last", **arguments).numpy()
    first = op(x, data_format="channels_first", **arguments).numpy()
    np.testing.assert_allclose(first, np.moveaxis(last, -1, 1), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(op(x, **arguments).numpy(), first)
    if channels_first is not None:
        want = getattr(channels_first.ops, name)(x, **arguments)
        np.testing.assert_allclose(
            first, channels_first.ops.convert_to_numpy(want), rtol=1e-4, atol=1e-4
        )
    mk.config.set_image_data_format("channels_last")
    np.testing.assert_array_equal(op(np.moveaxis(x, 1, -1), **arguments).numpy(), last)


def test_depth_to_space_defaults_to_channels_last_and_none_reads_the_setting(channels_first):
    x = np.arange(2 * 8 * 2 * 4, dtype="float32").reshape(2, 8, 2, 4)
    np.testing.assert_array_equal(  # Keras's default is "channels_last", not None
        ops.depth_to_space(x, 2).numpy(), ops.depth_to_space(x, 2, "channels_last").numpy()
    )
    np.testing.assert_array_equal(
        ops.depth_to_space(x, 2, None).numpy(), ops.depth_to_space(x, 2, "channels_first").numpy()
    )
    if channels_first is not None:
        for data_format in (None, "channels_last"):
            want = channels_first.ops.depth_to_space(x, 2, data_format=data_format)
            np.testing.assert_array_equal(
                ops.depth_to_space(x, 2, data_format).numpy(),
                channels_first.ops.convert_to_numpy(want),
            )


def test_an_op_error_on_channels_first_inputs_names_their_shape(channels_first):
    with pytest.raises(
        ValueError,
        match=r"conv: inputs' 5 channels .*\(1, 4, 4, 5\).*"
        r"channels_first.: inputs of shape \(1, 5, 4, 4\)",
    ):
        ops.conv(np.ones((1, 5, 4, 4), "float32"), np.ones((3, 3, 2, 2), "float32"))
    with pytest.raises(ValueError, match=r"max_pool: expected inputs"):  # no spatial axis
        ops.max_pool(np.ones((2, 3), "float32"), 2)


def _ops_model(lib):
    inputs = lib.Input((3, 8, 8))
    wider = lib.ops.concatenate([inputs, inputs[:, :1]], axis=1)  # 4 channels
    return lib.Model(
        inputs,
        [
            lib.ops.max_pool(inputs, 2, 2),
            lib.ops.depth_to_space(wider, 2, data_format=None),
            lib.ops.adaptive_average_pool(inputs, (2, 2)),
        ],
    )


def test_an_op_node_keeps_the_layout_it_was_recorded_in(channels_first, tmp_path):
    x = rng.standard_normal((2, 3, 8, 8)).astype("float32")
    model = _ops_model(mk)
    mk.config.set_image_data_format("channels_last")
    outputs = [out.numpy() for out in model(x)]
    assert [out.shape for out in outputs] == [(2, 3, 4, 4), (2, 1, 16, 16), (2, 3, 2, 2)]
    np.testing.assert_array_equal(outputs[0], ops.max_pool(x, 2, 2, "valid", "channels_first"))
    model.save(tmp_path / "m.minikeras")
    for got, want in zip(mk.models.load_model(tmp_path / "m.minikeras")(x), outputs):
        np.testing.assert_array_equal(got.numpy(), want)
    if channels_first is not None:
        channels_first.config.set_image_data_format("channels_first")
        theirs = _ops_model(channels_first)
        channels_first.config.set_image_data_format("channels_last")
        for got, want in zip(outputs, theirs(x)):
            np.testing.assert_allclose(got, channels_first.ops.convert_to_numpy(want), rtol=1e-6)
