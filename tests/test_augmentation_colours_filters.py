"""The colour and filter augmentations (`Equalization`, `RandomHue`, `RandomSaturation`,
`RandomColorJitter`, `RandomColorDegeneration`, `RandomSharpness`, `RandomGaussianBlur`):
values by hand, Keras 3's `transform_images` given the same draws and its outputs on
settings that draw nothing that matters, the probabilities they draw, seeds, formats."""

import os

import numpy as np
import pytest

from minikeras import layers, ops


def rgb_to_hsv(images):
    return ops.image.rgb_to_hsv(images, "channels_last").numpy()


def hsv_to_rgb(images):
    return ops.image.hsv_to_rgb(images, "channels_last").numpy()


def _images(seed=0, shape=(3, 6, 7, 3), high=255.0):
    return np.random.default_rng(seed).uniform(0, high, shape).astype("float32")


def _keras():
    os.environ.setdefault("KERAS_BACKEND", "jax")
    return pytest.importorskip("keras")


def _changed(before, after):
    return np.abs(after - before).reshape(len(before), -1).max(axis=1) > 1e-3


def test_hsv_by_hand_and_back():
    rgb = np.array([[[1.0, 0.0, 0.0], [0.0, 0.5, 0.5], [0.2, 0.2, 0.2], [0.0, 0.0, 0.0]]])
    hsv = rgb_to_hsv(rgb)
    np.testing.assert_allclose(hsv, [[[0, 1, 1], [0.5, 1, 0.5], [0, 0, 0.2], [0, 0, 0]]])
    x = _images(high=1.0)
    np.testing.assert_allclose(hsv_to_rgb(rgb_to_hsv(x)), x, atol=1e-6)


def test_hue_turns_and_wraps():
    red = np.array([[[[255.0, 0.0, 0.0]]]], "float32")
    layer = layers.RandomHue(0.5)
    third = layer.transform_images(red, {"factor": np.array([1 / 3])})  # red -> green
    np.testing.assert_allclose(third.ravel(), [0, 255, 0], atol=1e-3)
    back = layer.transform_images(red, {"factor": np.array([-1 / 3])})  # red -> blue (wraps)
    np.testing.assert_allclose(back.ravel(), [0, 0, 255], atol=1e-3)
    # the drawn turn is +-u/2 with u in factor: factor (1, 1) is always half a turn
    x = _images()
    out = layers.RandomHue((1.0, 1.0), seed=3)(x, training=True).numpy()
    hue_in, hue_out = rgb_to_hsv(x / 255)[..., 0], rgb_to_hsv(out / 255)[..., 0]
    np.testing.assert_allclose(np.mod(hue_out - hue_in + 1e-4, 1.0), 0.5 + 1e-4, atol=1e-3)


def test_saturation_scale_and_keras_reading_of_one_number():
    image = np.array([[[[200.0, 100.0, 50.0]]]], "float32")
    hsv = rgb_to_hsv(image / 255)
    for u in (0.25, 0.5, 0.7):
        out = layers.RandomSaturation((u, u))(image, training=True).numpy()
        expected = hsv.copy()
        expected[..., 1] = np.clip(hsv[..., 1] * u / (1 - u), 0, 1)
        np.testing.assert_allclose(out, hsv_to_rgb(expected) * 255, rtol=1e-5)
    # a number f means [-f, f], as in Keras's code: about half the draws give gray images
    many = np.tile(image, (2000, 1, 1, 1))
    out = layers.RandomSaturation(0.4, seed=2)(many, training=True).numpy()
    gray = np.ptp(out.reshape(len(out), 3), axis=1) < 1e-3
    assert abs(gray.mean() - 0.5) < 0.04
    assert layers.RandomSaturation(0.4)._range == (-0.4, 0.4)


