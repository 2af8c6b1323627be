"""The random image augmentations: identity outside training, seeds reproduce outputs,
exact transformations worked out by hand (90-degree rotations, whole-pixel shifts,
zooms, fill modes), value ranges, RandomCrop's inference resize, configs, errors."""

import numpy as np
import pytest

import minikeras as mk
from minikeras.layers import (
    RandomBrightness,
    RandomContrast,
    RandomCrop,
    RandomFlip,
    RandomRotation,
    RandomTranslation,
    RandomZoom,
)
from minikeras.layers.preprocessing.augmentation import affine_transform

rng = np.random.default_rng(5)


def images(shape=(3, 5, 6, 2)):
    return rng.uniform(0, 255, shape).astype("float32")


ALL = [
    lambda seed: RandomFlip(seed=seed),
    lambda seed: RandomRotation(0.3, seed=seed),
    lambda seed: RandomTranslation(0.3, 0.3, seed=seed),
    lambda seed: RandomZoom(0.3, seed=seed),
    lambda seed: RandomContrast(0.5, seed=seed),
    lambda seed: RandomBrightness(0.3, seed=seed),
    lambda seed: RandomCrop(3, 4, seed=seed),
]


@pytest.mark.parametrize("make", ALL)
def test_identity_outside_training_and_seeded_draws_repeat(make):
    x = images()
    layer = make(3)
    if not isinstance(layer, RandomCrop):
        np.testing.assert_array_equal(layer(x, training=False).numpy(), x)
        assert not np.array_equal(layer(x).numpy(), x)  # as in Keras: a plain call augments
    first = [make(3)(x, training=True).numpy() for _ in range(2)]
    np.testing.assert_array_equal(first[0], first[1])  # two layers, one seed: one output
    again = make(3)
    a, b = again(x, training=True).numpy(), again(x, training=True).numpy()
    assert not np.array_equal(a, b)  # the layer's stream moves on
    assert a.dtype == np.float32


def test_a_model_applies_augmentation_only_in_fit():
    model = mk.Sequential([mk.Input((4, 4, 1)), RandomBrightness((0.5, 0.5), value_range=(0, 1))])
    x = np.zeros((2, 4, 4, 1), "float32")
    np.testing.assert_array_equal(model.predict(x, verbose=0), x)
    np.testing.assert_allclose(model(x, training=True).numpy(), x + 0.5)


def test_flip_modes_by_hand():
    image = np.arange(6.0).reshape(1, 2, 3, 1)
    outs = {
        tuple(RandomFlip("horizontal_and_vertical", seed=s)(image, training=True).numpy().ravel())
        for s in range(40)
    }
    expected = {
        tuple(image.ravel()),
        tuple(image[:, :, ::-1].ravel()),
        tuple(image[:, ::-1].ravel()),
        tuple(image[:, ::-1, ::-1].ravel()),
    }
    assert outs == expected  # exactly the four flips, each reached


def test_rotation_by_quarter_turns_by_hand():
    image = np.arange(12.0).reshape(1, 3, 4, 1)
    square = np.arange(9.0).reshape(1, 3, 3, 1)
    ccw = RandomRotation((0.25, 0.25))(square, training=True).numpy()[0, :, :, 0]
    np.testing.assert_allclose(ccw, np.rot90(square[0, :, :, 0]), atol=1e-5)  # counter-clockwise
    cw = RandomRotation((-0.25, -0.25), interpolation="nearest")(square, training=True).numpy()
    np.testing.assert_array_equal(cw[0, :, :, 0], np.rot90(square[0, :, :, 0], -1))
    half = RandomRotation((0.5, 0.5))(image, training=True).numpy()[0, :, :, 0]
    np.testing.assert_allclose(half, image[0, ::-1, ::-1, 0], atol=1e-5)


def test_translation_whole_pixels_with_each_fill_mode():
    row = np.array([1.0, 2.0, 3.0, 4.0]).reshape(1, 1, 4, 1)

    def shifted(fill_mode):
        layer = RandomTranslation(0.0, (0.5, 0.5), fill_mode=fill_mode, fill_value=-1.0)
        return layer(row, training=True).numpy().ravel()  # moves right by 2 pixels

    np.testing.assert_array_equal(shifted("constant"), [-1, -1, 1, 2])
    np.testing.assert_array_equal(shifted("nearest"), [1, 1, 1, 2])
    np.testing.assert_array_equal(shifted("wrap"), [3, 4, 1, 2])
    np.testing.assert_array_equal(shifted("reflect"), [2, 1, 1, 2])  # (b a | a b c d)
    down = RandomTranslation((-0.5, -0.5), 0.0, fill_mode="constant")
    column = np.arange(4.0).reshape(1, 4, 1, 1)
    np.testing.assert_array_equal(down(column, training=True).numpy().ravel(), [2, 3, 0, 0])


def test_zoom_in_and_out_by_hand():
    row = np.arange(5.0).reshape(1, 1, 5, 1)
    # Zoom 1 + z samples the input at center + (1 + z) * (x - center), center = 2.
    zoom_in = RandomZoom(0.0, (-0.5, -0.5))(row, training=True).numpy().ravel()
    np.testing.assert_allclose(zoom_in, [1.0, 1.5, 2.0, 2.5, 3.0])
    zoom_out = RandomZoom(0.0, (1.0, 1.0), fill_mode="constant", fill_value=9.0)
    np.testing.assert_array_equal(zoom_out(row, training=True).numpy().ravel(), [9, 0, 2, 4, 9])
    both = RandomZoom((-0.5, -0.5))(np.ones((1, 5, 5, 1)), training=True)  # width follows height
    np.testing.assert_allclose(both.numpy(), 1.0)


