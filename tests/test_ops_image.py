"""`ops.image`'s extract_patches, resize, pad_images and crop_images: Keras's layouts and values.

Vision models written for Keras 3 (keras-io's MLP-Mixer, ViT, involution
and ShiftViT examples) call them in their layers; compared with hand values
always and with Keras when it is importable.
"""

import numpy as np
import pytest

import minikeras as mk
from tests.finite_differences import check_gradients


def _images(shape, seed=0):
    return np.random.default_rng(seed).random(shape).astype("float32")


def test_extract_patches_side_by_side_by_hand():
    image = np.arange(32.0, dtype="float32").reshape(1, 4, 4, 2)
    patches = mk.ops.image.extract_patches(image, 2).numpy()
    assert patches.shape == (1, 2, 2, 8)
    # patch (1, 0): rows 2-3, columns 0-1, each pixel's two channels together
    expected = [image[0, r, c, k] for r in (2, 3) for c in (0, 1) for k in (0, 1)]
    np.testing.assert_array_equal(patches[0, 1, 0], expected)


def test_extract_patches_strided_same_padding_by_hand():
    image = np.arange(9.0, dtype="float32").reshape(3, 3, 1)  # one image, no batch axis
    patches = mk.ops.image.extract_patches(image, 2, strides=2, padding="same").numpy()
    assert patches.shape == (2, 2, 4)
    np.testing.assert_array_equal(patches[1, 1], [8.0, 0.0, 0.0, 0.0])  # zero padding after


def test_extract_patches_gradient():
    def patches(x):
        return mk.ops.image.extract_patches(x, 2, strides=1)

    check_gradients(patches, [_images((1, 3, 4, 2)).astype("float64")])


def test_resize_bilinear_by_hand():
    image = np.array([0.0, 4.0], dtype="float32").reshape(1, 1, 2, 1)
    resized = mk.ops.image.resize(image, (1, 4)).numpy()[0, 0, :, 0]
    np.testing.assert_allclose(resized, [0.0, 1.0, 3.0, 4.0])


def test_resize_rounds_integer_images_and_keeps_their_dtype():
    image = np.array([0, 3], dtype="uint8").reshape(1, 2, 1)
    resized = mk.ops.image.resize(image, (1, 4))
    assert resized.dtype == "uint8"
    assert resized.numpy()[0, :, 0].tolist() == [0, 1, 2, 3]


def test_pad_and_crop_by_hand():
    image = np.arange(6.0, dtype="float32").reshape(2, 3, 1)
    padded = mk.ops.image.pad_images(image, 1, 0, 0, 2)  # top, left, bottom, right
    np.testing.assert_array_equal(
        padded.numpy()[..., 0], [[0, 0, 0, 0, 0], [0, 1, 2, 0, 0], [3, 4, 5, 0, 0]]
    )
    cropped = mk.ops.image.crop_images(padded, top_cropping=1, target_height=2,
                                       left_cropping=0, target_width=3)  # fmt: skip
    np.testing.assert_array_equal(cropped.numpy(), image)


def test_pad_and_crop_gradients():
    def shifted(x):
        crop = mk.ops.image.crop_images(x, 0, 1, 0, 0)  # the first column cut
        return mk.ops.image.pad_images(crop, 0, 0, 0, 1)  # a zero column on the right

    check_gradients(shifted, [_images((2, 3, 4, 2)).astype("float64")])


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="extract_patches: images must be 3-D"):
        mk.ops.image.extract_patches(np.ones((4, 4)), 2)
    with pytest.raises(ValueError, match="extract_patches: padding"):
        mk.ops.image.extract_patches(np.ones((4, 4, 1)), 2, padding="full")
    with pytest.raises(ValueError, match="resize: size must be two positive ints"):
        mk.ops.image.resize(np.ones((4, 4, 1)), (0, 2))
    with pytest.raises(ValueError, match="resize: give at most one of crop_to_aspect_ratio"):
        mk.ops.image.resize(np.ones((4, 4, 1)), (2, 2), crop_to_aspect_ratio=True,
                            pad_to_aspect_ratio=True)  # fmt: skip
    with pytest.raises(ValueError, match="resize: fill_mode must be 'constant'"):
        mk.ops.image.resize(np.ones((4, 4, 1)), (2, 2), fill_mode="reflect")
    with pytest.raises(ValueError, match="pad_images: give exactly two of top_padding"):
        mk.ops.image.pad_images(np.ones((4, 4, 1)), top_padding=1, left_padding=0, right_padding=0)
    with pytest.raises(ValueError, match="pad_images: .*do not fit an axis of size 4"):
        mk.ops.image.pad_images(np.ones((4, 4, 1)), 0, 0, target_height=3, target_width=4)
    with pytest.raises(ValueError, match="crop_images: left_cropping must be an int >= 0"):
        mk.ops.image.crop_images(np.ones((4, 4, 1)), 0, -1, 0, 0)
    with pytest.raises(ValueError, match="crop_images: cutting 3 \\+ 2 rows"):
        mk.ops.image.crop_images(np.ones((4, 4, 1)), 3, 0, 2, 0)


