"""Gradients of every differentiable op against central finite differences.

Each case is an op applied to a few inputs. The gradient that `GradientTape`
computes of `sum(op(inputs) * weights)` (random weights, float64) must match
central differences of the same expression; the same case run in float32 must
keep its result and every gradient in float32.
"""

import finite_differences
import numpy as np
import pytest

from minikeras import GradientTape, Tensor, Variable, ops
from minikeras.ops.cross_entropy import mean_sparse_categorical_crossentropy

EPS = 1e-6


# ---------------------------------------------------------------- samplers
# Each takes a numpy Generator and returns a float64 array (or labels).


def normal(*shape):
    return lambda rng: rng.standard_normal(shape)


def positive(*shape):
    return lambda rng: rng.uniform(0.5, 2.0, shape)


def nonzero(*shape):
    """Values at least 0.2 away from zero, where abs and relu have a kink."""
    return lambda rng: rng.choice([-1.0, 1.0], shape) * rng.uniform(0.2, 2.0, shape)


def probabilities(*shape):
    return lambda rng: rng.uniform(0.1, 0.9, shape)


def distribution(*shape):
    def sample(rng):
        p = rng.uniform(0.1, 1.0, shape)
        return p / p.sum(axis=-1, keepdims=True)

    return sample


def labels(num_classes, *shape):
    return lambda rng: rng.integers(0, num_classes, shape)


def mask(*shape):
    return lambda rng: rng.random(shape) < 0.5


def away_from(bounds, *shape):
    """Normal values at least 0.05 away from each of `bounds` (kinks of clip)."""

    def sample(rng):
        x = rng.uniform(-1.5, 1.5, shape)
        for bound in bounds:
            x = np.where(np.abs(x - bound) < 0.05, x + 0.1, x)
        return x

    return sample


def case(name, fn, *samplers):
    return pytest.param(fn, samplers, id=name)


# ------------------------------------------------------------------- cases

BROADCAST_PAIRS = [((3, 4), (3, 4)), ((3, 4), (4,)), ((3, 1), (1, 4)), ((), (3, 4)), ((2, 3), ())]


def binary_cases(name, fn, left, right):
    return [case(f"{name}-{a}-{b}", fn, left(*a), right(*b)) for a, b in BROADCAST_PAIRS]


ELEMENTWISE = [
    *binary_cases("add", ops.add, normal, normal),
    *binary_cases("subtract", ops.subtract, normal, normal),
    *binary_cases("multiply", ops.multiply, normal, normal),
    *binary_cases("divide", ops.divide, normal, nonzero),
    *binary_cases("power", ops.power, positive, normal),
    *binary_cases("maximum", ops.maximum, normal, normal),
    *binary_cases("minimum", ops.minimum, normal, normal),
    case("power-int-exponent", lambda x: ops.power(x, 3), normal(3, 4)),
    case("power-float-exponent", lambda x: x**2.5, positive(3, 4)),
    case("power-scalar-base", lambda x: 2.0**x, normal(3, 4)),
    case("power-exponent-zero-elements", ops.power, positive(5), lambda rng: np.arange(5.0) - 2),
    case("operators", lambda a, b: (a * 2 - b[:2] / 3) @ b.T + 1, normal(2, 3), normal(4, 3)),
    case("maximum-scalar", lambda x: ops.maximum(x, 0.1), normal(3, 4)),
    case("minimum-int-array", lambda x: ops.minimum(x, np.array([0, 1, -1, 2])), normal(3, 4)),
]

UNARY_SHAPES = [(3, 4), (), (2, 1, 3)]


def unary_cases(name, fn, sampler):
    return [case(f"{name}-{shape}", fn, sampler(*shape)) for shape in UNARY_SHAPES]


UNARY = [
    *unary_cases("negative", ops.negative, normal),
    *unary_cases("exp", ops.exp, normal),
    *unary_cases("log", ops.log, positive),
    *unary_cases("log1p", ops.log1p, lambda *s: lambda rng: rng.uniform(-0.5, 2.0, s)),
    *unary_cases("sqrt", ops.sqrt, positive),
    *unary_cases("square", ops.square, normal),
    *unary_cases("abs", ops.abs, nonzero),
    *unary_cases("tanh", ops.tanh, normal),
    *unary_cases("sigmoid", ops.sigmoid, normal),
    *unary_cases("relu", ops.relu, nonzero),
    *unary_cases("softplus", ops.softplus, normal),
    *unary_cases("leaky_relu", ops.leaky_relu, nonzero),
    *unary_cases("elu", ops.elu, nonzero),
    *unary_cases("silu", ops.silu, normal),
    *unary_cases("gelu-tanh", lambda x: ops.gelu(x, approximate=True), normal),
    *unary_cases("gelu-erf", lambda x: ops.gelu(x, approximate=False), normal),
    *unary_cases("erf", ops.erf, lambda *s: lambda rng: 2.5 * rng.standard_normal(s)),
    case("leaky_relu-slope", lambda x: ops.leaky_relu(x, negative_slope=0.01), nonzero(3, 4)),
    case("elu-alpha", lambda x: ops.elu(x, alpha=0.5), nonzero(3, 4)),
    case("clip", lambda x: ops.clip(x, -0.5, 0.5), away_from((-0.5, 0.5), 3, 4)),
    case("clip-one-sided", lambda x: ops.clip(x, 0.0, 10.0), away_from((0.0,), 5)),
    case("where", lambda c, a, b: ops.where(c, a, b), mask(3, 4), normal(3, 4), normal(3, 4)),
    case("where-broadcast", ops.where, mask(3, 4), normal(4), normal()),
    case("where-condition-broadcast", ops.where, mask(4), normal(3, 4), normal(3, 1)),
    case("where-python-scalar", lambda c, a: ops.where(c, a, 0.0), mask(3, 4), normal(3, 4)),
]


