"""stateful=True: states carried between batches, a fixed batch size, reset_states."""

import numpy as np
import pytest

import minikeras as mk
from minikeras.layers import GRU, LSTM, RNN, Input, Layer, LSTMCell, SimpleRNN, SimpleRNNCell

MAKERS = {
    "rnn_lstm_cell": lambda **k: RNN(LSTMCell(3), **k),
    "simple_rnn": lambda **k: SimpleRNN(3, **k),
    "lstm": lambda **k: LSTM(3, **k),
    "gru": lambda **k: GRU(3, **k),
}


def sequences(seed=0, batch=2, steps=6, features=4):
    return np.random.default_rng(seed).standard_normal((batch, steps, features)).astype("float32")


@pytest.mark.parametrize("name", MAKERS)
def test_two_halves_equal_the_whole_sequence(name):
    x = sequences()
    whole = MAKERS[name](return_sequences=True, return_state=True)
    halves = MAKERS[name](return_sequences=True, return_state=True, stateful=True)
    whole.build(x.shape)
    halves.build(x.shape)
    halves.set_weights(whole.get_weights())
    expected = whole(x)
    first, second = halves(x[:, :3]), halves(x[:, 3:])
    np.testing.assert_allclose(
        np.concatenate([first[0].numpy(), second[0].numpy()], axis=1),
        expected[0].numpy(),
        rtol=1e-5,
        atol=1e-6,
    )
    for kept, state in zip(halves.states, expected[1:]):
        np.testing.assert_allclose(kept.numpy(), state.numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", MAKERS)
def test_reset_states_starts_again_from_zeros(name):
    x = sequences(1)
    layer = MAKERS[name](stateful=True)
    fresh = layer(x).numpy()
    assert not np.allclose(layer(x).numpy(), fresh)  # started from the kept states
    layer.reset_states()
    np.testing.assert_array_equal(layer(x).numpy(), fresh)
    layer.reset_state()
    assert all(not np.any(state.numpy()) for state in layer.states)


@pytest.mark.parametrize("name", MAKERS)
def test_another_batch_size_is_refused_before_anything_changes(name):
    layer = MAKERS[name](stateful=True, name=f"kept_{name}")
    layer(sequences(batch=2))
    before = [s.numpy() for s in layer.states]
    with pytest.raises(ValueError, match=rf"kept_{name}.*batch size 2.*batch of 5"):
        layer(sequences(batch=5))
    for kept, old in zip(layer.states, before):
        np.testing.assert_array_equal(kept.numpy(), old)


def test_the_batch_size_comes_from_the_input_batch_shape():
    inputs = Input(batch_shape=(2, None, 4))
    layer = LSTM(3, stateful=True, name="fixed")
    model = mk.Model(inputs, layer(inputs))
    assert [s.shape for s in layer.states] == [(2, 3), (2, 3)]
    with pytest.raises(ValueError, match=r"fixed.*batch size 2.*batch of 3"):
        model(sequences(batch=3))


def test_model_reset_states_reaches_nested_layers():
    class Block(Layer):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.inner = SimpleRNN(2, stateful=True)

        def call(self, inputs):
            return self.inner(inputs)

    inputs = Input(batch_shape=(2, 5, 4))
    block, top = Block(), GRU(2, stateful=True, return_sequences=True)
    model = mk.Model(inputs, block(top(inputs)))
    x = sequences(2, steps=5)
    fresh = model(x).numpy()
    assert not np.allclose(model(x).numpy(), fresh)
    model.reset_states()
    np.testing.assert_array_equal(model(x).numpy(), fresh)


def test_reset_states_with_values_and_its_errors():
    layer = RNN(SimpleRNNCell(2), stateful=True, name="s")
    layer(sequences(batch=1))
    layer.reset_states([np.array([[0.5, -0.5]])])
    np.testing.assert_array_equal(layer.states[0].numpy(), [[0.5, -0.5]])
    with pytest.raises(ValueError, match=r"'s'.*\[\(1, 2\)\].*\[\(1, 3\)\]"):
        layer.reset_states([np.zeros((1, 3))])
    with pytest.raises(ValueError, match="not stateful"):
        RNN(SimpleRNNCell(2)).reset_states([np.zeros((1, 2))])
    plain = RNN(SimpleRNNCell(2))
    plain.reset_states()  # nothing to reset, as in Keras 3
    assert plain.states is None


def test_kept_states_do_not_carry_gradients_between_batches():
    layer = RNN(SimpleRNNCell(2), stateful=True)
    layer(sequences(batch=1))
    x = mk.Tensor(sequences(3, batch=1))
    with mk.GradientTape() as tape:
        tape.watch(x)
        loss = mk.ops.sum(layer(x))
    assert tape.gradient(loss, x).shape == x.shape
    assert isinstance(layer._state_values[0], np.ndarray)


def test_a_stateful_bidirectional_resets_both_directions():
    layer = mk.layers.Bidirectional(LSTM(2, stateful=True))
    x = sequences(4)
    fresh = layer(x).numpy()
    assert not np.allclose(layer(x).numpy(), fresh)
    layer.reset_states()
    np.testing.assert_array_equal(layer(x).numpy(), fresh)
