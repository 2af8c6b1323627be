"""Symbolic shapes keep None, as in Keras: Keras-style model code, shapes checked by hand."""

import numpy as np
import pytest

import minikeras as mk
from minikeras import layers


def test_conv1d_on_sequences_of_any_length():
    # Keras's guides' pattern: variable-length sequences of 8 features.
    inputs = mk.Input((None, 8))
    x = layers.Conv1D(16, 3, activation="relu")(inputs)
    x = layers.MaxPooling1D(2)(x)
    x = layers.GlobalAveragePooling1D()(x)
    model = mk.Model(inputs, layers.Dense(2)(x))
    assert x.shape == (None, 16)
    assert model.output_shape == (None, 2) and model.input_shape == (None, None, 8)
    # The same model takes sequences of different lengths.
    assert model(np.ones((3, 10, 8))).shape == (3, 2)
    assert model(np.ones((1, 25, 8))).shape == (1, 2)


@pytest.mark.parametrize(
    "make, shape, expected",
    [
        # floor((n - k) / s) + 1 for 'valid', ceil(n / s) for 'same'; None stays None.
        (lambda: layers.Conv1D(4, 3), (None, 10, 8), (None, 8, 4)),
        (lambda: layers.Conv1D(4, 3, strides=2, padding="same"), (None, 11, 8), (None, 6, 4)),
        (lambda: layers.Conv1D(4, 3), (None, None, 8), (None, None, 4)),
        (lambda: layers.Conv2D(5, (3, 2)), (None, 7, None, 1), (None, 5, None, 5)),
        (lambda: layers.Conv2D(5, 3, strides=2), (None, 9, 9, 1), (None, 4, 4, 5)),
        (lambda: layers.MaxPooling2D(), (None, 7, None, 3), (None, 3, None, 3)),
        (lambda: layers.AveragePooling1D(3, padding="same"), (None, 10, 2), (None, 4, 2)),
        (lambda: layers.Conv2DTranspose(2, 3, strides=2), (None, 4, None, 1), (None, 9, None, 2)),
        (lambda: layers.Flatten(), (None, 3, 4), (None, 12)),
        (lambda: layers.Flatten(), (None, None, 4), (None, None)),
        (lambda: layers.Reshape((-1, 2)), (None, 6), (None, 3, 2)),
        (lambda: layers.Dense(3), (None, None, 5), (None, None, 3)),
        (lambda: layers.Embedding(10, 4), (None, None), (None, None, 4)),
        (lambda: layers.LSTM(3, return_sequences=True), (None, None, 2), (None, None, 3)),
        (lambda: layers.GRU(3), (None, None, 2), (None, 3)),
        (lambda: layers.Bidirectional(layers.LSTM(3)), (None, None, 2), (None, 6)),
        (lambda: layers.RepeatVector(4), (None, 3), (None, 4, 3)),
        (lambda: layers.Permute((2, 1)), (None, None, 3), (None, 3, None)),
        (lambda: layers.GlobalMaxPooling2D(), (None, None, None, 3), (None, 3)),
        (lambda: layers.UpSampling2D(2), (None, 3, None, 1), (None, 6, None, 1)),
    ],
)
def test_output_shapes_follow_the_formulas_and_keep_none(make, shape, expected):
    layer = make()
    assert layer(mk.Input(batch_shape=shape)).shape == expected


def test_batch_shape_input_keeps_a_fixed_batch():
    x = mk.Input(batch_shape=(None, 10, 3))
    assert x.shape == (None, 10, 3)
    fixed = mk.Input(batch_shape=(4, None, 3))
    assert layers.Dense(2)(fixed).shape == (4, None, 2)
    with pytest.raises(ValueError, match="exactly one of `shape`"):
        mk.Input(shape=(3,), batch_shape=(None, 3))
    with pytest.raises(ValueError, match="positive ints or None"):
        mk.Input(shape=(0, 3))


def test_a_custom_layer_without_compute_output_shape_is_traced():
    class Doubler(layers.Layer):
        """Repeats each sequence twice along time: the time axis doubles."""

        def call(self, inputs):
            return mk.ops.concatenate([inputs, inputs], axis=1)

    x = mk.Input((None, 3))
    # Only the unknown sizes are reported as None; the known feature axis stays 3.
    assert Doubler()(x).shape == (None, None, 3)
    assert Doubler()(mk.Input((5, 3))).shape == (None, 10, 3)
    assert Doubler()(mk.Input(batch_shape=(2, 5, 3))).shape == (2, 10, 3)


def test_a_custom_layer_with_compute_output_shape_is_not_run():
    class Declared(layers.Layer):
        calls = 0

        def call(self, inputs):
            Declared.calls += 1
            return inputs[:, :1]

        def compute_output_shape(self, input_shape):
            return (input_shape[0], 1)

    assert Declared()(mk.Input((None,))).shape == (None, 1)
    assert Declared.calls == 0


