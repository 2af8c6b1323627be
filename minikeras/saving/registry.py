"""Naming classes in files: the registry, and layer configs in and out.

A file names each layer's class; loading looks the name up among the
built-in layers and models, the registered classes and the `custom_objects`
given to `load_model`. It never imports a module named in a file (that would
run its code): a custom class must be registered, which its own module does
when the user imports it.

Design note: `models` call into this module lazily (`Sequential.get_config`),
as Keras's models call `keras.saving`; nothing here is imported at import
time by layers or models.
"""

import contextlib
import inspect

from minikeras.layers.layer import Layer
from minikeras.saving.archive import to_json

__all__ = [
    "custom_object_scope",
    "custom_objects_by_name",
    "deserialize_layer",
    "get_registered_name",
    "get_registered_object",
    "register_serializable",
    "serialize_layer",
]

_REGISTERED = {}  # "Package>Name" -> class or function
_NAMES = {}  # class or function -> "Package>Name"
_scopes = []  # custom_objects dicts of the deserializations in progress
# Constructor arguments that every layer's base config holds.
_BASE_ARGUMENTS = {"self", "name", "trainable", "dtype"}


def register_serializable(package="Custom", name=None):
    """Registers a class (or function) under `"package>name"`, so files can name it.

    A custom layer or model must be registered to be saved with
    `Model.save`: the file holds the registered name, and `load_model` finds
    the class by it, once the module that defines it has been imported.
    Registering again under the same name replaces the entry (re-running a
    notebook cell is fine).

    Args:
        package: a namespace, to keep names of different projects apart.
        name: the name within the package; the class's `__name__` by default.

    Returns:
        A decorator that registers its argument and returns it unchanged.

    Raises:
        ValueError: if `package` or `name` is empty, or holds `">"`.

    Example:
        >>> @register_serializable(package="Docs")
        ... class Scale(minikeras.layers.Layer):
        ...     def call(self, inputs):
        ...         return inputs * 2.0
        >>> get_registered_name(Scale)
        'Docs>Scale'
    """

    def decorator(obj):
        registered = f"{package}>{name or obj.__name__}"
        for part in (package, name or obj.__name__):
            if not isinstance(part, str) or not part or ">" in part:
                raise ValueError(
                    f"register_serializable: package and name must be non-empty strings "
                    f"without '>', got {registered!r}"
                )
        previous = _REGISTERED.get(registered)
        if previous is not None:
            _NAMES.pop(previous, None)
        _REGISTERED[registered] = obj
        _NAMES[obj] = registered
        return obj

    return decorator


def _builtin_classes():
    from minikeras import layers, models

    found = {}
    for module in (layers, models):
        for value in vars(module).values():
            if inspect.isclass(value) and issubclass(value, Layer):
                found[value.__name__] = value
    return found


def get_registered_name(obj):
    """The name a file uses for `obj`: `"Package>Name"`, or a built-in class's name.

    Args:
        obj: a class or function.

    Returns:
        The name, or None if `obj` is neither registered nor built in.

    Example:
        >>> from minikeras.layers import Dense
        >>> get_registered_name(Dense), get_registered_name(len)
        ('Dense', None)
    """
    if obj in _NAMES:
        return _NAMES[obj]
    name = getattr(obj, "__name__", None)
    return name if _builtin_classes().get(name) is obj else None


def get_registered_object(name, custom_objects=None):
    """The class or function a file's name stands for, or None.

    Looks in `custom_objects`, then among the registered objects, then among
    the built-in layers and models.

    Args:
        name: `"Package>Name"`, or a class name.
        custom_objects: optional dict of name -> class or function.

    Returns:
        The object, or None.

    Example:
        >>> get_registered_object("Dense").__name__
        'Dense'
    """
    for objects in (custom_objects or {}, *reversed(_scopes)):
        if name in objects:
            return objects[name]
    if name in _REGISTERED:
        return _REGISTERED[name]
    return _builtin_classes().get(name)


def custom_objects_by_name(custom_objects=None):
    """Every registered and custom object by each of its names (for losses, metrics...).

    Args:
        custom_objects: optional dict of name -> class or function.

    Returns:
        A dict: registered objects under `"Package>Name"` and their own
        `__name__`, then `custom_objects` (which win).

    Example:
        >>> custom_objects_by_name({"f": len})["f"] is len
        True
    """
    found = {}
    for registered, obj in _REGISTERED.items():
        found[registered] = obj
        found.setdefault(getattr(obj, "__name__", registered), obj)
    for scope in _scopes:
        found.update(scope)
    found.update(custom_objects or {})
    return found


@contextlib.contextmanager
def custom_object_scope(custom_objects):
    """Makes `custom_objects` visible to the deserializations inside the block.

    Args:
        custom_objects: a dict of name -> class or function, or None.

    Returns:
        A context manager.

    Example:
        >>> with custom_object_scope({"Twice": len}):
        ...     get_registered_object("Twice") is len
        True
    """
    _scopes.append(dict(custom_objects or {}))
    try:
        yield
    finally:
        _scopes.pop()


