"""SimpleRNN, LSTM and GRU in recorded steps: `fit`'s compiled step, a custom loop's
replayed call and `predict` give bit for bit what the eager calls give.

Their fused ops make the default zero states inside the op, and an RNN over
stacked cells makes them with an op of the batch, so a recording holds no array
from outside its ops. A stateful layer (whose kept states are Python's)
is refused; a mask, given initial states made outside the ops or a dropout mask
drawn in Python leave the recording refused by `Program.build`: those steps run
eagerly, with the same numbers.
"""

import numpy as np
import pytest
from test_compiled_step import assert_same_training
from test_replayed_call import assert_same, eager, programs, train

import minikeras as mk
from minikeras.engine.replay import Program
from minikeras.layers import GRU, LSTM, Dense, Embedding, Input, SimpleRNN
from minikeras.models.replayability import not_replayable

RNG = np.random.default_rng(0)
SEQUENCES = RNG.normal(size=(40, 5, 3)).astype(np.float32)
LABELS = RNG.integers(0, 3, size=40)
SPARSE = mk.losses.SparseCategoricalCrossentropy(from_logits=True)


def stack(layer, **kwargs):
    def make():
        return mk.Sequential([Input((5, 3)), layer(4, **kwargs), Dense(3)])

    return make


def two_layers():
    return mk.Sequential([
        Input((5, 3)), LSTM(4, return_sequences=True), GRU(3, go_backwards=True), Dense(3),
    ])  # fmt: skip


def functional_with_states():
    """An LSTM whose initial states the model computes from the sequence, by other layers."""
    sequences = Input((5, 3))
    summary = mk.layers.GlobalAveragePooling1D()(sequences)
    h, c = Dense(4, activation="tanh")(summary), Dense(4)(summary)
    outputs, state_h, _ = LSTM(4, return_state=True)(sequences, initial_state=[h, c])
    return mk.Model(sequences, Dense(3)(mk.layers.Concatenate()([outputs, state_h])))


def stacked_cells():
    """An RNN over stacked cells: a step loop of ordinary ops, from zeros an op makes."""
    cells = mk.layers.StackedRNNCells([mk.layers.LSTMCell(4), mk.layers.GRUCell(3)])
    return mk.Sequential([Input((5, 3)), mk.layers.RNN(cells), Dense(3)])


CASES = {
    "simple_rnn": stack(SimpleRNN),
    "lstm": stack(LSTM),
    "gru": stack(GRU),
    "gru-reset-before": stack(GRU, reset_after=False),
    "lstm-relu-backwards": stack(LSTM, activation="relu", go_backwards=True),
    "lstm-gru-stacked": two_layers,
}


@pytest.mark.parametrize("make", CASES.values(), ids=CASES.keys())
def test_fit_replays_a_recurrent_model_bit_for_bit(make):
    model = assert_same_training(make, SPARSE, SEQUENCES, LABELS)
    assert model._compiled_step.reason is None
    compiled = list(model._compiled_step.programs.values())
    assert compiled and all(type(program) is Program for program in compiled)


def test_initial_states_computed_by_layers_are_replayed_bit_for_bit():
    model = assert_same_training(functional_with_states, SPARSE, SEQUENCES, LABELS)
    assert all(type(p) is Program for p in model._compiled_step.programs.values())


@pytest.mark.parametrize(
    "make", [stack(LSTM), stack(GRU), stacked_cells], ids=["lstm", "gru", "stacked-cells"]
)
def test_a_custom_loop_and_predict_replay_the_recurrent_call_bit_for_bit(make, monkeypatch):
    replayed = train(make, SEQUENCES[:16], steps=4)
    model = replayed[0]
    assert any(type(p) is Program for p in programs(model).values())
    predicted = model.predict(SEQUENCES, verbose=0)
    eager(monkeypatch)
    expected = train(make, SEQUENCES[:16], steps=4)
    assert programs(expected[0]) == {}
    assert_same(replayed, expected)
    np.testing.assert_array_equal(predicted, expected[0](SEQUENCES).numpy())


def test_a_stateful_layer_is_not_replayed_and_keeps_its_states_across_batches():
    def make():
        layer = LSTM(4, stateful=True, name="kept")
        return mk.Sequential([Input(batch_shape=(8, 5, 3)), layer, Dense(3)])

    assert not_replayable(make()) == "layer 'kept' is stateful (it keeps its states in Python)"
    model = assert_same_training(make, SPARSE, SEQUENCES, LABELS, batch_size=8)
    assert "stateful" in model._compiled_step.reason
    # Its states moved on from batch to batch, as an eager stateful LSTM's do.
    assert np.abs(model.layers[0].states[0].numpy()).sum() > 0


def test_a_masked_recurrent_step_is_refused_and_trains_as_eagerly():
    ids = RNG.integers(1, 9, size=(40, 5))
    ids[::3, 3:] = 0  # padding

    def make():
        return mk.Sequential([Input((5,), dtype="int32"), Embedding(9, 3, mask_zero=True), GRU(4)])

    model = assert_same_training(make, SPARSE, ids, LABELS % 4)
    refusals = list(model._compiled_step.programs.values())
    assert refusals and all("outside the recorded ops" in str(r) for r in refusals)


def test_input_dropout_in_a_recurrent_layer_trains_as_eagerly():
    make = stack(LSTM, dropout=0.3)
    model = assert_same_training(make, SPARSE, SEQUENCES, LABELS, epochs=2)
    refusals = list(model._compiled_step.programs.values())  # (its mask is drawn in Python)
    assert refusals and all("outside the recorded ops" in str(r) for r in refusals)


def test_a_recurrent_layer_with_an_activation_of_the_users_is_not_replayed():
    model = stack(SimpleRNN, activation=lambda x: mk.ops.tanh(x) * 0.5)()
    assert not_replayable(model).endswith("has an activation minikeras does not define")
    model = stack(LSTM, recurrent_activation=lambda x: mk.ops.sigmoid(x))()
    assert not_replayable(model).endswith("has an recurrent_activation minikeras does not define")


def test_stacked_cells_with_a_cells_own_initial_states_train_eagerly_from_them():
    class StartsFromHalf(mk.layers.GRUCell):
        def get_initial_state(self, batch_size=None):
            return [mk.ops.full((batch_size, self.units), 0.5)]

    def make():
        cells = mk.layers.StackedRNNCells([mk.layers.LSTMCell(4), StartsFromHalf(3)])
        return mk.Sequential([Input((5, 3)), mk.layers.RNN(cells), Dense(3)])

    assert not_replayable(make()) is not None  # (a user's cell class)
    model = assert_same_training(make, SPARSE, SEQUENCES, LABELS)
    layer = model.layers[0]
    halves = [np.zeros((4, 4), "float32")] * 2 + [np.full((4, 3), 0.5, "float32")]
    np.testing.assert_array_equal(
        layer(SEQUENCES[:4]).numpy(), layer(SEQUENCES[:4], initial_state=halves).numpy()
    )