def reduction_cases(name, fn, sampler=normal, shape=(2, 3, 4)):
    axes = [None, 0, -1, 1, (0, 2), (-1, 0, 1)]
    return [
        case(f"{name}-axis{axis}-keepdims{keepdims}", _reduce(fn, axis, keepdims), sampler(*shape))
        for axis in axes
        for keepdims in (False, True)
    ]


def _reduce(fn, axis, keepdims):
    return lambda x: fn(x, axis=axis, keepdims=keepdims)


REDUCTIONS = [
    *reduction_cases("sum", ops.sum),
    *reduction_cases("mean", ops.mean),
    *reduction_cases("max", ops.max),
    *reduction_cases("min", ops.min),
    *reduction_cases("var", ops.var),
    *reduction_cases("std", ops.std),
    *reduction_cases("logsumexp", ops.logsumexp),
    case("sum-1d", ops.sum, normal(5)),
    case("mean-scalar", ops.mean, normal()),
    case("logsumexp-large", ops.logsumexp, lambda rng: 500 + rng.standard_normal((3, 4))),
]

LINALG = [
    case("matmul-2d", ops.matmul, normal(3, 4), normal(4, 5)),
    case("matmul-batched", ops.matmul, normal(2, 3, 4), normal(2, 4, 5)),
    case("matmul-broadcast-batch", ops.matmul, normal(2, 3, 4), normal(4, 5)),
    case("matmul-broadcast-both", ops.matmul, normal(1, 3, 4), normal(2, 4, 2)),
    case("matmul-vector-matrix", ops.matmul, normal(4), normal(2, 4, 5)),
    case("matmul-matrix-vector", ops.matmul, normal(3, 4), normal(4)),
    case("matmul-vector-vector", ops.matmul, normal(4), normal(4)),
    case("dot-2d", ops.dot, normal(3, 4), normal(4, 5)),
    case("dot-1d", ops.dot, normal(4), normal(4)),
    case("dot-matrix-vector", ops.dot, normal(3, 4), normal(4)),
    case("dot-scalar", ops.dot, normal(), normal(3)),
    case("tensordot-1", lambda a, b: ops.tensordot(a, b, axes=1), normal(2, 3), normal(3, 4)),
    case("tensordot-2", ops.tensordot, normal(2, 3, 4), normal(3, 4, 2)),
    case(
        "tensordot-lists",
        lambda a, b: ops.tensordot(a, b, axes=([0, 2], [2, 0])),
        normal(2, 3, 4),
        normal(4, 5, 2),
    ),
    case("einsum-matmul", lambda a, b: ops.einsum("ij,jk->ik", a, b), normal(2, 3), normal(3, 4)),
    case(
        "einsum-batched",
        lambda a, b: ops.einsum("bij,bjk->bik", a, b),
        normal(2, 2, 3),
        normal(2, 3, 4),
    ),
    case("einsum-trace", lambda a: ops.einsum("ii->", a), normal(3, 3)),
    case("einsum-diagonal", lambda a: ops.einsum("bii->bi", a), normal(2, 3, 3)),
    case("einsum-sum-out", lambda a: ops.einsum("ij->j", a), normal(3, 4)),
    case("einsum-implicit", lambda a, b: ops.einsum("ij,jk", a, b), normal(2, 3), normal(3, 4)),
    case(
        "einsum-ellipsis-broadcast",
        lambda a, b: ops.einsum("...i,...i->...i", a, b),
        normal(1, 3),
        normal(4, 3),
    ),
    case("einsum-ellipsis", lambda a, b: ops.einsum("...i,i->...", a, b), normal(2, 3), normal(3)),
    # A summed letter of size 1 in one operand, broadcast against the other's.
    case(
        "einsum-summed-broadcast",
        lambda a, b: ops.einsum("ij,ij->i", a, b),
        normal(3, 4),
        normal(3, 1),
    ),
    case(
        "einsum-summed-broadcast-1d", lambda a, b: ops.einsum("i,i->", a, b), normal(1), normal(4)
    ),
    case(
        "einsum-three",
        lambda a, b, c: ops.einsum("ij,jk,k->i", a, b, c),
        normal(2, 3),
        normal(3, 4),
        normal(4),
    ),
]


def _split_and_weigh(x, sections, axis):
    parts = ops.split(x, sections, axis=axis)
    return ops.concatenate([part * (i + 1.0) for i, part in enumerate(parts)], axis=axis)


