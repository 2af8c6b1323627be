"""`ops.image.gaussian_blur`: the kernel by hand, Keras's values when importable (its
column-first reading of kernel_size and sigma, even kernels), gradients, op nodes."""

import numpy as np
import pytest

import minikeras as mk
from tests.finite_differences import check_float32, check_gradients, check_second_order


def _images(shape, seed=0):
    return np.random.default_rng(seed).random(shape).astype("float32")


def _spike(size=7):
    image = np.zeros((size, size, 1), "float32")
    image[size // 2, size // 2] = 1.0
    return image


def test_kernel_by_hand():
    weights = np.exp(-0.5 * np.array([1.0, 0.0, 1.0]) / 4.0)  # sigma 2, taps -1, 0, 1
    np.testing.assert_allclose(
        mk.ops.image_filters.gaussian_kernel(3, 2.0), weights / weights.sum()
    )
    np.testing.assert_allclose(mk.ops.image_filters.gaussian_kernel(1, 0.5), [1.0])


def test_blur_of_a_spike_is_the_kernel_columns_first():
    # kernel_size and sigma give (columns, rows): 3 columns with sigma 1, 5 rows with sigma 2
    blurred = mk.ops.image.gaussian_blur(_spike(), kernel_size=(3, 5), sigma=(1.0, 2.0))
    assert blurred.dtype == "float32" and blurred.shape == (7, 7, 1)
    rows = mk.ops.image_filters.gaussian_kernel(5, 2.0)
    columns = mk.ops.image_filters.gaussian_kernel(3, 1.0)
    expected = np.zeros((7, 7))
    expected[1:6, 2:5] = np.outer(rows, columns)
    np.testing.assert_allclose(blurred.numpy()[..., 0], expected, atol=1e-7)


def test_even_kernel_has_one_more_tap_after_the_center():
    blurred = mk.ops.image.gaussian_blur(_spike(), kernel_size=(4, 1), sigma=1.0).numpy()[..., 0]
    assert np.flatnonzero(blurred[3]).tolist() == [1, 2, 3, 4]  # from the spike at column 3


def test_zero_padding_and_channels_first():
    x = _images((2, 5, 6, 3))
    last = mk.ops.image.gaussian_blur(x, (5, 3), (1.5, 0.8)).numpy()
    first = mk.ops.image.gaussian_blur(x.transpose(0, 3, 1, 2), (5, 3), (1.5, 0.8),
                                       data_format="channels_first").numpy()  # fmt: skip
    np.testing.assert_allclose(first.transpose(0, 2, 3, 1), last, atol=1e-7)
    ones = mk.ops.image.gaussian_blur(np.ones((4, 4, 1), "float32")).numpy()[..., 0]
    assert ones[0, 0] < ones[0, 1] < ones[1, 1] <= 1.0  # the zeros past the border weigh


def test_gradients():
    def fn(x):
        return mk.ops.image.gaussian_blur(x, (3, 2), (0.8, 1.3))

    x = _images((1, 4, 5, 2))
    check_gradients(fn, [x])
    check_second_order(fn, [x])
    check_float32(fn, [x])


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="gaussian_blur: images must have a float dtype"):
        mk.ops.image.gaussian_blur(np.ones((3, 3, 1), "uint8"))
    with pytest.raises(ValueError, match="gaussian_blur: kernel_size must be a pair of ints"):
        mk.ops.image.gaussian_blur(np.ones((3, 3, 1)), kernel_size=(3, 0))
    with pytest.raises(ValueError, match="gaussian_blur: sigma must be a pair of numbers > 0"):
        mk.ops.image.gaussian_blur(np.ones((3, 3, 1)), sigma=(1.0, -1.0))
    with pytest.raises(ValueError, match="gaussian_blur: images must be 3-D"):
        mk.ops.image.gaussian_blur(np.ones((3, 3)))


