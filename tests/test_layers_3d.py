"""Conv3D, 3-D pooling, and the 1-D / 3-D padding, cropping and upsampling layers, by hand."""

import numpy as np
import pytest
from finite_differences import check_gradients

from minikeras import layers

rng = np.random.default_rng(0)


def conv3d_loop(x, kernel, bias, stride=1):
    """Valid 3-D cross-correlation by explicit loops (the reference)."""
    batch, depth, height, width, _ = x.shape
    kd, kh, kw, _, filters = kernel.shape
    out_shape = [(n - k) // stride + 1 for n, k in zip((depth, height, width), (kd, kh, kw))]
    out = np.zeros((batch, *out_shape, filters))
    for b in range(batch):
        for i in range(out_shape[0]):
            for j in range(out_shape[1]):
                for k in range(out_shape[2]):
                    window = x[b, i * stride : i * stride + kd, j * stride : j * stride + kh,
                               k * stride : k * stride + kw]  # fmt: skip
                    out[b, i, j, k] = np.tensordot(window, kernel, axes=4) + bias
    return out


@pytest.mark.parametrize("stride", [1, 2])
def test_conv3d_matches_explicit_loops(stride):
    x = rng.standard_normal((2, 5, 6, 4, 3)).astype("float32")
    layer = layers.Conv3D(4, (2, 3, 2), strides=stride)
    out = layer(x).numpy()
    expected = conv3d_loop(x, layer.kernel.numpy(), layer.bias.numpy(), stride)
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)
    assert layer.compute_output_shape((None, None, 6, 4, 3)) == (
        None,
        None,
        *expected.shape[2:4],
        4,
    )


def test_conv3d_gradients_match_finite_differences():
    layer = layers.Conv3D(2, 2, dtype="float64")
    x = rng.standard_normal((1, 3, 3, 3, 2))
    layer.build(x.shape)
    check_gradients(lambda t: layer(t), [x])


def test_conv3d_transpose_is_the_adjoint_of_conv3d():
    # <conv(x), y> == <x, conv_transpose(y)> for the same kernel.
    conv = layers.Conv3D(3, 2, use_bias=False)
    x = rng.standard_normal((1, 4, 4, 4, 2)).astype("float32")
    y_shape = conv(x).shape
    y = rng.standard_normal(y_shape).astype("float32")
    transpose = layers.Conv3DTranspose(2, 2, use_bias=False)
    transpose.build(y_shape)
    transpose.kernel.assign(conv.kernel.numpy())  # (*kernel, filters, inputs): the same layout
    left = float(np.sum(conv(x).numpy() * y))
    right = float(np.sum(x * transpose(y).numpy()))
    assert left == pytest.approx(right, rel=1e-4)


def test_3d_pooling_by_hand():
    x = np.arange(2 * 4 * 4 * 4).reshape(2, 4, 4, 4, 1).astype("float32")
    maxed = layers.MaxPooling3D(2)(x).numpy()
    blocks = x.reshape(2, 2, 2, 2, 2, 2, 2, 1)
    np.testing.assert_array_equal(maxed, blocks.max(axis=(2, 4, 6)))
    averaged = layers.AveragePooling3D(2)(x).numpy()
    np.testing.assert_allclose(averaged, blocks.mean(axis=(2, 4, 6)))
    np.testing.assert_array_equal(layers.GlobalMaxPooling3D()(x).numpy(), x.max(axis=(1, 2, 3)))
    np.testing.assert_allclose(layers.GlobalAveragePooling3D()(x).numpy(), x.mean(axis=(1, 2, 3)))
    assert layers.MaxPooling3D(2, padding="same").compute_output_shape((None, 5, None, 3, 1)) == (
        None, 3, None, 2, 1)  # fmt: skip


def test_zero_padding_cropping_and_upsampling_1d_by_hand():
    x = np.arange(6.0).reshape(1, 3, 2)
    padded = layers.ZeroPadding1D((1, 2))(x).numpy()
    np.testing.assert_array_equal(padded, np.pad(x, ((0, 0), (1, 2), (0, 0))))
    cropped = layers.Cropping1D((1, 0))(x).numpy()
    np.testing.assert_array_equal(cropped, x[:, 1:])
    upsampled = layers.UpSampling1D(2)(x).numpy()
    np.testing.assert_array_equal(upsampled, np.repeat(x, 2, axis=1))
    assert layers.UpSampling1D(3).compute_output_shape((None, None, 2)) == (None, None, 2)


