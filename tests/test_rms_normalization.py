"""`RMSNormalization`: values by hand and by numpy, gradients by finite differences, configs,
and Keras 3's layer with the same weights (`.keras` files both ways) when `keras` is installed."""

import os

import numpy as np
import pytest
from finite_differences import check_float32, check_gradients

import minikeras as mk
from minikeras import layers


def _by_numpy(x, scale, axes, epsilon):
    x = np.asarray(x, np.float64)
    mean_square = np.mean(x**2, axis=tuple(axes), keepdims=True)
    shape = [1] * x.ndim
    for axis in axes:
        shape[axis] = x.shape[axis]
    return x / np.sqrt(mean_square + epsilon) * np.reshape(scale, shape)


def test_values_by_hand():
    # rms of (3, -4) is sqrt(12.5); of (1, 1) is 1
    out = layers.RMSNormalization(epsilon=0.0)(np.array([[3.0, -4.0], [1.0, 1.0]])).numpy()
    root = np.sqrt(12.5)
    np.testing.assert_allclose(out, [[3.0 / root, -4.0 / root], [1.0, 1.0]], rtol=1e-6)
    assert out.dtype == np.float32


def test_keras_defaults_and_the_weight():
    layer = layers.RMSNormalization()
    assert (layer.axis, layer.epsilon) == (-1, 1e-6)
    layer.build((None, 5, 3))
    assert [w.name for w in layer.weights] == ["scale"] and layer.scale.shape == (3,)
    np.testing.assert_array_equal(layer.scale.numpy(), np.ones(3, "float32"))
    assert layer.scale.trainable


@pytest.mark.parametrize(
    "axis, shape",
    [(-1, (2, 3, 4)), (1, (2, 3, 4)), ([1, 2], (2, 3, 4)), ([-1, 1], (2, 3, 4, 5)), (0, (3, 2))],
)
def test_any_axes_match_numpy_with_a_trained_scale(axis, shape):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape).astype("float32")
    layer = layers.RMSNormalization(axis=axis, epsilon=1e-3)
    layer.build(shape)
    given = sorted(axis if isinstance(axis, list) else [axis])  # (Keras's order: -1 before 1)
    assert layer.scale.shape == tuple(shape[a] for a in given)
    scale = rng.standard_normal(layer.scale.shape).astype("float32")
    layer.scale.assign(scale)
    axes = [a % len(shape) for a in given]
    by_axis = np.transpose(scale, np.argsort(axes))  # (numpy's reference wants them increasing)
    np.testing.assert_allclose(
        layer(x).numpy(), _by_numpy(x, by_axis, sorted(axes), 1e-3), rtol=1e-5, atol=1e-6
    )


def test_gradients_match_finite_differences_and_stay_float32():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((3, 4))
    layer = layers.RMSNormalization(epsilon=1e-3, dtype="float64")
    layer.build(x.shape)
    layer.scale.assign(rng.standard_normal(4))
    check_gradients(layer, [x])
    check_float32(layers.RMSNormalization(), [x.astype("float32")])


def test_a_zero_input_gives_zeros_not_nan():
    out = layers.RMSNormalization()(np.zeros((2, 3), "float32")).numpy()
    np.testing.assert_array_equal(out, np.zeros((2, 3)))


def test_half_precision_inputs_keep_their_dtype():
    x = np.array([[300.0, -400.0]], "float16")  # (squares overflow float16)
    out = layers.RMSNormalization(dtype="float16")(x).numpy()
    assert out.dtype == np.float16
    np.testing.assert_allclose(out, [[3 / np.sqrt(12.5), -4 / np.sqrt(12.5)]], rtol=1e-3)


def test_output_shape_with_unknown_sizes_and_the_symbolic_call():
    layer = layers.RMSNormalization(axis=[1, 2])
    assert layer.compute_output_shape((None, None, 4)) == (None, None, 4)
    outputs = layers.RMSNormalization()(mk.Input((None, 6)))
    assert outputs.shape == (None, None, 6)


