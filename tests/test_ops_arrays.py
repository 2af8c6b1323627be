"""Array manipulation and creation ops: roll, linspace, logspace, geomspace, ndim, size,
dtype, is_tensor, ravel, the stack and split families, append, diff, diag, diagflat, tri,
identity, fliplr, flipud, rot90, unstack, take_along_axis; values and dtypes by hand,
gradients by finite differences, and the same values, dtypes and nodes as Keras."""

import numpy as np
import pytest
from finite_differences import check_float32, check_gradients, check_second_order
from op_graphs import assert_same_as_keras, assert_saves_and_crosses_to_keras

import minikeras as mk
from minikeras import ops

RNG = np.random.default_rng(3)
X = RNG.normal(size=(2, 3, 4)).astype("float32")
M = RNG.normal(size=(3, 4)).astype("float32")
INTS = np.array([[1, 2], [3, 4]], "int8")
HALF_0, HALF_1 = np.array(0, "float16"), np.array(1, "float16")
ORDER = np.array([[[3, 0], [1, 1], [2, 0]], [[0, 0], [3, 2], [1, 3]]])  # along X's axis 2

DIFFERENTIABLE = {
    "roll_flat": (lambda x: ops.roll(x, 5), [X]),
    "roll_axes": (lambda x: ops.roll(x, (1, -2), axis=(0, 2)), [X]),
    "ravel": (lambda x: ops.ravel(x), [X]),
    "hstack": (lambda a, b: ops.hstack([a, b]), [X, X[:, :2]]),
    "vstack": (lambda a, b: ops.vstack([a, b]), [M[0], M[1]]),
    "dstack": (lambda a, b: ops.dstack([a, b]), [M, M * 2]),
    "append_flat": (lambda a, b: ops.append(a, b), [X, M]),
    "append_axis": (lambda a, b: ops.append(a, b, axis=1), [X, X[:, :1]]),
    "array_split": (lambda x: ops.array_split(x, 3, axis=2)[0] * 2, [X]),
    "hsplit": (lambda x: ops.stack(ops.hsplit(x, 3), axis=0), [X]),
    "vsplit": (lambda x: ops.vsplit(x, [1])[1], [M]),
    "dsplit": (lambda x: ops.dsplit(x, 2)[1] * ops.dsplit(x, 2)[0], [X]),
    "unstack": (lambda x: ops.unstack(x, axis=1)[2] * ops.unstack(x, axis=1)[0], [X]),
    "diff": (lambda x: ops.diff(x), [X]),
    "diff_twice": (lambda x: ops.diff(x, n=2, axis=1), [X]),
    "diff_to_nothing": (lambda x: ops.sum(ops.diff(x, n=5)) + x, [X]),
    "diag_of_matrix": (lambda x: ops.diag(x, k=1), [M]),
    "diag_below": (lambda x: ops.diag(x, k=-2), [M]),
    "diag_of_vector": (lambda x: ops.diag(x, k=-1), [M[0]]),
    "diagflat": (lambda x: ops.diagflat(x, k=2), [M[:2]]),
    "fliplr": (lambda x: ops.fliplr(x), [X]),
    "flipud": (lambda x: ops.flipud(x), [X]),
    "rot90": (lambda x: ops.rot90(x), [X]),
    "rot90_axes": (lambda x: ops.rot90(x, k=3, axes=(2, 1)), [X]),
    "take_along_axis": (lambda x: ops.take_along_axis(x, ORDER, axis=2), [X]),
    "take_along_flat": (lambda x: ops.take_along_axis(x, np.array([5, 5, -1]), None), [X]),
    "take_along_broadcast": (lambda x: ops.take_along_axis(x, ORDER[:1], axis=2), [X]),
    "linspace": (lambda a, b: ops.linspace(a, b, 5, axis=-1), [M[0], M[1]]),
    "linspace_open": (lambda a, b: ops.linspace(a, b, 4, endpoint=False), [M[0], M[1, :1]]),
    "logspace": (lambda a, b: ops.logspace(a, b, 3, base=2.0), [M[0], M[1]]),
    "geomspace": (lambda a, b: ops.geomspace(a, b, 4, axis=1), [np.abs(M) + 0.5, M[:1] * 0 + 2]),
}


@pytest.mark.parametrize("name", sorted(DIFFERENTIABLE))
def test_gradients_match_finite_differences(name):
    fn, data = DIFFERENTIABLE[name]
    check_gradients(fn, data)
    check_second_order(fn, data)
    check_float32(fn, data)


def _np(t):
    return [_np(part) for part in t] if isinstance(t, (list, tuple)) else np.asarray(t)


ARANGE = np.arange(12.0, dtype="float32").reshape(3, 4)

