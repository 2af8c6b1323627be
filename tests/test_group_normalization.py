"""GroupNormalization and UnitNormalization: values against numpy loops, gradients against
central differences, groups=1/-1 against layer and instance normalization, configs, errors."""

import numpy as np
import pytest
from layer_gradients import assert_gradients_match, projection_loss

import minikeras as mk
from minikeras import layers

rng = np.random.default_rng(21)


def group_norm_reference(x, groups, axis, epsilon, gamma, beta):
    """Loops over samples and groups in float64."""
    x = np.moveaxis(np.asarray(x, np.float64), axis, -1)
    out = np.empty_like(x)
    size = x.shape[-1] // groups
    for n in range(x.shape[0]):
        for g in range(groups):
            part = x[n, ..., g * size : (g + 1) * size]
            out[n, ..., g * size : (g + 1) * size] = (part - part.mean()) / np.sqrt(
                part.var() + epsilon
            )
    out = out * gamma + beta
    return np.moveaxis(out, -1, axis)


@pytest.mark.parametrize(
    "shape, groups, axis",
    [((2, 6), 3, -1), ((2, 5, 4), 2, -1), ((2, 3, 3, 8), 4, -1), ((2, 6, 3, 3), 3, 1),
     ((2, 4, 6), -1, -1), ((3, 4, 6), 1, 2)],
)  # fmt: skip
def test_group_norm_matches_loops(shape, groups, axis):
    x = rng.standard_normal(shape).astype("float32") * 3 + 1
    layer = layers.GroupNormalization(
        groups=groups,
        axis=axis,
        gamma_initializer="random_normal",
        beta_initializer="random_normal",
    )
    y = layer(x)
    assert y.dtype == np.float32 and y.shape == shape
    count = shape[axis] if groups == -1 else groups
    expected = group_norm_reference(x, count, axis, 1e-3, layer.gamma.numpy(), layer.beta.numpy())
    np.testing.assert_allclose(y.numpy(), expected, rtol=1e-4, atol=1e-5)


def test_group_norm_by_hand():
    # One group of [1, 3]: mean 2, variance 1; the other [10, 10]: centred to 0.
    layer = layers.GroupNormalization(groups=2, epsilon=1e-8, center=False, scale=False)
    out = layer(np.array([[1.0, 3.0, 10.0, 10.0]])).numpy()
    np.testing.assert_allclose(out[0, :2], [-1.0, 1.0], rtol=1e-6)
    np.testing.assert_array_equal(out[0, 2:], [0.0, 0.0])
    assert layer.weights == []


def test_group_norm_extremes_are_layer_and_instance_norm():
    x = rng.standard_normal((3, 5, 4)).astype("float32")
    one = layers.GroupNormalization(groups=1)(x).numpy()
    layer_norm = layers.LayerNormalization(axis=[1, 2], epsilon=1e-3)(x).numpy()
    np.testing.assert_allclose(one, layer_norm, rtol=1e-4, atol=1e-5)
    instance = layers.GroupNormalization(groups=-1)(x).numpy()
    mean, var = x.mean(axis=1, keepdims=True), x.var(axis=1, keepdims=True)
    np.testing.assert_allclose(instance, (x - mean) / np.sqrt(var + 1e-3), rtol=1e-4, atol=1e-5)


def test_group_norm_gradients_match_finite_differences():
    layer = layers.GroupNormalization(
        groups=2,
        axis=1,
        gamma_initializer="random_normal",
        beta_initializer="random_normal",
        dtype="float64",
    )
    x = rng.standard_normal((2, 4, 3))
    layer(x)
    grads = assert_gradients_match(
        lambda t: projection_loss(layer(t)), [x], [layer.gamma, layer.beta], rtol=1e-4
    )
    assert [g.shape for g in grads] == [(2, 4, 3), (4,), (4,)]


def test_group_norm_config_shapes_and_errors():
    layer = layers.GroupNormalization(groups=-1, axis=1, center=False, name="gn")
    clone = layers.GroupNormalization.from_config(layer.get_config())
    assert clone.get_config() == layer.get_config()
    assert layer.compute_output_shape((None, 4, None)) == (None, 4, None)
    inputs = mk.Input((4, None))
    assert layer(inputs).shape == (None, 4, None)
    assert layer.beta is None and layer.gamma.shape == (4,)
    for bad in (0, -2, 2.0, True):
        with pytest.raises(ValueError, match="`groups` must be a positive int, or -1"):
            layers.GroupNormalization(groups=bad)
    with pytest.raises(ValueError, match=r"groups \(3\) must divide the 4 channels on axis -1"):
        layers.GroupNormalization(3, name="g")(np.ones((2, 4)))
    with pytest.raises(ValueError, match="needs a known size on axis -1"):
        layers.GroupNormalization(2).build((None, None))
    with pytest.raises(ValueError, match="axis 0 must name a channel axis"):
        layers.GroupNormalization(2, axis=0).build((None, 4))
    built = layers.GroupNormalization(2, name="gb")
    built(np.ones((1, 4)))
    with pytest.raises(ValueError, match="gb"):
        built(np.ones((1, 6)))


def test_unit_normalization_by_hand_and_gradients():
    x = np.array([[3.0, 4.0], [1.0, 0.0]])
    np.testing.assert_allclose(layers.UnitNormalization()(x).numpy(), [[0.6, 0.8], [1.0, 0.0]])
    cube = rng.standard_normal((2, 3, 4)).astype("float32")
    out = layers.UnitNormalization(axis=[1, 2])(cube).numpy()
    np.testing.assert_allclose(np.sqrt((out**2).sum(axis=(1, 2))), [1.0, 1.0], rtol=1e-5)
    layer = layers.UnitNormalization(axis=1, dtype="float64")
    assert_gradients_match(lambda t: projection_loss(layer(t)), [rng.standard_normal((2, 3))])


def test_unit_normalization_config_and_errors():
    layer = layers.UnitNormalization(axis=[1, 2], name="u")
    assert (
        layers.UnitNormalization.from_config(layer.get_config()).get_config() == layer.get_config()
    )
    assert layer.compute_output_shape((None, 3, None)) == (None, 3, None)
    with pytest.raises(TypeError, match="`axis` must be an int or a list of ints"):
        layers.UnitNormalization(axis="1")
    with pytest.raises(
        ValueError, match=r"'u': axis 2 is out of range for inputs of shape \(2, 3\)"
    ):
        layer(np.ones((2, 3)))
