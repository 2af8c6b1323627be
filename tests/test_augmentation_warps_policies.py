"""The warps (`RandomShear`, `RandomPerspective`, `RandomElasticTransform`) and the policies
(`RandAugment`, `AugMix`): by hand, against Keras 3 given the same draws (its
`transform_images`, its elastic op with the same noise), identities, probabilities, and
for every new augmentation layer configs, shapes and `.keras` files crossing both ways."""

import json
import os

import numpy as np
import pytest

import minikeras as mk
from minikeras import layers
from minikeras.layers.preprocessing.composite_augment import (
    _RAND_AUGMENT_ORDER,
    augmentation_steps,
)
from minikeras.layers.preprocessing.random_geometry import homography


def _images(seed=0, shape=(3, 6, 7, 3), high=255.0):
    return np.random.default_rng(seed).uniform(0, high, shape).astype("float32")


def _keras():
    os.environ.setdefault("KERAS_BACKEND", "jax")
    return pytest.importorskip("keras")


def _changed(before, after):
    return np.abs(after - before).reshape(len(before), -1).max(axis=1) > 1e-3


class _Scripted:
    """A numpy generator whose named draws return scripted answers, in turn."""

    def __init__(self, **answers):
        self._answers = {name: list(values) for name, values in answers.items()}
        self._rng = np.random.default_rng(0)

    def __getattr__(self, name):
        if name in self._answers:
            return lambda *args, **kwargs: np.asarray(self._answers[name].pop(0))
        return getattr(self._rng, name)


def test_shear_by_hand_and_its_draws():
    image = np.arange(12.0, dtype="float32").reshape(1, 3, 4, 1)
    layer = layers.RandomShear(fill_mode="constant", interpolation="nearest")
    out = layer.transform_images(image, {"shear_factor": np.array([[0.0, 1.0]])})
    # s_y = 1: pixel (x, y) samples (x, x + y): each column moves up by its index
    expected = np.array([[0, 5, 10, 0], [4, 9, 0, 0], [8, 0, 0, 0]], "float32")
    np.testing.assert_array_equal(out[0, :, :, 0], expected)
    draws = layers.RandomShear(0.3, (0.1, 0.2)).get_random_transformation(
        np.zeros((4000, 2, 2, 1)), np.random.default_rng(1)
    )["shear_factor"]
    assert np.abs(draws[:, 0]).max() <= 0.3 and np.abs(draws[:, 1]).min() >= 0.1
    signs = np.sign(draws[:, 1])  # both axes change sign together, half the time
    assert np.all(np.sign(draws[:, 0]) * signs >= 0) and abs((signs < 0).mean() - 0.5) < 0.03


def test_homography_takes_end_points_to_start_points():
    rng = np.random.default_rng(2)
    start = np.array([[[0.0, 0], [9, 0], [0, 7], [9, 7]]] * 3)
    end = start + rng.uniform(-2, 2, start.shape)
    m = homography(start, end)
    x, y = end[..., 0], end[..., 1]
    scale = m[:, 6:7] * x + m[:, 7:8] * y + 1
    np.testing.assert_allclose(
        (m[:, 0:1] * x + m[:, 1:2] * y + m[:, 2:3]) / scale, start[..., 0], atol=1e-9
    )
    np.testing.assert_allclose(
        (m[:, 3:4] * x + m[:, 4:5] * y + m[:, 5:6]) / scale, start[..., 1], atol=1e-9
    )


def test_warps_match_keras_given_the_same_draws():
    keras = _keras()
    x = _images(seed=3, shape=(2, 6, 7, 3))
    shear = {"shear_factor": np.array([[0.3, -0.2], [-0.45, 0.1]], "float32")}
    for fill_mode in ("reflect", "constant", "wrap", "nearest"):
        for interpolation in ("bilinear", "nearest"):
            options = {"fill_mode": fill_mode, "interpolation": interpolation, "fill_value": 3.0}
            ours = layers.RandomShear(0.5, 0.5, **options).transform_images(x, shear)
            theirs = keras.layers.RandomShear(0.5, 0.5, **options).transform_images(x, shear)
            np.testing.assert_allclose(ours, np.asarray(theirs), atol=2e-3)
    drawn = keras.layers.RandomPerspective(factor=0.7, seed=3).get_random_transformation(x)
    drawn = {key: np.asarray(value) for key, value in drawn.items()}
    for interpolation in ("bilinear", "nearest"):
        options = {"interpolation": interpolation, "fill_value": 2.0}
        ours = layers.RandomPerspective(**options).transform_images(x, drawn)
        theirs = keras.layers.RandomPerspective(**options).transform_images(x, drawn)
        np.testing.assert_allclose(ours, np.asarray(theirs), atol=2e-3)


