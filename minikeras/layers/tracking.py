"""Tracking: finding every weight and sub-layer a layer holds, and saying what escapes.

Weights are found by walking a layer's attributes, through any nesting of
lists, tuples (named or not) and dicts: what is reachable is tracked (a
Variable that is not reachable is not). Which sub-layers count, and in what
order, is Keras 3's tracker's: an attribute's list or dict of layers is a
`layer_containers.RecordedList` / `RecordedDict` that tells `layer_record`
when a layer goes in or out, and a layer put in where Keras's tracker does
not look (`lst[i] = layer`) is left out, with a warning.

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

This module holds the cache and the warning; the walk itself (`walk`,
`may_hold_weights`) is in `tracking_walk` and the scan (`find_untrackable`)
in `tracking_scan`, both re-exported here.
"""

import os
import sys
import warnings

import numpy as np

from minikeras.engine.tensor import Tensor
from minikeras.engine.variable import TrackingGeneration, Variable
from minikeras.layers import layer_record, weight_order
from minikeras.layers.tracking_scan import find_untrackable
from minikeras.layers.tracking_walk import (
    _LEAF_TYPES,
    _attributes,
    _is_layer,
    may_hold_weights,
    walk,
)

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

    graph = []
    for name, value in _attributes(layer):
        if type(value) in _LEAF_TYPES:
            continue
        if name == "_layers" and isinstance(value, list):  # Sequential and functional models
            containers.append(value)
            ordered = getattr(type(layer), "_layers_in_keras_order", None)
            graph = list(value if ordered is None else ordered(layer))
        else:
            visit(value)
    # Attributes' layers in the order they were put in, as Keras's `_layers`, with those
    # attributes held before (a built one's weights are the layer's too): see layer_record.
    return own, graph + layer_record.in_keras_order(layer, children)


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
