"""What every op computes, which dtype it gives, how it fails, and where it stays finite.

Forward values are compared with plain numpy; errors must be ValueErrors that
name the op and the shapes, never a numpy traceback.
"""

import math
import re

import numpy as np
import pytest

from minikeras import GradientTape, Tensor, ops

# ---------------------------------------------------------------- references

_erf = np.vectorize(math.erf)


def np_softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def np_log_softmax(x, axis=-1):
    shifted = x - x.max(axis=axis, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=axis, keepdims=True))


def np_sigmoid(x):
    return 1 / (1 + np.exp(-x))


def np_gelu_tanh(x):
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3)))


def np_cce(target, probs):
    probs = np.clip(probs / probs.sum(-1, keepdims=True), 1e-7, 1 - 1e-7)
    return -(target * np.log(probs)).sum(-1)


def np_bce(target, probs):
    probs = np.clip(probs, 1e-7, 1 - 1e-7)
    return -(target * np.log(probs) + (1 - target) * np.log(1 - probs))


def np_one_hot(labels, n):
    return np.eye(n)[labels]


# --------------------------------------------------------------- the inputs

RNG_SEED = 1234


def inputs():
    """Fresh, seeded float64 inputs for one test."""
    rng = np.random.default_rng(RNG_SEED)
    return {
        "a": rng.standard_normal((3, 4)),
        "b": rng.standard_normal((3, 4)),
        "row": rng.standard_normal(4),
        "col": rng.standard_normal((3, 1)),
        "pos": rng.uniform(0.5, 2.0, (3, 4)),
        "cube": rng.standard_normal((2, 3, 4)),
        "m45": rng.standard_normal((4, 5)),
        "b45": rng.standard_normal((2, 4, 5)),
        "probs": rng.uniform(0.05, 0.95, (3, 4)),
        "mask": rng.random((3, 4)) < 0.5,
        "labels": rng.integers(0, 4, 3),
        "v5": rng.standard_normal(5),
    }


def forward(name, ours, reference):
    return pytest.param(ours, reference, id=name)


