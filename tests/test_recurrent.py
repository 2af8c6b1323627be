"""SimpleRNN, LSTM, GRU and Bidirectional against naive loops written here from Keras's equations.

The references below are the plainest possible numpy: one step at a time,
float64, a masked step keeping the previous states (its output is the state).
Gradients are checked against central differences in float64.
"""

import os

import numpy as np
import pytest
from layer_gradients import assert_gradients_match, projection_loss

import minikeras as mk
from minikeras import ops
from minikeras.layers import GRU, LSTM, Bidirectional, Dense, Input, SimpleRNN

BATCH, STEPS, FEATURES, UNITS = 3, 5, 4, 2


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def simple_rnn_cell(x, states, weights, activation=np.tanh):
    kernel, recurrent_kernel, bias = weights
    return [activation(x @ kernel + states[0] @ recurrent_kernel + bias)]


def lstm_cell(x, states, weights, activation=np.tanh):
    kernel, recurrent_kernel, bias = weights
    h, c = states
    z = x @ kernel + h @ recurrent_kernel + bias
    i, f, g, o = np.split(z, 4, axis=1)
    c = sigmoid(f) * c + sigmoid(i) * activation(g)
    return [sigmoid(o) * activation(c), c]


def gru_cell(x, states, weights, reset_after=True):
    kernel, recurrent_kernel, bias = weights
    h = states[0]
    units = h.shape[1]
    input_bias, recurrent_bias = (bias[0], bias[1]) if reset_after else (bias, 0.0)
    x_z, x_r, x_h = np.split(x @ kernel + input_bias, 3, axis=1)
    if reset_after:
        h_z, h_r, h_h = np.split(h @ recurrent_kernel + recurrent_bias, 3, axis=1)
        z, r = sigmoid(x_z + h_z), sigmoid(x_r + h_r)
        candidate = np.tanh(x_h + r * h_h)
    else:
        h_z, h_r = np.split(h @ recurrent_kernel[:, : 2 * units], 2, axis=1)
        z, r = sigmoid(x_z + h_z), sigmoid(x_r + h_r)
        candidate = np.tanh(x_h + (r * h) @ recurrent_kernel[:, 2 * units :])
    return [z * h + (1 - z) * candidate]


def reference_rnn(cell, x, weights, states, mask=None, go_backwards=False):
    """Returns (outputs in processing order, final states)."""
    steps = x.shape[1]
    outputs = []
    for t in reversed(range(steps)) if go_backwards else range(steps):
        new_states = cell(x[:, t], states, weights)
        if mask is not None:
            keep = mask[:, t][:, None]
            new_states = [np.where(keep, new, old) for new, old in zip(new_states, states)]
        states = new_states
        outputs.append(states[0])
    return np.stack(outputs, axis=1), states


KINDS = {
    "simple_rnn": (lambda **kw: SimpleRNN(UNITS, **kw), simple_rnn_cell, 1),
    "lstm": (lambda **kw: LSTM(UNITS, **kw), lstm_cell, 2),
    "gru": (lambda **kw: GRU(UNITS, **kw), gru_cell, 1),
    "gru_reset_before": (
        lambda **kw: GRU(UNITS, reset_after=False, **kw),
        lambda x, s, w: gru_cell(x, s, w, reset_after=False),
        1,
    ),
}


