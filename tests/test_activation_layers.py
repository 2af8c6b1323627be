"""ReLU, LeakyReLU, PReLU, ELU and Softmax layers: values by hand, PReLU's gradients against
central differences, masks, configs and errors."""

import numpy as np
import pytest
from layer_gradients import assert_gradients_match, projection_loss

from minikeras import Input, Model, initializers, layers, ops

rng = np.random.default_rng(3)


def relu_reference(x, max_value=None, negative_slope=0.0, threshold=0.0):
    out = np.where(x > threshold, x, negative_slope * (x - threshold))
    return out if max_value is None else np.minimum(out, max_value)


@pytest.mark.parametrize(
    "kwargs",
    [{}, {"max_value": 6.0}, {"negative_slope": 0.1}, {"threshold": 0.5},
     {"max_value": 1.0, "negative_slope": 0.2, "threshold": 0.3}],
)  # fmt: skip
def test_relu_matches_its_formula(kwargs):
    x = np.linspace(-3, 8, 23).astype("float32")
    out = layers.ReLU(**kwargs)(x)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out.numpy(), relu_reference(x, **kwargs), rtol=1e-6, atol=1e-7)


def test_relu_by_hand_and_errors():
    x = np.array([-2.0, 0.5, 1.0, 3.0])
    # slope 0.5 below threshold 1, cap 2: -1.5, -0.25, 0 (at the threshold), 2
    out = layers.ReLU(max_value=2, negative_slope=0.5, threshold=1)(x).numpy()
    np.testing.assert_allclose(out, [-1.5, -0.25, 0.0, 2.0])
    for argument in ("max_value", "negative_slope", "threshold"):
        with pytest.raises(ValueError, match=f"ReLU: `{argument}` must be a number >= 0"):
            layers.ReLU(**{argument: -1})
    with pytest.raises(ValueError, match="`negative_slope` must be a number >= 0, got None"):
        layers.ReLU(negative_slope=None)


def test_leaky_relu_and_elu_by_hand():
    x = np.array([-2.0, 0.0, 3.0])
    np.testing.assert_allclose(layers.LeakyReLU()(x).numpy(), [-0.6, 0.0, 3.0], rtol=1e-6)
    np.testing.assert_allclose(
        layers.LeakyReLU(negative_slope=0.1)(x).numpy(), [-0.2, 0.0, 3.0], rtol=1e-6
    )
    np.testing.assert_allclose(
        layers.ELU(alpha=0.5)(x).numpy(), [0.5 * (np.exp(-2) - 1), 0.0, 3.0], rtol=1e-6
    )
    with pytest.raises(ValueError, match="LeakyReLU: `negative_slope` must be a number >= 0"):
        layers.LeakyReLU(-0.1)
    with pytest.warns(UserWarning, match="`alpha` is deprecated"):
        older = layers.LeakyReLU(alpha=0.1)  # Keras 2's name, still taken by Keras 3
    assert older.get_config()["negative_slope"] == 0.1 and "alpha" not in older.get_config()
    np.testing.assert_allclose(older(x).numpy(), [-0.2, 0.0, 3.0], rtol=1e-6)
    with pytest.raises(ValueError, match="ELU: `alpha` must be a number"):
        layers.ELU("1")


def test_prelu_alpha_shape_and_values():
    x = rng.standard_normal((2, 3, 4, 5)).astype("float32")
    layer = layers.PReLU(alpha_initializer="random_normal", shared_axes=[1, 2])
    out = layer(x).numpy()
    assert layer.alpha.shape == (1, 1, 5)
    alpha = layer.alpha.numpy()
    np.testing.assert_allclose(out, np.where(x >= 0, x, alpha * x), rtol=1e-6)
    # Starts as ReLU with Keras's zeros initializer; a single int shares one axis.
    plain = layers.PReLU(shared_axes=1)
    np.testing.assert_array_equal(plain(x).numpy(), np.maximum(x, 0))
    assert plain.alpha.shape == (1, 4, 5)