SHAPE_OPS = [
    case("reshape", lambda x: ops.reshape(x, (4, -1)), normal(2, 3, 4)),
    case("reshape-method", lambda x: x.reshape(6, 4), normal(2, 3, 4)),
    case("reshape-to-scalar", lambda x: ops.reshape(x, ()), normal(1, 1)),
    case("transpose", ops.transpose, normal(2, 3, 4)),
    case("transpose-axes", lambda x: ops.transpose(x, (1, 2, 0)), normal(2, 3, 4)),
    case("transpose-T", lambda x: x.T, normal(3, 4)),
    case("expand_dims", lambda x: ops.expand_dims(x, 1), normal(3, 4)),
    case("expand_dims-neg", lambda x: ops.expand_dims(x, -1), normal(3, 4)),
    case("squeeze", ops.squeeze, normal(3, 1, 4, 1)),
    case("squeeze-axis", lambda x: ops.squeeze(x, axis=1), normal(3, 1, 1)),
    case("concatenate-0", lambda a, b: ops.concatenate([a, b]), normal(2, 3), normal(4, 3)),
    case("concatenate-1", lambda a, b: ops.concatenate([a, b], axis=1), normal(2, 3), normal(2, 1)),
    case("concatenate-int", lambda a: ops.concatenate([a, np.ones((1, 3), int)]), normal(2, 3)),
    case("stack-0", lambda a, b: ops.stack([a, b]), normal(2, 3), normal(2, 3)),
    case("stack-last", lambda a, b: ops.stack([a, b, a], axis=-1), normal(2, 3), normal(2, 3)),
    case("split-sections", lambda x: _split_and_weigh(x, 2, 1), normal(3, 4)),
    case("split-indices", lambda x: _split_and_weigh(x, [1, 3], 0), normal(5, 2)),
    case("split-unused-part", lambda x: ops.split(x, 3)[1], normal(6, 2)),
    case("take-flat", lambda x: ops.take(x, [0, 5, 5, 11]), normal(3, 4)),
    case("take-axis0", lambda x: ops.take(x, np.array([2, 0, 2]), axis=0), normal(3, 4)),
    case("take-axis-neg", lambda x: ops.take(x, [[1, 3], [3, 3]], axis=-1), normal(3, 4)),
    case("getitem-int", lambda x: x[1], normal(3, 4)),
    case("getitem-slice", lambda x: x[1:, ::2], normal(3, 4)),
    case("getitem-negative-step", lambda x: x[::-1, -2], normal(3, 4)),
    case("getitem-ellipsis-newaxis", lambda x: x[..., None, 1:3], normal(2, 3, 4)),
    case("getitem-int-array", lambda x: x[np.array([0, 2, 0])], normal(3, 4)),
    case("getitem-list", lambda x: x[:, [3, 1, 1]], normal(3, 4)),
    case("getitem-pairs", lambda x: x[[0, 1, 1], [2, 3, 3]], normal(3, 4)),
    case("getitem-tensor-index", lambda x: x[ops.convert_to_tensor([2, 1])], normal(3, 4)),
    case("getitem-mask", lambda x: ops.getitem(x, np.array([True, False, True])), normal(3, 4)),
    case("pad", lambda x: ops.pad(x, ((1, 2), (0, 1))), normal(3, 4)),
    case("pad-constant", lambda x: ops.pad(x, 1, constant_values=1.5), normal(2, 3)),
    case("pad-pair", lambda x: ops.pad(x, ((2, 0),)), normal(2, 3)),
]