def test_functional_graph_runs_and_saves(tmp_path):
    inputs = mk.Input((6, 6, 3))
    outputs = [
        mk.ops.image.extract_patches(inputs, 3),
        mk.ops.image.resize(inputs, (4, 2), interpolation="nearest"),
        mk.ops.image.pad_images(inputs, 1, 2, target_height=8, target_width=9),
        mk.ops.image.crop_images(inputs, 1, 2, target_height=4, right_cropping=1),
    ]
    shapes = [(None, 2, 2, 27), (None, 4, 2, 3), (None, 8, 9, 3), (None, 4, 3, 3)]
    assert [o.shape for o in outputs] == shapes
    model = mk.Model(inputs, outputs)
    model.save(tmp_path / "image_ops.keras")
    loaded = mk.models.load_model(tmp_path / "image_ops.keras")
    x = _images((2, 6, 6, 3))
    for got, want in zip(loaded(x), model(x)):
        np.testing.assert_array_equal(got.numpy(), want.numpy())


CASES = [
    ("extract_patches", (2, 8, 8, 3), dict(size=4)),
    ("extract_patches", (2, 7, 9, 2), dict(size=(2, 3), strides=2, padding="same")),
    ("extract_patches", (2, 7, 7, 1), dict(size=3, strides=1, dilation_rate=2)),
    ("extract_patches", (2, 3, 8, 8), dict(size=4, data_format="channels_first")),
    ("extract_patches", (8, 8, 3), dict(size=(4, 2))),
    ("resize", (2, 5, 7, 3), dict(size=(9, 4))),
    ("resize", (2, 5, 7, 3), dict(size=(3, 12), interpolation="nearest")),
    ("resize", (3, 5, 7), dict(size=(10, 3), data_format="channels_first")),
    ("pad_images", (2, 5, 7, 3), dict(top_padding=1, bottom_padding=2, left_padding=0,
                                      target_width=9)),
    ("pad_images", (3, 5, 7), dict(top_padding=1, target_height=8, right_padding=2,
                                   target_width=10, data_format="channels_first")),
    ("crop_images", (2, 5, 7, 3), dict(top_cropping=1, bottom_cropping=2, left_cropping=3,
                                       target_width=2)),
    ("crop_images", (5, 7, 3), dict(target_height=2, bottom_cropping=1, right_cropping=2,
                                    target_width=4)),
]  # fmt: skip


@pytest.mark.parametrize("name, shape, kwargs", CASES)
def test_matches_keras(name, shape, kwargs):
    keras = pytest.importorskip("keras")
    x = _images(shape)
    want = np.asarray(getattr(keras.ops.image, name)(x, **kwargs))
    got = getattr(mk.ops.image, name)(x, **kwargs).numpy()
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, atol=1e-5)


def test_keras_file_with_image_ops_loads(tmp_path):
    keras = pytest.importorskip("keras")
    inputs = keras.Input((8, 8, 3))
    outputs = [
        keras.ops.image.extract_patches(inputs, 3, strides=2, padding="same"),
        keras.ops.image.resize(inputs, (5, 11)),
        keras.ops.image.pad_images(inputs, 1, 2, target_height=10, target_width=12),
        keras.ops.image.crop_images(inputs, 1, 2, target_height=4, right_cropping=1),
    ]
    keras.Model(inputs, outputs).save(tmp_path / "k.keras")
    model = keras.models.load_model(tmp_path / "k.keras")
    loaded = mk.models.load_model(tmp_path / "k.keras")
    x = _images((2, 8, 8, 3))
    for got, want in zip(loaded(x), model(x)):
        np.testing.assert_allclose(got.numpy(), np.asarray(want), atol=1e-5)


def test_pad_and_crop_to_a_target_size_on_images_of_unknown_size():
    # The widths follow the data: the op is one node, its output size the target's.
    images = mk.Input((None, None, 3))
    padded = mk.ops.image.pad_images(
        images, top_padding=1, left_padding=2, target_height=20, target_width=20
    )
    cropped = mk.ops.image.crop_images(
        images, top_cropping=1, left_cropping=1, target_height=3, target_width=3
    )
    assert padded.shape == (None, 20, 20, 3) and cropped.shape == (None, 3, 3, 3)
    model = mk.Model(images, [padded, cropped])
    for height, width in [(6, 7), (9, 5)]:
        data = np.arange(2 * height * width * 3, dtype="float32").reshape(2, height, width, 3)
        got_padded, got_cropped = model(data)
        expected = np.zeros((2, 20, 20, 3), "float32")
        expected[:, 1 : 1 + height, 2 : 2 + width] = data
        np.testing.assert_array_equal(got_padded.numpy(), expected)
        np.testing.assert_array_equal(got_cropped.numpy(), data[:, 1:4, 1:4])


