"""The order Keras lists a functional graph's layers in: by depth, then by first reach.

`functional_order` sorts a functional model's layers and Inputs as Keras's
`model.layers` does; `graph_operations` gives them as `Model.operations`
(an `InputLayer` for each Input), computed once per model. Config entries,
weight containers and the order of the model's weights follow it.
"""

from minikeras.layers.input_layer import SymbolicTensor
from minikeras.layers.inputs import input_layer_of
from minikeras.tree import flatten

__all__ = ["functional_order", "graph_operations", "keras_class_name"]


def functional_order(model):
    """A functional model's layers and Inputs in the order Keras's `model.layers` gives.

    Keras sorts the graph's operations by decreasing depth (Inputs deepest),
    and within one depth by the order a depth-first walk from the outputs
    first reaches them; an Input the outputs do not use comes at depth 0,
    first there. Config entries and weight containers follow it.

    Args:
        model: a functional minikeras model.

    Returns:
        A list whose items are layers, or `SymbolicTensor`s for the Inputs.

    Example:
        >>> a, b = mk.Input((4,), name="a"), mk.Input((3,), name="b")
        >>> dense = mk.layers.Dense(5, name="d")
        >>> model = mk.Model([a, b], mk.layers.concatenate([dense(a), b], name="c"))
        >>> [getattr(item, "name", None) for item in mk.models.graph_order.functional_order(model)]
        ['a', 'd', 'b', 'c']
    """
    inputs = flatten(model._inputs)
    input_ids = {id(t) for t in inputs}
    index = {}  # id(operation) -> (first-reached order, operation): an Input stands for its own
    post_order, finished = [], set()  # the calls (and Inputs) from the inputs to the outputs

    def visit(tensor):
        if id(tensor) in input_ids:
            if id(tensor) not in finished:
                index.setdefault(id(tensor), (len(index), tensor))
                finished.add(id(tensor))
                post_order.append((tensor, tensor, []))
            return
        node = tensor.node
        if id(node) in finished:
            return
        index.setdefault(id(node.layer), (len(index), node.layer))
        parents = node.input_tensors()
        for parent in parents:
            visit(parent)
        finished.add(id(node))
        post_order.append((node, node.layer, parents))

    for tensor in flatten(model._outputs):
        visit(tensor)
    # A call's depth: 0 at the outputs, one more than the deepest call it feeds.
    node_depth, operation_depth = {}, {}
    for node, operation, parents in reversed(post_order):
        depth = max(node_depth.setdefault(id(node), 0), operation_depth.get(id(operation), 0))
        operation_depth[id(operation)] = node_depth[id(node)] = depth
        for parent in parents:
            key = id(parent) if id(parent) in input_ids else id(parent.node)
            node_depth[key] = max(depth + 1, node_depth.get(key, 0))
    for tensor in inputs:  # an Input the outputs do not use: Keras lists it all the same,
        if id(tensor) not in index:  # at depth 0, first there (its traversal index is -1)
            index[id(tensor)] = (-1, tensor)
            operation_depth[id(tensor)] = 0
    ordered = sorted(index.values(), key=lambda pair: (-operation_depth[id(pair[1])], pair[0]))
    return [operation for _, operation in ordered]


def graph_operations(model):
    """A functional model's `operations`, as Keras lists them: `InputLayer`s and calls in order.

    Computed once per model (its graph does not change) from `functional_order`.

    Args:
        model: a functional minikeras model.

    Returns:
        A new list of layers: an `InputLayer` for each Input, then the others
        in Keras's order (operation nodes included).

    Example:
        >>> x = mk.Input((3,), name="x")
        >>> model = mk.Model(x, mk.layers.Dense(2, name="d")(x))
        >>> [layer.name for layer in mk.models.graph_order.graph_operations(model)]
        ['x', 'd']
    """
    found = model.__dict__.get("_graph_operations")
    if found is None:
        found = [
            input_layer_of(item) if isinstance(item, SymbolicTensor) else item
            for item in functional_order(model)
        ]
        object.__setattr__(model, "_graph_operations", found)
    return list(found)


def keras_class_name(layer):
    """The class a layer is shown as in Keras: `Functional` for a `Model(inputs, outputs)`.

    Args:
        layer: a layer or model.

    Returns:
        A class name.

    Example:
        >>> x = mk.Input((3,))
        >>> model = mk.Model(x, mk.layers.Dense(2)(x))
        >>> keras_class_name = mk.models.graph_order.keras_class_name
        >>> keras_class_name(model), keras_class_name(model.layers[1])
        ('Functional', 'Dense')
    """
    from minikeras.models.model import Model

    if type(layer) is Model and getattr(layer, "_inputs", None) is not None:
        return "Functional"  # (Keras's class of a model built from inputs and outputs)
    return type(layer).__name__
