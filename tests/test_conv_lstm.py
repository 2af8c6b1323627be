"""ConvLSTM1D/2D/3D: Keras 3's values on the same weights, `.keras` files both ways, the
LSTM they reduce to with 1-wide kernels, masks, states, gradients, configs and errors."""

import os

import numpy as np
import pytest
from layer_gradients import assert_gradients_match, projection_loss

import minikeras as mk
from minikeras import layers

rng = np.random.default_rng(0)

# (rank, arguments, input shape with batch)
KERAS_CASES = [
    (1, {"filters": 2, "kernel_size": 3}, (2, 4, 7, 3)),
    (
        1,
        {"filters": 2, "kernel_size": 3, "padding": "same", "return_sequences": True,
         "go_backwards": True},
        (2, 4, 7, 3),
    ),
    (2, {"filters": 3, "kernel_size": (3, 2), "strides": 2, "return_state": True}, (2, 3, 7, 6, 2)),
    (
        2,
        {"filters": 3, "kernel_size": 3, "dilation_rate": 2, "data_format": "channels_first",
         "return_sequences": True},
        (2, 3, 2, 7, 6),
    ),
    (
        3,
        {"filters": 2, "kernel_size": 2, "padding": "same", "return_state": True,
         "unit_forget_bias": False, "activation": "relu", "use_bias": True},
        (2, 3, 4, 3, 3, 2),
    ),
    (
        1,
        {"filters": 2, "kernel_size": 3, "use_bias": False, "return_sequences": True},
        (1, 3, 5, 2),
    ),
]  # fmt: skip


def _parts(result):
    return list(result) if isinstance(result, (list, tuple)) else [result]


def _randomized(layer, shape):
    layer.build(shape)
    for weight in layer.weights:
        weight.assign(rng.normal(scale=0.5, size=weight.shape).astype(weight.dtype))
    return layer


def test_kernel_size_one_is_an_lstm_at_each_position():
    # 1-wide kernels make both convolutions matrix products at each position: the
    # layer is then LSTM, with the same kernels, run on every position's sequence.
    x = rng.normal(size=(2, 4, 5, 3)).astype("float32")
    conv = _randomized(layers.ConvLSTM1D(2, 1, return_sequences=True), x.shape)
    lstm = layers.LSTM(2, return_sequences=True)
    lstm.build((None, 4, 3))
    lstm.set_weights([conv.kernel.numpy()[0], conv.recurrent_kernel.numpy()[0], conv.bias.numpy()])
    per_position = np.transpose(x, (0, 2, 1, 3)).reshape(10, 4, 3)
    want = lstm(per_position).numpy().reshape(2, 5, 4, 2).transpose(0, 2, 1, 3)
    np.testing.assert_allclose(conv(x).numpy(), want, rtol=1e-5, atol=1e-6)


def test_weights_shapes_gate_order_and_forget_bias():
    layer = layers.ConvLSTM2D(3, (3, 2), name="clstm")
    layer.build((None, 4, 6, 5, 2))
    assert [w.shape for w in layer.weights] == [(3, 2, 2, 12), (3, 2, 3, 12), (12,)]
    assert layer.cell.name == "conv_lstm_cell" and layer.kernel is layer.cell.kernel
    np.testing.assert_array_equal(layer.bias.numpy(), [0.0] * 3 + [1.0] * 3 + [0.0] * 6)
    plain = layers.ConvLSTM1D(2, 3, unit_forget_bias=False, bias_initializer="ones")
    plain.build((None, 2, 5, 1))
    np.testing.assert_array_equal(plain.bias.numpy(), np.ones(8))