NN = [
    case("softmax", ops.softmax, normal(3, 5)),
    case("softmax-axis0", lambda x: ops.softmax(x, axis=0), normal(3, 5)),
    case("softmax-3d", lambda x: ops.softmax(x, axis=1), normal(2, 3, 4)),
    case("log_softmax", ops.log_softmax, normal(3, 5)),
    case("log_softmax-axis0", lambda x: ops.log_softmax(x, axis=0), normal(3, 5)),
    case(
        "sparse_cce-logits",
        lambda y, x: ops.sparse_categorical_crossentropy(y, x, from_logits=True),
        labels(5, 4),
        normal(4, 5),
    ),
    case(
        "sparse_cce-logits-40-classes",
        lambda y, x: ops.sparse_categorical_crossentropy(y, x, from_logits=True),
        labels(40, 3),
        normal(3, 40),
    ),
    case(
        "sparse_cce-probs",
        lambda y, x: ops.sparse_categorical_crossentropy(y, x),
        labels(5, 4),
        distribution(4, 5),
    ),
    case(
        "sparse_cce-unnormalized-probs",
        lambda y, x: ops.sparse_categorical_crossentropy(y, x),
        labels(5, 4),
        probabilities(4, 5),
    ),
    case(
        "mean_sparse_cce",
        lambda y, x: mean_sparse_categorical_crossentropy(y, x),
        labels(5, 4),
        normal(4, 5),
    ),
    case(
        "mean_sparse_cce-3d-axis1",
        lambda y, x: mean_sparse_categorical_crossentropy(y, x, axis=1),
        labels(4, 2, 3),
        normal(2, 4, 3),
    ),
    case(
        "sparse_cce-logits-3d",
        lambda y, x: ops.sparse_categorical_crossentropy(y, x, from_logits=True),
        labels(4, 2, 3),
        normal(2, 3, 4),
    ),
    case(
        "sparse_cce-logits-axis1",
        lambda y, x: ops.sparse_categorical_crossentropy(y, x, from_logits=True, axis=1),
        labels(4, 2, 3),
        normal(2, 4, 3),
    ),
    case(
        "sparse_cce-probs-axis1",
        lambda y, x: ops.sparse_categorical_crossentropy(y, x, axis=1),
        labels(4, 2, 3),
        probabilities(2, 4, 3),
    ),
    case(
        "sparse_cce-labels-trailing-1",
        lambda y, x: ops.sparse_categorical_crossentropy(y, x, from_logits=True),
        labels(5, 4, 1),
        normal(4, 5),
    ),
    case(
        "cce-logits",
        lambda y, x: ops.categorical_crossentropy(y, x, from_logits=True),
        distribution(4, 5),
        normal(4, 5),
    ),
    case(
        "cce-probs",
        lambda y, x: ops.categorical_crossentropy(y, x),
        distribution(4, 5),
        probabilities(4, 5),
    ),
    case(
        "cce-logits-axis0",
        lambda y, x: ops.categorical_crossentropy(y, x, from_logits=True, axis=0),
        normal(4, 3),
        normal(4, 3),
    ),
    case(
        "cce-probs-axis0",
        lambda y, x: ops.categorical_crossentropy(y, x, axis=0),
        probabilities(4, 3),
        probabilities(4, 3),
    ),
    case(
        "bce-logits",
        lambda y, x: ops.binary_crossentropy(y, x, from_logits=True),
        probabilities(4, 3),
        nonzero(4, 3),
    ),
    case(
        "bce-probs",
        lambda y, x: ops.binary_crossentropy(y, x),
        probabilities(4, 3),
        probabilities(4, 3),
    ),
    case("dense", ops.dense, normal(3, 4), normal(4, 5), normal(5)),
    case("dense-no-bias", ops.dense, normal(3, 4), normal(4, 5)),
    case(
        "dense-relu",
        lambda x, k, b: ops.dense(x, k, b, activation="relu"),
        normal(3, 4),
        normal(4, 5),
        normal(5),
    ),
    case(
        "dense-relu-no-bias",
        lambda x, k: ops.dense(x, k, activation="relu"),
        normal(3, 4),
        normal(4, 5),
    ),
    case("dense-3d", ops.dense, normal(2, 3, 4), normal(4, 5), normal(5)),
    case(
        "dense-3d-relu",
        lambda x, k, b: ops.dense(x, k, b, activation="relu"),
        normal(2, 3, 4),
        normal(4, 5),
        normal(5),
    ),
    case("dense-1d", ops.dense, normal(4), normal(4, 5), normal(5)),
    case(
        # A (batch, time, features) view of time-major memory, as an RNN's output:
        # multiplied in its own row order, without a copy.
        "dense-time-major-relu",
        lambda x_tm, k, b: ops.dense(ops.transpose(x_tm, (1, 0, 2)), k, b, activation="relu"),
        normal(3, 2, 4),
        normal(4, 5),
        normal(5),
    ),
]

CASES = ELEMENTWISE + UNARY + REDUCTIONS + LINALG + SHAPE_OPS + NN


# ----------------------------------------------------------------- helpers


def make_inputs(samplers, seed=0):
    rng = np.random.default_rng(seed)
    return [np.asarray(sample(rng)) for sample in samplers], rng


def is_float(array):
    return array.dtype.kind == "f"


def loss_value(fn, arrays, weights):
    """`sum(fn(*arrays) * weights)` in float64, outside any tape."""
    out = fn(*[Tensor(array) for array in arrays])
    return float(np.sum(np.asarray(out, dtype=np.float64) * weights))


def numeric_gradient(fn, arrays, index, weights, eps=EPS):
    """Central differences of `loss_value` with respect to `arrays[index]`."""
    return finite_differences.numeric_gradient(
        lambda xs: loss_value(fn, xs, weights), arrays, index, eps
    )


def tape_gradients(fn, arrays, weights_for):
    """Runs `fn` on watched Tensors; returns the output and d(sum(out * w))/d(inputs)."""
    tensors = [Tensor(array) for array in arrays]
    sources = [tensor for tensor in tensors if is_float(tensor.numpy())]
    with GradientTape() as tape:
        tape.watch(sources)
        out = fn(*tensors)
        weights = weights_for(out)
        loss = ops.sum(out * weights)
    return out, loss, tape.gradient(loss, sources), weights


@pytest.mark.parametrize("fn, samplers", CASES)
def test_gradient_matches_central_differences(fn, samplers):
    arrays, rng = make_inputs(samplers)
    out, _, grads, weights = tape_gradients(fn, arrays, lambda out: rng.standard_normal(out.shape))
    assert out.dtype == np.float64
    float_indices = [i for i, array in enumerate(arrays) if is_float(array)]
    assert len(grads) == len(float_indices)
    for index, grad in zip(float_indices, grads):
        expected = numeric_gradient(fn, arrays, index, weights)
        assert grad is not None, f"no gradient for input {index}"
        assert grad.shape == arrays[index].shape
        assert grad.dtype == np.float64
        scale = np.max(np.abs(expected), initial=1.0)
        np.testing.assert_allclose(
            grad.numpy(), expected, rtol=1e-5, atol=1e-6 * scale, err_msg=f"input {index}"
        )


@pytest.fixture
def float64_leaks():
    """Every float64 value and gradient of each traced node (see finite_differences)."""
    with finite_differences.float64_leaks() as leaks:
        yield leaks