FORWARD = [
    forward("add", lambda d: ops.add(d["a"], d["row"]), lambda d: d["a"] + d["row"]),
    forward("subtract", lambda d: ops.subtract(d["col"], d["row"]), lambda d: d["col"] - d["row"]),
    forward("multiply", lambda d: ops.multiply(d["a"], 3), lambda d: d["a"] * 3),
    forward("divide", lambda d: ops.divide(d["a"], d["pos"]), lambda d: d["a"] / d["pos"]),
    forward("power", lambda d: ops.power(d["pos"], d["b"]), lambda d: d["pos"] ** d["b"]),
    forward("floor_divide", lambda d: ops.floor_divide(d["a"], 0.3), lambda d: d["a"] // 0.3),
    forward("mod", lambda d: ops.mod(d["a"], 0.3), lambda d: np.mod(d["a"], 0.3)),
    forward("maximum", lambda d: ops.maximum(d["a"], d["b"]), lambda d: np.maximum(d["a"], d["b"])),
    forward("minimum", lambda d: ops.minimum(d["a"], 0), lambda d: np.minimum(d["a"], 0)),
    forward("negative", lambda d: ops.negative(d["a"]), lambda d: -d["a"]),
    forward("abs", lambda d: ops.abs(d["a"]), lambda d: np.abs(d["a"])),
    forward("sign", lambda d: ops.sign(d["a"]), lambda d: np.sign(d["a"])),
    forward("exp", lambda d: ops.exp(d["a"]), lambda d: np.exp(d["a"])),
    forward("log", lambda d: ops.log(d["pos"]), lambda d: np.log(d["pos"])),
    forward("log1p", lambda d: ops.log1p(d["pos"]), lambda d: np.log1p(d["pos"])),
    forward("sqrt", lambda d: ops.sqrt(d["pos"]), lambda d: np.sqrt(d["pos"])),
    forward("square", lambda d: ops.square(d["a"]), lambda d: d["a"] ** 2),
    forward("tanh", lambda d: ops.tanh(d["a"]), lambda d: np.tanh(d["a"])),
    forward("clip", lambda d: ops.clip(d["a"], -0.5, 0.5), lambda d: np.clip(d["a"], -0.5, 0.5)),
    forward(
        "where",
        lambda d: ops.where(d["mask"], d["a"], d["row"]),
        lambda d: np.where(d["mask"], d["a"], d["row"]),
    ),
    forward("equal", lambda d: ops.equal(d["mask"], True), lambda d: d["mask"]),
    forward("not_equal", lambda d: ops.not_equal(d["a"], d["b"]), lambda d: d["a"] != d["b"]),
    forward("less", lambda d: ops.less(d["a"], d["b"]), lambda d: d["a"] < d["b"]),
    forward("less_equal", lambda d: ops.less_equal(d["a"], 0), lambda d: d["a"] <= 0),
    forward("greater", lambda d: ops.greater(d["a"], d["row"]), lambda d: d["a"] > d["row"]),
    forward("greater_equal", lambda d: ops.greater_equal(d["a"], 0), lambda d: d["a"] >= 0),
    forward("relu", lambda d: ops.relu(d["a"]), lambda d: np.maximum(d["a"], 0)),
    forward("sigmoid", lambda d: ops.sigmoid(d["a"]), lambda d: np_sigmoid(d["a"])),
    forward("softplus", lambda d: ops.softplus(d["a"]), lambda d: np.log1p(np.exp(d["a"]))),
    forward(
        "leaky_relu",
        lambda d: ops.leaky_relu(d["a"], 0.1),
        lambda d: np.where(d["a"] > 0, d["a"], 0.1 * d["a"]),
    ),
    forward(
        "elu", lambda d: ops.elu(d["a"]), lambda d: np.where(d["a"] > 0, d["a"], np.expm1(d["a"]))
    ),
    forward("silu", lambda d: ops.silu(d["a"]), lambda d: d["a"] * np_sigmoid(d["a"])),
    forward("gelu-tanh", lambda d: ops.gelu(d["a"]), lambda d: np_gelu_tanh(d["a"])),
    forward(
        "gelu-erf",
        lambda d: ops.gelu(d["a"], approximate=False),
        lambda d: 0.5 * d["a"] * (1 + _erf(d["a"] / np.sqrt(2))),
    ),
    forward("erf", lambda d: ops.erf(3 * d["a"]), lambda d: _erf(3 * d["a"])),
    forward("erf-tiny", lambda d: ops.erf(1e-6 * d["a"]), lambda d: _erf(1e-6 * d["a"])),
    forward("softmax", lambda d: ops.softmax(d["a"]), lambda d: np_softmax(d["a"])),
    forward(
        "softmax-axis0", lambda d: ops.softmax(d["a"], axis=0), lambda d: np_softmax(d["a"], 0)
    ),
    forward(
        "log_softmax", lambda d: ops.log_softmax(d["cube"]), lambda d: np_log_softmax(d["cube"])
    ),
    forward("sum", lambda d: ops.sum(d["cube"], axis=(0, 2)), lambda d: d["cube"].sum(axis=(0, 2))),
    forward("mean", lambda d: ops.mean(d["cube"], axis=1), lambda d: d["cube"].mean(axis=1)),
    forward("max", lambda d: ops.max(d["cube"], axis=-1), lambda d: d["cube"].max(axis=-1)),
    forward(
        "min", lambda d: ops.min(d["cube"], keepdims=True), lambda d: d["cube"].min(keepdims=True)
    ),
    forward("var", lambda d: ops.var(d["cube"], axis=0), lambda d: d["cube"].var(axis=0)),
    forward("std", lambda d: ops.std(d["cube"]), lambda d: d["cube"].std()),
    forward(
        "logsumexp",
        lambda d: ops.logsumexp(d["cube"], axis=(1, 2)),
        lambda d: np.log(np.exp(d["cube"]).sum(axis=(1, 2))),
    ),
    forward(
        "argmax",
        lambda d: ops.argmax(d["cube"], axis=1),
        lambda d: d["cube"].argmax(axis=1).astype("int32"),
    ),
    forward(
        "argmin", lambda d: ops.argmin(d["cube"]), lambda d: d["cube"].argmin().astype("int32")
    ),
    forward("matmul", lambda d: ops.matmul(d["a"], d["m45"]), lambda d: d["a"] @ d["m45"]),
    forward(
        "matmul-broadcast", lambda d: ops.matmul(d["a"], d["b45"]), lambda d: d["a"] @ d["b45"]
    ),
    forward("matmul-operator", lambda d: Tensor(d["a"]) @ d["row"], lambda d: d["a"] @ d["row"]),
    forward("dot", lambda d: ops.dot(d["row"], d["row"]), lambda d: d["row"] @ d["row"]),
    forward(
        "tensordot",
        lambda d: ops.tensordot(d["cube"], d["a"], axes=([1, 2], [0, 1])),
        lambda d: np.tensordot(d["cube"], d["a"], axes=([1, 2], [0, 1])),
    ),
    forward(
        "einsum",
        lambda d: ops.einsum("bij,jk->bik", d["cube"], d["m45"]),
        lambda d: np.einsum("bij,jk->bik", d["cube"], d["m45"]),
    ),
    forward("einsum-trace", lambda d: ops.einsum("ii", d["a"][:, :3]), lambda d: np.trace(d["a"])),
    forward(
        "reshape", lambda d: ops.reshape(d["cube"], (4, -1)), lambda d: d["cube"].reshape(4, -1)
    ),
    forward(
        "transpose",
        lambda d: ops.transpose(d["cube"], (2, 0, 1)),
        lambda d: d["cube"].transpose(2, 0, 1),
    ),
    forward(
        "expand_dims", lambda d: ops.expand_dims(d["a"], 1), lambda d: np.expand_dims(d["a"], 1)
    ),
    forward("squeeze", lambda d: ops.squeeze(d["col"]), lambda d: d["col"][:, 0]),
    forward(
        "concatenate",
        lambda d: ops.concatenate([d["a"], d["col"]], axis=1),
        lambda d: np.concatenate([d["a"], d["col"]], axis=1),
    ),
    forward(
        "stack", lambda d: ops.stack([d["a"], d["b"]], 1), lambda d: np.stack([d["a"], d["b"]], 1)
    ),
    forward("take", lambda d: ops.take(d["a"], [3, 0], axis=1), lambda d: d["a"][:, [3, 0]]),
    forward("take-flat", lambda d: ops.take(d["a"], [[5, 1]]), lambda d: d["a"].ravel()[[[5, 1]]]),
    forward(
        "getitem",
        lambda d: Tensor(d["cube"])[1, ::-1, None, 2],
        lambda d: d["cube"][1, ::-1, None, 2],
    ),
    forward("getitem-mask", lambda d: Tensor(d["a"])[d["mask"]], lambda d: d["a"][d["mask"]]),
    forward(
        "pad",
        lambda d: ops.pad(d["a"], ((1, 0), (2, 3))),
        lambda d: np.pad(d["a"], ((1, 0), (2, 3))),
    ),
    forward(
        "one_hot-axis0",
        lambda d: ops.one_hot(d["labels"], 4, axis=0),
        lambda d: np_one_hot(d["labels"], 4).T.astype(np.float32),
    ),
    forward(
        "sparse_cce-logits",
        lambda d: ops.sparse_categorical_crossentropy(d["labels"], d["a"], from_logits=True),
        lambda d: -np_log_softmax(d["a"])[np.arange(3), d["labels"]],
    ),
    forward(
        "sparse_cce-probs",
        lambda d: ops.sparse_categorical_crossentropy(d["labels"], d["probs"]),
        lambda d: np_cce(np_one_hot(d["labels"], 4), d["probs"]),
    ),
    forward(
        "cce-logits",
        lambda d: ops.categorical_crossentropy(np_softmax(d["b"]), d["a"], from_logits=True),
        lambda d: -(np_softmax(d["b"]) * np_log_softmax(d["a"])).sum(-1),
    ),
    forward(
        "cce-probs",
        lambda d: ops.categorical_crossentropy(np_softmax(d["b"]), d["probs"]),
        lambda d: np_cce(np_softmax(d["b"]), d["probs"]),
    ),
    forward(
        "cce-axis0",
        lambda d: ops.categorical_crossentropy(np_softmax(d["b"], 0), d["probs"], axis=0),
        lambda d: np_cce(np_softmax(d["b"], 0).T, d["probs"].T),
    ),
    forward(
        "bce-logits",
        lambda d: ops.binary_crossentropy(d["mask"] * 1.0, d["a"], from_logits=True),
        lambda d: np_bce(d["mask"], np_sigmoid(d["a"])),
    ),
    forward(
        "bce-probs",
        lambda d: ops.binary_crossentropy(d["mask"] * 1.0, d["probs"]),
        lambda d: np_bce(d["mask"], d["probs"]),
    ),
    forward(
        "dense",
        lambda d: ops.dense(d["a"], d["m45"], d["v5"]),
        lambda d: d["a"] @ d["m45"] + d["v5"],
    ),
    forward(
        "dense-relu-3d",
        lambda d: ops.dense(d["cube"], d["m45"], activation="relu"),
        lambda d: np.maximum(d["cube"] @ d["m45"], 0),
    ),
    forward("zeros_like", lambda d: ops.zeros_like(d["a"]), lambda d: np.zeros((3, 4))),
    forward("ones_like", lambda d: ops.ones_like(d["a"]), lambda d: np.ones((3, 4))),
    forward("full_like", lambda d: ops.full_like(d["a"], 2.5), lambda d: np.full((3, 4), 2.5)),
    forward("eye", lambda d: ops.eye(3, 4, k=1, dtype="float64"), lambda d: np.eye(3, 4, k=1)),
    forward(
        "arange", lambda d: ops.arange(1, 10, 3), lambda d: np.arange(1, 10, 3, dtype="int32")
    ),  # (int32, as Keras gives it)
    forward("cast", lambda d: ops.cast(d["a"] * 10, "int32"), lambda d: (d["a"] * 10).astype("i4")),
    forward("stop_gradient", lambda d: ops.stop_gradient(d["a"]), lambda d: d["a"]),
]


@pytest.mark.parametrize("ours, reference", FORWARD)
def test_forward_matches_numpy(ours, reference):
    data = inputs()
    result = ours(data)
    expected = np.asarray(reference(data))
    assert result.shape == expected.shape
    assert result.dtype == expected.dtype
    np.testing.assert_allclose(result.numpy(), expected, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("ours, reference", FORWARD)
def test_float32_forward_close_to_float64_reference(ours, reference):
    data = inputs()
    expected = np.asarray(reference(data))
    data32 = {k: v.astype(np.float32) if v.dtype == np.float64 else v for k, v in data.items()}
    result = ours(data32)
    if expected.dtype.kind == "f" and result.dtype.kind == "f":
        # Creation ops with an explicit float64 dtype keep it; everything else stays float32.
        assert result.dtype == np.float32 or result.dtype == expected.dtype
    np.testing.assert_allclose(result.numpy().astype(np.float64), expected, rtol=2e-5, atol=2e-6)


def test_split_matches_numpy():
    x = inputs()["cube"]
    for ours, expected in zip(ops.split(x, [1, 3], axis=2), np.split(x, [1, 3], axis=2)):
        np.testing.assert_array_equal(ours.numpy(), expected)
    assert [part.shape for part in ops.split(x, 3, axis=1)] == [(2, 1, 4)] * 3


def test_one_hot_matches_numpy():
    labels = np.array([[0, 2], [1, 1]])
    result = ops.one_hot(labels, 3)
    assert result.dtype == np.float32
    np.testing.assert_array_equal(result.numpy(), np.eye(3)[labels])


def test_sparse_crossentropy_matches_categorical_on_one_hot():
    data = inputs()
    one_hot = np_one_hot(data["labels"], 4)
    for output, from_logits in ((data["a"], True), (data["probs"], False)):
        sparse = ops.sparse_categorical_crossentropy(data["labels"], output, from_logits)
        dense = ops.categorical_crossentropy(one_hot, output, from_logits)
        np.testing.assert_allclose(sparse.numpy(), dense.numpy(), rtol=1e-12)


def test_sparse_crossentropy_accepts_labels_with_a_trailing_axis_of_one():
    data = inputs()
    flat = ops.sparse_categorical_crossentropy(data["labels"], data["a"], from_logits=True)
    column = ops.sparse_categorical_crossentropy(data["labels"][:, None], data["a"], True)
    np.testing.assert_array_equal(flat.numpy(), column.numpy())


def test_mean_of_nothing_is_nan():
    assert np.isnan(ops.mean(np.zeros((0, 3), np.float32)).numpy())
    result = ops.mean(np.zeros((0, 3), np.float32), axis=0)
    assert result.dtype == np.float32 and np.all(np.isnan(result.numpy()))
    assert ops.mean(np.zeros((2, 0)), axis=0).shape == (0,)


def test_tied_maxima_share_the_gradient():
    x = Tensor(np.array([[1.0, 3.0, 3.0], [2.0, 0.0, 2.0]]))
    y = Tensor(np.array([[1.0, 0.0, 3.0], [5.0, 5.0, 5.0]]))
    with GradientTape(persistent=True) as tape:
        tape.watch([x, y])
        row_max = ops.sum(ops.max(x, axis=1))
        pairwise = ops.sum(ops.maximum(x, y))
    np.testing.assert_array_equal(tape.gradient(row_max, x).numpy(), [[0, 0.5, 0.5], [0.5, 0, 0.5]])
    grad_x, grad_y = tape.gradient(pairwise, [x, y])
    np.testing.assert_array_equal(grad_x.numpy(), [[0.5, 1, 0.5], [0, 0, 0]])
    np.testing.assert_array_equal(grad_y.numpy(), [[0.5, 0, 0.5], [1, 1, 1]])


def test_clip_and_where_send_no_gradient_to_what_they_drop():
    x = Tensor(np.array([-2.0, 0.5, 2.0]))
    other = Tensor(np.array([7.0, 7.0, 7.0]))
    with GradientTape(persistent=True) as tape:
        tape.watch([x, other])
        clipped = ops.sum(ops.clip(x, -1.0, 1.0))
        picked = ops.sum(ops.where([True, False, True], x, other))
    np.testing.assert_array_equal(tape.gradient(clipped, x).numpy(), [0, 1, 0])
    grad_x, grad_other = tape.gradient(picked, [x, other])
    np.testing.assert_array_equal(grad_x.numpy(), [1, 0, 1])
    np.testing.assert_array_equal(grad_other.numpy(), [0, 1, 0])


# ------------------------------------------------------------------- dtypes

F32 = np.array([[0.5, 1.5, 2.0], [3.0, 1.0, 0.25]], dtype=np.float32)

MIXED_OPERANDS = [
    pytest.param(2, id="python-int"),
    pytest.param(2.5, id="python-float"),
    pytest.param(np.float64(2.5), id="numpy-float64-scalar"),
    pytest.param(np.float32(2.5), id="numpy-float32-scalar"),
    pytest.param(np.int64(2), id="numpy-int64-scalar"),
    pytest.param(np.array([1, 2, 3]), id="int64-array"),
    pytest.param(np.array([1, 2, 3], dtype=np.int32), id="int32-array"),
    pytest.param(np.array([True, True, True]), id="bool-array"),
    pytest.param([1, 2, 3], id="int-list"),
    pytest.param(Tensor(np.array([1, 2, 3])), id="int-tensor"),
]

BINARY_OPS = [
    ops.add, ops.subtract, ops.multiply, ops.divide, ops.power, ops.maximum, ops.minimum, ops.mod,
    ops.floor_divide,
]  # fmt: skip


@pytest.mark.parametrize("other", MIXED_OPERANDS)
@pytest.mark.parametrize("op", BINARY_OPS, ids=lambda op: op.__name__)
def test_float32_tensor_with_numbers_and_integer_arrays_stays_float32(op, other):
    x = Tensor(F32)
    assert op(x, other).dtype == np.float32
    assert op(other, x).dtype == np.float32


@pytest.mark.parametrize("other", MIXED_OPERANDS)
def test_operators_keep_float32(other):
    x = Tensor(F32)
    for result in (x + other, other - x, x * other, other / x, x**other, x % other):
        assert result.dtype == np.float32


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(lambda x: ops.matmul(x, np.ones((3, 2), int)), id="matmul"),
        pytest.param(lambda x: ops.matmul(np.ones((2, 2), int), x), id="matmul-left"),
        pytest.param(lambda x: ops.dot(x, np.arange(3)), id="dot"),
        pytest.param(lambda x: ops.tensordot(x, np.ones((3, 2), int), axes=1), id="tensordot"),
        pytest.param(
            lambda x: ops.einsum("ij,jk,k->i", x, np.ones((3, 2), int), [1, 2]), id="einsum"
        ),
        pytest.param(lambda x: ops.concatenate([x, np.ones((1, 3), int)]), id="concatenate"),
        pytest.param(lambda x: ops.stack([np.ones((2, 3), int), x]), id="stack"),
        pytest.param(lambda x: ops.where(x > 1, x, np.arange(3)), id="where-int-array"),
        pytest.param(lambda x: ops.where(x > 1, 0.0, x), id="where-python-float"),
        pytest.param(lambda x: ops.where(x > 1, np.float64(1.0), x), id="where-float64-scalar"),
        pytest.param(lambda x: ops.clip(x, np.float64(0.7), 2), id="clip-float64-bounds"),
        pytest.param(lambda x: ops.pad(x, 1, constant_values=np.float64(0.5)), id="pad"),
        pytest.param(lambda x: ops.dense(x, np.ones((3, 2), int), np.ones(2, int)), id="dense"),
        pytest.param(lambda x: ops.binary_crossentropy(np.ones((2, 3), int), x / 4), id="bce"),
        pytest.param(lambda x: ops.categorical_crossentropy(np.ones((2, 3), int), x), id="cce"),
        pytest.param(lambda x: ops.sparse_categorical_crossentropy([0, 2], x), id="sparse_cce"),
        pytest.param(lambda x: ops.leaky_relu(x, np.float64(0.3)), id="leaky_relu"),
        pytest.param(lambda x: ops.elu(x, np.float64(0.3)), id="elu"),
        pytest.param(lambda x: ops.full_like(x, np.float64(2.0)), id="full_like"),
    ],
)
def test_mixed_operands_keep_float32(make):
    assert make(Tensor(F32)).dtype == np.float32


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(lambda: Tensor(np.arange(3)) / 2, id="int-tensor-divided-by-int"),
        pytest.param(lambda: ops.divide(np.arange(3), np.arange(1, 4)), id="int-array-divide"),
        pytest.param(lambda: Tensor(np.arange(3)) + 2.5, id="int-tensor-plus-float"),
        pytest.param(lambda: Tensor(np.arange(3)) * np.float64(2.5), id="int-tensor-times-f64"),
        pytest.param(lambda: ops.clip(np.arange(3), 0.5, 1.5), id="int-clip-float-bounds"),
        pytest.param(lambda: ops.mean(np.arange(3)), id="int-mean"),
        pytest.param(lambda: ops.exp(0.5), id="exp-python-float"),
        pytest.param(lambda: ops.sigmoid(0.5), id="sigmoid-python-float"),
        pytest.param(lambda: ops.erf(0.5), id="erf-python-float"),
        pytest.param(lambda: ops.negative(0.5), id="negative-python-float"),
        pytest.param(lambda: ops.square(0.5), id="square-python-float"),
        pytest.param(lambda: ops.sum(0.5), id="sum-python-float"),
        pytest.param(lambda: ops.add(0.5, 2), id="add-two-python-numbers"),
        pytest.param(lambda: ops.softmax([1, 2, 3]), id="softmax-int-list"),
        pytest.param(lambda: ops.stack([1.0, 2.0]), id="stack-python-floats"),
        pytest.param(lambda: ops.full((2,), 1.0, dtype=float), id="full-dtype-float"),
        pytest.param(lambda: ops.zeros_like(np.arange(2), dtype=float), id="zeros_like-float"),
        pytest.param(lambda: ops.arange(3, dtype=float), id="arange-dtype-float"),
    ],
)
def test_integers_and_python_floats_become_float32(make):
    assert make().dtype == np.float32