# -------------------------------------------------------------------- layers


def _init_arguments(cls):
    try:
        parameters = inspect.signature(cls.__init__).parameters.values()
    except (TypeError, ValueError):
        return [], True
    variadic = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
    named = [p.name for p in parameters if p.kind not in variadic]
    accepts_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters)
    return named, accepts_any


def _has_base_config(cls):
    from minikeras.models.model import Model

    return cls.get_config in (Layer.get_config, Model.get_config)


def _is_model(layer):
    from minikeras.models.model import Model

    return isinstance(layer, Model)


def _rebuild_problem(layer):
    """Why `layer` could not be rebuilt from a file, or None if it can be."""
    cls = type(layer)
    kind = "Model" if _is_model(layer) else "Layer"
    label = f"{kind} '{layer.name}' ({cls.__name__})"
    save_weights = (
        "Save its weights instead with model.save_weights(path), and load them with "
        "load_weights(path) into a model built by your code"
    )
    if get_registered_name(cls) is None:
        return (
            f"{label} is not a built-in {kind.lower()} and its class is not registered, so a "
            f"file cannot name it (loading never imports code named in a file). {save_weights}; "
            "or decorate the class with @minikeras.saving.register_serializable()."
        )
    if _has_base_config(cls) and getattr(layer, "_inputs", None) is None:
        extra = [name for name in _init_arguments(cls)[0] if name not in _BASE_ARGUMENTS]
        if extra:
            return (
                f"{label} takes constructor arguments {extra} that get_config() does not "
                f"return, so it cannot be rebuilt from its config. {save_weights}; or override "
                "get_config() to return them."
            )
    return None


def _batchless(shape):
    """A recorded build shape with None for the batch axis (a list of shapes item by item)."""
    if (
        isinstance(shape, (tuple, list))
        and shape
        and all(s is None or isinstance(s, int) for s in shape)
    ):
        return [None, *shape[1:]]
    if isinstance(shape, (tuple, list)):
        return [_batchless(s) for s in shape]
    if isinstance(shape, dict):
        return {key: _batchless(s) for key, s in shape.items()}
    return shape


def _shape_from_json(value):
    if isinstance(value, list) and all(s is None or type(s) is int for s in value):
        if any(s is not None and s < 0 for s in value):
            raise ValueError(f"invalid input shape {value}")
        return tuple(value)
    if isinstance(value, list) and value:
        return [_shape_from_json(s) for s in value]
    if isinstance(value, dict):
        return {key: _shape_from_json(s) for key, s in value.items()}
    raise ValueError(f"invalid input shape {value!r}")


def serialize_layer(layer):
    """A layer as a JSON-friendly dict: its class's name, its config, its build shape.

    The dict has Keras's keys: `module` (for information only: loading never
    imports it), `class_name`, `config`, `registered_name` and, for a built
    layer, `build_config`.

    Args:
        layer: a built-in layer or model, or one of a registered class.

    Returns:
        A dict.

    Raises:
        ValueError: if the class is neither built in nor registered, if its
            config cannot rebuild it (constructor arguments missing from
            `get_config`), or if the config is not JSON.

    Example:
        >>> from minikeras.layers import Dense
        >>> entry = serialize_layer(Dense(3, name="d"))
        >>> entry["class_name"], entry["registered_name"], entry["config"]["units"]
        ('Dense', 'Dense', 3)
    """
    problem = _rebuild_problem(layer)
    if problem:
        raise ValueError(f"save: {problem}")
    cls = type(layer)
    config = layer.get_config()
    to_json(config, f"the config of {cls.__name__} '{layer.name}'")
    objects = custom_objects_by_name()
    for key, value in config.items():
        if _is_function_reference(value):
            try:
                _function(value, objects)
            except ValueError as error:
                raise ValueError(f"save: {cls.__name__} '{layer.name}', {key!r}: {error}") from None
    entry = {
        "module": cls.__module__,
        "class_name": cls.__name__,
        "config": config,
        "registered_name": get_registered_name(cls),
    }
    shape = layer.__dict__.get("_build_input_shape")
    if layer.built and shape is not None:
        entry["build_config"] = {"input_shape": _batchless(shape)}
    return entry


def deserialize_layer(entry, custom_objects=None):
    """Makes the layer (built, if `build_config` says how) that `serialize_layer` described.

    Args:
        entry: the dict from `serialize_layer`.
        custom_objects: optional dict of name -> class or function, used for
            the class and for string or `{"class_name": ...}` values of the config.

    Returns:
        A new layer.

    Raises:
        ValueError: if the entry is malformed, its class is unknown, or the
            class cannot be rebuilt from the config (the cause is chained).

    Example:
        >>> from minikeras.layers import Dense
        >>> layer = deserialize_layer(serialize_layer(Dense(3, activation="relu")))
        >>> type(layer).__name__, layer.units, layer.activation.__name__
        ('Dense', 3, 'relu')
    """
    with custom_object_scope(custom_objects):
        return _deserialize(entry)


