"""Keras 3's default `get_config`: a layer's constructor arguments, captured when it is made.

A custom layer that writes no `get_config` can still be saved when its
constructor was given plain values (None, bools, numbers, strings, and lists,
tuples and dicts of them): `Layer.__new__` records them with their defaults
applied, and `Layer.get_config` returns them beside the base config. A layer
given anything else (another layer, an array, a function) has no captured
config, and `get_config` says so, naming the layer and the arguments.
"""

import inspect

__all__ = ["capture_arguments", "extra_arguments", "is_plain"]

_signatures = {}
_PLAIN = (str, int, float, bool, type(None))


def is_plain(value):
    """Whether `value` is a plain value a config can hold (see the module).

    Args:
        value: anything.

    Returns:
        A bool.

    Example:
        >>> mk.layers.auto_config.is_plain({"units": [4, 8], "name": None})
        True
        >>> mk.layers.auto_config.is_plain(np.ones(2))
        False
    """
    if isinstance(value, _PLAIN):
        return True
    if isinstance(value, (list, tuple)):
        return all(is_plain(item) for item in value)
    if isinstance(value, dict):
        return all(isinstance(key, str) and is_plain(item) for key, item in value.items())
    return False


def capture_arguments(cls, args, kwargs):
    """The constructor arguments of `cls(*args, **kwargs)` by name, defaults applied.

    Args:
        cls: the class being made.
        args: the positional arguments.
        kwargs: the keyword arguments.

    Returns:
        `(config, problem)`: the dict (without `name`, which the base config
        holds) and None, or None and the reason it cannot be captured.

    Example:
        >>> class Scaled(mk.layers.Layer):
        ...     def __init__(self, factor, offset=0.0, **kwargs):
        ...         super().__init__(**kwargs)
        >>> mk.layers.auto_config.capture_arguments(Scaled, (2.0,), {"name": "s"})
        ({'factor': 2.0, 'offset': 0.0}, None)
    """
    signature = _signatures.get(cls)
    if signature is None:
        signature = _signatures[cls] = inspect.signature(cls.__init__)
    try:
        bound = signature.bind(None, *args, **kwargs)
    except TypeError:
        return None, "its arguments do not match its __init__"
    bound.apply_defaults()
    config = {}
    parameters = list(signature.parameters.values())
    for parameter in parameters[1:]:
        value = bound.arguments.get(parameter.name)
        if parameter.kind is parameter.VAR_POSITIONAL:
            if value:
                return None, "it was given variadic positional arguments (*args)"
        elif parameter.kind is parameter.VAR_KEYWORD:
            config.update(value or {})
        elif parameter.kind is parameter.POSITIONAL_ONLY:
            return None, "its __init__ takes positional-only arguments"
        else:
            config[parameter.name] = value
    config.pop("name", None)
    odd = sorted(key for key, value in config.items() if not is_plain(value))
    if odd:
        return None, f"its arguments {odd} are not plain values (numbers, strings, lists)"
    return config, None


def extra_arguments(cls):
    """The constructor arguments of `cls` beyond the base layer's (`name`, `trainable`, ...).

    Args:
        cls: a layer class.

    Returns:
        A list of names.

    Example:
        >>> mk.layers.auto_config.extra_arguments(mk.layers.Dropout)
        ['rate', 'noise_shape', 'seed']
    """
    variadic = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
    base = {"self", "name", "trainable", "dtype"}
    return [
        p.name
        for p in inspect.signature(cls.__init__).parameters.values()
        if p.kind not in variadic and p.name not in base
    ]
