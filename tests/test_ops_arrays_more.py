"""Array ops, second group: scatter, scatter_update, slice, slice_update, select, outer,
inner, kron, vdot, cross, vander, meshgrid, nonzero, unravel_index, array, empty,
empty_like, saturate_cast, get_item; values and dtypes by hand, gradients by finite
differences, and the same values, dtypes and nodes as Keras."""

import numpy as np
import pytest
from finite_differences import check_float32, check_gradients, check_second_order
from op_graphs import assert_same_as_keras, assert_saves_and_crosses_to_keras

import minikeras as mk
from minikeras import ops

RNG = np.random.default_rng(5)
X = RNG.normal(size=(2, 3, 4)).astype("float32")
M = RNG.normal(size=(3, 4)).astype("float32")
V = RNG.normal(size=(3,)).astype("float32")
I8 = np.array([1, 2, 3], "int8")
REPEATED = np.array([[0, 1], [1, 2], [0, 1]])  # (0, 1) twice: the last update stays

DIFFERENTIABLE = {
    "scatter": (lambda v: ops.scatter(REPEATED, v, (2, 3, 4)), [M]),
    "scatter_update": (lambda x, u: ops.scatter_update(x, REPEATED, u), [X, M]),
    "scatter_update_add": (lambda x, u: ops.scatter_update(x, REPEATED, u, "add"), [X, M]),
    "scatter_update_points": (lambda x, u: ops.scatter_update(x, [[1, 2, 3], [-1, 2, 3]], u),
                              [X, V[:2]]),
    "slice": (lambda x: ops.slice(x, (1, 0, 1), (1, -1, 2)), [X]),
    "slice_update": (lambda x, u: ops.slice_update(x, (0, 1, 2), u), [X, X[:, :2, :2]]),
    "select": (lambda a, b: ops.select([M > 0.5, M < 0], [a, b], default=1.0), [M, M * 3]),
    "outer": (lambda a, b: ops.outer(a, b), [V, M[:2]]),
    "inner": (lambda a, b: ops.inner(a, b), [X, M]),
    "vdot": (lambda a, b: ops.vdot(a, b), [M, M.T]),
    "kron": (lambda a, b: ops.kron(a, b), [M[:2], V]),
    "cross": (lambda a, b: ops.cross(a, b, axisa=0, axisc=0), [M[:, :2], M[:2, :2].T]),
    "cross_2_3": (lambda a, b: ops.cross(a, b), [M[:, :2], M[:, 1:]]),
    "cross_2_2": (lambda a, b: ops.cross(a, b), [M[:, :2], M[:, 2:]]),
    "vander": (lambda x: ops.vander(x, 4), [np.array([0.0, 1.5, -2.0])]),
    "meshgrid": (lambda a, b: ops.concatenate(ops.meshgrid(a, b, indexing="ij")), [V, M[0]]),
    "meshgrid_xy": (lambda a, b: ops.concatenate(ops.meshgrid(a, b)), [V, M[0]]),
    "get_item": (lambda x: ops.get_item(x, (1, slice(None), [0, 3])), [X]),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(DIFFERENTIABLE))
def test_gradients_match_finite_differences(name):
    fn, data = DIFFERENTIABLE[name]
    check_gradients(fn, data)
    check_second_order(fn, data)
    check_float32(fn, data)


def test_updates_gradients_by_hand():
    inputs, updates = mk.Variable(np.zeros(4, "float32")), mk.Variable([1.0, 2.0, 3.0])
    with mk.GradientTape(persistent=True) as tape:
        replaced = ops.scatter_update(inputs, [[1], [3], [1]], updates)
        added = ops.scatter_update(inputs, [[1], [3], [1]], updates, reduction="add")
        weights = np.array([1.0, 10.0, 100.0, 1000.0], "float32")
        first, second = ops.sum(replaced * weights), ops.sum(added * weights)
    np.testing.assert_array_equal(replaced.numpy(), [0, 3, 0, 2])
    np.testing.assert_array_equal(tape.gradient(first, inputs).numpy(), [1, 0, 100, 0])
    np.testing.assert_array_equal(tape.gradient(first, updates).numpy(), [0, 1000, 10])
    np.testing.assert_array_equal(tape.gradient(second, inputs).numpy(), weights)
    np.testing.assert_array_equal(tape.gradient(second, updates).numpy(), [10, 1000, 10])
    with pytest.raises(NotImplementedError, match="no gradient for reduction='max'"):
        with mk.GradientTape() as tape:
            total = ops.sum(ops.scatter_update(inputs, [[1]], [5.0], reduction="max"))
        tape.gradient(total, updates)


