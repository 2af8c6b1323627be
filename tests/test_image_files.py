"""`load_img`, `img_to_array`, `array_to_img`, `save_img` (utils.image_utils) and `smart_resize`.

Values are checked by hand on small images; the last tests run Keras's own
functions (which need Pillow but not TensorFlow) on the same inputs and skip
when Keras is not importable.
"""

import io

import numpy as np
import pytest

import minikeras as mk

Image = pytest.importorskip("PIL.Image")

RNG = np.random.default_rng(0)


def test_img_to_array_shapes_dtypes_and_layouts():
    grey = Image.fromarray(np.array([[0, 7, 9]], dtype="uint8"))
    array = mk.utils.img_to_array(grey)
    assert array.dtype == np.float32 and array.shape == (1, 3, 1)
    np.testing.assert_array_equal(array[0, :, 0], [0, 7, 9])
    rgb = RNG.integers(0, 256, (2, 3, 3), dtype="uint8")
    first = mk.utils.img_to_array(Image.fromarray(rgb), data_format="channels_first")
    np.testing.assert_array_equal(first, rgb.transpose(2, 0, 1))
    assert mk.utils.img_to_array(rgb, dtype="uint8").dtype == np.uint8
    with pytest.raises(ValueError, match="img_to_array expected an image of rank 2 or 3"):
        mk.utils.img_to_array(np.zeros((1, 2, 2, 3)))


def test_array_to_img_scales_to_0_255_and_picks_the_mode():
    image = mk.utils.array_to_img(np.array([[[-1.0], [0.0], [1.0]]]))
    assert image.mode == "L" and image.size == (3, 1)
    np.testing.assert_array_equal(np.asarray(image), [[0, 127, 255]])  # (x + 1) / 2 * 255, cut
    kept = mk.utils.array_to_img(np.array([[[3.0, 4.0, 5.0]]]), scale=False)
    assert kept.mode == "RGB" and np.asarray(kept).tolist() == [[[3, 4, 5]]]
    assert mk.utils.array_to_img(np.ones((2, 2, 4))).mode == "RGBA"
    wide = mk.utils.array_to_img(np.array([[[0.0], [1000.0]]]), scale=False)
    assert wide.mode == "I" and np.asarray(wide).tolist() == [[0, 1000]]
    first = mk.utils.array_to_img(np.zeros((3, 2, 5)), data_format="channels_first")
    assert first.size == (5, 2)
    with pytest.raises(ValueError, match="1, 3 or 4 channels, got 2"):
        mk.utils.array_to_img(np.zeros((2, 2, 2)))
    with pytest.raises(ValueError, match="one image of rank 3, got shape"):
        mk.utils.array_to_img(np.zeros((2, 2)))


def test_save_and_load_round_trip(tmp_path):
    pixels = RNG.integers(0, 256, (5, 4, 3)).astype("float32")
    path = tmp_path / "x.png"
    mk.utils.save_img(path, pixels, scale=False)
    loaded = mk.utils.load_img(path)
    assert loaded.mode == "RGB" and loaded.size == (4, 5)
    np.testing.assert_array_equal(mk.utils.img_to_array(loaded), pixels)
    np.testing.assert_array_equal(mk.utils.img_to_array(mk.utils.load_img(str(path))), pixels)
    grey = mk.utils.load_img(path, color_mode="grayscale")
    assert grey.mode == "L" and mk.utils.img_to_array(grey).shape == (5, 4, 1)
    assert mk.utils.load_img(path, color_mode="rgba").mode == "RGBA"
    with pytest.warns(UserWarning, match="JPEG has no alpha"):
        mk.utils.save_img(tmp_path / "y.jpg", np.ones((2, 2, 4)))
    assert Image.open(tmp_path / "y.jpg").format == "JPEG"
    file = io.BytesIO()
    mk.utils.save_img(file, pixels, file_format="png", scale=False)
    file.seek(0)
    assert mk.utils.load_img(file).size == (4, 5)


