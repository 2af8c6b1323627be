"""minikeras.ops and operators on symbolic tensors: new symbolic tensors, graph nodes, models.

As in Keras 3, `ops.mean(x, axis=-1)` or `x + y` on functional-API inputs
returns a symbolic tensor and records an operation node (class `Mean`,
`Add`), which a functional model runs on data; the model lists the nodes in
`operations`, not in `layers`.
"""

import inspect

import numpy as np
import pytest

import minikeras as mk
from minikeras import ops
from minikeras.ops.symbolic import SymbolicValueError
from tests.finite_differences import central_differences

RNG = np.random.default_rng(0)
A = RNG.normal(size=(4, 3)).astype("float32")
B = RNG.normal(size=(4, 3)).astype("float32") + 2.0
POSITIVE = np.abs(A) + 0.5


def _run(build, *arrays):
    """Builds a model of `build(*inputs)` on Inputs of the arrays' shapes, runs it on them."""
    inputs = [mk.Input(a.shape[1:], dtype=str(a.dtype)) for a in arrays]
    outputs = build(*inputs)
    if len(inputs) == 1:
        inputs, arrays = inputs[0], arrays[0]
    model = mk.Model(inputs, outputs)
    return outputs, model, model(arrays)


# (label, function of the inputs, numpy reference, arrays)
CASES = [
    ("add", lambda a, b: a + b, lambda a, b: a + b, (A, B)),
    ("radd", lambda a: 2.0 + a, lambda a: 2.0 + a, (A,)),
    ("sub", lambda a, b: a - b, lambda a, b: a - b, (A, B)),
    ("rsub", lambda a: 1.0 - a, lambda a: 1.0 - a, (A,)),
    ("mul", lambda a, b: a * b, lambda a, b: a * b, (A, B)),
    ("rmul", lambda a: 3.0 * a, lambda a: 3.0 * a, (A,)),
    ("truediv", lambda a, b: a / b, lambda a, b: a / b, (A, B)),
    ("rtruediv", lambda a: 1.0 / a, lambda a: 1.0 / a, (POSITIVE,)),
    ("floordiv", lambda a: a // 0.5, lambda a: a // 0.5, (A,)),
    ("mod", lambda a: a % 0.5, lambda a: a % 0.5, (POSITIVE,)),
    ("pow", lambda a: a**2, lambda a: a**2, (A,)),
    ("rpow", lambda a: 2.0**a, lambda a: 2.0**a, (A,)),
    ("matmul", lambda a: a @ np.ones((3, 2), "float32"), lambda a: a @ np.ones((3, 2)), (A,)),
    ("neg", lambda a: -a, lambda a: -a, (A,)),
    ("abs", abs, np.abs, (A,)),
    ("lt", lambda a, b: a < b, lambda a, b: a < b, (A, B - 2.0)),
    ("le", lambda a: a <= 0.0, lambda a: a <= 0.0, (A,)),
    ("gt", lambda a: a > 0.0, lambda a: a > 0.0, (A,)),
    ("ge", lambda a, b: a >= b, lambda a, b: a >= b, (A, B - 2.0)),
    ("ne", lambda a: a != 0.0, lambda a: a != 0.0, (A,)),
    ("slices", lambda a: a[:, 1:], lambda a: a[:, 1:], (A,)),
    ("int", lambda a: a[:, 0], lambda a: a[:, 0], (A,)),
    ("newaxis", lambda a: a[:, None, ::2], lambda a: a[:, None, ::2], (A,)),
    ("ellipsis", lambda a: a[..., -1], lambda a: a[..., -1], (A,)),
    (
        "mean",
        lambda a: ops.mean(a, axis=-1, keepdims=True),
        lambda a: a.mean(-1, keepdims=True),
        (A,),
    ),  # noqa: E501
    ("sum", lambda a: ops.sum(a, axis=1), lambda a: a.sum(1), (A,)),
    ("max", lambda a: ops.max(a, axis=-1), lambda a: a.max(-1), (A,)),
    (
        "concatenate",
        lambda a, b: ops.concatenate([a, b], axis=-1),
        lambda a, b: np.concatenate([a, b], -1),
        (A, B),
    ),  # noqa: E501
    ("stack", lambda a, b: ops.stack([a, b], axis=1), lambda a, b: np.stack([a, b], 1), (A, B)),
    ("reshape", lambda a: ops.reshape(a, (-1, 3, 1)), lambda a: a.reshape(-1, 3, 1), (A,)),
    ("transpose", lambda a: ops.transpose(a[:, :, None], (0, 2, 1)), lambda a: a[:, None, :], (A,)),
    ("expand_dims", lambda a: ops.expand_dims(a, 1), lambda a: a[:, None], (A,)),
    ("where", lambda a, b: ops.where(a > 0, a, b), lambda a, b: np.where(a > 0, a, b), (A, B)),
    ("maximum", lambda a: ops.maximum(a, 0.0), lambda a: np.maximum(a, 0.0), (A,)),
    ("relu", ops.relu, lambda a: np.maximum(a, 0.0), (A,)),
    ("sigmoid", ops.sigmoid, lambda a: 1 / (1 + np.exp(-a)), (A,)),
    ("softmax", ops.softmax, lambda a: np.exp(a) / np.exp(a).sum(-1, keepdims=True), (A,)),
    ("log", ops.log, np.log, (POSITIVE,)),
    ("sqrt", ops.sqrt, np.sqrt, (POSITIVE,)),
    ("cast", lambda a: ops.cast(a, "int32"), lambda a: a.astype("int32"), (A * 3,)),
    ("keywords", lambda a: ops.mean(x=a, axis=1), lambda a: a.mean(1), (A,)),
]


@pytest.mark.parametrize(
    ("build", "reference", "arrays"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)  # noqa: E501
def test_an_op_on_symbolic_tensors_runs_in_a_model_as_numpy_computes_it(build, reference, arrays):
    symbolic, _, outputs = _run(build, *arrays)
    expected = reference(*[a.astype("float64") for a in arrays])
    assert isinstance(symbolic, mk.layers.SymbolicTensor)
    assert symbolic.shape == (None, *np.shape(expected)[1:])
    assert np.dtype(symbolic.dtype) == outputs.numpy().dtype
    np.testing.assert_allclose(outputs.numpy(), expected, rtol=1e-5, atol=1e-6)


def test_unknown_sizes_stay_unknown_and_known_ones_are_found():
    x = mk.Input((None, 3))
    assert ops.mean(x, axis=1).shape == (None, 3)
    assert ops.concatenate([x, x], axis=1).shape == (None, None, 3)
    assert ops.concatenate([x, x], axis=-1).shape == (None, None, 6)
    assert x[:, 1:].shape == (None, None, 3)
    # Keras's shapes: a slice of an unknown size is unknown (the real size may be 1).
    assert x[:, :2].shape == (None, None, 3) and x[:, -2:].shape == (None, None, 3)
    assert mk.Input((4, 3))[:, :2].shape == (None, 2, 3)
    assert x[:, 0].shape == (None, 3)
    assert mk.Input(batch_shape=(5, 2))[1:].shape == (4, 2)


def test_nodes_are_keras_named_operations_not_layers():
    mk.utils.clear_session()
    x, z = mk.Input((3,)), mk.Input((3,))
    y = ops.mean(x * 2.0 + z, axis=-1, keepdims=True)
    w = ops.concatenate([y, x[:, :1]], axis=-1)
    dense = mk.layers.Dense(2, name="dense")
    model = mk.Model([x, z], dense(w / 2.0))
    # Keras 3.15's model.operations and model.layers for the same graph.
    assert [op.name for op in model.operations] == [
        "input_layer", "multiply", "input_layer_1", "add", "mean", "get_item", "concatenate",
        "true_divide", "dense",
    ]  # fmt: skip
    assert [type(op).__name__ for op in model.operations[3:-1]] == [
        "Add", "Mean", "GetItem", "Concatenate", "TrueDivide",
    ]  # fmt: skip
    assert [layer.name for layer in model.layers] == ["input_layer", "input_layer_1", "dense"]
    with pytest.raises(ValueError, match="no layer named 'mean'"):
        model.get_layer("mean")
    lines = []
    model.summary(print_fn=lines.append)
    assert any(line.startswith("mean (Mean)") and "(None, 1)" in line for line in lines)
    assert model.count_params() == 2 * 2 + 2
    assert ops.add(x, 1.0).node.layer.name == "add_1"  # (uniquified, as Keras)


def test_a_symbolic_tensor_has_no_values_and_says_so():
    x = mk.Input((3,))
    for read in (np.asarray, float, bool, len, list):
        with pytest.raises(SymbolicValueError, match="has no values"):
            read(x)
    assert issubclass(SymbolicValueError, TypeError)
    assert x in [x] and {x: 1}[x] == 1  # (compared by identity, as Keras's KerasTensor)


def test_a_shape_mismatch_is_reported_when_the_graph_is_built():
    with pytest.raises(ValueError, match=r"ops.add on symbolic tensors of shapes \(None, 3\), "):
        mk.Input((3,)) + mk.Input((4,))


def test_eager_calls_are_unchanged_and_keep_their_signatures():
    host = {"convert_to_numpy", "shape"}  # (they read tensors on the host: not wrapped)
    for name in sorted(set(ops.__all__) - host):
        function = getattr(ops, name)
        assert inspect.signature(function) == inspect.signature(function.__wrapped__), name
    assert not any(hasattr(getattr(ops, name), "__wrapped__") for name in host)
    np.testing.assert_allclose(ops.mean(A, axis=0).numpy(), A.mean(0), rtol=1e-6)
    with pytest.raises(TypeError):  # (a TypeError that is not about symbolic tensors)
        ops.add("a", [1.0])


def test_an_op_output_carries_no_mask_as_in_keras():
    tokens = mk.Input((4,), dtype="int32")
    embedding = mk.layers.Embedding(5, 2, mask_zero=True)
    lstm = mk.layers.LSTM(3)
    scaled = embedding(tokens) * 1.0
    assert getattr(scaled, "_keras_mask", None) is None  # (Keras: the op's output has none)
    model = mk.Model(tokens, lstm(scaled))
    data = np.array([[1, 2, 0, 0]])
    unmasked = lstm(embedding(data).numpy() * 1.0)  # (an array: no mask goes with it)
    np.testing.assert_allclose(model(data).numpy(), unmasked.numpy(), rtol=1e-6)


def _op_model(seed):
    mk.utils.set_random_seed(seed)
    x = mk.Input((4,))
    h = mk.layers.Dense(5)(x * 2.0 - 1.0)
    h = ops.maximum(h, 0.1 * h) + ops.sigmoid(h) / 3.0
    h = ops.concatenate([h, ops.mean(x, axis=-1, keepdims=True)], axis=-1)
    return mk.Model(x, mk.layers.Dense(1)(h + ops.abs(ops.sum(x, axis=1, keepdims=True))))


def _lambda_model(seed):
    mk.utils.set_random_seed(seed)
    x = mk.Input((4,))
    lam = mk.layers.Lambda
    h = mk.layers.Dense(5)(lam(lambda t: t * 2.0 - 1.0)(x))
    h = lam(lambda t: ops.maximum(t, 0.1 * t) + ops.sigmoid(t) / 3.0)(h)
    h = lam(lambda ts: ops.concatenate([ts[0], ops.mean(ts[1], axis=-1, keepdims=True)], -1))(
        [h, x]
    )
    h = lam(lambda ts: ts[0] + ops.abs(ops.sum(ts[1], axis=1, keepdims=True)))([h, x])
    return mk.Model(x, mk.layers.Dense(1)(h))


def test_gradients_through_op_nodes_match_finite_differences():
    model = _op_model(3)
    x = RNG.normal(size=(2, 4)).astype("float32")
    kernel = model.weights[0]
    for _ in range(3):  # (the first call eager, later ones may be replayed as one node)
        with mk.GradientTape() as tape:
            loss = ops.sum(model(x) ** 2)
        grad = tape.gradient(loss, kernel).numpy()
    start = kernel.numpy().astype("float64")

    def f(value):
        kernel.assign(value.astype("float32"))
        return float(np.sum(model(x).numpy().astype("float64") ** 2))

    expected = central_differences(f, start, eps=1e-3)
    kernel.assign(start.astype("float32"))
    np.testing.assert_allclose(grad, expected, rtol=2e-2, atol=2e-3)


@pytest.mark.parametrize("run_eagerly", [False, True])
def test_fit_trains_op_nodes_as_the_same_model_of_lambda_layers(run_eagerly):
    rng = np.random.default_rng(1)
    x = rng.normal(size=(32, 4)).astype("float32")
    y = rng.normal(size=(32, 1)).astype("float32")
    trained = []
    for build in (_op_model, _lambda_model):
        model = build(5)
        model.compile(optimizer="sgd", loss="mse", run_eagerly=run_eagerly)
        history = model.fit(x, y, batch_size=8, epochs=2, verbose=0, shuffle=False)
        trained.append((history.history["loss"], [w.numpy() for w in model.weights], model))
    (ops_loss, ops_weights, model), (lambda_loss, lambda_weights, _) = trained
    np.testing.assert_allclose(ops_loss, lambda_loss, rtol=1e-5)
    for mine, theirs in zip(ops_weights, lambda_weights):
        np.testing.assert_allclose(mine, theirs, rtol=1e-5, atol=1e-6)
    if not run_eagerly:  # the op nodes are math minikeras defines: the step is replayed
        programs = list(model._compiled_step.programs.values())
        assert [type(p).__name__ for p in programs] == ["Program"]


def test_a_model_with_op_nodes_round_trips_through_a_minikeras_file(tmp_path):
    model = _op_model(7)
    x = RNG.normal(size=(3, 4)).astype("float32")
    path = tmp_path / "ops.minikeras"
    model.save(path)
    loaded = mk.saving.load_model(path)
    np.testing.assert_array_equal(loaded(x).numpy(), model(x).numpy())
    assert [type(op).__name__ for op in loaded.operations] == [
        type(op).__name__ for op in model.operations
    ]
    assert [layer.name for layer in loaded.layers[1:]] == [layer.name for layer in model.layers[1:]]


def test_a_model_with_op_nodes_clones():
    model = _op_model(9)
    clone = mk.models.clone_model(model)
    clone.set_weights(model.get_weights())
    x = RNG.normal(size=(3, 4)).astype("float32")
    np.testing.assert_allclose(clone(x).numpy(), model(x).numpy(), rtol=1e-6)


# ------------------------------------------------------------ a review's findings


def test_einsum_on_symbolic_tensors_runs_and_saves(tmp_path):
    x = mk.Input((4,))
    kernel = RNG.normal(size=(4, 2)).astype("float32")
    data = RNG.normal(size=(3, 4)).astype("float32")
    model = mk.Model(x, ops.einsum("ij,jk->ik", x, kernel))
    assert model.outputs[0].shape == (None, 2)
    np.testing.assert_allclose(model(data).numpy(), data @ kernel, rtol=1e-5)
    for suffix in ("minikeras", "keras"):
        model.save(tmp_path / f"e.{suffix}")
        again = mk.models.load_model(tmp_path / f"e.{suffix}")
        np.testing.assert_allclose(again(data).numpy(), data @ kernel, rtol=1e-5)


def test_a_list_changed_after_the_call_does_not_change_the_graph():
    a, b = mk.Input((3,)), mk.Input((3,))
    parts = [a, b]
    joined = ops.concatenate(parts, axis=-1)
    merged = mk.layers.Concatenate()(parts)
    parts.append(a)  # (after the calls: as in Keras, the graph keeps what it was given)
    model = mk.Model([a, b], [joined, merged])
    outputs = model([np.ones((1, 3), "float32"), np.zeros((1, 3), "float32")])
    assert [tuple(o.shape) for o in outputs] == [(1, 6), (1, 6)] and joined.shape == (None, 6)


def test_a_cast_takes_a_numpy_dtype_and_saves_its_name(tmp_path):
    x = mk.Input((3,))
    model = mk.Model(x, ops.cast(x, np.float16))
    assert model.operations[-1].get_config()["dtype"] == "float16"
    model.save(tmp_path / "c.keras")
    assert mk.models.load_model(tmp_path / "c.keras")(np.ones((1, 3))).dtype == np.float16


def test_convert_to_numpy_of_a_symbolic_tensor_is_a_value_error_as_in_keras():
    with pytest.raises(ValueError, match="convert_to_numpy: a symbolic tensor has no values"):
        ops.convert_to_numpy(mk.Input((3,)))


def test_a_wrapped_op_pickles_as_itself():
    import pickle

    assert pickle.loads(pickle.dumps(ops.relu)) is ops.relu


def _unknown_meets_known(lib):
    return [
        lib.Input((None,)) + lib.Input((4,)),
        lib.ops.matmul(lib.Input((None,)), np.ones((5, 4), "float32")),
        lib.ops.reshape(lib.Input((3,)), (-1, 6)),
        *lib.ops.split(lib.Input((None, 4)), 2, axis=1),
        lib.Input((None, 4))[:, :2],
    ]


def test_an_unknown_size_meeting_a_known_one_gets_keras_shapes():
    shapes = [tuple(t.shape) for t in _unknown_meets_known(mk)]
    assert shapes == [(None, 4), (None, 4), (None, 6), (None, None, 4), (None, None, 4),
                      (None, None, 4)]  # fmt: skip
    with pytest.raises(ValueError, match=r"ops.add on symbolic tensors of shapes \(None, 3\)"):
        mk.Input((3,)) + mk.Input((4,))  # (known sizes that do not fit stay an error)


def test_unknown_sizes_meeting_known_ones_match_keras():
    keras = pytest.importorskip("keras")
    assert [tuple(t.shape) for t in _unknown_meets_known(mk)] == [
        tuple(t.shape) for t in _unknown_meets_known(keras)
    ]


def test_a_float64_numpy_constant_does_not_widen_a_float32_graph_as_in_keras():
    x = mk.Input((3,))
    product, total = x @ np.ones((3, 2)), np.ones(3) + x
    assert product.dtype == total.dtype == "float32"
    outputs = mk.Model(x, [product, total])(np.ones((1, 3), "float32"))
    assert [o.dtype for o in outputs] == [np.float32, np.float32]


def test_a_symbolic_tensor_captured_by_a_layers_function_is_named_in_the_error():
    a, b = mk.Input((3,)), mk.Input((3,))
    with pytest.raises(TypeError, match=r"ops.add in the call of Lambda '.*' met a symbolic"):
        mk.layers.Lambda(lambda t: t + b)(a)
    joined = mk.layers.Lambda(lambda pair: pair[0] + pair[1])([a, b])  # (given as inputs: fine)
    assert joined.shape == (None, 3)


def test_an_output_count_that_depends_on_an_unknown_size_is_refused_at_build_time():
    x = mk.Input((3,))
    with pytest.raises(ValueError, match="number or rank of the outputs depends on an unknown"):
        mk.ops.unstack(x)  # (its batch axis: as many outputs as the batch has rows)
    assert [t.shape for t in mk.ops.unstack(x, axis=1)] == [(None,)] * 3