def test_zero_padding_1d_channels_first_pads_the_last_axis():
    x = rng.standard_normal((2, 3, 4)).astype("float32")  # (batch, features, steps)
    layer = layers.ZeroPadding1D((2, 1), data_format="channels_first")
    np.testing.assert_array_equal(layer(x).numpy(), np.pad(x, ((0, 0), (0, 0), (2, 1))))
    assert layer.compute_output_shape((None, 3, None)) == (None, 3, None)
    assert layer.compute_output_shape((None, 3, 4)) == (None, 3, 7)
    check_gradients(
        layers.ZeroPadding1D((2, 1), data_format="channels_first", dtype="float64"), [x]
    )
    config = layer.get_config()
    assert config["data_format"] == "channels_first" and config["padding"] == (2, 1)
    assert layers.ZeroPadding1D.from_config(config).get_config() == config
    assert layers.ZeroPadding1D().get_config()["data_format"] == "channels_last"
    # As Keras: Cropping1D and UpSampling1D have no data_format.
    assert "data_format" not in layers.Cropping1D().get_config()
    # Keras 3.15 refuses it as any unknown argument, with a ValueError, even None.
    for value in ("channels_first", "channels_last", None):
        with pytest.raises(ValueError, match="arguments passed to UpSampling1D: {'data_format'"):
            layers.UpSampling1D(2, data_format=value)
        with pytest.raises(ValueError, match="arguments passed to Cropping1D: {'data_format'"):
            layers.Cropping1D(data_format=value)
    with pytest.raises(ValueError, match="ZeroPadding1D: `data_format` must be"):
        layers.ZeroPadding1D(data_format="NCW")
    with pytest.raises(ValueError, match=r"3-D inputs \(batch, features, steps\), got shape"):
        layer(np.ones((2, 3)))


@pytest.mark.parametrize("data_format", ["channels_last", "channels_first"])
def test_zero_padding_1d_against_keras(data_format):
    keras = pytest.importorskip("keras")
    x = rng.standard_normal((2, 3, 5)).astype("float32")
    theirs = keras.layers.ZeroPadding1D((1, 3), data_format=data_format)
    ours = layers.ZeroPadding1D.from_config(
        {k: v for k, v in theirs.get_config().items() if k != "dtype"}
    )
    np.testing.assert_array_equal(ours(x).numpy(), keras.ops.convert_to_numpy(theirs(x)))


@pytest.mark.parametrize("data_format", ["channels_last", "channels_first"])
def test_zero_padding_cropping_and_upsampling_3d_by_hand(data_format):
    x = rng.standard_normal((2, 3, 4, 5, 2)).astype("float32")
    axes = (1, 2, 3) if data_format == "channels_last" else (2, 3, 4)
    if data_format == "channels_first":
        x = np.moveaxis(x, -1, 1)
    widths = [(0, 0)] * 5
    for axis, pair in zip(axes, ((1, 0), (0, 2), (1, 1))):
        widths[axis] = pair
    padded = layers.ZeroPadding3D(((1, 0), (0, 2), (1, 1)), data_format=data_format)(x)
    np.testing.assert_array_equal(padded.numpy(), np.pad(x, widths))
    index = [slice(None)] * 5
    for axis, (before, after) in zip(axes, ((1, 0), (1, 1), (0, 2))):
        index[axis] = slice(before, x.shape[axis] - after)
    cropped = layers.Cropping3D(((1, 0), (1, 1), (0, 2)), data_format=data_format)(x)
    np.testing.assert_array_equal(cropped.numpy(), x[tuple(index)])
    expected = x
    for axis, factor in zip(axes, (2, 1, 3)):
        expected = np.repeat(expected, factor, axis=axis)
    upsampled = layers.UpSampling3D((2, 1, 3), data_format=data_format)(x)
    np.testing.assert_array_equal(upsampled.numpy(), expected)


def test_bad_arguments_and_ranks_are_named():
    with pytest.raises(ValueError, match="ZeroPadding3D: `padding` must hold 3"):
        layers.ZeroPadding3D(((1, 1), (1, 1)))
    with pytest.raises(ValueError, match="UpSampling1D: `size` must be a positive int"):
        layers.UpSampling1D(0)
    with pytest.raises(ValueError, match=r"Cropping1D 'crop' expects 3-D inputs.*\(2, 3\)"):
        layers.Cropping1D(name="crop")(np.ones((2, 3)))
    with pytest.raises(ValueError, match="leaves nothing"):
        layers.Cropping3D(2)(np.ones((1, 4, 4, 4, 1)))