def test_load_img_resizes_and_crops(tmp_path):
    block = np.array([[0, 100], [200, 250]], dtype="uint8")
    path = tmp_path / "block.png"
    Image.fromarray(block).save(path)
    image = mk.utils.load_img(path, color_mode="grayscale", target_size=(4, 4))
    np.testing.assert_array_equal(np.asarray(image), np.kron(block, np.ones((2, 2))))
    stripes = np.array([[0, 50, 60, 90]] * 2, dtype="uint8")  # 2 x 4: the centred 2 x 2 is kept
    Image.fromarray(stripes).save(path)
    image = mk.utils.load_img(
        path,
        color_mode="grayscale",
        target_size=(1, 1),
        keep_aspect_ratio=True,
        interpolation="box",
    )
    assert np.asarray(image).tolist() == [[55]]


def test_load_img_errors(tmp_path):
    path = tmp_path / "x.png"
    mk.utils.save_img(path, np.ones((2, 2, 3)))
    with pytest.raises(ValueError, match="load_img: color_mode"):
        mk.utils.load_img(path, color_mode="cmyk")
    with pytest.raises(ValueError, match="load_img: interpolation"):
        mk.utils.load_img(path, target_size=(3, 3), interpolation="cubic")
    with pytest.raises(TypeError, match="load_img: path"):
        mk.utils.load_img(3)


def test_smart_resize_crops_the_centre_then_resizes():
    stripes = np.repeat(np.array([0.0, 0, 100, 100, 100, 100, 200, 200])[None, :, None], 4, 0)
    np.testing.assert_array_equal(mk.preprocessing.image.smart_resize(stripes, (2, 2)), 100)
    batch = mk.preprocessing.image.smart_resize(np.ones((2, 3, 6, 5)), (3, 3))
    assert isinstance(batch, np.ndarray) and batch.shape == (2, 3, 3, 5)
    with pytest.raises(ValueError, match="smart_resize"):
        mk.preprocessing.image.smart_resize(np.ones((6, 5)), (3, 3))


@pytest.mark.parametrize(
    "dtype, expected",
    [("uint8", "float32"), ("int32", "float32"), ("float64", "float32"), ("float16", "float16")],
)
def test_smart_resize_gives_floats_as_keras(dtype, expected):
    pixels = np.random.default_rng(0).uniform(0, 255, (9, 7, 3)).astype(dtype)
    resized = mk.preprocessing.image.smart_resize(pixels, (4, 6))
    assert resized.dtype == expected
    exact = mk.preprocessing.image.smart_resize(pixels.astype("float32"), (4, 6))
    np.testing.assert_allclose(resized, exact, rtol=1e-2 if dtype == "float16" else 1e-6)


def test_namespaces_match_keras():
    for name in ("array_to_img", "img_to_array", "load_img", "save_img"):
        assert getattr(mk.preprocessing.image, name) is getattr(mk.utils, name)
    assert mk.preprocessing.image_dataset_from_directory is mk.utils.image_dataset_from_directory
    assert mk.preprocessing.text_dataset_from_directory is mk.utils.text_dataset_from_directory


# Keras, where it runs without TensorFlow


def test_image_functions_match_keras(tmp_path):
    keras = pytest.importorskip("keras")
    pixels = RNG.uniform(-3, 9, (7, 5, 3)).astype("float32")
    ours, theirs = mk.utils.array_to_img(pixels), keras.utils.array_to_img(pixels)
    np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))
    np.testing.assert_array_equal(
        mk.utils.img_to_array(ours, data_format="channels_first"),
        keras.utils.img_to_array(theirs, data_format="channels_first"),
    )
    path = str(tmp_path / "x.png")
    keras.utils.save_img(path, pixels)
    for kwargs in (
        {},
        {"color_mode": "grayscale", "target_size": (4, 9), "interpolation": "bicubic"},
        {"color_mode": "rgba", "target_size": (3, 2), "keep_aspect_ratio": True},
        {"target_size": (9, 4), "interpolation": "lanczos", "keep_aspect_ratio": True},
    ):
        ours, theirs = mk.utils.load_img(path, **kwargs), keras.utils.load_img(path, **kwargs)
        assert ours.mode == theirs.mode
        np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))
    for size, interpolation in (((3, 3), "bilinear"), ((4, 11), "nearest"), ((9, 2), "bilinear")):
        np.testing.assert_allclose(
            mk.preprocessing.image.smart_resize(pixels, size, interpolation),
            keras.preprocessing.image.smart_resize(pixels, size, interpolation),
            rtol=1e-5,
            atol=1e-4,
        )
