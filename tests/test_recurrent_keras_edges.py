"""Recurrent layers at Keras 3.15's edges: dropout rates clamped into [0, 1] (a rate of 1
drops everything), `unroll` with an unknown time axis, and the final states of stacked
cells grouped per cell. Hand-computed values everywhere; the same calls in Keras when it
is importable (skipped otherwise)."""

import numpy as np
import pytest

import minikeras as mk
from minikeras import layers

rng = np.random.default_rng(5)
CELLS = ["SimpleRNNCell", "LSTMCell", "GRUCell"]


@pytest.mark.parametrize("name", CELLS + ["SimpleRNN", "LSTM", "GRU"])
def test_dropout_rates_are_clamped_into_zero_one_as_keras_does(name):
    layer = getattr(layers, name)(2, dropout=1.5, recurrent_dropout=-0.3)
    cell = getattr(layer, "cell", layer)
    assert (cell.dropout, cell.recurrent_dropout) == (1.0, 0.0)
    config = layer.get_config()
    assert (config["dropout"], config["recurrent_dropout"]) == (1.0, 0.0)
    assert getattr(layers, name)(2, dropout=float("nan")).get_config()["dropout"] == 0.0
    with pytest.raises(TypeError, match=f"{cell.__class__.__name__}: `dropout` must be a number"):
        getattr(layers, name)(2, dropout=None)


def test_a_rate_of_one_drops_every_input_or_every_state_while_training():
    x = rng.standard_normal((2, 4, 3)).astype("float32")
    layer = layers.SimpleRNN(3, recurrent_dropout=1.0, bias_initializer="random_normal")
    layer(x)
    kernel, _, bias = (w.numpy() for w in layer.weights)
    # No state reaches the next step: each step is tanh(x W + b) alone.
    np.testing.assert_allclose(
        layer(x, training=True).numpy(), np.tanh(x[:, -1] @ kernel + bias), rtol=1e-6
    )
    dropped = layers.SimpleRNN(3, dropout=1.0, return_sequences=True)
    dropped(x)
    dropped.set_weights(layer.get_weights())
    _, recurrent, _ = (w.numpy() for w in dropped.weights)
    expected, h = [], np.zeros((2, 3), "float32")
    for _ in range(4):  # no input reaches any step
        h = np.tanh(h @ recurrent + bias)
        expected.append(h)
    np.testing.assert_allclose(dropped(x, training=True).numpy(), np.stack(expected, 1), rtol=1e-6)
    assert not np.allclose(dropped(x).numpy(), np.stack(expected, 1))  # not in inference


@pytest.mark.parametrize("name", ["SimpleRNN", "LSTM", "GRU"])
def test_a_rate_of_one_is_zero_inputs_or_a_zero_recurrent_kernel(name):
    x = rng.standard_normal((2, 4, 3)).astype("float32")
    kwargs = dict(return_sequences=True, bias_initializer="random_normal")
    plain = getattr(layers, name)(3, **kwargs)
    plain(x)
    no_inputs = getattr(layers, name)(3, dropout=1.0, **kwargs)
    no_inputs(x)
    no_inputs.set_weights(plain.get_weights())
    np.testing.assert_allclose(
        no_inputs(x, training=True).numpy(), plain(np.zeros_like(x)).numpy(), rtol=1e-6
    )
    no_state = getattr(layers, name)(3, recurrent_dropout=1.0, **kwargs)
    no_state(x)
    no_state.set_weights(plain.get_weights())
    plain.cell.recurrent_kernel.assign(np.zeros(plain.cell.recurrent_kernel.shape, "float32"))
    # (GRU's update still mixes in the state itself, as in Keras: only what feeds the gates.)
    np.testing.assert_allclose(
        no_state(x, training=True).numpy(), plain(x).numpy(), rtol=1e-5, atol=1e-7
    )


@pytest.mark.parametrize(
    "name, rates", [("SimpleRNN", (1.0, 0.0)), ("SimpleRNN", (0.0, 1.0)), ("GRU", (1.0, 0.0))]
)
def test_a_rate_of_one_matches_keras_where_keras_drops(name, rates):
    # Keras 3.15's SimpleRNNCell drops everything at a rate of 1, and so does its GRU's
    # whole-sequence path (JAX, reset_after, no mask) for the inputs; its LSTMCell and
    # GRUCell steps skip a rate of exactly 1 (see SimpleRNNCell's docstring).
    keras = pytest.importorskip("keras")
    x = rng.standard_normal((2, 4, 3)).astype("float32")
    kwargs = dict(dropout=rates[0], recurrent_dropout=rates[1], return_sequences=True)
    theirs = getattr(keras.layers, name)(3, bias_initializer="random_normal", **kwargs)
    theirs(x)
    ours = getattr(layers, name)(3, **kwargs)
    ours(x)
    ours.set_weights([np.asarray(w) for w in theirs.get_weights()])
    expected = keras.ops.convert_to_numpy(theirs(x, training=True))
    np.testing.assert_allclose(ours(x, training=True).numpy(), expected, rtol=1e-5, atol=1e-6)


