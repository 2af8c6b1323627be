"""Pooling: ops against naive loops, gradients against central differences, layers."""

import numpy as np
import pytest
from finite_differences import check_float32, check_gradients, check_second_order

from minikeras import GradientTape, Tensor, layers, ops

# ------------------------------------------------------------ naive references


def naive_pool(x, pool_size, strides=None, padding="valid", reduce="max"):
    """Loops over windows; a "same" window reduces over its real (unpadded) inputs only."""
    rank = x.ndim - 2
    pool = (pool_size,) * rank if isinstance(pool_size, int) else tuple(pool_size)
    strides = pool if strides is None else strides
    strides = (strides,) * rank if isinstance(strides, int) else tuple(strides)
    starts = []
    for n, k, s in zip(x.shape[1:-1], pool, strides):
        if padding == "same":
            out = -(-n // s)
            before = max((out - 1) * s + k - n, 0) // 2
        else:
            out, before = (n - k) // s + 1, 0
        starts.append([o * s - before for o in range(out)])
    result = np.zeros((x.shape[0], *map(len, starts), x.shape[-1]))
    for position in np.ndindex(*map(len, starts)):
        index = tuple(
            slice(max(axis_starts[o], 0), axis_starts[o] + k)
            for axis_starts, o, k in zip(starts, position, pool)
        )
        window = x[(slice(None), *index)].reshape(x.shape[0], -1, x.shape[-1])
        value = window.max(axis=1) if reduce == "max" else window.mean(axis=1)
        result[(slice(None), *position)] = value
    return result


def rand(*shape, seed=0):
    return np.random.default_rng(seed + sum(shape)).standard_normal(shape)


# (name, inputs shape, pool_size, strides, padding)
POOL_CASES = [
    ("1d-valid", (2, 7, 3), 2, None, "valid"),
    ("1d-same", (2, 7, 3), 2, None, "same"),
    ("1d-overlapping", (2, 7, 2), 3, 1, "valid"),
    ("1d-overlapping-same", (1, 6, 2), 3, 2, "same"),
    ("2d-valid", (2, 4, 6, 3), 2, None, "valid"),
    ("2d-valid-odd", (2, 5, 5, 2), 2, None, "valid"),
    ("2d-same-odd", (2, 5, 3, 2), 2, None, "same"),
    ("2d-overlapping-same", (1, 5, 4, 2), 3, 1, "same"),
    ("2d-rectangular", (1, 6, 5, 2), (3, 2), (2, 1), "valid"),
    ("2d-stride-above-pool", (1, 7, 7, 1), 2, 3, "valid"),
    ("3d-same", (1, 3, 4, 3, 2), 2, None, "same"),
]
POOL_IDS = [case[0] for case in POOL_CASES]
POOL_ARGS = "name, x_shape, pool_size, strides, padding"
POOLS = {"max": ops.max_pool, "average": ops.average_pool}


@pytest.mark.parametrize("reduce", ["max", "average"])
@pytest.mark.parametrize(POOL_ARGS, POOL_CASES, ids=POOL_IDS)
def test_pool_matches_naive_loops(name, x_shape, pool_size, strides, padding, reduce):
    x = rand(*x_shape)
    out = POOLS[reduce](x, pool_size, strides, padding)
    expected = naive_pool(x, pool_size, strides, padding, reduce)
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("reduce", ["max", "average"])
@pytest.mark.parametrize(POOL_ARGS, POOL_CASES, ids=POOL_IDS)
def test_pool_gradients_match_central_differences(
    name, x_shape, pool_size, strides, padding, reduce
):
    def fn(x):
        return POOLS[reduce](x, pool_size, strides, padding)

    check_gradients(fn, [rand(*x_shape)])
    check_float32(fn, [rand(*x_shape)])


@pytest.mark.parametrize("reduce", ["max", "average"])
def test_pool_second_order_gradients(reduce):
    # The gradient of sum(pool(x) ** 2 * w) is linear in pool(x): second order flows
    # through the backward pass's own transpose.
    check_second_order(lambda x: POOLS[reduce](x, 2, 1, "same"), [rand(1, 3, 4, 2)])


@pytest.mark.parametrize("strides", [2, 1])
def test_max_pool_gradient_goes_to_the_first_of_equal_maxima(strides):
    x = Tensor(np.array([[1.0, 3.0, 3.0, 0.0, 2.0, 2.0]], "float32").reshape(1, 6, 1))
    with GradientTape() as tape:
        tape.watch(x)
        y = ops.max_pool(x, 2, strides)
        loss = ops.sum(y)
    grad = tape.gradient(loss, x).numpy()[0, :, 0]
    expected = [0, 1, 1, 0, 1, 0] if strides == 2 else [0, 2, 1, 0, 2, 0]
    np.testing.assert_array_equal(grad, expected)


def test_max_pool_same_padding_never_wins():
    x = -np.arange(1.0, 6.0, dtype="float32").reshape(1, 5, 1)  # all negative
    np.testing.assert_array_equal(ops.max_pool(x, 2, padding="same").numpy()[0, :, 0], [-1, -3, -5])


def test_max_pool_is_differentiable_inside_and_outside_a_tape_the_same():
    x = rand(2, 6, 6, 3).astype("float32")
    with GradientTape() as tape:
        watched = Tensor(x)
        tape.watch(watched)
        inside = ops.max_pool(watched, 3, 2, "same")
    np.testing.assert_array_equal(inside.numpy(), ops.max_pool(x, 3, 2, "same").numpy())


OP_ERRORS = [
    ("rank", ops.max_pool, (np.ones((2, 5)), 2), {}, r"max_pool: expected inputs"),
    ("too-small", ops.average_pool, (np.ones((1, 1, 5, 1)), 2), {}, r"average_pool: .*only 1"),
    ("pool-size", ops.max_pool, (np.ones((1, 4, 4, 1)), (2, 2, 2)), {}, r"pool_size"),
    ("strides", ops.max_pool, (np.ones((1, 4, 1)), 2), {"strides": 0}, r"strides"),
    ("padding", ops.max_pool, (np.ones((1, 4, 1)), 2), {"padding": "causal"}, r"padding"),
    ("layout", ops.average_pool, (np.ones((1, 4, 1)), 2), {"data_format": "NCW"},
     r"average_pool: `data_format` must be 'channels_last' or 'channels_first'"),
]  # fmt: skip


@pytest.mark.parametrize(
    "name, op, args, kwargs, message", OP_ERRORS, ids=[e[0] for e in OP_ERRORS]
)
def test_op_errors_name_the_op_and_shapes(name, op, args, kwargs, message):
    with pytest.raises(ValueError, match=message):
        op(*args, **kwargs)


# -------------------------------------------------------------------- layers

LAYER_CASES = [
    ("max1d", lambda: layers.MaxPooling1D(), (2, 7, 3), "max"),
    ("max1d-same-strides", lambda: layers.MaxPooling1D(3, 2, "same"), (2, 7, 3), "max"),
    ("max2d", lambda: layers.MaxPooling2D(), (2, 5, 4, 3), "max"),
    ("max2d-same", lambda: layers.MaxPooling2D((2, 3), padding="same"), (1, 5, 5, 2), "max"),
    ("average1d", lambda: layers.AveragePooling1D(pool_size=3), (2, 7, 3), "average"),
    ("average2d", lambda: layers.AveragePooling2D(), (2, 4, 5, 2), "average"),
    ("average2d-same", lambda: layers.AveragePooling2D(3, 1, "same"), (1, 4, 4, 2), "average"),
]


@pytest.mark.parametrize(
    "name, make, x_shape, reduce", LAYER_CASES, ids=[c[0] for c in LAYER_CASES]
)
def test_pooling_layer_matches_naive_and_round_trips(name, make, x_shape, reduce):
    layer = make()
    x = rand(*x_shape).astype("float32")
    out = layer(x)
    expected = naive_pool(x, layer.pool_size, layer.strides, layer.padding, reduce)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-6, atol=1e-6)
    assert layer.compute_output_shape((None, *x_shape[1:])) == (None, *out.shape[1:])
    clone = type(layer).from_config(layer.get_config())
    assert clone.get_config() == layer.get_config()
    np.testing.assert_array_equal(clone(x).numpy(), out.numpy())


