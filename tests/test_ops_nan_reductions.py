"""Keras 3's nan-skipping reductions (nansum ... nanpercentile): values and dtypes by hand,
gradients (nan gets none), all-nan slices, and the same results as Keras."""

import numpy as np
import pytest
from finite_differences import check_float32, check_gradients, check_second_order
from op_graphs import assert_saves_and_crosses_to_keras

import minikeras as mk
from minikeras import ops

RNG = np.random.default_rng(7)
X = RNG.normal(size=(3, 4)).astype("float32")
X[0, 1] = X[1, 3] = X[2, 0] = X[2, 2] = np.nan  # (no row or column only nan)
ALL_NAN = np.array([[1.0, np.nan, 3.0], [np.nan, np.nan, np.nan]], "float32")
INTS = np.array([[1, 2, 3], [0, 5, 6]], "int8")

DIFFERENTIABLE = {
    "nansum": lambda x: ops.nansum(x, axis=1),
    "nanmean": lambda x: ops.nanmean(x, axis=0, keepdims=True),
    "nanvar": lambda x: ops.nanvar(x, axis=1),
    "nanstd": lambda x: ops.nanstd(x),
    "nanmax": lambda x: ops.nanmax(x, axis=1),
    "nanmin": lambda x: ops.nanmin(x, axis=0),
    "nanprod": lambda x: ops.nanprod(x, axis=1),
    "nancumsum": lambda x: ops.nancumsum(x, axis=1),
    "nancumprod": lambda x: ops.nancumprod(x, axis=0),
    "nanmedian": lambda x: ops.nanmedian(x, axis=1),
    "nanquantile": lambda x: ops.nanquantile(x, [0.2, 0.7], axis=1),
    "nanpercentile": lambda x: ops.nanpercentile(x, 40, axis=0, method="midpoint"),
}


@pytest.mark.parametrize("name", sorted(DIFFERENTIABLE))
def test_gradients_match_finite_differences(name):
    fn = DIFFERENTIABLE[name]
    check_gradients(fn, [X])
    check_second_order(fn, [X])
    check_float32(fn, [X])


def test_nan_gets_no_gradient():
    x = mk.Variable([2.0, np.nan, 3.0])
    with mk.GradientTape() as tape:
        total = ops.nanmean(x) + ops.nanmax(x) + ops.nansum(x) + ops.nanmedian(x)
    np.testing.assert_allclose(tape.gradient(total, x).numpy(), [2.0, 0.0, 3.0])


def test_values_and_dtypes_by_hand():
    # Row 0 holds values and nan, row 1 only nan.
    expected = {
        "nansum": [4.0, 0.0], "nanprod": [3.0, 1.0], "nanmean": [2.0, np.nan],
        "nanvar": [1.0, np.nan], "nanstd": [1.0, np.nan], "nanmax": [3.0, np.nan],
        "nanmin": [1.0, np.nan], "nanmedian": [2.0, np.nan],
        "nanargmax": [2, -1], "nanargmin": [0, -1],
    }  # fmt: skip
    for name, values in expected.items():
        result = getattr(ops, name)(ALL_NAN, axis=1)
        np.testing.assert_array_equal(result.numpy(), values, err_msg=name)
        assert result.dtype == (np.int32 if name.startswith("nanarg") else np.float32), name
    np.testing.assert_array_equal(ops.nancumsum(ALL_NAN, axis=1).numpy()[0], [1.0, 1.0, 4.0])
    np.testing.assert_array_equal(ops.nancumprod(ALL_NAN, axis=1).numpy()[1], [1.0, 1.0, 1.0])
    np.testing.assert_array_equal(
        ops.nanquantile(ALL_NAN, [0.5, 1.0], axis=1).numpy(), [[2.0, np.nan], [3.0, np.nan]]
    )
    assert ops.nanpercentile(ALL_NAN, 50, axis=1, method="lower").numpy()[0] == 1.0
    assert ops.nansum(INTS).dtype == np.int32 and ops.nanmean(INTS).dtype == np.float32
    assert ops.nanmax(INTS).dtype == np.int8 and ops.nancumsum(INTS > 2).dtype == np.int32
    assert ops.nanprod(INTS, axis=1).numpy().tolist() == [6, 0]


