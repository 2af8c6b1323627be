"""Where Keras 3 keeps each variable in `model.weights.h5`, for minikeras models.

Keras addresses a variable by the path of objects that reach it, never by
its name: a model's own variables are in `vars/0`, `vars/1`...; a Sequential
or functional model's layers are in the container `layers`, each named after
its class (`dense`, `dense_1`, ...) in the order of the model's `layers`; a
layer's sub-layers are under the attribute that holds them (`lstm/cell`),
private attributes last, except in a subclassed model: Keras walks its
attributes in sorted order, and its `layers` property is one of them, so the
sub-layers at attributes that sort after `layers` (and at private ones) are
in the `layers` container, named by class in the order of `model.layers`
(those already placed count in the names); the optimizer's variables are `optimizer/vars/<i>`
(their order is in `keras_optimizer_layout`, re-exported here).
This module gives those paths for a minikeras model, so that a file written
here is read by Keras and a file written by Keras is read here.

Where a built-in minikeras layer keeps in one object what Keras splits into
sub-layers (MultiHeadAttention's four projections), the table `_SPLITS` says
which variables go where.
"""

import re

from minikeras.engine.variable import Variable
from minikeras.layers import tracking
from minikeras.layers.input_layer import SymbolicTensor
from minikeras.layers.layer import Layer
from minikeras.models.graph import functional_order
from minikeras.models.graph_order import keras_class_name
from minikeras.saving import keras_ops
from minikeras.saving.keras_optimizer_layout import optimizer_variables

__all__ = [
    "former_paths",
    "layer_groups",
    "older_path",
    "optimizer_variables",
    "snake_case",
    "unique_name",
    "variable_groups",
]


def snake_case(name):
    """Keras's `to_snake_case`: the container name of a layer class.

    Args:
        name: a class name.

    Returns:
        The snake_case name (`"MaxPooling2D"` -> `"max_pooling2d"`).

    Example:
        >>> (
        ...     mk.saving.keras_layout.snake_case("MaxPooling2D"),
        ...     mk.saving.keras_layout.snake_case("LSTM"),
        ... )
        ('max_pooling2d', 'lstm')
    """
    name = re.sub(r"\W+", "", name)
    name = re.sub("(.)([A-Z][a-z]+)", r"\1_\2", name)
    return re.sub("([a-z])([A-Z])", r"\1_\2", name).lower()


def unique_name(name, used):
    """`name`, then `name_1`, `name_2`... within one container (Keras's rule).

    Args:
        name: the wanted name.
        used: a dict of the names handed out so far in this container.

    Returns:
        The name to use.

    Example:
        >>> used = {}
        >>> (
        ...     mk.saving.keras_layout.unique_name("dense", used),
        ...     mk.saving.keras_layout.unique_name("dense", used),
        ... )
        ('dense', 'dense_1')
    """
    if name in used:
        used[name] += 1
        return f"{name}_{used[name]}"
    used[name] = 0
    return name


def _own_and_children(layer, sorted_walk=True):
    """The layer's own variables (in `weights` order) and its direct sub-layers by attribute.

    A sub-layer that several attributes hold is at the one that sorts first, where
    Keras's sorted walk meets it (the tracking walk names the first one set; files
    minikeras wrote before, `sorted_walk=False`, kept that one).
    """
    children, sub_weights = [], set()
    attributes = [(k, v) for k, v in vars(layer).items() if k not in layer._untracked_attributes]
    for path, owner, value in tracking.walk(layer):
        if owner is layer and isinstance(value, Layer):
            if sorted_walk and "[" not in path:
                names = [name for name, held in attributes if held is value]
                path = min(names, key=_name_key) if names else path
            children.append((path, value))
            sub_weights.update(id(w) for w in value.weights)
    own = [w for w in layer.weights if id(w) not in sub_weights]
    return own, children


