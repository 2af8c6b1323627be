"""`model_to_dot` and `plot_model`: a model's layer graph for Graphviz, as Keras 3 draws it.

Each layer is a box (its name and class, and on request its activation,
input and output shapes, output dtype and whether it trains); each edge
goes from the layer that made a tensor to the layer that takes it. A
Sequential model is a chain, a functional model its graph (its `Input`s
included), a subclassed model one box, since its `call` is Python that no
graph describes. With `expand_nested=True` a model inside a Sequential or
functional model is drawn as a dashed cluster of its own layers, and the
edges go to the layers inside.

Both need pydot (`pip install pydot`, or minikeras's `visualization`
extra); `plot_model` also needs Graphviz's `dot` program to draw the file.
As in Keras, a missing one is an `ImportError` saying what to install.
`mk.utils.model_to_dot` and `mk.utils.plot_model` are these functions.
"""

import html
import os

from minikeras import tree
from minikeras.layers.inputs import input_layer_of
from minikeras.layers.layer import Layer
from minikeras.models.graph_order import keras_class_name
from minikeras.models.model import Model
from minikeras.models.sequential import Sequential

__all__ = ["model_to_dot", "plot_model"]

_DRAWN = (
    "show_shapes", "show_dtype", "show_layer_names", "show_layer_activations", "show_trainable",
)  # fmt: skip


def _pydot(where):
    try:
        import pydot
    except ImportError:
        raise ImportError(
            f"You must install pydot (`pip install pydot`, or minikeras's `visualization` "
            f"extra) for {where} to work."
        ) from None
    return pydot


def _has_graphviz(pydot):
    """Whether Graphviz's `dot` program runs (pydot calls it to draw a file)."""
    failures = (OSError, getattr(pydot, "PydotException", OSError))  # (older pydot lacks it)
    try:
        pydot.Dot().create(format="svg")
    except failures:
        return False
    return True


def _is_graph(model):
    """Whether `model` has a layer graph (Sequential, functional), not only Python."""
    return isinstance(model, Sequential) or (
        isinstance(model, Model) and getattr(model, "_inputs", None) is not None
    )


def _shape_text(shape):
    if shape is None:
        return "?"
    if isinstance(shape, dict):
        return ", ".join(f"{key}: {value}" for key, value in shape.items())
    return str(shape)


def _tensor_attribute(layer, what, attribute):
    """`layer.input.shape` (or `.output`, `.dtype`), as a structure; None when ambiguous."""
    try:
        return tree.map_structure(lambda t: getattr(t, attribute), getattr(layer, what))
    except (ValueError, AttributeError):  # (a layer called several times, or never)
        return None


def _activation_name(activation):
    return (
        getattr(activation, "__name__", None)
        or getattr(activation, "name", None)
        or str(activation)
    )


def _label(layer, drawn):
    """The box of one layer: a Graphviz HTML-like table."""
    class_name = keras_class_name(layer)
    title = (
        f"<b>{html.escape(layer.name)}</b> ({class_name})"
        if drawn["show_layer_names"]
        else (f"<b>{class_name}</b>")
    )
    rows = [f'<font point-size="16" color="white">{title}</font>']
    activation = getattr(layer, "activation", None)
    if drawn["show_layer_activations"] and activation is not None:
        name = html.escape(_activation_name(activation))
        rows.append(f'<font point-size="14">Activation: <b>{name}</b></font>')
    cells = []
    if drawn["show_shapes"]:
        if class_name != "InputLayer":
            shape = _shape_text(_tensor_attribute(layer, "input", "shape"))
            cells.append(("white", f"Input shape: <b>{html.escape(shape)}</b>"))
        shape = _shape_text(_tensor_attribute(layer, "output", "shape"))
        cells.append(("white", f"Output shape: <b>{html.escape(shape)}</b>"))
    if drawn["show_dtype"]:
        dtype = _tensor_attribute(layer, "output", "dtype")
        cells.append(("white", f"Output dtype: <b>{html.escape(str(dtype or '?'))}</b>"))
    if drawn["show_trainable"] and layer.weights:
        cells.append(
            ("forestgreen", '<font color="white"><b>Trainable</b></font>')
            if layer.trainable
            else ("firebrick", '<font color="white"><b>Non-trainable</b></font>')
        )
    span = max(1, len(cells))
    table = ['<<table border="0" cellborder="1" bgcolor="black" cellpadding="10">']
    table.append(f'<tr><td colspan="{span}" bgcolor="black">{rows[0]}</td></tr>')
    table += [f'<tr><td colspan="{span}" bgcolor="white">{row}</td></tr>' for row in rows[1:]]
    if cells:
        row = "".join(
            f'<td bgcolor="{color}"><font point-size="14">{text}</font></td>'
            for color, text in cells
        )
        table.append(f"<tr>{row}</tr>")
    table.append("</table>>")
    return "".join(table)