def test_the_same_values_and_dtypes_as_keras():
    keras = pytest.importorskip("keras")
    for name in ("nansum", "nanmean", "nanmax", "nanmin", "nanprod", "nanstd", "nanvar",
                 "nanargmax", "nanargmin", "nancumsum", "nancumprod", "nanmedian"):  # fmt: skip
        for data in (X, ALL_NAN, INTS, INTS > 2, ALL_NAN.astype("float16")):
            for axis in (0, 1):
                theirs = keras.ops.convert_to_numpy(getattr(keras.ops, name)(data, axis=axis))
                mine = getattr(ops, name)(data, axis=axis).numpy()
                assert mine.dtype == theirs.dtype and mine.shape == theirs.shape, name
                np.testing.assert_allclose(mine, theirs, rtol=1e-3, err_msg=name)
    for method in ("linear", "lower", "higher", "midpoint"):
        for name, q in (("nanquantile", [0.3, 0.9]), ("nanpercentile", [30, 90])):
            for data in (X, ALL_NAN, INTS):
                theirs = getattr(keras.ops, name)(data, q, axis=1, method=method)
                mine = getattr(ops, name)(data, q, axis=1, method=method).numpy()
                theirs = keras.ops.convert_to_numpy(theirs)
                assert mine.dtype == theirs.dtype and mine.shape == theirs.shape, name
                np.testing.assert_allclose(mine, theirs, rtol=1e-6, err_msg=name)


def _graph(lib):
    x = lib.Input((3, 4), name="x")
    o = lib.ops
    return lib.Model(
        x,
        [
            o.nansum(x, axis=1) + o.nanmean(x, axis=1) + o.nanmax(x, axis=1),
            o.nanmin(x, axis=2) + o.nanstd(x, axis=2) + o.nanvar(x, axis=2),
            o.nanprod(x, axis=-1, keepdims=True) + o.nanmedian(x, axis=-1, keepdims=True),
            o.nancumsum(x, axis=1) + o.nancumprod(x, axis=2),
            o.cast(o.nanargmax(x, axis=1) + o.nanargmin(x, axis=1), "float32"),
            o.nanpercentile(x, 30, axis=1, keepdims=True),
        ],  # fmt: skip
    )


def test_models_of_these_ops_save_and_cross_to_keras(tmp_path):
    assert_saves_and_crosses_to_keras(_graph, np.stack([X, X[::-1]]), tmp_path)


def test_empty_slices_give_nan_and_nanstd_gives_no_nan_gradient_where_it_reads_nothing():
    empty = np.zeros((0, 3), np.float32)
    for name in ("nanmean", "nanvar", "nanstd"):
        assert np.isnan(getattr(ops, name)(empty, axis=0).numpy()).all(), name  # (numpy, Keras)
    x = mk.Variable(np.array([[1.0, np.nan, 3.0], [np.nan] * 3, [np.nan, 2.0, np.nan]], "float32"))
    with mk.GradientTape() as tape:
        std = ops.nanstd(x, axis=1)  # 1, nan (nothing to read), 0 (one value)
        total = ops.sum(ops.where(ops.isnan(std), 0.0, std))
    np.testing.assert_allclose(std.numpy(), [1.0, np.nan, 0.0])
    # (x - mean) / (n std) on the first row, by hand; zeros elsewhere, as Keras on JAX gives
    np.testing.assert_array_equal(
        tape.gradient(total, x).numpy(), [[-0.5, 0, 0.5], [0] * 3, [0] * 3]
    )


def test_float16_variances_are_computed_in_float32_and_given_back_in_float16():
    # (squares of values near 200 overflow float16's sums: var gave inf, as Keras does not)
    x = (np.random.default_rng(0).standard_normal((4, 64)) * 30 + 200).astype(np.float16)
    x[0, 3] = np.nan
    wide = x.astype(np.float64)
    for name, want in [("nanvar", np.nanvar(wide, axis=1)), ("nanmean", np.nanmean(wide, axis=1))]:
        got = getattr(ops, name)(x, axis=1)
        assert got.dtype == np.float16
        np.testing.assert_allclose(got.numpy(), want, rtol=2e-3)
    clean = np.nan_to_num(x, nan=200.0)
    assert ops.var(clean, axis=1).dtype == np.float16 and ops.std(clean, axis=1).dtype == np.float16
    np.testing.assert_allclose(
        ops.var(clean, axis=1).numpy(), np.var(clean.astype(float), axis=1), rtol=2e-3
    )
