"""Keras's shape of each op node: which arguments its class holds, which its call takes.

Keras 3 records `keras.ops.mean(x, axis=-1)` as `Mean(axis=-1, keepdims=False)`
called on `x`: the arguments that are not tensors sit in the operation's
config, the rest in the graph's node. `KERAS_OPERATION_SPECS` says so for
each `minikeras.ops` function that has a Keras operation class: the Keras
module of the class and its config keys (each naming our parameter, or a
fixed value Keras writes that minikeras does not take). An op node made of
one of these functions is split that way (`split_arguments`), so that its
config and its node read as Keras writes them, and a `.keras` file carries
it both ways (the table itself is `layers.operation_table`). Functions not
listed (`dense`, `lstm`, `embedding_lookup`...) have no Keras operation;
their nodes keep every argument and save only to `.minikeras` files.
"""

import inspect

from minikeras import config as config_module
from minikeras.layers.call_helpers import contains
from minikeras.layers.input_layer import SymbolicTensor
from minikeras.layers.operation_table import KERAS_OPERATION_SPECS, Fixed

__all__ = ["KERAS_OPERATION_SPECS", "Fixed", "arguments_of", "split_arguments"]


def split_arguments(function_name, function, args, kwargs):
    """A call's arguments split as Keras records them: the class's config, the node's call.

    Args:
        function_name: a key of `KERAS_OPERATION_SPECS`.
        function: the op.
        args: the call's positional arguments.
        kwargs: its keyword arguments.

    Returns:
        `(options, args, kwargs)`: the config (Keras's keys, defaults filled
        in) and the arguments left for the call, positional up to the first
        parameter the config took, by keyword after it.

    Raises:
        TypeError: if the arguments do not fit the op's signature, or a
            config argument is symbolic (an axis cannot be).

    Example:
        >>> x = mk.Input((3,))
        >>> options, args, kwargs = mk.layers.operation_specs.split_arguments(
        ...     "mean", mk.ops.mean, (x,), {"axis": -1}
        ... )
        >>> options, args == (x,), kwargs
        ({'axis': -1, 'keepdims': False}, True, {})
    """
    config = KERAS_OPERATION_SPECS[function_name][1]
    bound = inspect.signature(function).bind(*args, **kwargs)
    bound.apply_defaults()
    arguments = dict(bound.arguments)
    options = {}
    for key, parameter in config.items():
        if isinstance(parameter, Fixed):
            options[key] = parameter.value
            continue
        value = arguments.pop(parameter)
        if contains(value, SymbolicTensor):
            raise TypeError(
                f"ops.{function_name}: `{parameter}` must be a value, not a symbolic tensor"
            )
        if key == "dtype" and value is not None:  # a name, as Keras keeps it (np.float16 too)
            value = config_module.standardize_dtype(value)
        options[key] = value
    taken = {parameter for parameter in config.values() if isinstance(parameter, str)}
    call_args, call_kwargs, positional = [], {}, True
    for name, parameter in inspect.signature(function).parameters.items():
        if name in taken:
            positional = False
        elif parameter.kind is parameter.VAR_POSITIONAL:
            call_args.extend(arguments.get(name, ()))
        elif parameter.kind is parameter.VAR_KEYWORD:
            call_kwargs.update(arguments.get(name, {}))
        elif positional and parameter.kind is not parameter.KEYWORD_ONLY:
            call_args.append(arguments[name])
        else:
            call_kwargs[name] = arguments[name]
    return options, tuple(call_args), call_kwargs


def arguments_of(function_name, options):
    """Our keyword arguments for a node's config (Keras's keys), fixed ones checked.

    Args:
        function_name: a key of `KERAS_OPERATION_SPECS`.
        options: the node's config, without its name.

    Returns:
        A dict of our parameters' values.

    Raises:
        TypeError: for a key Keras's class does not take.
        ValueError: for a fixed key holding another value than Keras's default.

    Example:
        >>> mk.layers.operation_specs.arguments_of("reshape", {"newshape": [-1, 2]})
        {'newshape': [-1, 2]}
    """
    config = KERAS_OPERATION_SPECS[function_name][1]
    unknown = sorted(set(options) - set(config))
    if unknown:
        raise TypeError(
            f"the operation of ops.{function_name} takes {sorted(config)}, got {unknown}"
        )
    found = {}
    for key, value in options.items():
        parameter = config[key]
        if isinstance(parameter, Fixed):
            if value != parameter.value:
                raise ValueError(
                    f"ops.{function_name}: minikeras takes only {key}={parameter.value!r}, "
                    f"got {value!r}"
                )
        else:
            found[parameter] = value
    return found
