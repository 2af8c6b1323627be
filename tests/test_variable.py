"""Variable: creation, dtypes, assignment, snapshots, and observable reads."""

import numpy as np
import pytest

import minikeras
from minikeras import GradientTape, Tensor, Variable, ops
from minikeras.engine import tensor as engine_tensor


@pytest.fixture
def reads():
    """The Variables read while the test runs, in order."""
    seen = []
    engine_tensor.add_read_observer(seen.append)
    yield seen
    engine_tensor.remove_read_observer(seen.append)


# ---------------------------------------------------------------- creation


def test_variable_is_a_tensor_with_name_and_trainable():
    v = minikeras.Variable([[1.0, 2.0]], name="kernel", trainable=False)
    assert isinstance(v, Tensor)
    assert v.name == "kernel" and v.trainable is False
    assert v.shape == (1, 2) and v.ndim == 2 and v.dtype == np.float32
    assert Variable(0.0).trainable is True


def test_unnamed_variables_get_distinct_names():
    assert Variable(0.0).name != Variable(0.0).name


def test_callable_initializer_form():
    calls = []

    def initializer(shape, dtype=None):
        calls.append((shape, dtype))
        return np.full(shape, 0.5)

    v = Variable(initializer, shape=(2, 3), dtype="float64")
    assert calls == [((2, 3), "float64")]
    assert v.shape == (2, 3) and v.dtype == np.float64
    np.testing.assert_array_equal(v.numpy(), np.full((2, 3), 0.5))
    assert Variable(initializer, shape=[4]).dtype == np.float32  # floatx by default
    assert Variable(ops.zeros, shape=(3,)).numpy().tolist() == [0.0, 0.0, 0.0]


def test_callable_initializer_needs_a_shape_and_must_honour_it():
    with pytest.raises(ValueError, match="'w'.*shape="):
        Variable(ops.zeros, name="w")
    with pytest.raises(ValueError, match=r"'w'.*\(3,\).*\(2,\)"):
        Variable(lambda shape, dtype: np.zeros(3), shape=(2,), name="w")


def test_initial_value_must_match_a_given_shape():
    with pytest.raises(ValueError, match=r"'b'.*\(2,\).*\(3,\)"):
        Variable([1.0, 2.0], shape=(3,), name="b")


@pytest.mark.parametrize(
    "value, dtype, expected",
    [
        (1.0, None, "float32"),
        ([1.0, 2.0], None, "float32"),
        (np.zeros(2), None, "float32"),  # float data takes floatx, as in Keras
        ([1, 2], None, "int64"),
        (np.zeros(2), "float64", "float64"),
        ([1.0], np.float16, "float16"),
        ([1.5, 2.5], "int32", "int32"),
    ],
)
def test_dtypes(value, dtype, expected):
    assert Variable(value, dtype=dtype).dtype == np.dtype(expected)


def test_initial_value_is_copied():
    data = np.zeros(2, "float32")
    v = Variable(data)
    data[0] = 5.0
    assert v.numpy()[0] == 0.0


def test_repr_shows_name_shape_dtype_trainable_and_values():
    text = repr(Variable([1.0, 2.0], name="w", trainable=False))
    assert "'w'" in text and "shape=(2,)" in text and "dtype=float32" in text
    assert "trainable=False" in text and "[1., 2.]" in text


# ---------------------------------------------------------------- float64 stays float64


def test_float64_variable_keeps_every_digit_of_python_floats():
    v = Variable([0.1, 0.2], dtype="float64")
    assert v.numpy().tolist() == [0.1, 0.2]
    v.assign([0.3, 0.7])
    assert v.numpy().tolist() == [0.3, 0.7]


def test_float64_variable_stays_float64_through_ops_updates_and_gradients():
    v = Variable(np.array([1.0, 2.0]), dtype="float64")
    v.assign([0.1, 0.2])
    v.assign_add(np.float32(1.0))
    v.assign_sub([0.5, 0.5])
    assert v.dtype == np.float64
    np.testing.assert_allclose(v.numpy(), [0.6, 0.7], rtol=1e-15)
    assert (v * 2.5 + 1).dtype == np.float64
    with GradientTape() as tape:
        loss = ops.sum(v * v)
    grad = tape.gradient(loss, v)
    assert grad.dtype == np.float64
    np.testing.assert_allclose(grad.numpy(), 2 * v.numpy(), rtol=1e-15)


