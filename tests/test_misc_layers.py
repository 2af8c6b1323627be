"""SpatialDropout2D, GaussianNoise, the image reshaping layers, Permute,
RepeatVector and Lambda: values against numpy, gradients against central
differences, configs, errors; and a Lambda's hidden Variable is reported."""

import warnings

import numpy as np
import pytest
from layer_gradients import assert_gradients_match, projection_loss

import minikeras
from minikeras import Model, Sequential, Variable, ops
from minikeras.layers import (
    Cropping2D,
    Dense,
    GaussianNoise,
    Input,
    Lambda,
    Permute,
    RepeatVector,
    SpatialDropout2D,
    TrackingWarning,
    UpSampling2D,
    ZeroPadding2D,
)

rng = np.random.default_rng(11)


def images(shape=(2, 3, 4, 5), dtype="float32"):
    return rng.standard_normal(shape).astype(dtype)


# ------------------------------------------------------------- SpatialDropout2D


@pytest.mark.parametrize("data_format, channel_axis", [(None, 3), ("channels_first", 1)])
def test_spatial_dropout_drops_whole_channels(data_format, channel_axis):
    x = np.ones((4, 6, 6, 6), dtype="float32")
    y = SpatialDropout2D(0.5, data_format=data_format, seed=0)(x, training=True).numpy()
    assert y.dtype == np.float32
    maps = np.moveaxis(y, channel_axis, 1).reshape(4, 6, -1)
    assert set(np.unique(maps)) <= {0.0, 2.0}
    # One draw per (sample, channel): every position of a channel agrees.
    assert np.all(maps == maps[:, :, :1])
    assert 0 < (maps[:, :, 0] == 0).mean() < 1


def test_spatial_dropout_is_identity_outside_training_and_seeded():
    x = images()
    np.testing.assert_array_equal(SpatialDropout2D(0.5)(x).numpy(), x)
    first = SpatialDropout2D(0.3, seed=4)(x, training=True).numpy()
    np.testing.assert_array_equal(SpatialDropout2D(0.3, seed=4)(x, training=True).numpy(), first)


def test_spatial_dropout_config_and_errors():
    layer = SpatialDropout2D(0.25, data_format="channels_first", seed=3, name="sd")
    clone = SpatialDropout2D.from_config(layer.get_config())
    assert clone.get_config() == layer.get_config() and clone.noise_shape == (None, None, 1, 1)
    assert SpatialDropout2D(0.1).name.startswith("spatial_dropout2d")
    with pytest.raises(ValueError, match=r"'sd2' expects 4-D inputs .* got shape \(2, 3\)"):
        SpatialDropout2D(0.5, name="sd2")(np.ones((2, 3)), training=True)
    with pytest.raises(ValueError, match="`rate` must be in"):
        SpatialDropout2D(1.0)
    with pytest.raises(ValueError, match="`data_format` must be"):
        SpatialDropout2D(0.5, data_format="nhwc")


# ---------------------------------------------------------------- GaussianNoise


def test_gaussian_noise_adds_noise_of_the_given_stddev_in_training_only():
    x = np.full((200, 100), 3.0, dtype="float32")
    layer = GaussianNoise(0.5, seed=0)
    y = layer(x, training=True).numpy()
    assert y.dtype == np.float32
    assert abs((y - 3.0).std() - 0.5) < 0.01 and abs((y - 3.0).mean()) < 0.01
    np.testing.assert_array_equal(layer(x).numpy(), x)
    np.testing.assert_array_equal(layer(x, training=False).numpy(), x)
    again = GaussianNoise(0.5, seed=0)(x, training=True).numpy()
    np.testing.assert_array_equal(again, y)


def test_gaussian_noise_passes_gradients_through():
    layer = GaussianNoise(0.3, seed=1, dtype="float64")
    x = rng.standard_normal((3, 4))
    # Noise is added, so d(sum(y * r))/dx = r whatever the draw.
    (grad,) = assert_gradients_match(lambda t: projection_loss(layer(t)), [x], step=1e-3)
    assert grad.shape == (3, 4)


