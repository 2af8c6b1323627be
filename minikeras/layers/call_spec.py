"""How a layer call's arguments become the shapes that `build` and `compute_output_shape` take.

Keras's rule, followed here: the tensor arguments of `call` are found by
binding the call's arguments to its signature (a nested list or dict of
tensors counts as one argument). Then

- a `build` (or `compute_output_shape`) with one parameter gets the shape of
  the first tensor argument: a tuple, or a list / dict of tuples when the
  layer was called on a list / dict (`Add()([a, b])`);
- one with several parameters gets them by name, `<argument>_shape` for each
  `call` argument: `build(self, query_shape, value_shape)` for
  `call(self, query, value)`, so `layer(q, v)` and `layer(query=q, value=v)`
  both work.

A shape here is a tuple with `None` for each size not known yet (the batch
axis, or a sequence length declared `None` in `Input`).
"""

import inspect

import numpy as np

from minikeras.engine.tensor import Tensor
from minikeras.layers.input_layer import SymbolicTensor

__all__ = ["first_argument_name", "shape_of", "shapes_for", "tensor_arguments"]

# Arguments that are never inputs, even when they hold arrays.
_CONTEXT = frozenset({"mask", "training", "args", "kwargs"})
_TENSORS = (Tensor, SymbolicTensor, np.ndarray)
_signatures = {}


def _signature(function):
    key = getattr(function, "__func__", function)
    found = _signatures.get(key)
    if found is None:
        found = _signatures[key] = inspect.signature(function)
    return found


def first_argument_name(layer):
    """The name of the first parameter of `layer.call` (`inputs`, `query`, ...).

    Args:
        layer: a layer.

    Returns:
        The name, or None if `call` takes only `*args` / `**kwargs`.

    Example:
        >>> mk.layers.call_spec.first_argument_name(mk.layers.Dense(2))
        'inputs'
    """
    for parameter in _signature(layer.call).parameters.values():
        if parameter.kind in (parameter.POSITIONAL_ONLY, parameter.POSITIONAL_OR_KEYWORD):
            return parameter.name
        return None
    return None


def _is_tensor_structure(value):
    if isinstance(value, _TENSORS):
        return True
    if isinstance(value, (list, tuple)) and value:
        return all(item is None or _is_tensor_structure(item) for item in value)
    if isinstance(value, dict) and value:
        return all(item is None or _is_tensor_structure(item) for item in value.values())
    return False


def shape_of(value):
    """The shape of a tensor, or of each tensor in a (nested) list, tuple or dict.

    Args:
        value: a Tensor, SymbolicTensor, numpy array, None, or a structure of them.

    Returns:
        A tuple (None for None), or the same structure of tuples (a list for a tuple).

    Example:
        >>> mk.layers.call_spec.shape_of([np.zeros((2, 3)), mk.Input((4,))])
        [(2, 3), (None, 4)]
    """
    if value is None:
        return None
    if isinstance(value, (list, tuple)):
        return [shape_of(item) for item in value]
    if isinstance(value, dict):
        return {key: shape_of(item) for key, item in value.items()}
    return tuple(value.shape)


def tensor_arguments(layer, inputs, args, kwargs):
    """The tensor arguments of a call of `layer`, by the name `call` gives them, in order.

    Args:
        layer: the layer called.
        inputs: the first argument.
        args: the further positional arguments.
        kwargs: the keyword arguments.

    Returns:
        A dict from argument name to its value, for the arguments that are
        tensors or structures of tensors (never `mask` or `training`). The
        first argument is always included, under its name.

    Example:
        >>> mha = mk.layers.MultiHeadAttention(num_heads=1, key_dim=2)
        >>> q, v = mk.Input((3, 4)), mk.Input((5, 4))
        >>> list(mk.layers.call_spec.tensor_arguments(mha, q, (v,), {}))
        ['query', 'value']
    """
    signature = _signature(layer.call)
    try:
        bound = signature.bind(inputs, *args, **kwargs).arguments
    except TypeError as error:
        raise TypeError(
            f"{type(layer).__name__} '{layer.name}': the call does not match "
            f"call{signature}: {error}"
        ) from None
    names = list(bound)
    found = {names[0]: inputs}
    for name in names[1:]:
        value = bound[name]
        if name not in _CONTEXT and _is_tensor_structure(value):
            found[name] = value
    return found


def _parameters(function):
    kinds = (
        inspect.Parameter.POSITIONAL_ONLY,
        inspect.Parameter.POSITIONAL_OR_KEYWORD,
        inspect.Parameter.KEYWORD_ONLY,
    )
    return [p for p in _signature(function).parameters.values() if p.kind in kinds]


def shapes_for(function, layer, tensors):
    """The keyword arguments that give `function` (`build`, `compute_output_shape`) its shapes.

    Args:
        function: the bound method to call with the shapes.
        layer: the layer (for messages).
        tensors: what `tensor_arguments` returned.

    Returns:
        A dict to call `function(**shapes)` with (see the module).

    Raises:
        ValueError: if `function` names a shape that no call argument gives.

    Example:
        >>> dense = mk.layers.Dense(2)
        >>> tensors = {"inputs": mk.Input((3,))}
        >>> mk.layers.call_spec.shapes_for(dense.compute_output_shape, dense, tensors)
        {'input_shape': (None, 3)}
    """
    parameters = _parameters(function)
    if len(parameters) <= 1:
        first = next(iter(tensors.values()))
        return {parameters[0].name: shape_of(first)} if parameters else {}
    shapes = {}
    for parameter in parameters:
        name = parameter.name
        argument = name[: -len("_shape")] if name.endswith("_shape") else None
        if argument in tensors:
            shapes[name] = shape_of(tensors[argument])
        elif parameter.default is inspect.Parameter.empty:
            raise ValueError(
                f"{type(layer).__name__} '{layer.name}': {function.__name__}() takes "
                f"{name!r}, but the call gives no tensor argument {argument or name!r} "
                f"(tensor arguments: {list(tensors)}). With several parameters, each "
                "must be named <call argument>_shape."
            )
    return shapes
