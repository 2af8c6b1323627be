"""One registry and one way to write and read every saved object, in Keras 3's shape.

Every object a file holds (a layer, a model, a loss, a metric, an
optimizer, a schedule, an activation, an initializer, a regularizer, a
constraint) is written by `serialize_keras_object` as

    {"module": "keras.layers", "class_name": "Dense", "config": {...},
     "registered_name": None, "build_config": {...}}

and read back by `deserialize_keras_object`. Built-in objects are named by
their public module (`keras.<family>`, as Keras writes them, so that Keras can
read them too) and found again among minikeras's own public names; a custom
class or function is registered once with `register_keras_serializable` and
found by its `"package>Name"` in every family alike. Configs may hold other
objects (a layer inside a layer's config), tuples and numpy arrays; they
round-trip.

Loading never imports a module named in a file, and never runs code a file
holds: a Python lambda in a file is refused.

The registry itself (`register_keras_serializable`, `custom_object_scope`,
...) is `minikeras.object_registry`, and which objects are built-ins (and
under which public module) is `minikeras.public_names`; both are
re-exported here.

The family modules (`activations`, `losses`, ...) keep their Keras-named
`serialize` / `deserialize` / `get`, written on this module. It imports none of
them at import time: it sits below them in the package.
"""

import types

import numpy as np

from minikeras.object_registry import (
    CustomObjectScope,
    custom_object_scope,
    entry_class,
    get_custom_objects,
    get_registered_name,
    get_registered_object,
    is_registered,
    names_custom_class,
    register_keras_serializable,
    unknown_custom_hint,
)
from minikeras.public_names import (
    _FAMILIES,
    builtin_object,
    family_entry,
    module_of,
    public_module,
)

__all__ = [
    "CustomObjectScope",
    "builtin_object",
    "custom_object_scope",
    "deserialize_keras_object",
    "entry_class",
    "family_entry",
    "get_custom_objects",
    "get_registered_name",
    "get_registered_object",
    "is_registered",
    "module_of",
    "names_custom_class",
    "public_module",
    "register_keras_serializable",
    "serialize_keras_object",
    "unknown_custom_hint",
]

_PLAIN = (str, int, float, bool, type(None))


# --------------------------------------------------------------- serialize


def serialize_keras_object(obj):
    """An object as JSON-friendly data, in Keras 3's shape (see the module).

    Plain values stay as they are; lists, tuples and dicts are written item
    by item (a tuple is a list once in JSON, as in Keras); a numpy array
    becomes `{"class_name": "__numpy__", ...}`; a function its name and module; any
    object with `get_config` its class, module and config (a layer also its
    `build_config`).

    Args:
        obj: the object.

    Returns:
        JSON-friendly data.

    Raises:
        ValueError: for a lambda, or an object that is neither built in,
            registered, nor has `get_config`.

    Example:
        >>> entry = mk.saving.serialize_keras_object(mk.layers.Dense(3, name="d"))
        >>> entry["module"], entry["class_name"], entry["config"]["units"]
        ('keras.layers', 'Dense', 3)
    """
    if isinstance(obj, _PLAIN):
        return obj
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, np.dtype):
        return str(obj)
    if isinstance(obj, np.ndarray):
        value = obj.tolist()
        return {"class_name": "__numpy__", "config": {"value": value, "dtype": str(obj.dtype)}}
    if isinstance(obj, (list, tuple)):  # as Keras: a tuple stays one (a list in JSON)
        return type(obj)(serialize_keras_object(item) for item in obj)
    if isinstance(obj, dict):
        return {key: serialize_keras_object(value) for key, value in obj.items()}
    if isinstance(obj, (types.FunctionType, types.BuiltinFunctionType, np.ufunc)):
        return _serialize_function(obj)
    if hasattr(obj, "get_config"):
        return _serialize_instance(obj)
    raise ValueError(
        f"serialize_keras_object: cannot write {obj!r:.100} of type {type(obj).__name__}: "
        "give it get_config() (and register its class), or use a plain value"
    )


def _serialize_function(function):
    name = getattr(function, "__name__", None)
    if name is None or name == "<lambda>":
        raise ValueError(
            "serialize_keras_object: a lambda cannot be saved (loading never runs code from "
            "a file); use a def-function, registered with register_keras_serializable"
        )
    module = public_module(function)
    if module is not None:
        return {"module": module, "class_name": "function", "config": name,
                "registered_name": "function"}  # fmt: skip
    registered = get_registered_name(function) if is_registered(function) else None
    return {
        "module": module_of(function),
        "class_name": "function",
        "config": name,
        "registered_name": registered,
    }


def _serialize_instance(obj):
    cls = type(obj)
    module = public_module(cls)
    entry = {
        "module": module_of(cls),
        "class_name": cls.__name__,
        "config": serialize_keras_object(obj.get_config()),
        "registered_name": None if module else get_registered_name(cls),
    }
    build_config = getattr(obj, "get_build_config", None)
    if callable(build_config):
        found = build_config()
        if found is not None:
            entry["build_config"] = serialize_keras_object(found)
    return entry


