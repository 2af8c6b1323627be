"""Which dtype a reduction gives, as Keras 3 gives it: small integers and
booleans sum to int32, indices are int32, means of integers are float32, and
float32 stays float32 with its gradient."""

import numpy as np
import pytest

from minikeras import GradientTape, Tensor, ops

# Keras's numpy backend (and jax's rule it follows) for `sum`.
SUM_DTYPES = {
    "bool": "int32",
    "int8": "int32",
    "int16": "int32",
    "int32": "int32",
    "int64": "int64",
    "uint8": "uint32",
    "uint16": "uint32",
    "uint32": "uint32",
    "float16": "float16",
    "float32": "float32",
    "float64": "float64",
}
GRID = np.array([[1, 0, 1], [1, 1, 0]])


@pytest.mark.parametrize("dtype", sorted(SUM_DTYPES))
def test_sum_gives_keras_accumulator_dtype_and_the_right_total(dtype):
    x = GRID.astype(dtype)
    for axis, expected in ((None, 4), (0, [2, 1, 1]), (1, [2, 2])):
        result = ops.sum(x, axis=axis)
        assert result.dtype == np.dtype(SUM_DTYPES[dtype]), (dtype, axis)
        np.testing.assert_array_equal(result.numpy(), expected)
    assert ops.sum(x, axis=1, keepdims=True).shape == (2, 1)


def test_int32_sum_wraps_around_as_int32_does():
    big = np.array([2**31 - 1, 1], dtype="int32")
    assert ops.sum(big).numpy() == np.int32(-(2**31))


@pytest.mark.parametrize("op", [ops.argmax, ops.argmin])
@pytest.mark.parametrize("dtype", ["bool", "int8", "int64", "float32", "float64"])
def test_argmax_and_argmin_give_int32(op, dtype):
    x = np.array([[0, 1, 0], [1, 0, 0]], dtype=dtype)
    flat = op(x)
    rows = op(x, axis=1, keepdims=True)
    assert flat.dtype == rows.dtype == np.int32
    expected_rows = [[1], [0]] if op is ops.argmax else [[0], [1]]
    np.testing.assert_array_equal(rows.numpy(), expected_rows)
    assert int(flat.numpy()) == (1 if op is ops.argmax else 0)


@pytest.mark.parametrize("dtype", ["bool", "int8", "int32", "int64", "uint8"])
def test_mean_var_std_of_integers_are_float32(dtype):
    x = np.array([0, 1, 1, 0], dtype=dtype)
    for op, expected in ((ops.mean, 0.5), (ops.var, 0.25), (ops.std, 0.5)):
        result = op(x)
        assert result.dtype == np.float32
        assert float(result.numpy()) == expected


def test_float32_sum_still_carries_its_gradient_in_float32():
    x = Tensor(np.arange(6, dtype="float32").reshape(2, 3))
    with GradientTape() as tape:
        tape.watch(x)
        total = ops.sum(ops.sum(x, axis=1) * np.array([1.0, 2.0], "float32"))
    grad = tape.gradient(total, x)
    assert total.dtype == np.float32 and grad.dtype == np.float32
    np.testing.assert_array_equal(grad.numpy(), [[1, 1, 1], [2, 2, 2]])


# Dtypes on which Keras's jax, torch and numpy backends agree (jax without x64
# narrows 64-bit input; torch has no uint32, so unsigned input differs there).
AGREED = ["bool", "int8", "int16", "int32", "float16", "float32"]


@pytest.mark.parametrize("dtype", AGREED)
def test_reduction_dtypes_match_keras(dtype):
    keras = pytest.importorskip("keras")
    x = GRID.astype(dtype)
    for name in ("sum", "mean", "max", "min", "var", "std", "argmax", "argmin"):
        ours = getattr(ops, name)(x, axis=1)
        theirs = keras.ops.convert_to_numpy(getattr(keras.ops, name)(x, axis=1))
        assert ours.dtype == theirs.dtype, (name, dtype)
        np.testing.assert_allclose(ours.numpy(), theirs, rtol=1e-3)
