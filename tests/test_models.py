"""Models: subclassed, Sequential and functional; build(input_shape) and summary()."""

import warnings

import numpy as np
import pytest

import minikeras
from minikeras import GradientTape, Input, Layer, Model, Sequential, ops
from minikeras.layers import Dense, Dropout, Flatten

rng = np.random.default_rng(7)


def run_silently(function):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = function()
    assert [str(w.message) for w in caught] == []
    return result


class MLP(Model):
    def __init__(self, hidden=4, outputs=2, **kwargs):
        super().__init__(**kwargs)
        self.hidden = Dense(hidden, activation="relu")
        self.out = Dense(outputs)

    def call(self, inputs):
        return self.out(self.hidden(inputs))


class Concat(Layer):
    """Takes a list of inputs and joins them on the last axis."""

    def call(self, inputs):
        return ops.concatenate(inputs, axis=-1)


# --------------------------------------------------------------------- subclassed


def test_subclassed_model_matches_its_layers_applied_by_hand():
    model = MLP()
    x = rng.standard_normal((5, 3)).astype("float32")
    y = model(x)
    hidden = np.maximum(x @ model.hidden.kernel.numpy() + model.hidden.bias.numpy(), 0)
    expected = hidden @ model.out.kernel.numpy() + model.out.bias.numpy()
    np.testing.assert_allclose(y.numpy(), expected, rtol=1e-5, atol=1e-6)
    assert model.weights == [
        model.hidden.kernel,
        model.hidden.bias,
        model.out.kernel,
        model.out.bias,
    ]
    assert model.layers == [model.hidden, model.out]


def test_models_nest():
    class Outer(Model):
        def __init__(self):
            super().__init__()
            self.first = MLP(hidden=5, outputs=3)
            self.second = MLP(hidden=4, outputs=2)

        def call(self, inputs):
            return self.second(self.first(inputs))

    model = Outer()
    run_silently(lambda: model(np.ones((2, 3))))
    assert model(np.ones((2, 3))).shape == (2, 2)
    assert model.count_params() == model.first.count_params() + model.second.count_params()
    assert model.first.weights == model.weights[:4]
    with GradientTape() as tape:
        loss = ops.sum(model(np.ones((2, 3))))
    gradients = tape.gradient(loss, model.trainable_weights)
    assert len(gradients) == 8 and all(g is not None for g in gradients)


def test_a_subclassed_model_without_call_says_so():
    class NoCall(Model):
        pass

    with pytest.raises(NotImplementedError, match="NoCall.*call"):
        NoCall()(np.ones((1, 2)))


def test_build_builds_a_subclassed_model_by_a_dry_call():
    model = MLP()
    assert not model.built and model.weights == []
    model.build((None, 3))
    assert model.built and model.count_params() == (3 * 4 + 4) + (4 * 2 + 2)
    assert model.hidden.kernel.shape == (3, 4)
    assert model(np.ones((7, 3))).shape == (7, 2)


def test_build_with_several_inputs():
    class TwoInputs(Model):
        def __init__(self):
            super().__init__()
            self.left, self.right = Dense(2), Dense(2)

        def call(self, inputs):
            return self.left(inputs[0]) + self.right(inputs[1])

    model = TwoInputs()
    model.build([(None, 3), (None, 4)])
    assert model.left.kernel.shape == (3, 2) and model.right.kernel.shape == (4, 2)
    as_lists = TwoInputs()
    as_lists.build([[None, 3], [None, 4]])
    assert as_lists.right.kernel.shape == (4, 2)


def test_build_of_a_model_whose_own_build_calls_super_runs_it_once():
    class OwnBuild(Model):
        def __init__(self):
            super().__init__()
            self.build_calls = 0

        def build(self, input_shape):
            self.build_calls += 1
            self.head = Dense(2)
            super().build(input_shape)

        def call(self, inputs):
            return self.head(inputs)

    model = OwnBuild()
    model.build((None, 3))
    assert model.build_calls == 1 and model.built
    model(np.ones((1, 3)))
    assert model.build_calls == 1 and len(model.weights) == 2
    called = OwnBuild()
    called(np.ones((1, 3)))
    assert called.build_calls == 1


