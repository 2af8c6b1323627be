"""Keras 3's activation ops: relu6, selu, swish, hard_sigmoid, hard_silu, hard_tanh,
log_sigmoid, softsign, celu, glu, hard/soft/tanh shrink, sparse_plus, sparse_sigmoid,
squareplus, threshold and sparsemax; values and dtypes by hand, gradients, and against Keras."""

import numpy as np
import pytest
from finite_differences import check_float32, check_gradients, check_second_order
from op_graphs import assert_saves_and_crosses_to_keras

import minikeras as mk
from minikeras import ops

RNG = np.random.default_rng(3)
# Kept away from every joint of the piecewise ones, so finite differences see one piece.
_JOINTS = np.array([-3.0, -1.0, -0.5, 0.0, 0.5, 1.0, 3.0, 6.0])
_RAW = RNG.uniform(-7.0, 7.0, size=(3, 8))
X = np.where(np.min(np.abs(_RAW[..., None] - _JOINTS), -1) < 0.05, _RAW + 0.1, _RAW)
X = X.astype("float32")
INTS = np.array([[-2, 0, 1, 3]], "int32")

UNARY = (
    "relu6", "selu", "swish", "hard_sigmoid", "hard_silu", "hard_tanh", "log_sigmoid",
    "softsign", "celu", "glu", "hard_shrink", "soft_shrink", "tanh_shrink", "sparse_plus",
    "sparse_sigmoid", "squareplus", "sparsemax",
)  # fmt: skip
DIFFERENTIABLE = {
    **{name: (lambda x, name=name: getattr(ops, name)(x), X) for name in UNARY},
    "celu_alpha": (lambda x: ops.celu(x, alpha=2.5), X),
    "glu_axis0": (lambda x: ops.glu(x[:2], axis=0), X),
    "hard_shrink_threshold": (lambda x: ops.hard_shrink(x, threshold=2.0), X + 0.01),
    "soft_shrink_threshold": (lambda x: ops.soft_shrink(x, threshold=2.0), X + 0.01),
    "squareplus_b": (lambda x: ops.squareplus(x, b=0.5), X),
    "threshold": (lambda x: ops.threshold(x, 1.0, -2.0), X),
    "sparsemax_wide_support": (lambda x: ops.sparsemax(x * 0.1, axis=0), X),
}


@pytest.mark.parametrize("name", sorted(DIFFERENTIABLE))
def test_gradients_match_finite_differences(name):
    fn, data = DIFFERENTIABLE[name]
    check_gradients(fn, [data])
    check_second_order(fn, [data])
    check_float32(fn, [data])