def _attention(layer, own):
    """MultiHeadAttention's own variables split into Keras's four EinsumDense sub-layers.

    Keras keeps each projection's kernel and bias in an EinsumDense, shaped as
    minikeras's are ((features, heads, key_dim), ..., (heads, value_dim,
    features)), at the path of its public property (`query_dense`, ...; Keras
    before 3.3 had only `_query_dense`, which `older_path` gives). None when
    the layer holds sub-layers itself (the generic walk places them).
    """
    if not own:
        return None
    groups = []
    for part, prefix in (("query", "query"), ("key", "key"), ("value", "value"),
                         ("output", "attention_output")):  # fmt: skip
        found = []
        for kind in ("kernel", "bias"):
            names = {f"{prefix}_{kind}", f"{prefix}/{kind}", f"{part}_{kind}", f"{part}/{kind}"}
            attribute = getattr(layer, f"{part}_{kind}", None)
            match = [w for w in own if w is attribute]
            match = match or [
                w for w in own if w.name in names or any(w.path.endswith("/" + n) for n in names)
            ]
            found += match[:1]
        groups.append((f"{part}_dense/vars", found))
    return groups


def older_path(path):
    """Where a Keras release before 3.3 kept a group `layer_groups` names, or None.

    Args:
        path: a group's path, such as `"layers/multi_head_attention/query_dense/vars"`.

    Returns:
        The older path (`".../_query_dense/vars"`), or None if it had no other.

    Example:
        >>> mk.saving.keras_layout.older_path("layers/mha/key_dense/vars")
        'layers/mha/_key_dense/vars'
    """
    match = re.fullmatch(r"(.*/)?(query|key|value|output)_dense/vars", path)
    if match is None:
        return None
    return f"{match.group(1) or ''}_{match.group(2)}_dense/vars"


# Built-in layers that hold in one object what Keras splits into sub-layers.
_SPLITS = {
    "MultiHeadAttention": _attention,
}


def _is_subclassed_model(layer):
    from minikeras.models.model import Model

    return isinstance(layer, Model) and _graph_layers(layer) is None


def _layer_groups(layer, path, groups, visited, keras_layers=True):
    if id(layer) in visited:
        return
    visited.add(id(layer))
    own, children = _own_and_children(layer, keras_layers)
    split = _SPLITS.get(type(layer).__name__)
    parts = split(layer, own) if split is not None else None
    if parts is not None:
        groups.append((_join(path, "vars"), [], None))
        for subpath, variables in parts:
            groups.append((_join(path, subpath), variables, None))
    else:
        groups.append((_join(path, "vars"), own, layer))
    graph_layers = _graph_layers(layer)
    if graph_layers is not None:
        used = {}
        for item in graph_layers:
            if isinstance(item, SymbolicTensor):
                name = unique_name("input_layer", used)
                groups.append((_join(path, f"layers/{name}/vars"), [], None))
            elif keras_ops.is_operation(item):
                continue  # a Keras operation node: no layer of Keras's, no container
            else:
                name = unique_name(snake_case(_keras_class_name(item)), used)
                _layer_groups(item, _join(path, f"layers/{name}"), groups, visited, keras_layers)
        return
    containers = {}
    in_layers = keras_layers and _is_subclassed_model(layer)
    # Attributes in sorted order, as Keras's walk; a list's or dict's items in their own
    # order (a stable sort on the container's name: `blocks[10]` after `blocks[2]`).
    for attribute, child in sorted(children, key=lambda pair: _name_key(pair[0].split("[")[0])):
        if in_layers and _name_key(attribute.split("[")[0]) > "layers":
            _layers_container(layer, path, groups, visited)
            in_layers = False
        if "[" in attribute:  # inside a list, tuple or dict: named by class in that container
            container = attribute.split("[")[0]
            used = containers.setdefault(container, {})
            name = unique_name(snake_case(_keras_class_name(child)), used)
            _layer_groups(child, _join(path, f"{container}/{name}"), groups, visited, keras_layers)
        else:
            _layer_groups(child, _join(path, attribute), groups, visited, keras_layers)
    if in_layers:
        _layers_container(layer, path, groups, visited)


