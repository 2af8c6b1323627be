"""The colour augmentation layers (`RandomGrayscale`, `RandomInvert`, `Solarization`,
`RandomPosterization`, `AutoContrast`): values by hand, training against inference, the
probabilities they draw, seeds, configs, and Keras 3 on the settings that draw nothing
random (`.keras` files both ways) when `keras` is installed."""

import os

import numpy as np
import pytest

import minikeras as mk
from minikeras import layers


def _images(seed=0, shape=(4, 5, 6, 3), high=255.0):
    return np.random.default_rng(seed).uniform(0, high, shape).astype("float32")


def _changed(before, after):
    """Which images of a batch a layer changed."""
    return np.abs(after - before).reshape(len(before), -1).max(axis=1) > 1e-4


# name -> (a layer that changes every image when training, its inputs)
ALWAYS = {
    "RandomGrayscale": lambda: layers.RandomGrayscale(factor=1.0),
    "RandomInvert": lambda: layers.RandomInvert(factor=(1.0, 1.0)),
    "Solarization": lambda: layers.Solarization(),
    "RandomPosterization": lambda: layers.RandomPosterization(factor=(2, 2)),
}


@pytest.mark.parametrize("name", sorted(ALWAYS))
def test_inference_passes_images_through_and_training_changes_them(name):
    layer, x = ALWAYS[name](), _images()
    np.testing.assert_array_equal(layer(x, training=False).numpy(), x)
    for training in (None, True):  # (as in Keras, a call without `training` augments)
        assert _changed(x, layer(x, training=training).numpy()).all()
    model = mk.Sequential([mk.Input(x.shape[1:]), layer])
    np.testing.assert_array_equal(model.predict(x, verbose=0), x)


def test_grayscale_by_hand_and_its_probability():
    x = np.array([[[[10.0, 20.0, 30.0]]]], "float32")
    luma = 0.2989 * 10 + 0.5870 * 20 + 0.1140 * 30
    out = layers.RandomGrayscale(1.0)(x, training=True).numpy()
    np.testing.assert_allclose(out, np.full((1, 1, 1, 3), luma), rtol=1e-6)
    many = np.tile(x, (4000, 1, 1, 1))
    chosen = _changed(many, layers.RandomGrayscale(0.3, seed=1)(many, training=True).numpy())
    assert abs(chosen.mean() - 0.3) < 0.03
    assert not _changed(many, layers.RandomGrayscale(0.0)(many, training=True).numpy()).any()
    gray = np.ones((2, 3, 3, 1), "float32")
    np.testing.assert_array_equal(layers.RandomGrayscale(1.0)(gray, training=True).numpy(), gray)
    with pytest.raises(ValueError, match="1 or 3 channels"):
        layers.RandomGrayscale(1.0)(np.ones((1, 2, 2, 2), "float32"), training=True)
    with pytest.raises(ValueError, match="factor"):
        layers.RandomGrayscale(1.5)


def test_grayscale_reads_channels_first():
    x = _images(shape=(2, 4, 4, 3))
    ours = layers.RandomGrayscale(1.0, data_format="channels_first")
    out = ours(np.transpose(x, (0, 3, 1, 2)), training=True).numpy()
    expected = layers.RandomGrayscale(1.0)(x, training=True).numpy()
    np.testing.assert_allclose(np.transpose(out, (0, 2, 3, 1)), expected, rtol=1e-6)


def test_invert_subtracts_from_the_top_of_the_range_with_the_drawn_probability():
    x = np.array([[[[0.25]]], [[[1.0]]]], "float32")
    out = layers.RandomInvert(factor=(1.0, 1.0), value_range=(0, 1))(x, training=True).numpy()
    np.testing.assert_allclose(out.ravel(), [0.75, 0.0])
    many = np.full((4000, 1, 1, 1), 10.0, "float32")
    # p ~ U(0, 1), then inverted if a second uniform draw is below p: half of them
    chosen = _changed(many, layers.RandomInvert(seed=2)(many, training=True).numpy())
    assert abs(chosen.mean() - 0.5) < 0.03
    chosen = _changed(many, layers.RandomInvert(0.2, seed=3)(many, training=True).numpy())
    assert abs(chosen.mean() - 0.1) < 0.02  # (mean of U(0, 0.2))


def test_solarization_by_hand():
    x = np.array([[[[0.5]]], [[[200.0]]]], "float32")
    np.testing.assert_allclose(
        layers.Solarization()(x, training=True).numpy().ravel(), [254.5, 55.0]
    )
    layer = layers.Solarization(threshold_factor=(1.0, 1.0))  # threshold in [1, 255]
    np.testing.assert_allclose(layer(x, training=True).numpy().ravel()[0], 0.5)
    # an addition in [1, 255] (Keras leaves the lower bound unscaled), clipped at 255, then
    # inverted (threshold 0): the top of the range gives 0, 0.5 at most 255 - 128.5
    layer = layers.Solarization(addition_factor=(1.0, 1.0), value_range=(0, 1))
    out = layer(np.full((3, 2, 2, 1), 1.0, "float32"), training=True).numpy()
    np.testing.assert_allclose(out, 0.0, atol=1e-7)
    out = layer(np.full((200, 1, 1, 1), 0.5, "float32"), training=True).numpy()
    assert out.max() <= 126.5 / 255 + 1e-6 and out.min() >= 0.0
    with pytest.raises(ValueError, match="threshold_factor"):
        layers.Solarization(threshold_factor=2.0)
    with pytest.raises(ValueError, match="value_range"):
        layers.Solarization(value_range=(1, 1))


