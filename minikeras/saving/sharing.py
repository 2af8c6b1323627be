"""One layer held by several models of a file: Keras's `shared_object_id`.

A model's config holds the full entry of each layer it calls, and a nested
model's entry holds its own layers' entries. A layer (or a model) that two
models of the tree hold, such as a model used directly and also inside
another model, is therefore written twice. As Keras 3 does, each of those
entries gets the same `"shared_object_id"` (minikeras numbers them 1, 2, ...
in the order they are found, so that a file does not change from run to run),
and loading builds the layer once, at its first entry, and reuses it at the
others: one set of weights, as in the model that was saved.

Keras 3.15 writes such files but cannot load them (its loader misnumbers the
shared model's calls, or builds the layer twice and finds no weights for the
second copy). minikeras reads the files it writes itself; a Keras file whose
layer entries share an id is refused by `check_keras_config`, naming the
layer and the models that hold it.
"""

import contextlib
import json
import threading

__all__ = [
    "KERAS_CANNOT",
    "check_keras_config",
    "loaded",
    "record_loaded",
    "record_saved",
    "shared_layers",
    "sharing_scope",
]

KEY = "shared_object_id"


class _State(threading.local):
    saved = None  # id(layer) -> [layer, its first entry, shared id or None] while saving
    loaded = None  # shared id -> layer while loading


_state = _State()


@contextlib.contextmanager
def sharing_scope():
    """A block in which layers seen twice are marked (saving) and built once (loading).

    A scope already open is kept (a save inside a save shares its records).

    Returns:
        A context manager.

    Example:
        >>> inner = mk.Sequential([mk.Input((2,)), mk.layers.Dense(2)], name="inner")
        >>> middle = mk.Sequential([mk.Input((2,)), inner], name="middle")
        >>> x = mk.Input((2,), name="x")
        >>> outer = mk.Model(x, mk.layers.Add(name="add")([inner(x), middle(x)]), name="outer")
        >>> with mk.saving.sharing.sharing_scope():
        ...     entries = mk.saving.serialize_layer(outer)["config"]["layers"]
        >>> [(entry["name"], entry.get("shared_object_id")) for entry in entries]
        [('x', None), ('inner', 2), ('middle', None), ('add', None)]
        >>> entries[2]["config"]["layers"][-1]["shared_object_id"]  # inner, within middle
        2
    """
    if _state.saved is not None:
        yield
        return
    _state.saved, _state.loaded = {}, {}
    try:
        yield
    finally:
        _state.saved = _state.loaded = None


def record_saved(layer, entry):
    """Notes that `entry` describes `layer`; marks it and the first one if seen before.

    Args:
        layer: the layer just serialized.
        entry: its entry (a dict, later written as it is).

    Returns:
        None.

    Example:
        >>> dense, first, second = mk.layers.Dense(2), {}, {}
        >>> with mk.saving.sharing.sharing_scope():
        ...     mk.saving.sharing.record_saved(dense, first)
        ...     mk.saving.sharing.record_saved(dense, second)
        >>> first, second
        ({'shared_object_id': 1}, {'shared_object_id': 1})
    """
    seen = _state.saved
    if seen is None:
        return
    found = seen.get(id(layer))
    if found is None:  # (the layer is kept too: its id stays its own while the scope lasts)
        seen[id(layer)] = [layer, entry, None]
        return
    if found[2] is None:
        found[2] = 1 + sum(1 for _, _, shared in seen.values() if shared is not None)
        found[1][KEY] = found[2]
    entry[KEY] = found[2]


def loaded(entry):
    """The layer already built for an entry's `shared_object_id`, or None.

    Args:
        entry: a layer entry read from a file.

    Returns:
        The layer, or None (no scope, no id, or not built yet).

    Raises:
        ValueError: if the id is not an integer.

    Example:
        >>> mk.saving.sharing.loaded({"class_name": "Dense", "shared_object_id": 1}) is None
        True
    """
    shared = entry.get(KEY)
    if shared is None or _state.loaded is None:
        return None
    if type(shared) is not int:
        raise ValueError(f"{KEY} must be an integer, got {shared!r:.60}")
    return _state.loaded.get(shared)


