"""`mk.applications` against Keras's `keras.applications`: the same layers (names, classes,
output shapes), the same parameter counts, Keras's weights files load and predict alike,
`.keras` files cross both ways, and `preprocess_input` gives Keras's values.

Run with Keras installed (`KERAS_BACKEND=jax /work/kvenv/bin/python -m pytest`); skipped
without it. Keras under JAX spends most of this file (about a minute) compiling its random
initializers for each new weight shape, so the cases are few and share shapes.
"""

import numpy as np
import pytest
from application_checks import layer_summary, randomize

import minikeras as mk

keras = pytest.importorskip("keras")

RNG = np.random.default_rng(1)
SMALL = (32, 32, 3)
CASES = {
    "vgg19_top": ("VGG19", {"input_shape": SMALL, "classes": 10}),
    "resnet50_top": ("ResNet50", {"input_shape": SMALL, "classes": 10}),
    "resnet101_avg": ("ResNet101", {"include_top": False, "pooling": "avg", "input_shape": SMALL}),
    "resnet152": ("ResNet152", {"include_top": False, "input_shape": SMALL}),
    "resnet50v2_top": ("ResNet50V2", {"input_shape": SMALL, "classes": 10}),
    "mobilenet_v2_top": ("MobileNetV2", {"input_shape": SMALL, "alpha": 0.35, "classes": 10}),
}
_built = {}


def _pair(case):
    """Keras's model and ours for `CASES[case]`, built once per session."""
    if case not in _built:
        function, arguments = CASES[case]
        theirs = getattr(keras.applications, function)(weights=None, **arguments)
        ours = getattr(mk.applications, function)(weights=None, **arguments)
        _built[case] = theirs, ours
    return _built[case]


@pytest.mark.parametrize("case", list(CASES))
def test_layers_and_parameter_counts_equal_kerass(case):
    theirs, ours = _pair(case)
    assert ours.name == theirs.name
    assert layer_summary(ours) == layer_summary(theirs)
    assert ours.count_params() == theirs.count_params()
    assert ours.output_shape == tuple(theirs.output_shape)


@pytest.mark.parametrize("case", ["resnet50_top", "resnet50v2_top", "mobilenet_v2_top"])
def test_kerass_weights_file_loads_by_the_weights_argument_and_predicts_alike(case, tmp_path):
    theirs, _ = _pair(case)
    randomize(theirs, RNG)
    path = tmp_path / "model.weights.h5"
    theirs.save_weights(path)
    function, arguments = CASES[case]
    ours = getattr(mk.applications, function)(weights=str(path), **arguments)
    images = RNG.uniform(0, 255, (2, *SMALL)).astype("float32")
    x = mk.applications.imagenet_utils.preprocess_input(images, mode="tf")
    np.testing.assert_allclose(
        ours.predict(x, verbose=0), theirs.predict(x, verbose=0), rtol=1e-4, atol=1e-5
    )
    # Random weights leave the inference output nearly independent of the input; in
    # training mode batch normalization normalizes with the batch, so every layer shows.
    # (8 images: the 1x1 maps of the last blocks of 2 images would make each statistic
    # one of two values, where float32 rounding alone moves the outputs by 0.1.)
    x = RNG.uniform(-1, 1, (8, *SMALL)).astype("float32")
    expected = np.asarray(theirs(x, training=True))
    assert not np.allclose(expected[0], expected[1], rtol=1e-2)
    got = mk.ops.convert_to_numpy(ours(x, training=True))
    np.testing.assert_allclose(got, expected, rtol=1e-2, atol=1e-3)


def test_keras_files_cross_both_ways(tmp_path):
    theirs, ours = _pair("mobilenet_v2_top")
    randomize(theirs, RNG)
    x = RNG.uniform(-1, 1, (2, *SMALL)).astype("float32")
    theirs.save(tmp_path / "theirs.keras")
    loaded = mk.models.load_model(tmp_path / "theirs.keras")
    np.testing.assert_allclose(
        loaded.predict(x, verbose=0), theirs.predict(x, verbose=0), rtol=1e-4, atol=1e-5
    )
    ours.save(tmp_path / "ours.keras")
    back = keras.saving.load_model(tmp_path / "ours.keras")
    np.testing.assert_allclose(
        back.predict(x, verbose=0), ours.predict(x, verbose=0), rtol=1e-4, atol=1e-5
    )


@pytest.mark.parametrize(
    "family", ["vgg16", "vgg19", "resnet", "resnet50", "resnet_v2", "mobilenet_v2"]
)
@pytest.mark.parametrize("data_format", ["channels_last", "channels_first"])
def test_each_familys_preprocess_input_gives_kerass_values(family, data_format):
    images = RNG.uniform(0, 255, (2, 3, 4, 3)).astype("float32")
    ours = getattr(mk.applications, family).preprocess_input(images, data_format=data_format)
    theirs = getattr(keras.applications, family).preprocess_input(
        images.copy(), data_format=data_format
    )
    np.testing.assert_allclose(ours, np.asarray(theirs), rtol=1e-6)


@pytest.mark.parametrize("mode", ["caffe", "tf", "torch"])
@pytest.mark.parametrize("rank", [3, 4])
def test_imagenet_utils_modes_give_kerass_values_for_arrays_and_tensors(mode, rank):
    images = RNG.integers(0, 256, (2, 3, 4, 3)[4 - rank :]).astype("uint8")
    theirs = keras.applications.imagenet_utils.preprocess_input(images, mode=mode)
    ours = mk.applications.imagenet_utils.preprocess_input(images, mode=mode)
    assert ours.dtype == np.asarray(theirs).dtype == np.float32
    np.testing.assert_allclose(ours, theirs, rtol=1e-6)
    tensor = mk.applications.imagenet_utils.preprocess_input(
        mk.ops.convert_to_tensor(images), mode=mode
    )
    np.testing.assert_allclose(mk.ops.convert_to_numpy(tensor), theirs, rtol=1e-6)


def test_kerass_older_h5_model_file_loads_by_the_weights_argument_and_predicts_alike(tmp_path):
    theirs, _ = _pair("resnet50v2_top")
    randomize(theirs, RNG)
    theirs.save(tmp_path / "model.h5")  # Keras logs that it calls this format legacy
    function, arguments = CASES["resnet50v2_top"]
    ours = getattr(mk.applications, function)(weights=str(tmp_path / "model.h5"), **arguments)
    x = RNG.uniform(-1, 1, (2, *SMALL)).astype("float32")
    np.testing.assert_allclose(
        ours.predict(x, verbose=0), theirs.predict(x, verbose=0), rtol=1e-4, atol=1e-5
    )