# ------------------------------------------------------------- deserialize


def deserialize_keras_object(config, custom_objects=None, safe_mode=True, **kwargs):
    """Makes the object that `serialize_keras_object` wrote (see the module).

    Also reads the shorter `{"class_name", "config"}` entries of older files,
    and, given `module_objects`, a bare name.

    Args:
        config: what `serialize_keras_object` returned (or a name).
        custom_objects: optional dict of name -> class or function, searched
            before the registered objects.
        safe_mode: kept for Keras's signature: lambdas are always refused.
        **kwargs: `module_objects`, a dict of the family's built-ins by name,
            for names and entries without a module.

    Returns:
        The object.

    Raises:
        ValueError: for an unknown class or function (the message says how to
            register it), a lambda, or a malformed entry.

    Example:
        >>> entry = mk.saving.serialize_keras_object(mk.layers.Dense(3, activation="relu"))
        >>> layer = mk.saving.deserialize_keras_object(entry)
        >>> type(layer).__name__, layer.units, layer.activation.__name__
        ('Dense', 3, 'relu')
    """
    module_objects = kwargs.pop("module_objects", None)
    if kwargs:
        raise TypeError(f"deserialize_keras_object: unexpected arguments {sorted(kwargs)}")

    def again(value):
        return deserialize_keras_object(value, custom_objects, safe_mode)

    if isinstance(config, str):
        found = get_registered_object(config, custom_objects, module_objects)
        if found is not None or module_objects is not None:
            return _require(found, config, None, "object")
        return config
    if isinstance(config, _PLAIN):
        return config
    if isinstance(config, (list, tuple)):
        return [again(item) for item in config]
    if not isinstance(config, dict):
        raise ValueError(f"deserialize_keras_object: cannot read {config!r:.100}")
    class_name = config.get("class_name")
    if not isinstance(class_name, str) or "config" not in config:
        return {key: again(value) for key, value in config.items()}
    inner = config["config"]
    if class_name == "__tuple__":
        return tuple(again(item) for item in _field(inner, "value", list))
    if class_name == "__numpy__":
        return np.array(_field(inner, "value", (list, int, float, bool)), dtype=inner["dtype"])
    if class_name == "__lambda__":
        raise ValueError(
            "deserialize_keras_object: the file holds a Python lambda, and loading never "
            "runs code from a file; rebuild the object in your code"
        )
    module = config.get("module")
    registered = config.get("registered_name")
    if class_name == "function":
        if not isinstance(inner, str):
            raise ValueError(f"a function entry needs its name as 'config', got {inner!r:.100}")
        found = _lookup(registered, inner, module, custom_objects, module_objects, False)
        return _require(found, inner, module, "function")
    if names_custom_class(config):  # (a user's class: never a built-in of the same name)
        cls = get_registered_object(registered, custom_objects)
    else:
        cls = _lookup(registered, class_name, module, custom_objects, module_objects)
    cls = _require(cls, class_name, module, "class", registered, names_custom_class(config))
    if isinstance(cls, types.FunctionType):
        return cls
    if not hasattr(cls, "from_config"):
        raise ValueError(f"{class_name} has no from_config(), so it cannot be rebuilt")
    if not isinstance(inner, dict):
        raise ValueError(f"the entry of {class_name} needs a dict 'config', got {inner!r:.100}")
    with CustomObjectScope(custom_objects):
        instance = cls.from_config(inner)
        build_config = config.get("build_config")
        if build_config and hasattr(instance, "build_from_config") and not instance.built:
            instance.build_from_config(again(build_config))
    return instance


def _field(inner, key, kinds):
    if not isinstance(inner, dict) or not isinstance(inner.get(key), kinds):
        raise ValueError(f"a malformed entry: expected {key!r} in {inner!r:.100}")
    return inner[key]


def _lookup(registered, name, module, custom_objects, module_objects, a_class=True):
    # As Keras looks up: a class by its registered name, so that a built-in's entry (none)
    # is the built-in whatever custom_objects hold; a function by its name, custom first.
    if a_class and registered is None and module is not None:
        found = builtin_object(module, name)
        if found is not None:
            return found
    for key in (registered, name):
        if isinstance(key, str):
            found = get_registered_object(key, custom_objects)
            if found is not None:
                return found
    found = builtin_object(module, name)
    if found is None and module_objects is not None:
        found = module_objects.get(name)
    if found is None and module is None:  # an older entry without a module: any family
        for family in _FAMILIES:
            found = builtin_object(family, name)
            if found is not None:
                break
    return found


def _require(found, name, module, kind, registered=None, custom=False):
    if found is not None:
        return found
    where = f" from {module}" if module else ""
    key = registered if isinstance(registered, str) and registered else name
    what = (
        "a class of your own, not a built-in of that name"
        if custom
        else "minikeras has no built-in of that name"
    )
    raise ValueError(
        f"unknown {kind} {key!r}{where}: {what}. If it is "
        "your own, import the module that defines it (decorated with "
        "@minikeras.saving.register_keras_serializable()), or pass "
        f"custom_objects={{{name!r}: ...}}; loading never imports code named in a file"
    )
