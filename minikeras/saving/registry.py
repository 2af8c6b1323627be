"""Layers in files: a layer's entry written and read, on the one serialization library.

`minikeras.serialization_lib` holds the registry and the generic entry
format; this module adds what saving needs of layers and models on top: the
check that a layer can be rebuilt from its entry (its class built in or
registered, its constructor arguments in its config), the reading of
function references (`Lambda`'s) and of custom objects named in configs, and
the building of a layer from its `build_config`.

Design note: `models` call into this module lazily (`Sequential.get_config`),
as Keras's models call `keras.saving`; nothing here is imported at import
time by layers or models.
"""

import contextlib
import contextvars
import inspect

from minikeras import object_registry, serialization_lib
from minikeras.layers import operation_node
from minikeras.layers.layer import Layer
from minikeras.saving import sharing
from minikeras.saving.archive import to_json
from minikeras.saving.functions import (
    _function,
    _is_function_reference,
    _keras_function,
    saved_function,
)
from minikeras.saving.rebuildable import has_base_config, init_arguments, rebuild_problem
from minikeras.serialization_lib import (
    CustomObjectScope,
    custom_object_scope,
    get_registered_name,
    get_registered_object,
    register_keras_serializable,
)

__all__ = [
    "CustomObjectScope",
    "custom_object_scope",
    "custom_objects_by_name",
    "deserialize_layer",
    "get_registered_name",
    "get_registered_object",
    "nested_configs",
    "register_keras_serializable",
    "register_serializable",
    "serialize_layer",
]

# The name of earlier versions, kept: `@register_serializable(package=...)`.
register_serializable = register_keras_serializable

# What the running serialize_layer is for: None (nothing running), "file" (every layer's
# config must rebuild it: checked before anything is written) or "config" (a get_config:
# that is left to from_config, as in Keras).
_PURPOSE = contextvars.ContextVar("minikeras_serialize_purpose", default=None)


@contextlib.contextmanager
def nested_configs():
    """Within it, `serialize_layer` does not check that each config can rebuild its layer.

    A model's `get_config` opens it, so that (as in Keras) a model holding a custom
    layer whose config misses a constructor argument still has a config; what
    `from_config` cannot rebuild fails there. Inside a `serialize_layer` (a file
    being written) it changes nothing.

    Returns:
        A context manager.

    Example:
        >>> class Twice(mk.layers.Layer):
        ...     def call(self, x):
        ...         return 2 * x
        >>> with mk.saving.registry.nested_configs():
        ...     mk.saving.serialize_layer(Twice(name="t"))["class_name"]
        'Twice'
    """
    token = _PURPOSE.set(_PURPOSE.get() or "config")
    try:
        yield
    finally:
        _PURPOSE.reset(token)


def custom_objects_by_name(custom_objects=None):
    """Every registered and custom object by each of its names (for losses, metrics...).

    Args:
        custom_objects: optional dict of name -> class or function.

    Returns:
        A dict: registered objects under `"Package>Name"` and their own
        `__name__`, then the open scopes' and `custom_objects` (which win).

    Example:
        >>> mk.saving.registry.custom_objects_by_name({"f": len})["f"] is len
        True
    """
    found = {}
    for registered, obj in serialization_lib.get_custom_objects().items():
        found[registered] = obj
        found.setdefault(getattr(obj, "__name__", registered), obj)
    found.update(object_registry.scoped_objects(custom_objects))
    return found


def _layer_class(name, custom_objects=None):
    """The layer class a file's name stands for: registered, custom or built in."""
    found = operation_node.operation_class(name) or get_registered_object(name, custom_objects)
    return found or _builtin_layer_class(name)


def _builtin_layer_class(name):
    found = None
    for module in ("keras.layers", "keras.models", "keras.utils"):  # (utils: FeatureSpace)
        found = found or serialization_lib.builtin_object(module, name)
    return found