KERAS_CASES = [
    ((2, 7, 9, 3), {}),
    ((2, 7, 9, 3), dict(kernel_size=(3, 5), sigma=(1.0, 2.0))),
    ((2, 7, 9, 3), dict(kernel_size=(4, 2), sigma=(0.7, 1.5))),
    ((3, 7, 9), dict(kernel_size=(5, 5), sigma=(2.0, 2.0), data_format="channels_first")),
    ((7, 9, 2), dict(kernel_size=(11, 1), sigma=(3.0, 1.0))),
]


@pytest.mark.parametrize("shape, kwargs", KERAS_CASES)
def test_matches_keras(shape, kwargs):
    keras = pytest.importorskip("keras")
    kwargs = {"data_format": "channels_last", **kwargs}  # (Keras's eager None: channels first)
    x = _images(shape)
    want = np.asarray(keras.ops.image.gaussian_blur(x, **kwargs))
    got = mk.ops.image.gaussian_blur(x, **kwargs)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got.numpy(), want, atol=1e-6)


def test_op_node_saves_and_crosses_to_keras(tmp_path):
    inputs = mk.Input((6, 7, 2))
    outputs = mk.ops.image.gaussian_blur(inputs, kernel_size=(3, 5), sigma=(1.0, 2.0))
    assert outputs.shape == (None, 6, 7, 2)
    model = mk.Model(inputs, outputs)
    x = _images((2, 6, 7, 2))
    for suffix in ("keras", "minikeras"):
        model.save(tmp_path / f"blur.{suffix}")
        loaded = mk.models.load_model(tmp_path / f"blur.{suffix}")
        np.testing.assert_array_equal(loaded(x).numpy(), model(x).numpy())
    keras = pytest.importorskip("keras")
    theirs = keras.models.load_model(tmp_path / "blur.keras")
    np.testing.assert_allclose(np.asarray(theirs(x)), model(x).numpy(), atol=1e-6)
    kinputs = keras.Input((6, 7, 2))
    kmodel = keras.Model(kinputs, keras.ops.image.gaussian_blur(kinputs, (5, 3), (2.0, 0.5)))
    kmodel.save(tmp_path / "theirs.keras")
    ours = mk.models.load_model(tmp_path / "theirs.keras")
    np.testing.assert_allclose(ours(x).numpy(), np.asarray(kmodel(x)), atol=1e-6)


def test_sobel_by_hand():
    image = np.zeros((1, 3, 4, 1), "float32")
    image[0, :, 2:] = 1.0  # a step from column 1 to column 2
    edges = mk.ops.image.sobel_edges(image)
    assert edges.shape == (1, 3, 4, 1, 2) and edges.dtype == "float32"
    dy, dx = edges.numpy()[0, :, :, 0, 0], edges.numpy()[0, :, :, 0, 1]
    # dx = (right - left) with row weights 1, 2, 1 (the zero rows past the border count 0)
    np.testing.assert_array_equal(dx[1], [0, 4, 4, -4])
    np.testing.assert_array_equal(dx[0], [0, 3, 3, -3])
    # dy = (below - above) with column weights 1, 2, 1: only the border rows see zeros
    np.testing.assert_array_equal(dy[1], [0, 0, 0, 0])
    np.testing.assert_array_equal(dy[0], [0, 1, 3, 3])
    ints = mk.ops.image.sobel_edges(image.astype("int32"))
    assert ints.dtype == "int32"
    np.testing.assert_array_equal(ints.numpy(), edges.numpy())


def test_sobel_channels_first_and_gradients():
    x = _images((2, 4, 5, 3))
    first = mk.ops.image.sobel_edges(x.transpose(0, 3, 1, 2), "channels_first").numpy()
    last = mk.ops.image.sobel_edges(x).numpy()
    np.testing.assert_allclose(first, last.transpose(0, 3, 1, 2, 4), atol=1e-6)

    def fn(x):
        return mk.ops.image.sobel_edges(x)

    check_gradients(fn, [x[:1, :, :, :2]])
    check_float32(fn, [x[:1, :, :, :2]])


