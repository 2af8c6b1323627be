"""`ops.logical_and/or/xor/not` and the `& | ^ ~` operators, as Keras 3 has them."""

import numpy as np
import pytest
from op_graphs import assert_saves_and_crosses_to_keras

import minikeras as mk
from minikeras import ops

A = np.array([[True, False, True, False]])
B = np.array([[1, 1, 0, 0]])  # (integers read as truth values, as Keras reads them)
C = np.array([[0.0], [2.5]])  # (floats, and broadcasting)
CASES = [
    ("logical_and", np.logical_and),
    ("logical_or", np.logical_or),
    ("logical_xor", np.logical_xor),
]


@pytest.mark.parametrize("name, reference", CASES)
def test_binary_logic_on_truth_values(name, reference):
    for x1, x2 in ((A, B), (B, C), (A, C)):
        result = getattr(ops, name)(x1, x2)
        assert result.dtype == np.bool_
        np.testing.assert_array_equal(result.numpy(), reference(x1 != 0, x2 != 0))


def test_logical_not_and_the_operators_of_tensors():
    a, b = mk.Tensor(A), mk.Tensor(B)
    np.testing.assert_array_equal(ops.logical_not(C).numpy(), C == 0)
    np.testing.assert_array_equal((a & b).numpy(), A & (B != 0))
    np.testing.assert_array_equal((a | b).numpy(), A | (B != 0))
    np.testing.assert_array_equal((a ^ b).numpy(), A ^ (B != 0))
    np.testing.assert_array_equal((~a).numpy(), ~A)
    np.testing.assert_array_equal((A & b).numpy(), A & (B != 0))  # (numpy on the left)
    np.testing.assert_array_equal((~mk.Tensor(B)).numpy(), B == 0)  # (logical, not bitwise)


def test_logic_has_no_gradient():
    x = mk.Variable([1.0, 0.0])
    with mk.GradientTape() as tape:
        kept = ops.cast(ops.logical_and(x, [1.0, 1.0]), "float32") * x
        loss = ops.sum(kept)
    np.testing.assert_array_equal(tape.gradient(loss, x).numpy(), [1.0, 0.0])  # (the mask: none)


def _logic_model(lib):
    x = lib.Input((4,), dtype="bool", name="x")
    y = lib.Input((4,), dtype="bool", name="y")
    outputs = [x & y, x | y, x ^ y, ~x, lib.ops.logical_and(x, lib.ops.logical_not(y))]
    return lib.Model([x, y], outputs)


def test_logic_on_symbolic_tensors_records_keras_nodes_saved_both_ways(tmp_path):
    model = _logic_model(mk)
    names = sorted(type(op).__name__ for op in model.operations)
    assert names == ["InputLayer", "InputLayer", "LogicalAnd", "LogicalAnd", "LogicalNot",
                     "LogicalNot", "LogicalOr", "LogicalXor"]  # fmt: skip
    data = [A, B != 0]
    expected = [A & data[1], A | data[1], A ^ data[1], ~A, A & ~data[1]]
    for got, want in zip(model.predict(data, verbose=0), expected):
        np.testing.assert_array_equal(got, want)
    assert_saves_and_crosses_to_keras(_logic_model, data, tmp_path, rtol=0.0)


def test_logic_matches_keras():
    keras = pytest.importorskip("keras")
    for x1, x2 in ((A, B), (B, C)):
        for name, _ in CASES:
            want = keras.ops.convert_to_numpy(getattr(keras.ops, name)(x1, x2))
            np.testing.assert_array_equal(getattr(ops, name)(x1, x2).numpy(), want)
