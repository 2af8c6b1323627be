"""`utils.model_to_dot` and `utils.plot_model`: the layer graph Keras 3 draws, through pydot.

Nodes are compared by the layers they stand for and edges by the pairs of
layers they join, against the graph written out by hand and, when Keras and
pydot are importable, against Keras's own `model_to_dot` of the same model.
"""

import os
import sys

import pytest

import minikeras as mk
from minikeras import layers
from minikeras.models import visualization

pydot = pytest.importorskip("pydot")


def _names(dot, model_layers):
    """`(node names, edge name pairs, {cluster: (node names, edge pairs)})` of a pydot graph."""
    by_id = {str(id(layer)): layer.name for layer in model_layers}

    def name(node_id):
        return by_id.get(node_id.strip('"'), node_id)

    def read(graph):
        nodes = sorted(name(n.get_name()) for n in graph.get_nodes() if n.get_name() != "node")
        edges = sorted((name(e.get_source()), name(e.get_destination())) for e in graph.get_edges())
        return nodes, edges

    nodes, edges = read(dot)
    return nodes, edges, {s.get_name(): read(s) for s in dot.get_subgraphs()}


def _branchy(api):
    """Two inputs, a shared-looking join, a nested Sequential and a second head."""
    a, b = api.Input((4,), name="a"), api.Input((3,), name="b")
    joined = api.layers.Concatenate(name="cat")([a, api.layers.Dense(1, name="pb")(b)])
    x = api.layers.Dense(5, activation="relu", name="shared")(joined)
    inner = api.Sequential(
        [api.Input((5,)), api.layers.Dense(2, name="i1"), api.layers.Dense(2, name="i2")],
        name="inner",
    )
    model = api.Model([a, b], [inner(x), api.layers.Dense(1, name="head")(x)])
    return model, [*model.layers, *inner.layers]


FLAT_EDGES = [("a", "cat"), ("b", "pb"), ("cat", "shared"), ("pb", "cat"), ("shared", "head")]


def test_a_functional_model_is_its_graph_with_the_nested_model_as_one_box():
    model, every = _branchy(mk)
    nodes, edges, clusters = _names(mk.utils.model_to_dot(model), every)
    assert nodes == ["a", "b", "cat", "head", "inner", "pb", "shared"]
    assert edges == sorted([*FLAT_EDGES, ("shared", "inner")])
    assert clusters == {}


def test_a_nested_functional_model_is_labelled_as_kerass_functional():
    inputs = mk.Input((3,))
    inner = mk.Model(inputs, layers.Dense(2)(inputs), name="inner")
    outer_inputs = mk.Input((3,))
    model = mk.Model(outer_inputs, inner(outer_inputs))
    assert "<b>inner</b> (Functional)" in _label(mk.utils.model_to_dot(model), inner)


def test_expand_nested_draws_the_inner_model_as_a_cluster_and_links_into_it():
    model, every = _branchy(mk)
    nodes, edges, clusters = _names(mk.utils.model_to_dot(model, expand_nested=True), every)
    assert nodes == ["a", "b", "cat", "head", "pb", "shared"]
    assert edges == sorted([*FLAT_EDGES, ("shared", "i1")])
    assert clusters == {"cluster_inner": (["i1", "i2"], [("i1", "i2")])}


def test_a_sequential_model_is_a_chain_and_its_nested_model_links_through():
    inner = mk.Sequential([layers.Dense(3, name="i1"), layers.Dense(3, name="i2")], name="inner")
    model = mk.Sequential(
        [mk.Input((2,)), layers.Dense(3, name="d1"), inner, layers.Dense(1, name="d2")]
    )
    every = [*model.layers, *inner.layers]
    nodes, edges, _ = _names(mk.utils.model_to_dot(model), every)
    assert nodes == ["d1", "d2", "inner"] and edges == [("d1", "inner"), ("inner", "d2")]
    _, edges, clusters = _names(mk.utils.model_to_dot(model, expand_nested=True), every)
    assert edges == [("d1", "i1"), ("i2", "d2")]
    assert clusters == {"cluster_inner": (["i1", "i2"], [("i1", "i2")])}


def test_a_subclassed_model_is_one_box():
    class Net(mk.Model):
        def __init__(self):
            super().__init__(name="net")
            self.body = layers.Dense(2)

        def call(self, inputs):
            return self.body(inputs)

    model = Net()
    model.build((None, 3))
    nodes, edges, _ = _names(mk.utils.model_to_dot(model), [model])
    assert nodes == ["net"] and edges == []