def _np(t):
    return [_np(part) for part in t] if isinstance(t, (list, tuple)) else np.asarray(t)


ARANGE = np.arange(12, dtype="int32").reshape(3, 4)
F = np.array([1.0, 2.0, 3.0], "float32")

BY_HAND = [
    ("scatter", ([[0], [2], [0]], F, (4,)), {}, np.array([4, 0, 2, 0], "float32")),
    ("scatter", ([[1]], I8[:2].reshape(1, 2), (2, 2)), {}, np.array([[0, 0], [1, 2]], "int8")),
    ("scatter_update", (np.zeros(3, "int32"), [[1]], [2.7]), {}, np.array([0, 2, 0], "int32")),
    ("scatter_update", (ARANGE, [[0, 0], [0, 0]], [5, 1]), {"reduction": "mul"},
     np.array([[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]], "int32")),
    ("scatter_update", (ARANGE, [[2]], [[1, 20, 1, 20]]), {"reduction": "max"},
     np.array([[0, 1, 2, 3], [4, 5, 6, 7], [8, 20, 10, 20]], "int32")),
    ("scatter_update", (ARANGE, [[1, -1]]), {"updates": [-5], "reduction": "min"},
     np.array([[0, 1, 2, 3], [4, 5, 6, -5], [8, 9, 10, 11]], "int32")),
    ("slice", (ARANGE, (1, 1), (2, -1)), {}, np.array([[5, 6, 7], [9, 10, 11]], "int32")),
    ("slice_update", (ARANGE, (2, 2), np.array([[-1.5, -2.5]])), {},
     np.array([[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, -1, -2]], "int32")),
    ("select", ([F < 2, F > 2], [F, -F]), {}, np.array([1, 0, -3], "float32")),
    ("select", ([F < 2], [I8]), {"default": 9}, np.array([1, 9, 9], "int8")),
    ("outer", (I8, F), {}, np.array([[1, 2, 3], [2, 4, 6], [3, 6, 9]], "float32")),
    ("inner", (I8, I8), {}, np.array(14, "int8")),
    ("inner", (2.0, F), {}, np.array([2, 4, 6], "float32")),
    ("vdot", (ARANGE[:2, :2], ARANGE[:2, :2]), {}, np.array(42, "int32")),
    ("kron", (np.eye(2, dtype="int32"), np.array([[1, 2]], "int32")), {},
     np.array([[1, 2, 0, 0], [0, 0, 1, 2]], "int32")),
    ("cross", (F, np.array([0.0, 1.0, 0.0], "float32")), {}, np.array([-3, 0, 1], "float32")),
    ("cross", (F[:2], F[1:]), {}, np.array(-1.0, "float32")),
    ("vander", (I8,), {"N": 2, "increasing": True}, np.array([[1, 1], [1, 2], [1, 3]], "int8")),
    ("vander", (F,), {}, np.array([[1, 1, 1], [4, 2, 1], [9, 3, 1]], "float32")),
    ("nonzero", (np.array([[0, 1], [2, 0]]),), {},
     [np.array([0, 1], "int32"), np.array([1, 0], "int32")]),
    ("unravel_index", (np.array([5, 1]), (2, 3)), {},
     [np.array([1, 0], "int32"), np.array([2, 1], "int32")]),
    ("array", ([1, 2],), {}, np.array([1, 2], "int32")),
    ("array", ([1.0, 2.0],), {"dtype": "int8"}, np.array([1, 2], "int8")),
    ("empty", ((2,),), {}, np.zeros(2, "float32")),
    ("empty_like", (I8,), {}, np.zeros(3, "int8")),
    ("saturate_cast", (np.array([-300.0, 1.5, 300.0, np.nan, np.inf]), "int8"), {},
     np.array([-128, 1, 127, 0, 127], "int8")),
    ("saturate_cast", (np.array([-3, 300], "int32"), "uint8"), {}, np.array([0, 255], "uint8")),
    ("saturate_cast", (np.array([1e6, -1e6], "float32"), "float16"), {},
     np.array([65504, -65504], "float16")),
    ("saturate_cast", (np.array([3e9, -3e9], "float32"), "int32"), {},
     np.array([2147483520, -2147483648], "int32")),
    ("get_item", (ARANGE, (0, slice(1, None))), {}, np.array([1, 2, 3], "int32")),
]  # fmt: skip


