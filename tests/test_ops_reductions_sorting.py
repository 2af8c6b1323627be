"""Keras 3 reductions, sorting and statistics: prod, cumprod, amax, amin, ptp, average,
count_nonzero, sort, argsort, top_k, in_top_k, argpartition, median, quantile, percentile,
trace, diagonal; values and dtypes by hand, gradients (with zeros in the input), and
against Keras."""

import numpy as np
import pytest
from finite_differences import check_float32, check_gradients, check_second_order
from op_graphs import assert_saves_and_crosses_to_keras

import minikeras as mk
from minikeras import ops

RNG = np.random.default_rng(3)
X = RNG.normal(size=(3, 4)).astype("float32")
CUBE = RNG.normal(size=(2, 3, 4)).astype("float32")
# Rows with one zero, two zeros and none: the cases a gradient of `ans / x` gets wrong.
ZEROS = np.array([[1.5, 0.0, 2.0, -1.0], [0.5, 0.7, 0.0, 0.0], [1.1, 0.9, -1.3, 2.0]], "float32")
INTS = np.array([[3, 0, 2], [1, 5, 4]], "int8")

DIFFERENTIABLE = {
    "prod_axis": (lambda x: ops.prod(x, axis=1), ZEROS),
    "prod_all": (lambda x: ops.prod(x), ZEROS),
    "prod_tuple": (lambda x: ops.prod(x, axis=(0,), keepdims=True), ZEROS),
    "prod_no_zero": (lambda x: ops.prod(x, axis=0), X),
    "cumprod_axis": (lambda x: ops.cumprod(x, axis=1), ZEROS),
    "cumprod_flat": (lambda x: ops.cumprod(x), ZEROS),
    "cumprod_no_zero": (lambda x: ops.cumprod(x, axis=0), X),
    "amax": (lambda x: ops.amax(x, axis=0), X),
    "amin": (lambda x: ops.amin(x, axis=1, keepdims=True), X),
    "ptp": (lambda x: ops.ptp(x, axis=1), X),
    "average": (lambda x: ops.average(x, axis=1, weights=ops.cast([1, 2, 3, 4], x.dtype)), X),
    "sort": (lambda x: ops.sort(x, axis=0), X),
    "sort_flat": (lambda x: ops.sort(x, axis=None), X),
    "top_k": (lambda x: ops.top_k(x, 2)[0], X),
    "top_k_of_many": (lambda x: ops.top_k(x, 2)[0], RNG.normal(size=(2, 12)).astype("float32")),
    "median": (lambda x: ops.median(x, axis=1), X),
    "median_all": (lambda x: ops.median(x), X),
    "quantile": (lambda x: ops.quantile(x, [0.1, 0.5, 1.0], axis=(0, 2), keepdims=True), CUBE),
    "percentile": (lambda x: ops.percentile(x, 40, axis=0, method="midpoint"), X),
    "diagonal": (lambda x: ops.diagonal(x, -1, 2, 0), CUBE),
    "trace": (lambda x: ops.trace(x, 1, 1, 2), CUBE),
}


@pytest.mark.parametrize("name", sorted(DIFFERENTIABLE))
def test_gradients_match_finite_differences(name):
    fn, data = DIFFERENTIABLE[name]
    check_gradients(fn, [data])
    check_second_order(fn, [data])
    check_float32(fn, [data])


def test_average_differentiates_its_weights_too():
    weights = RNG.uniform(0.5, 2.0, size=X.shape).astype("float32")
    for check in (check_gradients, check_second_order, check_float32):
        check(lambda x, w: ops.average(x, axis=0, weights=w), [X, weights])


def test_product_gradient_with_zeros_by_hand():
    x = mk.Variable([2.0, 0.0, 3.0])
    with mk.GradientTape() as tape:
        total = ops.prod(x)
    np.testing.assert_array_equal(tape.gradient(total, x).numpy(), [0.0, 6.0, 0.0])
    with mk.GradientTape() as tape:
        running = ops.sum(ops.cumprod(x))  # 2 + 0 + 0
    # d/dx0 = 1 + x1 + x1 x2 = 1; d/dx1 = x0 + x0 x2 = 8; d/dx2 = x0 x1 = 0
    np.testing.assert_array_equal(tape.gradient(running, x).numpy(), [1.0, 8.0, 0.0])