def _label(dot, layer):
    return next(n for n in dot.get_nodes() if n.get_name().strip('"') == str(id(layer))).get(
        "label"
    )


def test_labels_show_what_is_asked():
    inputs = mk.Input((3,), name="x")
    frozen = layers.Dense(4, activation="relu", name="frozen")
    frozen.trainable = False
    model = mk.Model(inputs, layers.Dense(2, name="out")(frozen(inputs)))
    plain = _label(mk.utils.model_to_dot(model), frozen)
    assert "<b>frozen</b> (Dense)" in plain and "shape" not in plain and "relu" not in plain
    full = _label(
        mk.utils.model_to_dot(
            model, show_shapes=True, show_dtype=True, show_layer_activations=True,
            show_trainable=True, show_layer_names=False,
        ),
        frozen,
    )  # fmt: skip
    assert "frozen" not in full.replace("Non-trainable", "") and "<b>Dense</b>" in full
    shown = ["Input shape: <b>(None, 3)</b>", "Output shape: <b>(None, 4)</b>"]
    shown += ["Output dtype: <b>float32</b>", "Activation: <b>relu</b>", "Non-trainable"]
    for text in shown:
        assert text in full, text
    input_label = _label(mk.utils.model_to_dot(model, show_shapes=True), model.layers[0])
    assert "Input shape" not in input_label and "Output shape: <b>(None, 3)</b>" in input_label


def test_bad_calls_are_refused_with_clear_errors(monkeypatch, tmp_path):
    unbuilt = mk.Sequential([layers.Dense(2)])
    with pytest.raises(ValueError, match="model_to_dot: model 'sequential.*' is not built"):
        mk.utils.model_to_dot(unbuilt)
    model = mk.Sequential([mk.Input((2,)), layers.Dense(1)])
    with pytest.raises(ValueError, match="layer_range is not supported"):
        mk.utils.model_to_dot(model, layer_range=["a", "b"])
    with pytest.raises(ValueError, match=r"unrecognized keyword arguments \['colour'\]"):
        mk.utils.plot_model(model, colour="red")
    with pytest.raises(TypeError, match="expected a Model or a Layer, got int"):
        mk.utils.model_to_dot(3)
    with pytest.raises(ValueError, match="'dense.*' is not built"):
        mk.utils.model_to_dot(layers.Dense(2))
    dense = layers.Dense(2, name="alone")
    dense.build((None, 3))
    nodes, edges, _ = _names(mk.utils.model_to_dot(dense), [dense])
    assert nodes == ["alone"] and edges == []  # (one box, as Keras draws a layer)
    monkeypatch.setitem(sys.modules, "pydot", None)  # (as if it were not installed)
    for function in (mk.utils.model_to_dot, mk.utils.plot_model):
        with pytest.raises(ImportError, match=r"install pydot \(`pip install pydot`"):
            function(model)


def test_plot_model_says_when_graphviz_is_missing_and_writes_nothing(monkeypatch, tmp_path):
    monkeypatch.setattr(visualization, "_has_graphviz", lambda pydot: False)
    model = mk.Sequential([mk.Input((2,)), layers.Dense(1)])
    with pytest.raises(ImportError, match="install Graphviz"):
        mk.utils.plot_model(model, tmp_path / "model.png")
    assert list(tmp_path.iterdir()) == []


def test_plot_model_draws_the_file_when_graphviz_is_there(tmp_path):
    if not visualization._has_graphviz(pydot):
        pytest.skip("the Graphviz program (dot) is not installed")
    model, _ = _branchy(mk)
    for name in ("model.png", "model.svg", "model"):
        mk.utils.plot_model(model, tmp_path / name, show_shapes=True, expand_nested=True)
        assert os.path.getsize(tmp_path / name) > 0


@pytest.mark.parametrize("expand_nested", [False, True])
def test_the_graph_is_kerass(expand_nested):
    os.environ.setdefault("KERAS_BACKEND", "jax")
    keras = pytest.importorskip("keras")
    ours, our_layers = _branchy(mk)
    theirs, their_layers = _branchy(keras)
    inner = theirs.get_layer("inner")
    their_layers += list(getattr(inner, "_functional", inner).operations)
    assert _names(mk.utils.model_to_dot(ours, expand_nested=expand_nested), our_layers) == _names(
        keras.utils.model_to_dot(theirs, expand_nested=expand_nested), their_layers
    )