def _node_layers(model):
    """The layers drawn as boxes, in order: a functional model's `Input`s first."""
    if isinstance(model, Sequential) or getattr(model, "_inputs", None) is None:
        return list(model.layers)
    return list(model.operations)


def _producers(model):
    """`{id(tensor): (layer, output index)}` for the symbolic tensors of a functional model."""
    found = {}
    for tensor in tree.flatten(model._inputs):
        found[id(tensor)] = (input_layer_of(tensor), 0)
    for node in model._nodes:
        for index, tensor in enumerate(tree.flatten(node.outputs)):
            found[id(tensor)] = (node.layer, index)
    return found


def _last_layer(layer, index):
    """The layer inside a drawn-out model that makes its `index`-th output."""
    while _is_graph(layer):
        if isinstance(layer, Sequential) and getattr(layer, "_inputs", None) is None:
            layer, index = layer.layers[-1], 0
            continue
        outputs = tree.flatten(layer._outputs)
        layer, index = _producers(layer)[id(outputs[index])]
    return layer


def _first_layer(layer, index):
    """The layer inside a drawn-out model that takes its `index`-th input."""
    while _is_graph(layer):
        if isinstance(layer, Sequential):
            if not layer.layers:
                break
            layer, index = layer.layers[0], 0
            continue
        layer = input_layer_of(tree.flatten(layer._inputs)[index])
    return layer


def _edges(model, expand_nested):
    """`(source layer, destination layer)` pairs, each once, in the graph's order."""
    pairs = []
    if isinstance(model, Sequential):
        layers = model.layers
        pairs = list(zip(layers[:-1], layers[1:]))
    elif _is_graph(model):
        producers = _producers(model)
        for node in model._nodes:
            given = tree.flatten((node.inputs, node.args, node.kwargs))
            inputs = [t for t in given if id(t) in producers]
            for position, tensor in enumerate(inputs):
                source, index = producers[id(tensor)]
                destination = node.layer
                if expand_nested:
                    source = _last_layer(source, index)
                    destination = _first_layer(destination, position)
                pairs.append((source, destination))
    if isinstance(model, Sequential) and expand_nested:
        pairs = [(_last_layer(a, 0), _first_layer(b, 0)) for a, b in pairs]
    seen, unique = set(), []
    for source, destination in pairs:
        key = (id(source), id(destination))
        if key not in seen:
            seen.add(key)
            unique.append((source, destination))
    return unique


def _add_boxes(pydot, dot, model, drawn, expand_nested):
    for layer in _node_layers(model):
        if expand_nested and _is_graph(layer):
            cluster = pydot.Cluster(graph_name=layer.name, style="dashed")  # ("cluster_<name>")
            cluster.set("label", layer.name)
            cluster.set("labeljust", "l")
            _add_boxes(pydot, cluster, layer, drawn, expand_nested)
            dot.add_subgraph(cluster)
        else:
            node = pydot.Node(str(id(layer)), label=_label(layer, drawn))
            for key, value in (("fontname", "Helvetica"), ("border", "0"), ("margin", "0")):
                node.set(key, value)
            dot.add_node(node)
    for source, destination in _edges(model, expand_nested):
        edge = pydot.Edge(str(id(source)), str(id(destination)))
        edge.set("penwidth", "2")
        dot.add_edge(edge)


def _check(model, where, kwargs):
    if kwargs.pop("layer_range", None) is not None:
        raise ValueError(f"{where}: the argument layer_range is not supported (nor in Keras 3)")
    if kwargs:
        raise ValueError(f"{where}: unrecognized keyword arguments {sorted(kwargs)}")
    if not isinstance(model, Layer):  # (a layer is drawn as one box, as Keras draws it)
        raise TypeError(f"{where}: expected a Model or a Layer, got {type(model).__name__}")
    if not model.built:
        raise ValueError(
            f"{where}: model '{model.name}' is not built yet; build it first with "
            "model.build(input_shape) or by calling it on a batch of data"
        )


