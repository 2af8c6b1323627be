"""Tensor: construction, numpy interop, operators on either side, dtypes, gradients."""

import operator

import numpy as np
import pytest
from finite_differences import central_differences

import minikeras
from minikeras import GradientTape, Tensor, ops

X = np.array([[1.5, -2.0, 3.0], [0.5, 4.0, -1.0]], dtype="float32")


# ---------------------------------------------------------------- construction


def test_tensor_wraps_an_nd_array():
    t = minikeras.Tensor(X)
    assert t.shape == (2, 3)
    assert t.ndim == 2
    assert t.dtype == np.float32
    assert isinstance(t.numpy(), np.ndarray)
    np.testing.assert_array_equal(t.numpy(), X)


def test_np_asarray_converts_and_honours_dtype():
    t = Tensor(X)
    np.testing.assert_array_equal(np.asarray(t), X)
    assert np.asarray(t, dtype="float64").dtype == np.float64
    assert np.array(t, copy=True) is not t.numpy()


@pytest.mark.parametrize(
    "value, dtype",
    [
        (1.5, "float32"),
        ([1.0, 2.0], "float32"),
        ([[1, 2.5]], "float32"),
        (3, "int32"),
        ([1, 2], "int32"),
        (np.array([1, 2]), "int64"),
        (True, "bool"),
        (np.zeros(2, "float64"), "float64"),
        (np.zeros(2, "float16"), "float16"),
        (np.arange(3, dtype="int32"), "int32"),
    ],
)
def test_python_floats_become_float32_ints_int32_and_numpy_arrays_keep_their_dtype(value, dtype):
    assert Tensor(value).dtype == np.dtype(dtype)


def test_explicit_dtype_is_honoured():
    assert Tensor([1.0, 2.0], dtype="float64").dtype == np.float64
    assert Tensor(np.ones(2), dtype="float32").dtype == np.float32
    assert Tensor(Tensor([1.5]), dtype="int32").numpy().tolist() == [1]


def test_repr_shows_shape_dtype_and_values():
    text = repr(Tensor([[1.0, 2.0], [3.0, 4.0]]))
    assert "shape=(2, 2)" in text and "dtype=float32" in text
    assert "[[1., 2.]" in text and "[3., 4.]]" in text
    assert "shape=() dtype=int32" in repr(Tensor(7)) and "7" in repr(Tensor(7))


def test_repr_of_a_large_tensor_is_summarized():
    assert "..." in repr(Tensor(np.zeros(1000)))


def test_len_iter_and_conversions():
    t = Tensor(X)
    assert len(t) == 2
    assert [row.shape for row in t] == [(3,), (3,)]
    with pytest.raises(TypeError, match="0-d"):
        len(Tensor(1.0))
    assert float(Tensor(2.5)) == 2.5 and int(Tensor(3)) == 3
    assert bool(Tensor(1.0)) and not bool(Tensor(0.0))
    assert [10, 20, 30][Tensor(1)] == 20  # __index__


def test_tensors_hash_by_identity():
    a, b = Tensor([1.0]), Tensor([1.0])
    assert len({a: 1, b: 2}) == 2


# ---------------------------------------------------------------- operators

A = np.array([[1.5, -2.0, 3.0], [0.5, 4.0, -1.0]], dtype="float32")
B = np.array([[2.0, 0.5, -1.5], [1.0, -3.0, 2.5]], dtype="float32")

BINARY = [
    ("+", operator.add),
    ("-", operator.sub),
    ("*", operator.mul),
    ("/", operator.truediv),
    ("//", operator.floordiv),
    ("%", operator.mod),
    ("==", operator.eq),
    ("!=", operator.ne),
    ("<", operator.lt),
    ("<=", operator.le),
    (">", operator.gt),
    (">=", operator.ge),
]


@pytest.mark.parametrize("name, op", BINARY, ids=[name for name, _ in BINARY])
@pytest.mark.parametrize("other_kind", ["tensor", "array", "python", "numpy_scalar"])
def test_binary_operators_mix_with_arrays_and_scalars_on_either_side(name, op, other_kind):
    other = {
        "tensor": Tensor(B),
        "array": B,
        "python": 2.5,
        "numpy_scalar": np.float32(2.5),
    }[other_kind]
    other_array = np.asarray(other, dtype="float32")
    for left, right, expected in [
        (Tensor(A), other, op(A, other_array)),
        (other, Tensor(A), op(other_array, A)),
    ]:
        result = op(left, right)
        assert type(result) is Tensor, f"{type(left).__name__} {name} {type(right).__name__}"
        np.testing.assert_allclose(result.numpy(), expected, rtol=1e-6)
        assert result.dtype == expected.dtype


