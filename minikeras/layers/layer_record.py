"""The layers an attribute was ever given, in Keras 3's order: what its tracker keeps.

minikeras tracks by reachability (`minikeras.layers.tracking`). Keras 3's
tracker adds a Layer to the owner's `_layers` list when an attribute is set
to it (directly or inside a list, tuple or dict) and keeps it there when the
attribute is later set to something else or deleted: only a tracked
container's own `remove`, `pop`, `del` or `clear` drops it
(`keras/src/utils/tracking.py`). So after `self.dense = Dense(3)` and then
`self.dense = Dense(4)`, a subclassed model's `layers` lists both, in the
order they were assigned, and its weights file places both (the first, never
built, as an empty group). `Layer.__setattr__` and `__delattr__` call `note`;
`in_keras_order` gives a subclassed model's `layers` from it, and the
order of a layer's sub-layers in its `weights` (`tracking`).

A layer put into a list after the list was assigned (`append`) is not seen
here: it keeps the place the attribute walk gives it, after the item before it.
"""

import itertools
import weakref

__all__ = ["in_keras_order", "layers_in", "note"]

_counter = itertools.count()
_layer_class = []  # [Layer], once layer.py (which imports this module) has loaded


def layers_in(value):
    """The Layers `value` holds: itself, or inside lists, tuples and dicts (not inside layers).

    Args:
        value: an attribute's value.

    Returns:
        A list of Layers, in order, each once.

    Example:
        >>> d, e = mk.layers.Dense(2), mk.layers.Dense(3)
        >>> [layer is d for layer in mk.layers.layer_record.layers_in([[d], {"e": e}, 3])]
        [True, False]
    """
    if not _layer_class:
        from minikeras.layers.layer import Layer

        _layer_class.append(Layer)
    layer_class, found, seen = _layer_class[0], [], set()

    def visit(item):
        if isinstance(item, layer_class):
            if id(item) not in seen:
                seen.add(id(item))
                found.append(item)
        elif isinstance(item, (list, tuple, dict)) and id(item) not in seen:
            seen.add(id(item))
            for inner in list(item.values()) if isinstance(item, dict) else list(item):
                visit(inner)

    visit(value)
    return found


def note(layer, old, new):
    """Records an attribute of `layer` going from `old` to `new` (None when deleted).

    The layers `new` holds get their place in the assignment order (if not
    placed yet); those `old` held and `new` does not are kept, as Keras keeps them.

    Args:
        layer: the owner.
        old: the attribute's former value (None if it had none).
        new: its new value.

    Returns:
        None.

    Example:
        >>> owner, d = mk.layers.Layer(), mk.layers.Dense(2)
        >>> mk.layers.layer_record.note(owner, d, None)
        >>> owner._layer_record["replaced"][id(d)] is d
        True
    """
    held = layers_in(new)
    lost = [sub for sub in layers_in(old) if all(sub is not kept for kept in held)]
    if not held and not lost:
        return
    record = layer.__dict__.get("_layer_record")
    if record is None:
        record = _Record(order={}, replaced={})
        object.__setattr__(layer, "_layer_record", record)
    order = record["order"]
    for sub in held:
        entry = order.get(id(sub))
        if entry is None or entry[1]() is not sub:  # (an id a dead layer had is a new place)
            order[id(sub)] = (next(_counter), weakref.ref(sub))
    for sub in lost:
        record["replaced"][id(sub)] = sub


class _Record(dict):
    """`{"order": {id: (number, weakref)}, "replaced": {id: layer}}`, as copies must see it.

    Keyed by `id` and holding weak references, it would neither pickle nor
    mean anything in a copy: a pickled or deep-copied record is rebuilt from
    its layers (the copies' own), numbered afresh in the same order.
    """

    def __reduce__(self):
        live = sorted(
            (number, ref()) for number, ref in self["order"].values() if ref() is not None
        )
        return (_rebuilt, ([sub for _, sub in live], list(self["replaced"].values())))


def _rebuilt(ordered, replaced):
    """A `_Record` of `ordered` layers (in their assignment order) and `replaced` ones."""
    order = {id(sub): (next(_counter), weakref.ref(sub)) for sub in ordered}
    return _Record(order=order, replaced={id(sub): sub for sub in replaced})


def in_keras_order(layer, reachable, replaced=True):
    """`layer`'s direct layers as Keras's `_layers` lists them.

    Args:
        layer: the owner.
        reachable: the layers its attributes hold now, in the attribute walk's order.
        replaced: whether to add the layers its attributes held before (False:
            only put `reachable` in order, as `weights` lists their weights).

    Returns:
        A list: those, and the layers its attributes held before (see the
        module), in the order they were first assigned.

    Example:
        >>> owner, d, e = mk.layers.Layer(), mk.layers.Dense(2), mk.layers.Dense(3)
        >>> owner.d = d
        >>> owner.d = e
        >>> [sub is d for sub in mk.layers.layer_record.in_keras_order(owner, [e])]
        [True, False]
    """
    record = layer.__dict__.get("_layer_record")
    if record is None:
        return list(reachable)
    order, keyed, last = record["order"], [], (-1, 0)
    for index, sub in enumerate(reachable):
        entry = order.get(id(sub))
        last = (entry[0], 0) if entry is not None and entry[1]() is sub else (last[0], index + 1)
        keyed.append((last, sub))
    placed = {id(sub) for sub in reachable}
    for key, sub in record["replaced"].items() if replaced else ():
        if key not in placed:
            entry = order.get(key)
            keyed.append(((entry[0] if entry is not None else -1, 0), sub))
    keyed.sort(key=lambda pair: pair[0])
    return [sub for _, sub in keyed]