# (op, input, keyword arguments, expected), each worked out by hand.
BY_HAND = [
    ("relu6", [-1.0, 3.0, 8.0], {}, [0.0, 3.0, 6.0]),
    ("hard_sigmoid", [-4.0, -1.5, 0.0, 3.0], {}, [0.0, 0.25, 0.5, 1.0]),
    ("hard_silu", [-4.0, -1.5, 1.5, 4.0], {}, [0.0, -0.375, 1.125, 4.0]),
    ("hard_tanh", [-2.0, -0.5, 1.0, 3.0], {}, [-1.0, -0.5, 1.0, 1.0]),
    ("softsign", [-3.0, 0.0, 1.0], {}, [-0.75, 0.0, 0.5]),
    ("hard_shrink", [-0.5, -0.6, 0.2, 2.0], {}, [0.0, -0.6, 0.0, 2.0]),
    ("hard_shrink", [-1.0, 1.5], {"threshold": 1.0}, [0.0, 1.5]),
    ("soft_shrink", [-2.0, -0.3, 0.5, 1.5], {}, [-1.5, 0.0, 0.0, 1.0]),
    ("sparse_sigmoid", [-2.0, -1.0, 0.5, 1.0], {}, [0.0, 0.0, 0.75, 1.0]),
    ("sparse_plus", [-2.0, -1.0, 0.0, 1.0, 2.5], {}, [0.0, 0.0, 0.25, 1.0, 2.5]),
    ("squareplus", [-3.0, 0.0, 3.0], {"b": 16}, [1.0, 2.0, 4.0]),
    ("squareplus", [-2.0, 0.0, 2.0], {"b": 0}, [0.0, 0.0, 2.0]),
    ("threshold", [-1.0, 1.0, 2.0], {"threshold": 1.0, "default_value": 7.0}, [7.0, 7.0, 2.0]),
    ("selu", [0.0, 2.0, -1e30], {}, [0.0, 2 * 1.0507009873554805, -1.7580993408473766]),
    ("celu", [2.0, -2.0 * np.log(2.0)], {"alpha": 2.0}, [2.0, -1.0]),
    ("log_sigmoid", [0.0, -200.0, 200.0], {}, [-np.log(2.0), -200.0, 0.0]),
    ("tanh_shrink", [0.0, 1.0], {}, [0.0, 1.0 - np.tanh(1.0)]),
    ("glu", [[1.0, 4.0, 0.0, 1000.0]], {}, [[0.5, 4.0]]),
    ("glu", [[2.0], [0.0]], {"axis": 0}, [[1.0]]),
    ("sparsemax", [0.0, 0.5, 1.0], {}, [0.0, 0.25, 0.75]),
    ("sparsemax", [0.1, 0.2, 0.3, 0.4, 0.5], {}, [0.0, 0.1, 0.2, 0.3, 0.4]),
    ("sparsemax", [[1.0, 0.0], [1.0, 5.0]], {"axis": 0}, [[0.5, 0.0], [0.5, 1.0]]),
]


@pytest.mark.parametrize("name, data, kwargs, expected", BY_HAND)
def test_values_by_hand(name, data, kwargs, expected):
    got = getattr(ops, name)(np.array(data, "float32"), **kwargs)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got.numpy(), np.array(expected, "float32"), rtol=1e-6, atol=1e-7)


def test_dtypes_follow_keras():
    for name in sorted(set(UNARY) - {"hard_tanh", "glu"}):
        assert getattr(ops, name)(INTS).dtype == np.float32, name
    assert ops.hard_tanh(INTS).dtype == np.int32  # (integers stay integers, as in Keras)
    assert ops.hard_tanh(np.array([True, False])).dtype == np.int32
    assert ops.relu6(np.ones(2, "float16")).dtype == np.float16
    assert ops.threshold(INTS, 0, 5).dtype == np.int32
    assert ops.threshold(INTS.astype("int8"), 0, 5).dtype == np.int8
    assert ops.threshold(INTS, 0, 0.5).dtype == np.float32
    assert ops.threshold(np.array([True, False]), 0, 0).dtype == np.int32
    np.testing.assert_array_equal(ops.threshold(INTS, 0, 5).numpy(), [[5, 5, 1, 3]])
    assert ops.swish is ops.silu and ops.hard_swish is ops.hard_silu


def test_gradients_at_the_joints_follow_keras_jax_backend():
    x = mk.Variable(np.array([-3.0, -1.0, 0.0, 1.0, 3.0, 6.0], "float32"))
    expected = {  # d/dx at exactly -3, -1, 0, 1, 3, 6
        "relu6": [0, 0, 0, 1, 1, 0],
        "hard_sigmoid": [0, 1 / 6, 1 / 6, 1 / 6, 0, 0],
        "hard_tanh": [0, 1, 1, 1, 0, 0],
        "hard_silu": [0, 1 / 6, 0.5, 5 / 6, 1, 1],
        "sparse_sigmoid": [0, 0.25, 0.5, 0.25, 0, 0],
        "sparse_plus": [0, 0, 0.5, 1, 1, 1],
        "selu": [0.0, 0.0, 1.6732632423543772, 1.0, 1.0, 1.0],  # (times scale, below)
    }
    for name, want in expected.items():
        with mk.GradientTape() as tape:
            total = ops.sum(getattr(ops, name)(x))
        if name == "selu":  # scale * alpha * exp(x) below zero and at zero, as Keras
            want = 1.0507009873554805 * np.array(want)
            want[:2] = 1.0507009873554805 * 1.6732632423543772 * np.exp([-3.0, -1.0])
        np.testing.assert_allclose(tape.gradient(total, x).numpy(), want, rtol=1e-6, err_msg=name)