@pytest.mark.parametrize("fill_mode", ["reflect", "constant", "mirror", "nearest", "wrap"])
def test_elastic_transform_is_keras_op_given_the_same_noise(fill_mode):
    keras = _keras()
    x = _images(seed=4, shape=(2, 24, 20, 3))
    strength = 0.8
    alpha, sigma = 24 * 0.1 * strength, 20 * 0.05 * strength
    theirs = keras.ops.image.elastic_transform(
        x, alpha=alpha, sigma=sigma, fill_mode=fill_mode, fill_value=5.0, seed=7
    )
    # (Keras's jax backend draws the column and row noise from the same key)
    noise = np.asarray(keras.random.normal((2, 24, 20), seed=7))
    layer = layers.RandomElasticTransform(fill_mode=fill_mode, fill_value=5.0)
    drawn = {"apply_transform": np.array([True, False]), "distortion_factor": strength,
             "noise": np.stack([noise, noise])}  # fmt: skip
    ours = layer.transform_images(x, drawn)
    np.testing.assert_allclose(ours[0], np.clip(np.asarray(theirs)[0], 0, 255), atol=2e-3)
    np.testing.assert_array_equal(ours[1], x[1])


# name -> (a layer at its identity setting)
IDENTITY = {
    "RandomShear": lambda: layers.RandomShear(0.0, 0.0),
    "RandomPerspective": lambda: layers.RandomPerspective(scale=0.0),
    "RandomPerspective factor 0": lambda: layers.RandomPerspective(factor=0.0),
    "RandomElasticTransform": lambda: layers.RandomElasticTransform(factor=0.0),
    "RandomElasticTransform scale 0": lambda: layers.RandomElasticTransform(scale=0.0),
    "RandAugment": lambda: layers.RandAugment(num_ops=0),
    "AugMix": lambda: layers.AugMix(chain_depth=0),
}


@pytest.mark.parametrize("name", sorted(IDENTITY))
def test_identity_settings_keep_the_images(name):
    x = _images(seed=5)
    np.testing.assert_allclose(IDENTITY[name]()(x, training=True).numpy(), x, atol=1e-3)


@pytest.mark.parametrize("kind", ["RandomPerspective", "RandomElasticTransform"])
def test_warps_apply_with_the_drawn_probability(kind):
    many = _images(seed=6, shape=(2000, 8, 8, 1))
    out = getattr(layers, kind)(factor=0.5, seed=1)(many, training=True).numpy()
    assert abs(_changed(many, out).mean() - 0.25) < 0.03  # (the mean of U(0, 0.5))


def test_policy_steps_are_kerass_in_kerass_order():
    keras = _keras()
    from keras.src.layers.preprocessing.image_preprocessing import aug_mix

    assert list(_RAND_AUGMENT_ORDER) == keras.layers.RandAugment._AUGMENT_LAYERS
    assert list(augmentation_steps((0, 0.5), (0, 255), "bilinear")) == aug_mix.AUGMENT_LAYERS_ALL
    few = augmentation_steps((0, 0.5), (0, 255), "bilinear", colour_ops=False)
    assert list(few) == aug_mix.AUGMENT_LAYERS


def test_rand_augment_and_aug_mix_match_keras_on_scripted_choices():
    keras = _keras()
    x = _images(seed=7, shape=(1, 6, 7, 3))  # (one image: Keras equalizes over the batch)
    theirs = keras.layers.RandAugment()
    drawn = theirs.get_random_transformation(x)
    indices = [10, 9]  # equalization, then auto contrast
    expected = theirs.transform_images(x, {**drawn, "layer_idxes": np.array(indices)})
    ours = layers.RandAugment().augment(x, _Scripted(integers=[indices]))
    np.testing.assert_allclose(ours, np.asarray(expected), atol=2e-3)

    chains = [[{"layer_name": "equalization", "transformation": None}],
              [{"layer_name": "auto_contrast", "transformation": None},
               {"layer_name": "equalization", "transformation": None}]]  # fmt: skip
    mixing = {"chain_mixing_weights": np.array([0.3, 0.7], "float32"),
              "weight_sample": np.float32(0.25), "chain_transforms": chains}  # fmt: skip
    expected = keras.layers.AugMix(chain_depth=2).transform_images(x, mixing)
    script = _Scripted(dirichlet=[[0.3, 0.7]], beta=[0.25], integers=[[6, 11], [5, 6]])
    ours = layers.AugMix(num_chains=2, chain_depth=2).augment(x, script)
    np.testing.assert_allclose(ours, np.asarray(expected), atol=2e-3)


