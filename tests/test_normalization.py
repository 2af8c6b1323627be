"""BatchNormalization and LayerNormalization against numpy written out by hand.

Forward values against the textbook formulas; gradients (through the batch
statistics too) against central differences in float64; the moving
statistics follow `moving * momentum + batch * (1 - momentum)` in training
only; a frozen BatchNormalization runs in inference mode and fit leaves it alone.
"""

import numpy as np
import pytest
from layer_gradients import assert_gradients_match, projection_loss

import minikeras
from minikeras import GradientTape, Model, Sequential, Tensor
from minikeras.layers import BatchNormalization, Dense, Input, LayerNormalization

rng = np.random.default_rng(7)


def numpy_normalize(x, axes, gamma, beta, epsilon, mean=None, variance=None):
    """`(x - mean) / sqrt(variance + epsilon) * gamma + beta`, moments over `axes`."""
    if mean is None:
        mean = x.mean(axis=axes, keepdims=True)
        variance = ((x - mean) ** 2).mean(axis=axes, keepdims=True)
    return (x - mean) / np.sqrt(variance + epsilon) * gamma + beta


def randomized(layer, x):
    """Builds `layer` on `x` and gives its weights non-trivial values."""
    layer(x)
    for weight in layer.weights:
        low = 0.5 if "variance" in weight.name or weight.name == "gamma" else -1.0
        weight.assign(rng.uniform(low, low + 1.0, weight.shape))
    return layer


# ----------------------------------------------------------- BatchNormalization


@pytest.mark.parametrize("shape, axis", [((6, 3), -1), ((4, 5, 5, 3), -1), ((4, 3, 5), 1)])
def test_batch_norm_training_normalizes_with_batch_statistics(shape, axis):
    x = (rng.standard_normal(shape) * 3 + 2).astype("float32")
    bn = randomized(BatchNormalization(axis=axis), x)
    gamma, beta = bn.gamma.numpy(), bn.beta.numpy()
    broadcast = [1] * len(shape)
    broadcast[axis] = shape[axis]
    reduced = tuple(a for a in range(len(shape)) if a != axis % len(shape))
    expected = numpy_normalize(x, reduced, gamma.reshape(broadcast), beta.reshape(broadcast), 1e-3)
    y = bn(x, training=True)
    assert y.dtype == np.float32 and y.shape == shape
    np.testing.assert_allclose(y.numpy(), expected, rtol=1e-5, atol=1e-5)


def test_batch_norm_inference_uses_moving_statistics():
    x = rng.standard_normal((5, 4)).astype("float32")
    bn = randomized(BatchNormalization(epsilon=0.01), x)
    expected = numpy_normalize(
        x, None, bn.gamma.numpy(), bn.beta.numpy(), 0.01,
        mean=bn.moving_mean.numpy(), variance=bn.moving_variance.numpy(),
    )  # fmt: skip
    for training in (None, False):
        np.testing.assert_allclose(bn(x, training=training).numpy(), expected, rtol=1e-5)


def test_moving_statistics_update_in_training_only():
    x1 = rng.standard_normal((8, 3)) * 2 + 1
    x2 = rng.standard_normal((8, 3)) - 3
    bn = BatchNormalization(momentum=0.9, dtype="float64")
    bn(x1)  # inference: built, statistics untouched
    np.testing.assert_array_equal(bn.moving_mean.numpy(), np.zeros(3))
    np.testing.assert_array_equal(bn.moving_variance.numpy(), np.ones(3))
    mean, variance = np.zeros(3), np.ones(3)
    for x in (x1, x2):
        bn(x, training=True)
        mean = mean * 0.9 + x.mean(axis=0) * 0.1
        variance = variance * 0.9 + x.var(axis=0) * 0.1  # biased, as Keras 3
        np.testing.assert_allclose(bn.moving_mean.numpy(), mean, rtol=1e-12)
        np.testing.assert_allclose(bn.moving_variance.numpy(), variance, rtol=1e-12)
    bn(x1, training=False)
    bn(x1)
    np.testing.assert_allclose(bn.moving_mean.numpy(), mean, rtol=1e-12)


def test_moving_statistics_are_non_trainable_weights_in_keras_order():
    bn = BatchNormalization()
    bn(np.zeros((2, 4)))
    assert [w.name for w in bn.weights] == ["gamma", "beta", "moving_mean", "moving_variance"]
    assert [w.name for w in bn.trainable_weights] == ["gamma", "beta"]
    assert [w.name for w in bn.non_trainable_weights] == ["moving_mean", "moving_variance"]
    assert all(w.shape == (4,) for w in bn.weights)
    bare = BatchNormalization(center=False, scale=False)
    bare(np.zeros((2, 4)))
    assert bare.gamma is None and bare.beta is None and bare.trainable_weights == []


