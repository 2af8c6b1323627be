"""AlphaDropout, GaussianDropout, SpatialDropout1D/3D, Identity and ActivityRegularization:
statistics and exact values with a known draw, identity outside training, seeds, penalties,
configs and errors."""

import numpy as np
import pytest
from layer_gradients import assert_gradients_match, projection_loss

from minikeras import Input, Model, Sequential, layers

rng = np.random.default_rng(5)

ALPHA_P = -1.6732632423543772848170429916717 * 1.0507009873554804934193349852946


@pytest.mark.parametrize(
    "make",
    [lambda: layers.GaussianDropout(0.3), lambda: layers.AlphaDropout(0.3),
     lambda: layers.SpatialDropout1D(0.3), lambda: layers.SpatialDropout3D(0.3)],
)  # fmt: skip
def test_identity_outside_training(make):
    layer = make()
    x = rng.standard_normal(
        (2, 3, 4) if isinstance(layer, layers.SpatialDropout1D) else (2, 2, 2, 2, 3)
    )
    x = x.astype("float32")
    np.testing.assert_array_equal(layer(x).numpy(), x)
    np.testing.assert_array_equal(layer(x, training=False).numpy(), x)
    assert layer.compute_output_shape(x.shape) == x.shape


def test_gaussian_dropout_is_mean_one_noise_of_the_dropout_spread():
    x = np.full((400, 500), 2.0, dtype="float32")
    y = layers.GaussianDropout(0.2, seed=0)(x, training=True).numpy()
    assert y.dtype == np.float32
    factor = y / 2.0
    assert abs(factor.mean() - 1.0) < 0.005
    assert abs(factor.std() - np.sqrt(0.2 / 0.8)) < 0.005
    # Seeded: the same stream again; the noise is multiplied, so gradients pass scaled.
    again = layers.GaussianDropout(0.2, seed=0)(x, training=True).numpy()
    np.testing.assert_array_equal(again, y)


def test_gaussian_dropout_gradient_is_its_noise():
    layer = layers.GaussianDropout(0.4, seed=2, dtype="float64")
    x = rng.standard_normal((3, 4))
    generator = layer._generator
    state = generator.bit_generator.state

    def loss(t):
        generator.bit_generator.state = state  # the same draw at every evaluation
        return projection_loss(layer(t, training=True))

    assert_gradients_match(loss, [x], step=1e-4)


def test_alpha_dropout_matches_its_formula_with_the_same_draw():
    rate = 0.25
    x = rng.standard_normal((50, 40)).astype("float32")
    y = layers.AlphaDropout(rate, seed=7)(x, training=True).numpy()
    keep = np.random.default_rng(7).random(x.shape, dtype=np.float32) >= rate
    a = ((1 - rate) * (1 + rate * ALPHA_P**2)) ** -0.5
    b = -a * ALPHA_P * rate
    expected = a * np.where(keep, x, ALPHA_P) + b
    np.testing.assert_allclose(y, expected, rtol=1e-5, atol=1e-6)
    assert y.dtype == np.float32


def test_alpha_dropout_keeps_zero_mean_unit_variance_and_noise_shape():
    x = rng.standard_normal((2000, 300)).astype("float32")
    y = layers.AlphaDropout(0.1, seed=0)(x, training=True).numpy()
    assert abs(y.mean()) < 0.01 and abs(y.std() - 1.0) < 0.01
    shared = layers.AlphaDropout(0.5, noise_shape=(None, 1, 4), seed=3)
    out = shared(np.zeros((2, 6, 4), "float32"), training=True).numpy()
    assert np.all(out == out[:, :1])  # one draw for all 6 steps


@pytest.mark.parametrize(
    "layer_class, shape",
    [(layers.SpatialDropout1D, (3, 8, 6)), (layers.SpatialDropout3D, (3, 4, 4, 4, 6))],
)
@pytest.mark.parametrize("data_format", ["channels_last", "channels_first"])
def test_spatial_dropout_drops_whole_channels(layer_class, shape, data_format):
    x = np.ones(shape, "float32")
    if data_format == "channels_first":
        x = np.moveaxis(x, -1, 1)
    y = layer_class(0.5, data_format=data_format, seed=0)(x, training=True).numpy()
    if data_format == "channels_first":
        y = np.moveaxis(y, 1, -1)
    flat = y.reshape(shape[0], -1, shape[-1])
    assert set(np.unique(flat)) <= {0.0, 2.0}
    assert np.all(flat == flat[:, :1])
    assert 0 < (flat[:, 0] == 0).mean() < 1


