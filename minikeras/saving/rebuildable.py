"""Whether a layer can be rebuilt from a file: its config complete.

A file names a layer's class and holds its config; loading finds the class
(built in, registered, or in `custom_objects`) and rebuilds the layer with
`cls.from_config(config)`. That works only when the config holds every
constructor argument. `rebuild_problem` says, before a file is written, why
a layer would not come back, and what to do instead.
"""

import inspect

from minikeras.layers import operation_node
from minikeras.layers.layer import Layer

__all__ = ["has_base_config", "init_arguments", "rebuild_problem"]

# Constructor arguments that every layer's base config holds.
_BASE_ARGUMENTS = {"self", "name", "trainable", "dtype"}


def init_arguments(cls):
    """The names of `cls.__init__`'s named parameters, and whether it takes `**kwargs`.

    Args:
        cls: a class.

    Returns:
        `(names, accepts_any)`; `([], True)` when no signature can be read.

    Example:
        >>> mk.saving.rebuildable.init_arguments(mk.layers.Dropout)[0][:2]
        ['self', 'rate']
    """
    try:
        parameters = inspect.signature(cls.__init__).parameters.values()
    except (TypeError, ValueError):
        return [], True
    variadic = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
    named = [p.name for p in parameters if p.kind not in variadic]
    accepts_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters)
    return named, accepts_any


def has_base_config(cls):
    """Whether `cls` keeps the base `get_config` of Layer or Model (no override of its own).

    Args:
        cls: a Layer subclass.

    Returns:
        A bool.

    Example:
        >>> mk.saving.rebuildable.has_base_config(mk.layers.Dense)
        False
    """
    from minikeras.models.model import Model

    return cls.get_config in (Layer.get_config, Model.get_config)


def _is_model(layer):
    from minikeras.models.model import Model

    return isinstance(layer, Model)


def rebuild_problem(layer):
    """Why `layer` could not be rebuilt from a file, or None if it can be.

    Args:
        layer: a Layer.

    Returns:
        A message naming the layer and what to do, or None.

    Example:
        >>> print(mk.saving.rebuildable.rebuild_problem(mk.layers.Dense(2)))
        None
    """
    cls = type(layer)
    if isinstance(layer, operation_node.OperationNode):
        return None  # (a minikeras op's node: found by its registered name)
    kind = "Model" if _is_model(layer) else "Layer"
    label = f"{kind} '{layer.name}' ({cls.__name__})"
    save_weights = (
        "Save its weights instead with model.save_weights(path), and load them with "
        "load_weights(path) into a model built by your code"
    )
    if has_base_config(cls) and getattr(layer, "_inputs", None) is None:
        try:
            config = layer.get_config()
        except NotImplementedError as error:
            return f"{error} {save_weights}."
        extra = [
            name
            for name in init_arguments(cls)[0]
            if name not in _BASE_ARGUMENTS and name not in config
        ]
        if extra:
            return (
                f"{label} takes constructor arguments {extra} that get_config() does not "
                f"return, so it cannot be rebuilt from its config. {save_weights}; or override "
                "get_config() to return them."
            )
    return None
