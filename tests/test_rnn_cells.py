"""RNN and its cells: single steps worked by hand, user cells, masks, initial states, configs.

Each cell's step is checked on weights small enough to write the arithmetic
out; `RNN(cell)` is then checked against the fused `SimpleRNN`, `LSTM` and
`GRU` on the same weights, and its gradients against central differences.
"""

import math
from pathlib import Path

import numpy as np
import pytest
from finite_differences import check_float32
from layer_gradients import assert_gradients_match, projection_loss

import minikeras as mk
from minikeras import ops
from minikeras.layers import (
    GRU,
    LSTM,
    RNN,
    Bidirectional,
    GRUCell,
    Input,
    Layer,
    LSTMCell,
    SimpleRNN,
    SimpleRNNCell,
    StackedRNNCells,
)
from minikeras.serialization_lib import deserialize_keras_object, serialize_keras_object


def sig(x):
    return 1.0 / (1.0 + math.exp(-x))


def one_by_one(cell, kernel, recurrent_kernel, bias):
    cell.build((None, 1))
    cell.set_weights([np.array(kernel), np.array(recurrent_kernel), np.array(bias)])
    return cell


# ------------------------------------------------------------ single steps


def test_simple_rnn_cell_step_by_hand():
    cell = SimpleRNNCell(1)
    cell.build((None, 2))
    cell.set_weights([np.array([[0.5], [-1.0]]), np.array([[2.0]]), np.array([0.1])])
    output, states = cell(np.array([[1.0, 2.0]]), [np.array([[0.5]])])
    # 1 * 0.5 + 2 * -1 + 0.5 * 2 + 0.1 = -0.4
    np.testing.assert_allclose(output.numpy(), [[math.tanh(-0.4)]], rtol=1e-6)
    assert isinstance(states, list) and states[0] is output


def test_lstm_cell_step_by_hand():
    # One unit, one feature: the kernels' four columns are the gates i, f, c, o.
    cell = one_by_one(LSTMCell(1), [[1.0, 2.0, 3.0, 4.0]], [[0.5, -0.5, 1.0, 0.0]], [0, 1, 0, -1])
    h, (h_again, c) = cell(np.array([[2.0]]), [np.array([[1.0]]), np.array([[3.0]])])
    i = sig(2.0 + 0.5)  # x * 1 + h * 0.5 + 0
    f = sig(4.0 - 0.5 + 1.0)
    candidate = math.tanh(6.0 + 1.0)
    o = sig(8.0 + 0.0 - 1.0)
    c_expected = f * 3.0 + i * candidate
    np.testing.assert_allclose(c.numpy(), [[c_expected]], rtol=1e-6)
    np.testing.assert_allclose(h.numpy(), [[o * math.tanh(c_expected)]], rtol=1e-6)
    assert h_again is h and cell.state_size == [1, 1]


def test_lstm_cell_starts_the_forget_bias_at_one():
    cell = LSTMCell(2)
    cell.build((None, 3))
    np.testing.assert_array_equal(cell.bias.numpy(), [0, 0, 1, 1, 0, 0, 0, 0])


@pytest.mark.parametrize("reset_after", [True, False])
def test_gru_cell_step_by_hand(reset_after):
    # Columns are the gates z, r, h. reset_after=True: bias rows (input, recurrent).
    bias = [[0.1, 0.2, 0.3], [-0.1, 0.4, 0.5]] if reset_after else [0.1, 0.2, 0.3]
    cell = one_by_one(
        GRUCell(1, reset_after=reset_after), [[1.0, -1.0, 2.0]], [[0.5, 1.5, -2.0]], bias
    )
    x, h = 1.5, 0.8
    recurrent_bias = [-0.1, 0.4, 0.5] if reset_after else [0.0, 0.0, 0.0]
    z = sig(1.5 + 0.1 + 0.4 + recurrent_bias[0])
    r = sig(-1.5 + 0.2 + 1.2 + recurrent_bias[1])
    if reset_after:
        candidate = math.tanh(3.0 + 0.3 + r * (-1.6 + 0.5))
    else:
        candidate = math.tanh(3.0 + 0.3 + (r * h) * -2.0)
    expected = z * h + (1 - z) * candidate
    output, state = cell(np.array([[x]]), np.array([[h]]))
    np.testing.assert_allclose(output.numpy(), [[expected]], rtol=1e-6)
    assert state is output  # a single state given alone comes back alone


