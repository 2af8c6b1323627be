"""The model API Keras code touches: Dot and the lowercase merge helpers, inputs/outputs,
get_layer, Sequential built from shapes alone."""

import numpy as np
import pytest
from finite_differences import check_gradients

import minikeras as mk
from minikeras import layers

# ---------------------------------------------------------------- Dot and helpers


def test_dot_of_two_vectors_per_sample_by_hand():
    x = np.array([[1.0, 2.0, 3.0], [0.0, 1.0, 0.0]])
    y = np.array([[4.0, 5.0, 6.0], [7.0, 8.0, 9.0]])
    out = layers.Dot(axes=1)([x, y]).numpy()
    np.testing.assert_allclose(out, [[32.0], [8.0]])  # 4 + 10 + 18; 8
    assert out.dtype == np.float32


def test_dot_follows_batch_dot_shapes_against_numpy():
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((2, 20, 3)), rng.standard_normal((2, 30, 20))
    out = layers.Dot(axes=(1, 2))([x, y]).numpy()
    assert out.shape == (2, 3, 30)
    np.testing.assert_allclose(out, np.einsum("bkc,bjk->bcj", x, y), rtol=1e-5)
    assert layers.Dot(axes=(1, 2))([mk.Input((20, 3)), mk.Input((30, 20))]).shape == (
        None,
        3,
        30,
    )


def test_dot_normalize_gives_the_cosine_similarity():
    x = np.array([[3.0, 4.0], [1.0, 0.0]])
    y = np.array([[4.0, 3.0], [0.0, 2.0]])
    out = layers.Dot(axes=-1, normalize=True)([x, y]).numpy()
    np.testing.assert_allclose(out, [[24.0 / 25.0], [0.0]], rtol=1e-6)


def test_dot_gradients_match_finite_differences():
    rng = np.random.default_rng(1)
    check_gradients(
        lambda x, y: layers.Dot(axes=(2, 1), dtype="float64")([x, y]),
        [rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 4, 5))],
    )
    check_gradients(
        lambda x, y: layers.Dot(axes=1, normalize=True, dtype="float64")([x, y]),
        [rng.standard_normal((3, 4)), rng.standard_normal((3, 4))],
    )


def test_dot_errors_name_the_layer_and_shapes():
    with pytest.raises(ValueError, match=r"Dot 'd'.*\(4\).*\(5\).*\(None, 4\) and \(None, 5\)"):
        layers.Dot(1, name="d")([mk.Input((4,)), mk.Input((5,))])
    with pytest.raises(ValueError, match="non-batch axis"):
        layers.Dot(0)([np.ones((2, 3)), np.ones((2, 3))])
    with pytest.raises(ValueError, match="exactly 2 inputs"):
        layers.Dot(1)([np.ones((2, 3))] * 3)
    with pytest.raises(ValueError, match="an int or a pair"):
        layers.Dot((1, 2, 3))


def test_dot_config_round_trips():
    layer = layers.Dot((1, 2), normalize=True, name="cos")
    copy = layers.Dot.from_config(layer.get_config())
    assert (copy.axes, copy.normalize, copy.name) == ((1, 2), True, "cos")


@pytest.mark.parametrize(
    "helper, expected",
    [
        (layers.add, lambda a, b: a + b),
        (layers.subtract, lambda a, b: a - b),
        (layers.multiply, lambda a, b: a * b),
        (layers.average, lambda a, b: (a + b) / 2),
        (layers.maximum, np.maximum),
        (layers.minimum, np.minimum),
        (layers.concatenate, lambda a, b: np.concatenate([a, b], axis=-1)),
    ],
)
def test_lowercase_helpers_match_their_layers_in_functional_models(helper, expected):
    a, b = mk.Input((3,)), mk.Input((3,))
    model = mk.Model([a, b], helper([a, b], name="merged"))
    assert model.get_layer("merged").name == "merged"
    x, y = np.array([[1.0, -2.0, 3.0]]), np.array([[0.5, 4.0, -1.0]])
    np.testing.assert_allclose(model([x, y]).numpy(), expected(x, y), rtol=1e-6)


