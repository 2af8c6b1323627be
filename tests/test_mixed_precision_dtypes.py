"""Mixed precision dtypes: scaled losses, symbolic outputs, preprocessing, GroupNormalization.

Under "mixed_float16" a layer computes in float16 and says so: its eager and
its symbolic (functional API) outputs are float16, preprocessing and
augmentation layers included, as in Keras 3.15. Checked by hand, and against
Keras where it is installed.
"""

import numpy as np
import pytest
from layer_cases import CASES, call, sample

import minikeras as mk
from minikeras.mixed_precision import LossScaleOptimizer
from minikeras.tree import flatten

RNG = np.random.default_rng(0)


def _keras_mixed():
    """Keras, with its global policy set to mixed_float16 (the caller puts float32 back)."""
    keras = pytest.importorskip("keras")
    keras.config.set_dtype_policy("mixed_float16")
    return keras


# ------------------------------------------------------------------ scale_loss


def test_scale_loss_scales_a_float16_loss_in_float32_without_overflow():
    optimizer = LossScaleOptimizer(mk.optimizers.SGD())  # initial_scale 2**15
    loss = mk.ops.convert_to_tensor(np.float16(10.0))
    before = optimizer.scale_loss(loss)  # (not built yet: the initial scale)
    optimizer.build([mk.Variable([1.0])])
    after = optimizer.scale_loss(loss)
    for scaled in (before, after):
        assert scaled.dtype == np.float32  # 327680 overflows float16 (largest 65504)
        assert float(scaled) == 10.0 * 2.0**15
    assert optimizer.scale_loss(mk.ops.convert_to_tensor(np.float64(0.5))).dtype == np.float64


def test_scale_loss_of_a_float16_loss_matches_keras_once_built():
    keras = pytest.importorskip("keras")
    theirs = keras.optimizers.LossScaleOptimizer(keras.optimizers.SGD())
    theirs.build([keras.Variable([1.0])])
    ours = LossScaleOptimizer(mk.optimizers.SGD())
    ours.build([mk.Variable([1.0])])
    expected = theirs.scale_loss(keras.ops.convert_to_tensor(np.float16(10.0)))
    got = ours.scale_loss(mk.ops.convert_to_tensor(np.float16(10.0)))
    assert str(got.dtype) == keras.backend.standardize_dtype(expected.dtype) == "float32"
    assert float(got) == float(expected)


# ------------------------------------------------------------------ symbolic outputs


def _dtypes(outputs):
    return [str(np.dtype(o.dtype)) for o in flatten(outputs)]


@pytest.mark.parametrize("name", sorted(CASES))
def test_symbolic_outputs_have_the_dtype_of_eager_ones_under_mixed_float16(name):
    mk.mixed_precision.set_global_policy("mixed_float16")
    layer, data, style = sample(name, 2, RNG)
    eager = _dtypes(call(layer, data, style))
    fresh, _, _ = sample(name, 2, RNG)
    inputs = [mk.Input(d.shape[1:], dtype=str(d.dtype)) for d in data]
    assert _dtypes(call(fresh, inputs, style)) == eager


def test_a_mixed_functional_model_says_float16_where_keras_does():
    keras = _keras_mixed()
    try:
        x = keras.Input((6, 4))
        y = keras.layers.Dense(3)(keras.layers.LSTM(5, return_sequences=True)(x))
        z = keras.layers.MultiHeadAttention(2, 2)(y, y)
        theirs = [str(t.dtype) for t in (y, z)]
    finally:
        keras.config.set_dtype_policy("float32")
    mk.mixed_precision.set_global_policy("mixed_float16")
    x = mk.Input((6, 4))
    y = mk.layers.Dense(3)(mk.layers.LSTM(5, return_sequences=True)(x))
    z = mk.layers.MultiHeadAttention(2, 2)(y, y)
    assert [str(t.dtype) for t in (y, z)] == theirs == ["float16", "float16"]
    model = mk.Model(x, z)
    assert model(RNG.random((2, 6, 4)).astype("float32")).dtype == np.float16


# ------------------------------------------------------------------ preprocessing

