"""The one registry of custom objects: `register_keras_serializable` and its lookups.

A custom class or function is registered once, under `"package>Name"`, and
found by that name in every family (layers, losses, metrics, ...) alike;
`custom_object_scope` adds names for the duration of a block. Keras's public
names; `minikeras.serialization_lib` (which writes and reads configs with
this registry) re-exports them all.
"""

__all__ = [
    "CustomObjectScope",
    "custom_object_scope",
    "entry_class",
    "get_custom_objects",
    "get_registered_name",
    "get_registered_object",
    "is_registered",
    "names_custom_class",
    "register_keras_serializable",
    "scoped_objects",
    "unknown_custom_hint",
]

_GLOBAL_CUSTOM_OBJECTS = {}  # "package>Name" -> class or function
_GLOBAL_CUSTOM_NAMES = {}  # class or function -> "package>Name"
_scopes = []  # the custom_objects dicts of the custom_object_scope blocks open now


def register_keras_serializable(package="Custom", name=None):
    """Registers a class or function under `"package>name"`, so files can name it.

    A custom layer, model, loss, metric, optimizer, schedule or function is
    registered once, and every family finds it: `load_model`,
    `deserialize_keras_object` and each family's `deserialize` / `get`.
    Registering again under the same name replaces the entry (re-running a
    notebook cell is fine).

    Args:
        package: a namespace, to keep names of different projects apart.
        name: the name within the package; the object's `__name__` by default.

    Returns:
        A decorator that registers its argument and returns it unchanged.

    Raises:
        ValueError: if `package` or `name` is empty or holds `">"`, or the
            object has no name.

    Example:
        >>> @mk.saving.register_keras_serializable(package="Docs")
        ... class Scale(mk.layers.Layer):
        ...     def call(self, inputs):
        ...         return inputs * 2.0
        >>> mk.saving.get_registered_name(Scale)
        'Docs>Scale'
    """

    def decorator(obj):
        own = name or getattr(obj, "__name__", None)
        registered = f"{package}>{own}"
        for part in (package, own):
            if not isinstance(part, str) or not part or ">" in part:
                raise ValueError(
                    "register_keras_serializable: package and name must be non-empty strings "
                    f"without '>', got {registered!r}"
                )
        previous = _GLOBAL_CUSTOM_OBJECTS.get(registered)
        if previous is not None:
            _GLOBAL_CUSTOM_NAMES.pop(previous, None)
        _GLOBAL_CUSTOM_OBJECTS[registered] = obj
        _GLOBAL_CUSTOM_NAMES[obj] = registered
        return obj

    return decorator


def get_custom_objects():
    """The global dict of registered objects, by `"package>Name"` (Keras's).

    Adding to it registers an object under that key, as Keras allows.

    Returns:
        The registry's dict itself (not a copy).

    Example:
        >>> @mk.saving.register_keras_serializable(package="Docs")
        ... def double(x):
        ...     return 2 * x
        >>> mk.saving.get_custom_objects()["Docs>double"] is double
        True
    """
    return _GLOBAL_CUSTOM_OBJECTS


def is_registered(obj):
    """Whether `obj` was registered (by the decorator or through `get_custom_objects`).

    Args:
        obj: a class or function.

    Returns:
        A bool.

    Example:
        >>> mk.serialization_lib.is_registered(mk.layers.Dense)
        False
    """
    return obj in _GLOBAL_CUSTOM_NAMES or any(
        value is obj for value in _GLOBAL_CUSTOM_OBJECTS.values()
    )


def get_registered_name(obj):
    """The name a file uses for `obj`: its `"package>Name"` if registered, else its `__name__`.

    Args:
        obj: a class or function.

    Returns:
        A string.

    Example:
        >>> mk.saving.get_registered_name(mk.layers.Dense)
        'Dense'
    """
    if obj in _GLOBAL_CUSTOM_NAMES:
        return _GLOBAL_CUSTOM_NAMES[obj]
    for key, value in _GLOBAL_CUSTOM_OBJECTS.items():
        if value is obj:
            return key
    return getattr(obj, "__name__", None)


def scoped_objects(custom_objects=None):
    """The objects the open `custom_object_scope` blocks name, then `custom_objects` (which win).

    Args:
        custom_objects: optional dict of name -> class or function.

    Returns:
        A new dict of name -> object.

    Example:
        >>> from minikeras.object_registry import scoped_objects
        >>> with mk.saving.custom_object_scope({"f": len, "g": abs}):
        ...     sorted(scoped_objects({"g": max}).items(), key=lambda item: item[0])
        [('f', <built-in function len>), ('g', <built-in function max>)]
    """
    found = {}
    for scope in _scopes:
        found.update(scope)
    found.update(custom_objects or {})
    return found


