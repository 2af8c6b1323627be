"""adaptive_average_pool and adaptive_max_pool: against the window definition written out,
gradients, Keras's values and dtypes (1-3 spatial axes, both layouts), nodes through .keras."""

import itertools
import math

import numpy as np
import pytest
from finite_differences import check_float32, check_gradients, check_second_order
from op_graphs import assert_saves_and_crosses_to_keras

from minikeras import ops

RNG = np.random.default_rng(13)


def _by_hand(x, output_size, reduce):
    """Loops over every output position of a channels_last array; windows as PyTorch's."""
    spatial = x.shape[1:-1]
    out = np.zeros((x.shape[0], *output_size, x.shape[-1]))
    for position in itertools.product(*(range(n) for n in output_size)):
        window = tuple(
            slice(math.floor(i * length / n), math.ceil((i + 1) * length / n))
            for i, length, n in zip(position, spatial, output_size)
        )
        patch = x[(slice(None), *window)]
        out[(slice(None), *position)] = reduce(patch.reshape(x.shape[0], -1, x.shape[-1]), axis=1)
    return out


CASES = [
    ((2, 5, 3), (3,)),
    ((2, 5, 7, 3), (3, 2)),
    ((1, 4, 6, 2), (7, 4)),
    ((1, 4, 5, 6, 2), (2, 3, 4)),
]


@pytest.mark.parametrize("shape, output_size", CASES)
def test_matches_the_window_definition(shape, output_size):
    x = RNG.normal(size=shape).astype("float32")
    average = ops.adaptive_average_pool(x, output_size)
    np.testing.assert_allclose(average.numpy(), _by_hand(x, output_size, np.mean), rtol=1e-5)
    maximum = ops.adaptive_max_pool(x, output_size)
    np.testing.assert_array_equal(maximum.numpy(), _by_hand(x, output_size, np.max))
    assert average.dtype == maximum.dtype == np.float32


def test_by_hand_and_layouts():
    x = np.array([1.0, 5.0, 2.0, 0.0, 4.0], "float32").reshape(1, 5, 1)  # windows 0-1, 1-3, 3-4
    np.testing.assert_allclose(ops.adaptive_average_pool(x, 3).numpy().ravel(), [3, 7 / 3, 2])
    np.testing.assert_array_equal(ops.adaptive_max_pool(x, 3).numpy().ravel(), [5, 5, 4])
    np.testing.assert_array_equal(ops.adaptive_max_pool(x, 1).numpy().ravel(), [5])
    images = RNG.normal(size=(2, 6, 5, 3)).astype("float32")
    first = ops.adaptive_max_pool(np.moveaxis(images, -1, 1), (4, 2), "channels_first")
    np.testing.assert_array_equal(
        np.moveaxis(first.numpy(), 1, -1), ops.adaptive_max_pool(images, (4, 2)).numpy()
    )
    ints = np.arange(10, dtype="int32").reshape(1, 10, 1)
    assert ops.adaptive_max_pool(ints, 3).dtype == np.int32
    assert ops.adaptive_average_pool(ints, 3).dtype == np.float32


@pytest.mark.parametrize("name", ["adaptive_average_pool", "adaptive_max_pool"])
def test_gradients_match_finite_differences(name):
    def fn(x):
        return getattr(ops, name)(x, (3, 2)) * ops.sum(x)  # (a product: second order too)

    data = [RNG.permutation(40).reshape(1, 5, 4, 2).astype("float32") / 10]  # (no ties)
    check_gradients(fn, data)
    check_second_order(fn, data)
    check_float32(fn, data)


def test_bad_arguments_are_named():
    x = np.ones((2, 5, 3), "float32")
    with pytest.raises(ValueError, match="adaptive_average_pool: inputs must be 3-D, 4-D or 5-D"):
        ops.adaptive_average_pool(x[0], 2)
    with pytest.raises(ValueError, match="adaptive_max_pool: output_size must be a positive int"):
        ops.adaptive_max_pool(x, (2, 2))
    with pytest.raises(ValueError, match="output_size must be a positive int"):
        ops.adaptive_max_pool(x, 0)
    with pytest.raises(ValueError, match="adaptive_average_pool: `data_format` must be"):
        ops.adaptive_average_pool(x, 2, data_format="NWC")


def test_the_same_values_and_dtypes_as_keras():
    keras = pytest.importorskip("keras")
    cases = [
        ((2, 5, 7, 3), (3, 2), None), ((2, 5, 7, 3), (8, 8), "channels_last"),
        ((2, 3, 5, 7), (2, 4), "channels_first"), ((2, 9, 3), (4,), None),
        ((1, 4, 5, 6, 2), (2, 3, 4), None),
    ]  # fmt: skip
    for shape, output_size, data_format in cases:
        x = RNG.normal(size=shape).astype("float32") * 10
        for data in (x, x.astype("int32"), x.astype("float16")):
            for name in ("adaptive_average_pool", "adaptive_max_pool"):
                call = getattr(keras.ops, name)(data, output_size, data_format=data_format)
                theirs = keras.ops.convert_to_numpy(call)
                mine = getattr(ops, name)(data, output_size, data_format=data_format).numpy()
                assert mine.dtype == theirs.dtype and mine.shape == theirs.shape, (name, shape)
                tolerance = 1e-2 if mine.dtype == np.float16 else 1e-5
                np.testing.assert_allclose(mine, theirs, rtol=tolerance, atol=tolerance)


def _graph(lib):
    x = lib.Input((5, 7, 3), name="x")
    o = lib.ops
    return lib.Model(
        x,
        [
            o.adaptive_average_pool(x, (3, 2)),
            o.adaptive_max_pool(x, output_size=(2, 4), data_format="channels_last"),
        ],
    )


def test_models_of_these_ops_save_and_cross_to_keras(tmp_path):
    data = RNG.normal(size=(2, 5, 7, 3)).astype("float32")
    # Keras 3.15.1 cannot reload these nodes from any file, its own included: the
    # output_size it reads back is a list, which its output spec adds to a tuple.
    keras_bug = (TypeError, "concatenate tuple")
    assert_saves_and_crosses_to_keras(_graph, data, tmp_path, keras_reload_bug=keras_bug)
