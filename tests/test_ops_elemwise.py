"""Keras 3's element-wise math ops: inverse and hyperbolic trigonometry, fabs, reciprocal,
cbrt, exp2, erfc, erfinv, i0, trunc, nan_to_num, copy, hypot, logaddexp(2), divide_no_nan, fmod,
fmax, fmin, heaviside, ldexp, nextafter and the value tests; values, dtypes and gradients by
hand, and against Keras."""

import math
from fractions import Fraction

import numpy as np
import pytest
from finite_differences import check_float32, check_gradients, check_second_order
from op_graphs import assert_same_as_keras, assert_saves_and_crosses_to_keras

import minikeras as mk
from minikeras import ops

RNG = np.random.default_rng(7)
X = RNG.normal(size=(3, 4)).astype("float32")
Y = RNG.normal(size=(1, 4)).astype("float32")  # (broadcasts against X)
UNIT = np.clip(X * 0.4, -0.9, 0.9)  # inside (-1, 1)
POSITIVE = np.abs(X) + 0.5
EXPONENTS = np.array([[2, -1, 0, 3]], "int32")
INTS = np.array([[1, -2], [3, 4]], "int8")

UNARY = {
    "arcsin": UNIT, "arccos": UNIT, "arctan": X, "sinh": X, "cosh": X, "arcsinh": X,
    "arccosh": POSITIVE + 1.0, "arctanh": UNIT, "deg2rad": X, "rad2deg": X, "sinc": X,
    "fabs": X, "reciprocal": POSITIVE, "cbrt": X, "exp2": X, "erfc": X, "erfinv": UNIT, "i0": X * 3,
    "nan_to_num": X, "copy": X,
}  # fmt: skip
BINARY = {
    "arctan2": (X, Y), "hypot": (X, Y), "logaddexp": (X, Y), "logaddexp2": (Y, X),
    "divide_no_nan": (X, POSITIVE[:1]), "fmod": (X * 3, POSITIVE[:1]), "fmax": (X, Y),
    "fmin": (Y, X),
}  # fmt: skip
DIFFERENTIABLE = {
    **{name: (getattr(ops, name), [data]) for name, data in UNARY.items()},
    **{name: (getattr(ops, name), list(data)) for name, data in BINARY.items()},
    "ldexp": (lambda x: ops.ldexp(x, EXPONENTS), [X]),
}


@pytest.mark.parametrize("name", sorted(DIFFERENTIABLE))
def test_gradients_match_finite_differences(name):
    fn, data = DIFFERENTIABLE[name]
    check_gradients(fn, data)
    check_second_order(fn, data)
    check_float32(fn, data)


def _reference(name):
    """numpy's function of the same meaning, computed in float64."""
    special = {
        "divide_no_nan": lambda a, b: np.where(b == 0, 0.0, a / np.where(b == 0, 1.0, b)),
        "erfinv": lambda x: _erfinv_by_bisection(x),
        "erfc": np.vectorize(math.erfc),
    }
    return special.get(name, getattr(np, name, None))


def _erfinv_by_bisection(x):
    erf = np.vectorize(math.erf)
    low, high = np.full(x.shape, -6.0), np.full(x.shape, 6.0)
    for _ in range(80):
        middle = (low + high) / 2
        below = erf(middle) < x
        low, high = np.where(below, middle, low), np.where(below, high, middle)
    return (low + high) / 2


@pytest.mark.parametrize("name", sorted({*UNARY, *BINARY}))
def test_values_against_numpy_in_float64(name):
    data = UNARY[name] if name in UNARY else BINARY[name]
    data = [data] if name in UNARY else list(data)
    wide = [d.astype(np.float64) for d in data]
    mine = getattr(ops, name)(*data).numpy()
    assert mine.dtype == np.float32, name
    np.testing.assert_allclose(mine, _reference(name)(*wide), rtol=2e-6, atol=1e-6)


KEEP_INTEGERS = ("copy", "nan_to_num", "fmod", "fmax", "fmin")
FLOAT_RESULTS = [name for name in [*UNARY, *BINARY] if name not in KEEP_INTEGERS]