# (op, args, kwargs, what numpy computes): values and dtypes.
BY_HAND = [
    ("roll", (INTS, 1), {}, np.array([[4, 1], [2, 3]], "int8")),
    ("roll", (ARANGE, (1, 1)), {"axis": (0, 1)}, np.roll(ARANGE, (1, 1), (0, 1))),
    ("ravel", (INTS,), {}, np.array([1, 2, 3, 4], "int8")),
    ("ravel", (3.0,), {}, np.array([3.0], "float32")),
    ("hstack", ([INTS, INTS.astype("float32")],), {}, np.hstack([INTS, INTS]).astype("float32")),
    ("vstack", ([np.arange(2), np.arange(2)],), {}, np.array([[0, 1], [0, 1]])),
    ("dstack", ([np.ones(3, "float32")] * 2,), {}, np.ones((1, 3, 2), "float32")),
    ("append", (INTS.astype("int32"), 1.5), {}, np.array([1, 2, 3, 4, 1.5], "float32")),
    ("append", (INTS, INTS > 2), {"axis": 0}, np.array([[1, 2], [3, 4], [0, 0], [1, 1]], "int8")),
    ("diff", (INTS,), {}, np.array([[1], [1]], "int8")),
    ("diff", (np.array([True, True, False]),), {}, np.array([False, True])),
    ("diff", (ARANGE**2,), {"n": 2, "axis": 0}, np.full((1, 4), 32.0, "float32")),
    ("diag", (ARANGE,), {"k": 1}, np.array([1.0, 6.0, 11.0], "float32")),
    ("diag", (np.array([1, 2], "int32"),), {"k": -1}, np.diag(np.array([1, 2], "int32"), -1)),
    ("diagflat", (INTS,), {}, np.diag(np.array([1, 2, 3, 4], "int8"))),
    ("fliplr", (INTS,), {}, np.array([[2, 1], [4, 3]], "int8")),
    ("flipud", (INTS,), {}, np.array([[3, 4], [1, 2]], "int8")),
    ("rot90", (INTS,), {}, np.array([[2, 4], [1, 3]], "int8")),
    ("rot90", (INTS,), {"k": -1}, np.array([[3, 1], [4, 2]], "int8")),
    ("take_along_axis", (ARANGE, np.array([[-1], [0], [1]])), {"axis": 1},
     np.array([[3.0], [4.0], [9.0]], "float32")),
    ("linspace", (0, 1, 5), {}, np.array([0, 0.25, 0.5, 0.75, 1], "float32")),
    ("linspace", (0, 10, 5), {"dtype": "int32"}, np.array([0, 2, 5, 7, 10], "int32")),
    ("linspace", (HALF_0, HALF_1, 3), {}, np.array([0, 0.5, 1], "float16")),
    ("linspace", (0, 1, 4), {"endpoint": False}, np.array([0, 0.25, 0.5, 0.75], "float32")),
    ("logspace", (0, 3, 4), {}, np.array([1, 10, 100, 1000], "float32")),
    ("logspace", (0, 2, 3), {"base": 2}, np.array([1, 2, 4], "float32")),
    ("geomspace", (-1, -8, 4), {}, np.array([-1, -2, -4, -8], "float32")),
    ("tri", (2, 3), {"k": 1, "dtype": "int32"}, np.array([[1, 1, 0], [1, 1, 1]], "int32")),
    ("tri", (2,), {}, np.array([[1, 0], [1, 1]], "float32")),
    ("identity", (2,), {}, np.array([[1, 0], [0, 1]], "float32")),
]  # fmt: skip

SPLITS = [
    ("array_split", (np.ones((5, 2)), 3), {}, [(2, 2), (2, 2), (1, 2)]),
    ("array_split", (np.ones((5, 2)), [1, 3]), {}, [(1, 2), (2, 2), (2, 2)]),
    ("hsplit", (np.ones((2, 4, 3)), 2), {}, [(2, 2, 3)] * 2),
    ("hsplit", (np.ones(4), 2), {}, [(2,)] * 2),
    ("vsplit", (np.ones((2, 4, 3)), 2), {}, [(1, 4, 3)] * 2),
    ("dsplit", (np.ones((2, 4, 3)), 3), {}, [(2, 4, 1)] * 3),
    ("unstack", (np.ones((2, 3)),), {"axis": 1}, [(2,)] * 3),
    ("unstack", (np.ones((2, 3)),), {"num": 2}, [(3,)] * 2),
]


@pytest.mark.parametrize("case", range(len(BY_HAND)))
def test_values_and_dtypes_by_hand(case):
    name, args, kwargs, want = BY_HAND[case]
    got = _np(getattr(ops, name)(*args, **kwargs))
    assert got.dtype == want.dtype and got.shape == want.shape, (name, got.dtype, got.shape)
    np.testing.assert_allclose(got, want, rtol=1e-6)