def test_sparsemax_is_the_projection_onto_the_simplex():
    logits = RNG.normal(size=(50, 7)).astype("float32")
    got = ops.sparsemax(logits).numpy()
    np.testing.assert_allclose(got.sum(-1), 1.0, rtol=1e-6)
    assert (got >= 0).all() and (got == 0).any()
    # Reference: tau solving sum(max(z - tau, 0)) = 1, by bisection in float64.
    low, high = logits.min(-1, keepdims=True) - 1.0, logits.max(-1, keepdims=True).astype(float)
    for _ in range(100):
        tau = (low + high) / 2
        over = np.maximum(logits - tau, 0).sum(-1, keepdims=True) > 1
        low, high = np.where(over, tau, low), np.where(over, high, tau)
    np.testing.assert_allclose(got, np.maximum(logits - low, 0), atol=1e-6)


def test_activations_call_the_ops():
    for name in ("relu6", "selu", "hard_sigmoid", "hard_silu", "softsign", "log_sigmoid"):
        mine = mk.activations.get(name)(X).numpy()
        np.testing.assert_array_equal(mine, getattr(ops, name)(X).numpy(), err_msg=name)
    assert mk.activations.get("hard_swish")(X).dtype == np.float32


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="glu: axis 1 must have an even size"):
        ops.glu(np.ones((2, 3)))
    with pytest.raises(ValueError, match="glu: axis 2 is out of range"):
        ops.glu(np.ones((2, 4)), axis=2)
    with pytest.raises(ValueError, match="celu: alpha must not be zero"):
        ops.celu(X, alpha=0.0)
    with pytest.raises(ValueError, match="squareplus: b must be non-negative"):
        ops.squareplus(X, b=-1)
    with pytest.raises(TypeError, match="hard_shrink: threshold must be a number"):
        ops.hard_shrink(X, threshold=[0.5])
    with pytest.raises(TypeError, match="threshold: default_value"):
        ops.threshold(X, 0.0, None)
    with pytest.raises(ValueError, match="sparsemax: axis -3 is out of range"):
        ops.sparsemax(X, axis=-3)


def test_the_same_values_and_dtypes_as_keras():
    keras = pytest.importorskip("keras")
    cases = [((name,), (data,), {}) for name in UNARY for data in (X, X.astype("float16"))]
    cases += [((name,), (INTS,), {}) for name in UNARY if name not in ("swish", "glu")]
    cases += [
        (("celu",), (X,), {"alpha": 2.0}), (("glu",), (X[:2],), {"axis": 0}),
        (("hard_shrink",), (X,), {"threshold": 1.5}), (("soft_shrink",), (X,), {"threshold": 2}),
        (("squareplus",), (X,), {"b": 1}), (("sparsemax",), (X,), {"axis": 0}),
        (("threshold",), (X, 1.0, -2.0), {}), (("threshold",), (INTS, 1, 0), {}),
        (("threshold",), (INTS, 1, 0.5), {}), (("threshold",), (np.array([True]), 0, 0), {}),
        (("hard_tanh",), (np.array([True, False]),), {}),
    ]  # fmt: skip
    for (name,), args, kwargs in cases:
        if name == "sparsemax":  # (Keras 3.15's is right only for a support of one: see below)
            args = (args[0] * 100,)
        theirs = keras.ops.convert_to_numpy(getattr(keras.ops, name)(*args, **kwargs))
        mine = getattr(ops, name)(*args, **kwargs).numpy()
        assert mine.dtype == theirs.dtype and mine.shape == theirs.shape, (name, args[0].dtype)
        tolerance = 2e-3 if mine.dtype == np.float16 else 1e-6
        np.testing.assert_allclose(mine, theirs, rtol=tolerance, atol=tolerance, err_msg=name)


