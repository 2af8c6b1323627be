"""Keras 3's normalizing ops and their neighbours: normalize, moments, batch_normalization,
layer_normalization, rms_normalization, psnr, multi_hot; values by hand, gradients, Keras."""

import numpy as np
import pytest
from finite_differences import check_float32, check_gradients, check_second_order
from op_graphs import assert_saves_and_crosses_to_keras

from minikeras import ops

RNG = np.random.default_rng(5)
X = RNG.normal(size=(2, 3, 4)).astype("float32")
VECTOR = RNG.normal(size=4).astype("float32")
INTS = np.array([[1, 2, 3], [4, 5, 7]], "int32")

DIFFERENTIABLE = {
    "normalize": (lambda x: ops.normalize(x), [X]),
    "normalize_axes": (lambda x: ops.normalize(x, axis=(0, 2)), [X]),
    "normalize_order1": (lambda x: ops.normalize(x, axis=1, order=1), [X]),
    "normalize_order3": (lambda x: ops.normalize(x, order=3), [X]),
    "moments": (lambda x: ops.stack(ops.moments(x, axes=[0, 1])), [X]),
    "batch_normalization": (
        lambda x, m, v, o, s: ops.batch_normalization(x, m, v, 2, offset=o, scale=s),
        [X, VECTOR, np.abs(VECTOR) + 0.5, VECTOR[::-1], VECTOR * 2],
    ),
    "batch_normalization_axis1_unscaled": (  # (one primitive with its own gradients)
        lambda x, m, v: ops.batch_normalization(x, m, v, 1, epsilon=0.1),
        [X, VECTOR[:3], np.abs(VECTOR[:3]) + 0.5],
    ),
    "layer_normalization": (
        lambda x, g, b: ops.layer_normalization(x, gamma=g, beta=b),
        [X, VECTOR, VECTOR[::-1]],
    ),
    "layer_normalization_axes": (
        lambda x, g: ops.layer_normalization(x, gamma=g, axis=[1, 2]),
        [X, X[0]],
    ),
    "rms_normalization": (lambda x, s: ops.rms_normalization(x, scale=s), [X, VECTOR]),
    "psnr": (lambda a, b: ops.psnr(a, b, max_val=2.0), [X, X[::-1]]),
}


@pytest.mark.parametrize("name", sorted(DIFFERENTIABLE))
def test_gradients_match_finite_differences(name):
    fn, data = DIFFERENTIABLE[name]
    check_gradients(fn, data)
    check_second_order(fn, data)
    check_float32(fn, data)


