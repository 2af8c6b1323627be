"""`ops.image`'s map_coordinates, affine_transform, perspective_transform and
elastic_transform: hand values, every fill mode, Keras's values and dtypes when
importable, gradients with respect to the images, op nodes that cross to Keras."""

import numpy as np
import pytest

import minikeras as mk
from tests.finite_differences import check_float32, check_gradients, check_second_order

FILL_MODES = ("constant", "nearest", "wrap", "mirror", "reflect")
# transforms whose sampled points fall on no exact half (float32 and float64 round alike)
TRANSFORMS = np.array(
    [
        [1.125, 0.3125, -1.375, -0.1875, 0.875, 0.6875, 0, 0],
        [0.8125, -0.4375, 2.1875, 0.0625, 1.0625, -1.3125, 0, 0],
    ],
    "float32",
)
START = np.array([[[0, 0], [6, 0], [0, 5], [6, 5]], [[1, 1], [5, 0], [0, 4], [6, 5]]], "float32")
END = np.array(
    [[[0.5, 0.2], [6, 1], [1, 5], [5, 4.5]], [[0, 0], [6, 0], [0, 5], [6, 5]]], "float32"
)


def _images(shape=(2, 6, 7, 3), seed=0):
    return np.random.default_rng(seed).random(shape).astype("float32")


# a row [a b c d] read at -2 .. 5 by each fill mode, nearest grid point
FILL_BY_HAND = {
    "constant": [9, 9, 0, 1, 2, 3, 9, 9],
    "nearest": [0, 0, 0, 1, 2, 3, 3, 3],
    "wrap": [2, 3, 0, 1, 2, 3, 0, 1],
    "mirror": [2, 1, 0, 1, 2, 3, 2, 1],
    "reflect": [1, 0, 0, 1, 2, 3, 3, 2],
}


@pytest.mark.parametrize("fill_mode", FILL_MODES)
def test_fill_modes_by_hand(fill_mode):
    row = np.arange(4.0, dtype="float32")
    points = np.arange(-2.0, 6.0).reshape(1, -1)
    got = mk.ops.image.map_coordinates(row, points, 0, fill_mode, fill_value=9.0)
    assert got.dtype == "float32"
    np.testing.assert_array_equal(got.numpy(), FILL_BY_HAND[fill_mode])


def test_map_coordinates_linear_and_rounding_by_hand():
    grid = np.arange(12.0, dtype="float32").reshape(3, 4)  # grid[r, c] = 4 r + c
    got = mk.ops.image.map_coordinates(grid, [[0.5, 1.25], [1.0, 2.5]], 1).numpy()
    np.testing.assert_allclose(got, [4 * 0.5 + 1.0, 4 * 1.25 + 2.5])
    # a point half outside mixes the edge with the fill value, corner by corner
    edge = mk.ops.image.map_coordinates(grid, [[2.5], [0.0]], 1, fill_value=100.0).numpy()
    np.testing.assert_allclose(edge, [0.5 * 8.0 + 0.5 * 100.0])
    halves = mk.ops.image.map_coordinates(np.arange(5.0), [[0.5, 1.5, 2.5]], 0).numpy()
    np.testing.assert_array_equal(halves, [1.0, 2.0, 3.0])  # halves away from zero
    ints = mk.ops.image.map_coordinates(np.array([0, 3], "int32"), [[0.5]], 1)
    assert ints.dtype == "int32" and ints.numpy().tolist() == [2]  # 1.5 rounded away


def test_affine_by_hand():
    image = np.arange(12.0, dtype="float32").reshape(3, 4, 1)
    identity = np.array([1.0, 0, 0, 0, 1, 0, 0, 0])
    np.testing.assert_array_equal(mk.ops.image.affine_transform(image, identity), image)
    transpose = np.array([0.0, 1, 0, 1, 0, 0, 0, 0])  # reads (x, y) = (row, column)
    got = mk.ops.image.affine_transform(image, transpose).numpy()[..., 0]
    expected = np.array([[0, 4, 8, 0], [1, 5, 9, 0], [2, 6, 10, 0]], "float32")
    np.testing.assert_array_equal(got, expected)
    half = np.array([1.0, 0, 0.5, 0, 1, 0, 0, 0])  # half a pixel right: the mean of neighbours
    got = mk.ops.image.affine_transform(image, half, fill_mode="nearest").numpy()[0, :, 0]
    np.testing.assert_allclose(got, [0.5, 1.5, 2.5, 3.0])
    projective = np.array([1.0, 0, 0, 0, 1, 0, 0.5, 0])  # both divided by 0.5 x + 1
    got = mk.ops.image.affine_transform(image, projective, "nearest").numpy()[0, :, 0]
    np.testing.assert_array_equal(got, [0, 1, 1, 1])  # reads x / (0.5 x + 1): 0, 2/3, 1, 1.2