def model_to_dot(
    model,
    show_shapes=False,
    show_dtype=False,
    show_layer_names=True,
    rankdir="TB",
    expand_nested=False,
    dpi=200,
    subgraph=False,
    show_layer_activations=False,
    show_trainable=False,
    splines="ortho",
    **kwargs,
):
    """The model's layer graph as a `pydot.Dot` (see the module), as `keras.utils.model_to_dot`.

    Args:
        model: a built `Model` (or a built layer: one box).
        show_shapes: show each layer's input and output shapes.
        show_dtype: show each layer's output dtype.
        show_layer_names: show layer names (else only class names).
        rankdir: Graphviz's direction, `"TB"` (top to bottom) or `"LR"`.
        expand_nested: draw nested Sequential and functional models as
            clusters of their layers.
        dpi: the resolution of a drawn image.
        subgraph: return a `pydot.Cluster` (for a nested model) instead.
        show_layer_activations: show the activation of layers that have one.
        show_trainable: show whether each layer with weights trains.
        splines: how Graphviz draws edges (`"ortho"`, `"curved"`, `"line"`, ...).
        **kwargs: none are accepted (Keras 3 refuses `layer_range` here too).

    Returns:
        A `pydot.Dot` (a `pydot.Cluster` with `subgraph=True`): one node per
        layer (named by `str(id(layer))`), one edge per connection.

    Raises:
        ImportError: if pydot is not installed.
        ValueError: if the model is not built, or for an unknown keyword.
        TypeError: if `model` is not a Model or a Layer.

    Example:
        >>> import importlib.util
        >>> model = mk.Sequential([mk.Input((3,)), mk.layers.Dense(2), mk.layers.Dense(1)])
        >>> if importlib.util.find_spec("pydot"):
        ...     dot = mk.utils.model_to_dot(model)
        ...     boxes = [node for node in dot.get_nodes() if node.get_name() != "node"]
        ...     assert len(boxes) == 2 and len(dot.get_edges()) == 1  # ("node": the defaults)
    """
    _check(model, "model_to_dot", kwargs)
    pydot = _pydot("model_to_dot")
    if subgraph:
        dot = pydot.Cluster(graph_name=model.name, style="dashed")
        dot.set("label", model.name)
        dot.set("labeljust", "l")
    else:
        dot = pydot.Dot()
        for key, value in (("rankdir", rankdir), ("concentrate", True), ("dpi", dpi)):
            dot.set(key, value)
        dot.set("splines", splines)
        dot.set_node_defaults(shape="record")
    drawn = dict(zip(_DRAWN, (show_shapes, show_dtype, show_layer_names)))
    drawn.update(show_layer_activations=show_layer_activations, show_trainable=show_trainable)
    if not _is_graph(model):  # a subclassed model: its call is Python, one box
        node = pydot.Node(str(id(model)), label=_label(model, drawn))
        dot.add_node(node)
        return dot
    _add_boxes(pydot, dot, model, drawn, expand_nested)
    return dot


def plot_model(
    model,
    to_file="model.png",
    show_shapes=False,
    show_dtype=False,
    show_layer_names=False,
    rankdir="TB",
    expand_nested=False,
    dpi=200,
    show_layer_activations=False,
    show_trainable=False,
    splines="ortho",
    **kwargs,
):
    """Draws the model's layer graph into an image file, as `keras.utils.plot_model`.

    The file's extension picks the format Graphviz writes (`png` when there
    is none; `svg`, `pdf`, `dot`...). As in Keras, `show_layer_names`
    defaults to False here (True in `model_to_dot`).

    Args:
        model: a built `Model`.
        to_file: the image's path.
        show_shapes: show each layer's input and output shapes.
        show_dtype: show each layer's output dtype.
        show_layer_names: show layer names (else only class names).
        rankdir: `"TB"` (top to bottom) or `"LR"`.
        expand_nested: draw nested models as clusters of their layers.
        dpi: the resolution.
        show_layer_activations: show the activation of layers that have one.
        show_trainable: show whether each layer with weights trains.
        splines: how Graphviz draws edges.
        **kwargs: none are accepted.

    Returns:
        An `IPython.display.Image` of the file when IPython is installed
        (and the format is not pdf), else None.

    Raises:
        ImportError: if pydot or Graphviz's `dot` program is missing.
        ValueError: if the model is not built, or for an unknown keyword.

    Example:
        >>> import importlib.util, os, tempfile
        >>> model = mk.Sequential([mk.Input((3,)), mk.layers.Dense(2)])
        >>> path = os.path.join(tempfile.mkdtemp(), "model.png")
        >>> try:
        ...     _ = mk.utils.plot_model(model, path, show_shapes=True)
        ... except ImportError as error:  # (no pydot or no Graphviz here)
        ...     assert "install" in str(error)
        ... else:
        ...     assert os.path.getsize(path) > 0
    """
    _check(model, "plot_model", kwargs)
    pydot = _pydot("plot_model")
    if not _has_graphviz(pydot):
        raise ImportError(
            "You must install Graphviz (its `dot` program; see "
            "https://graphviz.gitlab.io/download/) for plot_model to work."
        )
    dot = model_to_dot(
        model,
        show_shapes=show_shapes,
        show_dtype=show_dtype,
        show_layer_names=show_layer_names,
        rankdir=rankdir,
        expand_nested=expand_nested,
        dpi=dpi,
        show_layer_activations=show_layer_activations,
        show_trainable=show_trainable,
        splines=splines,
    )
    to_file = str(to_file)
    extension = os.path.splitext(to_file)[1][1:] or "png"
    dot.write(to_file, format=extension)
    if extension != "pdf":
        try:
            from IPython import display
        except ImportError:
            return None
        return display.Image(filename=to_file)
    return None
