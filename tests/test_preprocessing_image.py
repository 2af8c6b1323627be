"""Resizing and CenterCrop: bilinear and nearest resizes worked out by hand, crops,
aspect-ratio options, data formats, shapes with None, configs, errors."""

import numpy as np
import pytest

from minikeras.layers import CenterCrop, Resizing


def one_channel(array):
    return np.asarray(array, dtype="float32")[None, :, :, None]


def test_bilinear_upsizing_by_hand():
    # Half-pixel centers: output pixel i of 4 samples input position (i + 0.5) / 2 - 0.5,
    # i.e. -0.25 (clamped to 0), 0.25, 0.75, 1.25 (clamped to 1).
    image = one_channel([[0.0, 4.0], [8.0, 12.0]])
    out = Resizing(4, 4)(image).numpy()[0, :, :, 0]
    row = np.array([0.0, 1.0, 3.0, 4.0])
    expected = np.stack([row, row + 2.0, row + 6.0, row + 8.0])
    np.testing.assert_allclose(out, expected, atol=1e-6)


def test_bilinear_downsizing_by_hand():
    # 4 -> 2: output pixel i samples (i + 0.5) * 2 - 0.5 = 0.5, 2.5: the mean of two neighbours.
    image = one_channel([[0.0, 1.0, 2.0, 3.0]])
    np.testing.assert_allclose(Resizing(1, 2)(image).numpy().ravel(), [0.5, 2.5])


def test_nearest_by_hand():
    image = one_channel([[0.0, 1.0, 2.0]])
    # 3 -> 2: floor((i + 0.5) * 1.5) = 0, 2.  3 -> 5: floor((i + 0.5) * 0.6) = 0, 0, 1, 2, 2.
    np.testing.assert_array_equal(Resizing(1, 2, "nearest")(image).numpy().ravel(), [0, 2])
    np.testing.assert_array_equal(Resizing(1, 5, "nearest")(image).numpy().ravel(), [0, 0, 1, 2, 2])


def test_crop_and_pad_to_aspect_ratio():
    image = one_channel(np.arange(8.0).reshape(2, 4))
    cropped = Resizing(2, 2, crop_to_aspect_ratio=True)(image).numpy()[0, :, :, 0]
    np.testing.assert_array_equal(cropped, [[1.0, 2.0], [5.0, 6.0]])  # the central 2x2
    padded = Resizing(4, 4, pad_to_aspect_ratio=True, fill_value=-1.0, interpolation="nearest")
    out = padded(image).numpy()[0, :, :, 0]
    np.testing.assert_array_equal(out, [[-1] * 4, [0, 1, 2, 3], [4, 5, 6, 7], [-1] * 4])


def test_channels_first_single_images_and_shapes():
    images = np.random.default_rng(0).standard_normal((2, 3, 4, 5)).astype("float32")
    last = Resizing(2, 3)(images.transpose(0, 2, 3, 1)).numpy()
    first = Resizing(2, 3, data_format="channels_first")(images).numpy()
    np.testing.assert_allclose(first, last.transpose(0, 3, 1, 2), rtol=1e-6)
    assert Resizing(2, 3)(images[0].transpose(1, 2, 0)).shape == (2, 3, 3)
    assert Resizing(2, 3).compute_output_shape((None, None, None, 3)) == (None, 2, 3, 3)
    layer = Resizing(2, 3, data_format="channels_first")
    assert layer.compute_output_shape((None, 3, None, None)) == (None, 3, 2, 3)


def test_center_crop_by_hand_and_when_too_small():
    image = one_channel(np.arange(20.0).reshape(4, 5))
    out = CenterCrop(2, 3)(image).numpy()[0, :, :, 0]
    np.testing.assert_array_equal(out, [[6, 7, 8], [11, 12, 13]])  # rows 1-2, columns 1-3
    small = one_channel([[0.0, 4.0], [8.0, 12.0]])
    grown = CenterCrop(4, 4)(small).numpy()
    np.testing.assert_allclose(grown, Resizing(4, 4)(small).numpy())
    assert CenterCrop(2, 3).compute_output_shape((None, 9, 9, 1)) == (None, 2, 3, 1)


def test_configs_round_trip():
    for layer in (Resizing(3, 4, "nearest", crop_to_aspect_ratio=True), CenterCrop(2, 2)):
        clone = type(layer).from_config(layer.get_config())
        assert clone.get_config() == layer.get_config()


def test_errors_name_the_layer_and_argument():
    with pytest.raises(ValueError, match="Resizing: `height` must be an int >= 1"):
        Resizing(0, 3)
    with pytest.raises(ValueError, match="Resizing: `interpolation` must be one of"):
        Resizing(2, 2, interpolation="area")
    with pytest.raises(ValueError, match="at most one of"):
        Resizing(2, 2, crop_to_aspect_ratio=True, pad_to_aspect_ratio=True)
    with pytest.raises(ValueError, match=r"CenterCrop 'center_crop\w*' expects images of rank 3"):
        CenterCrop(2, 2)(np.ones((2, 3)))
    with pytest.raises(ValueError, match="CenterCrop: `data_format` must be .channels_last."):
        CenterCrop(2, 2, data_format="nhwc")


@pytest.mark.parametrize(
    "layer",
    [
        lambda: Resizing(3, 5, dtype="float64"),
        lambda: Resizing(2, 2, crop_to_aspect_ratio=True, dtype="float64"),
        lambda: CenterCrop(2, 3, dtype="float64"),
        lambda: CenterCrop(6, 6, dtype="float64"),  # smaller input: crop and resize
    ],
)
def test_gradients_match_finite_differences(layer):
    from layer_gradients import assert_gradients_match, projection_loss

    made = layer()
    x = np.random.default_rng(1).standard_normal((2, 4, 5, 2))
    assert_gradients_match(lambda t: projection_loss(made(t)), [x])