def test_moving_update_is_not_recorded_by_the_tape():
    bn = BatchNormalization(dtype="float64")
    x = Tensor(rng.standard_normal((6, 2)))
    with GradientTape() as tape:
        tape.watch(x)
        loss = projection_loss(bn(x, training=True))
    grads = tape.gradient(loss, [bn.gamma, bn.moving_mean, bn.moving_variance])
    assert grads[0] is not None and grads[1] is None and grads[2] is None


def test_frozen_batch_norm_uses_moving_statistics_even_in_training():
    x = rng.standard_normal((6, 3)).astype("float32")
    bn = randomized(BatchNormalization(), x)
    before = bn.get_weights()
    inference = bn(x).numpy()
    bn.trainable = False
    np.testing.assert_array_equal(bn(x, training=True).numpy(), inference)
    for old, new in zip(before, bn.get_weights()):
        np.testing.assert_array_equal(old, new)


def test_fit_trains_batch_norm_and_leaves_a_frozen_one_alone():
    minikeras.utils.set_random_seed(0)
    x = rng.standard_normal((64, 4)).astype("float32") * 2 + 3
    y = rng.standard_normal((64, 1)).astype("float32")

    def model(frozen):
        bn = BatchNormalization()
        net = Sequential([Input(shape=(4,)), bn, Dense(1)])
        bn.trainable = not frozen
        net.compile(optimizer="sgd", loss="mse")
        return net, bn

    trained, bn = model(frozen=False)
    trained.fit(x, y, epochs=1, batch_size=16, verbose=0)
    assert not np.allclose(bn.gamma.numpy(), 1.0)
    assert not np.allclose(bn.moving_mean.numpy(), 0.0)

    frozen, bn = model(frozen=True)
    before = bn.get_weights()
    frozen.fit(x, y, epochs=1, batch_size=16, verbose=0)
    for old, new in zip(before, bn.get_weights()):
        np.testing.assert_array_equal(old, new)


@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_gradients_match_finite_differences(training):
    x = rng.standard_normal((5, 2, 3)) * 2 + 1
    bn = randomized(BatchNormalization(dtype="float64"), x)
    assert_gradients_match(
        lambda t: projection_loss(bn(t, training=training)), [x], [bn.gamma, bn.beta]
    )


def test_batch_norm_config_round_trip():
    bn = BatchNormalization(axis=1, momentum=0.9, epsilon=1e-5, center=False,
                            gamma_initializer="zeros", name="bn")  # fmt: skip
    clone = BatchNormalization.from_config(bn.get_config())
    assert clone.get_config() == bn.get_config()
    assert clone.axis == 1 and clone.momentum == 0.9 and not clone.center


def test_batch_norm_errors_name_the_layer_and_shapes():
    with pytest.raises(ValueError, match="`axis` must be an int"):
        BatchNormalization(axis=[1, 2])
    with pytest.raises(ValueError, match="`momentum` must be in"):
        BatchNormalization(momentum=1.5)
    with pytest.raises(ValueError, match=r"'bn_a': axis 2 is out of range .*\(3, 4\)"):
        BatchNormalization(axis=2, name="bn_a")(np.zeros((3, 4)))
    bn = BatchNormalization(name="bn_b")
    bn(np.zeros((3, 4)))
    with pytest.raises(ValueError, match=r"'bn_b' was built for .*\(\?, 4\).* got shape \(3, 5\)"):
        bn(np.zeros((3, 5)))
    with pytest.raises(ValueError, match="needs a known size on axis -1"):
        BatchNormalization()(Input(shape=(None,)))


def test_batch_norm_in_a_functional_model_with_unknown_batch():
    inputs = Input(shape=(3, 2))
    model = Model(inputs, BatchNormalization(axis=1)(inputs))
    assert model(np.ones((7, 3, 2))).shape == (7, 3, 2)


# ----------------------------------------------------------- LayerNormalization


