"""`ops.image`'s rgb_to_grayscale, rgb_to_hsv and hsv_to_rgb: hand values, Keras's values
and dtypes when importable, gradients, layouts, op nodes that cross to Keras and back."""

import numpy as np
import pytest

import minikeras as mk
from tests.finite_differences import check_float32, check_gradients, check_second_order

COLOR_OPS = ("rgb_to_grayscale", "rgb_to_hsv", "hsv_to_rgb")


def _images(shape=(2, 4, 5, 3), seed=0):
    return np.random.default_rng(seed).random(shape).astype("float32")


# RGB -> HSV by hand: hue in turns (0 red, 1/3 green, 2/3 blue), saturation (max-min)/max
HSV_CASES = [
    ([1.0, 0.0, 0.0], [0.0, 1.0, 1.0]),
    ([0.0, 0.5, 0.5], [0.5, 1.0, 0.5]),
    ([0.0, 0.0, 0.8], [2 / 3, 1.0, 0.8]),
    ([0.2, 0.2, 0.2], [0.0, 0.0, 0.2]),  # gray: no hue, no saturation
    ([0.0, 0.0, 0.0], [0.0, 0.0, 0.0]),
    ([1.0, 0.0, 0.5], [11 / 12, 1.0, 1.0]),  # between blue and red: the hue wraps below 1
    ([0.4, 0.8, 0.2], [1 / 3 + (0.2 - 0.4) / (6 * 0.6), 0.75, 0.8]),  # green the max
]


@pytest.mark.parametrize("rgb, hsv", HSV_CASES)
def test_hsv_by_hand_and_back(rgb, hsv):
    image = np.array(rgb, "float32").reshape(1, 1, 3)
    got = mk.ops.image.rgb_to_hsv(image)
    assert got.dtype == "float32"
    np.testing.assert_allclose(got.numpy().ravel(), hsv, atol=1e-6)
    back = mk.ops.image.hsv_to_rgb(got).numpy().ravel()
    np.testing.assert_allclose(back, rgb, atol=1e-6)


def test_hsv_round_trip_and_hue_wraps():
    x = _images()
    np.testing.assert_allclose(mk.ops.image.hsv_to_rgb(mk.ops.image.rgb_to_hsv(x)), x, atol=1e-6)
    hsv = np.array([[[0.25, 0.5, 0.8]]], "float32")
    turned = hsv + np.array([2.0, 0.0, 0.0], "float32")  # two whole turns more
    np.testing.assert_allclose(
        mk.ops.image.hsv_to_rgb(turned), mk.ops.image.hsv_to_rgb(hsv), atol=1e-6
    )


def test_grayscale_by_hand_and_integers_truncate():
    image = np.array([[[100.0, 50.0, 200.0]]], "float32")
    gray = mk.ops.image.rgb_to_grayscale(image)
    np.testing.assert_allclose(gray.numpy(), [[[0.2989 * 100 + 0.5870 * 50 + 0.1140 * 200]]])
    assert gray.shape == (1, 1, 1) and gray.dtype == "float32"
    as_uint8 = mk.ops.image.rgb_to_grayscale(np.array([[[10, 0, 0]]], "uint8"))
    assert as_uint8.dtype == "uint8" and as_uint8.numpy().item() == 2  # 2.989 truncated
    one = np.ones((2, 3, 3, 1), "float32")
    np.testing.assert_array_equal(mk.ops.image.rgb_to_grayscale(one).numpy(), one)


@pytest.mark.parametrize("name", COLOR_OPS)
def test_channels_first_and_the_configured_layout(name):
    x = _images()
    op = getattr(mk.ops.image, name)
    last = op(x).numpy()
    first = op(x.transpose(0, 3, 1, 2), data_format="channels_first").numpy()
    np.testing.assert_allclose(first.transpose(0, 2, 3, 1), last, atol=1e-7)
    mk.config.set_image_data_format("channels_first")
    try:
        np.testing.assert_allclose(op(x.transpose(0, 3, 1, 2)).numpy(), first)
    finally:
        mk.config.set_image_data_format("channels_last")


@pytest.mark.parametrize("name", COLOR_OPS)
def test_gradients(name):
    def fn(x):
        return getattr(mk.ops.image, name)(x)

    # distinct channels, away from the hue's wrap: the op is smooth there
    x = np.array([[[0.7, 0.3, 0.1], [0.2, 0.6, 0.4]], [[0.3, 0.35, 0.9], [0.55, 0.1, 0.25]]])
    check_gradients(fn, [x])
    check_second_order(fn, [x])
    check_float32(fn, [x])


