"""Ops outside a tape take a short path; it must give what the general path gives.

`ops.core.apply_binary` skips `promote` and `call_primitive` when neither
operand is traced and promotion has nothing to do; `config.standardize_dtype`
remembers names; `ops.cast` takes a numpy dtype as it is; `Variable.assign`
reads a Tensor's array directly. Each is checked against the general path:
same values bit for bit, same dtype, same errors.
"""

import itertools

import numpy as np
import pytest

import minikeras as mk
from minikeras import config, ops
from minikeras.ops import core, math

OPERANDS = {
    "float32 array": np.array([1.5, -2.0, 3.0], np.float32),
    "float64 array": np.array([0.5, 4.0, -1.0], np.float64),
    "int64 array": np.array([2, -3, 4], np.int64),
    "int32 array": np.array([1, 2, 5], np.int32),
    "bool array": np.array([True, False, True]),
    "float32 scalar": np.float32(0.75),  # what an op on 0-d arrays returns
    "Python float": 0.25,
    "Python int": 3,
    "float32 Tensor": mk.Tensor([2.0, 0.5, -4.0]),
    "float32 Variable": mk.Variable([1.0, 8.0, -0.5]),
    # A Tensor of a numpy scalar, as ops on 0-d values give (Keras's Adam computes its
    # step size so); divide and power make the scalar a Python float on their general path.
    "float32 scalar Tensor": ops.add(np.asarray(1.25, np.float32), 0),
    "float64 scalar Tensor": ops.add(np.asarray(0.375, np.float64), 0),
    "float32 0-d Tensor": mk.Tensor(np.asarray(2.5, np.float32)),
}
BINARY = [ops.add, ops.subtract, ops.multiply, ops.divide, ops.power, ops.maximum, ops.less]


def general_path(monkeypatch, op, x1, x2):
    with monkeypatch.context() as patch:
        patch.setattr(core, "_plain_pair", lambda a, b: False)
        patch.setattr(math, "same_float_operands", lambda a, b: False)
        return op(x1, x2)


def test_the_scalar_operands_are_what_they_claim():
    assert type(OPERANDS["float32 scalar Tensor"]._value) is np.float32
    assert type(OPERANDS["float64 scalar Tensor"]._value) is np.float64


@pytest.mark.parametrize("op", BINARY, ids=lambda op: op.__name__)
def test_a_binary_op_outside_a_tape_gives_what_the_general_path_gives(op, monkeypatch):
    for (name_1, x1), (name_2, x2) in itertools.product(OPERANDS.items(), repeat=2):
        what = f"{op.__name__}({name_1}, {name_2})"
        with np.errstate(all="ignore"):
            try:
                want = general_path(monkeypatch, op, x1, x2)
            except (TypeError, ValueError) as error:  # e.g. bool - bool, int ** -int
                with pytest.raises(type(error)) as raised:
                    op(x1, x2)
                assert str(raised.value) == str(error), what
                continue
            got = op(x1, x2)
        assert type(got) is mk.Tensor
        got, want = np.asarray(got.numpy()), np.asarray(want.numpy())
        assert got.dtype == want.dtype, what
        np.testing.assert_array_equal(got, want, err_msg=what)


def test_float32_stays_float32_with_python_numbers_and_integer_arrays():
    x = np.array([1.0, 2.0], np.float32)
    assert ops.multiply(x, 0.1).dtype == np.float32
    assert ops.add(3, x).dtype == np.float32
    assert ops.add(x, np.array([1, 2])).dtype == np.float32  # numpy alone gives float64
    assert ops.multiply(np.array([1, 2]), 0.5).dtype == np.float32


def test_the_short_path_raises_the_ops_own_error():
    with pytest.raises(ValueError) as error:
        ops.add(np.ones(3, np.float32), np.ones(4, np.float32))
    assert str(error.value) == "add: shapes cannot be broadcast together; got shapes (3,) and (4,)"


def test_inside_a_tape_the_op_is_still_recorded():
    x = mk.Variable([1.0, -2.0])
    with mk.GradientTape() as tape:
        y = ops.sum(ops.multiply(ops.subtract(x, 0.5), np.float32(3.0)) * x)
    (grad,) = tape.gradient(y, [x])
    np.testing.assert_allclose(grad.numpy(), 3.0 * (2 * x.numpy() - 0.5))


def test_standardize_dtype_names_each_dtype_whatever_was_asked_before():
    asked = ["float32", np.float64, np.dtype("int8"), "f2", np.dtype(">f4"), bool, "uint16"]
    for _ in range(2):  # the second round answers from what the first remembered
        names = [config.standardize_dtype(dtype) for dtype in asked]
        assert names == ["float32", "float64", "int8", "float16", "float32", "bool", "uint16"]
    structured = [("a", "f4"), ("b", "i8")]  # unhashable: named, never remembered
    assert config.standardize_dtype(structured) == np.dtype(structured).name
    for _ in range(2):
        with pytest.raises(TypeError, match="'no such type' is not a dtype"):
            config.standardize_dtype("no such type")


def test_cast_to_a_numpy_dtype_gives_that_dtype_in_native_order():
    x = mk.Tensor([1.5, -2.25])
    assert ops.cast(x, np.dtype("float64")).dtype == np.float64
    swapped = ops.cast(x, np.dtype(">f8"))
    assert swapped.dtype == np.float64 and swapped.dtype.isnative
    np.testing.assert_array_equal(swapped.numpy(), [1.5, -2.25])
    assert ops.cast(0.1, np.dtype("float32")).numpy() == np.float32(0.1)


def test_assign_from_a_tensor_copies_its_values():
    source = np.array([1.0, 2.0], np.float32)
    v = mk.Variable([0.0, 0.0])
    v.assign(mk.Tensor(source))
    v.assign_add(mk.Tensor(source))
    source[0] = 99.0
    np.testing.assert_array_equal(v.numpy(), [2.0, 4.0])


def test_assign_from_a_tensor_made_in_a_finished_tape():
    x = mk.Variable([3.0])
    with mk.GradientTape():
        y = x * 2.0
    v = mk.Variable([0.0])
    v.assign_sub(y)
    np.testing.assert_array_equal(v.numpy(), [-6.0])
