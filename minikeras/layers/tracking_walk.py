"""The walk: every Variable and Layer a layer's attributes reach, with its path.

Through any nesting of lists, tuples (named or not) and dicts, in attribute
order, each object once, at the first path that reaches it. `tracking` builds
its cached weight lists from the same attribute reading (`_attributes`,
`_LEAF_TYPES`); `may_hold_weights` says whether a value could hold anything
the walk would find.
"""

import numpy as np

from minikeras.engine.tensor import Tensor
from minikeras.engine.variable import Variable

__all__ = ["may_hold_weights", "walk"]


_layer_class = []  # [Layer], once layer.py (which imports this module) has loaded


def _is_layer(value):
    if not _layer_class:
        from minikeras.layers.layer import Layer

        _layer_class.append(Layer)
    return isinstance(value, _layer_class[0])


def _child_path(path, key):
    return f"{path}[{key!r}]" if isinstance(key, str) else f"{path}[{key}]"


def walk(layer):
    """Yields `(path, owner, value)` for each Variable and Layer a layer holds.

    Paths are relative to `layer`, like `ff1/dense_list[0]/kernel`; `owner` is
    the layer whose attributes hold `value`. Each object appears once, at the
    first path that reaches it, in attribute order.

    Args:
        layer: a `Layer`.

    Returns:
        A generator of `(path, owner, value)` triples.

    Example:
        >>> from minikeras.layers import Dense
        >>> d = Dense(2)
        >>> d.build((None, 3))
        >>> [path for path, _, _ in mk.layers.tracking.walk(d)]
        ['kernel', 'bias']
    """
    seen = {id(layer)}
    yield from _walk_layer(layer, "", seen)


# Exact types that can hold no Variable or Layer: most of a layer's attributes
# (names, sizes, flags, activations), skipped without a generator each.
_LEAF_TYPES = frozenset(
    {str, bytes, int, float, bool, type(None), np.ndarray, Tensor, type(len), type(lambda: 0)}
)


def may_hold_weights(value):
    """Whether tracking could find a Variable or Layer in `value` (False for plain data).

    Args:
        value: any attribute value.

    Returns:
        A bool: False for strings, numbers, None, arrays, plain Tensors and
        functions, and for tuples of those (a shape: immutable, it never will).

    Example:
        >>> tracking = mk.layers.tracking
        >>> tracking.may_hold_weights(3), tracking.may_hold_weights([])
        (False, True)
        >>> tracking.may_hold_weights((None, 4)), tracking.may_hold_weights((mk.Variable(1.0),))
        (False, True)
    """
    kind = type(value)
    if kind is tuple:
        return not all(type(item) in _LEAF_TYPES for item in value)
    return kind not in _LEAF_TYPES


def _walk_layer(layer, prefix, seen, containers=None):
    if containers is not None:
        containers.append(layer._added_weights)
    for name, value in _attributes(layer):
        if type(value) in _LEAF_TYPES:
            continue
        if isinstance(value, Variable):  # the usual weight, without a generator of its own
            if id(value) not in seen:
                seen.add(id(value))
                yield prefix + name, layer, value
        elif name == "_layers" and isinstance(value, list):
            # Sequential and functional models: a layer's path is its name.
            if containers is not None:
                containers.append(value)
            for sublayer in value:
                yield from _walk_value(sublayer, prefix + sublayer.name, layer, seen, containers)
        elif isinstance(value, (list, tuple, dict)) or _is_layer(value):
            yield from _walk_value(value, prefix + name, layer, seen, containers)


def _attributes(layer):
    items = [(k, v) for k, v in vars(layer).items() if k not in layer._untracked_attributes]
    # Weights made with add_weight but never assigned to an attribute are still the layer's.
    items.extend((v.name, v) for v in layer._added_weights)
    return items


def _walk_value(value, path, owner, seen, containers=None):
    if isinstance(value, (Variable, Tensor, str, bytes, np.ndarray, int, float)):
        if isinstance(value, Variable) and id(value) not in seen:
            seen.add(id(value))
            yield path, owner, value
        return
    if _is_layer(value):
        if id(value) not in seen:
            seen.add(id(value))
            yield path, owner, value
            yield from _walk_layer(value, path + "/", seen, containers)
        return
    if isinstance(value, (list, tuple)):
        if id(value) in seen:
            return
        seen.add(id(value))
        if containers is not None and not isinstance(value, tuple):
            containers.append(value)
        for index, item in enumerate(value):
            yield from _walk_value(item, _child_path(path, index), owner, seen, containers)
    elif isinstance(value, dict):
        if id(value) in seen:
            return
        seen.add(id(value))
        if containers is not None:
            containers.append(value)
        for key, item in list(value.items()):
            yield from _walk_value(item, _child_path(path, key), owner, seen, containers)
