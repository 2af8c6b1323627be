"""Symbolic shapes of op nodes whose integer constants reach the placeholder sizes the
shapes are traced on: a size that depends on an unknown axis is None, and a valid
call builds. By hand (numpy on two real sizes), and the same as Keras where Keras
knows the size."""

import tracemalloc

import numpy as np
import pytest

import minikeras as mk
from minikeras import ops


def _cases(k):
    """(name, symbolic output) pairs, built with library `k` (minikeras or keras)."""
    vector, matrix = k.Input((None,)), k.Input((None, None))
    cases = [
        ("diagonal_negative_offset_batch", k.ops.diagonal(k.Input((4,)), offset=-100)),
        ("diagonal_offset_unknown_axes", k.ops.diagonal(matrix, offset=100, axis1=1, axis2=2)),
        ("diagonal_offset_one_known", k.ops.diagonal(k.Input((4, None)), 100, 1, 2)),
        ("extract_sequences_long", k.ops.extract_sequences(vector, 100, 10)),
        ("extract_sequences_stride", k.ops.extract_sequences(vector, 3, 10)),
        ("take_along_axis_90", k.ops.take_along_axis(vector, np.array([[90]]), axis=1)),
        ("take_along_axis_90_batch", k.ops.take_along_axis(k.Input((5,)), np.array([[90]]), 0)),
        ("take_90", k.ops.take(vector, np.array([90]), axis=1)),
        ("slice_at_90", k.ops.slice(vector, (0, 90), (1, 3))),
        ("getitem_90", vector[:, 90:95]),
        ("max_pool_100", k.ops.max_pool(k.Input((None, 1)), 100)),
    ]
    if k is mk:  # (Keras's symbolic tensors take no slice step)
        cases.append(("getitem_step_4_batch", k.Input((3,))[::4]))
    return cases


# Each output shape, by hand: None where the size follows an unknown axis.
EXPECTED = {
    "diagonal_negative_offset_batch": (None,),  # min(batch - 100, 4), or 0
    "diagonal_offset_unknown_axes": (None, None),  # min(n, n - 100), or 0
    "diagonal_offset_one_known": (None, None),  # min(4, n - 100)
    "extract_sequences_long": (None, None, 100),  # (n - 100) // 10 + 1 frames
    "extract_sequences_stride": (None, None, 3),  # (n - 3) // 10 + 1 frames
    "take_along_axis_90": (None, 1),
    "take_along_axis_90_batch": (1, 5),
    "take_90": (None, 1),
    "slice_at_90": (1, 3),
    "getitem_90": (None, None),  # 5, or fewer below 95
    "getitem_step_4_batch": (None, 3),  # ceil(batch / 4)
    "max_pool_100": (None, None, 1),
}


def test_sizes_that_follow_an_unknown_axis_are_none_and_valid_calls_build():
    assert {name: tuple(t.shape) for name, t in _cases(mk)} == EXPECTED


def test_the_sizes_hold_on_data_of_two_lengths():
    # A model of such nodes runs on data of two lengths past the constants.
    x = mk.Input((None,))
    model = mk.Model(x, [ops.take_along_axis(x, np.array([[90]]), axis=1),
                         ops.extract_sequences(x, 100, 10)])  # fmt: skip
    for length, frames in [(100, 1), (150, 6)]:
        data = np.arange(2 * length, dtype="float32").reshape(2, length)
        taken, sequences = model(data)
        assert taken.numpy().tolist() == [[90.0], [length + 90.0]]
        assert sequences.shape == (2, frames, 100)


def test_sizes_as_keras():
    keras = pytest.importorskip("keras")
    theirs = [(name, tuple(t.shape)) for name, t in _cases(keras)]
    assert theirs == [(name, tuple(t.shape)) for name, t in _cases(mk)][: len(theirs)]


@pytest.mark.parametrize(
    "build, shape",
    [
        (lambda: ops.one_hot(mk.Input((50,), dtype="int32"), 5000), (None, 50, 5000)),
        (lambda: ops.tile(mk.Input((50,)), [1, 1000]), (None, 50000)),
        (
            lambda: ops.take(ops.ones((3000, 64)), mk.Input((20,), dtype="int32"), axis=0),
            (None, 20, 64),
        ),  # fmt: skip
        (lambda: ops.matmul(mk.Input((50,)), np.ones((50, 4000), "float32")), (None, 4000)),
    ],
)
def test_a_large_constant_with_large_outputs_builds_on_small_placeholders(build, shape):
    # The spread placeholders (sizes past the constant) run only where the outputs they
    # would make stay small: these built in seconds and gigabytes on them.
    tracemalloc.start()
    try:
        built = build()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert tuple(built.shape) == shape
    assert peak < 64 * 2**20, f"{peak / 2**20:.0f} MiB"