def test_bad_inputs_are_named():
    with pytest.raises(ValueError, match="rgb_to_hsv: images must be 3-D .* got shape \\(4, 3\\)"):
        mk.ops.image.rgb_to_hsv(np.ones((4, 3), "float32"))
    with pytest.raises(ValueError, match="rgb_to_hsv: images must have 3 channels"):
        mk.ops.image.rgb_to_hsv(np.ones((2, 2, 4), "float32"))
    with pytest.raises(ValueError, match="hsv_to_rgb: images must have a float dtype, got int32"):
        mk.ops.image.hsv_to_rgb(np.ones((2, 2, 3), "int32"))
    with pytest.raises(ValueError, match="rgb_to_grayscale: images must have 1 or 3 channels"):
        mk.ops.image.rgb_to_grayscale(np.ones((2, 2, 2), "float32"))
    with pytest.raises(ValueError, match="rgb_to_grayscale"):
        mk.ops.image.rgb_to_grayscale(np.ones((2, 2, 3)), data_format="channels_middle")


@pytest.mark.parametrize("name", COLOR_OPS)
@pytest.mark.parametrize("dtype", ["float16", "float32", "uint8", "int32"])
@pytest.mark.parametrize("data_format", ["channels_last", "channels_first"])
def test_matches_keras(name, dtype, data_format):
    keras = pytest.importorskip("keras")
    x = _images((2, 3, 4, 3))
    x = (x * 255).astype(dtype) if dtype in ("uint8", "int32") else x.astype(dtype)
    if data_format == "channels_first":
        x = x.transpose(0, 3, 1, 2)
    if name != "rgb_to_grayscale" and dtype in ("uint8", "int32"):
        with pytest.raises(ValueError, match="float dtype"):
            getattr(keras.ops.image, name)(x, data_format=data_format)
        with pytest.raises(ValueError, match="float dtype"):
            getattr(mk.ops.image, name)(x, data_format=data_format)
        return
    want = np.asarray(getattr(keras.ops.image, name)(x, data_format=data_format))
    got = getattr(mk.ops.image, name)(x, data_format=data_format)
    assert got.dtype == want.dtype and got.shape == want.shape
    tolerance = 2e-3 if dtype == "float16" else 1e-6
    np.testing.assert_allclose(got.numpy().astype("float64"), want, atol=tolerance)


def test_op_nodes_save_and_cross_to_keras(tmp_path):
    inputs = mk.Input((4, 5, 3))
    outputs = [getattr(mk.ops.image, name)(inputs) for name in COLOR_OPS]
    assert [o.shape for o in outputs] == [(None, 4, 5, 1), (None, 4, 5, 3), (None, 4, 5, 3)]
    model = mk.Model(inputs, outputs)
    x = _images()
    for suffix in ("keras", "minikeras"):
        model.save(tmp_path / f"colors.{suffix}")
        loaded = mk.models.load_model(tmp_path / f"colors.{suffix}")
        for got, want in zip(loaded(x), model(x)):
            np.testing.assert_array_equal(got.numpy(), want.numpy())
    keras = pytest.importorskip("keras")
    theirs = keras.models.load_model(tmp_path / "colors.keras")
    for got, want in zip(theirs(x), model(x)):
        np.testing.assert_allclose(np.asarray(got), want.numpy(), atol=1e-6)
    kinputs = keras.Input((4, 5, 3))
    kmodel = keras.Model(kinputs, [getattr(keras.ops.image, n)(kinputs) for n in COLOR_OPS])
    kmodel.save(tmp_path / "theirs.keras")
    ours = mk.models.load_model(tmp_path / "theirs.keras")
    for got, want in zip(ours(x), kmodel(x)):
        np.testing.assert_allclose(got.numpy(), np.asarray(want), atol=1e-6)


def test_examples_of_the_ops_image_functions_run():
    # (ops.image's own functions are rebound to symbolic-aware wrappers in their module, so
    # pytest's doctest collection skips them there; their examples run here)
    import doctest
    import inspect

    for name in (*mk.ops.image.KERAS_OPS, "extract_patches_3d"):
        function = inspect.unwrap(getattr(mk.ops.image, name))
        finder = doctest.DocTestFinder(recurse=False)
        runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
        (test,) = finder.find(function, name, globs={"np": np, "mk": mk})
        result = runner.run(test)
        assert result.attempted > 0 and result.failed == 0, name