# --------------------------------------------------------------- user cells


class MinimalRNNCell(Layer):
    """The cell of Keras's RNN guide: output = x @ kernel + h @ recurrent_kernel."""

    def __init__(self, units, **kwargs):
        super().__init__(**kwargs)
        self.units = units
        self.state_size = units

    def build(self, input_shape):
        self.kernel = self.add_weight(
            shape=(input_shape[-1], self.units), initializer="uniform", name="kernel"
        )
        self.recurrent_kernel = self.add_weight(
            shape=(self.units, self.units), initializer="uniform", name="recurrent_kernel"
        )

    def call(self, inputs, states):
        output = ops.matmul(inputs, self.kernel) + ops.matmul(states[0], self.recurrent_kernel)
        return output, [output]

    def get_config(self):
        return {**super().get_config(), "units": self.units}


def minimal_loop(x, kernel, recurrent_kernel, h):
    for step in range(x.shape[1]):
        h = x[:, step] @ kernel + h @ recurrent_kernel
    return h


def test_the_minimal_cell_of_the_keras_guide():
    x = np.random.default_rng(0).standard_normal((2, 4, 3)).astype("float32")
    layer = RNN(MinimalRNNCell(5))
    output = layer(x)
    kernel, recurrent_kernel = (w.numpy() for w in layer.cell.weights)
    expected = minimal_loop(x, kernel, recurrent_kernel, np.zeros((2, 5), "float32"))
    np.testing.assert_allclose(output.numpy(), expected, rtol=1e-5, atol=1e-6)
    assert layer.compute_output_shape((None, None, 3)) == (None, 5)