GLOBAL_CASES = [
    (layers.GlobalAveragePooling1D, (2, 5, 3), np.mean),
    (layers.GlobalAveragePooling2D, (2, 4, 5, 3), np.mean),
    (layers.GlobalMaxPooling1D, (2, 5, 3), np.max),
    (layers.GlobalMaxPooling2D, (2, 4, 5, 3), np.max),
]


@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("cls, x_shape, reduce", GLOBAL_CASES)
def test_global_pooling_reduces_every_spatial_axis(cls, x_shape, reduce, keepdims):
    layer = cls(keepdims=keepdims)
    x = rand(*x_shape).astype("float32")
    out = layer(x)
    axes = tuple(range(1, len(x_shape) - 1))
    np.testing.assert_allclose(out.numpy(), reduce(x, axis=axes, keepdims=keepdims), rtol=1e-6)
    assert layer.compute_output_shape((None, *x_shape[1:])) == (None, *out.shape[1:])
    assert cls.from_config(layer.get_config()).get_config() == layer.get_config()
    wide = cls(keepdims=keepdims, dtype="float64")
    check_gradients(lambda x: wide(x), [rand(*x_shape)])


def test_pooling_layer_gradient_reaches_the_inputs():
    layer = layers.MaxPooling2D(3, 2, "same", dtype="float64")
    check_gradients(lambda x: layer(x), [rand(1, 5, 5, 2)])


def test_pooling_layer_errors_name_the_layer_and_shapes():
    with pytest.raises(
        ValueError, match=r"MaxPooling2D 'p' expected inputs of rank 4 .*\(2, 8, 3\)"
    ):
        layers.MaxPooling2D(name="p")(np.ones((2, 8, 3)))
    with pytest.raises(ValueError, match=r"AveragePooling1D 'a': pool_size \(3,\) is larger .* 2"):
        layers.AveragePooling1D(3, name="a")(np.ones((1, 2, 4)))
    with pytest.raises(ValueError, match=r"GlobalMaxPooling1D 'g' expected inputs of rank 3"):
        layers.GlobalMaxPooling1D(name="g")(np.ones((1, 2, 2, 4)))
    with pytest.raises(ValueError, match=r"MaxPooling1D: `pool_size`"):
        layers.MaxPooling1D(0)


@pytest.mark.parametrize("layer_class", [layers.MaxPooling3D, layers.GlobalAveragePooling3D])
def test_3d_pooling_on_images_names_the_volume_axes(layer_class):
    with pytest.raises(
        ValueError,
        match=r"3D 'v' expected inputs of rank 5 \(batch, depth, height, width, channels\), "
        r"got shape \(2, 4, 4, 3\)",
    ):
        layer_class(name="v")(np.ones((2, 4, 4, 3), "float32"))
    with pytest.raises(ValueError, match=r"AveragePooling2D: `padding`"):
        layers.AveragePooling2D(padding="full")


def test_pooling_layers_keep_keras_defaults():
    config = layers.MaxPooling2D().get_config()
    assert (config["pool_size"], config["strides"], config["padding"]) == ((2, 2), (2, 2), "valid")
    assert layers.GlobalAveragePooling2D().get_config()["keepdims"] is False