def test_perspective_by_hand():
    image = np.arange(9.0, dtype="float32").reshape(1, 3, 3, 1)
    corners = np.array([[0.0, 0], [2, 0], [0, 2], [2, 2]])
    shifted = mk.ops.image.perspective_transform(image, corners, corners + [1.0, 0.0])
    expected = [[0, 0, 1], [0, 3, 4], [0, 6, 7]]  # (up to the solve's rounding)
    np.testing.assert_allclose(shifted.numpy()[0, :, :, 0], expected, atol=1e-6)
    rows = mk.ops.image_transforms.homographies(corners[None], corners[None] * 2.0)
    np.testing.assert_allclose(rows, [[0.5, 0, 0, 0, 0.5, 0, 0, 0]], atol=1e-12)


def test_elastic_is_seeded_and_zero_alpha_keeps_images():
    x = _images()
    same = mk.ops.image.elastic_transform(x, alpha=0.0, sigma=1.0, seed=3)
    np.testing.assert_allclose(same.numpy(), x, atol=1e-7)
    a = mk.ops.image.elastic_transform(x, alpha=4.0, sigma=1.0, seed=3).numpy()
    b = mk.ops.image.elastic_transform(x, alpha=4.0, sigma=1.0, seed=3).numpy()
    c = mk.ops.image.elastic_transform(x, alpha=4.0, sigma=1.0, seed=4).numpy()
    np.testing.assert_array_equal(a, b)
    assert a.dtype == np.float32 and np.abs(a - c).max() > 1e-3 and np.abs(a - x).max() > 1e-3
    assert x.min() <= a.min() and a.max() <= x.max()  # bilinear mixes, reflect stays inside


def test_channels_first_and_single_images():
    x = _images()
    last = mk.ops.image.affine_transform(x, TRANSFORMS, fill_mode="wrap").numpy()
    first = mk.ops.image.affine_transform(x.transpose(0, 3, 1, 2), TRANSFORMS, fill_mode="wrap",
                                          data_format="channels_first").numpy()  # fmt: skip
    np.testing.assert_allclose(first.transpose(0, 2, 3, 1), last)
    single = mk.ops.image.affine_transform(x[1], TRANSFORMS[1], fill_mode="wrap").numpy()
    np.testing.assert_allclose(single, last[1])
    one_for_all = mk.ops.image.perspective_transform(x, START[0], END[0]).numpy()
    np.testing.assert_allclose(
        one_for_all[1], mk.ops.image.perspective_transform(x[1], START[0], END[0]).numpy()
    )


@pytest.mark.parametrize("fill_mode", FILL_MODES)
def test_affine_gradients(fill_mode):
    def fn(x):
        return mk.ops.image.affine_transform(x, TRANSFORMS, fill_mode=fill_mode, fill_value=0.5)

    x = _images((2, 3, 4, 2))
    check_gradients(fn, [x])
    check_second_order(fn, [x])
    check_float32(fn, [x])


@pytest.mark.parametrize("name", ["map_coordinates", "perspective_transform", "elastic"])
def test_other_gradients(name):
    points = np.random.default_rng(1).uniform(-1, 4, (2, 5, 3))
    fns = {
        "map_coordinates": lambda x: mk.ops.image.map_coordinates(x[0, :, :, 0], points, 1),
        "perspective_transform": lambda x: mk.ops.image.perspective_transform(x, START, END),
        "elastic": lambda x: mk.ops.image.elastic_transform(x, 2.0, 1.0, seed=0),
    }
    x = _images((2, 4, 5, 2))
    check_gradients(fns[name], [x])
    check_float32(fns[name], [x])