# -------------------------------------------------------------------- layers


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
    layer, `build_config`. A class neither built in nor registered is named
    as Keras names it, by its `__name__` (as `registered_name` too) and its
    module; loading finds it again by that name in `custom_objects` (or an
    open `custom_object_scope`).

    Args:
        layer: a layer or model.

    Returns:
        A dict.

    Raises:
        ValueError: if its config cannot rebuild it (constructor arguments
            missing from `get_config`, outside `nested_configs`), if it holds
            a function no file can name (a lambda), or if the config is not JSON.

    Example:
        >>> from minikeras.layers import Dense
        >>> entry = mk.saving.serialize_layer(Dense(3, name="d"))
        >>> entry["module"], entry["class_name"], entry["registered_name"], entry["config"]["units"]
        ('keras.layers', 'Dense', None, 3)
    """
    purpose = _PURPOSE.get()
    problem = None if purpose == "config" else rebuild_problem(layer)
    if problem:
        raise ValueError(f"save: {problem}")
    cls = type(layer)
    token = _PURPOSE.set(purpose or "file")
    try:
        # A layer a config holds as it is (Keras's guide: `"first_layer": self.first_layer`)
        # is written as its own entry, as Keras writes it; from_config deserializes it.
        own = {key: _nested_layers(value) for key, value in layer.get_config().items()}
    finally:
        _PURPOSE.reset(token)
    config = {
        key: saved_function(value, f"save: {cls.__name__} '{layer.name}', {key!r}")
        for key, value in own.items()
    }
    to_json(config, f"the config of {cls.__name__} '{layer.name}'")
    public = serialization_lib.public_module(cls)
    entry = {  # Keras 3's entry: a built-in is named by its public module, without a registry name
        "module": serialization_lib.module_of(cls),
        "class_name": cls.__name__,
        "config": config,
        "registered_name": None if public else _registered_name(cls),
    }
    shape = layer.__dict__.get("_build_input_shape")
    if layer.built and shape is not None:
        # A stateful layer's batch size is part of it (its states have that size): Keras
        # keeps it in the build shape, and refuses a stateful layer built without one.
        kept = shape if getattr(layer, "stateful", False) else _batchless(shape)
        entry["build_config"] = _build_config(layer, kept)
    sharing.record_saved(layer, entry)  # (a layer that several models hold: Keras's id)
    return entry


def _nested_layers(value):
    if isinstance(value, Layer):
        return serialize_layer(value)
    if isinstance(value, (list, tuple)) and any(isinstance(item, Layer) for item in value):
        return [_nested_layers(item) for item in value]
    return value


def _registered_name(cls):
    if issubclass(cls, operation_node.OperationNode):
        return f"{operation_node.PACKAGE}>{cls.__name__}"
    return get_registered_name(cls)


def _build_config(layer, shape):
    """`{"input_shape": shape}`; Keras's `{"shapes_dict": {"query_shape": ...}}` for a layer
    built from a dict of shapes named after its build's arguments (MultiHeadAttention)."""
    if isinstance(shape, dict) and shape:
        try:
            parameters = inspect.signature(layer.build).parameters
        except (TypeError, ValueError):
            parameters = {}
        if all(f"{key}_shape" in parameters for key in shape):
            return {"shapes_dict": {f"{key}_shape": value for key, value in shape.items()}}
    return {"input_shape": shape}


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
        >>> layer = mk.saving.deserialize_layer(
        ...     mk.saving.serialize_layer(Dense(3, activation="relu"))
        ... )
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
    layer = sharing.loaded(entry)  # built already, at another model's entry for it
    if layer is None:
        layer = _new_layer(entry)
        sharing.record_loaded(entry, layer)
    return layer


