"""A numpy float64 array or scalar beside a Tensor is a constant of the Tensor's precision.

The rule (`ops.operands`): it takes the Tensor's float dtype, floatx beside an
integer or boolean Tensor, as a Python float does; a float64 Tensor stays
float64; numpy values alone keep numpy's dtypes. The expected dtypes below are
written from that rule; where Keras on JAX agrees (float32, int32 and bool
Tensors), they are also checked against it.
"""

import numpy as np
import pytest
from finite_differences import float64_leaks

import minikeras as mk
from minikeras import ops

CONSTANTS = {
    "float64 array": lambda: np.full((2, 2), 0.75),
    "float64 0-d array": lambda: np.array(0.75),
    "numpy float64": lambda: np.float64(0.75),
    "Python float": lambda: 0.75,
}
ARRAY_CONSTANTS = ["float64 array"]  # (the products and joins need a matrix)


def _named(name):
    """`ops.<name>(a, b)` in the backend given."""
    return lambda o, a, b: getattr(o, name)(a, b)


ELEMENTWISE = {
    "+": lambda o, a, b: a + b,
    "-": lambda o, a, b: a - b,
    "*": lambda o, a, b: a * b,
    "/": lambda o, a, b: a / b,
    "//": lambda o, a, b: a // b,
    "%": lambda o, a, b: a % b,
    "**": lambda o, a, b: a**b,
    "add": lambda o, a, b: o.add(a, b),
    "divide": lambda o, a, b: o.divide(a, b),
    "power": lambda o, a, b: o.power(a, b),
    "maximum": lambda o, a, b: o.maximum(a, b),
    "minimum": lambda o, a, b: o.minimum(a, b),
    "where": lambda o, a, b: o.where(np.array([[True, False], [False, True]]), a, b),
    "dot": lambda o, a, b: o.dot(a, b),
    **{name: _named(name) for name in ["arctan2", "hypot", "logaddexp", "logaddexp2"]},
    **{name: _named(name) for name in ["divide_no_nan", "fmod", "heaviside", "nextafter"]},
    **{name: _named(name) for name in ["fmax", "fmin"]},
    "<": lambda o, a, b: a < b,
    "==": lambda o, a, b: a == b,
    "greater_equal": lambda o, a, b: o.greater_equal(a, b),
}
PRODUCTS_AND_JOINS = {
    "@": lambda o, a, b: a @ b,
    "matmul": lambda o, a, b: o.matmul(a, b),
    "tensordot": lambda o, a, b: o.tensordot(a, b, axes=1),
    "einsum": lambda o, a, b: o.einsum("ij,jk->ik", a, b),
    "concatenate": lambda o, a, b: o.concatenate([a, b]),
    "stack": lambda o, a, b: o.stack([a, b], axis=-1),
    "hstack": lambda o, a, b: o.hstack([a, b]),
    "append": lambda o, a, b: o.append(a, b),
    "outer": lambda o, a, b: o.outer(a, b),
    "inner": lambda o, a, b: o.inner(a, b),
    "vdot": lambda o, a, b: o.vdot(a, b),
    "kron": lambda o, a, b: o.kron(a, b),
    "cross": lambda o, a, b: o.cross(a, b),
    "cdist": lambda o, a, b: o.cdist(a, b),
    "trapezoid": lambda o, a, b: o.trapezoid(a, b),
}
COMPARISONS = {"<", "==", "greater_equal"}
TENSOR_DTYPES = ["float32", "float16", "int32", "bool", "float64"]


def expected_dtype(op, tensor_dtype):
    """The rule: the constant takes the Tensor's float dtype (floatx beside integers or
    booleans), and the result is what the Tensor and such a constant give."""
    if op in COMPARISONS:
        return "bool"
    return tensor_dtype if np.dtype(tensor_dtype).kind == "f" else mk.config.floatx()


def cases():
    for tensor_dtype in TENSOR_DTYPES:
        for op in ELEMENTWISE:
            for constant in CONSTANTS:
                yield tensor_dtype, op, constant
        for op in PRODUCTS_AND_JOINS:
            for constant in ARRAY_CONSTANTS:
                yield tensor_dtype, op, constant


CASES = list(cases())
FUNCTIONS = {**ELEMENTWISE, **PRODUCTS_AND_JOINS}


def tensor(backend_ops, dtype):
    return backend_ops.convert_to_tensor(np.array([[1.5, 2.0], [3.0, 4.5]]), dtype=dtype)