def test_unroll_takes_an_unknown_time_axis_as_keras_on_jax_and_torch():
    # Keras 3.15 raises here only on TensorFlow, whose symbolic call sees the unknown
    # axis; on JAX and PyTorch, as here, the layer is built and runs.
    inputs = mk.Input((None, 3))
    outputs = layers.LSTM(2, unroll=True)(inputs)
    assert outputs.shape == (None, 2)
    model = mk.Model(inputs, outputs)
    assert model.predict(np.ones((2, 5, 3), "float32"), verbose=0).shape == (2, 2)


def test_unroll_with_an_unknown_time_axis_in_keras():
    keras = pytest.importorskip("keras")
    if keras.backend.backend() not in ("jax", "torch"):
        pytest.skip("Keras on TensorFlow refuses it (see the test above)")
    assert keras.layers.LSTM(2, unroll=True)(keras.Input((None, 3))).shape == (None, 2)


def _stacked(lib):
    cells = [lib.layers.LSTMCell(5), lib.layers.GRUCell(4), lib.layers.SimpleRNNCell(3)]
    return lib.layers.RNN(lib.layers.StackedRNNCells(cells), return_state=True)


def _shapes(structure):
    if isinstance(structure, (list, tuple)):
        return [_shapes(item) for item in structure]
    return tuple(structure.shape)


def test_stacked_cells_return_their_states_per_cell_as_keras_315():
    x = rng.standard_normal((2, 4, 3)).astype("float32")
    layer = _stacked(mk)
    output, (h, c), [gru_state], [rnn_state] = layer(x)  # eager: a list per cell
    lstm, gru, simple = layer.cell.cells
    # Each cell's final states, by running the three cells by hand.
    states = [[np.zeros((2, 5), "float32")] * 2, [np.zeros((2, 4), "float32")]]
    states.append([np.zeros((2, 3), "float32")])
    for step in range(4):
        inputs = x[:, step]
        for i, cell in enumerate((lstm, gru, simple)):
            inputs, found = cell(inputs, states[i])
            states[i] = [s.numpy() for s in found]
    for ours, expected in zip([[h, c], [gru_state], [rnn_state]], states):
        for one, other in zip(ours, expected):
            np.testing.assert_allclose(one.numpy(), other, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(output.numpy(), states[2][0], rtol=1e-5, atol=1e-6)
    # Symbolic (so a functional model): a one-state cell's state alone.
    inputs = mk.Input((4, 3))
    symbolic = layer(inputs)
    assert _shapes(symbolic) == [(None, 3), [(None, 5), (None, 5)], (None, 4), (None, 3)]
    model = mk.Model(inputs, symbolic)
    assert len(model.outputs) == 5
    called = model(x)
    assert _shapes(called) == [(2, 3), [(2, 5), (2, 5)], (2, 4), (2, 3)]
    np.testing.assert_allclose(called[2].numpy(), gru_state.numpy(), rtol=1e-6)
    assert _shapes(layer.get_initial_state(2)) == [[(2, 5), (2, 5)], [(2, 4)], [(2, 3)]]
    # The outputs' masks take the same structure (a masked functional model builds).
    ids = mk.Input((4,), dtype="int32")
    masked = _stacked(mk)(mk.layers.Embedding(5, 3, mask_zero=True)(ids))
    lengths = mk.Model(ids, masked)(np.array([[1, 2, 0, 0]]))
    assert _shapes(lengths) == [(1, 3), [(1, 5), (1, 5)], (1, 4), (1, 3)]
    # Other cells are unchanged: the states flat after the output.
    assert _shapes(layers.LSTM(2, return_state=True)(x)) == [(2, 2), (2, 2), (2, 2)]


def test_stacked_cells_states_match_keras_eager_symbolic_and_bidirectional():
    keras = pytest.importorskip("keras")
    x = rng.standard_normal((2, 4, 3)).astype("float32")
    theirs, ours = _stacked(keras), _stacked(mk)
    theirs(x)
    ours(x)
    ours.set_weights([np.asarray(w) for w in theirs.get_weights()])
    their_result, our_result = theirs(x), ours(x)
    assert _shapes(our_result) == _shapes(list(their_result))
    for one, other in zip(mk.tree.flatten(our_result), keras.tree.flatten(their_result)):
        np.testing.assert_allclose(one.numpy(), np.asarray(other), rtol=1e-5, atol=1e-6)
    for lib in (keras, mk):
        inputs = lib.Input((4, 3))
        got = _shapes(list(_stacked(lib)(inputs)))
        wrapped = _shapes(list(lib.layers.Bidirectional(_stacked(lib))(inputs)))
        eager = _shapes(list(lib.layers.Bidirectional(_stacked(lib))(x)))
        model_call = _shapes(list(lib.Model(inputs, _stacked(lib)(inputs))(x)))
        if lib is keras:
            expected = (got, wrapped, eager, model_call)
    assert (got, wrapped, eager, model_call) == expected
