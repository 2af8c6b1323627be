"""Keras 3 ops added for ordinary Keras code: sin, cos, tan, tril, triu, cumsum, any, all,
isnan, isinf, isfinite; values, dtypes and gradients by hand, and against Keras."""

import numpy as np
import pytest
from finite_differences import check_float32, check_gradients, check_second_order
from op_graphs import assert_saves_and_crosses_to_keras

import minikeras as mk
from minikeras import ops

RNG = np.random.default_rng(0)
X = RNG.normal(size=(3, 4)).astype("float32")
SPECIAL = np.array([[0.5, np.nan], [np.inf, -np.inf]], "float32")
INTS = np.array([[1, 0], [3, 4]], "int8")

DIFFERENTIABLE = {
    "sin": lambda x: ops.sin(x),
    "cos": lambda x: ops.cos(x),
    "tan": lambda x: ops.tan(x),
    "tril": lambda x: ops.tril(x, k=-1),
    "triu": lambda x: ops.triu(x, k=1),
    "cumsum_axis": lambda x: ops.cumsum(x, axis=1),
    "cumsum_flat": lambda x: ops.cumsum(x),
}


@pytest.mark.parametrize("name", sorted(DIFFERENTIABLE))
def test_gradients_match_finite_differences(name):
    fn = DIFFERENTIABLE[name]
    check_gradients(fn, [X * 0.5])  # (|x| < pi/2: tan stays smooth)
    check_second_order(fn, [X * 0.5])
    check_float32(fn, [X * 0.5])


def test_values_and_dtypes_by_hand():
    np.testing.assert_allclose(ops.sin(X).numpy(), np.sin(X), rtol=1e-6)
    np.testing.assert_allclose(ops.cos(X).numpy(), np.cos(X), rtol=1e-6)
    assert ops.sin(INTS).dtype == np.float32  # (integers become floatx)
    np.testing.assert_array_equal(ops.tril(X).numpy(), np.tril(X))
    upper = ops.triu(np.ones((2, 3, 3)), k=1).numpy()[1]
    np.testing.assert_array_equal(upper, np.triu(np.ones((3, 3)), 1))
    np.testing.assert_array_equal(ops.cumsum(INTS, axis=0).numpy(), [[1, 0], [4, 4]])
    assert ops.cumsum(INTS).dtype == np.int8 and ops.cumsum([True, True]).dtype == np.int32
    assert ops.cumsum(INTS, dtype="float32").dtype == np.float32
    np.testing.assert_array_equal(ops.any(INTS, axis=1).numpy(), [True, True])
    np.testing.assert_array_equal(ops.all(INTS, axis=1).numpy(), [False, True])
    assert ops.all(INTS).dtype == np.bool_ and not bool(ops.all(INTS))
    np.testing.assert_array_equal(ops.isnan(SPECIAL).numpy(), np.isnan(SPECIAL))
    np.testing.assert_array_equal(ops.isinf(SPECIAL).numpy(), np.isinf(SPECIAL))
    np.testing.assert_array_equal(ops.isfinite(SPECIAL).numpy(), np.isfinite(SPECIAL))
    with pytest.raises(ValueError, match="tril: x needs 2 or more axes"):
        ops.tril(np.ones(3))
    with pytest.raises(ValueError, match="cumsum: invalid arguments"):
        ops.cumsum(np.ones(3), axis=2)


def test_the_same_values_and_dtypes_as_keras():
    keras = pytest.importorskip("keras")
    cases = [
        ("sin", (X,), {}), ("cos", (INTS,), {}), ("tan", (X * 0.5,), {}),
        ("tril", (X,), {"k": -1}), ("triu", (INTS,), {"k": 1}),
        ("cumsum", (INTS,), {"axis": 1}), ("cumsum", (X,), {}),
        ("any", (INTS,), {"axis": 0}), ("all", (INTS,), {"axis": 1, "keepdims": True}),
        ("isnan", (SPECIAL,), {}), ("isinf", (SPECIAL,), {}), ("isfinite", (SPECIAL,), {}),
    ]  # fmt: skip
    for name, args, kwargs in cases:
        theirs = keras.ops.convert_to_numpy(getattr(keras.ops, name)(*args, **kwargs))
        mine = getattr(ops, name)(*args, **kwargs).numpy()
        assert mine.dtype == theirs.dtype, name
        np.testing.assert_allclose(mine, theirs, rtol=1e-6, err_msg=name)


def _graph(lib):
    x = lib.Input((4, 4), name="x")
    o = lib.ops
    return lib.Model(
        x,
        [
            o.sin(x) + o.cos(x) * o.tan(x * 0.1),
            o.tril(x, k=-1),
            o.triu(x),
            o.cumsum(x, axis=1),
            o.any(x > 0, axis=-1),
            o.all(x > 0, axis=1),
            o.isnan(x),
            o.isinf(x),
            o.isfinite(x),
        ],  # fmt: skip
    )


def test_ops_on_symbolic_tensors_record_keras_nodes_save_and_cross(tmp_path):
    model = _graph(mk)
    kinds = {type(op).__name__ for op in model.operations}
    assert {"Sin", "Cos", "Tan", "Tril", "Triu", "Cumsum", "Any", "All", "Isnan"} <= kinds
    data = RNG.normal(size=(2, 4, 4)).astype("float32")
    assert_saves_and_crosses_to_keras(_graph, data, tmp_path)