def test_spatial_dropout_errors_and_config():
    with pytest.raises(ValueError, match=r"SpatialDropout1D 's' expects 3-D inputs .*\(2, 3\)"):
        layers.SpatialDropout1D(0.5, name="s")(np.ones((2, 3)), training=True)
    with pytest.raises(ValueError, match=r"SpatialDropout3D 't' expects 5-D inputs"):
        layers.SpatialDropout3D(0.5, name="t").compute_output_shape((None, 4, 4, 3))
    with pytest.raises(ValueError, match="SpatialDropout3D: `data_format` must be"):
        layers.SpatialDropout3D(0.5, data_format="ndhwc")
    for layer in (
        layers.SpatialDropout1D(0.2, seed=1),
        layers.SpatialDropout3D(0.3, "channels_first"),
    ):
        clone = type(layer).from_config(layer.get_config())
        assert clone.get_config() == layer.get_config() and clone.noise_shape == layer.noise_shape


@pytest.mark.parametrize("layer_class", [layers.GaussianDropout, layers.AlphaDropout])
def test_rate_errors_and_config(layer_class):
    for bad in (-0.1, 1.0, "0.5", True):
        with pytest.raises(ValueError, match=f"{layer_class.__name__}: `rate` must be a number in"):
            layer_class(bad)
    layer = layer_class(0.25, seed=4, name="n")
    assert layer_class.from_config(layer.get_config()).get_config() == layer.get_config()


def test_noise_layers_train_in_fit_and_pass_masks():
    ids = Input((4,), dtype="int32")
    x = layers.Embedding(6, 3, mask_zero=True)(ids)
    x = layers.GaussianDropout(0.1, seed=0)(x)
    x = layers.AlphaDropout(0.1, seed=0)(x)
    x = layers.Identity()(x)
    out = layers.LSTM(2)(x)
    model = Model(ids, out)
    model.compile(optimizer="sgd", loss="mse")
    history = model.fit(np.array([[1, 2, 0, 0]] * 4), np.zeros((4, 2)), epochs=2, verbose=0)
    assert np.all(np.isfinite(history.history["loss"]))
    # The mask passes through: padding changes nothing at inference.
    a = model.predict(np.array([[1, 2, 0, 0]]), verbose=0)
    b = model.predict(np.array([[1, 2, 0, 0]]), verbose=0)
    np.testing.assert_array_equal(a, b)


def test_identity_passes_anything_and_masks():
    x = rng.standard_normal((2, 3)).astype("float32")
    np.testing.assert_array_equal(layers.Identity()(x).numpy(), x)
    pair = layers.Identity()([x, x])
    assert isinstance(pair, list) and len(pair) == 2
    assert layers.Identity().compute_output_shape((None, 3)) == (None, 3)
    masked = layers.Masking()(np.array([[[0.0], [1.0]]], "float32"))
    np.testing.assert_array_equal(
        np.asarray(layers.Identity()(masked)._keras_mask), [[False, True]]
    )


def test_activity_regularization_adds_its_penalty():
    layer = layers.ActivityRegularization(l1=0.1, l2=0.01)
    x = np.array([[1.0, -2.0], [3.0, 0.0]], "float32")
    np.testing.assert_array_equal(layer(x).numpy(), x)
    (penalty,) = layer.losses
    np.testing.assert_allclose(float(penalty), (0.1 * 6 + 0.01 * 14) / 2, rtol=1e-6)  # per sample
    model = Sequential([Input((2,)), layers.Dense(2), layers.ActivityRegularization(l2=1.0)])
    model(x)
    assert len(model.losses) == 1
    config = layer.get_config()
    assert "activity_regularizer" not in config and (config["l1"], config["l2"]) == (0.1, 0.01)
    assert layers.ActivityRegularization.from_config(config).get_config() == config
    with pytest.raises(ValueError, match="l1"):
        layers.ActivityRegularization(l1=-1.0)
