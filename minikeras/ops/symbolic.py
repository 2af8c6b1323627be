"""Ops on symbolic tensors: the public `minikeras.ops` functions, made to record graph nodes.

`ops.mean(x, axis=-1)` on an `Input` (a `SymbolicTensor`, which holds no
values) cannot compute anything; as in Keras 3, it returns a new symbolic
tensor and records the call, which a functional `Model` then runs on data.

Eager calls are the hot path, so nothing looks for symbolic tensors up
front: each public function is wrapped (`symbolic_aware`) in a function of
the same signature that calls it inside a `try`. A symbolic tensor refuses
to become an array by raising `SymbolicValueError` (a `TypeError`), and only
then does the wrapper hand the call to the handler the layers package binds
(`bind_symbolic_call`: ops cannot import layers, which are built on them).
The wrapper costs one Python call (about 20-40 ns), nothing more.
"""

import functools
import inspect

__all__ = ["SymbolicValueError", "bind_symbolic_call", "symbolic_aware"]


class SymbolicValueError(TypeError):
    """Raised when a symbolic tensor (a functional-API placeholder) is asked for values.

    A `TypeError`, as numpy raises for objects it cannot read. The public
    `minikeras.ops` functions catch it and record a graph node instead.

    Example:
        >>> try:
        ...     np.asarray(mk.Input((3,)))
        ... except mk.ops.symbolic.SymbolicValueError:
        ...     print("no values")
        no values
    """


# The layers package's handler of an op called on symbolic tensors (see bind_symbolic_call).
_handler = None


def bind_symbolic_call(handler):
    """Sets what a public op does when given symbolic tensors.

    `minikeras.layers` calls it once, on import.

    Args:
        handler: `handler(function_name, function, args, kwargs)`, returning
            the op's symbolic outputs.

    Returns:
        None.

    Example:
        >>> from minikeras.layers import operation_node
        >>> mk.ops.symbolic.bind_symbolic_call(operation_node.symbolic_op_call)  # done already
    """
    global _handler
    _handler = handler


def _dispatch(name, function, error, args, kwargs):
    if _handler is None:
        raise error
    return _handler(name, function, args, kwargs, error)


def symbolic_aware(function):
    """`function` with the same signature, recording a node when given symbolic tensors.

    The wrapper's source is written from the signature, so that a call
    passes its arguments on as they came (no `*args, **kwargs` packing,
    which costs more than the rest of the wrapper).

    Args:
        function: a public op (a plain Python function).

    Returns:
        The wrapped function (`__wrapped__` is `function`).

    Example:
        >>> def twice(x, factor=2):
        ...     return mk.ops.multiply(x, factor)
        >>> wrapped = mk.ops.symbolic.symbolic_aware(twice)
        >>> float(wrapped(1.5)), wrapped.__wrapped__ is twice
        (3.0, True)
    """
    signature = inspect.signature(function)
    parameters, passed, positional, keywords = [], [], [], []
    star = False
    for parameter in signature.parameters.values():
        name = parameter.name
        if parameter.kind is parameter.VAR_POSITIONAL:
            parameters.append(f"*{name}")
            passed.append(f"*{name}")
            positional.append(f"*{name}")
            star = True
        elif parameter.kind is parameter.VAR_KEYWORD:
            parameters.append(f"**{name}")
            passed.append(f"**{name}")
            keywords.append(f"**{name}")
        elif parameter.kind is parameter.KEYWORD_ONLY:
            if not star:
                parameters.append("*")
                star = True
            parameters.append(name if parameter.default is parameter.empty else f"{name}=None")
            passed.append(f"{name}={name}")
            keywords.append(f"{name!r}: {name}")
        else:  # (positional-or-keyword; the public ops have no positional-only ones)
            parameters.append(name if parameter.default is parameter.empty else f"{name}=None")
            passed.append(name)
            positional.append(name)
    args = f"({', '.join(positional)}{',' if len(positional) == 1 else ''})"
    source = (
        f"def {function.__name__}({', '.join(parameters)}):\n"
        f"    try:\n"
        f"        return _function({', '.join(passed)})\n"
        f"    except _SymbolicValueError as error:\n"
        f"        return _dispatch({function.__name__!r}, _function, error, "
        f"{args}, {{{', '.join(keywords)}}})\n"
    )
    namespace = {
        "_function": function,
        "_SymbolicValueError": SymbolicValueError,
        "_dispatch": _dispatch,
    }
    # (named in tracebacks as what it is; the source is built above from a signature)
    exec(compile(source, f"<symbolic_aware {function.__name__}>", "exec"), namespace)  # noqa: S102
    wrapper = namespace[function.__name__]
    # The real defaults (the source wrote None for each), so that the signature reads true;
    # from the signature, which sees through a decorator's `*args, **kwargs`.
    values = signature.parameters.values()
    defaults = [p.default for p in values if p.kind is p.POSITIONAL_OR_KEYWORD]
    wrapper.__defaults__ = tuple(d for d in defaults if d is not inspect.Parameter.empty) or None
    keyword_defaults = {p.name: p.default for p in values if p.kind is p.KEYWORD_ONLY}
    wrapper.__kwdefaults__ = {
        name: d for name, d in keyword_defaults.items() if d is not inspect.Parameter.empty
    } or None
    functools.update_wrapper(wrapper, function)
    # Where it is found by name (`minikeras.ops.relu`), so that pickle finds this object.
    wrapper.__module__ = "minikeras.ops"
    return wrapper