def test_prelu_gradients_match_finite_differences():
    layer = layers.PReLU(
        alpha_initializer=initializers.RandomUniform(0.1, 0.5), shared_axes=[1], dtype="float64"
    )
    x = rng.standard_normal((3, 4, 2))
    x[np.abs(x) < 0.05] = 0.3  # keep off the kink
    layer(x)
    grads = assert_gradients_match(lambda t: projection_loss(layer(t)), [x], [layer.alpha])
    assert grads[1].shape == (1, 2)


def test_prelu_trains_its_alpha():
    inputs = Input((3,))
    model = Model(inputs, layers.PReLU()(inputs))
    model.compile(optimizer="sgd", loss="mse")
    x = -np.ones((8, 3), dtype="float32")
    model.fit(x, 0.5 * x, epochs=3, verbose=0)
    # d(mse)/d(alpha) < 0 at alpha = 0 for target -0.5: alpha moves up.
    assert np.all(model.layers[-1].alpha.numpy() > 0)


def test_prelu_errors_and_config():
    with pytest.raises(ValueError, match=r"shared_axes \[3\] must be in \[1, 2\] .*\(None, 4, 5\)"):
        layers.PReLU(shared_axes=3).build((None, 4, 5))
    with pytest.raises(ValueError, match="needs known sizes on the axes not in shared_axes"):
        layers.PReLU().build((None, None, 5))
    layer = layers.PReLU(alpha_regularizer="l2", shared_axes=(1,), name="p")
    layer.build((None, None, 5))
    assert layer.alpha.shape == (1, 5)
    clone = layers.PReLU.from_config(layer.get_config())
    assert clone.get_config() == layer.get_config()
    with pytest.raises(
        ValueError, match=r"PReLU .p. expected inputs with axis 2 5, got shape \(2, 3, 4\)"
    ):
        layer(np.ones((2, 3, 4)))


def test_softmax_with_a_mask_by_hand():
    x = np.log(np.array([[1.0, 2.0, 5.0], [1.0, 1.0, 1.0]]))
    mask = np.array([[True, False, True], [False, False, False]])
    out = layers.Softmax()(x, mask=mask).numpy()
    # Row 0: 1/6 and 5/6 with the masked entry 0; row 1 all masked: zeros.
    np.testing.assert_allclose(out, [[1 / 6, 0, 5 / 6], [0, 0, 0]], rtol=1e-6)
    # A float mask counts above 0.5, and a mask broadcasts from the right.
    out = layers.Softmax()(x, mask=np.array([1.0, 0.0, 1.0])).numpy()
    np.testing.assert_allclose(out[1], [0.5, 0, 0.5], rtol=1e-6)
    with pytest.raises(ValueError, match=r"mask shape \(2,\) for inputs of shape \(2, 3\)"):
        layers.Softmax(name="s")(x, mask=np.ones(2, bool))


def test_softmax_over_several_axes():
    x = rng.standard_normal((2, 3, 4)).astype("float32")
    out = layers.Softmax(axis=[1, 2])(x).numpy()
    expected = np.exp(x) / np.exp(x).sum(axis=(1, 2), keepdims=True)
    np.testing.assert_allclose(out, expected, rtol=1e-5)
    np.testing.assert_allclose(
        layers.Softmax(axis=1)(x).numpy(), np.exp(x) / np.exp(x).sum(1, keepdims=True), rtol=1e-5
    )


@pytest.mark.parametrize(
    "layer",
    [layers.ReLU(max_value=3.0, name="r"), layers.LeakyReLU(0.2), layers.ELU(0.7),
     layers.Softmax(axis=[1, 2])],
)  # fmt: skip
def test_configs_round_trip_and_shapes_pass_through(layer):
    clone = type(layer).from_config(layer.get_config())
    assert clone.get_config() == layer.get_config()
    assert layer.compute_output_shape((None, 3, None)) == (None, 3, None)
    x = rng.standard_normal((2, 3, 4)).astype("float32")
    np.testing.assert_allclose(clone(x).numpy(), layer(x).numpy())
    assert ops.sum(layer(x)).dtype == np.float32