def test_posterization_by_hand():
    x = np.array([[[[100.0]]], [[[255.0]]], [[[3.0]]]], "float32")
    out = layers.RandomPosterization(factor=(2, 2))(x, training=True).numpy().ravel()
    np.testing.assert_array_equal(out, [64.0, 192.0, 0.0])  # steps of 2 ** 6
    out = layers.RandomPosterization(factor=(1, 1), value_range=(0, 1))(
        np.array([[[[0.6]]], [[[0.4]]]], "float32"), training=True
    ).numpy()
    np.testing.assert_allclose(out.ravel(), [128 / 255, 0.0], rtol=1e-6)
    # factor 5 means bits drawn from {1, 2, 3, 4}: at most 4 bits, so multiples of 16
    out = layers.RandomPosterization(5, seed=4)(_images(shape=(50, 4, 4, 1)), training=True)
    assert not np.any(out.numpy() % 16)
    with pytest.raises(ValueError, match="factor"):
        layers.RandomPosterization(9)


def test_auto_contrast_stretches_each_channel_always():
    x = np.array([[[[10.0, 7.0]], [[30.0, 7.0]], [[20.0, 7.0]]]], "float32")  # (1, 3, 1, 2)
    layer = layers.AutoContrast()
    for training in (None, True):
        out = layer(x, training=training).numpy()
        np.testing.assert_allclose(out[..., 0].ravel(), [0.0, 255.0, 127.5])
        np.testing.assert_array_equal(out[..., 1], x[..., 1])  # constant: left alone
    out = layers.AutoContrast(value_range=(-1, 1))(np.array([[[[-0.5]], [[0.5]]]], "float32"))
    np.testing.assert_allclose(out.numpy().ravel(), [-1.0, 1.0])


@pytest.mark.parametrize("name", sorted(ALWAYS))
def test_a_seed_gives_the_same_draws(name):
    x = _images(seed=5, shape=(64, 2, 2, 3))
    make = {
        "RandomGrayscale": lambda: layers.RandomGrayscale(0.5, seed=7),
        "RandomInvert": lambda: layers.RandomInvert(seed=7),
        "Solarization": lambda: layers.Solarization(0.5, 0.5, seed=7),
        "RandomPosterization": lambda: layers.RandomPosterization((1, 8), seed=7),
    }[name]
    first, second = make(), make()
    one, two = first(x, training=True).numpy(), second(x, training=True).numpy()
    np.testing.assert_array_equal(one, two)
    assert not np.array_equal(first(x, training=True).numpy(), one)  # the stream moves on


@pytest.mark.parametrize(
    "layer",
    [
        layers.RandomGrayscale(0.2, seed=1),
        layers.RandomInvert((0.1, 0.4), value_range=(0, 1), seed=2),
        layers.Solarization((0.1, 0.2), 0.5, value_range=[0, 1], seed=3),
        layers.RandomPosterization((2, 6), value_range=(0, 1)),
        layers.AutoContrast(value_range=(0, 1)),
    ],
    ids=lambda layer: type(layer).__name__,
)
def test_config_round_trip_and_shapes(layer):
    config = layer.get_config()
    clone = type(layer).from_config(config)
    assert clone.get_config() == config
    assert layer.compute_output_shape((None, 3, None, 3)) == (None, 3, None, 3)
    assert layer(mk.Input((None, None, 3))).shape == (None, None, None, 3)
    assert layer(np.zeros((0, 4, 4, 3), "float32"), training=True).shape == (0, 4, 4, 3)


def _keras():
    os.environ.setdefault("KERAS_BACKEND", "jax")
    return pytest.importorskip("keras")


# name -> settings that draw nothing that matters, in both libraries
DETERMINISTIC = {
    "RandomGrayscale": ({"factor": 1.0}, 255.0),
    "RandomInvert": ({"factor": (1.0, 1.0), "value_range": (0, 1)}, 1.0),
    "Solarization": ({"value_range": (0, 1)}, 1.0),
    "RandomPosterization": ({"factor": (3, 3)}, 255.0),
    "AutoContrast": ({"value_range": (0, 1)}, 1.0),
}


@pytest.mark.parametrize("name", sorted(DETERMINISTIC))
def test_keras_computes_the_same(name):
    keras = _keras()
    options, high = DETERMINISTIC[name]
    x = _images(seed=6, high=high)
    for training in (False, True):
        ours = getattr(layers, name)(**options)(x, training=training).numpy()
        theirs = np.asarray(getattr(keras.layers, name)(**options)(x, training=training))
        np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-4 * high)


def test_keras_files_cross_both_ways(tmp_path):
    keras = _keras()
    x = _images(seed=8)

    def build(api):
        inputs = api.Input((5, 6, 3))
        y = api.layers.RandomGrayscale(0.3, seed=1)(inputs)
        y = api.layers.RandomInvert((0.2, 0.6))(y)
        y = api.layers.Solarization(0.1, (0.2, 0.5))(y)
        y = api.layers.RandomPosterization(4)(y)
        return api.Model(inputs, api.layers.AutoContrast()(y))

    ours = build(mk)
    ours.save(tmp_path / "ours.keras")
    loaded = keras.saving.load_model(tmp_path / "ours.keras")
    expected = ours.predict(x, verbose=0)
    np.testing.assert_allclose(np.asarray(loaded.predict(x, verbose=0)), expected, atol=1e-3)
    assert loaded.layers[3].addition_factor == (0, 0.1)

    theirs = build(keras)
    theirs.save(tmp_path / "theirs.keras")
    back = mk.saving.load_model(tmp_path / "theirs.keras")
    np.testing.assert_allclose(
        back.predict(x, verbose=0), np.asarray(theirs.predict(x, verbose=0)), atol=1e-3
    )
    assert [type(layer).__name__ for layer in back.layers[1:]] == [
        "RandomGrayscale", "RandomInvert", "Solarization", "RandomPosterization", "AutoContrast"
    ]  # fmt: skip
