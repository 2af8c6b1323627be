"""Functions in files: minikeras's references to them, and Keras's entries for them.

A layer's config names a function (a `Lambda`'s, its `output_shape` or
`mask`) in one of two shapes. minikeras writes `{"module", "function_name"}`;
Keras writes `{"module", "class_name": "function", "config": name,
"registered_name"}`, with `"builtins"` as the module of a function its Lambda
holds, and a Python lambda as bytecode (`"__lambda__"`). Both are read here
without importing anything: registered and custom functions by name, then
the functions of `minikeras.ops` and `minikeras.activations` (and numpy's
ufuncs). Bytecode is refused, never run.
"""

import inspect

import numpy as np

from minikeras.builtin_functions import builtin_function
from minikeras.serialization_lib import get_registered_name, get_registered_object, is_registered

__all__ = ["keras_function_entry", "saved_function"]

_REGISTER = (
    "@minikeras.saving.register_keras_serializable() (for Keras to load the file too, "
    "register it there under the same name: @keras.saving.register_keras_serializable())"
)


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
            found = objects.get(key)
            if callable(found) and not _another_registered(found, name, module):
                return found
        found = builtin_function(module, name)
        if found is not None:
            return found
    raise ValueError(
        f"the config names the function {module}.{name}, which is not registered; loading "
        "never imports code named in a file. Decorate the function with "
        "@minikeras.saving.register_keras_serializable(), or pass "
        f"custom_objects={{{name!r}: {name}}} to load_model"
    )


def _another_registered(found, name, module):
    """Whether `found`, met under the bare `name`, is a registered function of another
    module: not the unregistered function of that name the reference means."""
    return (
        is_registered(found)
        and get_registered_name(found) != name
        and getattr(found, "__module__", None) != module
    )


# Where Keras finds a function its entry names by module: `builtins` (what Keras's
# Lambda writes) means Keras's activations, as in Keras's own lookup.
_KERAS_FUNCTION_MODULES = {
    "builtins": "minikeras.activations",
    "keras.activations": "minikeras.activations",
    "keras.ops": "minikeras.ops",
}


def _keras_function(entry, objects, where):
    """The function a Keras entry `{"class_name": "function", "config": name, ...}` names.

    Found as Keras finds it, without importing anything: registered or custom
    objects by the name (`"package>name"` or a plain name), then the
    built-ins. A Python lambda saved as bytecode (`"__lambda__"`) is refused:
    minikeras never runs code from a file.
    """
    if entry.get("class_name") == "__lambda__":
        raise ValueError(
            f"{where} is a Python lambda saved as bytecode, which minikeras never runs "
            "(safe_mode=False changes nothing). Define it as a named module-level function, "
            "register it under the same name in Keras (@keras.saving."
            "register_keras_serializable()) and in minikeras (@minikeras.saving."
            "register_keras_serializable()), and save the model again"
        )
    name, module = entry.get("config"), entry.get("module")
    if not isinstance(name, str):
        raise ValueError(f"{where}: a function entry needs its name in 'config', got {name!r:.60}")
    found = objects.get(name)
    if found is None and ">" not in name:  # (Keras up to 3.6 wrote a registered name bare)
        found = next((f for key, f in objects.items() if key.endswith(">" + name)), None)
    if found is None and module in _KERAS_FUNCTION_MODULES:
        found = builtin_function(_KERAS_FUNCTION_MODULES[module], name)
    if found is None and module == "builtins":  # (Keras's Lambda writes keras.ops.square so)
        found = builtin_function("minikeras.ops", name)
    if callable(found) and not inspect.isclass(found):
        return found
    bare = name.split(">")[-1]
    raise ValueError(
        f"{where} names the function {name!r}, which is not registered (loading never "
        "imports code named in a file): decorate it with @minikeras.saving."
        f"register_keras_serializable(), or pass custom_objects={{{name!r}: {bare}}}"
    )