def run(backend_ops, tensor_dtype, op, constant):
    """The result dtypes of `op(Tensor, constant)` and `op(constant, Tensor)`, as strings."""
    function, t = FUNCTIONS[op], tensor(backend_ops, tensor_dtype)
    return [
        np.dtype(function(backend_ops, t, CONSTANTS[constant]()).dtype).name,
        np.dtype(function(backend_ops, CONSTANTS[constant](), t).dtype).name,
    ]


@pytest.mark.parametrize("tensor_dtype, op, constant", CASES)
def test_a_float64_constant_takes_the_tensors_precision(tensor_dtype, op, constant):
    expected = expected_dtype(op, tensor_dtype)
    assert run(ops, tensor_dtype, op, constant) == [expected, expected]


@pytest.mark.parametrize(
    "tensor_dtype, op, constant",
    [case for case in CASES if case[0] in ("float32", "int32", "bool")],
)
def test_the_rule_gives_what_keras_on_jax_gives_for_float32_models(tensor_dtype, op, constant):
    keras = pytest.importorskip("keras")
    if keras.backend.backend() != "jax":
        pytest.skip("the rule follows Keras on JAX (its torch backend widens some ops)")
    expected = expected_dtype(op, tensor_dtype)
    assert run(keras.ops, tensor_dtype, op, constant) == [expected, expected]
    assert run(ops, tensor_dtype, op, constant) == [expected, expected]


# Where numpy has no such function (cdist), or deprecates the case (cross of 2-vectors).
IN_NUMPY = {
    "divide_no_nan": lambda o, a, b: np.divide(a, b),  # (no zeros below)
    "cdist": lambda o, a, b: np.sqrt(np.sum((a[:, None, :] - b[None, :, :]) ** 2, axis=-1)),
    "cross": lambda o, a, b: a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0],
}


@pytest.mark.parametrize("op", sorted(set(FUNCTIONS) - COMPARISONS))
def test_values_are_the_float64_results_rounded(op):
    t = tensor(ops, "float32")
    constant = CONSTANTS["float64 array"]()
    in_numpy = IN_NUMPY.get(op, FUNCTIONS[op])
    reference = in_numpy(np, np.asarray(t, np.float64), constant)
    reference_reflected = in_numpy(np, constant, np.asarray(t, np.float64))
    np.testing.assert_allclose(FUNCTIONS[op](ops, t, constant).numpy(), reference, rtol=1e-6)
    np.testing.assert_allclose(
        FUNCTIONS[op](ops, constant, t).numpy(), reference_reflected, rtol=1e-6
    )


def test_correlate_and_linspace_take_the_tensors_precision():
    line = ops.convert_to_tensor([1.0, 2.0, 3.0])
    assert ops.correlate(line, np.array([0.5, 1.0])).dtype == np.float32
    assert ops.correlate(np.array([0.5, 1.0, 2.0]), line).dtype == np.float32
    assert ops.linspace(ops.zeros(2), np.ones(2), 3).dtype == np.float32
    assert ops.linspace(np.zeros(2), np.ones(2), 3).dtype == np.float64  # (numpy alone)


def test_cross_entropy_predictions_given_as_numpy_take_the_targets_precision():
    targets = ops.convert_to_tensor([[0.25, 0.75], [1.0, 0.0]])
    predictions = np.array([[0.5, 0.5], [0.75, 0.25]])
    assert ops.binary_crossentropy(targets, predictions).dtype == np.float32
    assert ops.categorical_crossentropy(targets, predictions).dtype == np.float32
    assert ops.binary_crossentropy(predictions, targets).dtype == np.float32  # (as before)


def test_clip_bounds_take_the_tensors_precision():
    t = tensor(ops, "float32")
    assert ops.clip(t, np.full((2, 2), 0.75), np.full((2, 2), 2.0)).dtype == np.float32
    assert ops.clip(t, np.array(0.75), np.array(2.0)).dtype == np.float32
    assert ops.clip(t, np.float64(0.75), 2.0).dtype == np.float32
    assert ops.clip(tensor(ops, "float16"), np.array(0.75), np.array(2.0)).dtype == np.float16
    clipped = ops.clip(tensor(ops, "int32"), np.array(0.5), np.array(2.0))
    assert clipped.dtype == np.float32  # (numpy: float64)
    np.testing.assert_array_equal(clipped.numpy(), [[1.0, 2.0], [2.0, 2.0]])


