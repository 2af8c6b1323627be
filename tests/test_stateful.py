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


# ------------------------------------------- a batch size known when built


@pytest.mark.parametrize("name", MAKERS)
def test_building_a_stateful_layer_on_an_unknown_batch_size_is_refused(name):
    # As Keras: an Input without a batch size cannot feed a stateful layer.
    layer = MAKERS[name](stateful=True, name=f"unknown_{name}")
    with pytest.raises(
        ValueError, match=rf"'unknown_{name}' is stateful.*\(None, 5, 4\).*batch_shape"
    ):
        layer(Input((5, 4)))
    assert not layer.built and layer.states is None
    with pytest.raises(ValueError, match=rf"'unknown_{name}' is stateful"):
        mk.Sequential([Input((5, 4)), layer])
    with pytest.raises(ValueError, match="Bidirectional 'both' wraps a stateful layer"):
        mk.layers.Bidirectional(MAKERS[name](stateful=True), name="both")(Input((5, 4)))


def test_a_sequential_called_first_on_data_keeps_the_batch_size_for_its_stateful_layer():
    model = mk.Sequential([GRU(3, stateful=True), mk.layers.Dense(1)])
    model(sequences(batch=2))  # built here, on a batch of 2, as in Keras
    assert [s.shape for s in model.layers[0].states] == [(2, 3)]
    nested = mk.Sequential([mk.layers.Dense(4), mk.Sequential([LSTM(3, stateful=True)])])
    nested(sequences(batch=2))  # a stateful layer in a nested model keeps it too, as in Keras
    assert [s.shape for s in nested.layers[1].layers[0].states] == [(2, 3), (2, 3)]
    other = mk.Sequential([mk.layers.Dense(1)])
    other(np.ones((7, 4), "float32"))
    assert other.input_shape == (None, 4)  # without a stateful layer, the batch stays open


# ---------------------------------------------- stateful inside Bidirectional


@pytest.mark.parametrize("name", ["simple_rnn", "lstm", "gru", "rnn_lstm_cell"])
@pytest.mark.parametrize("return_sequences", [True, False])
def test_a_stateful_bidirectional_carries_both_directions_over_two_halves(name, return_sequences):
    # The forward half continues the sequence: the halves give what the whole gives.
    # The backward half reads each half from its end, starting the second from the
    # states the first left: a go_backwards layer given those states by hand.
    x = sequences(5)
    layer = mk.layers.Bidirectional(
        MAKERS[name](stateful=True, return_sequences=return_sequences), merge_mode=None
    )
    layer.build(x.shape)
    forward_whole = MAKERS[name](return_sequences=True, return_state=True)
    backward = MAKERS[name](return_sequences=True, return_state=True, go_backwards=True)
    for copy, source in ((forward_whole, layer.forward_layer), (backward, layer.backward_layer)):
        copy.build(x.shape)
        copy.set_weights(source.get_weights())

    def expected_halves():
        whole, *forward_states = forward_whole(x)
        first, *states = backward(x[:, :3])
        second, *backward_states = backward(x[:, 3:], initial_state=states)
        results = []
        for t, back in ((slice(0, 3), first), (slice(3, 6), second)):
            forward = whole[:, t].numpy()
            back = back.numpy()[:, ::-1]  # (flipped back, as Bidirectional does)
            results.append((forward, back) if return_sequences else (forward[:, -1], back[:, 0]))
        return results, [*forward_states, *backward_states]

    expected, final_states = expected_halves()
    for _ in range(2):  # the second time after reset_states: the same again
        for half, want in zip((x[:, :3], x[:, 3:]), expected):
            for got, value in zip(layer(half), want):
                np.testing.assert_allclose(got.numpy(), value, rtol=1e-5, atol=1e-6)
        assert len(layer.states) == len(final_states)
        for kept, state in zip(layer.states, final_states):
            np.testing.assert_allclose(kept.numpy(), state.numpy(), rtol=1e-5, atol=1e-6)
        layer.reset_states()
        assert all(not np.any(state.numpy()) for state in layer.states)