@pytest.mark.parametrize("axis", [-1, [1, 2], 1])
def test_layer_norm_matches_numpy(axis):
    x = (rng.standard_normal((4, 3, 5)) * 2 + 1).astype("float32")
    ln = randomized(LayerNormalization(axis=axis), x)
    axes = tuple(a % 3 for a in (axis if isinstance(axis, list) else [axis]))
    broadcast = [x.shape[a] if a in axes else 1 for a in range(3)]
    expected = numpy_normalize(
        x, axes, ln.gamma.numpy().reshape(broadcast), ln.beta.numpy().reshape(broadcast), 1e-3
    )
    y = ln(x, training=True)
    assert y.dtype == np.float32
    np.testing.assert_allclose(y.numpy(), expected, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(ln(x).numpy(), y.numpy())  # no running statistics
    assert ln.gamma.shape == tuple(x.shape[a] for a in axes)


def test_layer_norm_gradients_match_finite_differences():
    x = rng.standard_normal((3, 2, 4)) * 2 + 1
    ln = randomized(LayerNormalization(axis=[1, 2], dtype="float64"), x)
    assert_gradients_match(lambda t: projection_loss(ln(t)), [x], [ln.gamma, ln.beta])


def test_layer_norm_without_center_and_scale_has_no_weights():
    ln = LayerNormalization(center=False, scale=False, epsilon=0.0)
    y = ln(np.array([[1.0, 2.0, 3.0]])).numpy()
    np.testing.assert_allclose(y, [[-1.2247449, 0.0, 1.2247449]], rtol=1e-6)
    assert ln.weights == []


def test_layer_norm_config_and_errors():
    ln = LayerNormalization(axis=[1, 2], epsilon=1e-6, scale=False, name="ln")
    clone = LayerNormalization.from_config(ln.get_config())
    assert clone.get_config() == ln.get_config() and clone.axis == [1, 2]
    with pytest.raises(ValueError, match="`axis` must be an int or a list of ints"):
        LayerNormalization(axis="last")
    with pytest.raises(ValueError, match="names an axis twice"):
        LayerNormalization(axis=[1, -1])(np.zeros((2, 3)))
    ln = LayerNormalization(name="ln_c")
    ln(np.zeros((2, 3)))
    with pytest.raises(ValueError, match=r"'ln_c' was built for .* got shape \(2, 4\)"):
        ln(np.zeros((2, 4)))


def test_layer_norm_rms_scaling_divides_by_the_standard_deviation_uncentered():
    with pytest.warns(UserWarning, match="rms_scaling=True is deprecated in Keras 3"):
        layer = LayerNormalization(epsilon=0.0, rms_scaling=True, center=True, scale=False)
    out = layer(np.array([[1.0, 3.0], [2.0, 6.0]], "float32"))
    # Variances 1 and 4: each row divided by its standard deviation, not centered.
    np.testing.assert_allclose(out.numpy(), [[1.0, 3.0], [1.0, 3.0]], rtol=1e-6)
    assert [w.name for w in layer.weights] == ["gamma"] and layer.beta is None  # as Keras
    layer.gamma.assign(np.array([2.0, 0.5], "float32"))
    np.testing.assert_allclose(layer(np.array([[1.0, 3.0]])).numpy(), [[2.0, 1.5]], rtol=1e-6)


@pytest.mark.filterwarnings("ignore:LayerNormalization. rms_scaling")
def test_layer_norm_rms_scaling_gradients_config_and_keras():
    x = rng.standard_normal((2, 3, 4)) + 1.0
    layer = LayerNormalization(axis=[1, 2], rms_scaling=True, dtype="float64")
    randomized(layer, x)
    expected = x / np.sqrt(x.var(axis=(1, 2), keepdims=True) + 1e-3) * layer.gamma.numpy()
    np.testing.assert_allclose(layer(x).numpy(), expected, rtol=1e-10)
    assert_gradients_match(lambda t: projection_loss(layer(t)), [x], layer.weights, rtol=1e-5)
    config = layer.get_config()
    assert config["rms_scaling"] is True
    assert LayerNormalization.from_config(config).get_config() == config
    assert LayerNormalization().get_config()["rms_scaling"] is False

    keras = pytest.importorskip("keras")
    theirs = keras.layers.LayerNormalization(axis=[1, 2], rms_scaling=True)
    theirs(x.astype("float32"))
    theirs.set_weights(layer.get_weights())
    ours = LayerNormalization.from_config({**config, "dtype": "float32"})
    ours(x)
    ours.set_weights(layer.get_weights())
    np.testing.assert_allclose(
        ours(x.astype("float32")).numpy(),
        keras.ops.convert_to_numpy(theirs(x.astype("float32"))),
        rtol=1e-5,
        atol=1e-6,
    )