# --------------------------------------------------------------------- Sequential


def test_sequential_matches_its_layers_applied_in_order():
    model = Sequential([Dense(4, activation="relu"), Dense(2)])
    x = rng.standard_normal((3, 5)).astype("float32")
    first, second = model.layers
    expected = second(first(x)).numpy()
    np.testing.assert_allclose(model(x).numpy(), expected, rtol=1e-6)
    assert model.weights == [first.kernel, first.bias, second.kernel, second.bias]


def test_sequential_add_and_pop():
    model = Sequential()
    model.add(Dense(4))
    model.add(Dense(3))
    assert model(np.ones((2, 5))).shape == (2, 3)
    popped = model.pop()
    assert isinstance(popped, Dense) and popped.units == 3
    assert model(np.ones((2, 5))).shape == (2, 4)
    assert len(model.weights) == 2 and all(w is not popped.kernel for w in model.weights)
    model.add(Dense(6))
    assert model(np.ones((2, 5))).shape == (2, 6) and len(model.weights) == 4


def test_sequential_with_input_is_built_at_once():
    model = Sequential([Input(shape=(3,)), Dense(4), Dense(2)])
    assert model.built and model.count_params() == 16 + 10
    model.add(Dense(5))
    assert model.layers[-1].built and model.count_params() == 16 + 10 + 15


def test_sequential_with_keras2_input_shape_is_built_at_once():
    model = Sequential([Dense(4, input_shape=(3,)), Dense(2)])
    assert model.built and model.layers[0].kernel.shape == (3, 4)


def test_sequential_rejects_what_is_not_a_layer_and_duplicate_names():
    model = Sequential([Dense(2, name="only")])
    with pytest.raises(TypeError, match="expects a Layer, got int"):
        model.add(3)
    with pytest.raises(ValueError, match="'only'"):
        model.add(Dense(2, name="only"))
    with pytest.raises(ValueError, match="Input must come first"):
        model.add(Input(shape=(2,)))
    model.pop()
    with pytest.raises(IndexError, match="no layer to pop"):
        model.pop()


def test_sequential_build_by_hand():
    model = Sequential([Flatten(), Dense(2)])
    model.build((None, 2, 3))
    assert model.built and model.layers[1].kernel.shape == (6, 2)


def test_sequential_inside_a_subclassed_model_is_tracked():
    class Wrapper(Model):
        def __init__(self):
            super().__init__()
            self.body = Sequential([Dense(3), Dense(2)])
            self.head = Dense(1)

        def call(self, inputs):
            return self.head(self.body(inputs))

    model = Wrapper()
    run_silently(lambda: model(np.ones((2, 4))))
    assert len(model.weights) == 6
    assert [row.path for row in model.tracking_report().rows][:2] == [
        f"body/{model.body.layers[0].name}/kernel",
        f"body/{model.body.layers[0].name}/bias",
    ]


# --------------------------------------------------------------------- functional


def test_functional_model_matches_its_layers_applied_by_hand():
    inputs = Input(shape=(3,))
    hidden = Dense(4, activation="tanh")
    out = Dense(2)
    model = Model(inputs, out(hidden(inputs)))
    assert model.built and inputs.shape == (None, 3)
    x = rng.standard_normal((5, 3)).astype("float32")
    np.testing.assert_allclose(model(x).numpy(), out(hidden(x)).numpy(), rtol=1e-6)
    assert model.layers[1:] == [hidden, out] and len(model.weights) == 4
    assert type(model.layers[0]).__name__ == "InputLayer" and model.layers[0].output is inputs