def test_a_list_of_cells_is_stacked():
    x = np.random.default_rng(1).standard_normal((2, 4, 3)).astype("float32")
    layer = RNN([MinimalRNNCell(4), MinimalRNNCell(2)], return_state=True)
    output, [first], [second] = layer(x)  # one list per cell, as Keras 3.15's eager call
    assert isinstance(layer.cell, StackedRNNCells)
    k1, r1, k2, r2 = (w.numpy() for w in layer.weights)
    h1, h2 = np.zeros((2, 4), "float32"), np.zeros((2, 2), "float32")
    for step in range(4):
        h1 = x[:, step] @ k1 + h1 @ r1
        h2 = h1 @ k2 + h2 @ r2
    np.testing.assert_allclose(first.numpy(), h1, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(output.numpy(), h2, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(second.numpy(), h2, rtol=1e-5, atol=1e-6)


def test_a_cell_with_two_states_and_an_output_size():
    class Accumulate(Layer):
        """Outputs x (3 wide) and keeps two running sums: of x and of x squared."""

        state_size = [3, 3]
        output_size = 3

        def call(self, inputs, states):
            total, squares = states
            return inputs * 2.0, [total + inputs, squares + inputs * inputs]

    x = np.arange(12, dtype="float32").reshape(1, 4, 3)
    mask = np.array([[True, False, True, True]])
    output, total, squares = RNN(Accumulate(), return_state=True)(x, mask=mask)
    kept = x[:, [0, 2, 3]]
    np.testing.assert_allclose(total.numpy(), kept.sum(1))
    np.testing.assert_allclose(squares.numpy(), (kept**2).sum(1))
    np.testing.assert_allclose(output.numpy(), 2 * x[:, 3])


class StartsFromOnes(MinimalRNNCell):
    """Keras 2's signature: `batch_size` is not the first argument."""

    def get_initial_state(self, inputs=None, batch_size=None, dtype=None):
        return [ops.ones((batch_size, self.units))]


class LSTMFromHalf(LSTMCell):
    """A built-in cell (its fused loop) with initial states of its own."""

    def get_initial_state(self, batch_size=None):
        return [ops.full((batch_size, self.units), 0.5)] * 2


def test_initial_states_come_from_the_cells_get_initial_state_called_as_keras_calls_it():
    x = np.random.default_rng(2).standard_normal((2, 4, 3)).astype("float32")
    layer = RNN(StartsFromOnes(5))
    output = layer(x)
    kernel, recurrent_kernel = (w.numpy() for w in layer.cell.weights)
    expected = minimal_loop(x, kernel, recurrent_kernel, np.ones((2, 5), "float32"))
    np.testing.assert_allclose(output.numpy(), expected, rtol=1e-5, atol=1e-6)
    assert [s.numpy().tolist() for s in layer.get_initial_state(1)] == [[[1.0] * 5]]
    fused = RNN(LSTMFromHalf(3))
    halves = [np.full((2, 3), 0.5, "float32")] * 2
    np.testing.assert_array_equal(fused(x).numpy(), fused(x, initial_state=halves).numpy())
    assert not np.allclose(fused(x).numpy(), fused(x, initial_state=[halves[0] * 0] * 2).numpy())


def test_stacked_cells_nest_their_initial_states_per_cell_as_keras():
    x = np.random.default_rng(3).standard_normal((2, 4, 3)).astype("float32")
    cells = StackedRNNCells([LSTMFromHalf(3), StartsFromOnes(2), GRUCell(4)])
    nested = cells.get_initial_state(batch_size=2)
    assert [[s.shape for s in states] for states in nested] == [[(2, 3)] * 2, [(2, 2)], [(2, 4)]]
    layer = RNN(cells)
    flat = [np.full((2, 3), 0.5, "float32")] * 2 + [np.ones((2, 2), "float32")]
    flat.append(np.zeros((2, 4), "float32"))
    np.testing.assert_array_equal(layer(x).numpy(), layer(x, initial_state=flat).numpy())
    assert [[s.shape for s in own] for own in layer.get_initial_state(2)] == [
        [s.shape for s in own] for own in nested
    ]


def test_a_cell_without_state_size_is_refused():
    with pytest.raises(ValueError, match="state_size"):
        RNN(mk.layers.Dense(3))


# ------------------------------------------------ against the fused layers

FUSED = {
    "simple_rnn": (SimpleRNN, SimpleRNNCell, {}, 1),
    "lstm": (LSTM, LSTMCell, {}, 2),
    "gru": (GRU, GRUCell, {}, 1),
    "gru_reset_before": (GRU, GRUCell, {"reset_after": False}, 1),
}


def step_by_step(cell_class):
    """A subclass with its own call(): RNN runs it one step at a time, not as a fused op."""

    class StepByStep(cell_class):
        def call(self, inputs, states, training=False):
            return super().call(inputs, states, training=training)

    return StepByStep


def data(state_count, seed=0, batch=3, steps=6, features=4, units=5):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((batch, steps, features)).astype("float32")
    states = [rng.standard_normal((batch, units)).astype("float32") for _ in range(state_count)]
    mask = np.ones((batch, steps), bool)
    mask[0, 4:] = False  # right padding (leading steps with go_backwards)
    mask[1, 2] = False  # a hole
    mask[-1, :2] = False  # left padding: masked steps before any kept one
    return x, states, mask


@pytest.mark.parametrize("kind", FUSED)
@pytest.mark.parametrize("go_backwards", [False, True])
@pytest.mark.parametrize("masked", [False, True])
def test_rnn_of_the_cell_equals_the_fused_layer(kind, go_backwards, masked):
    fused_class, cell_class, options, state_count = FUSED[kind]
    x, states, mask = data(state_count)
    flags = dict(return_sequences=True, return_state=True, go_backwards=go_backwards)
    fused = fused_class(5, **options, **flags)
    stepped = RNN(step_by_step(cell_class)(5, **options), **flags)
    general = RNN(cell_class(5, **options), **flags)  # a built-in cell: the fused op too
    rng = np.random.default_rng(7)
    for layer in (fused, stepped, general):
        layer.build(x.shape)
        layer.set_weights(
            [rng.standard_normal(w.shape).astype("float32") * 0.5 for w in layer.weights]
        )
        rng = np.random.default_rng(7)
    mask = mask if masked else None
    expected = fused(x, initial_state=states, mask=mask)
    for layer in (stepped, general):
        got = layer(x, initial_state=states, mask=mask)
        assert len(got) == len(expected) == 1 + state_count
        for a, b in zip(got, expected):
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-6)


def test_padding_with_a_mask_changes_nothing():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 3, 4)).astype("float32")
    layer = RNN(LSTMCell(3), return_state=True)
    short = layer(x)
    padded = np.concatenate([x, rng.standard_normal((2, 2, 4)).astype("float32")], axis=1)
    mask = np.array([[True] * 3 + [False] * 2] * 2)
    long = layer(padded, mask=mask)
    for a, b in zip(short, long):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("cell_class", [LSTMCell, step_by_step(LSTMCell)])
