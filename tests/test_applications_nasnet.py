"""NASNetMobile and NASNetLarge: the cells' sides, channels and wiring worked out by hand,
Keras's input-shape rules and ImageNet file names, errors, "tf" preprocessing; against Keras
(when installed): the same layers and parameter counts, and Keras's weights predict alike here.

NASNetLarge takes seconds to initialize here (and over a minute in Keras), so without Keras it
is not built: what sets it apart from NASNetMobile (`skip_reduction`) is checked on a small
NASNet-A from the same builder.
"""

import numpy as np
import pytest
from application_checks import compare_with_keras, write_numbered_legacy_h5

import minikeras as mk
from minikeras.applications import nasnet

RNG = np.random.default_rng(7)
SMALL = (32, 32, 3)


@pytest.fixture(scope="module")
def mobile():
    """Built once: its 771 layers take a few seconds."""
    return mk.applications.NASNetMobile(SMALL, weights=None, classes=3)


def _source(model, name):
    """The name of the layer whose output the layer `name` is called on."""
    return model.get_layer(name).input.node.layer.name


def test_cells_halve_the_side_and_concatenate_their_sums(mobile):
    # 32 -> 15 (3x3 valid, stride 2) -> 8, 4 (stem cells) -> 4 -> 2 -> 1 (reduction cells)
    sides = {"stem_bn1": 15, "reduction_concat_stem_1": 8, "reduction_concat_stem_2": 4}
    sides |= {"normal_concat_3": 4, "reduction_concat_reduce_4": 2, "normal_concat_8": 2}
    sides |= {"reduction_concat_reduce_8": 1, "normal_concat_12": 1}
    for name, side in sides.items():
        assert mobile.get_layer(name).output.shape[1:3] == (side, side)
    # 1056 // 24 = 44 channels a branch in the first stack; a reduction cell concatenates 4
    # branches, a normal cell 5 sums and its adjusted `p`: 6.
    channels = {"reduction_concat_stem_1": 4 * 11, "reduction_concat_stem_2": 4 * 22}
    channels |= {"normal_concat_0": 6 * 44, "reduction_concat_reduce_4": 4 * 88}
    channels |= {"normal_concat_5": 6 * 88, "normal_concat_12": 6 * 176}
    for name, width in channels.items():
        assert mobile.get_layer(name).output.shape[-1] == width
    assert mobile.get_layer("stem_conv1").filters == 32
    assert [layer.name for layer in mobile.layers[-1:]] == ["predictions"]
    out = mobile.predict(RNG.uniform(-1, 1, (2, *SMALL)).astype("float32"), verbose=0)
    assert out.shape == (2, 3) and out.dtype == np.float32
    np.testing.assert_allclose(out.sum(axis=1), 1.0, rtol=1e-5)


def test_previous_outputs_are_halved_by_two_offset_paths_or_projected(mobile):
    names = {layer.name for layer in mobile.layers}
    halved = sorted(n[len("adjust_conv_1_") :] for n in names if n.startswith("adjust_conv_1_"))
    assert halved == ["0", "5", "9", "stem_2"]  # the cells right after a side was halved
    projected = {n for n in names if n.startswith("adjust_conv_projection_")}
    assert len(projected) == 16 - 4 - 1  # all other cells but stem_1 (without a previous one)
    # The second path is shifted by a pixel: padded at the end, cropped at the start.
    assert _source(mobile, "adjust_avg_pool_2_5").startswith("cropping2d")
    assert mobile.get_layer("adjust_conv_1_5").filters == 88 // 2
    # A reduction cell's strided 5x5 branch pads 2 on each side of an odd side (15), one less
    # before an even one (8), as Keras's pretrained models do.
    pads = [mobile.get_layer(f"separable_conv_1_pad_reduction_left1_stem_{i}") for i in (1, 2)]
    assert [pad.padding for pad in pads] == [((2, 2), (2, 2)), ((1, 2), (1, 2))]


@pytest.mark.parametrize("skip", [False, True])
def test_skip_reduction_passes_the_reduction_cells_own_previous_output_on(skip):
    arguments = {
        "include_top": False,
        "weights": None,
        "input_tensor": None,
        "input_shape": SMALL,
        "pooling": None,
        "classes": 1000,
        "classifier_activation": "softmax",
        "name": "nasnet",
    }
    # NASNet-A (1 @ 96): stem_1, stem_2, cell 0, reduce_1, cell 2, reduce_2, cell 3.
    model = nasnet._nasnet("NASNetLarge", arguments, 331, 8, 1, 96, skip=skip)
    # reduce_1 is given cell 0's output and input (stem_2's output); cell 2 gets the first
    # and, as its own previous output, stem_2's (NASNetLarge) or cell 0's (NASNetMobile).
    expected = "reduction_concat_stem_2" if skip else "normal_concat_0"
    assert _source(model, "adjust_relu_1_2") == expected


