"""Merge layers: values against numpy, gradients against central differences,
use in functional models, and errors that name the layer and every shape."""

import numpy as np
import pytest
from layer_gradients import assert_gradients_match, projection_loss

import minikeras
from minikeras import Model
from minikeras.layers import (
    Add,
    Average,
    Concatenate,
    Dense,
    Input,
    Maximum,
    Minimum,
    Multiply,
    Subtract,
)

rng = np.random.default_rng(3)

REFERENCES = {
    Add: lambda xs: sum(xs),
    Multiply: lambda xs: np.prod(xs, axis=0),
    Average: lambda xs: np.mean(xs, axis=0),
    Maximum: lambda xs: np.max(xs, axis=0),
    Minimum: lambda xs: np.min(xs, axis=0),
}


@pytest.mark.parametrize("layer_class", list(REFERENCES))
@pytest.mark.parametrize("count", [1, 2, 3])
def test_elementwise_merges_match_numpy(layer_class, count):
    xs = [rng.standard_normal((4, 3)).astype("float32") for _ in range(count)]
    y = layer_class()(xs)
    assert y.dtype == np.float32 and y.shape == (4, 3)
    np.testing.assert_allclose(y.numpy(), REFERENCES[layer_class](np.stack(xs)), rtol=1e-6)


def test_subtract_and_concatenate_match_numpy():
    a, b = rng.standard_normal((2, 4, 3)).astype("float32")
    np.testing.assert_array_equal(Subtract()([a, b]).numpy(), a - b)
    c = rng.standard_normal((4, 5)).astype("float32")
    np.testing.assert_array_equal(Concatenate()([a, c]).numpy(), np.concatenate([a, c], -1))
    np.testing.assert_array_equal(Concatenate(axis=0)([a, b]).numpy(), np.concatenate([a, b]))


def test_size_one_axes_broadcast_as_in_keras():
    a, b = np.ones((4, 3)), np.arange(4.0).reshape(4, 1)
    np.testing.assert_array_equal(Add()([a, b]).numpy(), a + b)
    assert Add().compute_output_shape([(None, 3), (None, 1)]) == (None, 3)


@pytest.mark.parametrize("layer_class", [*REFERENCES, Subtract, Concatenate])
def test_merge_gradients_match_finite_differences(layer_class):
    layer = layer_class(dtype="float64")
    xs = [rng.standard_normal((3, 4)) for _ in range(2)]
    assert_gradients_match(lambda a, b: projection_loss(layer([a, b])), xs)


def test_merges_in_a_functional_model_without_sequential():
    a, b = Input(shape=(4,)), Input(shape=(4,))
    hidden_a, hidden_b = Dense(4, name="da")(a), Dense(4, name="db")(b)
    total = Add()([hidden_a, hidden_b])
    both = Concatenate()([total, Subtract()([hidden_a, b]), Multiply()([a, b])])
    assert both.shape == (None, 12)
    outputs = Dense(1, name="out")(Average()([both, both]))
    model = Model([a, b], outputs)
    xa, xb = rng.standard_normal((2, 5, 4)).astype("float32")
    dense_a, dense_b = hidden_a.node.layer, hidden_b.node.layer
    ha = xa @ dense_a.kernel.numpy() + dense_a.bias.numpy()
    hb = xb @ dense_b.kernel.numpy() + dense_b.bias.numpy()
    joined = np.concatenate([ha + hb, ha - xb, xa * xb], axis=-1)
    head = outputs.node.layer
    expected = joined @ head.kernel.numpy() + head.bias.numpy()
    np.testing.assert_allclose(model([xa, xb]).numpy(), expected, rtol=1e-5, atol=1e-6)
    assert len(model.weights) == 6


