"""depth_to_space and space_to_depth: by hand, inverse of each other, gradients, Keras's
layouts and values, and their nodes through .keras files."""

import numpy as np
import pytest
from finite_differences import check_float32, check_gradients, check_second_order
from op_graphs import assert_saves_and_crosses_to_keras

from minikeras import ops

RNG = np.random.default_rng(11)
X = RNG.normal(size=(2, 4, 6, 8)).astype("float32")


def test_by_hand():
    # One pixel of 4 channels, channels_last: channel (row * 2 + col) goes to (row, col).
    pixel = np.arange(4, dtype="float32").reshape(1, 1, 1, 4)
    np.testing.assert_array_equal(
        ops.depth_to_space(pixel, 2).numpy()[0, :, :, 0], [[0, 1], [2, 3]]
    )
    # channels_first, 2 channels of a 2x2 block each: channel c * 4 + row * 2 + col.
    first = np.arange(8, dtype="float32").reshape(1, 8, 1, 1)
    spread = ops.depth_to_space(first, 2, data_format="channels_first").numpy()
    np.testing.assert_array_equal(spread[0], [[[0, 1], [2, 3]], [[4, 5], [6, 7]]])
    last = np.arange(8, dtype="float32").reshape(1, 1, 1, 8)
    spread = ops.depth_to_space(last, 2).numpy()  # (channel (row * 2 + col) * 2 + c)
    np.testing.assert_array_equal(spread[0, :, :, 1], [[1, 3], [5, 7]])
    assert ops.depth_to_space(np.ones((0, 1, 1, 4), "int32"), 2).shape == (0, 2, 2, 1)


@pytest.mark.parametrize("data_format", ["channels_last", "channels_first", None])
def test_each_undoes_the_other(data_format):
    deep = ops.space_to_depth(X, 2, data_format=data_format)
    expected = (2, 2, 3, 32) if data_format != "channels_first" else (2, 16, 3, 4)
    assert deep.shape == expected
    np.testing.assert_array_equal(ops.depth_to_space(deep, 2, data_format).numpy(), X)
    assert ops.space_to_depth(X.astype("int32"), 2, data_format).dtype == np.int32


@pytest.mark.parametrize("name", ["depth_to_space", "space_to_depth"])
def test_gradients_match_finite_differences(name):
    def fn(x):
        return getattr(ops, name)(x, 2) * ops.sum(x)  # (linear alone has no second order)

    data = [X[:1, :2, :2, :4]]
    check_gradients(fn, data)
    check_second_order(fn, data)
    check_float32(fn, data)


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match=r"depth_to_space: the channels \(8\) must be a multiple"):
        ops.depth_to_space(X, 3)
    with pytest.raises(ValueError, match=r"space_to_depth: block_size \(4\) must divide"):
        ops.space_to_depth(X, 4)
    with pytest.raises(ValueError, match="block_size must be at least 2"):
        ops.space_to_depth(X, 1)
    with pytest.raises(ValueError, match="space_to_depth: x must be 4-D"):
        ops.space_to_depth(X[0], 2)
    with pytest.raises(ValueError, match="depth_to_space: `data_format` must be .channels_last."):
        ops.depth_to_space(X, 2, data_format="NHWC")
    with pytest.raises(TypeError, match="block_size must be an int"):
        ops.depth_to_space(X, 2.0)


def test_the_same_values_and_dtypes_as_keras():
    keras = pytest.importorskip("keras")
    for name in ("depth_to_space", "space_to_depth"):
        for data_format in ("channels_last", "channels_first"):
            for data in (X, X.astype("int32")):
                theirs = keras.ops.convert_to_numpy(getattr(keras.ops, name)(data, 2, data_format))
                mine = getattr(ops, name)(data, 2, data_format).numpy()
                assert mine.dtype == theirs.dtype and mine.shape == theirs.shape
                np.testing.assert_array_equal(mine, theirs, err_msg=f"{name} {data_format}")


def _graph(lib):
    x = lib.Input((4, 6, 8), name="x")
    o = lib.ops
    return lib.Model(
        x,
        [
            o.depth_to_space(x, 2),
            o.space_to_depth(x, 2, data_format="channels_first"),
            o.depth_to_space(o.space_to_depth(x, block_size=2), block_size=2),
        ],
    )


def test_models_of_these_ops_save_and_cross_to_keras(tmp_path):
    assert_saves_and_crosses_to_keras(_graph, X, tmp_path)