@pytest.mark.parametrize("fn, samplers", CASES)
def test_float32_stays_float32_forward_and_backward(fn, samplers, float64_leaks):
    arrays, rng = make_inputs(samplers)
    arrays = [array.astype(np.float32) if is_float(array) else array for array in arrays]
    out, loss, grads, _ = tape_gradients(
        fn, arrays, lambda out: rng.standard_normal(out.shape).astype(np.float32)
    )
    assert out.dtype == np.float32
    assert loss.dtype == np.float32
    for index, grad in enumerate(grads):
        assert grad is not None, f"no gradient for float input {index}"
        assert grad.dtype == np.float32, f"gradient {index} is {grad.dtype}"
    assert not float64_leaks, "float64 inside: " + ", ".join(sorted(set(float64_leaks)))


def test_every_case_name_is_unique():
    names = [param.id for param in CASES]
    assert len(names) == len(set(names))


def test_variables_get_the_same_gradients_as_watched_tensors():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 4))
    kernel = Variable(rng.standard_normal((4, 5)), dtype="float64")
    bias = Variable(rng.standard_normal(5), dtype="float64")
    with GradientTape() as tape:
        loss = ops.sum(ops.dense(x, kernel, bias, activation="relu") ** 2)
    grads = tape.gradient(loss, [kernel, bias])
    assert [grad.dtype for grad in grads] == [np.float64, np.float64]

    def fn(k, b):
        return ops.dense(x, k, b, activation="relu") ** 2

    arrays = [kernel.numpy(), bias.numpy()]
    for index, grad in enumerate(grads):
        expected = numeric_gradient(fn, arrays, index, np.ones((3, 5)))
        np.testing.assert_allclose(grad.numpy(), expected, rtol=1e-5, atol=1e-6)


MIXED_OPERANDS = [
    pytest.param(3, id="python-int"),
    pytest.param(2.5, id="python-float"),
    pytest.param(np.float64(2.5), id="numpy-float64-scalar"),
    pytest.param(np.int64(3), id="numpy-int64-scalar"),
    pytest.param(np.array([1, 2, 3]), id="int-array"),
    pytest.param(np.array([True, True, True]), id="bool-array"),
    pytest.param(np.array([1.5, 0.5, 2.0]), id="float64-array"),  # (a constant: takes float32)
]


@pytest.mark.parametrize("other", MIXED_OPERANDS)
@pytest.mark.parametrize(
    "op",
    [ops.add, ops.subtract, ops.multiply, ops.divide, ops.power, ops.maximum, ops.minimum],
    ids=lambda op: op.__name__,
)
def test_float32_gradients_with_numbers_and_numpy_arrays(op, other, float64_leaks):
    x = Tensor(np.array([[0.5, 1.5, 2.0], [3.0, 1.25, 0.75]], dtype=np.float32))
    with GradientTape() as tape:
        tape.watch(x)
        loss = ops.sum(op(x, other)) + ops.sum(op(other, x))
    grad = tape.gradient(loss, x)
    assert loss.dtype == np.float32 and grad.dtype == np.float32
    assert not float64_leaks, "float64 inside: " + ", ".join(sorted(set(float64_leaks)))


# ----------------------------------------------------- second-order gradients
# The fused ops (dense, sparse cross-entropy, mean) take a plain-numpy path in
# their gradients when nothing is traced; nested tapes must still differentiate
# those gradients. With the "square" head the incoming gradient is itself traced.

SECOND_ORDER = [
    case("dense", ops.dense, normal(3, 4), normal(4, 5), normal(5)),
    case(
        "dense-relu",
        lambda x, k, b: ops.dense(x, k, b, activation="relu"),
        normal(3, 4),
        normal(4, 5),
        normal(5),
    ),
    case(
        "dense-3d-relu",
        lambda x, k: ops.dense(x, k, activation="relu"),
        normal(2, 3, 4),
        normal(4, 5),
    ),
    case(
        "sparse_cce-logits",
        lambda y, x: ops.sparse_categorical_crossentropy(y, x, from_logits=True),
        labels(5, 4),
        normal(4, 5),
    ),
    case(
        "sparse_cce-logits-axis1",
        lambda y, x: ops.sparse_categorical_crossentropy(y, x, from_logits=True, axis=1),
        labels(4, 2, 3),
        normal(2, 4, 3),
    ),
    case(
        "mean_sparse_cce",
        lambda y, x: mean_sparse_categorical_crossentropy(y, x),
        labels(5, 4),
        normal(4, 5),
    ),
    case("mean", lambda x: ops.mean(x * x), normal(3, 4)),
    # The arithmetic primitives, broadcasting (their VJPs unbroadcast traced gradients).
    case("multiply-broadcast", ops.multiply, normal(3, 4), normal(4)),
    case("divide-broadcast", ops.divide, normal(3, 1), positive(1, 4)),
    case("subtract-broadcast", lambda a, b: ops.subtract(a, b) * a, normal(3, 4), normal(3, 1)),
    case("add-broadcast", lambda a, b: ops.add(a, b) * b, normal(2, 3), normal(3)),
    case("mean-axis", lambda x: ops.mean(ops.exp(x), axis=(0, 2), keepdims=True), normal(2, 3, 4)),
    case(
        "mlp",
        lambda y, x, k1, k2: ops.mean(
            ops.sparse_categorical_crossentropy(
                y, ops.dense(ops.dense(x, k1, activation="relu"), k2), from_logits=True
            )
        ),
        labels(3, 4),
        normal(4, 5),
        normal(5, 6),
        normal(6, 3),
    ),
]