def test_degeneration_and_sharpness_by_hand():
    x = np.array([[[[100.0, 50.0, 0.0]]]], "float32")
    luma = 0.2989 * 100 + 0.5870 * 50
    out = layers.RandomColorDegeneration((1.0, 1.0))(x, training=True).numpy()
    np.testing.assert_allclose(out.ravel(), [luma] * 3, rtol=1e-6)
    out = layers.RandomColorDegeneration((-1.0, -1.0))(x, training=True).numpy()
    np.testing.assert_allclose(out.ravel(), np.clip(2 * x.ravel() - luma, 0, 255), rtol=1e-6)
    one = np.ones((2, 3, 3, 1), "float32")
    np.testing.assert_array_equal(layers.RandomColorDegeneration(1.0)(one).numpy(), one)

    image = np.zeros((1, 3, 3, 1), "float32")
    image[0, 1, 1, 0] = 26.0
    smooth = layers.RandomSharpness((0.0, 0.0))(image, training=True).numpy()[0, :, :, 0]
    np.testing.assert_allclose(smooth, [[2, 2, 2], [2, 10, 2], [2, 2, 2]], rtol=1e-6)
    sharp = layers.RandomSharpness((1.0, 1.0), value_range=(-100, 100))
    out = sharp(image, training=True).numpy()[0, :, :, 0]  # x - (smooth - x)
    np.testing.assert_allclose(out, [[-2, -2, -2], [-2, 42, -2], [-2, -2, -2]], rtol=1e-6)