def test_extract_patches_3d_by_hand():
    volume = np.arange(2 * 4 * 4 * 3, dtype="float32").reshape(2, 4, 4, 3)  # one volume
    patches = mk.ops.image.extract_patches_3d(volume, (2, 2, 2)).numpy()
    assert patches.shape == (1, 2, 2, 24)
    # patch (0, 1, 0): depths 0-1, rows 2-3, columns 0-1, each voxel's channels together
    expected = [
        volume[d, r, c, k] for d in (0, 1) for r in (2, 3) for c in (0, 1) for k in range(3)
    ]
    np.testing.assert_array_equal(patches[0, 1, 0], expected)
    strided = mk.ops.image.extract_patches(volume[None], (2, 3, 3), strides=1, padding="same")
    assert strided.shape == (1, 2, 4, 4, 54)
    with pytest.raises(ValueError, match="extract_patches_3d: size must be an int or 3 ints"):
        mk.ops.image.extract_patches_3d(volume, (2, 2))
    with pytest.raises(ValueError, match="extract_patches: volumes must be 4-D"):
        mk.ops.image.extract_patches_3d(volume[0], 2)


def test_extract_patches_3d_gradient_and_node(tmp_path):
    def patches(x):
        return mk.ops.image.extract_patches_3d(x, 2, strides=1)

    check_gradients(patches, [_images((1, 3, 3, 4, 2)).astype("float64")])
    inputs = mk.Input((4, 6, 6, 2))
    model = mk.Model(inputs, mk.ops.image.extract_patches_3d(inputs, 2))
    assert model.output.shape == (None, 2, 3, 3, 16)
    model.save(tmp_path / "volumes.keras")
    x = _images((2, 4, 6, 6, 2))
    loaded = mk.models.load_model(tmp_path / "volumes.keras")
    np.testing.assert_array_equal(loaded(x).numpy(), model(x).numpy())


CASES_3D = [
    ((2, 4, 6, 6, 2), dict(size=2)),
    ((2, 5, 6, 7, 2), dict(size=(2, 3, 2), strides=1)),
    ((2, 5, 6, 7, 2), dict(size=(2, 2, 3), strides=2, padding="same")),
    ((2, 6, 6, 6, 1), dict(size=2, strides=1, dilation_rate=2)),
    ((4, 6, 6, 3), dict(size=(2, 3, 3))),
    ((2, 3, 4, 6, 6), dict(size=2, data_format="channels_first")),
]


@pytest.mark.parametrize("shape, kwargs", CASES_3D)
def test_extract_patches_3d_matches_keras(shape, kwargs):
    keras = pytest.importorskip("keras")
    kwargs = {"data_format": "channels_last", **kwargs}
    x = _images(shape)
    want = np.asarray(keras.ops.image.extract_patches_3d(x, **kwargs))
    got = mk.ops.image.extract_patches_3d(x, **kwargs)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(got.numpy(), want, atol=1e-6)


@pytest.mark.parametrize("dtype", ["uint8", "int32", "int64"])
@pytest.mark.parametrize("strides", [None, 1])  # (side by side: a reshape; else a convolution)
def test_extract_patches_keeps_an_integer_dtype_and_every_value(dtype, strides):
    info = np.iinfo(dtype)
    values = np.array([info.max, info.max - 1, info.min, 7], dtype=dtype).reshape(1, 2, 2, 1)
    images = np.tile(values, (2, 2, 2, 3))  # (2, 4, 4, 3): far above float32's 2**24 for ints
    patches = mk.ops.image.extract_patches(images, 2, strides=strides)
    assert patches.dtype == dtype
    by_hand = np.stack([images[:, r : r + 2, c : c + 2].reshape(2, -1) for r, c in
                        [(0, 0), (0, 2), (2, 0), (2, 2)] if strides is None] or
                       [images[:, r : r + 2, c : c + 2].reshape(2, -1)
                        for r in range(3) for c in range(3)], axis=1)  # fmt: skip
    np.testing.assert_array_equal(patches.numpy().reshape(by_hand.shape), by_hand)
    symbolic = mk.ops.image.extract_patches(mk.Input((4, 4, 3), dtype=dtype), 2, strides=strides)
    assert symbolic.dtype == dtype


@pytest.mark.parametrize(
    ("size", "strides", "dilation", "padding", "shape"),
    [
        (3, 2, 1, "same", (2, 7, 6, 2)),
        ((2, 3), (1, 2), (2, 1), "valid", (1, 8, 9, 3)),
        (2, 3, 2, "same", (2, 5, 5, 1)),
        ((2, 2, 2), 1, 1, "same", (1, 3, 4, 5, 2)),
        ((2, 1, 3), (2, 1, 1), (1, 2, 1), "valid", (2, 5, 4, 6, 1)),
    ],
)
def test_integer_patches_equal_the_convolutions_of_the_same_values(
    size, strides, dilation, padding, shape
):
    images = np.random.default_rng(0).integers(-50, 50, shape).astype("int32")
    as_ints = mk.ops.image.extract_patches(images, size, strides, dilation, padding)
    as_floats = mk.ops.image.extract_patches(
        images.astype("float32"), size, strides, dilation, padding
    )
    assert as_ints.dtype == "int32" and as_ints.shape == as_floats.shape
    np.testing.assert_array_equal(as_ints.numpy(), as_floats.numpy().astype("int32"))