def test_bad_arguments_and_inputs_are_refused():
    with pytest.raises(ValueError, match="axis"):
        layers.RMSNormalization(axis="last")
    with pytest.raises(ValueError, match="epsilon"):
        layers.RMSNormalization(epsilon=-1.0)
    with pytest.raises(ValueError, match="out of range"):
        layers.RMSNormalization(axis=3).compute_output_shape((None, 4))
    layer = layers.RMSNormalization()
    layer(np.ones((2, 4), "float32"))
    with pytest.raises(ValueError, match=r"RMSNormalization .* got shape \(2, 5\)"):
        layer(np.ones((2, 5), "float32"))


def test_config_round_trip_and_a_saved_model(tmp_path):
    layer = layers.RMSNormalization(axis=[1, 2], epsilon=1e-4, name="rms")
    config = layer.get_config()
    assert config["axis"] == [1, 2] and config["epsilon"] == 1e-4
    assert layers.RMSNormalization.from_config(config).get_config() == config
    inputs = mk.Input((3, 4))
    model = mk.Model(inputs, layer(inputs))
    layer.scale.assign(np.arange(12, dtype="float32").reshape(3, 4))
    model.save(tmp_path / "m.keras")
    loaded = mk.saving.load_model(tmp_path / "m.keras")
    x = np.random.default_rng(2).standard_normal((2, 3, 4)).astype("float32")
    np.testing.assert_allclose(loaded.predict(x, verbose=0), model.predict(x, verbose=0))


def _keras():
    os.environ.setdefault("KERAS_BACKEND", "jax")
    return pytest.importorskip("keras")


@pytest.mark.parametrize("axis", [-1, [1, 2]])
def test_keras_computes_the_same_with_the_same_scale(axis):
    keras = _keras()
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 3, 4)).astype("float32")
    ours, theirs = layers.RMSNormalization(axis=axis), keras.layers.RMSNormalization(axis=axis)
    ours.build(x.shape)
    theirs.build(x.shape)
    assert tuple(theirs.scale.shape) == ours.scale.shape
    scale = rng.standard_normal(ours.scale.shape).astype("float32")
    ours.scale.assign(scale)
    theirs.scale.assign(scale)
    np.testing.assert_allclose(ours(x).numpy(), np.asarray(theirs(x)), rtol=1e-5, atol=1e-6)


def test_keras_files_cross_both_ways(tmp_path):
    keras = _keras()
    rng = np.random.default_rng(4)
    x = rng.standard_normal((2, 3, 4)).astype("float32")
    scale = rng.standard_normal((4,)).astype("float32")

    inputs = mk.Input((3, 4))
    ours = mk.Model(inputs, layers.RMSNormalization(epsilon=1e-3)(inputs))
    ours.layers[-1].scale.assign(scale)
    ours.save(tmp_path / "ours.keras")
    loaded = keras.saving.load_model(tmp_path / "ours.keras")
    np.testing.assert_allclose(np.asarray(loaded.layers[-1].scale), scale)
    np.testing.assert_allclose(
        np.asarray(loaded.predict(x, verbose=0)), ours.predict(x, verbose=0), atol=1e-5
    )

    inputs = keras.Input((3, 4))
    theirs = keras.Model(inputs, keras.layers.RMSNormalization(epsilon=1e-3)(inputs))
    theirs.layers[-1].scale.assign(scale)
    theirs.save(tmp_path / "theirs.keras")
    back = mk.saving.load_model(tmp_path / "theirs.keras")  # (Keras's config holds axis=[-1])
    np.testing.assert_allclose(back.layers[-1].scale.numpy(), scale)
    np.testing.assert_allclose(
        back.predict(x, verbose=0), np.asarray(theirs.predict(x, verbose=0)), atol=1e-5
    )


@pytest.mark.parametrize("axis", [[-1, 1], [1, 3], [-2, -1]])
def test_the_weight_is_shaped_as_keras_shapes_it(axis):
    keras = _keras()
    theirs = keras.layers.RMSNormalization(axis=axis)
    theirs.build((2, 3, 4, 5))
    ours = layers.RMSNormalization(axis=axis)
    ours.build((2, 3, 4, 5))
    assert ours.scale.shape == tuple(theirs.scale.shape)