def test_custom_layer_build_sees_none_for_unknown_sizes():
    seen = []

    class Recorder(layers.Layer):
        def build(self, input_shape):
            seen.append(input_shape)

        def call(self, inputs):
            return inputs

    Recorder()(mk.Input((None, 4)))
    assert seen == [(None, None, 4)]


def test_summary_prints_none_where_keras_does(capsys):
    model = mk.Sequential([mk.Input((None, 8)), layers.Conv1D(4, 3), layers.Dense(2)])
    model(np.ones((2, 6, 8)))  # a call with real data does not replace the symbolic shapes
    model.summary()
    out = capsys.readouterr().out
    assert "(None, None, 4)" in out and "(None, None, 2)" in out
    assert "(2, 4, 4)" not in out


def test_known_sizes_that_do_not_match_are_named_when_the_graph_is_built():
    a, b = mk.Input((3,)), mk.Input((4,))
    with pytest.raises(ValueError, match=r"Add 'mismatch'.*\(None, 3\).*\(None, 4\)"):
        layers.Add(name="mismatch")([a, b])
    shared = layers.Dense(2, name="shared_dense")
    shared(a)
    with pytest.raises(
        ValueError,
        match=r"Dense 'shared_dense' expected inputs with last axis 3, got shape \(None, 4\)",
    ):
        shared(b)
    conv = layers.Conv1D(2, 3, name="conv")
    conv(mk.Input((None, 8)))
    with pytest.raises(ValueError, match="'conv'.*8.*5"):
        conv(mk.Input((None, 5)))


def test_a_layer_whose_weights_do_not_fix_the_last_axis_takes_any():
    # The old last-axis lock refused this valid layer (its weight's size equals the axis).
    class Gain(layers.Layer):
        def build(self, input_shape):
            self.gain = self.add_weight(shape=(3,), initializer="ones")

        def call(self, inputs):
            return inputs * mk.ops.sum(self.gain)

    layer = Gain()
    assert layer(np.ones((2, 3))).shape == (2, 3)
    assert layer(np.ones((2, 5))).shape == (2, 5)


def test_several_symbolic_inputs_in_each_call_form():
    q, v = mk.Input((4, 6)), mk.Input((5, 6))
    for make_call in (
        lambda layer: layer(q, v),
        lambda layer: layer(query=q, value=v),
        lambda layer: layer(q, value=v),
    ):
        mha = layers.MultiHeadAttention(num_heads=2, key_dim=3)
        out = make_call(mha)
        assert out.shape == (None, 4, 6)
        model = mk.Model([q, v], out)
        data_q, data_v = np.ones((2, 4, 6)), np.ones((2, 5, 6))
        np.testing.assert_allclose(
            model([data_q, data_v]).numpy(), mha(data_q, data_v).numpy(), rtol=1e-6
        )


def test_build_gets_one_shape_per_argument_by_name():
    seen = {}

    class Pair(layers.Layer):
        def build(self, a_shape, b_shape):
            seen.update(a=a_shape, b=b_shape)

        def call(self, a, b):
            return a + mk.ops.sum(b, axis=-1, keepdims=True)

    out = Pair()(mk.Input((3,)), b=mk.Input((7,)))
    assert seen == {"a": (None, 3), "b": (None, 7)} and out.shape == (None, 3)
    listed = []

    class Summed(layers.Layer):
        def build(self, input_shape):
            listed.append(input_shape)

        def call(self, inputs):
            return inputs[0] + inputs[1]

    Summed()([mk.Input((2,)), mk.Input((2,))])
    assert listed == [[(None, 2), (None, 2)]]


def test_layer_input_and_output_are_the_first_calls():
    x = mk.Input((3,))
    dense = layers.Dense(2)
    y = dense(x)
    assert dense.input is x and dense.output is y and dense.output.shape == (None, 2)
    dense(mk.Input((5, 3)))  # (a shared layer: Keras keeps giving the first call's)
    assert dense.input is x and dense.output is y
    with pytest.raises(AttributeError, match="never called on symbolic tensors"):
        _ = layers.Dense(2).input
    eager = layers.Dense(2)
    eager(np.ones((1, 3), "float32"))
    with pytest.raises(AttributeError, match="never called on symbolic tensors"):
        _ = eager.output


def test_a_subclass_may_still_name_an_attribute_output():
    class Net(mk.Model):
        def __init__(self):
            super().__init__()
            self.output = layers.Dense(2)  # a common name in user code

        def call(self, inputs):
            return self.output(inputs)

    net = Net()
    assert net(np.ones((1, 3))).shape == (1, 2) and len(net.trainable_weights) == 2