def test_gaussian_blur_by_hand_and_probability():
    image = np.zeros((1, 5, 5, 1), "float32")
    image[0, 2, 2, 0] = 100.0
    layer = layers.RandomGaussianBlur((1.0, 1.0), kernel_size=(3, 5), sigma=(0.8, 0.8))
    out = layer(image, training=True).numpy()[0, :, :, 0]
    taps = lambda size: np.exp(-0.5 * ((np.arange(size) - size // 2) / (0.8 + 1e-6)) ** 2)  # noqa: E731
    cols, rows = taps(3) / taps(3).sum(), taps(5) / taps(5).sum()
    expected = np.zeros((5, 5))
    expected[:, 1:4] = 100.0 * np.outer(rows, cols)  # 5 taps down the rows, 3 across
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)
    many = np.tile(image, (3000, 1, 1, 1))
    blurred = _changed(many, layers.RandomGaussianBlur(0.5, seed=4)(many).numpy())
    assert abs(blurred.mean() - 0.25) < 0.03  # (the mean of U(0, 0.5))


def test_equalization_by_hand_per_image_and_at_inference():
    image = np.array([[[[0.0], [0.0], [100.0], [200.0]]]], "float32")
    out = layers.Equalization()(image).numpy().ravel()
    # cdf 2, 3, 4 over the used bins; (cdf - 2) * 255 / 2, rounded
    np.testing.assert_allclose(out, [0, 0, 128, 255])
    flat = np.full((1, 2, 2, 1), 7.0, "float32")
    np.testing.assert_array_equal(layers.Equalization()(flat).numpy(), flat)
    pair = np.concatenate([image, flat.reshape(1, 1, 4, 1)])
    np.testing.assert_allclose(layers.Equalization()(pair).numpy()[0], out.reshape(1, 4, 1))
    np.testing.assert_array_equal(layers.Equalization()(image, training=False).numpy(), image)


# name -> (options, factor-free settings: every draw gives the same output)
DETERMINISTIC = {
    "Equalization": {},
    "RandomHue": {"factor": (1.0, 1.0)},
    "RandomSaturation": {"factor": (0.3, 0.3)},
    "RandomColorDegeneration": {"factor": (0.6, 0.6)},
    "RandomSharpness": {"factor": (0.8, 0.8)},
    "RandomGaussianBlur": {"factor": (1.0, 1.0), "kernel_size": 5, "sigma": (0.7, 0.7)},
    "RandomColorJitter": {
        "brightness_factor": (0.1, 0.1),
        "contrast_factor": 0.0,
        "saturation_factor": (0.4, 0.4),
        "hue_factor": (1.0, 1.0),
    },
}


@pytest.mark.parametrize("name", sorted(DETERMINISTIC))
@pytest.mark.parametrize("data_format", ["channels_last", "channels_first"])
def test_keras_computes_the_same(name, data_format):
    keras = _keras()
    if name == "RandomColorJitter" and data_format == "channels_first":
        pytest.skip("Keras's jitter makes its steps channels last whatever its data_format")
    options = {**DETERMINISTIC[name], "data_format": data_format}
    x = _images(seed=6)
    if data_format == "channels_first":
        x = np.transpose(x, (0, 3, 1, 2))
    if name == "Equalization":
        x = x[:1]  # (Keras counts one histogram over the batch; minikeras one per image)
    for inputs in (x, x[0]):
        for training in (False, True):
            ours = getattr(layers, name)(**options)(inputs, training=training).numpy()
            theirs = np.asarray(getattr(keras.layers, name)(**options)(inputs, training=training))
            assert ours.dtype == np.float32 and ours.shape == inputs.shape
            np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=3e-3)


def test_transform_images_matches_keras_given_the_same_draws():
    keras = _keras()
    x = _images(seed=7)
    cases = [
        ("RandomHue", {"factor": 0.5}, {"factor": np.array([0.3, -0.2, 0.45], "float32")}),
        ("RandomSaturation", {"factor": 0.5, "value_range": (0, 1)},
         {"factor": np.array([0.3, 0.9, 0.0], "float32")}),
        ("RandomColorDegeneration", {"factor": 0.5},
         {"factor": np.array([0.4, -0.3, 1.0], "float32").reshape(3, 1, 1, 1)}),
        ("RandomSharpness", {"factor": 0.5}, {"factor": np.array([0.9, 0.1, 0.5], "float32")}),
        ("RandomGaussianBlur", {"kernel_size": (3, 5)},
         {"should_apply_blur": np.array([True, False, True]),
          "blur_factor": np.array([0.7, 1.3], "float32")}),
    ]  # fmt: skip
    for name, options, transformation in cases:
        ours = getattr(layers, name)(**options).transform_images(x, transformation)
        theirs = getattr(keras.layers, name)(**options).transform_images(x, transformation)
        np.testing.assert_allclose(ours, np.asarray(theirs), rtol=1e-5, atol=1e-3, err_msg=name)


# name -> a layer at its identity setting
IDENTITY = {
    "RandomHue": lambda: layers.RandomHue(0.0),
    "RandomSaturation": lambda: layers.RandomSaturation((0.5, 0.5)),
    "RandomColorDegeneration": lambda: layers.RandomColorDegeneration(0.0),
    "RandomSharpness": lambda: layers.RandomSharpness((0.5, 0.5)),
    "RandomGaussianBlur": lambda: layers.RandomGaussianBlur(factor=0.0),
    "RandomColorJitter": lambda: layers.RandomColorJitter(brightness_factor=0.0, hue_factor=0.0),
}


@pytest.mark.parametrize("name", sorted(IDENTITY))
def test_identity_settings_keep_the_images(name):
    x = _images(seed=8)
    np.testing.assert_allclose(IDENTITY[name]()(x, training=True).numpy(), x, atol=2e-3)


# name -> a layer that draws something every call
RANDOM = {
    "RandomHue": lambda seed: layers.RandomHue(0.8, seed=seed),
    "RandomSaturation": lambda seed: layers.RandomSaturation(0.8, seed=seed),
    "RandomColorDegeneration": lambda seed: layers.RandomColorDegeneration(0.8, seed=seed),
    "RandomSharpness": lambda seed: layers.RandomSharpness(1.0, seed=seed),
    "RandomGaussianBlur": lambda seed: layers.RandomGaussianBlur(seed=seed),
    "RandomColorJitter": lambda seed: layers.RandomColorJitter(
        brightness_factor=0.2, contrast_factor=0.3, saturation_factor=0.6, hue_factor=0.3, seed=seed
    ),  # fmt: skip
}


@pytest.mark.parametrize("name", sorted(RANDOM))
def test_inference_seeds_range_and_formats(name):
    x = _images(seed=9, shape=(16, 6, 6, 3))
    layer = RANDOM[name](5)
    np.testing.assert_array_equal(layer(x, training=False).numpy(), x)
    one = layer(x).numpy()  # (training by default, as in Keras)
    assert one.dtype == np.float32 and one.min() >= 0 and one.max() <= 255
    np.testing.assert_array_equal(RANDOM[name](5)(x, training=True).numpy(), one)
    assert not np.array_equal(layer(x, training=True).numpy(), one)  # the stream moves on
    first = RANDOM[name](6)
    channels_first = type(first).from_config(
        {**first.get_config(), "data_format": "channels_first"}
    )
    out = channels_first(np.transpose(x, (0, 3, 1, 2)), training=True).numpy()
    np.testing.assert_allclose(np.transpose(out, (0, 2, 3, 1)), first(x).numpy(), atol=1e-3)
    single = RANDOM[name](5)(x[0], training=True).numpy()
    assert single.shape == x[0].shape
    np.testing.assert_allclose(single, RANDOM[name](5)(x[:1], training=True).numpy()[0])


def test_bad_arguments_are_refused():
    for make, match in [
        (lambda: layers.RandomHue(1.5), "factor"),
        (lambda: layers.RandomSaturation((0.2, 1.5)), "factor"),
        (lambda: layers.RandomSharpness(-0.1), "factor"),
        (lambda: layers.RandomGaussianBlur(kernel_size=4), "kernel_size"),
        (lambda: layers.RandomGaussianBlur(sigma=-1.0), "sigma"),
        (lambda: layers.Equalization(bins=0), "bins"),
        (lambda: layers.Equalization(value_range=(1, 1)), "value_range"),
    ]:
        with pytest.raises(ValueError, match=match):
            make()
    with pytest.raises(ValueError, match="3 channels"):
        layers.RandomHue(0.5)(np.ones((1, 2, 2, 1), "float32"), training=True)


def test_clahe_by_hand_in_training_and_inference():
    layer = layers.ContrastLimitedAdaptiveHistogramEqualization(clip_limit=0, tile_grid_size=(1, 1))
    image = np.array([[[[10.0], [20.0]], [[20.0], [30.0]]]], "float32")
    # one tile: cdf 1, 3, 4 at levels 10, 20, 30 (and 0 below): cdf * 255 / 4
    for training in (False, True):
        out = layer(image, training=training).numpy()
        np.testing.assert_allclose(out[0, :, :, 0], [[63.75, 191.25], [191.25, 255.0]])
    # clipping at 2 * 4 / 256 per bin: each used bin keeps 1/32, the rest spread evenly
    clipped = layers.ContrastLimitedAdaptiveHistogramEqualization(
        clip_limit=2.0, tile_grid_size=(1, 1)
    )(image).numpy()[0, :, :, 0]
    counts = np.full(256, (4 - 3 / 32) / 256)
    counts[[10, 20, 30]] += 1 / 32
    cdf = np.cumsum(counts)
    table = (cdf - cdf[0]) * 255 / (4 - cdf[0])
    np.testing.assert_allclose(clipped, table[[[10, 20], [20, 30]]], rtol=1e-5)


def test_clahe_matches_keras_and_reads_channels_first():
    keras = _keras()
    rng = np.random.default_rng(10)
    for shape, grid, limit, value_range in [
        ((2, 16, 16, 3), (4, 4), 4.0, (0, 255)),
        ((2, 13, 11, 3), (3, 2), 2.0, (0, 255)),  # (padded to whole tiles)
        ((20, 24, 1), (8, 8), 4.0, (0, 1)),
    ]:
        x = rng.uniform(*value_range, shape).astype("float32")
        options = {"value_range": value_range, "clip_limit": limit, "tile_grid_size": grid}
        ours = layers.ContrastLimitedAdaptiveHistogramEqualization(**options)(x).numpy()
        theirs = keras.layers.ContrastLimitedAdaptiveHistogramEqualization(**options)(x)
        np.testing.assert_allclose(ours, np.asarray(theirs), atol=1e-4 * value_range[1])
    x = _images(seed=11, shape=(2, 8, 8, 3))
    last = layers.ContrastLimitedAdaptiveHistogramEqualization(tile_grid_size=(2, 2))
    first = layers.ContrastLimitedAdaptiveHistogramEqualization(
        tile_grid_size=(2, 2), data_format="channels_first"
    )
    out = first(np.transpose(x, (0, 3, 1, 2))).numpy()
    np.testing.assert_allclose(np.transpose(out, (0, 2, 3, 1)), last(x).numpy(), rtol=1e-6)
    config = last.get_config()
    assert type(last).from_config(config).get_config() == config
    with pytest.raises(ValueError, match="tile_grid_size"):
        layers.ContrastLimitedAdaptiveHistogramEqualization(tile_grid_size=(0, 2))