@pytest.mark.parametrize("case", range(len(BY_HAND)))
def test_values_and_dtypes_by_hand(case):
    name, args, kwargs, want = BY_HAND[case]
    got = _np(getattr(ops, name)(*args, **kwargs))
    for got_part, want_part in zip(*((got, want) if isinstance(want, list) else ([got], [want]))):
        assert got_part.dtype == want_part.dtype, (name, got_part.dtype)
        assert got_part.shape == want_part.shape, (name, got_part.shape)
        np.testing.assert_allclose(got_part, want_part, rtol=1e-6)


def test_meshgrid_in_both_indexings():
    xs, ys = ops.meshgrid(I8, F[:2])
    assert xs.dtype == np.int8 and ys.dtype == np.float32 and xs.shape == ys.shape == (2, 3)
    np.testing.assert_array_equal(ys.numpy(), [[1, 1, 1], [2, 2, 2]])
    xs, ys, zs = ops.meshgrid(I8, F[:2], np.arange(4), indexing="ij")
    assert xs.shape == (3, 2, 4) and zs.numpy()[2, 1].tolist() == [0, 1, 2, 3]
    assert ops.get_item is ops.getitem


REFUSALS = [
    ("scatter", ([[0.5]], F[:1], (3,)), {}, ValueError, "scatter: indices must be integers"),
    ("scatter", ([[3]], F[:1], (3,)), {}, IndexError, r"indices out of range for shape \(3,\)"),
    ("scatter", ([[0, 0, 0]], F[:1], (3, 3)), {}, ValueError,
     "scatter: indices must have a last axis of 1 to 2 coordinates"),
    ("scatter", ([[0]], F, (3, 2)), {}, ValueError,
     r"scatter: values must have shape \(1, 2\) \(indices \(1, 1\) into \(3, 2\)\), got \(3,\)"),
    ("scatter_update", (F, [[0]], [1.0]), {"reduction": "sum"}, ValueError,
     "scatter_update: reduction must be None, 'add', 'max', 'min' or 'mul', got 'sum'"),
    ("slice", (ARANGE, (2, 0), (2, 2)), {}, ValueError,
     r"slice: a box of shape \(2, 2\) at \(2, 0\) does not fit; got shape \(3, 4\)"),
    ("slice", (ARANGE, (0,), (1,)), {}, ValueError, "slice: 2 start indices expected"),
    ("slice_update", (ARANGE, (0, 3), np.ones((1, 2))), {}, ValueError,
     r"slice_update: a box of shape \(1, 2\) at \(0, 3\) does not fit"),
    ("select", ([F > 1], [F, F]), {}, ValueError, "select: condlist and choicelist must be non"),
    ("select", ([F], [F]), {}, ValueError, "select: conditions must be booleans"),
    ("inner", (M, X[..., :3]), {}, ValueError, r"inner: the last axes must have one length"),
    ("vdot", (M, F), {}, ValueError, "vdot: x1 and x2 must have as many values"),
    ("cross", (M, M), {}, ValueError, r"cross: x1's vectors \(axis 1\) must have 2 or 3 values"),
    ("vander", (M,), {}, ValueError, r"vander: x must be 1-d; got shape \(3, 4\)"),
    ("meshgrid", (F, F), {"indexing": "xyz"}, ValueError, "meshgrid: indexing must be 'xy'"),
    ("unravel_index", ([6], (2, 3)), {}, ValueError, r"unravel_index: .* \(shape \(2, 3\)\)"),
]  # fmt: skip