def test_concatenate_helper_takes_the_axis():
    out = layers.concatenate([np.ones((2, 1, 3)), np.zeros((2, 2, 3))], axis=1)
    assert out.shape == (2, 3, 3)


# ------------------------------------------------------------------- model API


def test_functional_inputs_outputs_and_shapes():
    a, b = mk.Input((3,), name="a"), mk.Input((None, 2), name="b")
    x = layers.Dense(4, name="d")(a)
    y = layers.GlobalAveragePooling1D()(b)
    model = mk.Model(inputs=[a, b], outputs=[x, y])
    assert model.inputs == [a, b] and model.outputs == [x, y]
    assert model.input == [a, b] and model.output == [x, y]
    assert model.input_shape == [(None, 3), (None, None, 2)]
    assert model.output_shape == [(None, 4), (None, 2)]
    single = mk.Model(a, x)
    assert single.input is a and single.output is x and single.output_shape == (None, 4)
    assert single.inputs == [a]


def test_default_model_names_follow_keras():
    mk.utils.clear_session()
    x = mk.Input((3,))
    first, second = mk.Model(x, layers.Dense(2)(x)), mk.Model(inputs=x, outputs=x)

    class TwoTower(mk.Model):
        def call(self, inputs):
            return inputs

    assert (first.name, second.name) == ("functional", "functional_1")  # Keras's Functional
    assert TwoTower().name == "two_tower" and mk.Sequential().name == "sequential"
    assert mk.Model(x, x, name="mine").name == "mine"


class _PositionalEmbedding(layers.Layer):
    """Token plus position embeddings, the positions' table `sequence_length` rows long."""

    def __init__(self, sequence_length, vocabulary, width):
        super().__init__()
        self.tokens = layers.Embedding(vocabulary, width)
        self.positions = layers.Embedding(sequence_length, width)

    def call(self, inputs):
        steps = mk.ops.arange(0, mk.ops.shape(inputs)[-1])
        return self.tokens(inputs) + self.positions(steps)


def test_a_custom_layer_indexing_by_position_takes_an_unknown_length():
    # Keras traces a layer without values; ours runs it, on placeholder lengths short
    # enough for a table of 6 positions once the long ones (83, 89) overrun it.
    tokens = mk.Input((None,), dtype="int32")
    embedding = _PositionalEmbedding(6, 20, 4)
    vectors = embedding(tokens)
    assert vectors.shape == (None, None, 4)
    model = mk.Model(tokens, vectors)
    ids = np.array([[3, 1, 4, 1, 5], [9, 2, 6, 0, 0]])
    expected = embedding.tokens.embeddings.numpy()[ids] + embedding.positions.embeddings.numpy()[:5]
    np.testing.assert_allclose(model(ids).numpy(), expected, rtol=1e-6)
    with pytest.raises(ValueError, match="expects ids in"):
        model(np.zeros((1, 7), "int32"))  # longer than the table: an error at run time


def test_functional_model_takes_a_dict_keyed_by_input_name():
    a, b = mk.Input((3,), name="first"), mk.Input((3,), name="second")
    model = mk.Model([a, b], layers.subtract([a, b]))
    out = model({"second": np.ones((1, 3)), "first": np.full((1, 3), 5.0)}).numpy()
    np.testing.assert_allclose(out, np.full((1, 3), 4.0))