def test_a_bidirectional_that_is_not_stateful_has_no_states_to_reset():
    layer = mk.layers.Bidirectional(LSTM(2), name="plain")
    layer(sequences())
    assert layer.states is None
    with pytest.raises(AttributeError, match="'plain' is not stateful"):
        layer.reset_states()


@pytest.mark.parametrize("name", ["SimpleRNN", "LSTM", "GRU"])
def test_a_stateful_bidirectional_gives_what_keras_gives_over_two_halves(name):
    keras = pytest.importorskip("keras")
    x = sequences(6)
    theirs = keras.layers.Bidirectional(
        getattr(keras.layers, name)(3, stateful=True, return_sequences=True)
    )
    ours = mk.layers.Bidirectional(
        getattr(mk.layers, name)(3, stateful=True, return_sequences=True)
    )
    theirs.build(x.shape)
    ours.build(x.shape)
    ours.set_weights([np.asarray(w) for w in theirs.get_weights()])
    for half in (x[:, :3], x[:, 3:], "reset", x[:, 3:]):
        if isinstance(half, str):
            theirs.reset_states()
            ours.reset_states()
            continue
        np.testing.assert_allclose(
            ours(half).numpy(), np.asarray(theirs(half)), rtol=1e-5, atol=1e-5
        )
        for mine, keras_state in zip(ours.states, theirs.states):
            np.testing.assert_allclose(mine.numpy(), np.asarray(keras_state), rtol=1e-5, atol=1e-5)


def test_a_cell_with_its_own_initial_states_starts_there_and_resets_to_zeros_as_keras():
    class StartsFromOnes(Layer):
        state_size = 2

        def get_initial_state(self, batch_size=None):
            return [mk.ops.ones((batch_size, 2))]

        def call(self, inputs, states):
            return states[0] + 1.0, [states[0] + 1.0]

    layer = RNN(StartsFromOnes(), stateful=True)
    x = np.ones((1, 3, 4), "float32")
    layer.build(x.shape)
    assert layer.states[0].numpy().tolist() == [[1.0, 1.0]]  # (what Keras shows too)
    assert layer(x).numpy().tolist() == [[4.0, 4.0]]
    layer.reset_states()
    assert layer.states[0].numpy().tolist() == [[0.0, 0.0]]
    assert layer(x).numpy().tolist() == [[3.0, 3.0]]


# ------------------------------------------- stateful models built by training


def _seeded_stateful_model(build):
    model = mk.Sequential([
        LSTM(2, stateful=True, kernel_initializer=mk.initializers.GlorotUniform(seed=1),
             recurrent_initializer=mk.initializers.Orthogonal(seed=2)),
    ])  # fmt: skip
    if build:
        model.build((4, 6, 4))
    model.compile("sgd", "mse")
    return model


@pytest.mark.parametrize("method", ["evaluate", "train_on_batch", "test_on_batch", "fit"])
def test_training_an_unbuilt_stateful_model_runs_each_batch_once(method):
    # Building by a forward pass on the first batch must not advance the kept states
    # (it ran the first batch twice), and fit builds on a batch of its batch size (it
    # built on one sample, then refused the batches of 4).
    x, y = sequences(batch=8), np.ones((8, 2), "float32")
    results = []
    for build in (True, False):
        model = _seeded_stateful_model(build)
        if method == "fit":
            result = model.fit(x, y, batch_size=4, shuffle=False, verbose=0).history["loss"][0]
        elif method == "evaluate":
            result = model.evaluate(x, y, batch_size=4, verbose=0)
        else:
            result = getattr(model, method)(x[:4], y[:4])
        results.append((result, model.layers[0].states[0].numpy()))
    (built, built_states), (unbuilt, unbuilt_states) = results
    assert unbuilt == pytest.approx(built, rel=1e-6)
    np.testing.assert_allclose(unbuilt_states, built_states, rtol=1e-6)