def test_gradients_of_rnn_lstm_cell_with_a_mask_match_central_differences(cell_class):
    x, states, mask = data(2, seed=4, batch=2, steps=4, features=3, units=2)
    x, states = x.astype("float64"), [s.astype("float64") for s in states]
    mask = mask[:, :4]
    layer = RNN(
        cell_class(2, dtype="float64"), return_sequences=True, return_state=True, dtype="float64"
    )
    layer.build(x.shape)

    def loss(x, h, c):
        return projection_loss(layer(x, initial_state=[h, c], mask=mask))

    assert_gradients_match(loss, [x, *states], layer.weights)


@pytest.mark.parametrize("kind", FUSED)
def test_the_step_loop_stays_in_float32(kind):
    _, cell_class, options, _ = FUSED[kind]
    x, _, mask = data(1, seed=6)
    layer = RNN(
        step_by_step(cell_class)(5, **options, dropout=0.2, recurrent_dropout=0.2),
        return_sequences=True,
    )
    check_float32(lambda x: layer(x, mask=mask, training=True), [x])


def test_return_state_with_a_mask_gives_the_last_kept_states():
    x, _, _ = data(2, seed=5)
    mask = np.array([[True] * 4 + [False] * 2] * 3)
    layer = RNN(LSTMCell(5), return_state=True)
    output, h, c = layer(x, mask=mask)
    _, h_short, c_short = layer(x[:, :4])
    np.testing.assert_allclose(h.numpy(), h_short.numpy(), rtol=1e-6)
    np.testing.assert_allclose(c.numpy(), c_short.numpy(), rtol=1e-6)
    np.testing.assert_allclose(output.numpy(), h.numpy())


def test_initial_state_in_a_functional_model():
    sequences = Input((None, 4))
    h, c = Input((5,)), Input((5,))
    layer = RNN(LSTMCell(5), return_sequences=True, return_state=True)
    outputs = layer(sequences, initial_state=[h, c])
    assert [t.shape for t in outputs] == [(None, None, 5), (None, 5), (None, 5)]
    model = mk.Model([sequences, h, c], outputs[0])
    x, states, _ = data(2)
    np.testing.assert_allclose(
        model.predict([x, *states], verbose=0),
        layer(x, initial_state=states)[0].numpy(),
        rtol=1e-6,
    )


def test_wrong_initial_states_name_the_layer_and_the_shapes():
    layer = RNN(LSTMCell(5), name="rnn_x")
    x, states, _ = data(2)
    with pytest.raises(ValueError, match=r"rnn_x.*\(3, 5\), \(3, 5\)"):
        layer(x, initial_state=states[:1])


def test_output_shapes_with_unknown_sizes():
    layer = RNN(GRUCell(3), return_sequences=True, return_state=True)
    assert layer.compute_output_shape((None, None, 2)) == [(None, None, 3), (None, 3)]
    assert RNN(LSTMCell(4)).compute_output_shape((7, 5, 2)) == (7, 4)


