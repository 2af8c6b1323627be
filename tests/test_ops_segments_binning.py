"""Keras 3 segment reductions, binning and the remaining statistics: segment_sum,
segment_max, segment_min, segment_prod, searchsorted, digitize, bincount, unique, histogram,
corrcoef, trapezoid; values and dtypes by hand, gradients, and against Keras."""

import numpy as np
import pytest
from finite_differences import check_float32, check_gradients, check_second_order
from op_graphs import assert_same_as_keras, assert_saves_and_crosses_to_keras

import minikeras as mk
from minikeras import ops

RNG = np.random.default_rng(5)
DATA = RNG.normal(size=(5, 3)).astype("float32")
# Zeros: one alone in segment 0, two together in segment 2 (column 1).
ZEROS = DATA.copy()
ZEROS[0, 0] = ZEROS[2, 1] = ZEROS[3, 1] = 0.0
IDS = np.array([0, 2, 2, 2, -1])  # (segment 1 empty, the last row dropped)
POINTS = np.cumsum(RNG.uniform(0.5, 1.0, size=(5, 3)), axis=0).astype("float32")

DIFFERENTIABLE = {
    "segment_sum": (lambda d: ops.segment_sum(d, IDS, num_segments=4), [DATA]),
    "segment_max": (lambda d: ops.segment_max(d, [0, 1, 1, 1, 0]), [DATA]),
    "segment_min": (lambda d: ops.segment_min(d, [1, 1, 0, 0, 0], num_segments=2), [DATA]),
    "segment_prod": (lambda d: ops.segment_prod(d, IDS, num_segments=3), [DATA]),
    "bincount": (lambda w: ops.bincount([[0, 1, 1], [3, 0, 0]], weights=w), [DATA[:2]]),
    "corrcoef": (lambda x: ops.corrcoef(x), [DATA]),
    "trapezoid": (lambda y: ops.trapezoid(y, dx=0.5, axis=0), [DATA]),
    "trapezoid_x": (lambda y, x: ops.trapezoid(y, x, axis=0), [DATA, POINTS]),
    "trapezoid_x1": (lambda y, x: ops.trapezoid(y, x[:, 0], axis=0), [DATA, POINTS]),
}


@pytest.mark.parametrize("name", sorted(DIFFERENTIABLE))
def test_gradients_match_finite_differences(name):
    fn, data = DIFFERENTIABLE[name]
    check_gradients(fn, data)
    check_second_order(fn, data)
    check_float32(fn, data)


def test_segment_prod_gradient_with_zeros():
    fn = DIFFERENTIABLE["segment_prod"][0]
    check_gradients(fn, [ZEROS])
    check_second_order(fn, [ZEROS])
    check_float32(fn, [ZEROS])
    data = mk.Variable([2.0, 0.0, 3.0, 0.0, 0.0, 5.0])
    with mk.GradientTape() as tape:
        total = ops.sum(ops.segment_prod(data, [0, 0, 0, 1, 1, 2]))
    np.testing.assert_array_equal(tape.gradient(total, data).numpy(), [0, 6, 0, 0, 0, 1])


def test_segment_max_shares_the_gradient_among_ties():
    data = mk.Variable([1.0, 3.0, 3.0, 2.0])
    with mk.GradientTape() as tape:
        top = ops.sum(ops.segment_max(data, [0, 0, 0, 1]))
    np.testing.assert_array_equal(tape.gradient(top, data).numpy(), [0.0, 0.5, 0.5, 1.0])