def test_integer_ops_stay_integer():
    ints = Tensor(np.arange(4))
    for result in (ints + 1, ints * ints, ints // 2, ops.square(ints), ops.sum(ints), -ints):
        assert result.dtype == np.int64


def test_float64_stays_float64():
    x = Tensor(np.linspace(0.1, 1.0, 6).reshape(2, 3))
    for result in (x + 2.5, x * np.float32(2), 2**x, ops.softmax(x), ops.mean(x), ops.erf(x)):
        assert result.dtype == np.float64


@pytest.mark.parametrize("dtype", ["float64", "float16", "int32"])
@pytest.mark.parametrize(
    "make",
    [
        pytest.param(lambda dtype: ops.zeros((2, 3), dtype=dtype), id="zeros"),
        pytest.param(lambda dtype: ops.ones(2, dtype=dtype), id="ones"),
        pytest.param(lambda dtype: ops.full((2,), 1.0, dtype=dtype), id="full"),
        pytest.param(lambda dtype: ops.eye(2, dtype=dtype), id="eye"),
        pytest.param(lambda dtype: ops.arange(0, 4, dtype=dtype), id="arange"),
        pytest.param(lambda dtype: ops.zeros_like(F32, dtype=dtype), id="zeros_like"),
        pytest.param(lambda dtype: ops.ones_like(F32, dtype=dtype), id="ones_like"),
        pytest.param(lambda dtype: ops.full_like(F32, 3, dtype=dtype), id="full_like"),
        pytest.param(lambda dtype: ops.one_hot([1, 0], 3, dtype=dtype), id="one_hot"),
        pytest.param(lambda dtype: ops.cast(F32, dtype), id="cast"),
        pytest.param(lambda dtype: ops.convert_to_tensor(F32, dtype=dtype), id="convert_to_tensor"),
        pytest.param(lambda dtype: ops.convert_to_tensor([1.0], dtype=dtype), id="convert-list"),
        pytest.param(lambda dtype: Tensor([1.0, 2.0], dtype=dtype), id="Tensor"),
    ],
)
def test_explicit_dtype_is_honoured(make, dtype):
    assert make(dtype).dtype == np.dtype(dtype)


def test_cast_to_float64_passes_gradients_back_in_float32():
    x = Tensor(F32)
    with GradientTape() as tape:
        tape.watch(x)
        loss = ops.sum(ops.cast(x, "float64") ** 2)
    assert loss.dtype == np.float64
    grad = tape.gradient(loss, x)
    assert grad.dtype == np.float32
    np.testing.assert_allclose(grad.numpy(), 2 * F32)


# ------------------------------------------------------------------- errors


def raises_clean(pattern, fn, error=ValueError):
    """Asserts `fn()` raises `error` matching `pattern`, with no numpy traceback chained."""
    with pytest.raises(error, match=pattern) as excinfo:
        fn()
    assert excinfo.value.__cause__ is None
    assert excinfo.value.__context__ is None or excinfo.value.__suppress_context__
    return excinfo.value


def ones(*shape):
    return ops.ones(shape)


def shapes(*all_shapes):
    """A regex fragment matching the shapes in order, as `str(tuple)` spells them."""
    return ".*".join(re.escape(str(shape)) for shape in all_shapes)


ERRORS = [
    ("matmul", lambda: ops.matmul(ones(32, 784), ones(100, 10)), shapes((32, 784), (100, 10))),
    ("matmul", lambda: ones(32, 784) @ ones(100, 10), "inner dimensions differ"),
    ("matmul", lambda: ops.matmul(ones(2, 3, 4), ones(3, 4, 5)), shapes((2, 3, 4), (3, 4, 5))),
    ("matmul", lambda: ops.matmul(ones(), ones(3)), shapes((), (3,))),
    ("add", lambda: ops.add(ones(3), ones(4)), shapes((3,), (4,))),
    ("add", lambda: ones(3) + ones(4), "cannot be broadcast"),
    ("subtract", lambda: ops.subtract(ones(2, 3), ones(3, 2)), shapes((2, 3), (3, 2))),
    ("multiply", lambda: ones(2, 3) * ones(2), shapes((2, 3), (2,))),
    ("divide", lambda: ops.divide(ones(3), ones(4)), shapes((3,), (4,))),
    ("power", lambda: ops.power(ones(3), ones(4)), shapes((3,), (4,))),
    ("power", lambda: ops.power(np.arange(3), -1), "negative integer powers"),
    ("maximum", lambda: ops.maximum(ones(3), ones(4)), shapes((3,), (4,))),
    ("minimum", lambda: ops.minimum(ones(3), ones(4)), shapes((3,), (4,))),
    ("where", lambda: ops.where(np.ones(3, bool), ones(4), 0.0), shapes((3,), (4,))),
    ("clip", lambda: ops.clip(ones(3), 1, 0), "x_min"),
    ("dot", lambda: ops.dot(ones(3, 4), ones(3, 4)), shapes((3, 4), (3, 4))),
    ("tensordot", lambda: ops.tensordot(ones(3, 4), ones(3, 4), axes=1), shapes((3, 4), (3, 4))),
    ("einsum", lambda: ops.einsum("ij,jk->ik", ones(3, 4), ones(3, 4)), shapes((3, 4), (3, 4))),
    ("einsum", lambda: ops.einsum("ij,jk->ik", ones(3, 4)), shapes((3, 4))),
    ("reshape", lambda: ops.reshape(ones(2, 3), (4, 2)), shapes((4, 2), (2, 3))),
    ("reshape", lambda: ops.reshape(ones(2, 3), 7), shapes((7,), (2, 3))),
    ("reshape", lambda: ones(2, 3).reshape(5, -1), shapes((5, -1), (2, 3))),
    ("transpose", lambda: ops.transpose(ones(3, 4), (0, 2)), shapes((3, 4))),
    ("expand_dims", lambda: ops.expand_dims(ones(3, 4), 4), shapes((3, 4))),
    ("squeeze", lambda: ops.squeeze(ones(3, 4), 0), shapes((3, 4))),
    ("concatenate", lambda: ops.concatenate([ones(2, 3), ones(2, 4)]), shapes((2, 3), (2, 4))),
    ("concatenate", lambda: ops.concatenate([ones(2, 3), ones(2, 3)], axis=2), "axis 2"),
    ("concatenate", lambda: ops.concatenate([]), "non-empty"),
    ("stack", lambda: ops.stack([ones(2, 3), ones(3, 2)]), shapes((2, 3), (3, 2))),
    ("split", lambda: ops.split(ones(3, 4), 3, axis=1), shapes((3, 4))),
    ("take", lambda: ops.take(ones(3, 4), [1], axis=2), shapes((3, 4))),
    ("pad", lambda: ops.pad(ones(3, 4), ((1, 1),) * 3), shapes((3, 4))),
    ("pad", lambda: ops.pad(ones(3, 4), -1), "negative"),
    ("pad", lambda: ops.pad(ones(3, 4), 1, mode="reflect"), "constant"),
    ("sum", lambda: ops.sum(ones(2, 3), axis=2), shapes((2, 3))),
    ("sum", lambda: ops.sum(ones(2, 3), axis=(0, -2)), "twice"),
    ("mean", lambda: ops.mean(ones(2, 3), axis=-3), shapes((2, 3))),
    ("max", lambda: ops.max(ones(2, 3), axis=(0, 5)), shapes((2, 3))),
    ("max", lambda: ops.max(ones(0, 3)), shapes((0, 3))),
    ("min", lambda: ops.min(ones(2, 3), axis=2), shapes((2, 3))),
    ("var", lambda: ops.var(ones(2, 3), axis=2), shapes((2, 3))),
    ("std", lambda: ops.std(ones(2, 3), axis=2), shapes((2, 3))),
    ("logsumexp", lambda: ops.logsumexp(ones(2, 3), axis=2), shapes((2, 3))),
    ("argmax", lambda: ops.argmax(ones(2, 3), axis=2), shapes((2, 3))),
    ("softmax", lambda: ops.softmax(ones(3, 4), axis=2), shapes((3, 4))),
    ("log_softmax", lambda: ops.log_softmax(ones(3, 4), axis=-3), shapes((3, 4))),
    ("one_hot", lambda: ops.one_hot([0, 3], 3), r"\[0, 3\).*" + shapes((2,))),
    ("one_hot", lambda: ops.one_hot([[-1, 0]], 3), shapes((1, 2))),
    ("one_hot", lambda: ops.one_hot([0.5], 3), "integers"),
    ("one_hot", lambda: ops.one_hot([1, 0], 3, axis=3), shapes((2,))),
    (
        "sparse_categorical_crossentropy",
        lambda: ops.sparse_categorical_crossentropy([0, 1, 2], ones(4, 5)),
        shapes((3,), (4, 5)),
    ),
    (
        "sparse_categorical_crossentropy",
        lambda: ops.sparse_categorical_crossentropy([0, 1, 5, 2], ones(4, 5), from_logits=True),
        r"\[0, 5\).*" + shapes((4,), (4, 5)),
    ),
    (
        "sparse_categorical_crossentropy",
        lambda: ops.sparse_categorical_crossentropy([0, -1, 1, 2], ones(4, 5)),
        r"\[0, 5\).*" + shapes((4,), (4, 5)),
    ),
    (
        "sparse_categorical_crossentropy",
        lambda: ops.sparse_categorical_crossentropy([0.5, 1, 1, 2], ones(4, 5)),
        "integer",
    ),
    (
        "sparse_categorical_crossentropy",
        lambda: ops.sparse_categorical_crossentropy([0, 1, 1, 2], ones(4, 5), axis=2),
        shapes((4,), (4, 5)),
    ),
    (
        "categorical_crossentropy",
        lambda: ops.categorical_crossentropy(ones(4, 4), ones(4, 5)),
        shapes((4, 4), (4, 5)),
    ),
    (
        "categorical_crossentropy",
        lambda: ops.categorical_crossentropy(ones(4, 5), ones(4, 5), from_logits=True, axis=2),
        shapes((4, 5)),
    ),
    (
        "binary_crossentropy",
        lambda: ops.binary_crossentropy(ones(4, 1), ones(4, 5), from_logits=True),
        shapes((4, 1), (4, 5)),
    ),
    ("dense", lambda: ops.dense(ones(3, 4), ones(5, 6)), shapes((3, 4), (5, 6))),
    ("dense", lambda: ops.dense(ones(3, 4), ones(4, 6), ones(5)), shapes((4, 6), (5,))),
    ("dense", lambda: ops.dense(ones(3, 4), ones(4, 6), activation="tanh"), "'tanh'"),
]


@pytest.mark.parametrize(
    "op, call, detail",
    [pytest.param(*error, id=f"{error[0]}-{i}") for i, error in enumerate(ERRORS)],
)
def test_invalid_input_raises_a_clean_value_error(op, call, detail):
    error = raises_clean(rf"^{op}: ", call)
    assert re.search(detail, str(error)), str(error)


def test_bad_indices_raise_a_clean_index_error_naming_the_shape():
    error = raises_clean(r"^getitem: .*\(3, 4\)", lambda: ones(3, 4)[5], IndexError)
    assert "5" in str(error)
    raises_clean(r"^take: .*\(3, 4\)", lambda: ops.take(ones(3, 4), [3], axis=0), IndexError)


def test_a_bad_dtype_is_a_type_error():
    raises_clean("'foo' is not a dtype", lambda: ops.cast(ones(2), "foo"), TypeError)


# ---------------------------------------------------------------- stability

HUGE_LOGITS = [[1000.0, -1000.0, 0.0], [-1000.0, 1000.0, 500.0]]

STABLE = [
    pytest.param(
        lambda x: ops.sparse_categorical_crossentropy([1, 0], x, from_logits=True), id="sparse_cce"
    ),
    pytest.param(
        lambda x: ops.sparse_categorical_crossentropy([1, 0], ops.softmax(x)), id="sparse_cce-probs"
    ),
    pytest.param(
        lambda x: ops.categorical_crossentropy(np.eye(3)[[1, 0]], x, from_logits=True), id="cce"
    ),
    pytest.param(
        lambda x: ops.categorical_crossentropy(np.eye(3)[[1, 0]], ops.softmax(x)), id="cce-probs"
    ),
    pytest.param(
        lambda x: ops.binary_crossentropy(np.eye(3)[[1, 0]], x, from_logits=True), id="bce"
    ),
    pytest.param(
        lambda x: ops.binary_crossentropy(np.eye(3)[[1, 0]], ops.sigmoid(x)), id="bce-probs"
    ),
    pytest.param(ops.softmax, id="softmax"),
    pytest.param(lambda x: ops.softmax(x, axis=0), id="softmax-axis0"),
    pytest.param(ops.log_softmax, id="log_softmax"),
    pytest.param(ops.logsumexp, id="logsumexp"),
    pytest.param(lambda x: ops.logsumexp(x, axis=-1), id="logsumexp-axis"),
    pytest.param(ops.sigmoid, id="sigmoid"),
    pytest.param(ops.tanh, id="tanh"),
    pytest.param(ops.softplus, id="softplus"),
    pytest.param(ops.silu, id="silu"),
    pytest.param(ops.elu, id="elu"),
    pytest.param(ops.gelu, id="gelu"),
    pytest.param(lambda x: ops.gelu(x, approximate=False), id="gelu-erf"),
    pytest.param(ops.erf, id="erf"),
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("fn", STABLE)
def test_large_inputs_give_finite_values_and_gradients(fn, dtype):
    x = Tensor(np.array(HUGE_LOGITS, dtype=dtype))
    with GradientTape() as tape:
        tape.watch(x)
        y = fn(x)
        loss = ops.sum(y)
    grad = tape.gradient(loss, x)
    assert y.dtype == np.dtype(dtype) and grad.dtype == np.dtype(dtype)
    assert np.all(np.isfinite(y.numpy())), y
    assert np.all(np.isfinite(grad.numpy())), grad


def test_crossentropy_of_confident_logits_is_exact():
    right = ops.sparse_categorical_crossentropy([0, 1], [[1000.0, -1000.0], [0.0, 1000.0]], True)
    wrong = ops.categorical_crossentropy([[0.0, 1.0]], [[1000.0, -1000.0]], from_logits=True)
    np.testing.assert_array_equal(right.numpy(), [0.0, 0.0])
    np.testing.assert_array_equal(wrong.numpy(), [2000.0])
    bce = ops.binary_crossentropy([1.0, 0.0, 1.0], [1000.0, 1000.0, -1000.0], from_logits=True)
    np.testing.assert_array_equal(bce.numpy(), [0.0, 1000.0, 1000.0])


def test_extreme_values_of_softmax_family():
    x = np.array([1000.0, 1000.0, -np.inf], dtype=np.float32)
    np.testing.assert_allclose(ops.softmax(x).numpy(), [0.5, 0.5, 0.0])
    np.testing.assert_allclose(ops.logsumexp(x).numpy(), 1000 + np.log(2))
    assert ops.logsumexp([-np.inf, -np.inf]).numpy() == -np.inf
    np.testing.assert_array_equal(ops.sigmoid([-1000.0, 1000.0]).numpy(), [0.0, 1.0])
    np.testing.assert_array_equal(ops.softplus([-1000.0, 1000.0]).numpy(), [0.0, 1000.0])


def test_dense_on_a_time_major_view_multiplies_without_a_copy_and_agrees():
    # An RNN's output is a (batch, time, n) view of time-major memory: dense multiplies
    # its rows in that order (no copy) and returns the same kind of view.
    rng = np.random.default_rng(0)
    x_tm = rng.standard_normal((5, 3, 4)).astype(np.float32)
    kernel = rng.standard_normal((4, 6)).astype(np.float32)
    bias = rng.standard_normal(6).astype(np.float32)
    view = x_tm.transpose(1, 0, 2)
    out = ops.dense(view, kernel, bias, "relu").numpy()
    expected = ops.dense(np.ascontiguousarray(view), kernel, bias, "relu").numpy()
    np.testing.assert_array_equal(out, expected)  # each row's products are the same
    assert out.transpose(1, 0, 2).flags.c_contiguous  # (a view of time-major memory)
    weights = [Tensor(kernel), Tensor(bias)]
    grads = {}
    for name, x in (("view", view), ("copy", np.ascontiguousarray(view))):
        inputs = Tensor(x)
        with GradientTape() as tape:
            tape.watch([inputs, *weights])
            total = ops.sum(ops.dense(inputs, *weights, "relu") * np.arange(6.0, dtype="f4"))
        grads[name] = tape.gradient(total, [inputs, *weights])
    for got, want in zip(grads["view"], grads["copy"]):  # (sums over rows: another order)
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-6)