def test_gaussian_noise_config_and_errors():
    layer = GaussianNoise(0.2, seed=5, name="noise")
    assert GaussianNoise.from_config(layer.get_config()).get_config() == layer.get_config()
    for bad in (-0.1, float("nan"), "0.1"):
        with pytest.raises(ValueError, match="`stddev` must be a number >= 0"):
            GaussianNoise(bad)


# ------------------------------------------------------------------ UpSampling2D


def bilinear_reference(x, factor_rows, factor_cols):
    """Each output pixel from its four neighbours at half-pixel centres, edges clamped."""
    batch, rows, cols, channels = x.shape
    out = np.zeros((batch, rows * factor_rows, cols * factor_cols, channels))
    for i in range(rows * factor_rows):
        for j in range(cols * factor_cols):
            r = min(max((i + 0.5) / factor_rows - 0.5, 0), rows - 1)
            c = min(max((j + 0.5) / factor_cols - 0.5, 0), cols - 1)
            r0, c0 = int(np.floor(r)), int(np.floor(c))
            r1, c1 = min(r0 + 1, rows - 1), min(c0 + 1, cols - 1)
            fr, fc = r - r0, c - c0
            out[:, i, j] = (
                x[:, r0, c0] * (1 - fr) * (1 - fc)
                + x[:, r0, c1] * (1 - fr) * fc
                + x[:, r1, c0] * fr * (1 - fc)
                + x[:, r1, c1] * fr * fc
            )
    return out


def test_upsampling_nearest_repeats_rows_and_columns():
    x = images()
    y = UpSampling2D((2, 3))(x)
    assert y.dtype == np.float32 and y.shape == (2, 6, 12, 5)
    np.testing.assert_array_equal(y.numpy(), x.repeat(2, axis=1).repeat(3, axis=2))
    first = UpSampling2D(2, data_format="channels_first")(x.transpose(0, 3, 1, 2))
    np.testing.assert_array_equal(first.numpy(), x.transpose(0, 3, 1, 2).repeat(2, 2).repeat(2, 3))


def test_upsampling_bilinear_matches_interpolation_by_hand():
    x = images((2, 3, 4, 2))
    y = UpSampling2D((2, 3), interpolation="bilinear")(x)
    assert y.dtype == np.float32
    np.testing.assert_allclose(y.numpy(), bilinear_reference(x, 2, 3), rtol=1e-5, atol=1e-6)
    first = UpSampling2D((2, 3), "channels_first", "bilinear")(x.transpose(0, 3, 1, 2))
    np.testing.assert_allclose(first.numpy().transpose(0, 2, 3, 1), y.numpy(), rtol=1e-5)


def test_upsampling_bicubic_of_an_impulse_by_hand():
    # Output column 0 samples at -0.25: Keys weights 111/128 and -9/128 on columns 0 and 1
    # (column -1 is outside, left out), normalized by their sum 102/128.
    x = np.array([1.0, 0.0, 0.0], "float32").reshape(1, 1, 3, 1)
    y = UpSampling2D((1, 2), interpolation="bicubic")(x).numpy().ravel()
    assert y[0] == pytest.approx(111 / 102, rel=1e-6)
    # Column 1 samples at 0.25: distances 0.25, 0.75 and 1.75 from columns 0, 1 and 2.
    weights = [_keys(0.25), _keys(0.75), _keys(1.75)]
    assert y[1] == pytest.approx(weights[0] / sum(weights), rel=1e-6)
    # Column 2 samples at 0.75: distances 0.75, 0.25 and 1.25.
    weights = [_keys(0.75), _keys(0.25), _keys(1.25)]
    assert y[2] == pytest.approx(weights[0] / sum(weights), rel=1e-6)


def _keys(distance):
    """Keys's cubic kernel, a = -0.5, written out from its two pieces."""
    d = abs(distance)
    if d < 1:
        return 1.5 * d**3 - 2.5 * d**2 + 1
    return -0.5 * d**3 + 2.5 * d**2 - 4 * d + 2 if d < 2 else 0.0