def test_functional_model_with_several_inputs_through_a_layer_taking_a_list():
    left, right = Input(shape=(3,)), Input(shape=(2,))
    joined = Concat()([left, right])
    model = Model([left, right], Dense(1)(joined))
    a, b = np.ones((4, 3)), np.zeros((4, 2))
    y = model([a, b])
    dense = model.layers[-1]
    expected = np.concatenate([a, b], axis=1) @ dense.kernel.numpy() + dense.bias.numpy()
    np.testing.assert_allclose(y.numpy(), expected, rtol=1e-6)
    assert dense.kernel.shape == (5, 1)
    with pytest.raises(ValueError, match="expects inputs structured like"):
        model(a)


def test_a_layer_used_twice_shares_its_weights_counted_once():
    inputs = Input(shape=(4,))
    shared = Dense(4, activation="tanh", name="shared")
    model = Model(inputs, shared(shared(inputs)))
    assert model.layers[1:] == [shared]
    assert model.weights == [shared.kernel, shared.bias] and model.count_params() == 20
    x = rng.standard_normal((2, 4)).astype("float32")
    np.testing.assert_allclose(model(x).numpy(), shared(shared(x)).numpy(), rtol=1e-6)
    with GradientTape() as tape:
        loss = ops.sum(model(x))
    assert all(g is not None for g in tape.gradient(loss, model.trainable_weights))


def test_functional_models_nest_and_a_model_is_a_layer():
    inner_inputs = Input(shape=(3,))
    inner = Model(inner_inputs, Dense(2)(inner_inputs), name="inner")
    outer_inputs = Input(shape=(3,))
    outer = Model(outer_inputs, Dense(1)(inner(outer_inputs)))
    assert outer(np.ones((5, 3))).shape == (5, 1)
    assert len(outer.weights) == 4 and inner.weights == outer.weights[:2]


def test_build_in_the_functional_api_sees_none_for_unknown_sizes():
    shapes = []

    class Recorder(Layer):
        def build(self, input_shape):
            shapes.append(input_shape)

    Recorder()(Input(shape=(3,)))
    Recorder()([Input(shape=(3,)), Input(shape=(None, 2))])
    assert shapes == [(None, 3), [(None, 3), (None, None, 2)]]


def test_dense_on_an_input_with_an_unknown_last_axis_says_so():
    with pytest.raises(ValueError, match=r"'open_ended' needs inputs with a known last axis"):
        Dense(4, name="open_ended")(Input(shape=(None,)))


def test_functional_model_rejects_disconnected_outputs():
    used, unused = Input(shape=(2,)), Input(shape=(2,))
    with pytest.raises(ValueError, match="not in `inputs`"):
        Model(used, Dense(1)(unused))
    with pytest.raises(ValueError, match="minikeras.Input"):
        Model(np.ones((1, 2)), Dense(1)(used))


def test_input_rejects_a_bad_shape():
    with pytest.raises(ValueError, match="positive ints"):
        Input(shape=(0, 3))


def test_a_symbolic_input_has_no_values():
    with pytest.raises(TypeError, match="no values"):
        np.asarray(Input(shape=(2,)))


# ------------------------------------------------------------------------ summary


def test_summary_prints_layers_output_shapes_and_parameter_counts(capsys):
    model = Sequential(
        [
            Input(shape=(3,)),
            Dense(4, activation="relu", name="hidden"),
            Dropout(0.5, name="drop"),
            Dense(2, name="frozen", trainable=False),
        ],
        name="summarized",
    )
    model.summary()
    out = capsys.readouterr().out
    assert 'Model: "summarized"' in out
    rows = {line.split()[0]: line.split() for line in out.splitlines() if line.split()}
    assert rows["hidden"] == ["hidden", "(Dense)", "(None,", "4)", "16"]
    assert rows["drop"] == ["drop", "(Dropout)", "(None,", "4)", "0"]
    assert rows["frozen"] == ["frozen", "(Dense)", "(None,", "2)", "10"]
    assert "Total params: 26" in out
    assert "Trainable params: 16" in out
    assert "Non-trainable params: 10" in out