def first_order(fn, arrays, weights, head, tensors=None):
    """Gradients of `sum(head(fn(*inputs)) * weights)` with respect to the float inputs."""
    tensors = tensors or [Tensor(array) for array in arrays]
    sources = [tensor for tensor in tensors if is_float(tensor.numpy())]
    with GradientTape() as tape:
        tape.watch(sources)
        out = fn(*tensors)
        loss = ops.sum((out * out if head == "square" else out) * weights)
    return tape.gradient(loss, sources, unconnected_gradients="zero")


@pytest.mark.parametrize("head", ["linear", "square"])
@pytest.mark.parametrize("fn, samplers", SECOND_ORDER)
def test_second_order_gradients_match_central_differences(fn, samplers, head):
    arrays, rng = make_inputs(samplers)
    out_shape = fn(*[Tensor(array) for array in arrays]).shape
    weights = rng.standard_normal(out_shape)
    float_indices = [i for i, array in enumerate(arrays) if is_float(array)]
    directions = [rng.standard_normal(arrays[i].shape) for i in float_indices]

    def projected(*inputs):
        """The first-order gradients, projected on fixed directions: a scalar."""
        grads = first_order(fn, [np.asarray(x) for x in inputs], weights, head)
        return sum(float(np.sum(g.numpy() * d)) for g, d in zip(grads, directions))

    tensors = [Tensor(array) for array in arrays]
    sources = [tensors[i] for i in float_indices]
    with GradientTape() as outer:
        outer.watch(sources)
        grads = first_order(fn, arrays, weights, head, tensors)
        total = ops.sum(ops.stack([ops.sum(g * d) for g, d in zip(grads, directions)]))
    second = outer.gradient(total, sources, unconnected_gradients="zero")
    for index, grad in zip(float_indices, second):
        expected = numeric_gradient(lambda *xs: projected(*xs), arrays, index, 1.0)
        scale = np.max(np.abs(expected), initial=1.0)
        np.testing.assert_allclose(
            grad.numpy(), expected, rtol=1e-4, atol=1e-5 * scale, err_msg=f"input {index}"
        )


def test_sparse_crossentropy_gradient_without_the_kept_softmax():
    """autograd's own primitive call keeps no softmax: the VJP recomputes it."""
    import autograd
    import autograd.numpy as anp

    from minikeras.ops.cross_entropy import _sparse_xent_logits

    rng = np.random.default_rng(0)
    logits = rng.standard_normal((4, 5)).astype(np.float32)
    targets = rng.integers(0, 5, 4)
    weights = rng.standard_normal(4).astype(np.float32)
    recomputed = autograd.grad(lambda x: anp.sum(_sparse_xent_logits(x, targets) * weights))(logits)
    x = Tensor(logits)
    with GradientTape() as tape:
        tape.watch(x)
        loss = ops.sum(ops.sparse_categorical_crossentropy(targets, x, from_logits=True) * weights)
    kept = tape.gradient(loss, x)
    assert recomputed.dtype == kept.dtype == np.float32
    np.testing.assert_allclose(recomputed, kept.numpy(), rtol=1e-6, atol=1e-7)


def test_mean_sparse_crossentropy_gradient_without_the_kept_softmax():
    """autograd's own call of the fused mean keeps no softmax: the VJP recomputes it."""
    import autograd

    from minikeras.ops.cross_entropy import _mean_sparse_xent_logits

    rng = np.random.default_rng(1)
    logits = rng.standard_normal((6, 4)).astype(np.float32)
    targets = rng.integers(0, 4, 6)
    recomputed = autograd.grad(lambda x: _mean_sparse_xent_logits(x, targets) * 3.0)(logits)
    x = Tensor(logits)
    with GradientTape() as tape:
        tape.watch(x)
        loss = mean_sparse_categorical_crossentropy(targets, x) * 3.0
    kept = tape.gradient(loss, x)
    assert recomputed.dtype == kept.dtype == np.float32
    np.testing.assert_allclose(recomputed, kept.numpy(), rtol=1e-6, atol=1e-7)
    # By hand: (softmax - one_hot) * 3 / batch.
    softmax = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    expected = (softmax - np.eye(4, dtype=np.float32)[targets]) * 3.0 / 6
    np.testing.assert_allclose(kept.numpy(), expected, rtol=1e-5, atol=1e-7)


def test_mean_sparse_crossentropy_persistent_tape_gives_the_same_gradient_twice():
    x = Variable(np.random.default_rng(2).standard_normal((5, 3)))
    targets = np.array([0, 2, 1, 1, 0])
    with GradientTape(persistent=True) as tape:
        loss = mean_sparse_categorical_crossentropy(targets, x)
    first = np.array(tape.gradient(loss, x).numpy())  # a copy: numpy() hands out the buffer
    second = tape.gradient(loss, x).numpy()
    np.testing.assert_array_equal(first, second)


# ------------------------------------------- ops.dense's one-tape fast path


def _dense_reference_grads(x, kernel, bias, relu, weights):
    """d/d(kernel, bias) of sum(dense(x) * weights), by hand in float64."""
    out = x.astype(np.float64) @ kernel + bias
    g = weights * (out > 0) if relu else weights
    return x.T.astype(np.float64) @ g, g.sum(axis=0)


