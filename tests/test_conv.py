"""Convolutions: ops against naive loops, gradients against central differences, layers."""

import numpy as np
import pytest
from finite_differences import (
    check_float32,
    check_gradients,
    check_second_order,
    numeric_gradient,
)

import minikeras
from minikeras import GradientTape, layers, ops
from minikeras.__main__ import main

# ------------------------------------------------------------ naive references


def as_tuple(value, rank):
    return (value,) * rank if isinstance(value, int) else tuple(value)


def same_pads(lengths, kernel, strides, dilation):
    """TensorFlow's "same" padding: output ceil(n / s), the odd pad after."""
    pads = []
    for n, k, s, d in zip(lengths, kernel, strides, dilation):
        total = max((-(-n // s) - 1) * s + (k - 1) * d + 1 - n, 0)
        pads.append((total // 2, total - total // 2))
    return pads


def naive_conv(x, kernel, strides=1, padding="valid", dilation=1):
    """Loops over output positions and taps, in float64; groups from the kernel's shape."""
    rank = x.ndim - 2
    strides, dilation = as_tuple(strides, rank), as_tuple(dilation, rank)
    size, group_in, filters = kernel.shape[:-2], kernel.shape[-2], kernel.shape[-1]
    groups, rank_pads = x.shape[-1] // group_in, [(0, 0)] * rank
    pads = same_pads(x.shape[1:-1], size, strides, dilation) if padding == "same" else rank_pads
    padded = np.pad(x.astype(np.float64), [(0, 0), *pads, (0, 0)])
    outputs = [
        (n - (k - 1) * d - 1) // s + 1
        for n, k, s, d in zip(padded.shape[1:-1], size, strides, dilation)
    ]
    out = np.zeros((x.shape[0], *outputs, filters))
    group_out = filters // groups
    for position in np.ndindex(*outputs):
        for tap in np.ndindex(*size):
            where = tuple(o * s + t * d for o, t, s, d in zip(position, tap, strides, dilation))
            for g in range(groups):
                inputs = padded[(slice(None), *where, slice(g * group_in, (g + 1) * group_in))]
                weights = kernel[tap][:, g * group_out : (g + 1) * group_out]
                out[(slice(None), *position, slice(g * group_out, (g + 1) * group_out))] += (
                    inputs @ weights
                )
    return out


def naive_depthwise(x, kernel, strides=1, padding="valid", dilation=1):
    """Each channel convolved on its own with each of its `depth_multiplier` filters."""
    channels, multiplier = kernel.shape[-2:]
    outs = [
        naive_conv(x[..., c : c + 1], kernel[..., c : c + 1, :], strides, padding, dilation)
        for c in range(channels)
    ]
    return np.concatenate(outs, axis=-1).reshape(*outs[0].shape[:-1], channels * multiplier)


def naive_conv_transpose(y, kernel, strides=1, padding="valid", output_padding=None, dilation=1):
    """Scatters each input value times the kernel into the output, Keras's output length."""
    rank = y.ndim - 2
    strides, dilation = as_tuple(strides, rank), as_tuple(dilation, rank)
    size = kernel.shape[:-2]
    extra = (None,) * rank if output_padding is None else as_tuple(output_padding, rank)
    lengths = []
    for n, k, s, d, e in zip(y.shape[1:-1], size, strides, dilation, extra):
        span = (k - 1) * d + 1
        if e is None:
            lengths.append(n * s + max(span - s, 0) if padding == "valid" else n * s)
        else:
            lengths.append((n - 1) * s + span - 2 * (span // 2 if padding == "same" else 0) + e)
    pads = same_pads(lengths, size, strides, dilation) if padding == "same" else [(0, 0)] * rank
    full = [n + a + b for n, (a, b) in zip(lengths, pads)]
    out = np.zeros((y.shape[0], *full, kernel.shape[-2]))
    for position in np.ndindex(*y.shape[1:-1]):
        for tap in np.ndindex(*size):
            where = tuple(o * s + t * d for o, t, s, d in zip(position, tap, strides, dilation))
            out[(slice(None), *where)] += y[(slice(None), *position)] @ kernel[tap].T
    return out[(slice(None), *(slice(a, a + n) for n, (a, _) in zip(lengths, pads)))]


# --------------------------------------------------------------------- cases


def rand(*shape, seed=0):
    return np.random.default_rng(seed + sum(shape)).standard_normal(shape)


# (name, inputs shape, kernel shape, strides, padding, dilation)
CONV_CASES = [
    ("1d-valid", (2, 7, 3), (3, 3, 4), 1, "valid", 1),
    ("1d-same-stride2", (2, 7, 3), (3, 3, 2), 2, "same", 1),
    ("1d-same-even-kernel", (1, 6, 2), (4, 2, 3), 1, "same", 1),
    ("1d-dilation2", (2, 8, 2), (3, 2, 3), 1, "valid", 2),
    ("1d-groups2", (2, 6, 4), (3, 2, 6), 1, "same", 1),
    ("2d-valid", (2, 5, 4, 3), (3, 3, 3, 2), 1, "valid", 1),
    ("2d-same", (2, 5, 4, 2), (3, 3, 2, 3), 1, "same", 1),
    ("2d-stride2-same", (2, 5, 6, 2), (3, 3, 2, 3), 2, "same", 1),
    ("2d-stride21-valid", (1, 6, 5, 2), (2, 3, 2, 2), (2, 1), "valid", 1),
    ("2d-dilation-same", (1, 6, 6, 2), (3, 3, 2, 2), 1, "same", (2, 1)),
    ("2d-dilation-stride", (1, 7, 7, 1), (2, 2, 1, 2), 2, "valid", 2),
    ("2d-groups2", (2, 4, 4, 4), (3, 3, 2, 4), 1, "same", 1),
    ("2d-pointwise", (2, 3, 3, 4), (1, 1, 4, 3), 1, "valid", 1),
    ("3d-same", (1, 3, 4, 3, 2), (2, 3, 2, 2, 2), 1, "same", 1),
]
CONV_IDS = [case[0] for case in CONV_CASES]
CONV_ARGS = "name, x_shape, k_shape, strides, padding, dilation"


@pytest.mark.parametrize(
    "name, x_shape, k_shape, strides, padding, dilation", CONV_CASES, ids=CONV_IDS
)
def test_conv_matches_naive_loops(name, x_shape, k_shape, strides, padding, dilation):
    x, kernel = rand(*x_shape), rand(*k_shape, seed=1)
    out = ops.conv(x, kernel, strides, padding, dilation_rate=dilation)
    np.testing.assert_allclose(
        out.numpy(), naive_conv(x, kernel, strides, padding, dilation), rtol=1e-10, atol=1e-12
    )


@pytest.mark.parametrize(
    "name, x_shape, k_shape, strides, padding, dilation", CONV_CASES, ids=CONV_IDS
)
def test_conv_gradients_match_central_differences(
    name, x_shape, k_shape, strides, padding, dilation
):
    bias = rand(k_shape[-1], seed=2)
    check_gradients(
        lambda x, k, b: ops.conv(x, k, strides, padding, dilation_rate=dilation, bias=b),
        [rand(*x_shape), rand(*k_shape, seed=1), bias],
    )


@pytest.mark.parametrize(
    "name, x_shape, k_shape, strides, padding, dilation", CONV_CASES, ids=CONV_IDS
)
def test_conv_float32_in_float32_out(name, x_shape, k_shape, strides, padding, dilation):
    check_float32(
        lambda x, k: ops.conv(x, k, strides, padding, dilation_rate=dilation),
        [rand(*x_shape), rand(*k_shape, seed=1)],
    )


def test_conv_fused_bias_and_relu():
    x, kernel, bias = rand(2, 5, 5, 2), rand(3, 3, 2, 3, seed=1), rand(3, seed=2)
    out = ops.conv(x, kernel, padding="same", bias=bias, activation="relu")
    expected = np.maximum(naive_conv(x, kernel, padding="same") + bias, 0)
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-10, atol=1e-12)
    check_gradients(
        lambda x, k, b: ops.conv(x, k, padding="same", bias=b, activation="relu"),
        [x, kernel, bias],
    )


def test_conv_second_order_gradients():
    check_second_order(
        lambda x, k: ops.conv(x, k, 2, "same", dilation_rate=1),
        [rand(1, 4, 5, 2), rand(2, 3, 2, 2, seed=1)],
    )


DEPTHWISE_CASES = [
    ("1d-valid", (2, 6, 2), (3, 2, 1), 1, "valid", 1),
    ("2d-same-multiplier2", (2, 5, 4, 3), (3, 3, 3, 2), 1, "same", 1),
    ("2d-stride2-dilation", (1, 7, 7, 2), (2, 2, 2, 1), 2, "valid", 2),
]


@pytest.mark.parametrize("name, x_shape, k_shape, strides, padding, dilation", DEPTHWISE_CASES)
def test_depthwise_conv_matches_naive_and_differences(
    name, x_shape, k_shape, strides, padding, dilation
):
    x, kernel = rand(*x_shape), rand(*k_shape, seed=1)
    out = ops.depthwise_conv(x, kernel, strides, padding, dilation_rate=dilation)
    np.testing.assert_allclose(
        out.numpy(), naive_depthwise(x, kernel, strides, padding, dilation), rtol=1e-10, atol=1e-12
    )

    def fn(x, k):
        return ops.depthwise_conv(x, k, strides, padding, dilation_rate=dilation)

    check_gradients(fn, [x, kernel])
    check_float32(fn, [x, kernel])


def test_separable_conv_is_depthwise_then_pointwise():
    x, depthwise, pointwise = rand(2, 5, 5, 2), rand(3, 3, 2, 2, seed=1), rand(1, 1, 4, 3, seed=2)
    out = ops.separable_conv(x, depthwise, pointwise, strides=2, padding="same")
    expected = naive_conv(naive_depthwise(x, depthwise, 2, "same"), pointwise)
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-10, atol=1e-12)

    def fn(x, d, p):
        return ops.separable_conv(x, d, p, strides=2, padding="same")

    check_gradients(fn, [x, depthwise, pointwise])
    check_float32(fn, [x, depthwise, pointwise])


# (name, inputs shape, kernel shape (*size, filters, channels), strides, padding, output_padding,
# dilation)
TRANSPOSE_CASES = [
    ("1d-valid-stride2", (2, 4, 3), (3, 2, 3), 2, "valid", None, 1),
    ("1d-same-stride2", (2, 4, 2), (3, 3, 2), 2, "same", None, 1),
    ("1d-kernel-below-stride", (1, 3, 1), (2, 1, 1), 3, "valid", None, 1),
    ("1d-output-padding", (1, 4, 2), (3, 2, 2), 2, "valid", 1, 1),
    ("2d-valid", (2, 3, 4, 2), (3, 3, 3, 2), 1, "valid", None, 1),
    ("2d-same-stride2", (2, 3, 3, 2), (3, 3, 2, 2), 2, "same", None, 1),
    ("2d-same-output-padding", (1, 3, 3, 2), (3, 3, 2, 2), 2, "same", (1, 0), 1),
    ("2d-dilation", (1, 3, 4, 1), (2, 2, 2, 1), 1, "valid", None, 2),
]
TRANSPOSE_IDS = [case[0] for case in TRANSPOSE_CASES]


@pytest.mark.parametrize(
    "name, y_shape, k_shape, strides, padding, extra, dilation", TRANSPOSE_CASES, ids=TRANSPOSE_IDS
)
def test_conv_transpose_matches_naive_and_differences(
    name, y_shape, k_shape, strides, padding, extra, dilation
):
    y, kernel = rand(*y_shape), rand(*k_shape, seed=1)

    def fn(y, k):
        return ops.conv_transpose(y, k, strides, padding, extra, dilation_rate=dilation)

    expected = naive_conv_transpose(y, kernel, strides, padding, extra, dilation)
    np.testing.assert_allclose(fn(y, kernel).numpy(), expected, rtol=1e-10, atol=1e-12)
    check_gradients(fn, [y, kernel])
    check_float32(fn, [y, kernel])


def test_conv_transpose_is_the_adjoint_of_conv():
    # <conv(x, k), y> == <x, conv_transpose(y, k)>: (*size, in, out) is (*size, filters, channels)
    x, kernel = rand(2, 7, 6, 3), rand(3, 3, 3, 4, seed=1)
    out = ops.conv(x, kernel, 2, "same").numpy()
    y = rand(*out.shape, seed=2)
    back = ops.conv_transpose(y, kernel, 2, "same", output_padding=(0, 1))
    assert back.shape == x.shape
    np.testing.assert_allclose(np.sum(out * y), np.sum(x * back.numpy()), rtol=1e-10)


def test_conv_transpose_second_order_gradients():
    check_second_order(
        lambda y, k: ops.conv_transpose(y, k, 2, "same"), [rand(1, 3, 2, 2), rand(3, 2, 1, 2)]
    )


# ---------------------------------------------------------------- op errors


def ones(*shape):
    return np.ones(shape)


OP_ERRORS = [
    ("rank", ops.conv, (ones(2, 5, 5), ones(3, 3, 1, 2)), {}, r"conv: expected inputs"),
    ("channels", ops.conv, (ones(1, 5, 5, 3), ones(3, 3, 2, 2)), {}, r"3 channels"),
    ("too-small", ops.conv, (ones(1, 2, 5, 1), ones(3, 3, 1, 1)), {}, r"spans 3.*only 2"),
    ("dilated", ops.conv, (ones(1, 5, 1), ones(3, 1, 1)), {"dilation_rate": 3}, r"spans 7"),
    ("padding", ops.conv, (ones(1, 5, 1), ones(3, 1, 1)), {"padding": "full"}, r"padding"),
    ("strides", ops.conv, (ones(1, 5, 1), ones(3, 1, 1)), {"strides": 0}, r"strides"),
    ("layout", ops.conv, (ones(1, 5, 1), ones(3, 1, 1)), {"data_format": "NCW"},
     r"conv: `data_format` must be 'channels_last' or 'channels_first', got 'NCW'"),
    ("bias", ops.conv, (ones(1, 5, 1), ones(3, 1, 2)), {"bias": ones(3)}, r"bias .*shape \(2,\)"),
    ("depthwise", ops.depthwise_conv, (ones(1, 5, 5, 3), ones(3, 3, 2, 1)), {},
     r"depthwise_conv: .*channels"),
    ("transpose", ops.conv_transpose, (ones(1, 4, 2), ones(3, 1, 3), 2), {},
     r"conv_transpose: .*channels"),
    ("output-padding", ops.conv_transpose, (ones(1, 4, 1), ones(3, 1, 1), 2),
     {"output_padding": 2}, r"output_padding"),
]  # fmt: skip


@pytest.mark.parametrize(
    "name, op, args, kwargs, message", OP_ERRORS, ids=[e[0] for e in OP_ERRORS]
)
def test_op_errors_name_the_op_and_shapes(name, op, args, kwargs, message):
    with pytest.raises(ValueError, match=message):
        op(*args, **kwargs)


def test_shape_error_shows_both_shapes():
    with pytest.raises(ValueError, match=r"got shapes \(1, 2, 5, 1\) and \(3, 3, 1, 1\)"):
        ops.conv(np.ones((1, 2, 5, 1)), np.ones((3, 3, 1, 1)))


# -------------------------------------------------------------------- layers

LAYER_CASES = [
    ("conv1d", lambda: layers.Conv1D(4, 3, strides=2, padding="same"), (2, 7, 3)),
    ("conv1d-causal", lambda: layers.Conv1D(2, 3, padding="causal", dilation_rate=2), (2, 6, 2)),
    ("conv2d", lambda: layers.Conv2D(4, (3, 2), activation="relu"), (2, 5, 6, 3)),
    ("conv2d-groups", lambda: layers.Conv2D(4, 3, padding="same", groups=2), (1, 4, 4, 4)),
    ("conv2d-tanh", lambda: layers.Conv2D(2, 3, dilation_rate=2, activation="tanh"), (1, 6, 6, 1)),
    ("conv1d-transpose", lambda: layers.Conv1DTranspose(3, 3, strides=2), (2, 4, 2)),
    (
        "conv2d-transpose",
        lambda: layers.Conv2DTranspose(3, 3, 2, "same", output_padding=1, activation="relu"),
        (1, 3, 4, 2),
    ),
    ("depthwise1d", lambda: layers.DepthwiseConv1D(3, depth_multiplier=2), (2, 5, 3)),
    ("depthwise2d", lambda: layers.DepthwiseConv2D(3, 2, "same", activation="relu"), (1, 5, 5, 2)),
    ("separable1d", lambda: layers.SeparableConv1D(4, 2), (2, 5, 3)),
    (
        "separable2d",
        lambda: layers.SeparableConv2D(4, 3, 1, "same", depth_multiplier=2),
        (1, 4, 4, 2),
    ),
]
LAYER_IDS = [case[0] for case in LAYER_CASES]


def reference_output(layer, x):
    """The layer's output computed by the naive loops from its own weights."""
    bias = 0.0 if layer.bias is None else layer.bias.numpy()
    if isinstance(layer, layers.SeparableConv2D | layers.SeparableConv1D):
        depthwise = naive_depthwise(x, layer.depthwise_kernel.numpy(), layer.strides, layer.padding)
        out = naive_conv(depthwise, layer.pointwise_kernel.numpy())
    elif isinstance(layer, layers.DepthwiseConv2D | layers.DepthwiseConv1D):
        out = naive_depthwise(x, layer.kernel.numpy(), layer.strides, layer.padding)
    elif isinstance(layer, layers.Conv2DTranspose | layers.Conv1DTranspose):
        out = naive_conv_transpose(
            x, layer.kernel.numpy(), layer.strides, layer.padding, layer.output_padding
        )
    else:
        padding, inputs = layer.padding, x
        if padding == "causal":
            front = (layer.kernel_size[0] - 1) * layer.dilation_rate[0]
            inputs, padding = np.pad(x, [(0, 0), (front, 0), (0, 0)]), "valid"
        out = naive_conv(inputs, layer.kernel.numpy(), layer.strides, padding, layer.dilation_rate)
    return layer.activation(out + bias).numpy()


@pytest.mark.parametrize("name, make, x_shape", LAYER_CASES, ids=LAYER_IDS)
def test_layer_matches_naive_loops_and_its_output_shape(name, make, x_shape):
    layer = make()
    layer.build((None, *x_shape[1:]))
    layer.set_weights([rand(*w.shape, seed=i) for i, w in enumerate(layer.weights)])
    x = rand(*x_shape, seed=9).astype("float32")
    out = layer(x)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out.numpy(), reference_output(layer, x), rtol=1e-5, atol=1e-5)
    assert layer.compute_output_shape((None, *x_shape[1:])) == (None, *out.shape[1:])


@pytest.mark.parametrize("name, make, x_shape", LAYER_CASES, ids=LAYER_IDS)
def test_layer_config_round_trip(name, make, x_shape):
    layer = make()
    x = rand(*x_shape).astype("float32")
    out = layer(x)
    config = layer.get_config()
    clone = type(layer).from_config(config)
    assert clone.get_config() == config
    clone.build((None, *x_shape[1:]))
    clone.set_weights(layer.get_weights())
    np.testing.assert_array_equal(clone(x).numpy(), out.numpy())


@pytest.mark.parametrize("name, make, x_shape", LAYER_CASES, ids=LAYER_IDS)
def test_layer_weight_gradients_match_central_differences(name, make, x_shape):
    layer = make()
    layer = type(layer).from_config({**layer.get_config(), "dtype": "float64"})
    x = rand(*x_shape)
    weights_out = np.random.default_rng(0).standard_normal(layer(x).shape)
    values = layer.get_weights()
    with GradientTape() as tape:
        loss = ops.sum(layer(x) * weights_out)
    grads = tape.gradient(loss, layer.trainable_weights)
    for index, grad in enumerate(grads):

        def loss_of(arrays, index=index):
            layer.set_weights([*values[:index], arrays[0], *values[index + 1 :]])
            return float(np.sum(layer(x).numpy() * weights_out))

        expected = numeric_gradient(loss_of, [values[index]], 0)
        assert grad.dtype == np.float64
        np.testing.assert_allclose(grad.numpy(), expected, rtol=1e-5, atol=1e-7)


LAYER_ARGUMENT_ERRORS = [
    (lambda: layers.Conv2D(0, 3), r"Conv2D: `filters` must be a positive int, got 0"),
    (lambda: layers.Conv2D(4, (3, 3, 3)), r"Conv2D: `kernel_size` must be .* 2 positive ints"),
    (lambda: layers.Conv2D(4, 3, padding="causal"), r"Conv2D: `padding` must be one of"),
    (lambda: layers.Conv2D(5, 3, groups=2), r"Conv2D: filters \(5\) must be a multiple of groups"),
    (
        lambda: layers.Conv1D(4, 3, data_format="NHWC"),
        r"Conv1D: `data_format` must be .channels_last. or .channels_first.",
    ),
    (lambda: layers.Conv2DTranspose(4, 3, strides=2, output_padding=2), r"output_padding"),
    (lambda: layers.DepthwiseConv2D(3, depth_multiplier=0), r"`depth_multiplier`"),
    (lambda: layers.SeparableConv1D(4, 3, strides=(1, 1)), r"SeparableConv1D: `strides`"),
]


@pytest.mark.parametrize("make, message", LAYER_ARGUMENT_ERRORS)
def test_layer_arguments_are_checked(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_layer_input_errors_name_the_layer_and_shapes():
    conv = layers.Conv2D(4, 3, name="c")
    with pytest.raises(ValueError, match=r"Conv2D 'c' expected inputs of rank 4 .* \(2, 8, 3\)"):
        conv(np.ones((2, 8, 3)))
    conv(np.ones((2, 8, 8, 3)))
    with pytest.raises(ValueError, match=r"Conv2D 'c' was built for 3 .*\(2, 8, 8, 5\)"):
        conv(np.ones((2, 8, 8, 5)))
    with pytest.raises(ValueError, match=r"'c': kernel_size \(3, 3\) .* spans 3 along axis 2"):
        conv(np.ones((2, 8, 2, 3)))
    grouped = layers.Conv1D(4, 3, groups=2, name="g")
    with pytest.raises(ValueError, match=r"Conv1D 'g': the 3 input channels must be a multiple of"):
        grouped(np.ones((1, 5, 3)))
    grouped(np.ones((1, 5, 4)))
    with pytest.raises(ValueError, match=r"Conv1D 'g' was built for 4 input channels"):
        grouped(np.ones((1, 5, 6)))  # the kernel's shape (3, 2, 4) does not show 4
    dilated = layers.Conv1D(1, 3, dilation_rate=3, name="d")
    with pytest.raises(ValueError, match=r"'d': .* dilation_rate \(3,\) spans 7"):
        dilated(np.ones((1, 6, 1)))


def test_transposed_and_same_convolutions_accept_small_inputs():
    assert layers.Conv2DTranspose(2, 5)(np.ones((1, 1, 1, 1))).shape == (1, 5, 5, 2)
    assert layers.Conv2D(2, 5, padding="same")(np.ones((1, 2, 2, 1))).shape == (1, 2, 2, 2)


def test_regularizers_and_constraints_reach_the_weights_and_the_config():
    from minikeras import constraints, regularizers

    layer = layers.SeparableConv2D(
        2,
        3,
        depthwise_regularizer="l2",
        pointwise_constraint=constraints.NonNeg(),
        bias_regularizer=regularizers.L1(0.5),
    )
    layer.build((None, 5, 5, 1))
    assert layer.depthwise_kernel.regularizer.get_config() == {"l2": 0.01}
    assert isinstance(layer.pointwise_kernel.constraint, constraints.NonNeg)
    assert layer.bias.regularizer.get_config() == {"l1": 0.5}
    conv = layers.Conv2D(2, 3, kernel_regularizer=regularizers.L2(0.1), bias_constraint="non_neg")
    conv.build((None, 5, 5, 1))
    assert conv.kernel.regularizer.get_config() == {"l2": 0.1}
    assert isinstance(conv.bias.constraint, constraints.NonNeg)
    config = conv.get_config()
    assert config["kernel_regularizer"] == {
        "module": "keras.regularizers",
        "class_name": "L2",
        "config": {"l2": 0.1},
        "registered_name": None,
    }
    assert config["kernel_constraint"] is None
    assert layers.Conv2D.from_config(config).get_config() == config


def test_a_functional_cnn_gets_symbolic_shapes():
    inputs = layers.Input((28, 28, 1))
    hidden = layers.Conv2D(8, 3, activation="relu")(inputs)
    hidden = layers.MaxPooling2D()(hidden)
    hidden = layers.SeparableConv2D(8, 3, padding="same")(hidden)
    hidden = layers.Conv2DTranspose(4, 3, strides=2, padding="same")(hidden)
    outputs = layers.GlobalAveragePooling2D()(hidden)
    assert hidden.shape == (None, 26, 26, 4) and outputs.shape == (None, 4)
    model = minikeras.Model(inputs, outputs)
    assert model(np.ones((2, 28, 28, 1), "float32")).shape == (2, 4)


def test_main_job_cnn_reaches_97_percent_on_the_digits(capsys):
    assert main(["--model", "cnn", "--epochs", "20", "--verbose", "0"]) == 0
    printed = capsys.readouterr().out
    accuracy = float(printed.split("test accuracy:")[1].split()[0])
    assert accuracy >= 0.97, printed
