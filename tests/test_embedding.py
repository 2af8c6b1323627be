"""Embedding: table rows by id, integer checks naming the layer, a sorted scatter gradient."""

import numpy as np
import pytest
from layer_gradients import assert_gradients_match, projection_loss

import minikeras as mk
from minikeras import GradientTape, Variable, ops
from minikeras.layers import Embedding
from minikeras.ops.gather import scatter_rows


@pytest.mark.parametrize("dtype", ["int8", "uint16", "int32", "int64", "float32", "float64"])
def test_lookup_is_table_rows_for_any_integer_dtype(dtype):
    layer = Embedding(7, 3)
    ids = np.array([[6, 0, 2], [2, 2, 5]]).astype(dtype)
    outputs = layer(ids)
    assert outputs.shape == (2, 3, 3) and outputs.dtype == np.float32
    np.testing.assert_array_equal(outputs.numpy(), layer.embeddings.numpy()[ids.astype(int)])


def test_bad_ids_are_errors_naming_the_layer_and_the_range():
    layer = Embedding(5, 2, name="words")
    with pytest.raises(ValueError, match=r"Embedding 'words'.*\[0, 5\).*from 0 to 5.*\(1, 2\)"):
        layer(np.array([[0, 5]]))
    with pytest.raises(ValueError, match=r"Embedding 'words'.*from -1 to 1"):
        layer(np.array([[-1, 1]]))
    with pytest.raises(ValueError, match=r"Embedding 'words'.*integer ids.*not whole numbers"):
        layer(np.array([[0.5, 1.0]]))
    with pytest.raises(ValueError, match=r"Embedding 'words'.*integer ids"):
        layer(np.array([[np.nan]]))
    with pytest.raises(ValueError, match="input_dim"):
        Embedding(0, 2)


def test_gradient_with_repeated_ids_matches_central_differences():
    layer = Embedding(4, 3, dtype="float64")
    ids = np.array([[1, 3, 1, 1], [0, 1, 3, 3]])
    layer.build(ids.shape)
    assert_gradients_match(lambda: projection_loss(layer(ids)), [], [layer.embeddings])


def test_scatter_matches_add_at_for_many_repeats_and_wide_rows():
    rng = np.random.default_rng(0)
    for rows, shape, width in [(96, (32, 50), 128), (5000, (7, 9), 64), (3, (40,), 5)]:
        ids = rng.integers(0, rows, shape)
        gradient = rng.standard_normal((*shape, width)).astype("float32")
        expected = np.zeros((rows, width), "float32")
        np.add.at(expected, ids, gradient)
        got = scatter_rows(gradient, ids, rows)
        assert got.dtype == np.float32
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)
    assert not scatter_rows(np.zeros((0, 2), "float32"), np.zeros(0, int), 3).any()


def test_embedding_lookup_with_row_shapes_and_second_order_gradients():
    table = Variable(np.arange(12.0).reshape(3, 2, 2))
    ids = np.array([2, 0, 2])
    weights = Variable(np.ones((3, 2, 2)))
    with GradientTape() as outer:
        with GradientTape() as inner:
            loss = ops.sum(ops.embedding_lookup(table, ids) * weights)
        grad = inner.gradient(loss, table)  # counts per row, times weights
        total = ops.sum(grad * grad)
    np.testing.assert_array_equal(grad.numpy()[:, 0, 0], [1, 0, 2])
    # d/dweights of sum(scatter(weights)^2) = 2 * scatter(weights) gathered back.
    np.testing.assert_array_equal(outer.gradient(total, weights).numpy()[:, 0, 0], [4, 2, 4])


def test_mask_zero_output_shape_config_and_initial_weights():
    table = np.arange(8.0).reshape(4, 2)
    layer = Embedding(4, 2, mask_zero=True, weights=[table], name="e")
    ids = np.array([[3, 1, 0, 0]])
    np.testing.assert_array_equal(layer(ids).numpy()[0], table[[3, 1, 0, 0]])
    np.testing.assert_array_equal(layer.compute_mask(ids).numpy(), [[True, True, False, False]])
    assert layer.compute_output_shape((None, 4)) == (None, 4, 2)
    config = layer.get_config()
    copy = Embedding.from_config(config)
    assert copy.get_config() == config and copy.mask_zero
    # The sequence axis may change between calls: no last-axis lock.
    assert layer(np.zeros((2, 9), int)).shape == (2, 9, 2)


def test_input_length_builds_a_sequential_at_once_and_trains():
    model = mk.Sequential(
        [Embedding(10, 4, input_length=6), mk.layers.LSTM(3), mk.layers.Dense(2, "softmax")]
    )
    assert model.built and model.count_params() == 40 + (4 * 12 + 3 * 12 + 12) + 8
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    ids = np.random.default_rng(0).integers(0, 10, (8, 6))
    before = model.layers[0].embeddings.numpy().copy()
    model.train_on_batch(ids, np.zeros(8, int))
    assert not np.allclose(model.layers[0].embeddings.numpy(), before)