def test_values_and_dtypes_by_hand():
    ints = np.array([1, 2, 3, 4, 5], "int8")
    ids = np.array([0, 0, 2, 1, 2])
    assert ops.segment_sum(ints, ids).numpy().tolist() == [3, 4, 8]
    assert ops.segment_sum(ints, ids).dtype == np.int8
    assert ops.segment_max(ints, ids, num_segments=4).numpy().tolist() == [2, 4, 5, -128]
    assert ops.segment_min(DATA[:, 0], [0, 0, 1, 1, 1], 3).numpy()[2] == np.inf
    assert ops.segment_prod(ints, ids, num_segments=4).numpy().tolist() == [2, 4, 15, 1]
    assert ops.segment_sum(np.ones((3, 2)), [0, 5, 1], num_segments=2).numpy().tolist() == [
        [1, 1],
        [1, 1],
    ]  # (id 5 is dropped)
    assert ops.segment_sum(ints > 2, ids).numpy().tolist() == [False, True, True]  # any
    assert ops.searchsorted([1, 3, 5, 7], [3, 6]).numpy().tolist() == [1, 3]
    assert ops.searchsorted([1, 3, 5, 7], [3, 6], side="right").dtype == np.int32
    assert ops.digitize([0.0, 3.0, 6.0, 9.0], [5.0, 3.0, 1.0]).numpy().tolist() == [3, 1, 0, 0]
    assert ops.bincount([0, 1, 1, 3], minlength=6).numpy().tolist() == [1, 2, 0, 1, 0, 0]
    assert ops.bincount([[0, 1], [1, 1]]).numpy().tolist() == [[1, 1], [0, 2]]
    weighted = ops.bincount([0, 1, 1], weights=np.array([1, 2, 3], "int8"))
    assert weighted.dtype == np.int8 and weighted.numpy().tolist() == [1, 5]
    values, index, inverse, counts = ops.unique(
        [3, 1, 1, 2, 7], return_index=True, return_inverse=True, return_counts=True, size=6
    )
    assert values.numpy().tolist() == [1, 2, 3, 7, 1, 1]
    assert index.numpy().tolist() == [1, 3, 0, 4, 1, 1] and index.dtype == np.int32
    assert inverse.numpy().tolist() == [2, 0, 0, 1, 3]
    assert counts.numpy().tolist() == [2, 1, 1, 1, 0, 0]
    assert ops.unique([3, 1, 2], size=2, fill_value=-5).numpy().tolist() == [1, 2]
    assert ops.unique(np.array([[1, 2], [1, 2], [0, 1]]), axis=0).numpy().tolist() == [
        [0, 1],
        [1, 2],
    ]
    counts, edges = ops.histogram(np.array([1, 2, 2, 3, 9]), bins=4, range=(0, 8))
    assert counts.numpy().tolist() == [1, 3, 0, 0] and edges.numpy().tolist() == [0, 2, 4, 6, 8]
    assert counts.dtype == edges.dtype == np.float32
    assert ops.histogram(np.array([True, False, True]), bins=2)[0].numpy().tolist() == [1, 2]
    np.testing.assert_allclose(ops.corrcoef(DATA.T).numpy(), np.corrcoef(DATA.T), rtol=1e-5)
    assert ops.corrcoef(np.array([[1, 2, 3], [3, 2, 1]])).numpy().tolist() == [[1, -1], [-1, 1]]
    assert ops.trapezoid([1, 2, 3], x=[0, 1, 3]).numpy() == 6.5
    assert ops.trapezoid(np.array([1, 2, 3], "int8")).dtype == np.float32


def test_refusals_name_the_op_and_the_argument():
    with pytest.raises(ValueError, match="segment_sum: segment_ids must have one id per row"):
        ops.segment_sum(DATA, [0, 1])
    with pytest.raises(TypeError, match="segment_max: num_segments must be an int"):
        ops.segment_max(DATA, IDS, num_segments=2.5)
    with pytest.raises(ValueError, match="searchsorted: sorted_sequence must be 1-D"):
        ops.searchsorted(DATA, [1.0])
    with pytest.raises(ValueError, match="searchsorted: side must be"):
        ops.searchsorted([1.0, 2.0], [1.0], side="middle")
    with pytest.raises(ValueError, match="bincount: x must be 1-D or 2-D non-negative"):
        ops.bincount([0, -1])
    with pytest.raises(ValueError, match="bincount: sparse=True is not supported"):
        ops.bincount([0, 1], sparse=True)
    with pytest.raises(ValueError, match="histogram: x must be 1-D"):
        ops.histogram(DATA)
    with pytest.raises(ValueError, match="trapezoid: x must be 1-D along axis"):
        ops.trapezoid(DATA, x=[1.0, 2.0])
    with pytest.raises(TypeError, match="unique: on a symbolic tensor .* needs `size`"):
        ops.unique(mk.Input((3,)))
    with pytest.raises(TypeError, match="bincount: needs values, not a symbolic tensor"):
        ops.bincount(mk.Input((3,), dtype="int32"))


