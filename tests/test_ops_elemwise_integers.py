"""Keras 3's integer ops (the bitwise family, gcd, lcm) and the parts of complex numbers on real
tensors (real, imag, conj, conjugate, isreal, angle): values and dtypes by hand, and against
Keras."""

import numpy as np
import pytest
from op_graphs import assert_same_as_keras, assert_saves_and_crosses_to_keras

import minikeras as mk
from minikeras import ops

A = np.array([[12, -7], [0, 5]], "int32")
B = np.array([[10, 3]], "int8")  # (broadcasts against A)
U8 = np.array([3, 250], "uint8")
FLAGS = np.array([True, False, True])
X = np.array([[-1.5, 0.0], [2.0, -0.0]], "float32")

BINARY = {
    "bitwise_and": np.bitwise_and, "bitwise_or": np.bitwise_or, "bitwise_xor": np.bitwise_xor,
    "bitwise_left_shift": np.left_shift, "left_shift": np.left_shift,
    "bitwise_right_shift": np.right_shift, "right_shift": np.right_shift, "gcd": np.gcd,
    "lcm": np.lcm,
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_integer_ops_by_hand(name):
    op, reference = getattr(ops, name), BINARY[name]
    shifts = np.abs(B) % 4  # (a shift by a negative count is undefined)
    got = op(A, shifts if "shift" in name else B)
    np.testing.assert_array_equal(got.numpy(), reference(A, shifts if "shift" in name else B))
    assert got.dtype == np.int32 and got.shape == (2, 2)
    assert op(B, 2).dtype == np.int8 and op(U8, B[0]).dtype == np.int16
    assert op(A, FLAGS[:2]).dtype == np.int32
    with pytest.raises(TypeError, match=f"{name}: .* must be integers.*float32"):
        op(A, X)
    with pytest.raises(TypeError, match=f"{name}: .* must be integers.*float"):
        op([1.5], 2)
    with pytest.raises(ValueError, match=rf"{name}: shapes cannot be broadcast.*\(3,\)"):
        op(A, np.ones(3, "int32"))


def test_booleans_by_hand():
    np.testing.assert_array_equal(ops.bitwise_and(FLAGS, [True, True, False]), [1, 0, 0])
    np.testing.assert_array_equal(ops.bitwise_or(FLAGS, False).numpy(), FLAGS)
    np.testing.assert_array_equal(ops.bitwise_xor(FLAGS, True).numpy(), ~FLAGS)
    assert ops.bitwise_and(FLAGS, FLAGS).dtype == np.bool_
    shifted = ops.left_shift(FLAGS, FLAGS)
    assert shifted.dtype == np.int32 and shifted.numpy().tolist() == [2, 0, 2]
    assert ops.bitwise_right_shift(FLAGS, 1).dtype == np.int32
    for op in (ops.bitwise_and, ops.bitwise_xor, ops.gcd, ops.right_shift):  # (Keras's ints)
        assert op(FLAGS, 3).dtype == op(5, FLAGS).dtype == np.int32
    assert ops.bitwise_or(FLAGS, True).dtype == np.bool_
    assert ops.bitwise_not(FLAGS).numpy().tolist() == [False, True, False]
    assert ops.bitwise_invert(np.array([0, 5, -1], "int8")).numpy().tolist() == [-1, -6, 0]
    assert ops.bitwise_not(U8).numpy().tolist() == [252, 5]
    with pytest.raises(TypeError, match="gcd: x1 and x2 must not both be booleans"):
        ops.gcd(FLAGS, FLAGS)
    with pytest.raises(TypeError, match="bitwise_not: x must be integers or booleans, got float32"):
        ops.bitwise_not(X)
    assert ops.gcd(np.array([0, -4]), 0).numpy().tolist() == [0, 4]
    assert ops.lcm(np.array([0, -4]), 6).numpy().tolist() == [0, 12]


def test_integer_ops_have_no_gradient():
    v = mk.Variable(np.array([3.0, 4.0], "float32"))
    with mk.GradientTape() as tape:
        total = ops.sum(ops.cast(ops.bitwise_and(ops.cast(v, "int32"), 1), "float32"))
    assert tape.gradient(total, v) is None


def test_complex_parts_of_real_tensors():
    for op in (ops.real, ops.conj, ops.conjugate):
        got = op(X)
        assert got.dtype == np.float32 and np.array_equal(got.numpy(), X)
        assert op(A).dtype == np.int32
    assert ops.conj is ops.conjugate
    assert ops.imag(X).numpy().tolist() == [[0, 0], [0, 0]] and ops.imag(A).dtype == np.int32
    assert ops.isreal(X).numpy().all() and ops.isreal(A).dtype == np.bool_
    np.testing.assert_allclose(ops.angle(X).numpy(), [[np.pi, 0], [0, np.pi]])
    assert ops.angle(A).dtype == np.float32 and ops.angle(X.astype("float16")).dtype == "float16"
    v = mk.Variable(X)
    with mk.GradientTape() as tape:
        total = ops.sum(ops.real(v) * 2 + ops.conj(v) * 3 + ops.imag(v) + ops.angle(v))
    assert tape.gradient(total, v).numpy().tolist() == [[5, 5], [5, 5]]


def test_complex_parts_of_complex_tensors_as_keras_gives_them():
    # (complex64 appears where Keras's ops give it: view_as_complex, polar)
    pairs = np.array([[3.0, 4.0], [1.0, -1.0]], "float32")
    z = ops.view_as_complex(pairs)
    assert z.dtype == np.complex64
    np.testing.assert_array_equal(ops.real(z).numpy(), [3.0, 1.0])
    np.testing.assert_array_equal(ops.imag(z).numpy(), [4.0, -1.0])
    np.testing.assert_array_equal(ops.conj(z).numpy(), [3 - 4j, 1 + 1j])
    np.testing.assert_allclose(ops.angle(z).numpy(), np.arctan2([4.0, -1.0], [3.0, 1.0]))
    assert ops.isreal(z).numpy().tolist() == [False, False]
    assert {ops.real(z).dtype, ops.imag(z).dtype, ops.angle(z).dtype} == {np.dtype("float32")}
    v = mk.Variable(pairs)
    with mk.GradientTape() as tape:
        z = ops.view_as_complex(v)
        total = ops.sum(ops.real(z) * 2 + ops.imag(z) * 3 + ops.angle(z))
    # d angle / d (re, im) = (-im, re) / |z|^2, by hand
    want = [[2 - 4 / 25, 3 + 3 / 25], [2 + 1 / 2, 3 + 1 / 2]]
    np.testing.assert_allclose(tape.gradient(total, v).numpy(), want, rtol=1e-6)


KERAS_CASES = [
    *((name, (A, np.abs(B) % 4), {}) for name in BINARY),
    *((name, (FLAGS, FLAGS), {}) for name in BINARY if name not in ("gcd", "lcm")),
    *((name, (U8, B[0]), {}) for name in BINARY),
    *((name, (B, 2), {}) for name in BINARY),
    *((name, (FLAGS, 3), {}) for name in BINARY), *((name, (2, FLAGS), {}) for name in BINARY),
    *((name, (A,), {}) for name in ("bitwise_not", "bitwise_invert")),
    ("bitwise_not", (FLAGS,), {}), ("bitwise_invert", (U8,), {}),
    *((name, (value,), {}) for name in ("real", "imag", "conj", "conjugate", "isreal", "angle")
      for value in (X, A)),
]  # fmt: skip


def test_the_same_values_and_dtypes_as_keras():
    assert_same_as_keras(KERAS_CASES)


def _graph(lib):
    x = lib.Input((2,), name="x", dtype="int32")
    f = lib.Input((2,), name="f")
    o = lib.ops
    s = o.abs(x) % 3  # (Keras's nodes of these take no Python numbers)
    return lib.Model(
        [x, f],
        [
            o.bitwise_and(x, s) + o.bitwise_or(x, s) + o.bitwise_xor(x, s),
            o.bitwise_not(x) + o.bitwise_invert(x),
            o.bitwise_left_shift(x, s) + o.left_shift(x, s),
            o.bitwise_right_shift(x, s) + o.right_shift(x, s),
            o.gcd(x, s) + o.lcm(x, s),
            o.real(f) + o.imag(f) + o.conj(f) + o.conjugate(f) + o.angle(f),
            o.isreal(f),
        ],
    )


def test_ops_on_symbolic_tensors_save_and_cross_to_keras(tmp_path):
    model = _graph(mk)
    kinds = {type(op).__name__ for op in model.operations}
    assert {"BitwiseAnd", "BitwiseInvert", "LeftShift", "Gcd", "Conjugate", "Angle"} <= kinds
    assert "Conj" not in kinds  # (conj is conjugate, as in Keras)
    assert_saves_and_crosses_to_keras(_graph, [A[:, :2], X], tmp_path)
