"""Dropout in the recurrent layers, as Keras 3 draws it.

One mask per sequence, the same at every step, each entry kept with
probability `1 - rate` and scaled by `1 / (1 - rate)`. `SimpleRNNCell` has
one mask for the inputs and one for the state; `LSTMCell` and `GRUCell` with
`recurrent_dropout` (Keras's `implementation=1`, which it forces) have one of
each per gate. Each layer's output is checked against the equations worked in
numpy with the masks the cell holds; the Keras check gives both libraries the
same masks.
"""

import numpy as np
import pytest

from minikeras.layers import GRU, LSTM, RNN, GRUCell, LSTMCell, SimpleRNN, SimpleRNNCell

BATCH, STEPS, FEATURES, UNITS = 3, 5, 4, 6


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def sequences(seed=0):
    return np.random.default_rng(seed).standard_normal((BATCH, STEPS, FEATURES)).astype("float32")


def per_gate(mask, gates):
    return mask if isinstance(mask, list) else [mask] * gates


def lstm_by_hand(x, kernel, recurrent_kernel, bias, input_masks, state_masks):
    h = c = np.zeros((x.shape[0], UNITS))
    for t in range(x.shape[1]):
        z = [
            x[:, t] * input_masks[g] @ kernel[:, g * UNITS : (g + 1) * UNITS]
            + (h * state_masks[g]) @ recurrent_kernel[:, g * UNITS : (g + 1) * UNITS]
            + bias[g * UNITS : (g + 1) * UNITS]
            for g in range(4)
        ]
        c = sigmoid(z[1]) * c + sigmoid(z[0]) * np.tanh(z[2])
        h = sigmoid(z[3]) * np.tanh(c)
    return h


def gru_by_hand(x, kernel, recurrent_kernel, bias, input_masks, state_masks, reset_after):
    h = np.zeros((x.shape[0], UNITS))
    input_bias, recurrent_bias = (bias[0], bias[1]) if reset_after else (bias, np.zeros_like(bias))

    def columns(matrix, g):
        return matrix[..., g * UNITS : (g + 1) * UNITS]

    for t in range(x.shape[1]):
        xs = [
            x[:, t] * input_masks[g] @ columns(kernel, g) + columns(input_bias, g) for g in range(3)
        ]
        hs = [h * state_masks[g] for g in range(3)]
        inner = [
            hs[g] @ columns(recurrent_kernel, g) + columns(recurrent_bias, g) for g in range(3)
        ]
        update, reset = sigmoid(xs[0] + inner[0]), sigmoid(xs[1] + inner[1])
        if reset_after:
            candidate = np.tanh(xs[2] + reset * inner[2])
        else:
            candidate = np.tanh(xs[2] + (reset * hs[2]) @ columns(recurrent_kernel, 2))
        h = update * h + (1 - update) * candidate  # the state itself, not its dropped copies
    return h


def simple_rnn_by_hand(x, kernel, recurrent_kernel, bias, input_masks, state_masks):
    h = np.zeros((x.shape[0], UNITS))
    for t in range(x.shape[1]):
        h = np.tanh(
            x[:, t] * input_masks[0] @ kernel + (h * state_masks[0]) @ recurrent_kernel + bias
        )
    return h


CASES = {
    "lstm": (lambda **k: LSTM(UNITS, **k), 4, lstm_by_hand),
    "rnn_lstm_cell": (lambda **k: RNN(LSTMCell(UNITS, **k)), 4, lstm_by_hand),
    "gru": (lambda **k: GRU(UNITS, **k), 3, lambda *a: gru_by_hand(*a, True)),
    "rnn_gru_cell_reset_before": (
        lambda **k: RNN(GRUCell(UNITS, reset_after=False, **k)),
        3,
        lambda *a: gru_by_hand(*a, False),
    ),
    "simple_rnn": (lambda **k: SimpleRNN(UNITS, **k), 1, simple_rnn_by_hand),
    "rnn_simple_rnn_cell": (lambda **k: RNN(SimpleRNNCell(UNITS, **k)), 1, simple_rnn_by_hand),
}


RATES = [
    {"dropout": 0.4, "recurrent_dropout": 0.3},
    {"recurrent_dropout": 0.3},
    {"dropout": 0.4},
    {"dropout": 0.4, "implementation": 1},  # (SimpleRNN has no `implementation`, as in Keras)
]