@pytest.mark.parametrize("case", range(len(SPLITS)))
def test_splits_give_the_parts_in_order(case):
    name, args, kwargs, shapes = SPLITS[case]
    parts = getattr(ops, name)(*args, **kwargs)
    assert [part.shape for part in parts] == shapes
    x = np.arange(24).reshape(2, 3, 4)
    rejoined = np.stack([p.numpy() for p in ops.unstack(x, axis=2)], axis=2)
    np.testing.assert_array_equal(rejoined, x)
    np.testing.assert_array_equal(np.concatenate(_np(ops.dsplit(x, [1, 3])), axis=2), x)


def test_linspace_steps_and_arrays_of_ends():
    values, step = ops.linspace(1.0, 2.0, 5, retstep=True)
    assert step.dtype == np.float32 and float(step) == 0.25
    grid = ops.linspace(np.array([0.0, 1.0], "float32"), np.array([1.0, 3.0], "float32"), 3, axis=1)
    np.testing.assert_array_equal(grid.numpy(), [[0, 0.5, 1], [1, 2, 3]])
    assert ops.linspace(0, 1, 0).shape == (0,) and ops.linspace(2, 3, 1).numpy().tolist() == [2]


def test_host_queries():
    symbolic = mk.Input((None, 4))
    assert ops.ndim(X) == 3 and ops.ndim(3.0) == 0 and ops.ndim(symbolic) == 3
    assert ops.size(X) == 24 and ops.size(np.ones((2, 0))) == 0
    assert ops.dtype(INTS) == "int8" and ops.dtype(symbolic) == "float32"
    assert ops.dtype([1, 2]) == "int32" and ops.dtype(mk.Variable([1.0])) == "float32"
    assert ops.is_tensor(ops.ones(2))
    assert not any(map(ops.is_tensor, [np.ones(2), 1.0, mk.Variable([1.0]), symbolic]))
    with pytest.raises(ValueError, match=r"size: the shape \(None, None, 4\) has a size"):
        ops.size(symbolic)


REFUSALS = [
    ("roll", (X, 1), {"axis": 3}, ValueError, "roll: invalid shift=1, axis=3"),
    ("hstack", ([],), {}, ValueError, "hstack: expected a non-empty list"),
    ("vstack", ([M, X],), {}, ValueError, "vstack: shapes must match except on axis 0"),
    ("append", (M, X), {"axis": 0}, ValueError, r"append: shapes must match.*\(3, 4\) and"),
    ("array_split", (X, 0), {}, ValueError, "array_split: indices_or_sections must be a pos"),
    ("hsplit", (X, 2), {}, ValueError, "hsplit: cannot split into 2 equal parts on axis 1"),
    ("vsplit", (M[0], 3), {}, ValueError, r"vsplit: x needs 2 or more axes; got shape \(4,\)"),
    ("dsplit", (M, 2), {}, ValueError, "dsplit: x needs 3 or more axes"),
    ("unstack", (X,), {"num": 3}, ValueError, "unstack: num=3 but axis 0 has length 2"),
    ("unstack", (1.0,), {}, ValueError, "unstack: cannot unstack a scalar"),
    ("diff", (X,), {"n": -1}, ValueError, "diff: n must be a non-negative int"),
    ("diff", (X,), {"axis": 3}, ValueError, "diff: axis 3 is out of range for 3 axes"),
    ("diag", (X,), {}, ValueError, r"diag: x must have 1 or 2 axes; got shape \(2, 3, 4\)"),
    ("fliplr", (M[0],), {}, ValueError, "fliplr: x needs 2 or more axes"),
    ("flipud", (1.0,), {}, ValueError, "flipud: x needs 1 or more axes"),
    ("rot90", (X,), {"axes": (1, -2)}, ValueError, r"rot90: axes must differ, got \(1, -2\)"),
    ("rot90", (M[0],), {}, ValueError, "rot90: array needs 2 or more axes"),
    ("take_along_axis", (M, ORDER), {"axis": 1}, ValueError,
     "take_along_axis: indices must have as many axes as x"),
    ("take_along_axis", (M, np.array([[4]])), {"axis": 1}, IndexError,
     r"indices must lie in \[-4, 4\) along axis 1, got 4 to 4"),
    ("take_along_axis", (M, np.array([[0.0]])), {"axis": 1}, ValueError,
     "take_along_axis: indices must be integers, got dtype float64"),
    ("take_along_axis", (M, np.zeros((2, 1), "int32")), {"axis": 1}, ValueError,
     "take_along_axis: shapes must broadcast off axis 1"),
    ("linspace", (0, 1, -1), {}, ValueError, "linspace: num must be a non-negative int"),
    ("geomspace", (-1, 1, 3), {}, ValueError, "geomspace: start and stop must be non-zero"),
]  # fmt: skip


