"""`ops.image.resize`'s kernels, antialiasing and aspect-ratio options: weights by hand,
Keras's values when importable, gradients, the Resizing layer that calls it."""

import numpy as np
import pytest

import minikeras as mk
from tests.finite_differences import check_float32, check_gradients, check_second_order

INTERPOLATIONS = ("bilinear", "nearest", "bicubic", "lanczos3", "lanczos5")


def _images(shape, seed=0):
    return np.random.default_rng(seed).random(shape).astype("float32")


def _keys(x):  # Keys's cubic, a = -0.5, by its textbook formula
    x = abs(x)
    if x < 1:
        return 1.5 * x**3 - 2.5 * x**2 + 1
    return -0.5 * x**3 + 2.5 * x**2 - 4 * x + 2 if x < 2 else 0.0


def _lanczos(x, a):
    return 1.0 if x == 0 else (np.sinc(x) * np.sinc(x / a) if abs(x) < a else 0.0)


@pytest.mark.parametrize("kind", ["bicubic", "lanczos3", "lanczos5"])
def test_kernel_weights_by_hand(kind):
    # upsampling 6 -> 12: output pixel 5 is centered on input 2.25
    kernel = {"bicubic": _keys, "lanczos3": lambda x: _lanczos(x, 3),
              "lanczos5": lambda x: _lanczos(x, 5)}[kind]  # fmt: skip
    weights = np.array([kernel(2.25 - j) for j in range(6)])
    got = mk.ops.image_resize.interpolation_matrix(12, 6, kind)[5]
    np.testing.assert_allclose(got, weights / weights.sum(), atol=1e-6)


def test_antialias_widens_the_kernel_when_shrinking_only():
    # 6 -> 2: output 0 is centered on 1.0; the triangle is 3 pixels wide on each side
    weights = np.maximum(0, 1 - np.abs(1.0 - np.arange(6)) / 3)
    got = mk.ops.image_resize.interpolation_matrix(2, 6, "bilinear", antialias=True)[0]
    np.testing.assert_allclose(got, weights / weights.sum(), atol=1e-7)
    plain = mk.ops.image_resize.interpolation_matrix(2, 6, "bilinear")[0]
    np.testing.assert_allclose(plain, [0, 1, 0, 0, 0, 0])
    up = mk.ops.image_resize.interpolation_matrix(9, 3, "bicubic", antialias=True)
    np.testing.assert_array_equal(up, mk.ops.image_resize.interpolation_matrix(9, 3, "bicubic"))


def test_rows_sum_to_one_and_a_constant_image_stays():
    for kind in INTERPOLATIONS:
        for sizes in [(7, 3), (3, 7), (5, 5)]:
            matrix = mk.ops.image_resize.interpolation_matrix(*sizes, kind, antialias=True)
            np.testing.assert_allclose(matrix.sum(axis=1), 1.0, atol=1e-6)
    out = mk.ops.image.resize(np.full((6, 4, 2), 3.0, "float32"), (5, 9), "lanczos5")
    np.testing.assert_allclose(out.numpy(), 3.0, atol=1e-5)


def test_crop_and_pad_to_aspect_ratio_by_hand():
    image = np.arange(1.0, 13.0, dtype="float32").reshape(3, 4, 1)
    # crop 3 x 4 to aspect 1 : 1 -> the central 3 x 3 window (columns 0-2, int(1 / 2) = 0)
    cropped = mk.ops.image.resize(image, (3, 3), "nearest", crop_to_aspect_ratio=True)
    np.testing.assert_array_equal(cropped.numpy()[..., 0], image[:, :3, 0])
    # pad 3 x 4 to aspect 8 : 4: 8 rows wanted, 5 missing, int(5 / 2) = 2 added on each
    # side (as Keras), then 7 rows resized to 8: rows floor((i + 0.5) * 7 / 8)
    padded = mk.ops.image.resize(image, (8, 4), "nearest", pad_to_aspect_ratio=True,
                                 fill_value=-1.0)  # fmt: skip
    seven = np.full((7, 4), -1.0)
    seven[2:5] = image[..., 0]
    np.testing.assert_array_equal(padded.numpy()[..., 0], seven[[0, 1, 2, 3, 3, 4, 5, 6]])


