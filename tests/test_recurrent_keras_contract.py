"""Recurrent layers where they once differed from Keras 3, found by a review against it.

GRU's recurrent dropout drops only what feeds the gates (the update mixes in
the state itself); with `go_backwards` the mask is passed on as it came;
`Bidirectional` makes its backward copy read backwards and refuses a layer
that already does; a stateful layer's batch size is saved with it; `GRU`
takes Keras's `implementation` argument; `use_cudnn` is checked and kept.
"""

import numpy as np
import pytest

import minikeras as mk
from minikeras.layers import GRU, LSTM, Bidirectional, GRUCell, Input, SimpleRNN


@pytest.mark.parametrize("reset_after", [True, False])
@pytest.mark.parametrize("through", ["GRU", "RNN(GRUCell)"])
def test_gru_recurrent_dropout_keeps_the_state_it_carries(reset_after, through):
    # With the update gate at 1 the new state is the previous one, whatever the
    # dropout mask did to the copies that feed the gates.
    units = 6
    layer = GRU(units, recurrent_dropout=0.5, seed=1, reset_after=reset_after)
    x = np.zeros((1, 1, 3), "float32")
    layer(x)
    weights = layer.get_weights()
    if reset_after:
        weights[2][0, :units] = 50.0
    else:
        weights[2][:units] = 50.0
    layer.set_weights(weights)
    if through != "GRU":
        layer = mk.layers.RNN(layer.cell)
    h0 = np.arange(1, units + 1, dtype="float32")[None] / units
    out = layer(x, initial_state=[h0], training=True)
    np.testing.assert_allclose(out.numpy(), h0, rtol=1e-6)


@pytest.mark.parametrize("cls", [SimpleRNN, LSTM, GRU])
def test_go_backwards_passes_the_mask_on_as_it_came(cls):
    layer = cls(2, go_backwards=True, return_sequences=True)
    mask = np.array([[True, True, True, False, False]])
    np.testing.assert_array_equal(np.asarray(layer.compute_mask(None, mask)), mask)
    out = layer(np.ones((1, 5, 3), "float32"), mask=mask)  # (what the next layer gets)
    np.testing.assert_array_equal(np.asarray(out._keras_mask), mask)


def test_bidirectional_makes_its_backward_copy_read_backwards_and_refuses_one_that_does():
    pair = Bidirectional(LSTM(2, return_sequences=True))
    assert not pair.forward_layer.go_backwards and pair.backward_layer.go_backwards
    with pytest.raises(ValueError, match="differ in go_backwards.*reads forwards"):
        Bidirectional(LSTM(2, go_backwards=True))


def test_bidirectional_checks_and_keeps_stateful():
    assert Bidirectional(LSTM(2, stateful=True)).stateful
    assert not Bidirectional(LSTM(2)).stateful
    with pytest.raises(ValueError, match="same stateful"):
        Bidirectional(LSTM(2, stateful=True), backward_layer=LSTM(2, go_backwards=True))


def test_a_stateful_layer_is_saved_with_its_batch_size(tmp_path):
    inputs = Input(batch_shape=(2, 4, 3))
    model = mk.Model(inputs, LSTM(3, stateful=True)(inputs))
    path = tmp_path / "stateful.keras"
    model.save(path)
    again = mk.saving.load_model(path)
    layer = again.layers[-1]
    assert layer.__dict__["_build_input_shape"][0] == 2
    for each in (model, again):
        with pytest.raises(ValueError, match="batch size 2"):
            each.predict(np.ones((3, 4, 3), "float32"), batch_size=3, verbose=0)


@pytest.mark.parametrize("cls", [GRU, GRUCell, LSTM])
def test_keras_implementation_argument_is_taken(cls):
    layer = cls(2, implementation=1)
    assert "implementation" not in layer.get_config()


def test_a_mask_with_a_trailing_axis_of_one_is_taken():
    layer = LSTM(2, return_sequences=True)
    x = np.random.default_rng(0).normal(size=(2, 4, 3)).astype("float32")
    mask = np.array([[True, True, False, False], [True, True, True, True]])
    np.testing.assert_array_equal(
        layer(x, mask=mask[..., None]).numpy(), layer(x, mask=mask).numpy()
    )


def test_stacked_cells_take_initial_states_nested_per_cell_as_keras_gives_them():
    x = np.random.default_rng(1).normal(size=(2, 3, 5)).astype("float32")
    layer = mk.layers.RNN([mk.layers.LSTMCell(4), GRUCell(2)])
    h, c, g = (np.full((2, n), v, "float32") for n, v in ((4, 0.1), (4, 0.2), (2, 0.3)))
    np.testing.assert_array_equal(
        layer(x, initial_state=[[h, c], [g]]).numpy(), layer(x, initial_state=[h, c, g]).numpy()
    )


@pytest.mark.parametrize("cls", [SimpleRNN, LSTM, GRU])
def test_use_cudnn_is_kept_and_checked_as_keras_does(cls):
    assert cls(2, use_cudnn=False).use_cudnn is False
    assert "use_cudnn" not in cls(2).get_config()
    with pytest.raises(ValueError, match=rf"{cls.__name__}: `use_cudnn`.*'yes'"):
        cls(2, use_cudnn="yes")