def get_registered_object(name, custom_objects=None, module_objects=None):
    """The class or function `name` stands for, or None.

    Looks in `custom_objects`, then in the open `custom_object_scope`s, then
    among the registered objects, then in `module_objects`.

    Args:
        name: `"package>Name"`, or a plain name.
        custom_objects: optional dict of name -> object.
        module_objects: optional dict of name -> object (a family's built-ins).

    Returns:
        The object, or None.

    Example:
        >>> @mk.saving.register_keras_serializable(package="Docs")
        ... def triple(x):
        ...     return 3 * x
        >>> mk.saving.get_registered_object("Docs>triple") is triple
        True
    """
    scoped = scoped_objects(custom_objects)
    if name in scoped:
        return scoped[name]
    if name in _GLOBAL_CUSTOM_OBJECTS:
        return _GLOBAL_CUSTOM_OBJECTS[name]
    if module_objects and name in module_objects:
        return module_objects[name]
    return None


class CustomObjectScope:
    """Makes `custom_objects` visible to every deserialization inside a `with` block.

    Scopes nest: an inner scope adds to (and may override) the names of the
    outer ones (Keras 3's inner scope replaces them).

    Args:
        custom_objects: a dict of name -> class or function, or None.
        *more_custom_objects: further dicts, merged in order (Keras 2 took
            several; Keras 3 takes one).

    Example:
        >>> with mk.saving.custom_object_scope(custom_objects={"Twice": len}):
        ...     mk.saving.get_registered_object("Twice") is len
        True
    """

    def __init__(self, custom_objects, *more_custom_objects):
        self.custom_objects = {}
        for objects in (custom_objects, *more_custom_objects):
            self.custom_objects.update(objects or {})

    def __enter__(self):
        _scopes.append(self.custom_objects)
        return self

    def __exit__(self, *exc_info):
        _scopes.remove(self.custom_objects)
        return False


custom_object_scope = CustomObjectScope


def unknown_custom_hint(name):
    """What an "unknown ..." error ends with, for a name that may be the user's own.

    Args:
        name: the name the file or config gave (`"MyLoss"`, or `"package>name"`).

    Returns:
        A sentence starting with `". "`, naming both ways to make the name
        known; `""` for a name that is not a string.

    Example:
        >>> print(mk.object_registry.unknown_custom_hint("MyLoss")[:70])
        . If it is your own class or function, pass custom_objects={'MyLoss':
    """
    if not isinstance(name, str):
        return ""
    bare = name.split(">")[-1]
    return (
        f". If it is your own class or function, pass custom_objects={{{name!r}: {bare}}} "
        "when loading a file, or register it with "
        "@minikeras.saving.register_keras_serializable() (loading never imports code named "
        "in a file)"
    )


def _keras_module(module):
    """Whether a file's `module` is Keras's or minikeras's own (where built-ins live)."""
    return isinstance(module, str) and (
        module.split(".")[0] in ("keras", "minikeras") or module == "builtins"
    )


def names_custom_class(entry):
    """Whether a file's entry names a class that only the registry or `custom_objects` has.

    Keras writes a class that is not built in with its own `__name__` as its
    `registered_name` and its module (None for a script); such a class is
    looked for among registered and custom objects only, never among the
    built-ins, so that a user's `Dense` does not come back as minikeras's.

    Args:
        entry: a dict with `class_name` (and, from files, `module` and `registered_name`).

    Returns:
        A bool.

    Example:
        >>> mk.object_registry.names_custom_class(
        ...     {"module": None, "class_name": "Dense", "registered_name": "Dense"}
        ... )
        True
        >>> mk.object_registry.names_custom_class(
        ...     {"module": "keras.layers", "class_name": "Dense", "registered_name": None}
        ... )
        False
    """
    return (
        isinstance(entry, dict)
        and "module" in entry
        and not _keras_module(entry["module"])
        and entry.get("registered_name") == entry.get("class_name")
    )


def entry_class(entry, custom_objects, kind, builtin):
    """The class a family's entry names as Keras reads it, before the family's own lookup.

    A class of the user's (see `names_custom_class`) comes only from the registry,
    an open `custom_object_scope` or `custom_objects`, never from the built-ins; a
    built-in's entry (no `registered_name`) is the built-in, whatever
    `custom_objects` hold. Any other entry is left to the family (None).

    Args:
        entry: a file's or `serialize`'s dict.
        custom_objects: optional dict of name -> class, searched with the registry.
        kind: what the family calls it, for the message (`"loss class"`).
        builtin: `builtin(class_name)`, the family's built-in class of that name or None.

    Returns:
        The class, or None.

    Raises:
        ValueError: if `entry` names a class of the user's that neither the
            registry, an open `custom_object_scope` nor `custom_objects` has.

    Example:
        >>> entry = {"module": None, "class_name": "L2", "config": {}, "registered_name": "L2"}
        >>> mk.object_registry.entry_class(entry, None, "regularizer", {}.get)
        Traceback (most recent call last):
        ...
        ValueError: Unknown regularizer 'L2' (a class of your own, not minikeras's L2). If ...
    """
    if not names_custom_class(entry):
        return None if entry.get("registered_name") else builtin(entry["class_name"])
    name = entry["registered_name"]
    found = get_registered_object(name, custom_objects)
    if found is not None and is_registered(found) and get_registered_name(found) != name:
        found = None  # (a registered class of that bare name is another class: "pkg>Name")
    if found is None:
        raise ValueError(
            f"Unknown {kind} {name!r} (a class of your own, not minikeras's {name})"
            + unknown_custom_hint(name)
        )
    return found