def test_ssim_by_hand():
    x = _images((2, 8, 9, 2))
    np.testing.assert_allclose(mk.ops.image.ssim(x, x, filter_size=5).numpy(), 1.0, atol=1e-6)
    # a window as large as the image, two constant images a and b: one position,
    # variances 0, so SSIM = (2 a b + c1) / (a^2 + b^2 + c1)
    a, b, c1 = 0.2, 0.6, 0.01**2
    got = mk.ops.image.ssim(np.full((3, 3, 1), a, "float32"), np.full((3, 3, 1), b, "float32"),
                            filter_size=3)  # fmt: skip
    assert got.shape == () and got.dtype == "float32"
    np.testing.assert_allclose(got.numpy(), (2 * a * b + c1) / (a * a + b * b + c1), rtol=1e-5)


def test_ssim_gradients():
    def fn(x, y):
        return mk.ops.image.ssim(x, y, filter_size=3, filter_sigma=1.0)

    x, y = _images((2, 4, 4, 1)), _images((2, 4, 4, 1), seed=1)
    check_gradients(fn, [x, y])
    check_float32(fn, [x, y])


def test_sobel_and_ssim_bad_inputs():
    with pytest.raises(ValueError, match="sobel_edges: images must be 4-D"):
        mk.ops.image.sobel_edges(np.ones((3, 3, 1)))
    with pytest.raises(ValueError, match="ssim: image1 and image2 must be .* of one shape"):
        mk.ops.image.ssim(np.ones((8, 8, 1)), np.ones((8, 9, 1)))
    with pytest.raises(ValueError, match="ssim: a window of 11 does not fit"):
        mk.ops.image.ssim(np.ones((8, 8, 1)), np.ones((8, 8, 1)))


@pytest.mark.parametrize("data_format", ["channels_last", "channels_first"])
def test_sobel_and_ssim_match_keras(data_format):
    keras = pytest.importorskip("keras")
    rng = np.random.default_rng(0)
    x = _images((2, 16, 17, 3))
    y = np.clip(x + rng.normal(0, 0.1, x.shape), 0, 1).astype("float32")
    if data_format == "channels_first":
        x, y = x.transpose(0, 3, 1, 2), y.transpose(0, 3, 1, 2)
    want = np.asarray(keras.ops.image.sobel_edges(x, data_format))
    got = mk.ops.image.sobel_edges(x, data_format)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(got.numpy(), want, atol=1e-5)
    for kwargs in ({}, dict(filter_size=5, filter_sigma=1.0, max_val=2.0, k1=0.02, k2=0.05)):
        want = np.asarray(keras.ops.image.ssim(x, y, data_format=data_format, **kwargs))
        got = mk.ops.image.ssim(x, y, data_format=data_format, **kwargs)
        assert got.shape == want.shape and got.dtype == want.dtype
        np.testing.assert_allclose(got.numpy(), want, atol=1e-6)


def test_sobel_and_ssim_nodes_cross_to_keras(tmp_path):
    first, second = mk.Input((16, 16, 3)), mk.Input((16, 16, 3))
    outputs = [mk.ops.image.sobel_edges(first), mk.ops.image.ssim(first, second, filter_size=5)]
    assert [o.shape for o in outputs] == [(None, 16, 16, 3, 2), (None,)]
    model = mk.Model([first, second], outputs)
    model.save(tmp_path / "edges.keras")
    data = [_images((2, 16, 16, 3)), _images((2, 16, 16, 3), seed=1)]
    for got, want in zip(mk.models.load_model(tmp_path / "edges.keras")(data), model(data)):
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    keras = pytest.importorskip("keras")
    for got, want in zip(keras.models.load_model(tmp_path / "edges.keras")(data), model(data)):
        np.testing.assert_allclose(np.asarray(got), want.numpy(), atol=1e-5)