def test_bidirectional_over_rnn_of_an_lstm_cell():
    x, _, mask = data(2)
    layer = Bidirectional(RNN(LSTMCell(3), return_sequences=True))
    output = layer(x, mask=mask)
    forward = layer.forward_layer(x, mask=mask).numpy()
    backward = layer.backward_layer(x, mask=mask).numpy()[:, ::-1]
    np.testing.assert_allclose(output.numpy(), np.concatenate([forward, backward], -1), rtol=1e-6)
    assert type(layer.backward_layer.cell) is LSTMCell and layer.backward_layer.go_backwards


# ------------------------------------------------------------------ dropout


def test_cell_dropout_is_one_mask_per_sequence_and_only_in_training():
    x = np.ones((4, 6, 8), "float32")
    layer = RNN(SimpleRNNCell(3, dropout=0.5, recurrent_dropout=0.5, seed=2))
    inference = layer(x).numpy()
    np.testing.assert_array_equal(layer(x).numpy(), inference)  # no dropout at inference
    trained = layer(x, training=True).numpy()
    assert not np.allclose(inference, trained)
    assert layer.cell._dropout_masks == {}  # reset after the sequence
    cell = layer.cell
    first = cell.get_dropout_mask(x[:, 0])
    assert first is cell.get_dropout_mask(x[:, 1])  # the same mask at every step


@pytest.mark.parametrize("kind", FUSED)
def test_fused_layers_drop_as_their_cell_does(kind):
    # Same seeds, same masks: the fused op's input dropout (one mask for every step),
    # and recurrent dropout (which runs the step loop), give what the cell gives step by step.
    fused_class, cell_class, options, _ = FUSED[kind]
    x, _, mask = data(1)
    for rates in ({"dropout": 0.3, "recurrent_dropout": 0.4}, {"dropout": 0.3}):
        fused = fused_class(5, **options, **rates, seed=3, return_sequences=True)
        stepped = RNN(
            step_by_step(cell_class)(5, **options, **rates, seed=3), return_sequences=True
        )
        fused.build(x.shape)
        stepped.build(x.shape)
        stepped.set_weights(fused.get_weights())
        for training in (True, False):
            np.testing.assert_allclose(
                fused(x, mask=mask, training=training).numpy(),
                stepped(x, mask=mask, training=training).numpy(),
                rtol=1e-5,
                atol=1e-6,
            )


# ------------------------------------------------------------------ config


def test_rnn_config_round_trips_its_cell():
    layer = RNN(GRUCell(3, reset_after=False, dropout=0.25), go_backwards=True, name="r")
    copy = deserialize_keras_object(serialize_keras_object(layer))
    assert type(copy.cell) is GRUCell and copy.cell.reset_after is False
    assert copy.get_config() == layer.get_config()
    stacked = RNN([LSTMCell(2), SimpleRNNCell(3)])
    copy = RNN.from_config(stacked.get_config())
    assert [type(c) for c in copy.cell.cells] == [LSTMCell, SimpleRNNCell]


def test_a_registered_user_cell_round_trips_through_a_saved_model(tmp_path):
    @mk.saving.register_keras_serializable(package="rnn_test")
    class RegisteredMinimalCell(MinimalRNNCell):
        pass

    inputs = Input((5, 3))
    model = mk.Model(inputs, RNN(RegisteredMinimalCell(4))(inputs))
    model.save(tmp_path / "m.minikeras")
    loaded = mk.saving.load_model(tmp_path / "m.minikeras")
    assert type(loaded.layers[-1].cell).__name__ == "RegisteredMinimalCell"
    x = np.random.default_rng(0).standard_normal((2, 5, 3)).astype("float32")
    np.testing.assert_array_equal(loaded.predict(x, verbose=0), model.predict(x, verbose=0))


# ------------------------------------------------- files from before the cells

LEGACY = Path(__file__).parent / "fixtures" / "minikeras_0.2"