@pytest.mark.parametrize("kind", ["bicubic", "lanczos3"])
def test_gradients(kind):
    def fn(x):
        return mk.ops.image.resize(x, (5, 3), kind, antialias=True, pad_to_aspect_ratio=True)

    x = _images((1, 4, 6, 2))
    check_gradients(fn, [x])
    check_second_order(fn, [x])
    check_float32(fn, [x])


def test_resizing_layer_takes_the_new_options():
    image = _images((2, 6, 8, 3))
    layer = mk.layers.Resizing(3, 3, "bicubic", antialias=True, crop_to_aspect_ratio=True)
    expected = mk.ops.image.resize(image, (3, 3), "bicubic", True, True)
    np.testing.assert_allclose(layer(image).numpy(), expected.numpy(), atol=1e-7)
    config = layer.get_config()
    assert config["antialias"] is True and config["interpolation"] == "bicubic"
    restored = mk.layers.Resizing.from_config(config)
    np.testing.assert_allclose(restored(image).numpy(), expected.numpy(), atol=1e-7)


CASES = [
    ((2, 5, 7, 3), (9, 4), {}),
    ((2, 9, 8, 3), (3, 12), {"antialias": True}),
    ((2, 16, 5, 2), (4, 5), {"antialias": True, "crop_to_aspect_ratio": True}),
    ((2, 5, 7, 3), (6, 3), {"pad_to_aspect_ratio": True, "fill_value": 0.5}),
    ((3, 5, 7), (9, 4), {"antialias": True, "data_format": "channels_first"}),
]


@pytest.mark.parametrize("interpolation", INTERPOLATIONS)
@pytest.mark.parametrize("shape, size, kwargs", CASES)
def test_matches_keras(interpolation, shape, size, kwargs):
    keras = pytest.importorskip("keras")
    kwargs = {"data_format": "channels_last", **kwargs}
    x = _images(shape)
    want = np.asarray(keras.ops.image.resize(x, size, interpolation, **kwargs))
    got = mk.ops.image.resize(x, size, interpolation, **kwargs)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got.numpy(), want, atol=1e-5)


@pytest.mark.parametrize("dtype", ["uint8", "int32", "float16"])
def test_dtypes_match_keras(dtype):
    keras = pytest.importorskip("keras")
    x = (_images((2, 5, 7, 3)) * 255).astype(dtype)
    for interpolation in ("bilinear", "bicubic", "lanczos3"):
        want = np.asarray(
            keras.ops.image.resize(x, (9, 4), interpolation, data_format="channels_last")
        )
        got = mk.ops.image.resize(x, (9, 4), interpolation, data_format="channels_last")
        assert got.dtype == want.dtype
        # (an integer exactly between two rounds either way in float32)
        np.testing.assert_allclose(got.numpy().astype(float), want.astype(float), atol=1)


def test_op_node_with_the_new_options_crosses_to_keras(tmp_path):
    inputs = mk.Input((6, 8, 3))
    outputs = mk.ops.image.resize(inputs, (4, 4), "lanczos3", antialias=True,
                                  pad_to_aspect_ratio=True, fill_value=0.25)  # fmt: skip
    model = mk.Model(inputs, outputs)
    model.save(tmp_path / "resize.keras")
    x = _images((2, 6, 8, 3))
    np.testing.assert_array_equal(
        mk.models.load_model(tmp_path / "resize.keras")(x).numpy(), model(x).numpy()
    )
    keras = pytest.importorskip("keras")
    theirs = keras.models.load_model(tmp_path / "resize.keras")
    np.testing.assert_allclose(np.asarray(theirs(x)), model(x).numpy(), atol=1e-5)


