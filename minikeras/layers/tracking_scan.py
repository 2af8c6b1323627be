"""The scan for what tracking cannot reach: Layers and Variables in sets and plain objects.

`find_untrackable` looks, once, on a layer's first call, through the places
the walk (`tracking_walk`) does not go, so that `call_checks` can name them in
a `TrackingWarning`.
"""

import numpy as np

from minikeras.engine.tensor import Tensor
from minikeras.engine.variable import Variable
from minikeras.layers.tracking_walk import _LEAF_TYPES, _attributes, _child_path, _is_layer, walk

__all__ = ["find_untrackable"]


_OPAQUE = (type, type(len), type(lambda: 0), type(np), np.ndarray, Tensor, str, bytes)


def find_untrackable(layer, max_depth=3):
    """Finds Layers and Variables in places tracking cannot reach.

    Looks in sets and in the attributes of plain objects held by `layer` and
    its sub-layers (the first call does this once). Objects that own their
    Variables (optimizers, marked `_owns_its_variables`) are passed by.

    Args:
        layer: a `Layer`.
        max_depth: how deep to look into plain objects.

    Returns:
        A list of `(path, owner, value, container_kind)`.

    Example:
        >>> from minikeras.layers import Dense, Layer
        >>> class Bad(Layer):
        ...     def __init__(self):
        ...         super().__init__()
        ...         self.blocks = {Dense(2)}
        >>> [(path, kind) for path, _, _, kind in mk.layers.tracking.find_untrackable(Bad())]
        [('blocks{...}', 'set')]
    """
    found = []
    reachable = list(walk(layer))
    tracked = {id(value) for _, _, value in reachable} | {id(layer)}
    layers = [("", layer)] + [(path + "/", sub) for path, _, sub in reachable if _is_layer(sub)]
    for prefix, owner in layers:
        for name, value in _attributes(owner):
            if type(value) not in _LEAF_TYPES:  # (most attributes: names, sizes, flags)
                _scan(value, prefix + name, owner, found, max_depth, set())
    # Something also reachable through tracking (a functional graph's nodes) is fine.
    return [item for item in found if id(item[2]) not in tracked]


# minikeras's own objects that hold no Layer or Variable a user put there: an
# InputSpec, an initializer, regularizer or constraint minikeras defines, a
# functional graph's tensors and nodes (whose layers the model tracks). The
# first call's scan passes them by (a user's subclass, defined elsewhere, is
# still looked into).
_HOLDING_NOTHING = (
    "minikeras.layers.input_spec",
    "minikeras.layers.input_layer",
    "minikeras.initializers.",
    "minikeras.regularizers",
    "minikeras.constraints",
)


def _scan(value, path, owner, found, depth, seen):
    if type(value) in _LEAF_TYPES:  # (what the checks below would reach last)
        return
    if depth < 0 or id(value) in seen or isinstance(value, _OPAQUE) or _is_layer(value):
        return
    if getattr(value, "_owns_its_variables", False):  # an optimizer: its state is its own
        return
    seen.add(id(value))
    if isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            _scan(item, _child_path(path, index), owner, found, depth, seen)
    elif isinstance(value, dict):
        for key, item in list(value.items()):
            _scan(item, _child_path(path, key), owner, found, depth, seen)
    elif isinstance(value, (set, frozenset)):
        for item in value:
            if _is_layer(item) or isinstance(item, Variable):
                found.append((path + "{...}", owner, item, "set"))
    elif (
        hasattr(value, "__dict__")
        and not isinstance(value, Variable)
        and not str(type(value).__module__).startswith(_HOLDING_NOTHING)
    ):
        for name, item in vars(value).items():
            item_path = f"{path}.{name}"
            if getattr(item, "_holds_no_state", False):  # (an Input's InputLayer, on its tensor)
                continue
            if _is_layer(item) or isinstance(item, Variable):
                found.append((item_path, owner, item, type(value).__name__ + " object"))
            else:
                _scan(item, item_path, owner, found, depth - 1, seen)