def test_power_with_tensor_array_and_scalar_on_either_side():
    base = Tensor(np.abs(A) + 0.5)
    np.testing.assert_allclose((base**2).numpy(), (np.abs(A) + 0.5) ** 2, rtol=1e-6)
    np.testing.assert_allclose((2**base).numpy(), 2 ** (np.abs(A) + 0.5), rtol=1e-6)
    np.testing.assert_allclose((np.abs(B) ** base).numpy(), np.abs(B) ** (np.abs(A) + 0.5))
    np.testing.assert_allclose((base ** Tensor(B)).numpy(), (np.abs(A) + 0.5) ** B, rtol=1e-6)
    assert type(np.float32(2.0) ** base) is Tensor


@pytest.mark.parametrize(
    "left, right",
    [
        (Tensor(A), Tensor(B.T)),
        (Tensor(A), B.T),
        (A, Tensor(B.T)),
        (np.eye(2, dtype="float32"), Tensor(A)),
        (Tensor(A), np.arange(3, dtype="float32")),
        ([[1.0, 0.0]], Tensor(A)),
    ],
)
def test_matmul_on_either_side(left, right):
    result = left @ right
    assert type(result) is Tensor
    np.testing.assert_allclose(
        result.numpy(), np.asarray(left, "float32") @ np.asarray(right, "float32"), rtol=1e-6
    )


def test_numpy_array_on_the_left_gives_a_tensor():
    t = Tensor(np.ones((2, 2), "float32"))
    for result in [np.ones(2) + t, np.ones(2) - t, np.eye(2) @ t, np.eye(2) < t, np.ones(2) ** t]:
        assert type(result) is Tensor


def test_unary_operators():
    t = Tensor(A)
    np.testing.assert_array_equal((-t).numpy(), -A)
    np.testing.assert_array_equal(abs(t).numpy(), np.abs(A))
    np.testing.assert_array_equal((+t).numpy(), A)
    assert type(-t) is Tensor and type(abs(t)) is Tensor


def test_getitem_basic_and_integer_array_indexing():
    t = Tensor(A)
    np.testing.assert_array_equal(t[1].numpy(), A[1])
    np.testing.assert_array_equal(t[:, 1:].numpy(), A[:, 1:])
    np.testing.assert_array_equal(t[..., None].numpy(), A[..., None])
    np.testing.assert_array_equal(t[0, -1].numpy(), A[0, -1])
    np.testing.assert_array_equal(t[[1, 0, 1]].numpy(), A[[1, 0, 1]])
    np.testing.assert_array_equal(t[:, np.array([2, 0])].numpy(), A[:, [2, 0]])
    np.testing.assert_array_equal(t[Tensor([1, 1])].numpy(), A[[1, 1]])
    np.testing.assert_array_equal(t[t > 0].numpy(), A[A > 0])
    with pytest.raises(IndexError, match=r"\(2, 3\)"):
        t[5]


def test_transpose():
    t = Tensor(np.arange(24, dtype="float32").reshape(2, 3, 4))
    assert t.T.shape == (4, 3, 2)
    np.testing.assert_array_equal(t.T.numpy(), t.numpy().T)
    assert Tensor(A).T.shape == (3, 2)


# ---------------------------------------------------------------- float32 stays float32

F32 = Tensor(np.array([1.0, 2.0, 4.0], dtype="float32"))


@pytest.mark.parametrize(
    "other",
    [
        2,
        2.5,
        np.float64(2.5),
        np.int64(2),
        np.float32(2.5),
        np.arange(1, 4),
        np.arange(1, 4, dtype="int32"),
        np.array([True, True, True]),
        [1, 2, 3],
        [1.0, 2.0, 3.0],
        Tensor([1, 2, 3]),
    ],
    ids=repr,
)
@pytest.mark.parametrize("op", [operator.add, operator.sub, operator.mul, operator.truediv])
def test_scalars_and_integers_never_promote_float32_to_float64(other, op):
    assert op(F32, other).dtype == np.float32
    assert op(other, F32).dtype == np.float32