def test_masked_steps_keep_the_states():
    x = rng.normal(size=(2, 5, 6, 2)).astype("float32")
    layer = _randomized(layers.ConvLSTM1D(2, 3, padding="same", return_state=True), x.shape)
    mask = np.ones((2, 5), bool)
    mask[0, 3:] = False  # the first sequence ends after three steps
    output, h, c = layer(x, mask=mask)
    short_output, short_h, short_c = layer(x[:1, :3])
    full_output, _, _ = layer(x[1:])
    np.testing.assert_allclose(output.numpy()[:1], short_output.numpy(), rtol=1e-6)
    np.testing.assert_allclose(c.numpy()[:1], short_c.numpy(), rtol=1e-6)
    np.testing.assert_allclose(output.numpy()[1:], full_output.numpy(), rtol=1e-6)
    sequences = layers.ConvLSTM1D(2, 3, return_sequences=True)
    assert sequences.compute_mask(x, mask) is mask


def test_initial_state_and_stateful_continue_a_sequence():
    x = rng.normal(size=(2, 6, 5, 5, 1)).astype("float32")
    whole = _randomized(layers.ConvLSTM2D(2, 3, padding="same", return_state=True), x.shape)
    output, h, c = whole(x)
    _, h_half, c_half = whole(x[:, :3])
    resumed = whole(x[:, 3:], initial_state=[h_half, c_half])[0]
    np.testing.assert_allclose(resumed.numpy(), output.numpy(), rtol=1e-5, atol=1e-6)

    stateful = layers.ConvLSTM2D(2, 3, padding="same", stateful=True)
    stateful.build(x.shape)
    stateful.set_weights(whole.get_weights())
    stateful(x[:, :3])
    np.testing.assert_allclose(stateful(x[:, 3:]).numpy(), output.numpy(), rtol=1e-5, atol=1e-6)
    assert [s.shape for s in stateful.states] == [(2, 5, 5, 2), (2, 5, 5, 2)]
    stateful.reset_states()
    assert not np.any(stateful.states[1].numpy())
    with pytest.raises(ValueError, match="initial states of shapes"):
        whole(x, initial_state=[h[:, :2], c])


@pytest.mark.parametrize("data_format", ["channels_last", "channels_first"])
def test_gradients_match_finite_differences(data_format):
    shape = (2, 3, 4, 2) if data_format == "channels_last" else (2, 3, 2, 4)
    x = rng.normal(size=shape)
    layer = layers.ConvLSTM1D(
        2, 2, padding="same", data_format=data_format, return_state=True, dtype="float64"
    )
    _randomized(layer, shape)
    mask = np.array([[True, True, False], [True, True, True]])
    assert_gradients_match(
        lambda inputs: projection_loss(layer(inputs, mask=mask)), [x], layer.weights
    )


def test_output_shapes_with_unknown_batch_and_time_and_a_functional_model():
    layer = layers.ConvLSTM2D(4, 3, strides=(2, 1), return_sequences=True, return_state=True)
    shapes = layer.compute_output_shape((None, None, 9, 7, 3))
    assert shapes == [(None, None, 4, 5, 4), (None, 4, 5, 4), (None, 4, 5, 4)]
    inputs = mk.Input((None, 9, 7, 3))
    outputs = layer(inputs)
    assert [tuple(t.shape) for t in outputs] == shapes
    model = mk.Model(inputs, outputs[0])
    assert model.predict(np.ones((2, 3, 9, 7, 3), "float32"), verbose=0).shape == (2, 3, 4, 5, 4)
    first = layers.ConvLSTM3D(2, 2, data_format="channels_first")
    assert first.compute_output_shape((5, 2, 3, 4, 4, 4)) == (5, 2, 3, 3, 3)


def test_config_round_trip_is_flat_as_in_keras():
    layer = layers.ConvLSTM2D(3, 2, strides=2, padding="same", dropout=0.2, seed=3, name="c")
    config = layer.get_config()
    assert "cell" not in config and "rank" not in config
    assert config["kernel_size"] == (2, 2) and config["strides"] == (2, 2)
    assert config["unit_forget_bias"] is True and config["stateful"] is False
    again = layers.ConvLSTM2D.from_config(config)
    assert again.get_config() == config