def test_functional_merge_model_trains():
    minikeras.utils.set_random_seed(1)
    a, b = Input(shape=(3,)), Input(shape=(3,))
    model = Model([a, b], Dense(1)(Concatenate()([Dense(4)(a), Dense(4)(b)])))
    model.compile(optimizer="adam", loss="mse")
    xa, xb = rng.standard_normal((2, 32, 3)).astype("float32")
    y = (xa.sum(1, keepdims=True) - xb[:, :1]).astype("float32")
    history = model.fit([xa, xb], y, epochs=5, batch_size=8, verbose=0)
    assert history.history["loss"][-1] < history.history["loss"][0]


def test_wrong_inputs_are_refused_with_the_layer_and_shapes():
    with pytest.raises(ValueError, match=r"Add 'add_x' .* same shape .*\(2, 3\), \(2, 4\)"):
        Add(name="add_x")([np.ones((2, 3)), np.ones((2, 4))])
    with pytest.raises(ValueError, match=r"'sub_x' should be called on exactly 2 inputs, got 3"):
        Subtract(name="sub_x")([np.ones((2, 3))] * 3)
    with pytest.raises(ValueError, match=r"list of tensors, got one input of shape \(2, 3\)"):
        Multiply()(np.ones((2, 3)))
    with pytest.raises(ValueError, match="at least 1 input"):
        Average().compute_output_shape([])
    with pytest.raises(ValueError, match=r"one rank, got shapes \(2, 3\), \(2, 3, 1\)"):
        Maximum()([np.ones((2, 3)), np.ones((2, 3, 1))])
    with pytest.raises(ValueError, match=r"'cat_x' needs inputs whose shapes match except on axis"):
        Concatenate(name="cat_x")([np.ones((2, 3)), np.ones((3, 3))])
    with pytest.raises(ValueError, match="axis 2 is out of range"):
        Concatenate(axis=2)([np.ones((2, 3)), np.ones((2, 3))])


def test_shapes_are_checked_on_every_call_and_in_functional_graphs():
    layer = Add(name="add_y")
    layer([np.ones((2, 3)), np.ones((2, 3))])
    with pytest.raises(ValueError, match=r"'add_y'.*\(2, 3\), \(2, 5\)"):
        layer([np.ones((2, 3)), np.ones((2, 5))])
    with pytest.raises(ValueError, match=r"\(None, 3\), \(None, 4\)"):
        Minimum()([Input(shape=(3,)), Input(shape=(4,))])


def test_compute_output_shape_with_unknown_sizes():
    assert Add().compute_output_shape([(None, 3), (None, 3)]) == (None, 3)
    assert Concatenate(axis=1).compute_output_shape([(None, 2, 5), (None, 3, 5)]) == (None, 5, 5)
    unknown = Concatenate(axis=1).compute_output_shape([(None, None, 5), (None, 3, 5)])
    assert unknown == (None, None, 5)


@pytest.mark.parametrize("layer", [Add(name="a1"), Subtract(), Concatenate(axis=1, name="c")])
def test_config_round_trips(layer):
    clone = type(layer).from_config(layer.get_config())
    assert clone.get_config() == layer.get_config()


@pytest.mark.parametrize("layer_class", [Add, Multiply, Maximum])
def test_merged_masks_keep_a_step_any_input_keeps_as_in_keras_3(layer_class):
    # Keras 3's Merge.compute_mask: logical OR of the masks; None once any input has none.
    first = np.array([[True, True, False, False]])
    second = np.array([[True, False, True, False]])
    inputs = [np.ones((1, 4, 2), "float32")] * 2
    merged = layer_class().compute_mask(inputs, [first, second])
    assert (
        isinstance(merged, minikeras.Tensor) and merged.dtype == bool
    )  # a mask, as other layers give
    np.testing.assert_array_equal(merged.numpy(), [[True, True, True, False]])
    joined = Concatenate(axis=1).compute_mask(inputs, [first, None])
    assert isinstance(joined, minikeras.Tensor) and joined.shape == (1, 8)
    assert layer_class().compute_mask(inputs, [first, None]) is None
    assert layer_class().compute_mask(inputs, None) is None