@pytest.mark.parametrize(
    "make",
    [
        lambda: layers.Conv3D(2, 2, strides=2, padding="same"),
        lambda: layers.Conv3DTranspose(2, 2, strides=2),
        lambda: layers.ZeroPadding3D(((1, 0), (0, 1), (2, 2))),
        lambda: layers.Cropping1D((2, 1)),
        lambda: layers.UpSampling3D((1, 2, 2), data_format="channels_first"),
    ],
)
def test_configs_round_trip(make):
    layer = make()
    copy = type(layer).from_config(layer.get_config())
    assert copy.get_config() == layer.get_config()


@pytest.mark.parametrize(
    "make, shape",
    [
        (lambda f: layers.Conv1D(3, 2, data_format=f), (2, 7, 4)),
        (lambda f: layers.Conv2D(3, 2, strides=2, padding="same", data_format=f), (2, 6, 5, 4)),
        (lambda f: layers.Conv3D(3, 2, data_format=f), (1, 4, 4, 3, 2)),
        (lambda f: layers.Conv2DTranspose(3, 2, strides=2, data_format=f), (1, 3, 3, 2)),
        (lambda f: layers.DepthwiseConv2D(2, data_format=f), (1, 4, 4, 3)),
        (lambda f: layers.SeparableConv1D(3, 2, data_format=f), (2, 5, 2)),
        (lambda f: layers.MaxPooling2D(2, data_format=f), (1, 4, 6, 2)),
        (lambda f: layers.AveragePooling3D(2, data_format=f), (1, 4, 4, 4, 2)),
        (lambda f: layers.GlobalAveragePooling2D(data_format=f), (2, 3, 3, 4)),
        (lambda f: layers.GlobalMaxPooling1D(keepdims=True, data_format=f), (2, 5, 3)),
    ],
)
def test_channels_first_equals_channels_last_transposed(make, shape):
    x = rng.standard_normal(shape).astype("float32")
    last, first = make("channels_last"), make("channels_first")
    expected = last(x).numpy()
    first.build(_to_first(x).shape)
    first.set_weights(last.get_weights())  # the same weights in either layout
    out = first(_to_first(x)).numpy()
    np.testing.assert_allclose(out, _to_first(expected) if expected.ndim == x.ndim else expected,
                               rtol=1e-5, atol=1e-6)  # fmt: skip
    symbolic = first.compute_output_shape((None, *_to_first(x).shape[1:]))
    assert symbolic == (None, *out.shape[1:])
    copy = type(first).from_config(first.get_config())
    assert copy.data_format == "channels_first"


def _to_first(x):
    return np.moveaxis(x, -1, 1) if x.ndim > 2 else x


def test_strides_and_dilation_together_are_refused_as_in_keras():
    with pytest.raises(
        ValueError, match=r"Conv2D: strides > 1 cannot be combined with dilation_rate > 1"
    ):
        layers.Conv2D(2, 3, strides=2, dilation_rate=2)


@pytest.mark.parametrize(
    "make, shape",
    [
        (lambda: layers.Conv1D(2, 3, dilation_rate=2), (1, 9, 2)),
        (lambda: layers.DepthwiseConv2D(3, dilation_rate=(2, 1)), (1, 9, 9, 2)),
        (lambda: layers.SeparableConv2D(2, 3, dilation_rate=2), (1, 9, 9, 2)),
        (lambda: layers.Conv3D(2, 2, dilation_rate=(1, 2, 1)), (1, 5, 5, 5, 1)),
    ],
)
def test_dilation_spreads_the_taps(make, shape):
    layer = make()
    x = rng.standard_normal(shape).astype("float32")
    out = layer(x).numpy()
    span = [(k - 1) * d + 1 for k, d in zip(layer.kernel_size, layer.dilation_rate)]
    assert out.shape[1:-1] == tuple(n - s + 1 for n, s in zip(shape[1:-1], span))
    if isinstance(layer, layers.Conv1D):  # one output by hand: taps 0, 2 and 4
        kernel, bias = layer.kernel.numpy(), layer.bias.numpy()
        expected = sum(x[0, 2 * t] @ kernel[t] for t in range(3)) + bias
        np.testing.assert_allclose(out[0, 0], expected, rtol=1e-5, atol=1e-6)
