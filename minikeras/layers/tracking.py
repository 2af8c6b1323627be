"""Tracking: finding every weight and sub-layer a layer holds, and saying what escapes.

Nothing is registered eagerly. A layer's weights are found by walking its
attributes, through any nesting of lists, tuples (named or not) and dicts.
So `append`, `del`, slice assignment, `setdefault`, `|=` or reassigning an
attribute need no special container types: what is reachable is tracked,
what is not reachable is not.

The weights are listed in Keras 3's order, so that `get_weights` and
`set_weights` cross between the two: a layer's own weights (trainable-made
first), then its sub-layers', recursively (`weight_order` has the rule).

The walk's result is cached (`weight_lists`): a training step asks for
`trainable_weights` twice, and a walk costs tens of µs. The cache holds while
`TrackingGeneration` stands still (attribute sets and deletes, `add_weight`
and trainable flags move it) and every list and dict the walk went through
still holds the same items (checked by identity, which also catches a
mutation through a reference the user kept).

What cannot be tracked (a set, a plain object, a closure, a global) is found
in other ways and reported with a `TrackingWarning`:
- containers that cannot be tracked are scanned once, on the first call;
- Variables read during `call()` are observed through `read_variable`, and
  those that the called model does not track are named.
"""

import os
import sys
import warnings

import numpy as np

from minikeras.engine.tensor import Tensor
from minikeras.engine.variable import TrackingGeneration, Variable
from minikeras.layers import weight_order

__all__ = [
    "TrackingWarning",
    "find_untrackable",
    "may_hold_weights",
    "tracked_layers",
    "tracked_weights",
    "weight_lists",
    "walk",
    "warn",
]

# Warnings point at the first frame whose file is not under this directory.
_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


class TrackingWarning(UserWarning):
    """A weight or layer escaped tracking: it will not be trained or saved.

    Filter it or turn it into an error with the `warnings` module:

    Example:
        >>> import warnings
        >>> warnings.simplefilter("error", mk.TrackingWarning)
        >>> warnings.resetwarnings()
    """


def warn(message):
    """Emits a `TrackingWarning` pointing at the user's code.

    Args:
        message: the text, which names the weight, the layer and the fix.

    Returns:
        None.

    Example:
        >>> import warnings
        >>> with warnings.catch_warnings(record=True) as caught:
        ...     warnings.simplefilter("always")
        ...     mk.layers.tracking.warn("example")
        >>> caught[0].category.__name__
        'TrackingWarning'
    """
    # The user's line, however deep inside minikeras the problem was found.
    level, frame = 1, sys._getframe()
    while frame.f_back is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIR):
        level, frame = level + 1, frame.f_back
    warnings.warn(message, TrackingWarning, stacklevel=level)


_layer_class = []  # [Layer], once layer.py (which imports this module) has loaded


def _is_layer(value):
    if not _layer_class:
        from minikeras.layers.layer import Layer

        _layer_class.append(Layer)
    return isinstance(value, _layer_class[0])


def _child_path(path, key):
    return f"{path}[{key!r}]" if isinstance(key, str) else f"{path}[{key}]"


def _fingerprint(container):
    """What a list or dict holds, by identity: equal while nothing was added or removed."""
    if isinstance(container, dict):
        return tuple(container), tuple(map(id, container.values()))
    return tuple(map(id, container))


def weight_lists(layer):
    """The layer's tracked weights: `(all, trainable, non_trainable)`, cached (see the module).

    Args:
        layer: a `Layer`.

    Returns:
        Three tuples of `Variable`s, in Keras 3's order (see `weight_order`); do not
        modify them.

    Example:
        >>> d = mk.layers.Dense(2)
        >>> d.build((None, 3))
        >>> d.bias.trainable = False
        >>> [[w.name for w in weights] for weights in mk.layers.tracking.weight_lists(d)]
        [['kernel', 'bias'], ['kernel'], ['bias']]
    """
    return _tracked(layer)[0]


def tracked_layers(layer):
    """The layers a layer holds, directly or nested, each before those it holds (cached).

    Sub-layers come in the order `weights` lists them: attribute order, a
    Sequential's own order, a functional model's `layers` order.

    Found by the same walk as `weight_lists`, and kept with its cache.

    Args:
        layer: a `Layer`.

    Returns:
        A list of `Layer`s (not including `layer`).

    Example:
        >>> model = mk.Sequential([mk.Input((3,)), mk.layers.Dense(2, name="d")])
        >>> [sub.name for sub in mk.layers.tracking.tracked_layers(model)]
        ['d']
    """
    return list(_tracked(layer)[1])


def _tracked(layer):
    """`(weight lists, layers)`, from the cache while nothing tracked has changed."""
    cache = layer.__dict__.get("_weights_cache")
    if cache is not None and cache[0] == TrackingGeneration.value:
        for container, fingerprint in cache[2]:
            if _fingerprint(container) != fingerprint:
                break
        else:
            return cache[1]
    generation = TrackingGeneration.value  # before the walk: a change during it invalidates
    containers = []
    weights, layers = weight_order.in_keras_order(
        layer, lambda held_by: _own_and_held(held_by, containers)
    )
    lists = (
        weights,
        tuple(w for w in weights if w.trainable),
        tuple(w for w in weights if not w.trainable),
    )
    fingerprints = [(container, _fingerprint(container)) for container in containers]
    result = (lists, tuple(layers))
    object.__setattr__(layer, "_weights_cache", (generation, result, fingerprints))
    return result


def _own_and_held(layer, containers):
    """The Variables a layer's attributes hold outside sub-layers, and the sub-layers.

    Both in attribute order; the lists and dicts read go to `containers`.
    """
    containers.append(layer._added_weights)
    own, children, seen = [], [], set()

    def visit(value):
        if isinstance(value, Variable):
            if id(value) not in seen:
                seen.add(id(value))
                own.append(value)
        elif isinstance(value, (Tensor, str, bytes, np.ndarray, int, float)):
            return
        elif _is_layer(value):
            children.append(value)
        elif isinstance(value, (list, tuple, dict)) and id(value) not in seen:
            seen.add(id(value))
            if not isinstance(value, tuple):
                containers.append(value)
            for item in list(value.values()) if isinstance(value, dict) else value:
                visit(item)

    for name, value in _attributes(layer):
        if type(value) in _LEAF_TYPES:
            continue
        if name == "_layers" and isinstance(value, list):  # Sequential and functional models
            containers.append(value)
            ordered = getattr(type(layer), "_layers_in_keras_order", None)
            children.extend(value if ordered is None else ordered(layer))
        else:
            visit(value)
    return own, children


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


def tracked_weights(layer):
    """The Variables a layer tracks, each once, in Keras 3's order (`layer.weights`).

    Args:
        layer: a `Layer`.

    Returns:
        A list of `Variable`s.

    Example:
        >>> from minikeras.layers import Dense
        >>> d = Dense(2)
        >>> d.build((None, 3))
        >>> [w.name for w in mk.layers.tracking.tracked_weights(d)]
        ['kernel', 'bias']
    """
    return list(weight_lists(layer)[0])


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
