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