# name -> (a layer drawing something every call, its image size)
NEW = {
    "Equalization": lambda seed: layers.Equalization(),
    "RandomHue": lambda seed: layers.RandomHue(0.3, seed=seed),
    "RandomSaturation": lambda seed: layers.RandomSaturation((0.2, 0.8), seed=seed),
    "RandomColorJitter": lambda seed: layers.RandomColorJitter(
        (0, 255), 0.1, 0.2, 0.5, 0.1, seed=seed
    ),  # fmt: skip
    "RandomColorDegeneration": lambda seed: layers.RandomColorDegeneration(0.5, seed=seed),
    "RandomSharpness": lambda seed: layers.RandomSharpness(0.7, seed=seed),
    "RandomGaussianBlur": lambda seed: layers.RandomGaussianBlur(0.8, 5, (0.2, 0.9), seed=seed),
    "RandomShear": lambda seed: layers.RandomShear(0.3, (0.1, 0.2), seed=seed),
    "RandomPerspective": lambda seed: layers.RandomPerspective(0.9, 0.4, seed=seed),
    "RandomElasticTransform": lambda seed: layers.RandomElasticTransform(
        0.9, (0.5, 1.0), fill_mode="mirror", seed=seed
    ),  # fmt: skip
    "RandAugment": lambda seed: layers.RandAugment(num_ops=3, factor=0.4, seed=seed),
    "AugMix": lambda seed: layers.AugMix(factor=0.4, alpha=0.5, seed=seed),
}


@pytest.mark.parametrize("name", sorted(NEW))
def test_configs_shapes_seeds_and_inference(name):
    layer = NEW[name](3)
    config = layer.get_config()
    clone = type(layer).from_config(config)
    assert clone.get_config() == config
    assert layer.compute_output_shape((None, 8, None, 3)) == (None, 8, None, 3)
    assert layer(mk.Input((None, None, 3))).shape == (None, None, None, 3)
    assert layer(np.zeros((0, 8, 8, 3), "float32"), training=True).shape == (0, 8, 8, 3)
    x = _images(seed=8, shape=(6, 12, 12, 3))
    np.testing.assert_array_equal(layer(x, training=False).numpy(), x)
    assert layer(x).shape == x.shape  # (training by default, as in Keras)
    one = NEW[name](3)(x).numpy()
    assert one.dtype == np.float32 and one.min() >= 0 and one.max() <= 255
    assert _changed(x, one).any()
    np.testing.assert_array_equal(NEW[name](3)(x, training=True).numpy(), one)
    single = NEW[name](3)(x[0], training=True).numpy()
    assert single.shape == x[0].shape


def test_keras_files_cross_both_ways(tmp_path):
    keras = _keras()
    x = _images(seed=9, shape=(2, 12, 12, 3))

    inputs = mk.Input((12, 12, 3))
    y = inputs
    for make in NEW.values():
        y = make(4)(y)
    ours = mk.Model(inputs, y)
    ours.save(tmp_path / "ours.keras")
    again = mk.saving.load_model(tmp_path / "ours.keras")
    configs = [json.dumps(layer.get_config()) for layer in ours.layers]  # (tuples: lists)
    assert [json.dumps(layer.get_config()) for layer in again.layers] == configs
    loaded = keras.saving.load_model(tmp_path / "ours.keras")
    # (Keras's Equalization gives back its symbolic input, so Keras's graphs leave it out)
    names = [type(layer).__name__ for layer in loaded.layers[1:]]
    assert names == [name for name in NEW if name != "Equalization"]
    np.testing.assert_allclose(np.asarray(loaded.predict(x, verbose=0)), x)  # (inference)
    by_name = {type(layer).__name__: layer for layer in loaded.layers}
    assert by_name["AugMix"].num_chains == 3 and by_name["RandomShear"].x_factor == (-0.3, 0.3)

    inputs = keras.Input((12, 12, 3))
    y = keras.layers.RandomShear(0.3, (0.1, 0.2))(inputs)  # (saved as x_factor (-0.3, 0.3))
    y = keras.layers.RandomGaussianBlur(0.8, 5, (0.2, 0.9))(y)
    y = keras.layers.RandomColorJitter((0, 255), 0.1, 0.2, 0.5, 0.1)(y)
    y = keras.layers.RandAugment(num_ops=3, factor=0.4)(y)
    y = keras.layers.AugMix(factor=0.4, alpha=0.5)(y)
    theirs = keras.Model(inputs, keras.layers.RandomElasticTransform(0.9, 0.5)(y))
    theirs.save(tmp_path / "theirs.keras")
    back = mk.saving.load_model(tmp_path / "theirs.keras")
    np.testing.assert_array_equal(back.predict(x, verbose=0), x)
    shear, blur = back.layers[1], back.layers[2]
    assert shear._x_range == (-0.3, 0.3) and shear._y_range == (0.1, 0.2)
    assert blur.kernel_size == (5, 5) and blur.sigma == (0.2, 0.9)
    assert back.layers[4]._steps[0].__class__.__name__ == "RandomShear"