def test_bad_arguments_are_named():
    image = np.ones((4, 4, 1), "float32")
    with pytest.raises(ValueError, match="map_coordinates: coordinates must have one entry per"):
        mk.ops.image.map_coordinates(image, np.ones((2, 3)), 1)
    with pytest.raises(ValueError, match="map_coordinates: order must be one of \\[0, 1\\]"):
        mk.ops.image.map_coordinates(image, np.ones((3, 3)), 3)
    with pytest.raises(ValueError, match="affine_transform: fill_mode must be one of"):
        mk.ops.image.affine_transform(image, np.ones(8), fill_mode="edge")
    with pytest.raises(ValueError, match="affine_transform: transform must be \\(8,\\)"):
        mk.ops.image.affine_transform(image, np.ones(6))
    with pytest.raises(ValueError, match="affine_transform: transform .* batch of 2"):
        mk.ops.image.affine_transform(np.ones((2, 4, 4, 1)), np.ones((3, 8)))
    with pytest.raises(ValueError, match="perspective_transform: start_points must be \\(4, 2\\)"):
        mk.ops.image.perspective_transform(image, np.ones((3, 2)), np.ones((3, 2)))
    with pytest.raises(ValueError, match="perspective_transform: start_points and end_points"):
        mk.ops.image.perspective_transform(image, START, END[0])
    with pytest.raises(ValueError, match="elastic_transform: sigma must be a number > 0"):
        mk.ops.image.elastic_transform(image, sigma=0.0)
    with pytest.raises(ValueError, match="elastic_transform: images must have a float dtype"):
        mk.ops.image.elastic_transform(image.astype("uint8"))


@pytest.mark.parametrize("order", [0, 1])
@pytest.mark.parametrize("fill_mode", FILL_MODES)
@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_map_coordinates_matches_keras(order, fill_mode, dtype):
    keras = pytest.importorskip("keras")
    rng = np.random.default_rng(0)
    for shape in [(5,), (4, 6), (3, 4, 5)]:
        x = (rng.random(shape) * 100).astype(dtype)
        points = rng.random((len(shape), 7, 3)) * (np.array(shape)[:, None, None] + 4) - 2
        points = points.astype("float32")
        want = np.asarray(keras.ops.image.map_coordinates(x, points, order, fill_mode, 3))
        got = mk.ops.image.map_coordinates(x, points, order, fill_mode, 3)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(got.numpy(), want, atol=1e-4)


@pytest.mark.parametrize("interpolation", ["bilinear", "nearest"])
@pytest.mark.parametrize("fill_mode", FILL_MODES)
@pytest.mark.parametrize("data_format", ["channels_last", "channels_first"])
def test_affine_matches_keras(interpolation, fill_mode, data_format):
    keras = pytest.importorskip("keras")
    x = _images()
    x = x if data_format == "channels_last" else x.transpose(0, 3, 1, 2)
    args = (interpolation, fill_mode, 0.5, data_format)
    want = np.asarray(keras.ops.image.affine_transform(x, TRANSFORMS, *args))
    got = mk.ops.image.affine_transform(x, TRANSFORMS, *args)
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got.numpy(), want, atol=1e-6)


@pytest.mark.parametrize("interpolation", ["bilinear", "nearest"])
def test_perspective_matches_keras(interpolation):
    keras = pytest.importorskip("keras")
    x = _images()
    args = (interpolation, 0.25, "channels_last")
    want = np.asarray(keras.ops.image.perspective_transform(x, START, END, *args))
    got = mk.ops.image.perspective_transform(x, START, END, *args)
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got.numpy(), want, atol=1e-5)


def test_op_nodes_save_and_cross_to_keras(tmp_path):
    def outputs(ops, images, transforms):
        return [
            ops.image.affine_transform(images, transforms, fill_mode="reflect"),
            ops.image.perspective_transform(images, START[0], END[0], "nearest"),
            ops.image.elastic_transform(images, alpha=3.0, sigma=1.0, seed=2),
            ops.image.map_coordinates(images[0, :, :, 0], np.full((2, 3, 3), 1.5), 1),
        ]

    images, transforms = mk.Input((6, 7, 3)), mk.Input((8,))
    model = mk.Model([images, transforms], outputs(mk.ops, images, transforms))
    data = [_images((1, 6, 7, 3)), TRANSFORMS[:1]]
    for suffix in ("keras", "minikeras"):
        model.save(tmp_path / f"warps.{suffix}")
        loaded = mk.models.load_model(tmp_path / f"warps.{suffix}")
        for got, want in zip(loaded(data), model(data)):
            np.testing.assert_array_equal(got.numpy(), want.numpy())
    keras = pytest.importorskip("keras")
    theirs = keras.models.load_model(tmp_path / "warps.keras")
    kimages, ktransforms = keras.Input((6, 7, 3)), keras.Input((8,))
    kmodel = keras.Model([kimages, ktransforms], outputs(keras.ops, kimages, ktransforms))
    kmodel.save(tmp_path / "theirs.keras")
    ours = mk.models.load_model(tmp_path / "theirs.keras")
    for index in (0, 1, 3):  # (the elastic noise is each library's own)
        np.testing.assert_allclose(np.asarray(theirs(data)[index]), model(data)[index], atol=1e-6)
        np.testing.assert_allclose(ours(data)[index], np.asarray(kmodel(data)[index]), atol=1e-6)
