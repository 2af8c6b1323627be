"""Where minikeras placed a model's variable groups in `.weights.h5` files it wrote before.

`keras_layout` gives Keras 3's layout; files minikeras wrote under two earlier
rules are still read, each group at the first of these paths the file has:

- the attribute layout: every sub-layer under the attribute that holds it,
  in attribute order, a subclassed model's later attributes outside Keras's
  `layers` container;
- the flat-container layout: Keras's `layers` container, but the layers of
  nested lists (or dicts, tuples) named by class in one flat container
  (`blocks/dense_2`, where Keras writes `blocks/container_1/dense`), a
  sub-layer at the first attribute that holds it by the attribute walk, and a
  subclassed model's `layers` without the layers its attributes held before.

The reader (`keras_weights_reader`) reads a file by one layout: Keras's if
the file has every group at its Keras path, else the first former one it has
them all at (a nested list's first layers sit at `blocks/dense` in both Keras's
layout and the flat one, so the choice is the file's, not a group's); a file
complete under none is read group by group, each at the first path it has.
"""

from minikeras.layers import tracking
from minikeras.layers.input_layer import SymbolicTensor
from minikeras.layers.layer import Layer
from minikeras.saving import keras_ops
from minikeras.saving.keras_layout import (
    _SPLITS,
    _graph_layers,
    _is_subclassed_model,
    _join,
    _keras_class_name,
    _name_key,
    unique_name,
)
from minikeras.utils.naming import to_snake_case

__all__ = ["former_paths"]


def former_paths(model):
    """Where minikeras wrote each group before, under each former rule (see the module).

    Args:
        model: a built minikeras model (or layer).

    Returns:
        A list of two dicts, the attribute layout's then the flat-container
        layout's: the ids of a group's variables (a tuple) -> its path there.

    Example:
        >>> model = mk.Sequential([mk.Input((3,)), mk.layers.Dense(2)])
        >>> [list(paths.values()) for paths in mk.saving.keras_layout_former.former_paths(model)]
        [['layers/dense/vars'], ['layers/dense/vars']]
    """
    layouts = []
    for keras_layers in (False, True):
        groups = []
        _layer_groups(model, "", groups, set(), keras_layers)
        layouts.append({tuple(map(id, ws)): path for path, ws, _ in groups if ws})
    return layouts


def _own_and_children(layer, sorted_walk):
    """The layer's own variables and its direct sub-layers by attribute (attribute walk)."""
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


def _layer_groups(layer, path, groups, visited, keras_layers):
    if id(layer) in visited:
        return
    visited.add(id(layer))
    own, children = _own_and_children(layer, keras_layers)
    split = _SPLITS.get(type(layer).__name__)
    parts = split(layer, own) if split is not None else None
    if parts is not None:
        for subpath, variables in parts:
            groups.append((_join(path, subpath), variables, None))
    else:
        groups.append((_join(path, "vars"), own, layer))
    graph_layers = _graph_layers(layer)
    if graph_layers is not None:
        used = {}
        for item in graph_layers:
            if isinstance(item, SymbolicTensor):
                unique_name("input_layer", used)
            elif not keras_ops.is_operation(item):
                name = unique_name(to_snake_case(_keras_class_name(item)), used)
                _layer_groups(item, _join(path, f"layers/{name}"), groups, visited, keras_layers)
        return
    containers = {}
    in_layers = keras_layers and _is_subclassed_model(layer)
    for attribute, child in sorted(children, key=lambda pair: _name_key(pair[0].split("[")[0])):
        if in_layers and _name_key(attribute.split("[")[0]) > "layers":
            _layers_container(layer, path, groups, visited)
            in_layers = False
        if "[" in attribute:  # inside a list, tuple or dict: by class, one flat container
            container = attribute.split("[")[0]
            used = containers.setdefault(container, {})
            name = unique_name(to_snake_case(_keras_class_name(child)), used)
            _layer_groups(child, _join(path, f"{container}/{name}"), groups, visited, keras_layers)
        else:
            _layer_groups(child, _join(path, attribute), groups, visited, keras_layers)
    if in_layers:
        _layers_container(layer, path, groups, visited)


def _layers_container(model, path, groups, visited):
    held = [v for _, owner, v in tracking.walk(model) if owner is model and isinstance(v, Layer)]
    used = {}
    for item in held:
        name = unique_name(to_snake_case(_keras_class_name(item)), used)
        _layer_groups(item, _join(path, f"layers/{name}"), groups, visited, True)