def test_get_layer_by_name_and_index_with_clear_errors():
    model = mk.Sequential(
        [mk.Input((3,)), layers.Dense(4, name="hidden"), layers.Dense(2, name="out")]
    )
    assert model.get_layer("out") is model.layers[1]
    assert model.get_layer(index=0).name == "hidden"
    assert model.get_layer(index=-1).name == "out"
    with pytest.raises(ValueError, match=r"no layer named 'missing'.*\['hidden', 'out'\]"):
        model.get_layer("missing")
    with pytest.raises(ValueError, match="no layer at index 5; the model has 2 layers"):
        model.get_layer(index=5)
    with pytest.raises(ValueError, match="not neither"):
        model.get_layer()
    with pytest.raises(ValueError, match="not both"):
        model.get_layer("out", 1)


def test_a_subclassed_model_has_no_graph_attributes_but_lists_its_layers():
    class Net(mk.Model):
        def __init__(self):
            super().__init__()
            self.hidden = layers.Dense(3, name="h")
            self.head = layers.Dense(1, name="o")

        def call(self, inputs):
            return self.head(self.hidden(inputs))

    net = Net()
    net(np.ones((2, 4)))
    assert [layer.name for layer in net.layers] == ["h", "o"]
    assert net.get_layer("o") is net.head
    with pytest.raises(AttributeError, match="has no `output_shape`"):
        _ = net.output_shape
    assert not hasattr(net, "inputs")


def test_sequential_add_builds_from_shapes_without_running_layers(monkeypatch):
    calls = []
    original = layers.Dense.call
    monkeypatch.setattr(
        layers.Dense, "call", lambda self, inputs: calls.append(self) or original(self, inputs)
    )
    model = mk.Sequential([mk.Input((8,))])
    for _ in range(10):
        model.add(layers.Dense(8))
    assert calls == []  # Keras builds each added layer once, from shapes alone
    assert model.built and model.count_params() == 10 * (8 * 8 + 8)
    assert model.output_shape == (None, 8)
    assert model(np.ones((2, 8))).shape == (2, 8) and len(calls) == 10


def test_sequential_deferred_build_keeps_batch_none_and_the_layers_output():
    model = mk.Sequential([layers.Dense(4), layers.Dense(2)])
    assert not model.built
    model(np.ones((5, 3)))
    assert model.input_shape == (None, 3) and model.output_shape == (None, 2)
    assert model.layers[0].output.shape == (None, 4)
    explicit = mk.Sequential([layers.Dense(4)])
    explicit.build((None, 3))
    assert explicit.built and explicit.output_shape == (None, 4)


def test_sequential_pop_and_add_keep_the_shapes():
    model = mk.Sequential([mk.Input((4,)), layers.Dense(3), layers.Dense(2)])
    popped = model.pop()
    assert popped.units == 2 and model.output_shape == (None, 3)
    model.add(layers.Dense(5))
    assert model.output_shape == (None, 5) and model(np.ones((1, 4))).shape == (1, 5)
    with pytest.raises(ValueError, match="an Input must come first"):
        model.add(mk.Input((4,)))


def test_sequential_add_of_a_misfit_layer_names_it_and_leaves_the_stack():
    model = mk.Sequential([mk.Input((4, 4, 1)), layers.Flatten()])
    with pytest.raises(ValueError, match="Conv2D"):
        model.add(layers.Conv2D(2, 3))
    assert len(model.layers) == 1 and model.output_shape == (None, 16)


def test_nested_sequential_in_a_functional_model_reports_its_shape():
    inner = mk.Sequential([mk.Input((None, 8)), layers.Conv1D(4, 3)])
    x = mk.Input((10, 8))
    y = inner(x)
    assert y.shape == (None, 8, 4)  # the inner graph replayed for the known length
    model = mk.Model(x, layers.Flatten()(y))
    assert model.output_shape == (None, 32)
    assert model(np.ones((2, 10, 8))).shape == (2, 32)


# ------------------------------------------------------- to_json and clone_model


def _mlp():
    return mk.Sequential(
        [mk.Input((4,)), layers.Dense(8, activation="relu", name="h"), layers.Dense(3, name="o")]
    )