def random_data(state_count, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((BATCH, STEPS, FEATURES))
    states = [rng.standard_normal((BATCH, UNITS)) for _ in range(state_count)]
    mask = rng.random((BATCH, STEPS)) > 0.35
    mask[0] = True  # one unmasked row, one row masked at the start
    mask[1, :2] = False
    return x, states, mask


def randomize(layer, seed=1):
    """Non-trivial weights (biases too), so that every term of the equations shows."""
    rng = np.random.default_rng(seed)
    layer.set_weights([rng.uniform(-0.8, 0.8, w.shape) for w in layer.weights])
    return layer


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("go_backwards", [False, True])
@pytest.mark.parametrize("masked", [False, True])
def test_forward_matches_a_naive_loop(kind, go_backwards, masked):
    make, cell, state_count = KINDS[kind]
    x, states, mask = random_data(state_count)
    layer = make(
        return_sequences=True, return_state=True, go_backwards=go_backwards, dtype="float64"
    )
    layer.build((None, STEPS, FEATURES))
    randomize(layer)
    mask = mask if masked else None
    outputs, *final = layer(x, initial_state=states, mask=mask)
    weights = [w.numpy() for w in layer.weights]
    expected, expected_states = reference_rnn(cell, x, weights, states, mask, go_backwards)
    np.testing.assert_allclose(outputs.numpy(), expected, rtol=1e-10, atol=1e-12)
    for got, want in zip(final, expected_states):
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-10, atol=1e-12)
    # Without return_sequences the output is the last one.
    layer.return_sequences, layer.return_state = False, False
    last = layer(x, initial_state=states, mask=mask)
    np.testing.assert_allclose(last.numpy(), expected[:, -1], rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("go_backwards", [False, True])
def test_gradients_match_central_differences(kind, go_backwards):
    make, _, state_count = KINDS[kind]
    x, states, mask = random_data(state_count, seed=2)
    layer = make(
        return_sequences=True, return_state=True, go_backwards=go_backwards, dtype="float64"
    )
    layer.build((None, STEPS, FEATURES))
    randomize(layer, seed=3)

    def loss(x, *states):
        return projection_loss(layer(x, initial_state=list(states), mask=mask))

    assert_gradients_match(loss, [x, *states], layer.weights)


def test_the_last_output_alone_has_gradients_too():
    x, states, mask = random_data(2, seed=4)
    layer = LSTM(UNITS, dtype="float64")
    layer.build((None, STEPS, FEATURES))
    randomize(layer)
    assert_gradients_match(lambda x: projection_loss(layer(x, mask=mask)), [x], layer.weights)


@pytest.mark.parametrize("activation", ["relu", "linear", "sigmoid"])
def test_other_fused_activations(activation):
    x, states, mask = random_data(1, seed=5)
    layer = SimpleRNN(UNITS, activation=activation, return_sequences=True, dtype="float64")
    layer.build((None, STEPS, FEATURES))
    randomize(layer)
    functions = {"relu": lambda v: np.maximum(v, 0), "linear": lambda v: v, "sigmoid": sigmoid}
    weights = [w.numpy() for w in layer.weights]
    expected, _ = reference_rnn(
        lambda x, s, w: simple_rnn_cell(x, s, w, functions[activation]), x, weights, states, mask
    )
    outputs = layer(x, initial_state=states, mask=mask)
    np.testing.assert_allclose(outputs.numpy(), expected, rtol=1e-10, atol=1e-12)
    assert_gradients_match(
        lambda x: projection_loss(layer(x, initial_state=states, mask=mask)), [x], layer.weights
    )


def test_a_custom_activation_runs_the_unfused_loop():
    def softsign(v):
        return v / (1.0 + ops.abs(v))

    x, states, mask = random_data(2, seed=6)
    layer = LSTM(UNITS, activation=softsign, return_sequences=True, dtype="float64")
    layer.build((None, STEPS, FEATURES))
    randomize(layer)
    weights = [w.numpy() for w in layer.weights]
    expected, _ = reference_rnn(
        lambda x, s, w: lstm_cell(x, s, w, lambda v: v / (1 + np.abs(v))), x, weights, states, mask
    )
    np.testing.assert_allclose(
        layer(x, initial_state=states, mask=mask).numpy(), expected, rtol=1e-10, atol=1e-12
    )
    assert_gradients_match(
        lambda x: projection_loss(layer(x, initial_state=states, mask=mask)), [x], layer.weights
    )


@pytest.mark.parametrize("kind", KINDS)
def test_float32_in_float32_out_with_float32_gradients(kind):
    make, _, _ = KINDS[kind]
    layer = make(return_sequences=True)
    x = np.random.default_rng(0).standard_normal((BATCH, STEPS, FEATURES)).astype("float32")
    with mk.GradientTape() as tape:
        outputs = layer(x)
        loss = ops.sum(outputs * outputs)
    assert outputs.dtype == np.float32
    assert all(g.dtype == np.float32 for g in tape.gradient(loss, layer.weights))


def test_keras_weight_layout():
    lstm, gru = LSTM(3), GRU(3)
    lstm.build((None, 2, 5))
    gru.build((None, 2, 5))
    assert [(w.name, w.shape) for w in lstm.weights] == [
        ("kernel", (5, 12)),
        ("recurrent_kernel", (3, 12)),
        ("bias", (12,)),
    ]
    # unit_forget_bias: the forget gate (second quarter, order i, f, c, o) starts at one.
    np.testing.assert_array_equal(lstm.bias.numpy(), [0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 0, 0])
    assert [w.shape for w in gru.weights] == [(5, 9), (3, 9), (2, 9)]
    assert GRU(3, reset_after=False)(np.ones((1, 2, 5))).shape == (1, 3)
    # The recurrent kernel is orthogonal, as Keras initializes it.
    q = lstm.recurrent_kernel.numpy()
    np.testing.assert_allclose(q @ q.T, np.eye(3), atol=1e-5)


def test_an_all_masked_row_keeps_its_initial_state():
    x, states, _ = random_data(2, seed=7)
    mask = np.ones((BATCH, STEPS), bool)
    mask[2] = False
    layer = LSTM(UNITS, return_sequences=True, return_state=True, dtype="float64")
    outputs, h, c = layer(x, initial_state=states, mask=mask)
    np.testing.assert_array_equal(h.numpy()[2], states[0][2])
    np.testing.assert_array_equal(c.numpy()[2], states[1][2])
    np.testing.assert_array_equal(outputs.numpy()[2], np.repeat(states[0][2:3], STEPS, axis=0))


def test_zero_output_for_mask_zeroes_the_masked_steps():
    x, _, mask = random_data(1, seed=8)
    plain = SimpleRNN(UNITS, return_sequences=True, dtype="float64")
    zeroing = SimpleRNN(UNITS, return_sequences=True, zero_output_for_mask=True, dtype="float64")
    plain.build((None, STEPS, FEATURES))
    zeroing.build((None, STEPS, FEATURES))
    zeroing.set_weights(plain.get_weights())
    expected = plain(x, mask=mask).numpy() * mask[..., None]
    np.testing.assert_allclose(zeroing(x, mask=mask).numpy(), expected)


def test_dropout_drops_input_features_only_while_training():
    x = np.ones((BATCH, STEPS, FEATURES), "float32")
    layer = LSTM(UNITS, dropout=0.5, seed=0, return_sequences=True)
    reference = LSTM(UNITS, return_sequences=True)
    reference.build((None, STEPS, FEATURES))
    layer.build((None, STEPS, FEATURES))
    layer.set_weights(reference.get_weights())
    np.testing.assert_allclose(layer(x).numpy(), reference(x).numpy())
    assert not np.allclose(layer(x, training=True).numpy(), reference(x).numpy())


def test_initial_state_in_the_functional_api():
    encoder_inputs, decoder_inputs = Input(shape=(STEPS, FEATURES)), Input(shape=(3, FEATURES))
    encoder, decoder, head = (
        LSTM(UNITS, return_state=True),
        LSTM(UNITS, return_sequences=True),
        Dense(1),
    )
    _, h, c = encoder(encoder_inputs)
    model = mk.Model(
        [encoder_inputs, decoder_inputs], head(decoder(decoder_inputs, initial_state=[h, c]))
    )
    rng = np.random.default_rng(0)
    a = rng.standard_normal((2, STEPS, FEATURES)).astype("float32")
    b = rng.standard_normal((2, 3, FEATURES)).astype("float32")
    assert model([a, b]).shape == (2, 3, 1)
    # The decoder really starts from the encoder's states.
    expected = head(decoder(b, initial_state=encoder(a)[1:]))
    np.testing.assert_allclose(model([a, b]).numpy(), expected.numpy(), rtol=1e-6)


def test_config_round_trip_and_output_shapes():
    for layer in [
        SimpleRNN(3, activation="relu", go_backwards=True),
        LSTM(3, return_sequences=True, return_state=True, unit_forget_bias=False, dropout=0.25),
        GRU(3, reset_after=False, recurrent_activation="tanh", return_state=True),
    ]:
        config = layer.get_config()
        copy = type(layer).from_config(config)
        assert copy.get_config() == config
        outputs = copy(np.ones((2, 4, 5)))
        expected = copy.compute_output_shape((None, 4, 5))
        shapes = [o.shape for o in outputs] if isinstance(outputs, list) else outputs.shape
        expected = [s[1:] for s in expected] if isinstance(expected, list) else expected[1:]
        got = [s[1:] for s in shapes] if isinstance(shapes, list) else shapes[1:]
        assert got == expected


def test_errors_name_the_layer_and_the_shapes():
    layer = LSTM(2, name="encoder")
    with pytest.raises(ValueError, match=r"LSTM 'encoder' expects inputs of shape .*\(4, 3\)"):
        layer(np.ones((4, 3)))
    with pytest.raises(ValueError, match=r"LSTM 'encoder'.*initial state.*\(4, 2\)"):
        layer(np.ones((4, 5, 3)), initial_state=[np.zeros((4, 3)), np.zeros((4, 3))])
    with pytest.raises(ValueError, match="last axis 3"):
        layer(np.ones((4, 5, 7)))
    with pytest.raises(ValueError, match="units"):
        GRU(0)
    with pytest.raises(TypeError, match="SimpleRNNCell: `recurrent_dropout` must be a number"):
        SimpleRNN(2, recurrent_dropout="0.5")
    with pytest.raises(ValueError, match="merge_mode"):
        Bidirectional(LSTM(2), merge_mode="max")


# ------------------------------------------------------------- Bidirectional


@pytest.mark.parametrize("merge_mode", ["concat", "sum", "ave", "mul", None])
def test_bidirectional_matches_two_naive_loops(merge_mode):
    x, states, mask = random_data(2, seed=9)
    rnn = LSTM(UNITS, return_sequences=True, return_state=True, dtype="float64")
    layer = Bidirectional(rnn, merge_mode=merge_mode, dtype="float64")
    layer.build((None, STEPS, FEATURES))
    randomize(layer)
    outputs = layer(x, initial_state=[*states, *states], mask=mask)
    forward_weights = [w.numpy() for w in layer.forward_layer.weights]
    backward_weights = [w.numpy() for w in layer.backward_layer.weights]
    forward, forward_states = reference_rnn(lstm_cell, x, forward_weights, states, mask)
    backward, backward_states = reference_rnn(lstm_cell, x, backward_weights, states, mask, True)
    # Returning sequences, both halves output zeros at masked steps (as Keras forces).
    forward, backward = forward * mask[..., None], backward[:, ::-1] * mask[..., None]
    merged = {
        "concat": [np.concatenate([forward, backward], axis=-1)],
        "sum": [forward + backward],
        "ave": [(forward + backward) / 2],
        "mul": [forward * backward],
        None: [forward, backward],
    }[merge_mode]
    expected = [*merged, *forward_states, *backward_states]
    assert len(outputs) == len(expected)
    for got, want in zip(outputs, expected):
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-10, atol=1e-12)