@pytest.mark.parametrize(
    "name, rates",
    [(n, r) for n in CASES for r in RATES if CASES[n][1] > 1 or "implementation" not in r],
)
def test_a_training_call_matches_the_equations_with_the_masks_the_cell_holds(name, rates):
    make, gates, by_hand = CASES[name]
    layer = make(**rates, seed=5)
    x = sequences()
    layer.build(x.shape)
    weights = [w.numpy().astype("float64") for w in layer.weights]
    # The masks drawn now are the ones the call uses (kept until the sequence ends).
    cell = layer.cell
    input_masks = cell.get_dropout_mask(x[:, 0])
    state_masks = cell.get_recurrent_dropout_mask(np.zeros((BATCH, UNITS), "float32"))
    per_gate_masks = gates > 1 and ("recurrent_dropout" in rates or "implementation" in rates)
    for masks, rate, width in (
        (input_masks, rates.get("dropout"), FEATURES),
        (state_masks, rates.get("recurrent_dropout"), UNITS),
    ):
        if rate is None:
            assert masks is None
            continue
        assert isinstance(masks, list) == per_gate_masks
        masks = per_gate(masks, 1)
        assert len(masks) == (gates if per_gate_masks else 1)
        for mask in masks:
            assert mask.shape == (BATCH, width) and mask.dtype == np.float32
            assert set(np.unique(mask)) <= {0.0, np.float32(1 / (1 - rate))}
        if len(masks) > 1:
            assert all(np.any(masks[0] != other) for other in masks[1:])
    ones = [np.ones((BATCH, FEATURES))] * gates, [np.ones((BATCH, UNITS))] * gates
    masks = [
        per_gate(given, gates) if given is not None else default
        for given, default in zip((input_masks, state_masks), ones)
    ]
    output = layer(x, training=True).numpy()
    expected = by_hand(x.astype("float64"), *weights, *masks)
    np.testing.assert_allclose(output, expected, rtol=2e-5, atol=2e-6)
    assert cell._dropout_masks == {}  # reset after the sequence: the next call draws anew


@pytest.mark.parametrize("make", [LSTMCell, GRUCell])
def test_masks_per_gate_are_independent_draws_at_the_rate(make):
    cell = make(UNITS, dropout=0.25, recurrent_dropout=0.5, seed=0)
    masks = cell.get_dropout_mask(np.ones((400, 50), "float32"))
    state_masks = cell.get_recurrent_dropout_mask(np.ones((400, 50), "float32"))
    for group, rate in ((masks, 0.25), (state_masks, 0.5)):
        kept = [mask > 0 for mask in group]
        for keep in kept:
            assert abs(keep.mean() - (1 - rate)) < 0.01  # 20,000 draws: sd ~0.003
        # Independent gates agree where both keep with probability (1 - rate)^2.
        both = np.mean(kept[0] & kept[1])
        assert abs(both - (1 - rate) ** 2) < 0.012


def test_masks_are_per_gate_only_with_recurrent_dropout_or_implementation_one():
    x = np.ones((2, 3), "float32")
    assert not isinstance(LSTMCell(2, dropout=0.5).get_dropout_mask(x), list)
    assert len(LSTMCell(2, dropout=0.5, implementation=1).get_dropout_mask(x)) == 4
    assert len(GRUCell(2, dropout=0.5, recurrent_dropout=0.1).get_dropout_mask(x)) == 3
    assert GRU(2, recurrent_dropout=0.1).cell.implementation == 1
    assert LSTM(2, implementation=1).cell.implementation == 1
    assert LSTM(2).cell.implementation == 2
    with pytest.raises(ValueError, match="LSTMCell.*implementation.*3"):
        LSTMCell(2, implementation=3)


@pytest.mark.parametrize("kind", ["LSTMCell", "GRUCell"])
def test_a_cell_step_with_keras_masks_gives_what_keras_gives(kind):
    keras = pytest.importorskip("keras")
    import minikeras as mk

    rng = np.random.default_rng(3)
    x = rng.standard_normal((BATCH, FEATURES)).astype("float32")
    states = [rng.standard_normal((BATCH, UNITS)).astype("float32") for _ in range(2)]
    states = states if kind == "LSTMCell" else states[:1]
    theirs = getattr(keras.layers, kind)(UNITS, dropout=0.3, recurrent_dropout=0.4, seed=1)
    ours = getattr(mk.layers, kind)(UNITS, dropout=0.3, recurrent_dropout=0.4)
    theirs.build((BATCH, FEATURES))
    ours.build((BATCH, FEATURES))
    ours.set_weights([np.asarray(w) for w in theirs.get_weights()])
    input_masks = [np.asarray(m) for m in theirs.get_dropout_mask(x)]
    state_masks = [np.asarray(m) for m in theirs.get_recurrent_dropout_mask(states[0])]
    # Our cell takes the same masks (there is no public setter, in Keras either).
    ours._dropout_masks.update(inputs=np.stack(input_masks), recurrent=np.stack(state_masks))
    expected, _ = theirs(x, states, training=True)
    got, _ = ours(x, states, training=True)
    np.testing.assert_allclose(got.numpy(), np.asarray(expected), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(
    "make",
    [
        lambda: LSTM(UNITS, recurrent_dropout=0.5, return_sequences=True),
        lambda: GRU(UNITS, dropout=0.5, implementation=1),
        lambda: GRU(UNITS, recurrent_dropout=0.5, reset_after=False),
    ],
)
def test_masks_per_gate_take_an_empty_batch(make):
    # The per-gate products were reshaped with -1, which an empty batch cannot resolve.
    layer = make()
    empty = np.zeros((0, STEPS, FEATURES), "float32")
    expected = layer.compute_output_shape(empty.shape)
    assert layer(empty, training=True).shape == expected
    assert layer(empty, training=False).shape == expected