def test_values_by_hand():
    np.testing.assert_allclose(ops.normalize([[3.0, 4.0]]).numpy(), [[0.6, 0.8]], rtol=1e-6)
    np.testing.assert_allclose(ops.normalize([1.0, -3.0], order=1).numpy(), [0.25, -0.75])
    cubes = ops.normalize([[2.0], [2.0]], axis=0, order=3).numpy()
    np.testing.assert_allclose(cubes, np.full((2, 1), 2.0 / 16.0 ** (1 / 3)), rtol=1e-6)
    assert ops.normalize(3.0).shape == (1,)  # (a scalar is a vector of one, as in Keras)
    np.testing.assert_array_equal(ops.normalize(np.zeros(2, "float32")).numpy(), [0.0, 0.0])
    mean, variance = ops.moments([[1.0, 2.0], [3.0, 6.0]], axes=0)
    np.testing.assert_allclose(mean.numpy(), [2.0, 4.0])
    np.testing.assert_allclose(variance.numpy(), [1.0, 4.0])
    mean, variance = ops.moments(INTS, axes=[0, 1], keepdims=True, synchronized=True)
    assert mean.shape == variance.shape == (1, 1) and mean.dtype == np.float32
    np.testing.assert_allclose(float(mean[0, 0]), 22 / 6, rtol=1e-6)
    x = np.array([[1.0, 10.0], [3.0, 30.0]], "float32")
    normalized = ops.batch_normalization(x, [2.0, 20.0], [1.0, 100.0], axis=1, epsilon=0.0)
    np.testing.assert_allclose(normalized.numpy(), [[-1.0, -1.0], [1.0, 1.0]])
    shifted = ops.batch_normalization(x, [2.0, 1.0], [1.0, 4.0], 0, [1.0, 0.0], [2.0, 1.0], 0.0)
    np.testing.assert_allclose(shifted.numpy(), [[-1.0, 17.0], [1.0, 14.5]])
    layer = ops.layer_normalization([[1.0, 3.0]], gamma=[2.0, 1.0], beta=[0.0, 5.0], epsilon=0.0)
    np.testing.assert_allclose(layer.numpy(), [[-2.0, 6.0]])
    rms = ops.rms_normalization([[3.0, 4.0]], scale=[1.0, 2.0], epsilon=0.0)
    np.testing.assert_allclose(rms.numpy(), np.array([[3.0, 8.0]]) / np.sqrt(12.5), rtol=1e-6)
    np.testing.assert_allclose(float(ops.psnr([0.0, 1.0], [0.0, 0.9], 1.0)), 23.0103, rtol=1e-5)
    assert float(ops.psnr(INTS, INTS, 255)) == np.inf
    hot = ops.multi_hot([[0, 2, -1], [1, 1, 9]], num_classes=4)  # (-1 and 9: nothing set)
    np.testing.assert_array_equal(hot.numpy(), [[1, 0, 1, 0], [0, 1, 0, 0]])
    assert hot.dtype == np.float32 and ops.multi_hot([3], num_tokens=4).shape == (4,)
    assert ops.multi_hot(INTS, 8, dtype="int32").dtype == np.int32


def test_dtypes_follow_keras():
    half = X.astype("float16")
    for result in (
        *ops.moments(half, axes=[0]),
        ops.layer_normalization(half),
        ops.rms_normalization(half),
        ops.normalize(half),
    ):
        assert result.dtype == np.float16
    assert ops.layer_normalization(INTS).dtype == np.int32  # (cast back, as Keras does)
    assert ops.normalize(INTS).dtype == ops.moments(INTS, 0)[1].dtype == np.float32
    assert ops.psnr(INTS, INTS // 2, 2.0).dtype == np.float32
    bn = ops.batch_normalization(half, np.zeros(4, "float32"), np.ones(4, "float32"), -1)
    assert bn.dtype == np.float32


def test_rms_scaling_warns_as_keras():
    with pytest.warns(UserWarning, match="rms_scaling=True is deprecated"):
        scaled = ops.layer_normalization(X, gamma=VECTOR, rms_scaling=True)
    expected = X / np.sqrt(X.var(-1, keepdims=True) + 1e-7) * VECTOR
    np.testing.assert_allclose(scaled.numpy(), expected, rtol=1e-5)


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="normalize: order must be an int >= 1"):
        ops.normalize(X, order=0)
    with pytest.raises(TypeError, match="normalize: order=1 takes one axis"):
        ops.normalize(X, axis=(0, 1), order=1)
    with pytest.raises(ValueError, match="moments: axis 3 is out of range"):
        ops.moments(X, axes=[0, 3])
    with pytest.raises(ValueError, match=r"batch_normalization: variance must have shape \(4,\)"):
        ops.batch_normalization(X, VECTOR, np.ones(3), axis=-1)
    with pytest.raises(ValueError, match="layer_normalization: axis .* repeats"):
        ops.layer_normalization(X, axis=[1, -2])
    with pytest.raises(ValueError, match="psnr: x1 and x2 must have the same shape"):
        ops.psnr(X, X[0], 1.0)
    with pytest.raises(ValueError, match="multi_hot: num_classes must be given"):
        ops.multi_hot([0])
    with pytest.raises(ValueError, match="multi_hot: sparse=True is not supported"):
        ops.multi_hot([0], 2, sparse=True)
    with pytest.raises(ValueError, match="multi_hot: labels must be integers"):
        ops.multi_hot([0.5], 2)