@pytest.mark.parametrize("radius", [3, 5])
def test_upsampling_lanczos_by_explicit_sums(radius):
    x = images((1, 4, 7, 1), "float64")
    y = UpSampling2D((1, 2), interpolation=f"lanczos{radius}", dtype="float64")(x).numpy()

    def lanczos(d):
        d = abs(d)
        if d == 0:
            return 1.0
        if d >= radius:
            return 0.0
        return radius * np.sin(np.pi * d) * np.sin(np.pi * d / radius) / (np.pi * d) ** 2

    for i in range(14):
        sample = (i + 0.5) / 2 - 0.5
        weights = np.array([lanczos(sample - j) for j in range(7)])
        expected = x[0, :, :, 0] @ weights / weights.sum()
        np.testing.assert_allclose(y[0, :, i, 0], expected, rtol=1e-12)
    ones = UpSampling2D(3, interpolation=f"lanczos{radius}")(np.ones((1, 4, 5, 2)))
    np.testing.assert_allclose(ones.numpy(), 1.0, rtol=1e-6)  # normalized at the borders too


@pytest.mark.parametrize("interpolation", ["bilinear", "bicubic", "lanczos3", "lanczos5"])
@pytest.mark.parametrize("data_format", ["channels_last", "channels_first"])
def test_upsampling_interpolation_against_keras(interpolation, data_format):
    keras = pytest.importorskip("keras")
    if keras.backend.backend() not in ("jax", "numpy"):
        pytest.skip("Keras's bicubic on torch and tensorflow differs at the borders")
    x = np.random.default_rng(3).standard_normal((2, 5, 6, 3)).astype("float32")
    x = x.transpose(0, 3, 1, 2) if data_format == "channels_first" else x
    theirs = keras.layers.UpSampling2D((2, 3), data_format, interpolation.upper())
    ours = UpSampling2D.from_config({k: v for k, v in theirs.get_config().items() if k != "dtype"})
    assert ours.interpolation == interpolation
    expected = keras.ops.convert_to_numpy(theirs(x))
    np.testing.assert_allclose(ours(x).numpy(), expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    "interpolation", ["nearest", "bilinear", "bicubic", "lanczos3", "lanczos5"]
)
def test_upsampling_gradients_match_finite_differences(interpolation):
    layer = UpSampling2D((2, 3), interpolation=interpolation, dtype="float64")
    x = images((2, 2, 3, 2), "float64")
    assert_gradients_match(lambda t: projection_loss(layer(t)), [x])


def test_upsampling_shapes_config_and_errors():
    layer = UpSampling2D((2, 3), name="up")
    assert layer.compute_output_shape((None, None, 4, 5)) == (None, None, 12, 5)
    assert UpSampling2D.from_config(layer.get_config()).get_config() == layer.get_config()
    symbolic = UpSampling2D()(Input(shape=(3, 4, 1)))
    assert symbolic.shape == (None, 6, 8, 1)
    with pytest.raises(ValueError, match="`interpolation` must be one of 'nearest', 'bilinear'"):
        UpSampling2D(interpolation="gaussian")
    with pytest.raises(ValueError, match=r"got 'area' \(Keras takes 'area' on TensorFlow only\)"):
        UpSampling2D(interpolation="area")
    assert UpSampling2D(interpolation="Bicubic").get_config()["interpolation"] == "bicubic"
    with pytest.raises(ValueError, match="`size` must be a positive int or a pair"):
        UpSampling2D(size=(2, 0))
    with pytest.raises(ValueError, match=r"'up' expects 4-D inputs .* got shape \(2, 3, 4\)"):
        layer(np.ones((2, 3, 4)))


# ------------------------------------------------------ ZeroPadding2D, Cropping2D