def _new_layer(entry):
    class_name = entry["class_name"]
    registered = entry.get("registered_name") or class_name
    if not isinstance(registered, str):
        raise ValueError(f"layer {class_name!r} has an invalid registered_name {registered!r}")
    # As Keras reads an entry: a class of the user's only from the registry or custom
    # objects (a user's Dense is not minikeras's); a built-in's entry (no registered name)
    # the built-in first, a custom object of its name only for a layer minikeras lacks.
    custom = serialization_lib.names_custom_class(entry)
    if custom:
        cls = get_registered_object(registered)
    elif entry.get("registered_name") is None:
        cls = _builtin_layer_class(class_name) or _layer_class(class_name)
    else:
        cls = _layer_class(registered)
    if cls is None and registered != class_name:
        cls = _layer_class(class_name) if _in_scopes(class_name) else None
    if cls is None and not custom:
        # a built-in outside keras.layers (keras.src.applications.convnext.LayerScale)
        cls = serialization_lib.builtin_object(entry.get("module"), class_name)
    if not (inspect.isclass(cls) and issubclass(cls, Layer)):
        module = entry.get("module")
        where = f" (of module {module!r} where it was saved)" if isinstance(module, str) else ""
        raise ValueError(
            f"unknown layer class {registered!r}{where}: it is neither built in nor registered "
            f"in this process. Pass custom_objects={{{class_name!r}: {class_name}}} to the "
            "loading function (or load inside minikeras.saving.custom_object_scope), or "
            "import the module that defines it, decorated with "
            "@minikeras.saving.register_keras_serializable(); loading never imports code "
            "named in a file"
        )
    label = f"{class_name} '{entry['config'].get('name')}'"
    config = _resolve(entry["config"], label)
    try:
        layer = _from_config(cls, config)
    except Exception as error:
        raise ValueError(f"could not rebuild {label}: {type(error).__name__}: {error}") from error
    build_config = entry.get("build_config")
    if build_config is not None and not layer.built:
        # Checked here (a file may be hostile); the layer builds itself from the checked
        # config with build_from_config, as Keras's loader has it do.
        shapes = build_config.get("shapes_dict") if isinstance(build_config, dict) else None
        if (
            isinstance(shapes, dict)
            and shapes
            and all(isinstance(key, str) and key.endswith("_shape") for key in shapes)
        ):  # a layer built from several inputs: build(query_shape=..., value_shape=...)
            checked = {"shapes_dict": {key: _shape_from_json(v) for key, v in shapes.items()}}
        elif isinstance(build_config, dict) and "input_shape" in build_config:
            checked = {"input_shape": _shape_from_json(build_config["input_shape"])}
        else:
            raise ValueError(f"{label} has an invalid build_config {build_config!r:.200}")
        try:
            layer.build_from_config(checked)
        except Exception as error:
            shape = checked.get("input_shape", checked.get("shapes_dict"))
            raise ValueError(
                f"could not build {label} for input shape {shape}: {type(error).__name__}: {error}"
            ) from error
    return layer


def _in_scopes(name):
    return name in object_registry.scoped_objects()


def _resolve(config, label="the layer"):
    """Config values naming a custom function or (non-layer) class become those objects."""
    objects = custom_objects_by_name()
    resolved = {}
    for key, value in config.items():
        if key != "name" and isinstance(value, str) and value in objects:
            # (a custom function older files name by its bare name; a built-in
            # activation's name stays the built-in's, as in Keras)
            builtin = serialization_lib.builtin_object("keras.activations", value)
            if not inspect.isclass(objects[value]) and builtin is None:
                value = objects[value]
        elif _is_function_reference(value):
            value = _function(value, objects)
        elif isinstance(value, dict) and value.get("class_name") in ("function", "__lambda__"):
            value = _keras_function(value, objects, f"{label}, {key!r}")
        elif isinstance(value, dict) and isinstance(value.get("class_name"), str):
            cls = objects.get(value["class_name"])
            if inspect.isclass(cls) and not issubclass(cls, Layer) and hasattr(cls, "from_config"):
                value = cls.from_config(value.get("config") or {})
        resolved[key] = value
    return resolved


def _from_config(cls, config):
    from minikeras.models.model import Model

    base_from_config = (Layer.from_config.__func__, Model.from_config.__func__)
    functional = "layers" in config and "input_layers" in config
    if functional or not has_base_config(cls) or cls.from_config.__func__ not in base_from_config:
        return cls.from_config(config)
    # A class that keeps the base config and a constructor without `name=` (a
    # subclassed model's `__init__(self)`): construct it, then set the base attributes.
    named, accepts_any = init_arguments(cls)
    accepted = {k: v for k, v in config.items() if accepts_any or k in named}
    layer = cls(**accepted)
    if "name" in config and "name" not in accepted:
        layer.name = config["name"]
    if "trainable" in config and "trainable" not in accepted:
        layer.trainable = bool(config["trainable"])
    return layer