@pytest.mark.parametrize("case", range(len(REFUSALS)))
def test_bad_input_is_refused_with_the_op_and_shapes(case):
    name, args, kwargs, error, message = REFUSALS[case]
    with pytest.raises(error, match=message):
        getattr(ops, name)(*args, **kwargs)


AGAINST_KERAS = [
    ("scatter", (REPEATED, M, (2, 3, 4)), {}),
    ("scatter", (np.array([[0], [2], [0]]), F, (4,)), {}),
    ("scatter_update", (X, REPEATED[:2], M[:2]), {}),
    ("scatter_update", (X, REPEATED, M), {"reduction": "add"}),
    ("scatter_update", (X, REPEATED, M), {"reduction": "max"}),
    ("scatter_update", (np.zeros(3, "int32"), np.array([[1]]), np.array([2.5], "float32")), {}),
    ("slice", (X, (1, 0, 1), (1, -1, 2)), {}), ("slice_update", (X, (0, 1, 2), X[:, :2, :2]), {}),
    ("select", ([F < 2, F > 2], [F, -F]), {}), ("select", ([F < 2], [I8]), {"default": 9}),
    ("outer", (I8, F), {}), ("outer", (M, V), {}), ("inner", (X, M), {}), ("inner", (I8, I8), {}),
    ("vdot", (M, M.T), {}), ("vdot", (I8, I8), {}), ("kron", (M[:2], V), {}),
    ("kron", (I8, np.ones((2, 1), "int8")), {}), ("cross", (M[:, :3], M[:, 1:]), {}),
    ("cross", (M[:, :2], M[:, 2:]), {}), ("cross", (M[:, :2], M[:, :3]), {"axisb": 0}),
    ("vander", (F,), {}), ("vander", (I8, 2), {"increasing": True}),
    ("meshgrid", (I8, F[:2]), {}), ("meshgrid", (I8, F[:2], V), {"indexing": "ij"}),
    ("nonzero", (ARANGE > 5,), {}), ("unravel_index", (np.array([5, 1]), (2, 3)), {}),
    ("array", ([1, 2],), {}), ("array", ([1.0, 2.0],), {}), ("empty_like", (I8,), {}),
    ("saturate_cast", (np.array([-300.0, 1.5, 300.0, np.nan, np.inf]), "int8"), {}),
    ("saturate_cast", (np.array([-3, 300], "int32"), "uint8"), {}),
    ("saturate_cast", (np.array([1e6, -1e6], "float32"), "float16"), {}),
    ("saturate_cast", (np.array([3e9, -3e9], "float32"), "int32"), {}),
    ("get_item", (ARANGE, (0, slice(1, None))), {}),
]  # fmt: skip


def test_the_same_values_and_dtypes_as_keras():
    assert_same_as_keras(AGAINST_KERAS)
    keras = pytest.importorskip("keras")
    assert keras.ops.empty((2, 3)).shape == ops.empty((2, 3)).shape


def _graph(lib):
    x = lib.Input((3, 4), name="x")
    o = lib.ops
    return lib.Model(
        x,
        [
            o.slice(x, (0, 1, 1), (-1, 2, 2)) * 2.0,
            o.slice_update(x, (0, 0, 1), o.ones((1, 2, 2))),
            o.scatter_update(x, np.array([[0, 1]]), x[:1, 0] * 3.0),
            o.select([x > 0, x < -1], [x, x * 2.0], default=-1.0),
            o.inner(x, x[:, 0]),
            o.kron(x, np.ones((1, 1, 2), "float32")),
            o.cross(x[:, :, :3], x[:, :, 1:]),
            o.saturate_cast(x * 100.0, "int8"),
            o.get_item(x, (slice(None), 1)),
            o.vander(o.ravel(x[0])),
        ],  # fmt: skip
    )


def test_models_of_these_ops_save_and_cross_to_keras(tmp_path):
    assert_saves_and_crosses_to_keras(_graph, np.concatenate([X, X * 2], axis=0), tmp_path)