@pytest.mark.parametrize(
    "padding, pairs",
    [(1, ((1, 1), (1, 1))), ((2, 0), ((2, 2), (0, 0))), (((1, 2), (3, 0)), ((1, 2), (3, 0)))],
)
def test_zero_padding_matches_numpy(padding, pairs):
    x = images()
    y = ZeroPadding2D(padding)(x)
    assert y.dtype == np.float32
    np.testing.assert_array_equal(y.numpy(), np.pad(x, ((0, 0), *pairs, (0, 0))))
    first = ZeroPadding2D(padding, data_format="channels_first")(x)
    np.testing.assert_array_equal(first.numpy(), np.pad(x, ((0, 0), (0, 0), *pairs)))


@pytest.mark.parametrize("cropping", [1, (0, 1), ((1, 0), (2, 1))])
def test_cropping_matches_slicing(cropping):
    x = images((2, 4, 5, 3))
    (top, bottom), (left, right) = Cropping2D(cropping).cropping
    y = Cropping2D(cropping)(x)
    assert y.dtype == np.float32
    np.testing.assert_array_equal(y.numpy(), x[:, top : 4 - bottom, left : 5 - right, :])


@pytest.mark.parametrize(
    "layer",
    [
        ZeroPadding2D(((1, 2), (0, 1)), dtype="float64"),
        Cropping2D(((1, 0), (1, 1)), dtype="float64"),
    ],
)
def test_padding_and_cropping_gradients(layer):
    x = images((2, 3, 4, 2), "float64")
    assert_gradients_match(lambda t: projection_loss(layer(t)), [x])


def test_padding_and_cropping_config_and_errors():
    for layer in (ZeroPadding2D((1, 2), name="zp"), Cropping2D(((1, 0), (0, 2)), name="cr")):
        clone = type(layer).from_config(layer.get_config())
        assert clone.get_config() == layer.get_config()
    assert ZeroPadding2D().padding == ((1, 1), (1, 1))
    assert Cropping2D(1).compute_output_shape((None, None, 5, 3)) == (None, None, 3, 3)
    with pytest.raises(ValueError, match="`padding` must be a non-negative int"):
        ZeroPadding2D(-1)
    with pytest.raises(ValueError, match="`cropping` must be a non-negative int"):
        Cropping2D(((1, 2, 3), (0, 0)))
    with pytest.raises(ValueError, match=r"'cr2': cropping .* leaves nothing .*\(2, 3, 4, 1\)"):
        Cropping2D(((2, 1), (0, 0)), name="cr2")(np.ones((2, 3, 4, 1)))


# ----------------------------------------------------- Permute and RepeatVector


def test_permute_matches_transpose_and_checks_dims():
    x = images((2, 3, 4, 5))
    y = Permute((3, 1, 2))(x)
    np.testing.assert_array_equal(y.numpy(), x.transpose(0, 3, 1, 2))
    assert Permute((2, 1)).compute_output_shape((None, 3, 7)) == (None, 7, 3)
    layer = Permute((2, 1), name="perm")
    assert Permute.from_config(layer.get_config()).dims == (2, 1)
    with pytest.raises(ValueError, match=r"permutation of 1\.\.2 .* got \(0, 1\)"):
        Permute((0, 1))
    with pytest.raises(ValueError, match=r"'perm' expects 3-D inputs .* got shape \(2, 3\)"):
        layer(np.ones((2, 3)))


def test_repeat_vector_matches_numpy_and_checks_rank():
    x = images((2, 3))
    y = RepeatVector(4)(x)
    assert y.dtype == np.float32
    np.testing.assert_array_equal(y.numpy(), np.repeat(x[:, None, :], 4, axis=1))
    layer = RepeatVector(2, name="rep")
    assert RepeatVector.from_config(layer.get_config()).n == 2
    assert layer.compute_output_shape((None, 7)) == (None, 2, 7)
    with pytest.raises(ValueError, match="`n` must be a positive int"):
        RepeatVector(0)
    with pytest.raises(ValueError, match=r"'rep' expects 2-D inputs .* got shape \(2, 3, 1\)"):
        layer(np.ones((2, 3, 1)))


