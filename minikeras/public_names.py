"""Which objects are minikeras's built-ins, and the public module a file names each by.

A built-in class or function is written under its public Keras module
(`keras.layers`, `keras.losses`, ...; ConvNeXt's `LayerScale` and
`StochasticDepth` under `keras.src.applications.convnext`, InceptionResNetV2's
`CustomScaleLayer` under `keras.src.applications.inception_resnet_v2`, where
Keras has them) and found again there by its public name; anything else is the user's,
written with its own module and name.
`minikeras.serialization_lib` re-exports these names.
"""

import importlib

from minikeras.object_registry import get_registered_name

__all__ = ["builtin_object", "family_entry", "module_of", "public_module"]

# Where built-in objects are found: the public module's family -> minikeras package.
_FAMILIES = {
    "layers": "minikeras.layers",
    "models": "minikeras.models",
    "losses": "minikeras.losses",
    "metrics": "minikeras.metrics",
    "optimizers": "minikeras.optimizers",
    "optimizers.schedules": "minikeras.optimizers.schedules",
    "activations": "minikeras.activations",
    "initializers": "minikeras.initializers",
    "regularizers": "minikeras.regularizers",
    "constraints": "minikeras.constraints",
    "random": "minikeras.random",
    "utils": "minikeras.utils",
    "applications.convnext": "minikeras.applications.convnext",  # its LayerScale...
    "applications.inception_resnet_v2": "minikeras.applications.inception_resnet_v2",
}
# Families whose classes Keras writes under a private module (it exports none of them).
_KERAS_MODULES = {
    "applications.convnext": "keras.src.applications.convnext",
    "applications.inception_resnet_v2": "keras.src.applications.inception_resnet_v2",
}
# Keras's names for classes that minikeras spells otherwise.
_ALIASES = {"Functional": ("models", "Model")}


# -------------------------------------------------------------- public names


def _family_package(family):
    return importlib.import_module(_FAMILIES[family])


def _family_of(obj):
    """The family whose package exports `obj` under its own name, or None."""
    module = getattr(obj, "__module__", None) or ""
    name = getattr(obj, "__name__", None)
    for family, package_name in _FAMILIES.items():
        if module == package_name or module.startswith(package_name + "."):
            package = _family_package(family)
            if getattr(package, name, None) is obj:
                return family
    # Defined among the layers, exported under utils, as in Keras (FeatureSpace).
    if module.startswith("minikeras.") and getattr(_family_package("utils"), name, None) is obj:
        return "utils"
    return None


def public_module(obj):
    """The public module a built-in class or function is written under (`keras.layers`, ...).

    Args:
        obj: a class or function.

    Returns:
        `"keras.<family>"`, or None if `obj` is not a minikeras built-in.

    Example:
        >>> mk.serialization_lib.public_module(mk.layers.Dense)
        'keras.layers'
        >>> mk.serialization_lib.public_module(mk.activations.relu)
        'keras.activations'
    """
    family = _family_of(obj)
    return None if family is None else _KERAS_MODULES.get(family, f"keras.{family}")


def module_of(obj):
    """The `module` an entry names for `obj`: its public module if built in, else its own
    module (None for a script's `__main__`, as Keras writes it).

    Args:
        obj: a class or function.

    Returns:
        A module name, or None.

    Example:
        >>> mk.serialization_lib.module_of(mk.layers.Dense)
        'keras.layers'
    """
    module = public_module(obj) or getattr(obj, "__module__", None)
    return None if module == "__main__" else module


def family_entry(obj):
    """A family's entry for an object with `get_config` (a loss, an initializer, ...).

    Keras 3's long form, `{"module", "class_name", "config",
    "registered_name"}`: a built-in names its public module
    (`keras.initializers`, ...) and no registered name; a class of the user's
    its own module and its registered name (else its own `__name__`), which
    loading needs to find it among registered and custom objects, not among
    the built-ins. Every reader also takes the short `{"class_name",
    "config"}` form that minikeras wrote before.

    Args:
        obj: the object.

    Returns:
        A dict.

    Example:
        >>> mk.serialization_lib.family_entry(mk.regularizers.L2(0.5))
        {'module': 'keras.regularizers', 'class_name': 'L2', 'config': {'l2': 0.5}, 'registered_name': None}
    """  # noqa: E501
    cls = type(obj)
    builtin = public_module(cls) is not None
    return {
        "module": module_of(cls),
        "class_name": cls.__name__,
        "config": obj.get_config(),
        "registered_name": None if builtin else get_registered_name(cls),
    }


def builtin_object(module, name):
    """The minikeras built-in that `module` and `name` (as a file writes them) stand for.

    Found by its public name in the family the module names (`keras.layers`,
    `keras.src.losses.losses`, `minikeras.optimizers`, ...), or None.

    Args:
        module: the module a config names.
        name: the class or function name.

    Returns:
        The class or function, or None.

    Example:
        >>> mk.serialization_lib.builtin_object("keras.src.layers.core.dense", "Dense")
        <class 'minikeras.layers.dense.Dense'>
        >>> mk.serialization_lib.builtin_object("my_project", "Dense") is None
        True
    """
    if name in _ALIASES:
        family, name = _ALIASES[name]
        return getattr(_family_package(family), name)
    if not isinstance(module, str):
        return None
    for prefix in ("keras.src.", "minikeras.", "keras."):
        if module.startswith(prefix):
            module = module[len(prefix) :]
            break
    candidates = [family for family in _FAMILIES if module == family]
    candidates += [f for f in _FAMILIES if module.startswith(f + ".") and f not in candidates]
    if module == "keras":
        candidates = ["models", "layers"]
    for family in sorted(candidates, key=len, reverse=True):
        package = _family_package(family)
        found = getattr(package, name, None)
        public = getattr(package, "__all__", None)
        if found is not None and (name in public if public is not None else name[:1] != "_"):
            return found
    return None
