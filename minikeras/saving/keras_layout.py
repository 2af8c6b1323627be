"""Where Keras 3 keeps each variable in `model.weights.h5`, for minikeras models.

Keras addresses a variable by the path of objects that reach it, never by
its name (`keras/src/saving/saving_lib.py`, `_save_state`): a layer's own
variables are in `vars/0`, `vars/1`...; then come the objects its attributes
hold, the attributes in sorted order, private ones last, each layer at the
first path that meets it:

- a layer at an attribute sits under its name (`lstm/cell`);
- a list, tuple or dict at an attribute is a container: its layers are named
  by class in its order (a dict's values), `dense`, `dense_1`..., and a list
  (tuple, dict) inside it is `container`, `container_1`..., recursively
  (`blocks/container_1/dense`); a layer already placed elsewhere counts in
  the names all the same;
- a Sequential's or functional model's layers come first, in the container
  `layers` (named by class in the order of its `layers`, `input_layer` for an
  Input); its other attributes (a layer a functional subclass holds outside
  its graph) follow, sorted;
- a subclassed model's `layers` property is one of its sorted attributes: so
  the layers at attributes that sort after `layers` (and at private ones) are
  in the `layers` container, named in the order of `model.layers`, which (as
  Keras's tracker) keeps a layer an attribute held before it was set again
  (`minikeras.layers.layer_record`): such a layer, never built, has an
  empty group there.

The optimizer's variables are `optimizer/vars/<i>` (their order is in
`keras_optimizer_layout`, re-exported here). This module gives those paths
for a minikeras model, so that a file written here is read by Keras and a
file written by Keras is read here; `keras_layout_former` gives where
minikeras wrote a group before, for the files it wrote then.

Where a built-in minikeras layer keeps in one object what Keras splits into
sub-layers (MultiHeadAttention's four projections), the table `_SPLITS` says
which variables go where.
"""

import re

from minikeras.engine.variable import Variable
from minikeras.layers import layer_record, tracking
from minikeras.layers.input_layer import SymbolicTensor
from minikeras.layers.layer import Layer
from minikeras.models.graph import functional_order
from minikeras.models.graph_order import keras_class_name
from minikeras.saving import keras_ops
from minikeras.saving.keras_optimizer_layout import optimizer_variables
from minikeras.utils.naming import to_snake_case

__all__ = [
    "layer_groups",
    "older_path",
    "optimizer_variables",
    "unique_name",
    "variable_groups",
]


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


def _own(layer):
    """The layer's own variables (in `weights` order): those no sub-layer of it holds."""
    sub_weights = set()
    held = [value for _, owner, value in tracking.walk(layer) if owner is layer]
    for value in held + layer_record.held_before(layer):
        if isinstance(value, Layer):
            sub_weights.update(id(w) for w in value.weights)
    return [w for w in layer.weights if id(w) not in sub_weights]


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


def _layer_groups(layer, path, groups, visited):
    """Keras's `_save_state`: the layer's own group, then what its attributes hold, in
    sorted order (private ones last), each layer at the first path that meets it."""
    if id(layer) in visited:
        return
    visited.add(id(layer))
    own = _own(layer)
    split = _SPLITS.get(type(layer).__name__)
    parts = split(layer, own) if split is not None else None
    if parts is not None:
        groups.append((_join(path, "vars"), [], None))
        for subpath, variables in parts:
            groups.append((_join(path, subpath), variables, None))
    else:
        groups.append((_join(path, "vars"), own, layer))
    graph_layers = _graph_layers(layer)
    if graph_layers is not None:  # a Sequential's or functional model's layers come first
        used = {}
        for item in graph_layers:
            if isinstance(item, SymbolicTensor):
                name = unique_name("input_layer", used)
                groups.append((_join(path, f"layers/{name}/vars"), [], None))
            elif keras_ops.is_operation(item):
                continue  # a Keras operation node: no layer of Keras's, no container
            else:
                name = unique_name(to_snake_case(_keras_class_name(item)), used)
                _layer_groups(item, _join(path, f"layers/{name}"), groups, visited)
    for attribute, value in _saved_attributes(layer):
        if isinstance(value, Layer):
            _layer_groups(value, _join(path, attribute), groups, visited)
        else:
            _container_groups(value, _join(path, attribute), groups, visited, set())


def _saved_attributes(layer):
    """The attributes Keras's walk saves from, sorted as it sorts them: those holding a
    layer or a list, tuple or dict, and a subclassed model's `layers` (see the module)."""
    found = [
        (name, value)
        for name, value in vars(layer).items()
        if name not in layer._untracked_attributes
        and name != "_layers"  # (a graph's, placed above; Keras skips its own `_layers`)
        and isinstance(value, (Layer, list, tuple, dict))
    ]
    if _is_subclassed_model(layer):
        found.append(("layers", layer.layers))
    return sorted(found, key=lambda pair: _name_key(pair[0]))


def _container_groups(container, path, groups, visited, seen):
    """Keras's `_save_container_state`: a container's layers by class (`dense`,
    `dense_1`...) and its inner containers as `container`, `container_1`..., in its
    order (a dict's values), the names counting the layers already placed too."""
    if id(container) in seen:
        return
    seen.add(id(container))
    used = {}
    for item in list(container.values()) if isinstance(container, dict) else list(container):
        if isinstance(item, Layer):
            name = unique_name(to_snake_case(_keras_class_name(item)), used)
            _layer_groups(item, _join(path, name), groups, visited)
        elif isinstance(item, (list, tuple, dict)):
            name = unique_name("container", used)
            _container_groups(item, _join(path, name), groups, visited, seen)


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
    # A plain layer's replaced sub-layer is in its weights but not in Keras's file.
    claimed.update(id(w) for w in _held_before_unsaved(model, groups))
    missing = [w for w in model.weights if id(w) not in claimed]
    if missing:
        raise ValueError(
            f"the Keras layout does not place the weights {[w.path for w in missing]} of "
            f"'{model.name}'"
        )
    return groups


def _held_before_unsaved(model, groups):
    """The weights of the layers held before (see layer_record) that no group holds."""
    placed = {id(layer) for _, _, layer in groups if layer is not None}
    found = []
    for layer in [model, *tracking.tracked_layers(model)]:
        for sub in layer_record.held_before(layer):
            if id(sub) not in placed:
                found.extend(sub.weights)
    return found


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