@pytest.mark.parametrize(
    "layer", [Permute((2, 3, 1), dtype="float64"), RepeatVector(3, dtype="float64")]
)
def test_permute_and_repeat_gradients(layer):
    shape = (2, 3) if isinstance(layer, RepeatVector) else (2, 2, 3, 2)
    assert_gradients_match(lambda t: projection_loss(layer(t)), [rng.standard_normal(shape)])


# ------------------------------------------------------------------------ Lambda


def halve(x):
    return x * 0.5


def test_lambda_applies_the_function_with_arguments_and_training():
    scaled = Lambda(lambda x, factor: x * factor, arguments={"factor": 3.0})
    np.testing.assert_array_equal(scaled(np.ones((2, 2))).numpy(), np.full((2, 2), 3.0))
    seen = []
    probe = Lambda(lambda x, training=None: seen.append(training) or x)
    probe(np.ones(2), training=True)
    probe(np.ones(2))
    assert seen == [True, None]
    layer = Lambda(halve, dtype="float64")
    assert_gradients_match(lambda t: projection_loss(layer(t)), [rng.standard_normal((2, 3))])


def test_lambda_output_shapes():
    assert Lambda(lambda x: x[:, :2]).compute_output_shape((None, 5)) == (None, 2)
    assert Lambda(halve, output_shape=(7,)).compute_output_shape((None, 5)) == (None, 7)
    by_function = Lambda(halve, output_shape=lambda shape: (shape[0], 1))
    assert by_function.compute_output_shape((None, 5)) == (None, 1)
    sums = Lambda(lambda xs: xs[0] + xs[1])
    assert sums.compute_output_shape([(None, 3), (None, 3)]) == (None, 3)


def test_lambda_in_sequential_and_functional_models():
    minikeras.utils.set_random_seed(2)
    model = Sequential([Input(shape=(3,)), Dense(4), Lambda(ops.relu), Dense(1)])
    assert model(np.ones((5, 3))).shape == (5, 1)
    inputs = Input(shape=(4,))
    first, second = Lambda(lambda x: ops.split(x, 2, axis=-1))(inputs)
    joined = Model(inputs, Lambda(lambda xs: xs[0] * xs[1])([first, second]))
    x = rng.standard_normal((3, 4)).astype("float32")
    np.testing.assert_allclose(joined(x).numpy(), x[:, :2] * x[:, 2:], rtol=1e-6)


def test_lambda_config_round_trips():
    named = Lambda(halve, output_shape=(3,), arguments={}, name="half")
    config = named.get_config()
    assert config["function"] == {"module": halve.__module__, "function_name": "halve"}
    clone = Lambda.from_config(config)
    assert clone.function is halve and clone.output_shape == (3,)
    anonymous = Lambda(lambda x: x + 1.0, arguments={"unused": None})
    again = Lambda.from_config(anonymous.get_config())
    assert again.function is anonymous.function and again.arguments == {"unused": None}
    with pytest.raises(ValueError, match="cannot find the function"):
        Lambda.from_config({"function": {"module": "math", "function_name": "nope"}})
    with pytest.raises(ValueError, match="among the imported modules"):  # never imported
        Lambda.from_config({"function": {"module": "not_imported_xyz", "function_name": "f"}})
    with pytest.raises(ValueError, match="`function` must be callable"):
        Lambda(3)


def test_a_variable_hidden_in_a_lambda_is_reported():
    hidden = Variable(np.ones(3), name="hidden_scale")
    layer = Lambda(lambda x: x * hidden, name="scaler")
    with pytest.warns(TrackingWarning, match="'hidden_scale'.*not tracked by 'scaler'"):
        layer(np.ones((2, 3)))
    with pytest.warns(TrackingWarning, match="'hidden_scale'.*not tracked by 'seq'"):
        model = Sequential([Dense(3), Lambda(lambda x: x * hidden)], name="seq")
        model(np.ones((2, 3)))
    assert all(w is not hidden for w in model.weights)
    with warnings.catch_warnings():
        warnings.simplefilter("error", TrackingWarning)
        Lambda(halve)(np.ones((2, 3)))  # a stateless function: no warning