def _functional():
    a, b = mk.Input((4,), name="a"), mk.Input((None, 2), name="b")
    shared = layers.Dense(3, name="shared")
    pooled = layers.GlobalAveragePooling1D()(b)
    merged = layers.concatenate([shared(a), shared(layers.Dense(4)(pooled))])
    return mk.Model([a, b], layers.Dense(2, activation="softmax")(merged), name="two_inputs")


@pytest.mark.parametrize("make", [_mlp, _functional])
def test_to_json_and_model_from_json_give_the_architecture(make):
    model = make()
    copy = mk.models.model_from_json(model.to_json())
    assert type(copy) is type(model) and copy.name == model.name
    assert [type(layer).__name__ for layer in copy.layers] == [
        type(layer).__name__ for layer in model.layers
    ]
    assert copy.output_shape == model.output_shape
    assert [w.shape for w in copy.weights] == [w.shape for w in model.weights]
    copy.set_weights(model.get_weights())
    data = [np.ones((2, 4)), np.ones((2, 5, 2))] if len(model.inputs) == 2 else np.ones((2, 4))
    np.testing.assert_allclose(copy(data).numpy(), model(data).numpy(), rtol=1e-6)


def test_model_from_json_refuses_text_that_is_not_json():
    with pytest.raises(ValueError, match="not JSON"):
        mk.models.model_from_json("{not json")


@pytest.mark.parametrize("make", [_mlp, _functional])
def test_clone_model_has_the_architecture_and_new_weights(make):
    mk.utils.set_random_seed(0)
    model = make()
    clone = mk.models.clone_model(model)
    assert all(a is not b for a, b in zip(clone.layers, model.layers))
    assert [layer.name for layer in clone.layers] == [layer.name for layer in model.layers]
    assert [w.shape for w in clone.weights] == [w.shape for w in model.weights]
    kernels = [w for w in model.weights if w.name == "kernel"]
    new_kernels = [w for w in clone.weights if w.name == "kernel"]
    assert not any(np.array_equal(a.numpy(), b.numpy()) for a, b in zip(kernels, new_kernels))
    clone.set_weights(model.get_weights())
    data = [np.ones((2, 4)), np.ones((2, 5, 2))] if len(model.inputs) == 2 else np.ones((2, 4))
    np.testing.assert_allclose(clone(data).numpy(), model(data).numpy(), rtol=1e-6)


def test_clone_model_keeps_a_shared_layer_shared():
    clone = mk.models.clone_model(_functional())
    shared = clone.get_layer("shared")
    assert len(shared._inbound_nodes) == 2 and len(clone.weights) == len(_functional().weights)


def test_clone_function_and_call_function_change_the_copy():
    model = _mlp()

    def wider(layer):
        config = layer.get_config()
        if layer.name == "h":
            config["units"] = 16
        return type(layer).from_config(config)

    clone = mk.models.clone_model(model, clone_function=wider)
    assert clone.get_layer("h").units == 16 and clone.output_shape == (None, 3)
    x = mk.Input((4,))
    functional = mk.Model(x, layers.Dense(2, name="d")(x))
    calls = []

    def recording(layer, *args, **kwargs):
        calls.append(layer.name)
        return layer(*args, **kwargs)

    mk.models.clone_model(functional, call_function=recording)
    assert calls == ["d"]
    with pytest.raises(ValueError, match="functional models only"):
        mk.models.clone_model(model, call_function=recording)


def test_clone_model_of_a_registered_subclassed_model_uses_its_config():
    @mk.saving.register_serializable(package="test_model_api")
    class Head(mk.Model):
        def __init__(self, units=2, **kwargs):
            super().__init__(**kwargs)
            self.units = units
            self.dense = layers.Dense(units)

        def call(self, inputs):
            return self.dense(inputs)

    clone = mk.models.clone_model(Head(units=5))
    assert isinstance(clone, Head) and clone.units == 5
    with pytest.raises(ValueError, match="subclassed model"):
        mk.models.clone_model(Head(), clone_function=lambda layer: layer)