def test_default_input_shapes_and_imagenet_files_are_kerass(tmp_path, monkeypatch):
    monkeypatch.setenv("KERAS_HOME", str(tmp_path))
    for function, file, arguments in [
        ("NASNetMobile", "nasnet_mobile.h5", {}),
        ("NASNetMobile", "nasnet_mobile_no_top.h5", {"include_top": False}),
        ("NASNetLarge", "nasnet_large.h5", {"input_shape": (331, 331, 3)}),
        ("NASNetLarge", "nasnet_large_no_top.h5", {"include_top": False, "input_shape": SMALL}),
    ]:
        with pytest.raises(FileNotFoundError, match=file):
            getattr(mk.applications, function)(**arguments)
    with pytest.raises(ValueError, match=r"should be \(224, 224, 3\)"):
        mk.applications.NASNetMobile((331, 331, 3))
    with pytest.raises(ValueError, match=r"should be \(331, 331, 3\)"):
        mk.applications.NASNetLarge((224, 224, 3))
    with pytest.raises(ValueError, match="must be static"):
        mk.applications.NASNetLarge((None, 64, 3), include_top=False)
    # Without the top NASNetMobile's default is (224, 224, 3), NASNetLarge's free sides.
    model = mk.applications.NASNetMobile(include_top=False, weights=None, pooling="avg")
    assert model.input_shape == (None, 224, 224, 3) and model.output_shape == (None, 1056)
    with pytest.raises(ValueError, match=r"static image size.*\(331, 331, 3\)"):
        mk.applications.NASNetLarge(include_top=False, weights=None)
    with pytest.raises(ValueError, match="static image size"):
        mk.applications.NASNetMobile(input_tensor=mk.Input((None, None, 3)), weights=None)


def test_imagenet_weights_load_from_kerass_cache(tmp_path, monkeypatch, mobile):
    monkeypatch.setenv("KERAS_HOME", str(tmp_path))
    path = tmp_path / "models" / "nasnet_mobile_no_top.h5"
    path.parent.mkdir()
    reference = mk.Model(mobile.input, mobile.layers[-3].output)  # before pooling and top
    count = write_numbered_legacy_h5(reference, path)
    model = mk.applications.NASNetMobile(SMALL, include_top=False)
    weighted = [layer for layer in model.layers if layer.weights]
    assert weighted[0].name == "stem_conv1" and len(weighted) == count
    for number in (1, count // 2, count):  # the k-th layer with weights has the file's k-th
        assert all(np.all(w.numpy() == number) for w in weighted[number - 1].weights)


def test_channels_first_and_bad_arguments_are_refused():
    mk.config.set_image_data_format("channels_first")
    try:
        with pytest.raises(ValueError, match="channels_last"):
            mk.applications.NASNetMobile((3, 32, 32), weights=None)
    finally:
        mk.config.set_image_data_format("channels_last")
    with pytest.raises(ValueError, match="at least 32x32"):
        mk.applications.NASNetMobile((31, 32, 3), weights=None, include_top=False)
    with pytest.raises(ValueError, match="classes` must be 1000"):
        mk.applications.NASNetLarge(classes=10)
    with pytest.raises(ValueError, match="pooling"):
        mk.applications.NASNetMobile(SMALL, weights=None, include_top=False, pooling="sum")


def test_preprocess_input_is_tf_mode():
    images = RNG.uniform(0, 255, (2, 3, 4, 3)).astype("float32")
    out = mk.applications.nasnet.preprocess_input(images)
    np.testing.assert_allclose(out, images / 127.5 - 1, rtol=1e-6, atol=1e-6)


# Against Keras, when it is installed (KERAS_BACKEND=jax /work/kvenv/bin/python -m pytest).
# Keras under JAX takes one to two minutes to build each of these, so the cases are few.

# NASNetLarge's pooled features reach 20: float32 rounding through its 1039 layers moves them
# by up to 1e-4 (the default absolute tolerance is 1e-6).
CASES = {
    "mobile_top": ("NASNetMobile", {"input_shape": SMALL, "classes": 10}, 1e-6),
    "large_avg": (
        "NASNetLarge",
        {"input_shape": SMALL, "include_top": False, "pooling": "avg"},
        1e-3,
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_layers_weights_and_predictions_equal_kerass(case, tmp_path):
    keras = pytest.importorskip("keras")
    function, arguments, atol = CASES[case]
    images = RNG.uniform(0, 255, (8, *SMALL)).astype("float32")
    x = mk.applications.nasnet.preprocess_input(images)
    theirs, _ = compare_with_keras(keras, function, arguments, x, tmp_path, atol=atol)
    if case == "mobile_top":  # a .keras file crosses both ways
        theirs.save(tmp_path / "theirs.keras")
        loaded = mk.models.load_model(tmp_path / "theirs.keras")
        expected = theirs.predict(x, verbose=0)
        np.testing.assert_allclose(loaded.predict(x, verbose=0), expected, rtol=1e-4, atol=1e-6)
        loaded.save(tmp_path / "ours.keras")
        back = keras.saving.load_model(tmp_path / "ours.keras")
        np.testing.assert_allclose(back.predict(x, verbose=0), expected, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("data_format", ["channels_last", "channels_first"])
def test_preprocess_input_gives_kerass_values(data_format):
    keras = pytest.importorskip("keras")
    images = RNG.uniform(0, 255, (2, 3, 4, 3)).astype("float32")
    ours = mk.applications.nasnet.preprocess_input(images, data_format=data_format)
    theirs = keras.applications.nasnet.preprocess_input(images.copy(), data_format=data_format)
    np.testing.assert_allclose(ours, np.asarray(theirs), rtol=1e-6)