@pytest.mark.parametrize("name", sorted(FLOAT_RESULTS) + ["heaviside", "nextafter"])
def test_integers_and_booleans_give_floatx_and_float16_stays(name):
    arity, op = (1 if name in UNARY else 2), getattr(ops, name)
    with np.errstate(all="ignore"):  # (arcsin(4) and friends are NaN: only dtypes matter here)
        for value in (INTS, INTS.astype("int32"), INTS > 0):
            assert op(*[value] * arity).dtype == np.float32, (name, value.dtype)
        half = np.ones(2, "float16") * 0.5
        assert op(*[half] * arity).dtype == np.float16
        if arity == 2:
            assert op(INTS, 2).dtype == op(X, 2).dtype == np.float32
            assert op(half, INTS[0]).dtype == np.float16


def test_dtypes_that_keep_integers():
    assert ops.trunc(INTS).dtype == ops.copy(INTS).dtype == ops.nan_to_num(INTS).dtype == np.int8
    assert ops.absolute(INTS).dtype == np.int8 and ops.fabs(INTS).dtype == np.float32
    for name in ("fmod", "fmax", "fmin"):
        assert getattr(ops, name)(INTS, INTS.astype("int32")).dtype == np.int32
        assert getattr(ops, name)(INTS, np.uint8(3)).dtype == np.int16
        assert getattr(ops, name)(INTS, 2).dtype == np.int8
        assert getattr(ops, name)(INTS, 2.5).dtype == np.float32
    np.testing.assert_array_equal(ops.fmod(INTS, 3).numpy(), [[1, -2], [0, 1]])
    flags = np.array([True, False])
    assert ops.fmod(flags, flags[:1]).dtype == ops.fmod(flags, 2).dtype == np.int32  # (Keras's)
    assert (
        ops.ldexp(INTS, 1).dtype == np.float32
        and ops.ldexp(np.ones(1, "float16"), 2).dtype == "float16"
    )


def test_special_values_by_hand():
    np.testing.assert_array_equal(ops.sinc([0.0, 1.0, -2.0]).numpy().round(6), [1, 0, 0])
    np.testing.assert_array_equal(ops.cbrt([-27.0, 8.0, 0.0]).numpy(), [-3, 2, 0])
    np.testing.assert_array_equal(ops.trunc([-1.7, -0.2, 2.9]).numpy(), [-1, -0, 2])
    np.testing.assert_array_equal(ops.exp2([10, -2]).numpy(), [1024, 0.25])
    assert ops.erfinv([1.0, -1.0]).numpy().tolist() == [np.inf, -np.inf]
    with np.errstate(invalid="ignore"):
        assert np.isnan(ops.erfinv([1.5, np.nan]).numpy()).all()
    np.testing.assert_allclose(ops.erfinv([0.5]).numpy(), [0.4769362762044699], rtol=1e-7)
    far = np.array([-3.0, 6.0, 12.0, 30.0])  # (erfc's tail, where 1 - erf(x) is all rounding)
    np.testing.assert_allclose(ops.erfc(far).numpy(), [math.erfc(v) for v in far], rtol=1e-9)
    big = np.float32(2e38)
    np.testing.assert_allclose(ops.hypot(big, big).numpy(), 2e38 * np.sqrt(2), rtol=1e-6)
    np.testing.assert_allclose(ops.logaddexp(1000.0, 1000.0).numpy(), 1000 + np.log(2))
    np.testing.assert_allclose(ops.logaddexp2([1.0, 3.0], 3.0).numpy(), [np.log2(10), 4], 1e-6)
    np.testing.assert_array_equal(
        ops.divide_no_nan([1.0, -2.0, 0.0], [0.0, 4.0, 0.0]), [0, -0.5, 0]
    )
    np.testing.assert_array_equal(ops.fmod([-7.5, 7.5], 2.0).numpy(), [-1.5, 1.5])
    np.testing.assert_array_equal(ops.fmax([np.nan, 1.0], [2.0, np.nan]).numpy(), [2, 1])
    np.testing.assert_array_equal(ops.fmin([np.nan, 1.0], [2.0, np.nan]).numpy(), [2, 1])
    np.testing.assert_array_equal(ops.heaviside([-2.0, 0.0, 3.0], [7.0]).numpy(), [0, 7, 1])
    np.testing.assert_array_equal(ops.ldexp([1.5, 1.0], np.array([3, -2])).numpy(), [12, 0.25])
    assert float(ops.nextafter(np.float32(1), 0.0)) == 1 - np.finfo("float32").epsneg
    finite = ops.nan_to_num(np.array([np.nan, np.inf, -np.inf], "float32")).numpy()
    assert finite.tolist() == [0, np.finfo("float32").max, np.finfo("float32").min]
    assert ops.nan_to_num([np.nan], nan=2.0, posinf=1.0).numpy().tolist() == [2.0]
    np.testing.assert_allclose(ops.rad2deg(ops.deg2rad([90, -45])).numpy(), [90, -45])
    copied, source = ops.copy(X), mk.Tensor(X)
    assert copied.numpy() is not source.numpy() and np.array_equal(copied, X)