def test_values_and_dtypes_by_hand():
    assert ops.prod(INTS, axis=1).numpy().tolist() == [0, 20]
    assert ops.prod(INTS).dtype == np.int32 and ops.prod(INTS.astype("uint8")).dtype == np.uint32
    assert ops.prod([True, True]).dtype == np.int32
    assert (
        ops.prod(INTS.astype("int32")).dtype == ops.nanprod(INTS.astype("int32")).dtype == np.int32
    )
    assert ops.prod(INTS, dtype="float32").dtype == np.float32
    assert ops.cumprod(INTS, axis=1).numpy().tolist() == [[3, 0, 0], [1, 5, 20]]
    assert ops.cumprod(INTS).dtype == np.int8 and ops.cumprod([True]).dtype == np.int32
    assert ops.amax(INTS).numpy() == 5 and ops.amin(INTS, axis=0).numpy().tolist() == [1, 0, 2]
    assert ops.ptp(INTS, axis=1).dtype == np.int8 and ops.ptp(INTS).numpy() == 5
    np.testing.assert_allclose(ops.average([1.0, 2.0, 4.0], weights=[3.0, 1.0, 0.0]).numpy(), 1.25)
    assert ops.average(INTS, axis=1, weights=np.array([1, 1, 2])).dtype == np.float32
    halves = X.astype("float16")  # (integer weights take x's float dtype, as in Keras)
    assert ops.average(halves, axis=1, weights=np.arange(4)).dtype == np.float16
    assert ops.count_nonzero(INTS, axis=(0, 1)).numpy() == 5
    assert ops.count_nonzero(INTS, axis=0).dtype == np.int32
    assert ops.sort(INTS, axis=None).numpy().tolist() == [0, 1, 2, 3, 4, 5]
    assert ops.argsort([2.0, 1.0, 2.0, 0.0]).numpy().tolist() == [3, 1, 0, 2]  # stable
    assert ops.argsort(INTS).dtype == np.int32
    values, indices = ops.top_k(np.array([[1, 4, 2, 4]], "int8"), 3)
    assert values.numpy().tolist() == [[4, 4, 2]] and indices.numpy().tolist() == [[1, 3, 2]]
    assert values.dtype == np.int8 and indices.dtype == np.int32
    many = RNG.integers(0, 4, size=(3, 40)).astype("float32")  # (a few of many, with ties)
    expected = np.argsort(-many, axis=-1, kind="stable")[:, :5]
    np.testing.assert_array_equal(ops.top_k(many, 5)[1].numpy(), expected)
    np.testing.assert_array_equal(
        ops.top_k(many, 5)[0].numpy(), np.take_along_axis(many, expected, 1)
    )
    partition = ops.argpartition(X, 1, axis=1).numpy()
    picked = np.take_along_axis(X, partition.astype(int), 1)
    assert partition.dtype == np.int32 and np.all(picked[:, :1] <= picked[:, 1:2])
    assert np.all(picked[:, 1:2] <= picked[:, 2:])
    scores = np.array([[0.1, 0.7, 0.7], [0.5, np.nan, 0.2]], "float32")
    assert ops.in_top_k([2, 1], scores, 1).numpy().tolist() == [True, False]  # ties count in
    assert ops.median(np.arange(4)).numpy() == 1.5 and ops.median(INTS).dtype == np.float32
    grid = np.arange(5.0, dtype="float32")  # quantile 0.4 sits at position 1.6
    expected = {"linear": 1.6, "lower": 1, "higher": 2, "midpoint": 1.5, "nearest": 2}
    for method, value in expected.items():
        np.testing.assert_allclose(ops.quantile(grid, 0.4, method=method).numpy(), value)
    # "nearest" takes halves to the even position, as numpy and Keras's torch backend do.
    assert ops.quantile(grid, [0.375, 0.625, 0.875], method="nearest").numpy().tolist() == [2, 2, 4]
    assert ops.percentile(INTS, [25, 75], axis=1, keepdims=True).shape == (2, 2, 1)
    assert np.isnan(ops.median([1.0, np.nan, 2.0]).numpy())
    assert ops.diagonal(np.arange(6).reshape(2, 3), 1).numpy().tolist() == [1, 5]
    assert ops.trace(np.ones((3, 3), "int8")).dtype == np.int32
    assert ops.trace(np.ones((2, 3, 3), "float16"), axis1=1, axis2=2).numpy().tolist() == [3, 3]


def test_refusals_name_the_op_and_the_argument():
    with pytest.raises(TypeError, match="ptp: boolean input"):
        ops.ptp([True, False])
    with pytest.raises(ValueError, match=r"top_k: k must be an int in \[0, 4\]"):
        ops.top_k(X, 5)
    with pytest.raises(ValueError, match=r"quantile: q must be .* in \[0, 1\]"):
        ops.quantile(X, 1.5)
    with pytest.raises(ValueError, match=r"percentile: q must be .* in \[0, 100\]"):
        ops.percentile(X, -1)
    with pytest.raises(ValueError, match="quantile: method must be one of"):
        ops.quantile(X, 0.5, method="cubic")
    with pytest.raises(ValueError, match="average: weights need x's shape"):
        ops.average(X, axis=1, weights=[1.0, 2.0])
    with pytest.raises(ValueError, match="diagonal: x needs 2 or more axes"):
        ops.diagonal(np.ones(3))
    with pytest.raises(ValueError, match="in_top_k: targets must be integer ids"):
        ops.in_top_k([0, 7], X[:2], 1)
    with pytest.raises(ValueError, match="prod: axis 2 is out of range"):
        ops.prod(X, axis=2)