@pytest.mark.parametrize("relu", [False, True])
@pytest.mark.parametrize("x_dtype", ["float32", "float64"])
def test_dense_of_data_with_variables_matches_hand_computed_gradients(relu, x_dtype):
    """x is data (not watched), kernel and bias are Variables: the path every Dense layer takes."""
    rng = np.random.default_rng(4)
    x = rng.standard_normal((5, 3)).astype(x_dtype)
    kernel, bias = Variable(rng.standard_normal((3, 4))), Variable(rng.standard_normal(4))
    weights = rng.standard_normal((5, 4))
    with GradientTape() as tape:
        out = ops.dense(x, kernel, bias, "relu" if relu else None)
        loss = ops.sum(out * weights)
    expected_out = x.astype(np.float64) @ kernel.numpy() + bias.numpy()
    if relu:
        expected_out = np.maximum(expected_out, 0)
    np.testing.assert_allclose(out.numpy(), expected_out, rtol=1e-5, atol=1e-6)
    grad_kernel, grad_bias = tape.gradient(loss, [kernel, bias])
    assert grad_kernel.dtype == grad_bias.dtype == np.float32
    expected_kernel, expected_bias = _dense_reference_grads(
        x, kernel.numpy(), bias.numpy(), relu, weights
    )
    np.testing.assert_allclose(grad_kernel.numpy(), expected_kernel, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(grad_bias.numpy(), expected_bias, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("relu", [False, True])
def test_dense_of_a_strided_sequence_matches_hand_computed_values_and_gradients(relu):
    """A recurrent layer's output seen batch-major (a strided view), watched: rows once."""
    rng = np.random.default_rng(5)
    time_major = rng.standard_normal((4, 3, 5)).astype(np.float32)
    x = Tensor(np.swapaxes(time_major, 0, 1))  # (batch 3, time 4, features 5), strided
    kernel, bias = Variable(rng.standard_normal((5, 2))), Variable(rng.standard_normal(2))
    weights = rng.standard_normal((3, 4, 2))
    with GradientTape() as tape:
        tape.watch(x)
        out = ops.dense(x, kernel, bias, "relu" if relu else None)
        loss = ops.sum(out * weights)
    rows = x.numpy().reshape(-1, 5).astype(np.float64)
    expected_out = (rows @ kernel.numpy() + bias.numpy()).reshape(3, 4, 2)
    g = weights * (expected_out > 0) if relu else weights
    if relu:
        expected_out = np.maximum(expected_out, 0)
    np.testing.assert_allclose(out.numpy(), expected_out, rtol=1e-5, atol=1e-6)
    grad_x, grad_kernel, grad_bias = tape.gradient(loss, [x, kernel, bias])
    np.testing.assert_allclose(grad_x.numpy(), g @ kernel.numpy().T, rtol=1e-5, atol=1e-5)
    g_rows = g.reshape(-1, 2)
    np.testing.assert_allclose(grad_kernel.numpy(), rows.T @ g_rows, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(grad_bias.numpy(), g_rows.sum(axis=0), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("relu", [False, True])
def test_dense_of_a_sequence_with_no_features_gives_the_bias_and_its_gradients(relu):
    # Rows as `reshape(-1, 0)`: numpy cannot infer -1 for no features, and the layer
    # that gave `bias` for each step (np.matmul's (2, 3, 0) @ (0, 4)) raised instead.
    x = Tensor(np.zeros((2, 3, 0), np.float32))
    kernel, bias = Variable(np.zeros((0, 4))), Variable([1.0, -2.0, 3.0, -4.0])
    weights = np.arange(24.0, dtype=np.float32).reshape(2, 3, 4)
    with GradientTape() as tape:
        tape.watch(x)
        out = ops.dense(x, kernel, bias, "relu" if relu else None)
        loss = ops.sum(out * weights)
    expected = np.broadcast_to([1.0, 0.0, 3.0, 0.0] if relu else [1.0, -2.0, 3.0, -4.0], (2, 3, 4))
    np.testing.assert_array_equal(out.numpy(), expected)
    grad_x, grad_kernel, grad_bias = tape.gradient(loss, [x, kernel, bias])
    assert grad_x.shape == (2, 3, 0) and grad_kernel.shape == (0, 4)
    column_sums = np.array([60.0, 66.0, 72.0, 78.0])  # weights summed over the 6 steps
    np.testing.assert_array_equal(
        grad_bias.numpy(), column_sums * (expected[0, 0] > 0 if relu else 1)
    )


def test_dense_with_x_from_an_outer_tape_gives_both_tapes_their_gradients():
    rng = np.random.default_rng(5)
    x = Variable(rng.standard_normal((2, 3)))
    kernel, bias = Variable(rng.standard_normal((3, 4))), Variable(rng.standard_normal(4))
    # The outer tape watches x only, so kernel and bias are boxes of the inner tape
    # alone and x a box of the outer one: not the one-tape case dense records itself.
    with GradientTape(watch_accessed_variables=False) as outer:
        outer.watch(x)
        doubled = x * 2.0
        with GradientTape() as inner:
            loss = ops.sum(ops.dense(doubled, kernel, bias, "relu"))
        inner_grads = inner.gradient(loss, [kernel, bias])
    outer_grad = outer.gradient(loss, x)
    xs = 2.0 * x.numpy()
    mask = (xs @ kernel.numpy() + bias.numpy()) > 0
    np.testing.assert_allclose(inner_grads[0].numpy(), xs.T @ mask, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(inner_grads[1].numpy(), mask.sum(axis=0), rtol=1e-6)
    np.testing.assert_allclose(outer_grad.numpy(), 2.0 * mask @ kernel.numpy().T, rtol=1e-5)


def test_dense_with_kernel_and_bias_on_different_tapes_gives_each_its_gradient():
    rng = np.random.default_rng(6)
    x = rng.standard_normal((2, 3)).astype(np.float32)
    kernel, bias = Variable(rng.standard_normal((3, 4))), Variable(rng.standard_normal(4))
    with GradientTape(watch_accessed_variables=False) as outer:
        outer.watch(bias)
        with GradientTape(watch_accessed_variables=False) as inner:
            inner.watch(kernel)
            loss = ops.sum(ops.dense(x, kernel, bias, "relu"))
        grad_kernel = inner.gradient(loss, kernel)
    grad_bias = outer.gradient(loss, bias)
    mask = (x @ kernel.numpy() + bias.numpy()) > 0
    np.testing.assert_allclose(grad_kernel.numpy(), x.T @ mask, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(grad_bias.numpy(), mask.sum(axis=0), rtol=1e-6)


# ------------------------------------------ the float32 guard sees fused ops too


def _inject_float64_vjp(monkeypatch, op):
    """Makes the fused primitive `op`'s VJP return float64 gradients."""
    from minikeras.engine import primitive

    forward, vjp_maker = primitive._fused[op]

    def float64_maker(*args):
        vjp = vjp_maker(*args)
        return lambda g: [np.asarray(grad, dtype=np.float64) for grad in vjp(g)]

    monkeypatch.setitem(primitive._fused, op, (forward, float64_maker))


def _float32(*shape):
    return np.random.default_rng(0).standard_normal(shape).astype(np.float32)


FUSED_CASES = {
    # name: (the primitive, a loss of Variables that runs it inside a tape)
    "dense": (
        "minikeras.ops.fused_dense._dense",
        lambda v: ops.sum(ops.dense(_float32(2, 3), v[0], v[1], activation="relu")),
        [(3, 4), (4,)],
    ),
    "conv": (
        "minikeras.ops.conv._conv",
        lambda v: ops.sum(ops.conv(v[0], v[1])),
        [(1, 5, 2), (3, 2, 2)],
    ),
    "max_pool": (
        "minikeras.ops.pooling._max_pool",
        lambda v: ops.sum(ops.max_pool(v[0], 2)),
        [(1, 4, 2)],
    ),
    "lstm": (
        "minikeras.ops.recurrent._lstm",
        lambda v: ops.sum(ops.lstm(v[0], v[1], v[2], v[3])[0]),
        [(2, 3, 2), (2, 8), (2, 8), (8,)],
    ),
    "mean_sparse_cce": (
        "minikeras.ops.cross_entropy._mean_sparse_xent_logits",
        lambda v: mean_sparse_categorical_crossentropy(np.array([0, 2]), v[0]),
        [(2, 3)],
    ),
}


@pytest.mark.parametrize("name", list(FUSED_CASES))
def test_the_float32_guard_catches_a_float64_vjp_in_a_fused_op(name, monkeypatch):
    import importlib

    path, loss_fn, shapes = FUSED_CASES[name]
    module_name, _, op_name = path.rpartition(".")
    variables = [Variable(_float32(*shape)) for shape in shapes]

    def float64_inside():
        with finite_differences.float64_leaks() as leaks:
            with GradientTape() as tape:
                loss = loss_fn(variables)
            grads = tape.gradient(loss, variables)
        # The tape casts results to the sources' dtype: the leak is invisible there.
        assert all(grad.dtype == np.float32 for grad in grads)
        return leaks

    assert float64_inside() == []
    _inject_float64_vjp(monkeypatch, getattr(importlib.import_module(module_name), op_name))
    assert float64_inside(), f"the guard missed a float64 VJP in {name}"


@pytest.mark.parametrize("exponent", [2, 2.5, 0.5, -1.5, 0, True, np.float32(3.0)])
def test_a_python_exponent_gives_autograds_own_power_values_and_gradient_bit_for_bit(exponent):
    # `ops.power(x, 2.5)` keeps the exponent a Python number (a constant a compiled step can
    # record) and must give what autograd's `power` gave it as a float32 0-d array.
    import autograd
    import autograd.numpy as anp

    rng = np.random.default_rng(5)
    x = positive(5, 7)(rng).astype(np.float32)
    weights = normal(5, 7)(rng).astype(np.float32)
    as_array = np.asarray(exponent, dtype=np.float32)
    variable = Variable(x)
    with GradientTape() as tape:
        powered = ops.power(variable, exponent)
        total = ops.sum(powered * weights)
    np.testing.assert_array_equal(powered.numpy(), np.power(x, as_array))
    assert powered.dtype == np.float32
    want = autograd.grad(lambda a: anp.sum(anp.power(a, as_array) * weights))(x)
    got = tape.gradient(total, variable).numpy()
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, want)