def saved_function(value, where):
    """A layer config's value as a file holds it: a function by the name that finds it again.

    A registered function (a lambda or a closure too, registered under a name)
    becomes a reference to its registered name; a reference to a module-level
    function (`{"module", "function_name"}`, what `Lambda.get_config` gives
    for one) is kept as it is, registered or not: as in Keras, loading finds
    an unregistered one again by its name in `custom_objects` (and never
    imports its module); anything else is kept as it is.

    Args:
        value: a config value.
        where: the layer and key, for the message (`"Lambda 'f', 'function'"`).

    Returns:
        The value to write.

    Raises:
        ValueError: for a function no file can name (a lambda, a nested
            function, a callable object that is not registered); the message
            says how to make it saveable.

    Example:
        >>> mk.saving.functions.saved_function(lambda x: x, "Lambda 'f', 'function'")
        Traceback (most recent call last):
        ...
        ValueError: Lambda 'f', 'function' is a Python lambda, which a file cannot hold: ...
    """
    if _is_function_reference(value):
        return value
    if not callable(value) or inspect.isclass(value) or hasattr(value, "get_config"):
        return value
    if is_registered(value):  # found again by its registered name, whatever it is
        return {"module": getattr(value, "__module__", None) or "builtins",
                "function_name": get_registered_name(value)}  # fmt: skip
    name, qualname = getattr(value, "__name__", None), getattr(value, "__qualname__", None)
    if name == "<lambda>":
        what, name = "a Python lambda", "my_function"
    elif isinstance(qualname, str) and "<locals>" in qualname:
        what = f"the function {qualname} (defined inside another function)"
    else:
        what, name = f"a callable {type(value).__name__} object", "my_function"
    raise ValueError(
        f"{where} is {what}, which a file cannot hold: minikeras writes a function by a "
        "name that finds it again, never as code (Keras writes a lambda's bytecode, "
        "which it loads only with safe_mode=False). Define it as a named module-level "
        f"function, `def {name}(x): ...`, decorated with {_REGISTER}"
    )


def keras_function_entry(reference, objects):
    """A minikeras function reference `{"module", "function_name"}` as Keras names a function.

    Args:
        reference: the reference a Lambda's config holds.
        objects: the registered and custom objects by name
            (`registry.custom_objects_by_name()`).

    Returns:
        Keras's entry (`{"module", "class_name": "function", "config",
        "registered_name"}`; a function of the user's that is not registered
        by its bare name, as Keras writes one), or `reference` unchanged for
        a function Keras cannot name (a numpy ufunc).

    Example:
        >>> mk.saving.functions.keras_function_entry(
        ...     {"module": "minikeras.ops.nn", "function_name": "relu"}, {})["module"]
        'keras.ops'
    """
    try:
        function = _function(reference, objects)
    except ValueError:  # a user's function, not registered: Keras finds it by its name too
        return _bare_entry(reference["function_name"])
    registered = get_registered_name(function)
    if registered and ">" in registered and get_registered_object(registered) is function:
        # As Keras's Lambda writes a registered function.
        return {"module": "builtins", "class_name": "function", "config": registered,
                "registered_name": "function"}  # fmt: skip
    module, name = reference["module"], reference["function_name"]
    for keras_module, package in (("keras.ops", "minikeras.ops"),
                                  ("keras.activations", "minikeras.activations")):  # fmt: skip
        if _within(module, package) and builtin_function(package, name) is function:
            return {"module": keras_module, "class_name": "function", "config": name,
                    "registered_name": None}  # fmt: skip
    return reference if isinstance(function, np.ufunc) else _bare_entry(name)


def _bare_entry(name):
    """Keras's entry for a function of the user's that is not registered: its name, which
    Keras's loader (and minikeras's) finds in `custom_objects`."""
    return {"module": "builtins", "class_name": "function", "config": name,
            "registered_name": "function"}  # fmt: skip


def _within(module, package):
    return module == package or module.startswith(package + ".")