def test_affine_bilinear_between_pixels_by_hand():
    row = np.array([0.0, 10.0, 20.0]).reshape(1, 1, 3, 1)
    half_step = np.array([[1.0, 0, 0.5, 0, 1, 0]])  # column x samples x + 0.5
    out = affine_transform(row, half_step, "bilinear", "nearest")[0, 0, :, 0]
    np.testing.assert_allclose(out, [5.0, 15.0, 20.0])


def test_contrast_and_brightness_by_hand():
    image = np.array([10.0, 20.0, 60.0]).reshape(1, 1, 3, 1)  # mean 30
    out = RandomContrast((0.0, 1.0), seed=0)(image, training=True).numpy().ravel()
    c = (out[2] - 30.0) / 30.0
    assert 1.0 <= c <= 2.0
    expected = np.clip(30.0 + (image.ravel() - 30.0) * c, 0, 255)  # clipped to value_range
    np.testing.assert_allclose(out, expected, rtol=1e-5)
    clipped = RandomContrast((0.0, 0.0), value_range=(15, 50))(image, training=True)
    np.testing.assert_allclose(clipped.numpy().ravel(), [15.0, 20.0, 50.0])
    darker = RandomBrightness((-0.1, -0.1))(image, training=True).numpy().ravel()
    np.testing.assert_allclose(darker, [0.0, 0.0, 34.5], rtol=1e-6)  # -25.5, clipped at 0


def test_contrast_is_per_image_and_channel_mean():
    x = images((4, 3, 3, 2))
    out = RandomContrast(0.5, seed=2, value_range=(-1e9, 1e9))(x, training=True).numpy()
    np.testing.assert_allclose(out.mean(axis=(1, 2)), x.mean(axis=(1, 2)), rtol=1e-4)


def test_random_crop_training_window_and_inference_resize():
    image = np.arange(20.0).reshape(1, 4, 5, 1)
    crops = {
        tuple(RandomCrop(2, 2, seed=s)(image, training=True).numpy().ravel()) for s in range(60)
    }
    windows = {tuple(image[0, r : r + 2, c : c + 2, 0].ravel()) for r in range(3) for c in range(4)}
    assert crops == windows  # every window position, nothing else
    # Inference: the central 4x4 (aspect 1:1) resized to 2x2, i.e. means of 2x2 blocks.
    center = image[0, :, 0:4, 0]
    inference = RandomCrop(2, 2)(image, training=False).numpy()[0, :, :, 0]
    blocks = center.reshape(2, 2, 2, 2).mean(axis=(1, 3))
    np.testing.assert_allclose(inference, blocks)
    assert RandomCrop(2, 2).compute_output_shape((None, 4, 5, 1)) == (None, 2, 2, 1)
    same = RandomCrop(4, 5)(image, training=True).numpy()
    np.testing.assert_array_equal(same, image)


def test_channels_first_and_single_images():
    x = images((2, 3, 4, 4))
    first = RandomRotation((0.25, 0.25), data_format="channels_first")(x, training=True).numpy()
    last = RandomRotation((0.25, 0.25))(x.transpose(0, 2, 3, 1), training=True).numpy()
    np.testing.assert_allclose(first, last.transpose(0, 3, 1, 2), atol=1e-3)
    assert RandomFlip(seed=0)(x[0].transpose(1, 2, 0), training=True).shape == (4, 4, 3)


@pytest.mark.parametrize("make", ALL)
def test_configs_round_trip(make):
    layer = make(7)
    clone = type(layer).from_config(layer.get_config())
    assert clone.get_config() == layer.get_config()
    x = images()
    np.testing.assert_array_equal(
        clone(x, training=True).numpy(), make(7)(x, training=True).numpy()
    )


def test_errors_name_the_layer_and_argument():
    with pytest.raises(ValueError, match="RandomFlip: `mode` must be one of"):
        RandomFlip("diagonal")
    with pytest.raises(ValueError, match="RandomRotation: `fill_mode` must be one of"):
        RandomRotation(0.1, fill_mode="mirror")
    with pytest.raises(ValueError, match="RandomZoom: `interpolation` must be one of"):
        RandomZoom(0.1, interpolation="cubic")
    with pytest.raises(ValueError, match=r"RandomTranslation: `width_factor` must give"):
        RandomTranslation(0.1, (0.5, 0.2))
    with pytest.raises(ValueError, match=r"RandomBrightness: `factor` must give"):
        RandomBrightness(1.5)
    with pytest.raises(ValueError, match=r"RandomContrast: `factor` must be a number in \[0, 1\]"):
        RandomContrast(-0.2)
    with pytest.raises(ValueError, match="RandomContrast: `value_range`"):
        RandomContrast(0.2, value_range=(1, 0))
    with pytest.raises(ValueError, match="RandomCrop: `height` must be an int >= 1"):
        RandomCrop(0, 2)
    with pytest.raises(ValueError, match=r"RandomFlip 'random_flip\w*' expects images of rank"):
        RandomFlip()(np.ones((2, 3)), training=True)
