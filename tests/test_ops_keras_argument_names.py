"""The ops whose argument names and defaults follow Keras 3.15: called by Keras's keywords.

`eye(N, M)`, `reshape(x, newshape)`, `stack(x)`, `get_item(x, key)`,
`stop_gradient(variable)`, `max`/`min(..., initial)`, `where`'s one-argument
form, `pad`'s `constant_values=None` and `arange`'s `step=None`. Values are
hand-computed; the Keras comparison runs when Keras is importable.
"""

import os

import numpy as np
import pytest

import minikeras as mk
from minikeras import ops

X = np.array([[1.0, 5.0], [3.0, 2.0]], "float32")


def test_keyword_calls_with_keras_names():
    np.testing.assert_array_equal(ops.eye(N=2, M=3, k=1).numpy(), [[0, 1, 0], [0, 0, 1]])
    assert ops.reshape(X, newshape=(4,)).shape == (4,)
    assert ops.stack(x=[X, X], axis=1).shape == (2, 2, 2)
    np.testing.assert_array_equal(ops.get_item(X, key=1).numpy(), [3.0, 2.0])
    np.testing.assert_array_equal(ops.getitem(X, key=(0, 1)).numpy(), 5.0)
    np.testing.assert_array_equal(ops.stop_gradient(variable=X).numpy(), X)


def test_stop_gradient_by_keyword_still_stops_the_gradient():
    v = mk.Variable(X)
    with mk.GradientTape() as tape:
        total = ops.sum(v * ops.stop_gradient(variable=v))
    np.testing.assert_array_equal(tape.gradient(total, v).numpy(), X)


def test_max_min_initial():
    np.testing.assert_array_equal(ops.max(X, axis=1, initial=4.0).numpy(), [5.0, 4.0])
    np.testing.assert_array_equal(ops.min(X, axis=0, initial=2.5).numpy(), [1.0, 2.0])
    assert ops.max(X, initial=0.0).dtype == np.float32
    # an empty reduction gives `initial` (without it, an error)
    np.testing.assert_array_equal(
        ops.max(np.zeros((0, 2), "float32"), axis=0, initial=-1.0).numpy(), [-1.0, -1.0]
    )
    with pytest.raises(ValueError):
        ops.max(np.zeros((0, 2), "float32"), axis=0)


def test_max_initial_gradient_skips_the_elements_it_beats():
    v = mk.Variable(X)
    with mk.GradientTape() as tape:
        total = ops.sum(ops.max(v, axis=1, initial=4.0))
    # row 0's maximum is 5 (x wins); row 1's is the initial 4 (no gradient to x)
    np.testing.assert_array_equal(tape.gradient(total, v).numpy(), [[0, 1], [0, 0]])


def test_where_one_argument_gives_nonzero_indices():
    rows, cols = ops.where([[0, 3], [4, 0]])
    assert rows.dtype == np.int32 and cols.dtype == np.int32
    np.testing.assert_array_equal(rows.numpy(), [0, 1])
    np.testing.assert_array_equal(cols.numpy(), [1, 0])
    (only,) = ops.where(np.array([True, False, True]))
    np.testing.assert_array_equal(only.numpy(), [0, 2])
    np.testing.assert_array_equal(
        ops.where(condition=[True, False], x1=1.0, x2=0.0).numpy(), [1, 0]
    )


def test_where_with_one_branch_raises():
    with pytest.raises(ValueError, match="x1.*x2"):
        ops.where([True], [1.0])
    with pytest.raises(ValueError, match="x1.*x2"):
        ops.where([True], x2=[1.0])


def test_pad_and_arange_defaults():
    np.testing.assert_array_equal(ops.pad([1.0, 2.0], 1).numpy(), [0, 1, 2, 0])
    np.testing.assert_array_equal(ops.pad([1.0, 2.0], 1, constant_values=3.0).numpy(), [3, 1, 2, 3])
    np.testing.assert_array_equal(ops.arange(1, 4, None).numpy(), [1, 2, 3])
    np.testing.assert_array_equal(ops.arange(1, 4).numpy(), [1, 2, 3])


def test_symbolic_reshape_and_max_initial_record_keras_configs():
    x = mk.Input((4,))
    y = ops.max(ops.reshape(x, newshape=(-1, 2, 2)), axis=-1, initial=0.5)
    model = mk.Model(x, y)
    data = np.array([[0.0, 1.0, -2.0, 0.25]], "float32")
    np.testing.assert_array_equal(model(data).numpy(), [[1.0, 0.5]])
    configs = {type(op).__name__: op.get_config() for op in model.operations}
    assert configs["Reshape"]["newshape"] == (-1, 2, 2)
    assert configs["Max"]["initial"] == 0.5


def test_against_keras():
    os.environ.setdefault("KERAS_BACKEND", "jax")
    keras = pytest.importorskip("keras")
    k = keras.ops
    pairs = [
        (k.eye(N=2, M=3, k=1), ops.eye(N=2, M=3, k=1)),
        (k.max(X, axis=1, initial=4.0), ops.max(X, axis=1, initial=4.0)),
        (k.min(X, initial=2.5), ops.min(X, initial=2.5)),
        (k.pad(X, 1), ops.pad(X, 1)),
        (k.arange(1, 7, None), ops.arange(1, 7, None)),
        (k.reshape(X, newshape=(4,)), ops.reshape(X, newshape=(4,))),
        (k.get_item(X, key=1), ops.get_item(X, key=1)),
        (k.stack(x=[X, X], axis=1), ops.stack(x=[X, X], axis=1)),
    ]
    for theirs, ours in pairs:
        theirs = np.asarray(theirs)
        np.testing.assert_array_equal(ours.numpy(), theirs)
        assert ours.dtype == theirs.dtype
    condition = np.array([[0, 3], [4, 0]])
    for theirs, ours in zip(k.where(condition), ops.where(condition), strict=True):
        np.testing.assert_array_equal(ours.numpy(), np.asarray(theirs))
        assert ours.dtype == np.asarray(theirs).dtype
