"""ops.extract_sequences: frames of the last axis, by hand, with gradients, against Keras."""

import numpy as np
import pytest
from finite_differences import check_float32, check_gradients, check_second_order
from op_graphs import assert_same_as_keras, assert_saves_and_crosses_to_keras

from minikeras import ops

X = np.random.default_rng(0).normal(size=(2, 9)).astype("float32")


def test_frames_by_hand_keep_the_dtype_and_empty_when_too_short():
    got = ops.extract_sequences(np.arange(12, dtype="int8").reshape(2, 6), 3, 2)
    want = np.array([[[0, 1, 2], [2, 3, 4]], [[6, 7, 8], [8, 9, 10]]], "int8")
    np.testing.assert_array_equal(got.numpy(), want)
    assert got.dtype == np.int8
    assert ops.extract_sequences(np.arange(5.0), 6, 1).shape == (0, 6)
    assert ops.extract_sequences(X, 4, 3).shape == (2, 2, 4)
    with pytest.raises(ValueError, match="sequence_stride must be a positive int"):
        ops.extract_sequences(X, 3, 0)
    with pytest.raises(ValueError, match="rank >= 1"):
        ops.extract_sequences(np.float32(1.0), 1, 1)


def test_gradients_add_each_frame_back_where_it_came_from():
    fn = lambda x: ops.extract_sequences(x, 4, 2) ** 2  # noqa: E731 (overlapping frames)
    check_gradients(fn, [X])
    check_second_order(fn, [X])
    check_float32(fn, [X])


def test_the_same_as_keras_and_nodes_both_ways(tmp_path):
    ints = np.arange(20, dtype="int32").reshape(2, 10)
    assert_same_as_keras(
        [("extract_sequences", (X, 4, 3), {}), ("extract_sequences", (ints, 3, 1), {})]
    )

    def build(lib):
        inputs = lib.Input((9,))
        return lib.Model(inputs, lib.ops.extract_sequences(inputs, 4, 2))

    assert_saves_and_crosses_to_keras(build, X, tmp_path)