def test_bad_arguments_and_inputs_raise_clear_errors():
    with pytest.raises(ValueError, match="dilation_rate"):
        layers.ConvLSTM2D(2, 3, strides=2, dilation_rate=2)
    with pytest.raises(ValueError, match="padding"):
        layers.ConvLSTM1D(2, 3, padding="causal")
    with pytest.raises(ValueError, match="kernel_size"):
        layers.ConvLSTM3D(2, (3, 3))
    with pytest.raises(ValueError, match=r"rank 5 .*got shape \(2, 3, 4, 1\)"):
        layers.ConvLSTM2D(2, 3)(np.ones((2, 3, 4, 1), "float32"))
    with pytest.raises(ValueError, match="spatial and channel sizes are known"):
        layers.ConvLSTM1D(2, 3)(mk.Input((None, None, 2)))
    with pytest.raises(ValueError, match="wider than the inputs"):
        layers.ConvLSTM1D(2, 5)(np.ones((1, 2, 3, 1), "float32"))


def test_dropout_only_while_training():
    x = rng.normal(size=(2, 3, 5, 2)).astype("float32")
    layer = layers.ConvLSTM1D(2, 3, dropout=0.5, recurrent_dropout=0.5, seed=1)
    np.testing.assert_array_equal(layer(x).numpy(), layer(x).numpy())
    assert not np.allclose(layer(x, training=True).numpy(), layer(x).numpy())


@pytest.mark.parametrize("rank, arguments, shape", KERAS_CASES)
def test_same_values_as_keras_on_the_same_weights(rank, arguments, shape):
    os.environ.setdefault("KERAS_BACKEND", "jax")
    keras = pytest.importorskip("keras")
    # (Keras's ConvLSTM on JAX fails on a (batch, time) mask: compared without one.)
    x = rng.normal(size=shape).astype("float32")
    theirs = getattr(keras.layers, f"ConvLSTM{rank}D")(**arguments)
    want = _parts(theirs(x))
    ours = getattr(layers, f"ConvLSTM{rank}D")(**arguments)
    ours.build(shape)
    ours.set_weights([keras.ops.convert_to_numpy(w) for w in theirs.weights])
    got = _parts(ours(x))
    assert len(got) == len(want)
    for mine, reference in zip(got, want):
        reference = keras.ops.convert_to_numpy(reference)
        assert mine.shape == reference.shape and mine.dtype == reference.dtype
        np.testing.assert_allclose(mine.numpy(), reference, rtol=1e-5, atol=1e-6)
    # The same flat config (Keras writes dtype and initializers in its longer forms, and
    # `activity_regularizer` even when None).
    mine, keras_config = ours.get_config(), theirs.get_config()
    assert set(keras_config) - set(mine) == {"activity_regularizer"} and set(mine) <= set(
        keras_config
    )
    for key, value in mine.items():
        if not isinstance(value, dict) and key not in ("dtype", "name"):
            assert value == keras_config[key], key


@pytest.mark.parametrize("rank", [1, 2, 3])
def test_keras_files_cross_both_ways(tmp_path, rank):
    os.environ.setdefault("KERAS_BACKEND", "jax")
    keras = pytest.importorskip("keras")
    shape = (3, *(4,) * rank, 2)
    x = rng.normal(size=(2, *shape)).astype("float32")

    def build(lib):
        inputs = lib.Input(shape)
        layer = getattr(lib.layers, f"ConvLSTM{rank}D")(
            2, 2, padding="same", return_sequences=True, bias_initializer="random_normal"
        )
        return lib.Model(inputs, layer(inputs))

    ours = build(mk)
    ours.save(tmp_path / "ours.keras")
    loaded = keras.saving.load_model(tmp_path / "ours.keras")
    want = ours.predict(x, verbose=0)
    np.testing.assert_allclose(np.asarray(loaded.predict(x, verbose=0)), want, atol=1e-5)
    theirs = build(keras)
    theirs.save(tmp_path / "theirs.keras")
    back = mk.models.load_model(tmp_path / "theirs.keras")
    want = np.asarray(theirs.predict(x, verbose=0))
    np.testing.assert_allclose(back.predict(x, verbose=0), want, atol=1e-5)