_IMAGES = (4, 5, 3)
# name -> (constructor arguments, sample shape): every float preprocessing and augmentation
# layer; Keras 3.15 returns float16 for each under mixed_float16 (checked below).
PREPROCESSING = {
    "Rescaling": ({"scale": 0.5, "offset": 1.0}, (4,)),
    "Normalization": ({"mean": 1.0, "variance": 4.0}, (4,)),
    "Resizing": ({"height": 3, "width": 2}, _IMAGES),
    "CenterCrop": ({"height": 2, "width": 3}, _IMAGES),
    "RandomFlip": ({"seed": 1}, _IMAGES),
    "RandomCrop": ({"height": 2, "width": 3, "seed": 1}, _IMAGES),
    "RandomRotation": ({"factor": 0.2, "seed": 1}, _IMAGES),
    "RandomTranslation": ({"height_factor": 0.2, "width_factor": 0.2, "seed": 1}, _IMAGES),
    "RandomZoom": ({"height_factor": 0.2, "seed": 1}, _IMAGES),
    "RandomContrast": ({"factor": 0.2, "seed": 1}, _IMAGES),
    "RandomBrightness": ({"factor": 0.2, "seed": 1}, _IMAGES),
    "RandomGrayscale": ({"seed": 1}, _IMAGES),
    "RandomInvert": ({"seed": 1}, _IMAGES),
    "RandomHue": ({"factor": 0.5, "seed": 1}, _IMAGES),
    "RandomSaturation": ({"factor": 0.5, "seed": 1}, _IMAGES),
    "RandomSharpness": ({"factor": 0.5, "seed": 1}, _IMAGES),
    "RandomShear": ({"x_factor": 0.3, "y_factor": 0.3, "seed": 1}, _IMAGES),
    "RandomPosterization": ({"factor": (1, 4), "seed": 1}, _IMAGES),
    "RandomErasing": ({"seed": 1}, _IMAGES),
    "RandomGaussianBlur": ({"seed": 1}, _IMAGES),
    "RandomPerspective": ({"seed": 1}, _IMAGES),
    "RandomElasticTransform": ({"seed": 1}, _IMAGES),
    "RandomColorJitter": ({"brightness_factor": 0.2, "seed": 1}, _IMAGES),
    "RandomColorDegeneration": ({"factor": 0.5, "seed": 1}, _IMAGES),
    "Solarization": ({"addition_factor": 0.2, "threshold_factor": 0.5}, _IMAGES),
    "AutoContrast": ({}, _IMAGES),
    "Equalization": ({}, _IMAGES),
    "MixUp": ({"seed": 1}, _IMAGES),
    "CutMix": ({"seed": 1}, _IMAGES),
    "RandAugment": ({"seed": 1}, _IMAGES),
    "AugMix": ({"seed": 1}, _IMAGES),
    "MelSpectrogram": ({"fft_length": 16, "sequence_stride": 4, "num_mel_bins": 4}, (64,)),
}


def _images(shape):
    return (RNG.random((2, *shape)) * 255).astype("float32")


@pytest.mark.parametrize("name", sorted(PREPROCESSING))
def test_preprocessing_layers_return_the_compute_dtype_under_mixed_float16(name):
    mk.mixed_precision.set_global_policy("mixed_float16")
    arguments, shape = PREPROCESSING[name]
    layer = getattr(mk.layers, name)(**arguments)
    assert layer(_images(shape)).dtype == np.float16  # was float32
    assert layer(mk.Input(shape)).dtype == "float16"


def test_rescaling_and_normalization_compute_in_float16():
    mk.mixed_precision.set_global_policy("mixed_float16")
    x = np.array([[1.0, 2.0, 3.0001]], "float32")
    half = x.astype("float16")
    # (0.1, 0.3 and 0.7 are not float16 numbers: in float32 the results differ)
    rescaled = mk.layers.Rescaling(0.1, offset=0.3)(x).numpy()
    assert rescaled.dtype == np.float16
    np.testing.assert_array_equal(rescaled, half * np.float16(0.1) + np.float16(0.3))
    normalized = mk.layers.Normalization(mean=0.7, variance=4.0)(x).numpy()
    assert normalized.dtype == np.float16
    np.testing.assert_array_equal(normalized, (half - np.float16(0.7)) / np.float16(2.0))


@pytest.mark.parametrize("name", sorted(PREPROCESSING))
def test_keras_returns_float16_from_each_preprocessing_layer(name):
    keras = _keras_mixed()
    try:
        arguments, shape = PREPROCESSING[name]
        out = getattr(keras.layers, name)(**arguments)(_images(shape))
    finally:
        keras.config.set_dtype_policy("float32")
    assert keras.backend.standardize_dtype(out.dtype) == "float16"


# ------------------------------------------------------------------ GroupNormalization


def _group_normalized(x, groups):
    """Hand computation in float32: per sample and group of channels (the last axis)."""
    grouped = x.astype("float32").reshape(x.shape[0], groups, -1)
    mean = grouped.mean(axis=-1, keepdims=True)
    variance = grouped.var(axis=-1, keepdims=True)
    return ((grouped - mean) / np.sqrt(variance + 1e-3)).reshape(x.shape)


def test_group_normalization_normalizes_float16_inputs_in_float32():
    # Squares of 300 overflow float16 (65504): computed in float16, the variance is inf
    # and every output 0.
    x = np.array([[300.0, -300.0, 1.0, 2.0], [-250.0, 250.0, 0.5, -0.5]], "float16")
    layer = mk.layers.GroupNormalization(groups=2, dtype="mixed_float16")
    out = layer(x)
    assert out.dtype == np.float16
    expected = _group_normalized(x, 2).astype("float16")
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-3)


def test_group_normalization_of_float16_inputs_matches_keras():
    keras = pytest.importorskip("keras")
    x = np.array([[300.0, -300.0, 1.0, 2.0], [-250.0, 250.0, 0.5, -0.5]], "float16")
    theirs = keras.layers.GroupNormalization(groups=2, dtype="mixed_float16")
    expected = keras.ops.convert_to_numpy(theirs(x))
    ours = mk.layers.GroupNormalization(groups=2, dtype="mixed_float16")
    ours.build(x.shape)
    ours.set_weights([np.asarray(w) for w in theirs.get_weights()])
    got = ours(x).numpy()
    assert got.dtype == expected.dtype == np.float16
    np.testing.assert_allclose(got, expected, rtol=2e-3, atol=2e-3)