def test_value_tests_by_hand():
    values = np.array([-np.inf, -0.0, 0.0, np.inf, np.nan, -2.0], "float32")
    np.testing.assert_array_equal(ops.isneginf(values).numpy(), [1, 0, 0, 0, 0, 0])
    np.testing.assert_array_equal(ops.isposinf(values).numpy(), [0, 0, 0, 1, 0, 0])
    np.testing.assert_array_equal(ops.signbit(values).numpy(), [1, 1, 0, 0, 0, 1])
    assert not ops.isneginf(INTS).numpy().any() and not ops.isposinf(INTS > 0).numpy().any()
    close = ops.isclose([1.0, 1.0, np.nan], [1.000001, 1.1, np.nan], equal_nan=True)
    np.testing.assert_array_equal(close.numpy(), [True, False, True])
    assert ops.isclose([1.0], [1.5], atol=0.6).numpy().tolist() == [True]
    assert ops.allclose(X, X + 1e-7).dtype == np.bool_ and ops.allclose(X, X + 1e-7).shape == ()
    assert not bool(ops.allclose(X, X + 1e-3)) and bool(ops.allclose(X, X + 1e-3, atol=1e-2))
    found = ops.isin(np.array([[1, 2], [3, 4]]), [4, 1])
    np.testing.assert_array_equal(found.numpy(), [[True, False], [False, True]])
    assert ops.isin([1, 5], [5], invert=True).numpy().tolist() == [True, False]
    for op in (ops.isclose, ops.isneginf, ops.signbit, ops.isin):
        assert op(*[X] * (2 if op in (ops.isclose, ops.isin) else 1)).dtype == np.bool_


def _gradient(fn, *values):
    tensors = [mk.Variable(np.asarray(v, "float32")) for v in values]
    with mk.GradientTape() as tape:
        total = ops.sum(fn(*tensors))
    return [None if g is None else g.numpy() for g in tape.gradient(total, tensors)]


