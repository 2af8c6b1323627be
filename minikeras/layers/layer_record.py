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

A layer put into an attribute's list or dict later (`append`, `insert`,
`d[key] = `...) is placed then, as Keras's tracked containers place it:
`layer_containers` says what went in and out (`place`, `keep`, `drop`,
`leave_out`). A layer Keras's tracker does not follow (put in by `lst[i] = `,
a slice, `setdefault`) is left out of `layers` and `weights` as in Keras,
with a `TrackingWarning`. A layer the record never saw (in a list assigned
before minikeras recorded lists, or held in a container of another kind)
takes the place the attribute walk gives it, after the item before it.
"""

import itertools
import weakref

__all__ = [
    "drop",
    "held_before",
    "in_keras_order",
    "keep",
    "layers_in",
    "leave_out",
    "note",
    "place",
]

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
    placed yet); those `old` held and `new` does not are kept, as Keras keeps
    them, unless `layer` is built (Keras refuses the set then; minikeras
    lets the former layer go: a head swapped after training).

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
    if held:
        place(layer, held)
    if lost:
        # Keras refuses a new sub-layer on a built layer (its tracker is locked); a
        # head swapped after training lets the old head go, weights and all.
        (drop if layer.__dict__.get("built") else keep)(layer, lost)


def _record(layer):
    record = layer.__dict__.get("_layer_record")
    if record is None:
        record = _Record(order={}, replaced={}, left_out={})
        object.__setattr__(layer, "_layer_record", record)
    return record


def _placed(order, sub):
    entry = order.get(id(sub))
    return entry is not None and entry[1]() is sub  # (an id a dead layer had is no place)


def place(layer, subs):
    """Gives each of `subs` its place in `layer`'s order now, unless it has one.

    Keras's tracker adding a layer to `_layers` (an attribute set, a tracked
    list's `append`...).

    Args:
        layer: the owner.
        subs: the layers put into it.

    Returns:
        None.

    Example:
        >>> owner, d, e = mk.layers.Layer(), mk.layers.Dense(2), mk.layers.Dense(3)
        >>> mk.layers.layer_record.place(owner, [d])
        >>> mk.layers.layer_record.place(owner, [e])
        >>> [sub is d for sub in mk.layers.layer_record.in_keras_order(owner, [e, d])]
        [True, False]
    """
    record = _record(layer)
    order = record["order"]
    for sub in subs:
        record["left_out"].pop(id(sub), None)
        if not _placed(order, sub):
            order[id(sub)] = (next(_counter), weakref.ref(sub))


def keep(layer, subs):
    """Keeps `subs` in `layer`'s order after they left its attributes (as Keras does).

    Args:
        layer: the owner.
        subs: the layers an attribute (or a dict's key) held before.

    Returns:
        None.

    Example:
        >>> owner, d = mk.layers.Layer(), mk.layers.Dense(2)
        >>> mk.layers.layer_record.place(owner, [d])
        >>> mk.layers.layer_record.keep(owner, [d])
        >>> mk.layers.layer_record.in_keras_order(owner, [])[0] is d
        True
    """
    record = _record(layer)
    for sub in subs:
        entry = record["left_out"].get(id(sub))
        if entry is None or entry() is not sub:  # (one Keras never tracked stays so)
            record["replaced"][id(sub)] = sub


def drop(layer, subs):
    """Takes `subs` out of `layer`'s order: Keras's tracked list `pop`, `remove`, `del`.

    A dropped layer still held elsewhere in the layer's attributes is left
    out of `layers` and `weights`, as Keras's untracking leaves it.

    Args:
        layer: the owner.
        subs: the layers taken out.

    Returns:
        None.

    Example:
        >>> owner, d = mk.layers.Layer(), mk.layers.Dense(2)
        >>> mk.layers.layer_record.place(owner, [d])
        >>> mk.layers.layer_record.drop(owner, [d])
        >>> mk.layers.layer_record.in_keras_order(owner, [])
        []
    """
    record = _record(layer)
    for sub in subs:
        if _placed(record["order"], sub):
            del record["order"][id(sub)]
            record["replaced"].pop(id(sub), None)
            record["left_out"][id(sub)] = weakref.ref(sub)


def leave_out(layer, subs):
    """Marks `subs`, put into `layer`'s container in a way Keras does not follow, as untracked.

    Keras's tracked list has no `__setitem__` (nor slices), its dict no
    `setdefault`: a layer put in so is in no `_layers` list, so neither in
    `layers` nor in `weights`. A layer already placed keeps its place.

    Args:
        layer: the owner.
        subs: the layers put in.

    Returns:
        None.

    Example:
        >>> owner, d = mk.layers.Layer(), mk.layers.Dense(2)
        >>> mk.layers.layer_record.leave_out(owner, [d])
        >>> import warnings
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")
        ...     mk.layers.layer_record.in_keras_order(owner, [d])
        []
    """
    record = _record(layer)
    for sub in subs:
        if not _placed(record["order"], sub):
            record["left_out"][id(sub)] = weakref.ref(sub)


def held_before(layer):
    """The layers `layer`'s attributes held and let go of, which Keras keeps tracked.

    Args:
        layer: the owner.

    Returns:
        A list of Layers.

    Example:
        >>> owner, d = mk.layers.Layer(), mk.layers.Dense(2)
        >>> owner.d = d
        >>> del owner.d
        >>> mk.layers.layer_record.held_before(owner) == [d]
        True
    """
    record = layer.__dict__.get("_layer_record")
    return [] if record is None else list(record["replaced"].values())


class _Record(dict):
    """`{"order": {id: (number, weakref)}, "replaced": {id: layer}, "left_out": {id: weakref}}`.

    Keyed by `id` and holding weak references, it would neither pickle nor
    mean anything in a copy: a pickled or deep-copied record is rebuilt from
    its layers (the copies' own), numbered afresh in the same order.
    """

    def __reduce__(self):
        live = sorted(
            (number, ref()) for number, ref in self["order"].values() if ref() is not None
        )
        left_out = [ref() for ref in self["left_out"].values() if ref() is not None]
        return (
            _rebuilt,
            ([sub for _, sub in live], list(self["replaced"].values()), left_out),
        )


def _rebuilt(ordered, replaced, left_out=()):
    """A `_Record` of `ordered` layers (in assignment order), `replaced` and `left_out` ones."""
    order = {id(sub): (next(_counter), weakref.ref(sub)) for sub in ordered}
    return _Record(
        order=order,
        replaced={id(sub): sub for sub in replaced},
        left_out={id(sub): weakref.ref(sub) for sub in left_out},
    )


def in_keras_order(layer, reachable, replaced=True):
    """`layer`'s direct layers as Keras's `_layers` lists them.

    Args:
        layer: the owner.
        reachable: the layers its attributes hold now, in the attribute walk's order.
        replaced: whether to add the layers its attributes held before.

    Returns:
        A list: those (less the ones Keras's tracker never saw, see `leave_out`),
        and the layers its attributes held before (see the module), in the order
        they were put into `layer`.

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
    order, left_out, keyed, last = record["order"], record["left_out"], [], (-1, 0)
    for index, sub in enumerate(reachable):
        entry = order.get(id(sub))
        if entry is not None and entry[1]() is sub:
            last = (entry[0], 0)
        elif left_out.get(id(sub), _dead)() is sub:
            _warn_once(layer, sub, record, _LEFT_OUT)
            continue
        else:  # (put in where no record saw it: after the layer before it, a guess)
            _warn_once(layer, sub, record, _UNSEEN)
            last = (last[0], index + 1)
        keyed.append((last, sub))
    placed = {id(sub) for sub in reachable}
    for key, sub in record["replaced"].items() if replaced else ():
        if key not in placed:
            entry = order.get(key)
            keyed.append(((entry[0] if entry is not None else -1, 0), sub))
    keyed.sort(key=lambda pair: pair[0])
    return [sub for _, sub in keyed]


def _dead():
    return None


_LEFT_OUT = (
    "but was put into its list or dict by item or slice assignment, setdefault, |= or += "
    "through another name, or taken out with pop/remove/del and kept elsewhere, which "
    "Keras 3's tracker does not follow: as in Keras, it is not in the model's layers or "
    "weights (not trained, not in get_weights), though a weights file holds it. Put it in "
    "with append/insert/extend or set the attribute again."
)
_UNSEEN = (
    "in a container minikeras does not follow (a list put into a list with append, an "
    "OrderedDict or a list subclass changed after it was set): when it went in is unknown, "
    "so its place in the model's layers and weights (and the names of a Keras weights "
    "file's 'layers' group) may not be Keras 3's, and a weights file may load into the "
    "wrong layers. Put layers in with append/insert/extend on the attribute's own list "
    "(or d[key] = on its dict), or set the attribute again."
)


def _warn_once(layer, sub, record, why):
    """A `TrackingWarning` (once per layer) that `sub`, held by `layer`, is placed `why` says."""
    warned = record.setdefault("warned", set())
    if id(sub) in warned:
        return
    warned.add(id(sub))
    from minikeras.layers.tracking import warn

    warn(f"Layer '{sub.name}' is held by '{layer.name}' {why}")
