"""TimeDistributed: the same as calling the layer at each step, gradients against central
differences, masks in and out, symbolic shapes, configs, saving and errors."""

import numpy as np
import pytest
from layer_gradients import assert_gradients_match, projection_loss

import minikeras as mk
from minikeras import Input, Model, layers

rng = np.random.default_rng(13)


@pytest.mark.parametrize(
    "make, step_shape",
    [(lambda: layers.Dense(4), (3,)), (lambda: layers.Conv2D(2, 3), (6, 5, 2)),
     (lambda: layers.EinsumDense("ab,bc->ac", 3), (2,))],
)  # fmt: skip
def test_equals_the_layer_called_at_each_step(make, step_shape):
    layer = layers.TimeDistributed(make())
    x = rng.standard_normal((2, 4, *step_shape)).astype("float32")
    y = layer(x).numpy()
    steps = [layer.layer(x[:, t]).numpy() for t in range(4)]
    np.testing.assert_allclose(y, np.stack(steps, axis=1), rtol=1e-5, atol=1e-6)
    assert y.dtype == np.float32
    assert layer.compute_output_shape((None, None, *step_shape)) == (None, None, *y.shape[2:])


def test_symbolic_shapes_and_weights_shared_over_time():
    inputs = Input((None, 8))
    dense = layers.Dense(5)
    outputs = layers.TimeDistributed(dense)(inputs)
    assert outputs.shape == (None, None, 5)
    model = Model(inputs, outputs)
    assert [w.shape for w in model.trainable_weights] == [(8, 5), (5,)]
    assert model.predict(np.ones((3, 7, 8)), verbose=0).shape == (3, 7, 5)


def test_gradients_match_finite_differences():
    layer = layers.TimeDistributed(
        layers.Dense(2, activation="tanh", bias_initializer="random_normal", dtype="float64"),
        dtype="float64",
    )
    x = rng.standard_normal((2, 3, 4))
    layer(x)
    inner = layer.layer
    grads = assert_gradients_match(
        lambda t: projection_loss(layer(t)), [x], [inner.kernel, inner.bias]
    )
    assert [g.shape for g in grads] == [(2, 3, 4), (4, 2), (2,)]


def test_a_mask_reaches_the_inner_layer_folded():
    x = np.log(np.array([[[1.0, 1.0, 2.0], [1.0, 3.0, 4.0]]]))  # (1, 2, 3)
    mask = np.array([[[True, True, False], [False, True, True]]])
    out = layers.TimeDistributed(layers.Softmax())(x, mask=mask).numpy()
    np.testing.assert_allclose(out, [[[0.5, 0.5, 0.0], [0.0, 3 / 7, 4 / 7]]], rtol=1e-6)


def test_the_time_mask_passes_on_to_an_lstm():
    embed = layers.Embedding(10, 4, mask_zero=True)
    step = layers.TimeDistributed(layers.Dense(3))
    lstm = layers.LSTM(2)

    def model_for(steps):
        ids = Input((steps,), dtype="int32")
        return Model(ids, lstm(step(embed(ids))))

    # Padding is skipped: the padded sequence gives the unpadded one's final state.
    padded = model_for(5).predict(np.array([[3, 4, 5, 0, 0]]), verbose=0)
    short = model_for(3).predict(np.array([[3, 4, 5]]), verbose=0)
    np.testing.assert_allclose(padded, short, rtol=1e-5)


def test_config_round_trip_and_saving(tmp_path):
    layer = layers.TimeDistributed(layers.Dense(3, activation="relu", name="inner"), name="td")
    config = layer.get_config()
    clone = layers.TimeDistributed.from_config(config)
    assert clone.layer.units == 3 and clone.layer.name == "inner" and clone.name == "td"
    model = mk.Sequential([Input((4, 2)), layer])
    x = rng.standard_normal((2, 4, 2)).astype("float32")
    path = tmp_path / "td.keras"
    model.save(path)
    loaded = mk.saving.load_model(path)
    np.testing.assert_allclose(loaded.predict(x, verbose=0), model.predict(x, verbose=0))


def test_errors_name_the_layer_and_shapes():
    with pytest.raises(ValueError, match="`layer` must be a Layer instance"):
        layers.TimeDistributed("dense")
    with pytest.raises(
        ValueError, match=r"'td' needs inputs of shape \(batch, time, ...\) .* \(2, 3\)"
    ):
        layers.TimeDistributed(layers.Dense(2), name="td")(np.ones((2, 3)))
    with pytest.raises(
        ValueError, match=r"mask whose first two axes .*\(2, 3\), got mask shape \(2, 4\)"
    ):
        layers.TimeDistributed(layers.Dense(2))(np.ones((2, 3, 4)), mask=np.ones((2, 4), bool))
    with pytest.raises(ValueError, match="needs a layer with one output, got list from LSTM"):
        layers.TimeDistributed(layers.LSTM(2, return_state=True))(np.ones((1, 2, 3, 4)))