def test_gradients_where_finite_differences_cannot_look():
    # divide_no_nan: zero for both operands where the divisor is 0 (Keras's).
    grads = _gradient(ops.divide_no_nan, [3.0, 3.0], [0.0, 2.0])
    np.testing.assert_array_equal(grads[0], [0.0, 0.5])
    np.testing.assert_array_equal(grads[1], [0.0, -0.75])
    # broadcast: the divisor's gradient is summed over the rows it was stretched along
    grads = _gradient(ops.divide_no_nan, [[2.0, 1.0], [4.0, 1.0]], [[2.0, 0.0]])
    np.testing.assert_array_equal(grads[1], [[-1.5, 0.0]])
    assert _gradient(ops.sinc, [0.0])[0].tolist() == [0.0]
    # near 0: the series, not (cos(pi x) - sinc(x)) / x, which cancels (81% off at 1e-4)
    near = np.array([1e-4, 1e-3, 0.0999, 0.1001], np.float64)
    exact = (np.cos(np.pi * near) - np.sinc(near)) / near  # (in float64, where it is fine)
    np.testing.assert_allclose(_gradient(ops.sinc, near.astype("float32"))[0], exact, rtol=2e-6)
    x = mk.Variable([0.0])
    with mk.GradientTape() as outer:
        with mk.GradientTape() as inner:
            value = ops.sum(ops.sinc(x))
        slope = ops.sum(inner.gradient(value, x))
    np.testing.assert_allclose(outer.gradient(slope, x).numpy(), [-(np.pi**2) / 3], rtol=1e-6)
    assert [g.tolist() for g in _gradient(ops.hypot, [0.0], [0.0])] == [[0.0], [0.0]]
    assert _gradient(ops.trunc, [1.5, -2.5])[0].tolist() == [0.0, 0.0]
    assert _gradient(ops.nan_to_num, [1.5, np.inf, np.nan])[0].tolist() == [1.0, 0.0, 0.0]
    grads = _gradient(ops.heaviside, [-1.0, 0.0, 2.0], [0.5, 0.5, 0.5])
    assert grads[0].tolist() == [0.0, 0.0, 0.0] and grads[1].tolist() == [0.0, 1.0, 0.0]
    grads = _gradient(ops.fmax, [1.0, 2.0], [1.0, np.nan])
    assert [g.tolist() for g in grads] == [[0.5, 1.0], [0.5, 0.0]]
    np.testing.assert_array_equal(_gradient(ops.fmod, [7.5], [2.0])[1], [-3.0])
    assert _gradient(ops.nextafter, [1.0], [2.0]) == [None, None]


def _i1_exactly(x, terms=500):
    """I1(x) = sum_k (x/2)^(2k+1) / (k! (k+1)!), in exact fractions, then rounded."""
    half = Fraction(x) / 2
    term = total = half
    for k in range(1, terms):
        term = term * half * half / (k * (k + 1))
        total += term
    return float(total)


def test_i0_gradient_is_i1_on_both_sides_of_its_switch():
    points = np.array([0.0, -1.0, 7.5, 19.0, 21.0, -40.0, 300.0])
    x = mk.Tensor(points)
    with mk.GradientTape() as tape:
        tape.watch(x)
        total = ops.sum(ops.i0(x))
    expected = [_i1_exactly(v) for v in points]
    np.testing.assert_allclose(tape.gradient(total, x).numpy(), expected, rtol=1e-13)


def test_refusals_name_the_op():
    with pytest.raises(ValueError, match=r"hypot: shapes cannot be broadcast.*\(3, 4\) and \(3,\)"):
        ops.hypot(X, np.ones(3, "float32"))
    with pytest.raises(ValueError, match="fmod: shapes cannot be broadcast"):
        ops.fmod(X, np.ones(3, "float32"))
    with pytest.raises(ValueError, match="isclose: shapes cannot be broadcast"):
        ops.isclose(X, np.ones(3))
    with pytest.raises(TypeError, match="ldexp: x2 must be integers .*float32"):
        ops.ldexp(X, X)
    with pytest.raises(TypeError, match="ldexp: x2 must be integers .*float"):
        ops.ldexp(X, 2.0)
    with pytest.raises(ValueError, match="ldexp: shapes cannot be broadcast"):
        ops.ldexp(X, np.ones(3, "int32"))