# ---------------------------------------------------------------- assignment


def test_assign_assign_add_assign_sub_change_the_variable_in_place():
    v = Variable([1.0, 2.0])
    assert v.assign([3.0, 4.0]) is v
    np.testing.assert_array_equal(v.numpy(), [3.0, 4.0])
    assert v.assign_add([1.0, 1.0]) is v
    np.testing.assert_array_equal(v.numpy(), [4.0, 5.0])
    assert v.assign_sub(Tensor([0.5, 1.0])) is v
    np.testing.assert_array_equal(v.numpy(), [3.5, 4.0])
    assert v.dtype == np.float32


def test_updates_accept_tensors_variables_and_scalars():
    v = Variable([1.0, 2.0])
    v.assign(Variable([5.0, 6.0]))
    v.assign_add(1)
    v.assign_sub(np.float64(0.5))
    np.testing.assert_array_equal(v.numpy(), [5.5, 6.5])
    v.assign_add(v)
    np.testing.assert_array_equal(v.numpy(), [11.0, 13.0])


def test_updates_cast_to_the_variable_dtype():
    v = Variable([1, 2])
    v.assign([1.7, 2.2])
    assert v.dtype == np.int64 and v.numpy().tolist() == [1, 2]
    f = Variable([1.0])
    f.assign_add(np.array([1e-3], "float64"))
    assert f.dtype == np.float32


@pytest.mark.parametrize("method", ["assign", "assign_add", "assign_sub"])
@pytest.mark.parametrize("bad", [[1.0, 2.0], [1.0], np.ones((2, 3)), np.ones((1, 3, 1))])
def test_wrong_shape_raises_naming_the_variable_and_both_shapes(method, bad):
    v = Variable(np.zeros((3,)), name="bias")
    before = v.numpy()
    with pytest.raises(ValueError) as error:
        getattr(v, method)(bad)
    message = str(error.value)
    assert "'bias'" in message and method in message
    assert str(np.shape(bad)) in message and "(3,)" in message
    np.testing.assert_array_equal(v.numpy(), before)


def test_a_row_does_not_silently_fill_a_matrix():
    v = Variable(np.zeros((2, 3)), name="kernel")
    with pytest.raises(ValueError, match=r"'kernel'.*\(3,\).*\(2, 3\)"):
        v.assign([1.0, 2.0, 3.0])


def test_a_scalar_broadcasts():
    v = Variable(np.zeros((2, 2)))
    v.assign(1.5)
    v.assign_add(Tensor(1.0))
    np.testing.assert_array_equal(v.numpy(), np.full((2, 2), 2.5))


def test_numpy_returns_a_copy():
    v = Variable([1.0, 2.0])
    v.numpy()[0] = 9.0
    np.asarray(v)[0] = 9.0
    np.testing.assert_array_equal(v.numpy(), [1.0, 2.0])