def _deserialize(entry):
    if not (
        isinstance(entry, dict)
        and isinstance(entry.get("class_name"), str)
        and isinstance(entry.get("config"), dict)
    ):
        raise ValueError(
            f"expected a layer entry with 'class_name' and 'config', got {entry!r:.200}"
        )
    class_name = entry["class_name"]
    registered = entry.get("registered_name") or class_name
    if not isinstance(registered, str):
        raise ValueError(f"layer {class_name!r} has an invalid registered_name {registered!r}")
    cls = get_registered_object(registered)
    if cls is None and registered != class_name:
        cls = get_registered_object(class_name) if _in_scopes(class_name) else None
    if not (inspect.isclass(cls) and issubclass(cls, Layer)):
        raise ValueError(
            f"unknown layer class {registered!r}: import the module that defines it (with "
            "@minikeras.saving.register_serializable()), or pass "
            f"custom_objects={{{class_name!r}: {class_name}}}"
        )
    config = _resolve(entry["config"])
    label = f"{class_name} '{config.get('name')}'"
    try:
        layer = _from_config(cls, config)
    except Exception as error:
        raise ValueError(f"could not rebuild {label}: {type(error).__name__}: {error}") from error
    build_config = entry.get("build_config")
    if build_config is not None and not layer.built:
        if not isinstance(build_config, dict) or "input_shape" not in build_config:
            raise ValueError(f"{label} has an invalid build_config {build_config!r:.200}")
        shape = _shape_from_json(build_config["input_shape"])
        try:
            layer.build(shape)
        except Exception as error:
            raise ValueError(
                f"could not build {label} for input shape {shape}: {type(error).__name__}: {error}"
            ) from error
    return layer


def _in_scopes(name):
    return any(name in scope for scope in _scopes)


def _resolve(config):
    """Config values naming a custom function or (non-layer) class become those objects."""
    objects = custom_objects_by_name()
    resolved = {}
    for key, value in config.items():
        if key != "name" and isinstance(value, str) and value in objects:
            if not inspect.isclass(objects[value]):
                value = objects[value]
        elif _is_function_reference(value):
            value = _function(value, objects)
        elif isinstance(value, dict) and isinstance(value.get("class_name"), str):
            cls = objects.get(value["class_name"])
            if inspect.isclass(cls) and not issubclass(cls, Layer) and hasattr(cls, "from_config"):
                value = cls.from_config(value.get("config") or {})
        resolved[key] = value
    return resolved


def _is_function_reference(value):
    # How a layer such as Lambda names a module-level function in its config.
    return isinstance(value, dict) and set(value) == {"module", "function_name"}


def _function(reference, objects):
    """The function a `{"module", "function_name"}` reference names, found without importing.

    Registered and custom functions are found by name; otherwise only the
    functions of `minikeras.ops` and `minikeras.activations`, and numpy's
    ufuncs: importing a module named in a file, or fetching any attribute of
    it, could run its author's code.
    """
    module, name = reference["module"], reference["function_name"]
    if isinstance(module, str) and isinstance(name, str):
        for key in (f"{module}.{name}", name):
            if callable(objects.get(key)):
                return objects[key]
        found = _builtin_function(module, name)
        if found is not None:
            return found
    raise ValueError(
        f"the config names the function {module}.{name}, which is not registered; loading "
        "never imports code named in a file. Decorate the function with "
        "@minikeras.saving.register_serializable(), or pass "
        f"custom_objects={{{name!r}: {name}}} to load_model"
    )


def _builtin_function(module, name):
    import numpy as np

    from minikeras import activations, ops

    if "." in name:
        return None
    if module == "numpy":
        candidate = getattr(np, name, None)
        return candidate if isinstance(candidate, np.ufunc) else None
    for package in (ops, activations):
        if module == package.__name__ or module.startswith(package.__name__ + "."):
            candidate = getattr(package, name, None)
            if (
                callable(candidate)
                and getattr(candidate, "__module__", None) == module
                and getattr(candidate, "__qualname__", None) == name
            ):
                return candidate
    return None


def _from_config(cls, config):
    from minikeras.models.model import Model

    base_from_config = (Layer.from_config.__func__, Model.from_config.__func__)
    functional = "layers" in config and "input_layers" in config
    if functional or not _has_base_config(cls) or cls.from_config.__func__ not in base_from_config:
        return cls.from_config(config)
    # A class that keeps the base config and a constructor without `name=` (a
    # subclassed model's `__init__(self)`): construct it, then set the base attributes.
    named, accepts_any = _init_arguments(cls)
    accepted = {k: v for k, v in config.items() if accepts_any or k in named}
    layer = cls(**accepted)
    if "name" in config and "name" not in accepted:
        layer.name = config["name"]
    if "trainable" in config and "trainable" not in accepted:
        layer.trainable = bool(config["trainable"])
    return layer
