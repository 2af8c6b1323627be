"""Keras 3 ops added for ordinary Keras code: floor, ceil, round, log2, log10, expm1, rsqrt,
broadcast_to, repeat, moveaxis, swapaxes; values, dtypes and gradients, and against Keras."""

import numpy as np
import pytest
from finite_differences import check_float32, check_gradients, check_second_order
from op_graphs import assert_saves_and_crosses_to_keras

import minikeras as mk
from minikeras import ops

RNG = np.random.default_rng(1)
X = RNG.normal(size=(2, 3, 4)).astype("float32")
POSITIVE = np.abs(X) + 0.5
INTS = np.array([[1, 2], [3, 4]], "int32")

DIFFERENTIABLE = {
    "log2": (lambda x: ops.log2(x), POSITIVE),
    "log10": (lambda x: ops.log10(x), POSITIVE),
    "expm1": (lambda x: ops.expm1(x), X),
    "rsqrt": (lambda x: ops.rsqrt(x), POSITIVE),
    "broadcast_to": (lambda x: ops.broadcast_to(x[:, :1], (2, 3, 4)), X),
    "repeat_axis": (lambda x: ops.repeat(x, 3, axis=1), X),
    "repeat_flat": (lambda x: ops.repeat(x, 2), X),
    "moveaxis": (lambda x: ops.moveaxis(x, (0, 1), (2, 0)), X),
    "swapaxes": (lambda x: ops.swapaxes(x, 0, 2), X),
}


@pytest.mark.parametrize("name", sorted(DIFFERENTIABLE))
def test_gradients_match_finite_differences(name):
    fn, data = DIFFERENTIABLE[name]
    check_gradients(fn, [data])
    check_second_order(fn, [data])
    check_float32(fn, [data])


def test_rounding_has_a_zero_gradient_and_keras_dtypes():
    x = mk.Variable([0.4, 1.6, -2.5])
    with mk.GradientTape() as tape:
        total = ops.sum(ops.floor(x) + ops.ceil(x) + ops.round(x) + x)
    np.testing.assert_array_equal(tape.gradient(total, x).numpy(), [1.0, 1.0, 1.0])
    np.testing.assert_array_equal(ops.round([0.5, 1.5, 2.5, -0.5]).numpy(), [0, 2, 2, -0])
    np.testing.assert_allclose(ops.round([1.2345], decimals=2).numpy(), [1.23], rtol=1e-6)
    assert ops.round(INTS).dtype == np.int32 and ops.floor(INTS).dtype == np.float32
    assert ops.log2(INTS).dtype == ops.rsqrt(INTS).dtype == np.float32


def test_shapes_and_refusals():
    assert ops.broadcast_to(np.ones(3), (2, 3)).shape == (2, 3)
    np.testing.assert_array_equal(ops.repeat(INTS, 2, axis=1).numpy(), np.repeat(INTS, 2, 1))
    assert ops.repeat(INTS, 2).shape == (8,)
    assert ops.moveaxis(X, 0, -1).shape == (3, 4, 2) and ops.swapaxes(X, 0, 2).shape == (4, 3, 2)
    with pytest.raises(ValueError, match="broadcast_to: invalid arguments"):
        ops.broadcast_to(np.ones(3), (2, 4))
    with pytest.raises(ValueError, match="repeat: repeats must be a positive int"):
        ops.repeat(INTS, [1, 2])
    with pytest.raises(ValueError, match="swapaxes: axes 0 and 5"):
        ops.swapaxes(X, 0, 5)


def test_the_same_values_and_dtypes_as_keras():
    keras = pytest.importorskip("keras")
    cases = [
        ("floor", (X,), {}), ("ceil", (INTS,), {}), ("round", (X * 3,), {"decimals": 1}),
        ("round", (INTS,), {}), ("log2", (POSITIVE,), {}), ("log10", (INTS,), {}),
        ("expm1", (X,), {}), ("rsqrt", (POSITIVE,), {}),
        ("broadcast_to", (X[:, :1],), {"shape": (2, 3, 4)}), ("repeat", (INTS, 3), {"axis": 0}),
        ("moveaxis", (X, 0, -1), {}), ("swapaxes", (X, 1, 2), {}),
    ]  # fmt: skip
    for name, args, kwargs in cases:
        theirs = keras.ops.convert_to_numpy(getattr(keras.ops, name)(*args, **kwargs))
        mine = getattr(ops, name)(*args, **kwargs).numpy()
        assert mine.dtype == theirs.dtype and mine.shape == theirs.shape, name
        np.testing.assert_allclose(mine, theirs, rtol=1e-6, atol=1e-6, err_msg=name)


def _graph(lib):
    x = lib.Input((3, 4), name="x")
    o = lib.ops
    return lib.Model(
        x,
        [
            o.floor(x) + o.ceil(x) + o.round(x, decimals=1),
            o.log2(o.abs(x) + 1.0),
            o.log10(o.abs(x) + 1.0) + o.expm1(x) + o.rsqrt(o.abs(x) + 1.0),
            o.repeat(x, 2, axis=1),
            o.moveaxis(x, 1, 2),
            o.swapaxes(x, 0, 1),
        ],  # fmt: skip
    )


def test_models_of_these_ops_save_and_cross_to_keras(tmp_path):
    assert_saves_and_crosses_to_keras(_graph, X, tmp_path)
