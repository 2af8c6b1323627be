"""The `get` / `serialize` / `deserialize` round trip shared by small config objects.

Regularizers and constraints (and any family like them) are either instances
of a base class with `get_config()`, or plain named functions. This module
holds the rules once: how such an object is written, read back and looked up.
"""

import inspect

from minikeras import serialization_lib

__all__ = ["deserialize_object", "get_object", "serialize_object"]


def serialize_object(obj, base_class, builtin_names, module):
    """Writes an object as Keras 3's entry, or a named function as its name.

    Args:
        obj: an instance of `base_class`, a named function, or None.
        base_class: the family's base class (it has `get_config()`).
        builtin_names: names that `deserialize` resolves to built-ins.
        module: the family's module name, for messages (`"constraints"`).

    Returns:
        A dict, a name, or None for None.

    Raises:
        ValueError: for a lambda or another object without a name or config, or
            a function named like a built-in (it would come back as the built-in).

    Example:
        >>> from minikeras.constraints import Constraint, NonNeg
        >>> mk.serialization.serialize_object(NonNeg(), Constraint, {"non_neg"}, "constraints")
        {'module': 'keras.constraints', 'class_name': 'NonNeg', 'config': {}, 'registered_name': None}
    """  # noqa: E501
    if obj is None:
        return None
    if isinstance(obj, base_class):
        return serialization_lib.family_entry(obj)
    name = getattr(obj, "__name__", None)
    if not callable(obj) or name is None or name == "<lambda>":
        raise ValueError(
            f"{module}.serialize: cannot save {obj!r:.100}; use a {base_class.__name__} "
            "subclass with get_config(), or a def-function with a name"
        )
    if name in builtin_names:
        raise ValueError(
            f"{module}.serialize: custom function {name!r} has the name of a built-in "
            "and would come back as the built-in; rename it"
        )
    return name


def deserialize_object(config, lookup, module, custom_objects=None, builtins=None):
    """Makes an object from `serialize_object`'s dict, or from a name.

    Args:
        config: a dict `{"class_name": ..., "config": {...}}` or a name.
        lookup: `lookup(name)` returns the class (or factory) called `name`.
        module: the family's module name, for messages.
        custom_objects: optional dict of name -> class, for a class of the
            user's that a file names (see `object_registry.names_custom_class`).
        builtins: optional dict of the family's built-in classes by name,
            which an entry without a `registered_name` names before any
            custom object of that name (as Keras reads it).

    Returns:
        The object: `cls.from_config(config)` for a dict, `cls()` for a name.

    Raises:
        ValueError: for a dict without `"class_name"` (and whatever `lookup` raises).

    Example:
        >>> from minikeras.constraints import MaxNorm
        >>> mk.serialization.deserialize_object(
        ...     {"class_name": "MaxNorm", "config": {}}, {"MaxNorm": MaxNorm}.get, "constraints"
        ... )
        MaxNorm(max_value=2, axis=0)
    """
    if isinstance(config, str):
        return lookup(config)()
    if not isinstance(config, dict) or "class_name" not in config:
        raise ValueError(
            f"{module}.deserialize: expected a name or a dict with 'class_name' and "
            f"'config', got {config!r}"
        )
    name = config.get("registered_name") or config["class_name"]
    kind = module[:-1] if module.endswith("s") else module  # ("regularizers" -> "regularizer")
    cls = serialization_lib.entry_class(config, custom_objects, kind, (builtins or {}).get)
    cls = cls or lookup(name)
    return cls.from_config(config.get("config") or {})


def get_object(identifier, deserialize, module):
    """Resolves what a layer argument may hold: None, a name, a dict, a class, a callable.

    Args:
        identifier: None (returned as None), a name or config dict (given to
            `deserialize`), a class (instantiated with defaults) or a callable
            (returned as it is).
        deserialize: the family's `deserialize`.
        module: the family's module name, for messages.

    Returns:
        A callable, or None.

    Raises:
        ValueError: for anything else.

    Example:
        >>> from minikeras import constraints
        >>> mk.serialization.get_object("non_neg", constraints.deserialize, "constraints")
        NonNeg()
    """
    if identifier is None:
        return None
    if isinstance(identifier, (str, dict)):
        return deserialize(identifier)
    if inspect.isclass(identifier):
        return identifier()
    if callable(identifier):
        return identifier
    raise ValueError(
        f"{module}.get: expected None, a name, a config dict or a callable, "
        f"got {identifier!r} of type {type(identifier).__name__}"
    )