def _layers_container(model, path, groups, visited):
    """A subclassed model's `layers` as Keras's walk meets it (see the module): every
    sub-layer not yet placed goes there; the placed ones take their names all the same."""
    used = {}
    for item in model.layers:
        name = unique_name(snake_case(_keras_class_name(item)), used)
        _layer_groups(item, _join(path, f"layers/{name}"), groups, visited)


def _keras_class_name(layer):
    """The name of the Keras class a layer is saved as (Keras names containers after it)."""
    return getattr(type(layer), "_keras_class_name", None) or keras_class_name(layer)


def _graph_layers(layer):
    """A Sequential's layers, a functional model's layers and Inputs; None otherwise."""
    if getattr(layer, "_inputs", None) is None or not hasattr(layer, "_nodes"):
        return None
    if getattr(layer, "_summary_shows_inputs", True) is False:  # Sequential
        return list(layer.layers)
    return functional_order(layer)


def _name_key(name):
    return f"~{name}" if name.startswith("_") else name


def _join(path, part):
    return f"{path}/{part}" if path else part


def variable_groups(model):
    """Every group of variables in `model.weights.h5`, with its path, in Keras's layout.

    Args:
        model: a built minikeras model (or layer).

    Returns:
        A list of `(path, variables)`: `path` like `"layers/dense/vars"`, the
        variables in the order of their datasets `0`, `1`, ... (empty groups too).

    Example:
        >>> model = mk.Sequential([mk.Input((3,)), mk.layers.Dense(2), mk.layers.Dense(1)])
        >>> [(path, [w.name for w in ws]) for path, ws in mk.saving.keras_layout.variable_groups(model)]
        [('vars', []), ('layers/dense/vars', ['kernel', 'bias']), ('layers/dense_1/vars', ['kernel', 'bias'])]
    """  # noqa: E501
    return [(path, variables) for path, variables, _ in layer_groups(model)]


def former_paths(model):
    """Where minikeras wrote each group before it kept Keras's `layers` container for a
    subclassed model's later attributes: every sub-layer under its attribute name.

    Args:
        model: a built minikeras model (or layer).

    Returns:
        A dict: the ids of a group's variables (a tuple) -> that group's former path.

    Example:
        >>> model = mk.Sequential([mk.Input((3,)), mk.layers.Dense(2)])
        >>> list(mk.saving.keras_layout.former_paths(model).values())
        ['layers/dense/vars']
    """
    groups = []
    _layer_groups(model, "", groups, set(), keras_layers=False)
    return {tuple(map(id, variables)): path for path, variables, _ in groups if variables}


def layer_groups(model):
    """`variable_groups`, with the layer whose own variables each group holds.

    The layer is None for a group that is a part of a layer minikeras keeps
    whole (an LSTM's `cell`) and for an Input's empty group; a layer's
    `save_own_variables` / `load_own_variables` hooks write and read its group.

    Args:
        model: a built minikeras model (or layer).

    Returns:
        A list of `(path, variables, layer)`.

    Raises:
        ValueError: if a weight of the model has no place in the layout.

    Example:
        >>> model = mk.Sequential([mk.Input((3,)), mk.layers.Dense(2, name="d")])
        >>> [
        ...     (path, getattr(layer, "name", None))
        ...     for path, _, layer in mk.saving.keras_layout.layer_groups(model)
        ... ][1:]
        [('layers/dense/vars', 'd')]
    """
    groups = []
    _layer_groups(model, "", groups, set())
    claimed = {id(w) for _, ws, _ in groups for w in ws}
    missing = [w for w in model.weights if id(w) not in claimed]
    if missing:
        raise ValueError(
            f"the Keras layout does not place the weights {[w.path for w in missing]} of "
            f"'{model.name}'"
        )
    return groups


def is_variable(value):
    """Whether `value` is a minikeras Variable (for the file code's checks).

    Args:
        value: anything.

    Returns:
        A bool.

    Example:
        >>> (
        ...     mk.saving.keras_layout.is_variable(mk.Variable(np.zeros(2))),
        ...     mk.saving.keras_layout.is_variable(np.zeros(2)),
        ... )
        (True, False)
    """
    return isinstance(value, Variable)