def test_files_written_before_the_layers_held_cells_still_load():
    # Made by minikeras 0.2.0 (make_fixtures.py there): weights at `lstm/kernel`, not
    # `lstm/cell/kernel`. The model and the weights alone load, with the same predictions.
    data = np.load(LEGACY / "recurrent.npz")
    model = mk.saving.load_model(LEGACY / "recurrent.minikeras")
    np.testing.assert_allclose(model.predict(data["x"], verbose=0), data["y"], rtol=1e-6)
    assert type(model.layers[1].cell) is GRUCell
    copy = mk.Sequential(
        [
            Input((4, 3)),
            SimpleRNN(3, return_sequences=True),
            GRU(2, return_sequences=True),
            Bidirectional(LSTM(2)),
            mk.layers.Dense(1),
        ]
    )
    copy.load_weights(LEGACY / "recurrent.weights.minikeras")
    np.testing.assert_allclose(copy.predict(data["x"], verbose=0), data["y"], rtol=1e-6)


# ------------------------------------------------ the built-in zero states


def test_zero_state_groups_name_the_built_in_cells_zeros_and_nothing_else():
    from minikeras.layers.rnn_cells import zero_state_groups

    assert zero_state_groups(LSTMCell(3)) == [("float32", [3, 3])]
    assert zero_state_groups(GRUCell(2, dtype="float64")) == [("float64", [2])]
    stacked = StackedRNNCells([SimpleRNNCell(2), LSTMCell(4), GRUCell(1)])
    assert zero_state_groups(stacked) == [("float32", [2]), ("float32", [4, 4]), ("float32", [1])]
    # Any other cell's states are its get_initial_state's, or the RNN's zeros in Python.
    assert zero_state_groups(MinimalRNNCell(2)) is None
    assert zero_state_groups(LSTMFromHalf(3)) is None
    assert zero_state_groups(StackedRNNCells([GRUCell(2), MinimalRNNCell(2)])) is None
    own = GRUCell(2)
    own.get_initial_state = lambda batch_size=None: [ops.ones((batch_size, 2))]
    assert zero_state_groups(own) is None


def test_an_rnn_of_stacked_cells_over_no_steps_leaves_what_feeds_it_without_gradient():
    # (its default states are then made in Python: the Dense reaches no loss)
    dense = mk.layers.Dense(4)
    layer = RNN([LSTMCell(3), GRUCell(2)], return_state=True)
    with mk.GradientTape() as tape:
        _, (h, _), g = layer(dense(np.ones((2, 0, 3), "float32")))
        loss = ops.sum(h) + ops.sum(g)
    assert tape.gradient(loss, dense.trainable_weights) == [None, None]


def test_zero_states_refuse_what_is_no_size_or_batch_by_name():
    zero_states = ops.recurrent.zero_states
    for size in (2.5, True, -1, "3"):
        with pytest.raises(ValueError, match="zero_states: each size must be a non-negative int"):
            zero_states(np.ones((2, 3)), [size])
    with pytest.raises(ValueError, match="zero_states: sequences need a batch axis"):
        zero_states(np.float32(1.0), [2])
    with pytest.raises(TypeError, match="zero_states: 'nope' is not a dtype"):
        zero_states(np.ones((2, 3)), [2], "nope")


def test_zero_states_are_zeros_of_the_batch_whose_gradient_is_zero():
    x = mk.Variable(np.random.default_rng(4).standard_normal((3, 5, 2)).astype("float32"))
    with mk.GradientTape() as tape:
        first, second = ops.recurrent.zero_states(x, [4, 1], "float32")
        loss = ops.sum(ops.exp(first)) + ops.sum(second * 7.0) + ops.sum(x * x)
    assert (first.shape, second.shape) == ((3, 4), (3, 1))
    assert not np.any(first.numpy()) and first.dtype == "float32"
    grad = tape.gradient(loss, x)
    assert grad.dtype == "float32"
    np.testing.assert_array_equal(grad.numpy(), 2 * x.numpy())