def test_numpy_values_alone_keep_numpys_dtypes():
    f64, f32 = np.ones((2, 2)), np.ones((2, 2), np.float32)
    assert ops.add(f64, f64).dtype == np.float64
    assert ops.multiply(f32, f64).dtype == np.float64
    assert ops.matmul(f32, f64).dtype == np.float64
    assert ops.concatenate([f32, f64]).dtype == np.float64
    assert ops.where(np.array([True, False]), f64, f64).dtype == np.float64
    # A boolean Tensor condition is a Tensor: its branches take floatx, as beside
    # any boolean Tensor (tests/test_float32_rule_all_ops.py).
    assert ops.where(mk.Tensor([True, False]), f64, f64).dtype == np.float32
    assert ops.add(f32, np.float64(2.0)).dtype == np.float32  # (a scalar: as a Python float)


def test_other_numpy_dtypes_follow_numpy():
    f32 = tensor(ops, "float32")
    assert (f32 + np.ones((2, 2), np.float16)).dtype == np.float32
    assert (tensor(ops, "float16") + np.ones((2, 2), np.float32)).dtype == np.float32
    # An int64 array beside an int32 Tensor stays int64 (Keras on JAX: int32).
    assert (tensor(ops, "int32") + np.ones((2, 2), np.int64)).dtype == np.int64
    assert (f32 + np.ones((2, 2), np.int64)).dtype == np.float32


def test_a_float64_tensor_among_several_keeps_the_constant_float64():
    f32, f64 = tensor(ops, "float32"), tensor(ops, "float64")
    constant = np.full((2, 2), 0.75)
    assert ops.concatenate([f32, constant, f64]).dtype == np.float64
    assert ops.concatenate([f32, constant, tensor(ops, "float16")]).dtype == np.float32
    assert ops.einsum("ij,jk,kl->il", tensor(ops, "int32"), constant, f32).dtype == np.float32


class Mix(mk.layers.Layer):
    """A user's layer computing with float64 numpy constants, as Keras code does."""

    def build(self, input_shape):
        self.kernel = self.add_weight(shape=(input_shape[-1], 4), name="kernel")
        self.scale = self.add_weight(shape=(4,), initializer="ones", name="scale")

    def call(self, inputs):
        hidden = inputs @ self.kernel @ (np.eye(4) * 0.5) + np.full(4, 0.1)
        hidden = ops.maximum(hidden, np.zeros(4)) * self.scale / np.full(4, 2.0)
        pooled = ops.einsum("bi,ij->bj", hidden, np.ones((4, 2)))
        return ops.concatenate([hidden, pooled, ops.clip(pooled, np.array(-1.0), 1.0)], axis=-1)


def make_model(dtype=None):
    model = mk.Sequential([mk.Input((3,)), Mix(dtype=dtype), mk.layers.Dense(1, dtype=dtype)])
    model.compile(optimizer=mk.optimizers.Adam(0.05), loss="mse")
    return model


def data():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 3))  # float64 data, as users have it
    return x, x @ np.array([[1.0], [-2.0], [0.5]])


def test_a_model_with_float64_constants_trains_in_float32():
    x, y = data()
    model = make_model()
    with float64_leaks() as leaks, mk.GradientTape() as tape:
        predictions = model(x[:8])
        loss = ops.mean((predictions - y[:8]) ** 2)
    grads = tape.gradient(loss, model.trainable_weights)
    assert predictions.dtype == loss.dtype == np.float32
    assert [g.dtype for g in grads] == [np.float32] * len(model.trainable_weights)
    assert not leaks, "float64 inside: " + ", ".join(sorted(set(leaks)))

    history = model.fit(x, y, epochs=20, batch_size=16, verbose=0).history["loss"]
    assert history[-1] < 0.5 * history[0]
    assert {w.dtype for w in model.weights} == {np.dtype("float32")}
    slots = [v for v in model.optimizer.variables if v.dtype.kind == "f"]
    assert len(slots) >= 2 * len(model.trainable_weights)  # (Adam's two moments)
    assert {v.dtype for v in slots} == {np.dtype("float32")}
    assert model.predict(x, verbose=0).dtype == np.float32


def test_a_float64_model_with_the_same_layer_stays_float64():
    x, y = data()
    model = make_model(dtype="float64")
    with mk.GradientTape() as tape:
        loss = ops.mean((model(x[:8]) - y[:8]) ** 2)
    grads = tape.gradient(loss, model.trainable_weights)
    assert loss.dtype == np.float64
    assert {g.dtype for g in grads} == {np.dtype("float64")}


def test_the_functional_graph_and_the_eager_call_agree():
    x = mk.Input((3,))
    model = mk.Model(x, Mix()(x))
    assert model.outputs[0].dtype == "float32"
    assert model(data()[0][:2]).dtype == np.float32