KERAS_CASES = [
    *((name, (data,), {}) for name, data in UNARY.items()),
    *((name, data, {}) for name, data in BINARY.items()),
    ("arcsin", (INTS * 0,), {}), ("cosh", (INTS,), {}), ("exp2", (INTS,), {}),
    ("trunc", (INTS,), {}), ("trunc", (X * 3,), {}), ("absolute", (INTS,), {}),
    ("fabs", (INTS,), {}), ("reciprocal", (INTS,), {}), ("copy", (INTS,), {}),
    ("nan_to_num", (np.array([np.nan, np.inf, -np.inf, 1], "float32"),), {"nan": 3.0}),
    ("nan_to_num", (INTS,), {}), ("arctan2", (INTS, INTS.astype("int32")), {}),
    ("hypot", (INTS, X[:2, :2]), {}), ("logaddexp", (X, 2), {}), ("fmod", (INTS, 3), {}),
    ("fmod", (INTS, INTS.astype("int32")), {}), ("fmod", (INTS > 0, INTS > -5), {}),
    ("fmax", (INTS, np.uint8(3)), {}),
    ("fmin", (X, 0.5), {}), ("divide_no_nan", (INTS, INTS * 0), {}),
    ("heaviside", (np.array([-1.0, 0.0, 2.0], "float32"), 0.5), {}),
    ("heaviside", (INTS, INTS), {}), ("ldexp", (X, EXPONENTS), {}), ("ldexp", (INTS, 2), {}),
    ("nextafter", (X, Y), {}), ("nextafter", (INTS, 0), {}),
    ("isneginf", (np.array([-np.inf, 1.0, np.inf], "float32"),), {}),
    ("isposinf", (np.array([-np.inf, 1.0, np.inf], "float32"),), {}), ("isposinf", (INTS,), {}),
    ("signbit", (np.array([-0.0, 0.0, -1.0], "float32"),), {}), ("signbit", (INTS,), {}),
    ("isclose", (X, X + 1e-6), {}), ("isclose", (X, Y), {"rtol": 0.5, "atol": 0.1}),
    ("allclose", (X, X + 1e-6), {}), ("allclose", (X, X + 1e-3), {}),
    ("isin", (INTS, np.array([3, -2], "int8")), {}),
    ("isin", (INTS, np.array([1, 4], "int8")), {"invert": True}),
]  # fmt: skip


def test_the_same_values_and_dtypes_as_keras():
    assert_same_as_keras(KERAS_CASES)


def _graph(lib):
    x = lib.Input((3, 4), name="x")
    o = lib.ops
    small = o.tanh(x) * 0.5
    return lib.Model(
        x,
        [
            o.arcsin(small) + o.arccos(small) + o.arctan(x) + o.arctan2(x, 0.5),
            o.sinh(x) + o.cosh(x) + o.arcsinh(x) + o.arccosh(o.abs(x) + 1.5) + o.arctanh(small),
            o.deg2rad(x) + o.rad2deg(x) + o.sinc(x) + o.fabs(x) + o.absolute(x),
            o.reciprocal(o.abs(x) + 1.0) + o.cbrt(x) + o.exp2(x) + o.erfinv(small) + o.erfc(x),
            o.trunc(x * 3) + o.nan_to_num(x, nan=1.0) + o.copy(x) + o.i0(x),
            o.hypot(x, x * 0.5) + o.logaddexp(x, 0.5) + o.logaddexp2(x, x) + o.divide_no_nan(x, x),
            o.fmod(x, small + 1.0) + o.fmax(x, small) + o.fmin(x, small) + o.heaviside(x, small),
            o.ldexp(x, 3) + o.nextafter(x, small),
            o.logical_or(o.isneginf(x), o.isposinf(x)),
            o.logical_and(o.signbit(x), o.isclose(x, small, atol=0.3)),
            o.isin(x, [0.0, 1.0]),
        ],
    )


def test_ops_on_symbolic_tensors_record_keras_nodes_save_and_cross_to_keras(tmp_path):
    model = _graph(mk)
    kinds = {type(op).__name__ for op in model.operations}
    assert {"Arcsin", "Arctan2", "Absolute", "Erfc", "Erfinv", "NanToNum", "DivideNoNan"} <= kinds
    assert {"Isclose", "IsIn", "Logaddexp2", "Deg2rad", "I0"} <= kinds
    assert_saves_and_crosses_to_keras(_graph, X[None], tmp_path)


def test_allclose_records_its_node():
    x = mk.Input((3,))
    node = mk.ops.allclose(x, 1.0, atol=0.5)
    model = mk.Model(x, node)
    assert "AllClose" in {type(op).__name__ for op in model.operations}
    assert bool(model(np.ones((1, 3), "float32") * 1.2)) is True


def test_erf_and_erfc_of_float16_are_computed_wider():
    # (the rational approximations' coefficients overflow float16: erf(0.8) gave 0)
    x = np.array([0.3, 0.8, 0.95, 1.5, -0.9], np.float16)
    want = [math.erf(v) for v in x.astype(float)]
    got = ops.erf(x)
    assert got.dtype == np.float16
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-3)
    np.testing.assert_allclose(ops.erfc(x).numpy(), [1 - w for w in want], rtol=2e-3)