# Dtypes on which Keras's jax and torch backends agree (jax without x64 narrows int64).
KERAS_CASES = [
    ("prod", (X,), {"axis": 1}), ("prod", (INTS,), {}), ("prod", (ZEROS,), {"axis": 0}),
    ("cumprod", (X,), {"axis": 0}), ("cumprod", (INTS,), {}),
    ("amax", (INTS,), {"axis": 0}), ("amin", (X,), {"keepdims": True}), ("ptp", (INTS,), {}),
    ("average", (X,), {"axis": 1, "weights": np.arange(1.0, 5.0, dtype="float32")}),
    ("average", (INTS,), {}), ("count_nonzero", (ZEROS,), {"axis": 1}),
    ("sort", (X,), {"axis": 0}), ("sort", (INTS,), {}), ("argsort", (X,), {}),
    ("argpartition", (INTS, 0), {}), ("median", (X,), {"axis": 1}),
    ("median", (INTS,), {"keepdims": True}), ("quantile", (CUBE, [0.2, 0.9]), {"axis": (0, 2)}),
    ("quantile", (np.arange(5.0, dtype="float32"), [0.3, 0.9]), {"method": "nearest"}),
    ("percentile", (X, 30), {"axis": 1, "method": "lower", "keepdims": True}),
    ("percentile", (INTS, [10, 50]), {"method": "higher"}),
    ("percentile", (X, 55), {"axis": 0, "method": "midpoint"}),
    ("trace", (CUBE,), {"offset": 1, "axis1": 1, "axis2": 2}), ("trace", (INTS,), {}),
    ("diagonal", (CUBE,), {"offset": -1, "axis1": 2, "axis2": 0}), ("diagonal", (INTS,), {}),
]  # fmt: skip


@pytest.mark.parametrize("case", range(len(KERAS_CASES)))
def test_the_same_values_and_dtypes_as_keras(case):
    keras = pytest.importorskip("keras")
    name, args, kwargs = KERAS_CASES[case]
    theirs = keras.ops.convert_to_numpy(getattr(keras.ops, name)(*args, **kwargs))
    mine = getattr(ops, name)(*args, **kwargs).numpy()
    assert mine.dtype == theirs.dtype and mine.shape == theirs.shape, name
    if name == "argpartition":  # (the order within each part is the backend's own)
        theirs, mine = np.sort(theirs[..., 1:]), np.sort(mine[..., 1:])
    np.testing.assert_allclose(mine, theirs, rtol=1e-6, atol=1e-6, err_msg=name)


def test_top_k_and_in_top_k_as_keras():
    keras = pytest.importorskip("keras")
    ties = np.array([[1.0, 3.0, 3.0, 0.0], [2.0, 2.0, 2.0, 2.0]], "float32")
    many = RNG.integers(0, 4, size=(3, 40)).astype("float32")
    for x in (X, ties, many):
        values, indices = keras.ops.top_k(x, 3)
        mine = ops.top_k(x, 3)
        np.testing.assert_array_equal(mine[0].numpy(), keras.ops.convert_to_numpy(values))
        np.testing.assert_array_equal(mine[1].numpy(), keras.ops.convert_to_numpy(indices))
    targets = np.array([2, 3], "int32")
    for k in (1, 2, 3):
        theirs = keras.ops.convert_to_numpy(keras.ops.in_top_k(targets, ties, k))
        np.testing.assert_array_equal(ops.in_top_k(targets, ties, k).numpy(), theirs)


def _graph(lib):
    x = lib.Input((3, 4), name="x")
    o = lib.ops
    return lib.Model(
        x,
        [
            o.prod(x, axis=1) + o.amax(x, axis=1) + o.ptp(x, axis=1),
            o.cumprod(x, axis=2) + o.sort(x, axis=1),
            o.top_k(x, 2)[0],
            o.quantile(x, [0.25, 0.75]),  # (Keras's Quantile node loses an axis and a method)
            o.median(x, axis=1, keepdims=True) + o.percentile(x, 30, axis=1, keepdims=True),
            o.trace(x, axis1=1, axis2=2) + o.amin(o.diagonal(x, 1, 1, 2), axis=-1),
            o.average(x, axis=2, weights=np.arange(1.0, 5.0, dtype="float32"))
            + o.cast(o.count_nonzero(x, axis=2), "float32"),
            o.cast(o.argsort(x, axis=-1), "float32"),
        ],  # fmt: skip
    )


def test_models_of_these_ops_save_and_cross_to_keras(tmp_path):
    assert_saves_and_crosses_to_keras(_graph, CUBE, tmp_path)


def test_errors_name_the_op_called_not_the_one_it_is_built_on():
    x = np.ones((3, 4), "float32")
    with pytest.raises(ValueError, match="amax: axis .0, 0. names an axis twice"):
        ops.amax(x, axis=(0, 0))
    with pytest.raises(ValueError, match="amin: axis 5 is out of range"):
        ops.amin(x, axis=5)
    with pytest.raises(ValueError, match="trace: x needs 2 or more axes"):
        ops.trace(np.ones(3))