@pytest.mark.parametrize("other", [2, 2.0, np.float64(2.0), np.int64(2)], ids=repr)
def test_power_floordiv_mod_keep_float32(other):
    for result in [F32**other, other**F32, F32 // other, other // F32, F32 % other]:
        assert result.dtype == np.float32


@pytest.mark.parametrize("dtype", ["float64", "float16"])
def test_a_reductions_scalar_keeps_its_dtype_through_every_op(dtype):
    # A reduction gives a Tensor holding a numpy scalar; ops that unwrap their
    # operands before handing them on (divide, power, the reductions, clip)
    # took it for a Python number, and float64 / 2 came out float32.
    total = ops.sum(Tensor(np.ones(3, dtype)))
    assert type(total._value) is np.dtype(dtype).type
    results = [total / 2, 2 / total, total**2, ops.power(total, 2), ops.max(total),
               ops.min(total), ops.clip(total, 0, 1), ops.divide(total, 4)]  # fmt: skip
    assert [r.dtype for r in results] == [np.dtype(dtype)] * len(results)
    assert float(total / 2) == 1.5 and float(ops.divide(total, 4)) == 0.75


def test_matmul_with_an_integer_array_keeps_float32():
    assert (F32 @ np.eye(3, dtype="int64")).dtype == np.float32
    assert (np.eye(3, dtype="int64") @ F32).dtype == np.float32


def test_integer_division_gives_float32():
    assert (Tensor([1, 2]) / Tensor([2, 4])).dtype == np.float32


def test_float64_operands_are_kept_float64():
    f64 = Tensor(np.array([1.0, 2.0]))  # a float64 array keeps its dtype
    assert (f64 + 1.5).dtype == np.float64
    assert (f64 * np.float32(2.0)).dtype == np.float64


# ---------------------------------------------------------------- gradients through operators


def tape_gradient(fn, x):
    t = Tensor(x)
    with GradientTape() as tape:
        tape.watch(t)
        y = fn(t)
    return tape.gradient(y, t)


OPERATOR_EXPRESSIONS = {
    "add": lambda t: ops.sum(t + 2.0 + np.ones(3) + (1 + t)),
    "sub": lambda t: ops.sum((t - 1.0) - (3 - t) - (np.ones(3) - t)),
    "mul": lambda t: ops.sum(t * t * 2 * np.arange(3)),
    "div": lambda t: ops.sum(t / 3.0 + 1.0 / t + np.ones(3) / t),
    "pow": lambda t: ops.sum(t**3 + 2**t + t**t),
    "neg_abs": lambda t: ops.sum(-abs(t) * t),
    "matmul": lambda t: ops.sum((t @ np.ones((3, 2))) ** 2) + ops.sum(np.ones((2, 3)) @ t),
    "getitem": lambda t: ops.sum(t[1:] * t[[0, 0, 2]][:2]),
    "transpose": lambda t: ops.sum(t[None].T * np.arange(3)[:, None]),
}


@pytest.mark.parametrize("name", list(OPERATOR_EXPRESSIONS))
def test_gradients_flow_through_operators(name):
    fn = OPERATOR_EXPRESSIONS[name]
    x = np.array([0.7, 1.3, 2.1], dtype="float32")
    grad = tape_gradient(fn, x)
    assert grad.dtype == np.float32
    expected = central_differences(lambda v: float(fn(Tensor(v)).numpy()), x.astype("float64"))
    np.testing.assert_allclose(grad.numpy(), expected, rtol=2e-3, atol=2e-3)


def test_gradient_through_operators_by_hand():
    # y = sum(3 * x**2 - x / 2) -> dy/dx = 6x - 1/2
    x = np.array([1.0, -2.0, 0.5], dtype="float32")
    grad = tape_gradient(lambda t: ops.sum(3 * t**2 - t / 2), x)
    np.testing.assert_allclose(grad.numpy(), 6 * x - 0.5, rtol=1e-6)


def test_integer_array_indexing_accumulates_repeated_indices():
    grad = tape_gradient(lambda t: ops.sum(t[[0, 0, 2, 0]]), np.zeros(3, "float32"))
    np.testing.assert_array_equal(grad.numpy(), [3.0, 0.0, 1.0])


def test_comparisons_and_floor_division_pass_no_gradient():
    x = np.array([1.0, 2.0], dtype="float32")
    assert tape_gradient(lambda t: ops.cast(t > 1.0, "float32"), x) is None
    assert tape_gradient(lambda t: t // 2, x) is None


def test_a_python_int_outside_int32_is_an_overflow_error_as_in_keras():
    with pytest.raises(OverflowError, match=r"1099511627776 is out of bounds for int32.*int64"):
        Tensor([1, 2**40])
    with pytest.raises(OverflowError, match="out of bounds for int32"):
        ops.convert_to_tensor(-(2**31) - 1)
    assert Tensor([2**40], dtype="int64").numpy().tolist() == [2**40]
    assert Tensor(np.array([2**40])).dtype == np.int64  # a numpy array keeps its dtype
    assert Tensor([-(2**31), 2**31 - 1]).dtype == np.int32  # the ends of the range fit


@pytest.mark.parametrize("value", [[1, 2], 3, True, [1, 2.5], [[1], [2]]])
def test_python_data_takes_the_dtype_keras_gives_it(value):
    keras = pytest.importorskip("keras")
    expected = keras.backend.standardize_dtype(keras.ops.convert_to_tensor(value).dtype)
    assert ops.convert_to_tensor(value).dtype == np.dtype(expected)