def test_summary_of_a_subclassed_model_lists_its_direct_layers(capsys):
    class Net(Model):
        def __init__(self):
            super().__init__(name="net")
            self.body = MLP(name="body")
            self.blocks = [Dense(3, name="block")]

        def call(self, inputs):
            return self.blocks[0](self.body(inputs))

    model = Net()
    model.build((None, 5))
    model.summary()
    out = capsys.readouterr().out
    assert "body (MLP)" in out and "block (Dense)" in out
    assert "Total params: 43" in out  # (5*4+4) + (4*2+2) + (2*3+3)
    assert "dense" not in out  # the MLP's own layers are inside its row


def test_summary_of_an_unbuilt_model_says_how_to_build_it(capsys):
    for model in [MLP(name="unbuilt_mlp"), Sequential([Dense(2)], name="unbuilt_seq")]:
        model.summary()
        out = capsys.readouterr().out
        assert f"'{model.name}' is not built" in out and "build(input_shape)" in out


def test_summary_shows_the_current_output_shape_of_a_sequential_after_pop_and_add(capsys):
    body = Sequential([Dense(4), Dense(3)], name="body")

    class Wrapper(Model):
        def __init__(self):
            super().__init__()
            self.body = body

        def call(self, inputs):
            return self.body(inputs)

    model = Wrapper()
    model(np.ones((1, 2)))
    body.pop()
    model(np.ones((1, 2)))
    model.summary()
    assert "body (Sequential)  (None, 4)" in capsys.readouterr().out
    body.add(Dense(5))
    model(np.ones((1, 2)))
    model.summary()
    assert "body (Sequential)  (None, 5)" in capsys.readouterr().out


def test_summary_takes_a_print_fn():
    lines = []
    model = Sequential([Input(shape=(2,)), Dense(1)])
    model.summary(print_fn=lines.append)
    assert any("Total params: 3" in line for line in lines)


def test_functional_summary_counts_a_shared_layer_once(capsys):
    inputs = Input(shape=(4,))
    shared = Dense(4, name="shared_in_summary")
    Model(inputs, shared(shared(inputs))).summary()
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.startswith("shared_in_summary")]
    assert len(rows) == 1 and "Total params: 20" in out  # (its name is in "Connected to" too)


def test_models_are_exported_at_the_top_level():
    assert minikeras.Model is Model and minikeras.Sequential is Sequential
    assert minikeras.Input is Input


def test_functional_construction_dry_run_changes_no_state():
    from minikeras.layers import BatchNormalization

    norm = BatchNormalization()
    inputs = minikeras.Input(shape=(3,))
    norm(inputs, training=True)  # the node keeps training=True for real calls
    np.testing.assert_array_equal(norm.moving_variance.numpy(), np.ones(3, "float32"))
    np.testing.assert_array_equal(norm.moving_mean.numpy(), np.zeros(3, "float32"))


def _with_an_unused_input(api):
    a, unused = api.Input((2,), name="a"), api.Input((3,), name="unused")
    b = api.Input((2,), name="b")
    hidden = api.layers.Dense(2, name="h")(a)
    return api.Model([a, unused, b], api.layers.Add(name="add")([hidden, b]))


def test_an_input_the_outputs_do_not_use_is_still_among_the_layers_as_in_keras():
    model = _with_an_unused_input(minikeras)
    # Keras: by decreasing depth, an unused Input at depth 0, first there.
    assert [layer.name for layer in model.layers] == ["a", "h", "b", "unused", "add"]
    assert model.get_layer("unused").output.shape == (None, 3)
    x = [np.ones((1, 2), "float32"), np.zeros((1, 3), "float32"), np.ones((1, 2), "float32")]
    assert model.predict(x, verbose=0).shape == (1, 2)


def test_an_unused_inputs_place_among_the_layers_is_kerass():
    keras = pytest.importorskip("keras")
    assert [layer.name for layer in _with_an_unused_input(minikeras).layers] == [
        layer.name for layer in _with_an_unused_input(keras).layers
    ]