def test_scale_and_translate_by_hand():
    image = np.arange(9.0, dtype="float32").reshape(3, 3)
    # one column right: output column j reads input column j - 1, nothing left of column 0
    moved = mk.ops.image.scale_and_translate(image, (3, 3), [1.0, 1.0], [0.0, 1.0], (0, 1),
                                             "linear")  # fmt: skip
    np.testing.assert_array_equal(moved.numpy(), [[0, 0, 1], [0, 3, 4], [0, 6, 7]])
    # twice as large along the rows: output row i reads input row (i + 0.5) / 2 - 0.5
    grown = mk.ops.image.scale_and_translate(image, (6, 3), [2.0], [0.0], (0,), "linear",
                                             antialias=False).numpy()  # fmt: skip
    np.testing.assert_allclose(grown[:, 0], [0, 0.75, 2.25, 3.75, 5.25, 6])
    with pytest.raises(ValueError, match="scale_and_translate: method must be one of"):
        mk.ops.image.scale_and_translate(image, (3, 3), [1.0], [0.0], (0,), "nearest")
    with pytest.raises(ValueError, match="scale_and_translate: output_shape \\(4, 4, 1\\)"):
        mk.ops.image.scale_and_translate(image, (4, 4, 1), [1.0], [0.0], (0,), "linear")
    with pytest.raises(ValueError, match="with one scale \\(> 0\\)"):
        mk.ops.image.scale_and_translate(image, (4, 4), [0.0], [0.0], (0,), "linear")


def test_scale_and_translate_gradient():
    def fn(x):
        return mk.ops.image.scale_and_translate(x, (1, 4, 7, 2), [0.7, 1.4], [0.3, -0.5],
                                                (1, 2), "cubic")  # fmt: skip

    x = _images((1, 5, 6, 2))
    check_gradients(fn, [x])
    check_float32(fn, [x])


@pytest.mark.parametrize("method", ["linear", "cubic", "lanczos3", "lanczos5"])
@pytest.mark.parametrize("antialias", [True, False])
def test_scale_and_translate_matches_keras(method, antialias):
    keras = pytest.importorskip("keras")
    x = _images((2, 5, 6, 3))
    for output_shape, scale, translation, dims in [
        ((2, 8, 4, 3), [1.5, 0.7], [0.3, -0.5], (1, 2)),
        ((2, 3, 9, 3), [0.4, 1.6], [1.2, -2.0], (1, 2)),
        ((2, 5, 6, 2), [0.6], [0.1], (3,)),
    ]:
        args = (output_shape, np.array(scale), np.array(translation), dims, method, antialias)
        want = np.asarray(keras.ops.image.scale_and_translate(x, *args))
        got = mk.ops.image.scale_and_translate(x, *args)
        assert got.shape == want.shape and got.dtype == want.dtype
        np.testing.assert_allclose(got.numpy(), want, atol=1e-5)


def test_scale_and_translate_nodes_cross_to_keras(tmp_path):
    args = (np.array([1.5, 0.7]), np.array([0.3, -0.5]), (1, 2), "cubic")
    inputs = mk.Input((5, 6, 3))
    model = mk.Model(inputs, mk.ops.image.scale_and_translate(inputs, (None, 8, 4, 3), *args))
    assert model.output.shape == (None, 8, 4, 3)
    model.save(tmp_path / "ours.keras")
    x = _images((2, 5, 6, 3))
    loaded = mk.models.load_model(tmp_path / "ours.keras")
    np.testing.assert_array_equal(loaded(x).numpy(), model(x).numpy())
    keras = pytest.importorskip("keras")
    kinputs = keras.Input((5, 6, 3))  # (Keras's jax backend needs the batch size written)
    kmodel = keras.Model(kinputs, keras.ops.image.scale_and_translate(kinputs, (2, 8, 4, 3), *args))
    kmodel.save(tmp_path / "theirs.keras")
    ours = mk.models.load_model(tmp_path / "theirs.keras")
    np.testing.assert_allclose(ours(x).numpy(), np.asarray(kmodel(x)), atol=1e-5)