def test_bidirectional_gradients_match_central_differences():
    x, _, mask = random_data(1, seed=10)
    layer = Bidirectional(GRU(UNITS, return_sequences=True, dtype="float64"), dtype="float64")
    layer.build((None, STEPS, FEATURES))
    randomize(layer, seed=11)
    assert_gradients_match(lambda x: projection_loss(layer(x, mask=mask)), [x], layer.weights)


def test_bidirectional_config_weights_and_shapes():
    layer = Bidirectional(SimpleRNN(3), merge_mode="sum", name="bi")
    outputs = layer(np.ones((2, 4, 5)))
    assert outputs.shape == (2, 3) and layer.compute_output_shape((None, 4, 5)) == (None, 3)
    assert [w.name for w in layer.weights] == ["kernel", "recurrent_kernel", "bias"] * 2
    copy = Bidirectional.from_config(layer.get_config())
    assert copy.backward_layer.go_backwards and copy.merge_mode == "sum"
    copy(np.ones((2, 4, 5)))
    copy.set_weights(layer.get_weights())
    np.testing.assert_allclose(copy(np.ones((2, 4, 5))).numpy(), outputs.numpy())


# ------------------------------------------------------------ Keras itself


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # raised inside Keras and JAX
def test_same_outputs_as_keras_with_the_same_weights():
    """Weights are interchangeable with Keras 3 (checked where Keras and JAX are installed)."""
    os.environ.setdefault("KERAS_BACKEND", "jax")
    keras = pytest.importorskip("keras")
    x, states, mask = random_data(2, seed=12)
    x, states = x.astype("float32"), [s.astype("float32") for s in states]
    # (Keras class, ours, options, states); every Keras call compiles, so one of each.
    cases = [
        (keras.layers.SimpleRNN, SimpleRNN, {"go_backwards": True}, 1),
        (keras.layers.LSTM, LSTM, {}, 2),
        (keras.layers.GRU, GRU, {"go_backwards": True}, 1),
        (keras.layers.GRU, GRU, {"reset_after": False}, 1),
    ]
    for keras_class, our_class, options, state_count in cases:
        options = dict(options, return_sequences=True, return_state=True)
        theirs, ours = keras_class(UNITS, **options), our_class(UNITS, **options)
        theirs.build((None, STEPS, FEATURES))
        ours.build((None, STEPS, FEATURES))
        randomize(ours, seed=13)
        theirs.set_weights(ours.get_weights())
        expected = theirs(x, initial_state=states[:state_count], mask=mask)
        got = ours(x, initial_state=states[:state_count], mask=mask)
        for mine, keras_value in zip(got, expected):
            np.testing.assert_allclose(mine.numpy(), np.asarray(keras_value), atol=1e-5)
    ids = np.array([[3, 1, 4, 1, 0, 0], [5, 8, 2, 0, 0, 0]])
    stack = [
        ("Input", ((6,),), {"dtype": "int32"}),
        ("Embedding", (9, 4), {"mask_zero": True}),
        ("Bidirectional", (), {}),
        ("GRU", (2,), {}),
    ]

    def build(module, input_function):
        made = []
        for name, args, kwargs in stack:
            if name == "Input":
                made.append(input_function(*args, **kwargs))
            elif name == "Bidirectional":
                made.append(module.Bidirectional(module.LSTM(3, return_sequences=True)))
            else:
                made.append(getattr(module, name)(*args, **kwargs))
        return made

    theirs = keras.Sequential(build(keras.layers, keras.Input))
    ours = mk.Sequential(build(mk.layers, Input))
    ours.set_weights(theirs.get_weights())
    np.testing.assert_allclose(ours(ids).numpy(), np.asarray(theirs(ids)), atol=1e-6)