def test_the_same_values_and_dtypes_as_keras():
    keras = pytest.importorskip("keras")
    half = X.astype("float16")
    mean, variance, offset, scale = RNG.normal(size=(4, 4)).astype("float32")
    variance = np.abs(variance) + 0.5
    cases = [
        ("normalize", (X,), {}), ("normalize", (half,), {"axis": 1}),
        ("normalize", (X,), {"axis": (0, 2), "epsilon": 0.5}),
        ("normalize", (X,), {"order": 1}), ("normalize", (INTS,), {"order": 3, "axis": 0}),
        ("moments", (X,), {"axes": [0, 2]}), ("moments", (half,), {"axes": 1, "keepdims": True}),
        ("moments", (INTS,), {"axes": [1]}),
        ("batch_normalization", (X, mean, variance, -1), {"offset": offset, "scale": scale}),
        ("batch_normalization", (half, mean[:3], variance[:3], 1), {"epsilon": 0.1}),
        ("layer_normalization", (X,), {"gamma": scale, "beta": offset}),
        ("layer_normalization", (half,), {"axis": [1, 2], "epsilon": 1e-3}),
        ("layer_normalization", (INTS,), {}),
        ("rms_normalization", (X,), {"scale": scale}), ("rms_normalization", (half,), {}),
        ("rms_normalization", (X,), {"axis": [0, 1], "epsilon": 0.1}),
        ("psnr", (X, X * 0.5, 2.0), {}), ("psnr", (INTS, INTS // 2, 255), {}),
        ("multi_hot", (INTS, 8), {}), ("multi_hot", (INTS - 2,), {"num_classes": 4, "axis": 0}),
        ("multi_hot", (np.array([0, 3]), 5), {"dtype": "int32"}),
    ]  # fmt: skip
    for name, args, kwargs in cases:
        theirs = getattr(keras.ops, name)(*args, **kwargs)
        mine = getattr(ops, name)(*args, **kwargs)
        for got, want in zip(*[(t,) if not isinstance(t, tuple) else t for t in (mine, theirs)]):
            want = keras.ops.convert_to_numpy(want)
            got = got.numpy()
            assert got.dtype == want.dtype and got.shape == want.shape, (name, kwargs)
            tolerance = 2e-3 if got.dtype == np.float16 else 1e-5
            np.testing.assert_allclose(got, want, rtol=tolerance, atol=tolerance, err_msg=name)


def _graph(lib):
    x = lib.Input((3, 4), name="x")
    o = lib.ops
    mean, variance = o.moments(x, axes=[1], keepdims=False)
    ones = np.ones(4, "float32")
    return lib.Model(
        x,
        [
            o.normalize(x, axis=1, order=2, epsilon=1e-6),
            mean,
            variance,
            o.batch_normalization(x, ones * 0.5, ones * 2.0, axis=-1, offset=ones, scale=ones),
            o.layer_normalization(x, gamma=ones * 3.0, beta=ones, epsilon=1e-3),
            o.rms_normalization(x, scale=ones * 2.0, axis=-1),
            o.psnr(x, x * 0.5, 2.0),
        ],  # fmt: skip
    )


def test_models_of_these_ops_save_and_cross_to_keras(tmp_path):
    assert_saves_and_crosses_to_keras(_graph, X, tmp_path, atol=1e-6)


def _multi_hot_graph(lib):
    labels = lib.Input((2,), dtype="int32")
    return lib.Model(labels, lib.ops.multi_hot(labels, num_classes=5))


def test_multi_hot_node_saves_and_crosses_to_keras(tmp_path):
    labels = np.array([[0, 2], [3, 3]], "int32")
    assert_saves_and_crosses_to_keras(_multi_hot_graph, labels, tmp_path, rtol=0.0)