KERAS_CASES = [
    ("segment_sum", (DATA, IDS), {"num_segments": 4}),
    ("segment_max", (DATA, IDS), {"num_segments": 3}),
    ("segment_min", (np.array([1, 2, 3, 4, 5], "int8"), np.array([0, 0, 2, 1, 2])),
     {"num_segments": 4}),
    ("segment_prod", (ZEROS, IDS), {"num_segments": 3, "sorted": False}),
    ("searchsorted", (np.array([1, 3, 5, 7], "int8"), np.array([3, 6], "int8")), {}),
    ("searchsorted", (np.sort(DATA[:, 0]), DATA[:, 1]), {"side": "right"}),
    ("digitize", (DATA, np.array([-1.0, 0.0, 1.0], "float32")), {}),
    ("bincount", (np.array([0, 1, 1, 3], "int32"),), {"minlength": 6}),
    ("bincount", (np.array([0, 1, 1, 3], "int32"),), {"weights": DATA[:4, 0]}),
    ("histogram", (DATA[:, 0],), {"bins": 3}),
    ("histogram", (np.array([1, 2, 2, 3, 9], "int32"),), {"bins": 4, "range": (0, 8)}),
    ("corrcoef", (DATA.T,), {}), ("corrcoef", (np.array([[1, 2, 3], [2, 1, 5]], "int32"),), {}),
    ("trapezoid", (DATA,), {"axis": 0, "dx": 0.5}), ("trapezoid", (DATA, POINTS), {"axis": 0}),
    ("trapezoid", (np.array([1, 2, 3], "int8"),), {}),
    ("unique", (np.array([3, 1, 1, 2, 7], "int32"),),
     {"return_index": True, "return_inverse": True, "return_counts": True, "size": 7}),
]  # fmt: skip


def test_the_same_values_and_dtypes_as_keras():
    assert_same_as_keras(KERAS_CASES, rtol=1e-5)


def _graph(lib):
    x = lib.Input((5,), name="x")
    o = lib.ops
    rows = o.transpose(x)  # (5, batch): five rows to put into segments
    ids = np.array([0, 0, 2, 1, 2], "int32")
    return lib.Model(
        x,
        [
            o.segment_sum(rows, ids, num_segments=3) + o.segment_max(rows, ids, num_segments=3),
            o.segment_min(rows, ids, num_segments=3) + o.segment_prod(rows, ids, num_segments=3),
            o.cast(o.digitize(x, np.array([-1.0, 0.0, 1.0], "float32")), "float32"),
            o.trapezoid(x, dx=0.5),  # (Keras cannot save a Trapezoid holding sample points)
            o.corrcoef(x),
            o.unique(o.cast(x > 0, "int32"), size=3, return_counts=True)[1],
        ],  # fmt: skip
    )


def test_models_of_these_ops_save_and_cross_to_keras(tmp_path):
    assert_saves_and_crosses_to_keras(_graph, DATA.T[:, :5].copy(), tmp_path)


def test_bincount_of_nothing_is_minlength_zeros():
    np.testing.assert_array_equal(
        ops.bincount(np.zeros(0, np.int32), minlength=3).numpy(), [0, 0, 0]
    )
    weighted = ops.bincount(np.zeros(0, np.int32), weights=np.zeros(0, "float32"), minlength=2)
    np.testing.assert_array_equal(weighted.numpy(), [0.0, 0.0])
