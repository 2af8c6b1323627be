"""The order Keras 3 gives a functional model's layers, and so its trainable variables.

A `.keras` file lists the optimizer's slots by position (`optimizer/vars/<i>`),
in the order of the model's `trainable_variables` as Keras builds the model.
For a functional model Keras orders the layers by depth (from the outputs, the
deepest first), and layers of one depth by when a walk back from the outputs
first met them (`keras/src/ops/function.py`, `map_graph`). minikeras's
`trainable_weights` follow the same order (`minikeras.layers.tracking`); an
optimizer's own list may not (one built on a list in another order), so the
slots are written, and read, by the model's.
"""

from minikeras import tree

__all__ = ["keras_layer_order", "trainable_order"]


def keras_layer_order(model):
    """The layers of a functional `model` in the order Keras 3 lists them (`model.layers`).

    Args:
        model: a functional minikeras `Model` (`model._nodes` recorded).

    Returns:
        A list of layers, or None for a model that is not functional.

    Example:
        >>> a, b = mk.Input((2,), name="a"), mk.Input((2,), name="b")
        >>> short = mk.layers.Dense(2, name="short")(a)
        >>> deep = mk.layers.Dense(2, name="deep2")(mk.layers.Dense(2, name="deep1")(b))
        >>> model = mk.Model([a, b], mk.layers.Add(name="add")([short, deep]))
        >>> [layer.name for layer in mk.saving.keras_order.keras_layer_order(model)]
        ['deep1', 'short', 'deep2', 'add']
    """
    if getattr(model, "_inputs", None) is None or not getattr(model, "_nodes", None):
        return None
    inputs = {id(t) for t in tree.flatten(model._inputs)}
    first_met, finished, decreasing_depth = {}, set(), []

    def walk(tensor):  # Keras's _build_map_helper: pre-order index, post-order nodes
        node = getattr(tensor, "node", None)
        if id(tensor) in inputs or node is None or id(node) in finished:
            return
        first_met.setdefault(id(node.layer), len(first_met))
        for argument in node.input_tensors():
            walk(argument)
        finished.add(id(node))
        decreasing_depth.append(node)

    for output in tree.flatten(model._outputs):
        walk(output)
    node_depth, layer_depth, layers = {}, {}, {}
    for node in reversed(decreasing_depth):
        depth = max(node_depth.setdefault(id(node), 0), layer_depth.get(id(node.layer), 0))
        layer_depth[id(node.layer)] = node_depth[id(node)] = depth
        layers[id(node.layer)] = node.layer
        for argument in node.input_tensors():
            parent = getattr(argument, "node", None)
            if parent is not None and id(argument) not in inputs:
                node_depth[id(parent)] = max(depth + 1, node_depth.get(id(parent), 0))
    return sorted(
        layers.values(), key=lambda layer: (-layer_depth[id(layer)], first_met[id(layer)])
    )


def trainable_order(model, variables):
    """Positions in `variables` (an optimizer's) of Keras's `model.trainable_variables`.

    Args:
        model: the model the optimizer trains.
        variables: the optimizer's variables, in its own order.

    Returns:
        A list of indices into `variables`, in Keras's order (the model's
        `trainable_weights`); `range(len(variables))` when the two lists do not
        hold the same variables.

    Example:
        >>> model = mk.Sequential([mk.Input((2,)), mk.layers.Dense(1)])
        >>> mk.saving.keras_order.trainable_order(model, model.trainable_weights)
        [0, 1]
    """
    own = list(range(len(variables)))
    position = {id(variable): index for index, variable in enumerate(variables)}
    order = [position.get(id(w), -1) for w in model.trainable_weights]
    return order if sorted(order) == own else own