@pytest.mark.parametrize("case", range(len(REFUSALS)))
def test_bad_input_is_refused_with_the_op_and_shapes(case):
    name, args, kwargs, error, message = REFUSALS[case]
    with pytest.raises(error, match=message):
        getattr(ops, name)(*args, **kwargs)


# (op, args, kwargs) run by Keras and by us: values and dtypes must agree.
AGAINST_KERAS = [
    ("roll", (X, 3), {}), ("roll", (INTS, -1), {"axis": 1}), ("ravel", (INTS > 2,), {}),
    ("hstack", ([INTS, M[:2, :2].astype("float16")],), {}), ("vstack", ([INTS, INTS > 1],), {}),
    ("dstack", ([M, M],), {}), ("append", (INTS.astype("int32"), 1.5), {}),
    ("append", (X, X), {"axis": 2}), ("diff", (X,), {"n": 2, "axis": 1}),
    ("diff", (INTS > 2,), {}), ("diag", (M,), {"k": -1}), ("diag", (M[0],), {"k": 2}),
    ("diagflat", (INTS,), {"k": 1}), ("fliplr", (X,), {}), ("flipud", (INTS,), {}),
    ("rot90", (X,), {"k": 2}), ("rot90", (X,), {"k": -1, "axes": (1, 2)}),
    ("take_along_axis", (X, ORDER), {"axis": 2}), ("take_along_axis", (X, ORDER[:1]), {"axis": 2}),
    ("take_along_axis", (M, np.array([11, -1, 0])), {"axis": None}),
    ("linspace", (0, 1, 7), {}), ("linspace", (0, 10, 5), {"dtype": "int32"}),
    ("linspace", (M[0], M[1], 3), {"axis": 1, "endpoint": False}),
    ("linspace", (HALF_0, HALF_1, 3), {}), ("logspace", (0, 2, 5), {}),
    ("logspace", (M[0], M[1], 3), {"base": 2}), ("geomspace", (1, 100, 5), {}),
    ("tri", (3, 2), {"k": -1}), ("tri", (2,), {"dtype": "int32"}), ("identity", (3,), {}),
    ("array_split", (X, 3), {"axis": 2}), ("hsplit", (X, 3), {}), ("vsplit", (X, 2), {}),
    ("dsplit", (X, 2), {}), ("unstack", (X,), {"axis": -1}),
]  # fmt: skip


def test_the_same_values_and_dtypes_as_keras():
    assert_same_as_keras(AGAINST_KERAS)
    keras = pytest.importorskip("keras")
    for x in (X, INTS, 2.0):
        assert ops.ndim(x) == keras.ops.ndim(x) and ops.size(x) == keras.ops.size(x)
    assert ops.dtype(INTS) == keras.ops.dtype(INTS)


def _graph(lib):
    x = lib.Input((3, 4), name="x")
    o = lib.ops
    return lib.Model(
        x,
        [
            o.roll(x, 1, axis=2) + o.fliplr(x) + o.flipud(x),
            o.hstack([x, x]) + o.append(x, x, axis=1),
            o.vstack([x, x]),
            o.dstack([x, x]),
            o.diff(x, n=2, axis=1),
            o.ravel(x),
            o.take_along_axis(x, np.array([[[3, 0], [1, 1], [2, 0]]]), axis=2),
            o.array_split(x, 2, axis=2)[1] + o.hsplit(x, 3)[2][:, :, :2] + o.dsplit(x, 2)[0],
            o.unstack(x, axis=1)[2],
            o.linspace(x, x + 1.0, 3, axis=-1) + o.logspace(x, x, 3, axis=-1),
            o.geomspace(o.abs(x) + 1.0, o.abs(x) + 2.0, 3),
        ],  # fmt: skip
    )


def test_models_of_these_ops_save_and_cross_to_keras(tmp_path):
    data = np.concatenate([X, X + 1], axis=0)
    # rot90 apart: Keras 3.15 cannot load its own Rot90 node (`axes` comes back a list,
    # which jax refuses), so its file is only checked here, in both of our formats.
    x = mk.Input((3, 4))
    turned = mk.Model(x, mk.ops.rot90(x, k=-1, axes=(1, 2)))
    for suffix in ("minikeras", "keras"):
        turned.save(tmp_path / f"turned.{suffix}")
        loaded = mk.models.load_model(tmp_path / f"turned.{suffix}")
        np.testing.assert_array_equal(loaded(data).numpy(), np.rot90(data, -1, (1, 2)))
    assert_saves_and_crosses_to_keras(_graph, data, tmp_path)
