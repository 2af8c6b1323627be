"""`clone_model`: the same architecture with new weights; `model_from_json` reads `to_json`."""

import json

from minikeras.layers.input_layer import Input, SymbolicTensor
from minikeras.models.model import Model
from minikeras.models.sequential import Sequential
from minikeras.tree import flatten, map_structure

__all__ = ["clone_model", "model_from_json"]


def _clone_layer(layer):
    return type(layer).from_config(layer.get_config())


def _new_input(tensor):
    return Input(batch_shape=tensor.shape, dtype=tensor.dtype, name=tensor.name)


def clone_model(
    model, input_tensors=None, clone_function=None, call_function=None, recursive=False, **kwargs
):
    """A new model with the same layers and calls, and freshly initialized weights.

    Sequential and functional models are rebuilt layer by layer:
    `clone_function(layer)` makes each new layer (by default
    `type(layer).from_config(layer.get_config())`), and a shared layer is
    cloned once. A subclassed model is rebuilt from its config.

    Args:
        model: a `Sequential`, functional or subclassed `Model`.
        input_tensors: new `Input` tensors to build on (functional and
            Sequential models); new ones like the model's by default.
        clone_function: `fn(layer) -> layer`, to change layers on the way (a
            fixed seed, another class).
        call_function: `fn(layer, *args, **kwargs) -> outputs`, how each new
            layer is called (functional models only).
        recursive: clone nested Sequential and functional models with
            `clone_model` (and these arguments) instead of `clone_function`.
        **kwargs: none are accepted (Keras's signature).

    Returns:
        The new model (built when the original has known input shapes).

    Raises:
        ValueError: for `call_function` on a Sequential model, or a
            `clone_function` or `input_tensors` for a subclassed model.
        TypeError: for unknown keyword arguments, or a `model` that is not a Model.

    Example:
        >>> model = mk.Sequential([mk.Input((3,)), mk.layers.Dense(2, name="out")])
        >>> copy = mk.models.clone_model(model)
        >>> copy.get_layer("out").units, copy.get_layer("out") is model.get_layer("out")
        (2, False)
    """
    if kwargs:
        raise TypeError(f"clone_model: unexpected keyword arguments {sorted(kwargs)}")
    if not isinstance(model, Model):
        raise TypeError(f"clone_model expects a Model, got {type(model).__name__}")
    options = {"clone_function": clone_function, "call_function": call_function}

    def clone(layer):
        if recursive and isinstance(layer, Model) and layer._inputs is not None:
            return clone_model(layer, recursive=True, **options)
        return (clone_function or _clone_layer)(layer)

    if isinstance(model, Sequential):
        if call_function is not None:
            raise ValueError("clone_model: `call_function` applies to functional models only")
        inputs = []
        if input_tensors is not None:
            inputs = [input_tensors[0] if isinstance(input_tensors, list) else input_tensors]
        elif model._inputs is not None:
            inputs = [_new_input(model._inputs)]
        layers = [clone(layer) for layer in model.layers]
        return Sequential([*inputs, *layers], name=model.name, trainable=model.trainable)
    if model._inputs is None:
        if clone_function is not None or input_tensors is not None or call_function is not None:
            raise ValueError(
                f"clone_model: '{model.name}' is a subclassed model, rebuilt from its config; "
                "clone_function, call_function and input_tensors apply to Sequential and "
                "functional models"
            )
        return type(model).from_config(model.get_config())
    return _clone_functional(model, input_tensors, clone, call_function)


def _clone_functional(model, input_tensors, clone, call_function):
    old_inputs = flatten(model._inputs)
    if input_tensors is None:
        new_inputs = [_new_input(tensor) for tensor in old_inputs]
    else:
        new_inputs = flatten(input_tensors)
        if len(new_inputs) != len(old_inputs):
            raise ValueError(
                f"clone_model: '{model.name}' has {len(old_inputs)} inputs, "
                f"got {len(new_inputs)} input_tensors"
            )
    tensors = {id(old): new for old, new in zip(old_inputs, new_inputs)}
    layers = {}

    def mapped(leaf):
        return tensors[id(leaf)] if isinstance(leaf, SymbolicTensor) else leaf

    for node in model._nodes:
        layer = layers.get(id(node.layer))
        if layer is None:
            layer = layers[id(node.layer)] = clone(node.layer)
        args = [map_structure(mapped, node.inputs), *map_structure(mapped, node.args)]
        kwargs = map_structure(mapped, node.kwargs)
        outputs = call_function(layer, *args, **kwargs) if call_function else layer(*args, **kwargs)
        old, new = flatten(node.outputs), flatten(outputs)
        tensors.update({id(a): b for a, b in zip(old, new)})
    structure = iter(new_inputs)
    inputs = map_structure(lambda _: next(structure), model._inputs)
    outputs = map_structure(mapped, model._outputs)
    return Model(inputs, outputs, name=model.name, trainable=model.trainable)


def model_from_json(json_string, custom_objects=None):
    """Makes a model (unbuilt weights: fresh) from the JSON that `Model.to_json` wrote.

    Args:
        json_string: the JSON text.
        custom_objects: optional dict of name -> class or function, for
            classes and functions that are not registered.

    Returns:
        The model.

    Raises:
        ValueError: if the JSON is malformed or names an unknown class.

    Example:
        >>> model = mk.Sequential([mk.Input((3,)), mk.layers.Dense(2)])
        >>> mk.models.model_from_json(model.to_json()).output_shape
        (None, 2)
    """
    from minikeras.saving import deserialize_layer

    try:
        entry = json.loads(json_string)
    except (TypeError, ValueError) as error:
        raise ValueError(f"model_from_json: the text is not JSON: {error}") from None
    return deserialize_layer(entry, custom_objects)