def record_loaded(entry, layer):
    """Keeps `layer` as the one that later entries with the same `shared_object_id` stand for.

    Args:
        entry: the layer's entry, read from a file.
        layer: the layer built from it.

    Returns:
        None.

    Example:
        >>> dense, entry = mk.layers.Dense(2), {"shared_object_id": 7}
        >>> with mk.saving.sharing.sharing_scope():
        ...     mk.saving.sharing.record_loaded(entry, dense)
        ...     mk.saving.sharing.loaded(entry) is dense
        True
    """
    shared = entry.get(KEY)
    if shared is not None and _state.loaded is not None:
        _state.loaded.setdefault(shared, layer)


def _held(entry, owner, found, enclosing=()):
    """Every layer entry of a model entry's tree: `(entry, name of the model holding it,
    ids of the layer entries it is inside)`, parents before their own layers."""
    config = entry.get("config") if isinstance(entry, dict) else None
    layers = config.get("layers") if isinstance(config, dict) else None
    if not isinstance(layers, list):
        return
    name = config.get("name", owner)
    for layer in layers:
        if isinstance(layer, dict):
            found.append((layer, name, enclosing))
            _held(layer, name, found, (*enclosing, id(layer)))


def _without_ids(value):
    if isinstance(value, dict):
        return {key: _without_ids(item) for key, item in value.items() if key != KEY}
    if isinstance(value, list):
        return [_without_ids(item) for item in value]
    return value


def _signature(entry):
    # The same layer's entries agree but for the ids (and, outside the config, its calls).
    config = _without_ids(entry.get("config"))
    return json.dumps([entry.get("class_name"), config], sort_keys=True, default=repr)


def shared_layers(entry):
    """The layers a model entry's tree holds in several models, each with those models.

    A layer's entries there are marked with a `shared_object_id` (by Keras
    3: all of them, or all but the first; by minikeras: all of them). A
    layer of a shared model is not listed again.

    Args:
        entry: a model's entry (`config.json` of a `.keras` file).

    Returns:
        A list of strings, such as `"Functional 'inner' (in 'outer', 'middle')"`.

    Example:
        >>> def dense(**shared):
        ...     return {"class_name": "Dense", "config": {"name": "d", "units": 2}, **shared}
        >>> def model(name, layers):
        ...     return {"class_name": "Functional", "config": {"name": name, "layers": layers}}
        >>> mk.saving.sharing.shared_layers(
        ...     model("outer", [dense(), model("m", [dense(shared_object_id=5)])])
        ... )
        ["Dense 'd' (in 'outer', 'm')"]
    """
    held = []
    _held(entry, None, held)
    if not any(KEY in layer for layer, _, _ in held):
        return []
    marked = {_signature(layer) for layer, _, _ in held if KEY in layer}
    places = {}  # signature -> [(entry, owner, enclosing)], in the order of the walk
    for item in held:
        signature = _signature(item[0])
        if signature in marked:
            places.setdefault(signature, []).append(item)
    found, reported = [], set()
    for items in places.values():
        if len(items) < 2 or all(reported.intersection(enclosing) for _, _, enclosing in items):
            continue  # held once, or a layer of a shared model listed already
        reported.update(id(layer) for layer, _, _ in items)
        layer = items[0][0]
        name = (layer.get("config") or {}).get("name")
        models = ", ".join(repr(owner) for _, owner, _ in items)
        found.append(f"{layer.get('class_name')} '{name}' (in {models})")
    return found


def check_keras_config(entry):
    """Refuses a Keras model entry in which one layer is held by several models.

    Keras 3.15 writes such a file but cannot load it (see the module);
    minikeras refuses it, naming the layer and the models, instead of failing
    later on the weights the file holds once.

    Args:
        entry: the model's entry (`config.json` of a `.keras` file).

    Returns:
        None.

    Raises:
        ValueError: naming each shared layer and the models holding it.

    Example:
        >>> mk.saving.sharing.check_keras_config({"class_name": "Functional", "config": {}})
    """
    shared = shared_layers(entry)
    if shared:
        raise ValueError(
            f"one layer is held by several models of the file: {'; '.join(shared)}. "
            f"{KERAS_CANNOT} Build the model in code and load its weights from a "
            ".weights.h5 file (Keras: model.save_weights('model.weights.h5'); minikeras: "
            "model.load_weights(...)), which holds them once"
        )


KERAS_CANNOT = (
    "Keras writes its entry in each of them (marked with a shared_object_id) but cannot "
    "load such a file, its own included (Keras 3.15.1)."
)
