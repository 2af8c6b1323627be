"""Keras's RNN guide (keras-io `guides/working_with_rnns.py`) run on minikeras: built-in
RNN layers, outputs and states, statefulness, Bidirectional, `LSTM` against
`RNN(LSTMCell)`, and a custom cell written as the guide writes one (its attributes
set before `super().__init__()`). MNIST is replaced by random arrays of its shape.
"""

import numpy as np

import minikeras as keras
from minikeras import layers, ops


def test_rnn_guide_built_in_layers_outputs_and_states():
    model = keras.Sequential()
    model.add(layers.Embedding(input_dim=1000, output_dim=64))
    model.add(layers.LSTM(128))
    model.add(layers.Dense(10))
    tokens = np.random.default_rng(0).integers(0, 1000, (2, 5))
    assert model(tokens).shape == (2, 10)

    model = keras.Sequential()
    model.add(layers.Embedding(input_dim=1000, output_dim=64))
    model.add(layers.GRU(256, return_sequences=True))
    model.add(layers.SimpleRNN(128))
    model.add(layers.Dense(10))
    assert model(tokens).shape == (2, 10)

    encoder_input = layers.Input(shape=(None,))
    encoder_embedded = layers.Embedding(input_dim=1000, output_dim=64)(encoder_input)
    output, state_h, state_c = layers.LSTM(64, return_state=True, name="encoder")(encoder_embedded)
    encoder_state = [state_h, state_c]
    decoder_input = layers.Input(shape=(None,))
    decoder_embedded = layers.Embedding(input_dim=2000, output_dim=64)(decoder_input)
    decoder = layers.LSTM(64, name="decoder")
    decoder_output = decoder(decoder_embedded, initial_state=encoder_state)
    model = keras.Model([encoder_input, decoder_input], layers.Dense(10)(decoder_output))
    assert [s.shape for s in (output, state_h, state_c)] == [(None, 64)] * 3
    assert model([tokens, np.zeros((2, 7))]).shape == (2, 10)
    # The decoder starts from the encoder's states: other encoder inputs, other outputs.
    other = model([tokens[::-1], np.zeros((2, 7))]).numpy()
    assert not np.allclose(model([tokens, np.zeros((2, 7))]).numpy(), other)


def test_rnn_guide_cross_batch_statefulness_and_state_reuse():
    rng = np.random.default_rng(1)
    paragraphs = [rng.random((4, 10, 5)).astype(np.float32) for _ in range(3)]
    lstm_layer = layers.LSTM(8, stateful=True)
    for paragraph in paragraphs:
        output = lstm_layer(paragraph)
    whole = layers.LSTM(8)
    whole.build((None, 30, 5))
    whole.set_weights(lstm_layer.get_weights())
    np.testing.assert_allclose(
        output.numpy(), whole(np.concatenate(paragraphs, axis=1)).numpy(), rtol=1e-5, atol=1e-6
    )
    lstm_layer.reset_states()
    assert all(float(np.abs(s.numpy()).max()) == 0.0 for s in lstm_layer.states)

    lstm_layer = layers.LSTM(8, stateful=True)
    lstm_layer(paragraphs[0])
    lstm_layer(paragraphs[1])
    existing_state = lstm_layer.states
    new_lstm_layer = layers.LSTM(8)
    new_output = new_lstm_layer(paragraphs[2], initial_state=existing_state)
    assert new_output.shape == (4, 8)


def test_rnn_guide_bidirectional_and_cell_equivalence():
    model = keras.Sequential()
    model.add(layers.Bidirectional(layers.LSTM(64, return_sequences=True), input_shape=(5, 10)))
    model.add(layers.Bidirectional(layers.LSTM(32)))
    model.add(layers.Dense(10))
    assert model.output_shape == (None, 10)
    assert model.layers[0].output.shape == (None, 5, 128)

    units, input_dim = 16, 28

    def build_model(allow_cudnn_kernel=True):
        if allow_cudnn_kernel:
            lstm_layer = keras.layers.LSTM(units, input_shape=(None, input_dim))
        else:
            lstm_layer = keras.layers.RNN(
                keras.layers.LSTMCell(units), input_shape=(None, input_dim)
            )
        return keras.models.Sequential(
            [lstm_layer, keras.layers.BatchNormalization(), keras.layers.Dense(10)]
        )

    rng = np.random.default_rng(2)
    x_train = rng.integers(0, 256, (64, 28, 28)) / 255.0
    y_train = rng.integers(0, 10, 64)
    model = build_model(allow_cudnn_kernel=True)
    model.compile(
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        optimizer="sgd",
        metrics=["accuracy"],
    )
    model.fit(x_train, y_train, validation_data=(x_train[:16], y_train[:16]), batch_size=32,
              epochs=1, verbose=0)  # fmt: skip
    noncudnn_model = build_model(allow_cudnn_kernel=False)
    noncudnn_model.set_weights(model.get_weights())
    np.testing.assert_allclose(
        noncudnn_model.predict(x_train[:4], verbose=0),
        model.predict(x_train[:4], verbose=0),
        rtol=1e-4,
        atol=1e-5,
    )
    result = ops.argmax(model.predict_on_batch(ops.expand_dims(x_train[0], 0)), axis=1)
    assert result.shape == (1,) and 0 <= int(result.numpy()[0]) < 10


class MinimalRNNCell(keras.layers.Layer):
    """The guide's way of writing a cell: its sizes set before the base's __init__."""

    def __init__(self, units, **kwargs):
        self.units = units
        self.state_size = units
        super().__init__(**kwargs)

    def build(self, input_shape):
        self.kernel = self.add_weight(shape=(input_shape[-1], self.units), name="kernel")
        self.recurrent_kernel = self.add_weight(
            shape=(self.units, self.units), name="recurrent_kernel"
        )

    def call(self, inputs, states):
        output = ops.matmul(inputs, self.kernel) + ops.matmul(states[0], self.recurrent_kernel)
        return output, [output]

    def get_config(self):
        return {"units": self.units}


def test_rnn_guide_custom_cell_with_attributes_before_the_base_init():
    cell = MinimalRNNCell(4)
    rnn = keras.layers.RNN(cell, return_sequences=True)
    x = np.random.default_rng(3).random((2, 5, 3)).astype("float32")
    y = rnn(x).numpy()
    assert y.shape == (2, 5, 4) and len(rnn.weights) == 2
    state = np.zeros((2, 4), "float32")
    kernel, recurrent = cell.kernel.numpy(), cell.recurrent_kernel.numpy()
    for t in range(5):
        state = x[:, t] @ kernel + state @ recurrent
        np.testing.assert_allclose(y[:, t], state, rtol=1e-5, atol=1e-6)
    model = keras.Sequential([keras.Input((None, 3)), keras.layers.RNN(MinimalRNNCell(4))])
    model.compile("adam", "mse")
    history = model.fit(x, np.ones((2, 4)), epochs=3, verbose=0).history
    assert history["loss"][-1] < history["loss"][0]