def test_reads_are_snapshots_that_later_updates_do_not_change():
    v = Variable([1.0, 2.0, 3.0])
    value, head, doubled, transposed = v.value, v[:2], v * 2, v.T
    plus = +v
    v.assign([7.0, 8.0, 9.0])
    v.assign_add(1.0)
    v.assign_sub(1.0)
    np.testing.assert_array_equal(value.numpy(), [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(head.numpy(), [1.0, 2.0])
    np.testing.assert_array_equal(doubled.numpy(), [2.0, 4.0, 6.0])
    np.testing.assert_array_equal(transposed.numpy(), [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(plus.numpy(), [1.0, 2.0, 3.0])
    assert type(plus) is Tensor
    np.testing.assert_array_equal(v.numpy(), [7.0, 8.0, 9.0])


def test_updates_after_a_training_step_keep_values_correct():
    v = Variable([1.0, 2.0])
    for _ in range(3):
        with GradientTape() as tape:
            loss = ops.sum(v * v)
        grad = tape.gradient(loss, v)
        v.assign_sub(0.25 * grad)
    # v <- v - 0.25 * 2v = v / 2, three times
    np.testing.assert_allclose(v.numpy(), [0.125, 0.25])
    np.testing.assert_allclose(loss.numpy(), 0.25**2 + 0.5**2)


# ---------------------------------------------------------------- observable reads


def test_read_observer_sees_reads_in_ops_and_operators(reads):
    v, w = Variable([1.0, 2.0], name="v"), Variable([3.0, 4.0], name="w")
    _ = v + w
    _ = 2.0 * v
    _ = np.ones(2) - w
    _ = ops.matmul(v, w)
    _ = ops.sum(v)
    _ = v[0]
    _ = -w
    _ = abs(v)
    _ = v.T
    _ = v.value
    _ = v == w
    _ = w @ v
    assert [variable.name for variable in reads] == [
        "v", "w", "v", "w", "v", "w", "v", "v", "w", "v", "v", "v", "v", "w", "w", "v",
    ]  # fmt: skip


def test_each_read_is_observed_once_per_use(reads):
    v = Variable([1.0, 2.0])
    _ = v * v
    assert reads == [v, v]


def test_metadata_and_updates_are_not_reads(reads):
    v = Variable([1.0, 2.0])
    _ = v.shape, v.dtype, v.ndim, v.name, v.trainable, repr(v), v.numpy(), len(v)
    v.assign([3.0, 4.0])
    v.assign_add(1.0)
    assert reads == []


def test_reads_inside_a_tape_are_observed(reads):
    v = Variable([1.0, 2.0])
    with GradientTape() as tape:
        loss = ops.sum(v * 3.0)
    tape.gradient(loss, v)
    assert reads == [v]


def test_removed_observer_sees_nothing_and_removing_twice_raises():
    seen = []
    engine_tensor.add_read_observer(seen.append)
    engine_tensor.remove_read_observer(seen.append)
    _ = Variable([1.0]) + 1.0
    assert seen == []
    with pytest.raises(ValueError):
        engine_tensor.remove_read_observer(seen.append)


def test_read_variable_returns_the_value():
    v = Variable([1.0, 2.0])
    np.testing.assert_array_equal(minikeras.engine.read_variable(v), [1.0, 2.0])


def test_a_variable_stores_a_c_ordered_copy_of_any_layout():
    """Updates mix the value with C-ordered gradients and optimizer state."""
    fortran = np.asfortranarray(np.arange(6, dtype=np.float32).reshape(2, 3))
    variable = Variable(fortran)
    assert variable._value.flags["C_CONTIGUOUS"]
    np.testing.assert_array_equal(variable.numpy(), fortran)


def test_adam_on_a_variable_made_from_a_transposed_array_keeps_c_order_and_is_right():
    from minikeras import optimizers

    initial = np.arange(1.0, 7.0, dtype=np.float32).reshape(3, 2).T  # F-ordered
    variable = Variable(initial)
    optimizer = optimizers.Adam(learning_rate=0.1)
    gradient = np.full((2, 3), 0.5, np.float32)
    optimizer.apply([gradient], [variable])
    optimizer.apply([gradient], [variable])
    # A constant gradient: every Adam step is learning_rate * sign(g), up to epsilon.
    np.testing.assert_allclose(variable.numpy(), initial - 0.2, rtol=1e-5)
    assert variable._value.flags["C_CONTIGUOUS"]
    # Scratch buffers are C-ordered even for an F-ordered array of the shape.
    scratch = optimizer._buffers.scratch(np.asfortranarray(np.ones((4, 3), np.float32)))
    assert all(buffer.flags["C_CONTIGUOUS"] for buffer in scratch)


def test_recurrent_kernels_from_the_orthogonal_initializer_are_c_ordered():
    """The orthogonal initializer returns a transposed array; the weight must not be."""
    from minikeras import layers

    layer = layers.LSTM(8)
    layer(np.ones((2, 3, 4), np.float32))
    assert all(weight._value.flags["C_CONTIGUOUS"] for weight in layer.weights)