def test_keras_sparsemax_differs_where_documented():
    # Keras 3.15.1 sums the cumulative sums over the support (keras-team/keras#23425,
    # fixed after 3.15.1 by #23469): its result does not sum to one. Ours does.
    keras = pytest.importorskip("keras")
    theirs = keras.ops.convert_to_numpy(keras.ops.sparsemax(np.array([0.0, 0.5, 1.0])))
    if np.isclose(theirs.sum(), 1.0):
        pytest.skip("this Keras has the fix: test_the_same_values_and_dtypes_as_keras covers it")
    np.testing.assert_allclose(theirs, [0.0, 0.0, 0.25], atol=1e-7)


def _graph(lib):
    x = lib.Input((3, 8), name="x")
    o = lib.ops
    return lib.Model(
        x,
        [
            o.relu6(x) + o.selu(x) + o.swish(x) + o.hard_sigmoid(x) + o.hard_silu(x),
            o.hard_swish(x) * o.hard_tanh(x) + o.log_sigmoid(x) + o.softsign(x),
            o.celu(x, alpha=2.0) + o.hard_shrink(x, threshold=1.0) + o.soft_shrink(x),
            o.tanh_shrink(x) + o.sparse_plus(x) + o.sparse_sigmoid(x) + o.squareplus(x, b=2),
            o.threshold(x, 0.5, -1.0),
            o.glu(x, axis=-1),
            o.sparsemax(x * 100.0, axis=1),
        ],
    )


def test_models_of_these_ops_save_and_cross_to_keras(tmp_path):
    assert_saves_and_crosses_to_keras(_graph, X.reshape(1, 3, 8), tmp_path, atol=1e-6)


NEWEST = ("celu", "glu", "hard_shrink", "hard_tanh", "soft_shrink", "sparse_plus")
NEWEST += ("sparse_sigmoid", "sparsemax", "squareplus", "tanh_shrink")


def _newest_activations_graph(lib):
    inputs = lib.Input((4,))
    return lib.Model(inputs, [lib.layers.Dense(4, activation=name)(inputs) for name in NEWEST])


def test_keras_3_newest_activations_are_the_ops_and_name_layers(tmp_path):
    for name in NEWEST:
        assert mk.activations.get(name) is getattr(ops, name)
        assert mk.activations.serialize(getattr(mk.activations, name)) == name
    # (Keras 3.15.1's sparsemax is wrong here: see above)
    keras_wrong = [NEWEST.index("sparsemax")]
    assert_saves_and_crosses_to_keras(
        _newest_activations_graph, X[:, :4], tmp_path, atol=1e-6, keras_wrong_outputs=keras_wrong
    )


@pytest.mark.parametrize(
    "name, kwargs, exact",
    [
        ("elu", {"alpha": 1.5}, lambda x: 1.5 * np.exp(x)),
        ("selu", {}, lambda x: 1.0507009873554805 * 1.6732632423543772 * np.exp(x)),
        ("celu", {"alpha": 2.0}, lambda x: np.exp(x / 2.0)),
    ],
)
def test_small_negative_side_derivatives_keep_their_digits(name, kwargs, exact):
    # Far below zero the output is nearly -alpha and the derivative tiny: taken as
    # `output + alpha` it cancelled to a few correct bits (to 0 at x = -20).
    x = mk.Variable(np.array([-0.5, -3.0, -10.0, -20.0, -40.0], "float32"))
    with mk.GradientTape() as tape:
        total = ops.sum(getattr(ops, name)(x, **kwargs))
    got = tape.gradient(total, x).numpy()
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, exact(x.numpy().astype(np.float64)), rtol=2e-6)
