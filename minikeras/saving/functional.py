"""A functional model's config, in Keras's shape: its layers and their inbound nodes.

    {"name": ..., "trainable": ..., "dtype": ...,
     "layers": [{"class_name": "InputLayer", "name": "x", "config": {"batch_shape": [null, 3], ...},
                 "inbound_nodes": []},
                {"class_name": "Dense", "name": "dense", "config": {...},
                 "inbound_nodes": [{"args": [<tensor>], "kwargs": {}}]}, ...],
     "input_layers": <tensor or structure of tensors>,
     "output_layers": <tensor or structure of tensors>}

A slice or `...` in a call's arguments (an op node's index) is written as
Keras writes it, `{"class_name": "__slice__", "config": {"start", "stop",
"step"}}` and `{"class_name": "__ellipsis__", "config": {}}`, and so is a
constant array or Tensor (`x * np.array([...])`): `{"class_name":
"__numpy__"` or `"__tensor__", "config": {"value", "dtype"}}`. A tensor is
written as Keras writes it, `{"class_name": "__keras_tensor__",
"config": {"shape", "dtype", "keras_history": [layer name, node index, tensor
index]}}`: the `tensor index`-th leaf of the outputs of that layer's
`node index`-th call in this model. Rebuilding replays the calls in an order
where each call's inputs exist.
"""

import numpy as np

from minikeras.engine.tensor import Tensor
from minikeras.layers.input_layer import Input, SymbolicTensor
from minikeras.layers.inputs import input_layer_of, keras_dtype_name
from minikeras.layers.layer import Layer
from minikeras.saving.registry import custom_object_scope, deserialize_layer, serialize_layer
from minikeras.tree import flatten

__all__ = ["functional_config", "functional_from_config"]

_TENSOR = "__keras_tensor__"
_SLICE, _ELLIPSIS = "__slice__", "__ellipsis__"
_NUMPY, _CONSTANT = "__numpy__", "__tensor__"


def functional_config(model):
    """The config of a functional `Model(inputs, outputs)` (see the module).

    Args:
        model: a functional model.

    Returns:
        A JSON-friendly dict.

    Raises:
        ValueError: if a layer is not serializable, or was called with
            arguments that are not JSON values.

    Example:
        >>> from minikeras import Input, Model
        >>> from minikeras.layers import Dense
        >>> x = Input((3,), name="x")
        >>> config = mk.saving.functional.functional_config(Model(x, Dense(2, name="out")(x)))
        >>> [entry["name"] for entry in config["layers"]], config["output_layers"]
        (['x', 'out'], ['out', 0, 0])
    """  # noqa: E501
    history = {}  # id(SymbolicTensor) -> [layer name, node index, tensor index]
    taken = {layer.name for layer in model._layers}
    entries = []
    for tensor in flatten(model._inputs):
        name = _unique(input_layer_of(tensor).name, taken)  # (the name model.layers shows)
        history[id(tensor)] = [name, 0, 0]
        config = {
            "batch_shape": list(tensor.shape),
            "dtype": keras_dtype_name(tensor.dtype),
            "name": name,
        }
        entries.append(
            {"class_name": "InputLayer", "name": name, "config": config, "inbound_nodes": []}
        )
    by_layer = {}
    for layer in model._layers:
        entry = serialize_layer(layer)  # (completed in place: it is the entry sharing marks)
        entry.update(name=layer.name, inbound_nodes=[])
        entries.append(entry)
        by_layer[id(layer)] = entry
    for node in model._nodes:
        entry = by_layer[id(node.layer)]

        def encode(value, layer=node.layer):
            return _encode(value, history, f"{model.name}: the call of '{layer.name}'")

        entry["inbound_nodes"].append(
            {
                "args": [encode(node.inputs), *(encode(a) for a in node.args)],
                "kwargs": {key: encode(value) for key, value in node.kwargs.items()},
            }
        )
        index = len(entry["inbound_nodes"]) - 1
        for position, tensor in enumerate(flatten(node.outputs)):
            history[id(tensor)] = [node.layer.name, index, position]
    return {
        **Layer.get_config(model),
        "layers": entries,
        "input_layers": _triples(model._inputs, history),
        "output_layers": _triples(model._outputs, history),
    }


def _triples(structure, history):
    """A model's inputs or outputs as Keras writes them: `[layer name, node, tensor]` each,
    in their structure (a dict keeps its keys, a nested list its nesting, as Keras writes them)."""
    if isinstance(structure, dict):
        return {key: _triples(value, history) for key, value in structure.items()}
    if isinstance(structure, (list, tuple)):
        return [_triples(value, history) for value in structure]
    return history[id(structure)]


def _unique(name, taken):
    candidate, count = name, 0
    while candidate in taken:
        count += 1
        candidate = f"{name}_{count}"
    taken.add(candidate)
    return candidate


def _encode(value, history, where):
    if isinstance(value, SymbolicTensor):
        config = {
            "shape": list(value.shape),
            "dtype": value.dtype,
            "keras_history": history[id(value)],
        }
        return {"class_name": _TENSOR, "config": config}
    if isinstance(value, (list, tuple)):
        return [_encode(item, history, where) for item in value]
    if isinstance(value, dict):
        return {key: _encode(item, history, where) for key, item in value.items()}
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, slice):  # (an index of an op node: `x[:, 1:]`), as Keras writes one
        config = {"start": value.start, "stop": value.stop, "step": value.step}
        return {"class_name": _SLICE, "config": _encode(config, history, where)}
    if value is Ellipsis:
        return {"class_name": _ELLIPSIS, "config": {}}
    if isinstance(value, np.generic):
        return value.item()
    kind = {np.ndarray: _NUMPY, Tensor: _CONSTANT}.get(type(value))
    if kind is not None:  # a constant of an op node (`x * np.array([...])`), as Keras writes it
        array = np.asarray(value)
        return {"class_name": kind, "config": {"value": array.tolist(), "dtype": str(array.dtype)}}
    raise ValueError(
        f"save: {where} has an argument of type {type(value).__name__}, which a file cannot hold"
    )


def _is_triple(value):
    return (
        isinstance(value, list)
        and len(value) == 3
        and isinstance(value[0], str)
        and all(type(v) is int for v in value[1:])
    )


def _keras_triples(value):
    """Keras writes a model's inputs and outputs as `[layer name, node, tensor]` triples,
    in lists (nested for nested outputs) or dicts of them."""
    if _is_triple(value):
        return {"class_name": _TENSOR, "config": {"keras_history": value}}
    if isinstance(value, list) and value:
        return [_keras_triples(item) for item in value]
    if isinstance(value, dict) and value and "class_name" not in value:
        return {key: _keras_triples(item) for key, item in value.items()}
    return value


def _decode(value, tensors):
    """Replaces tensor entries by the tensors made so far; KeyError if one is not made yet."""
    if isinstance(value, dict) and value.get("class_name") == _TENSOR:
        reference = value.get("config", {}).get("keras_history")
        if not (isinstance(reference, list) and len(reference) == 3):
            raise ValueError(f"invalid tensor reference {reference!r}")
        return tensors[tuple(reference)]
    if isinstance(value, dict) and value.get("class_name") == _SLICE:
        config = value.get("config") or {}
        return slice(config.get("start"), config.get("stop"), config.get("step"))
    if isinstance(value, dict) and value.get("class_name") == _ELLIPSIS:
        return Ellipsis
    if isinstance(value, dict) and value.get("class_name") in (_NUMPY, _CONSTANT):
        config = value.get("config") or {}
        array = np.array(config.get("value"), dtype=config.get("dtype"))
        return array if value["class_name"] == _NUMPY else Tensor(array)
    if isinstance(value, list):
        return [_decode(item, tensors) for item in value]
    if isinstance(value, dict):
        return {key: _decode(item, tensors) for key, item in value.items()}
    return value


def functional_from_config(cls, config, custom_objects=None):
    """Rebuilds a functional model from `functional_config`'s dict.

    Args:
        cls: the model class (`Model`).
        config: the dict.
        custom_objects: optional dict of name -> class or function.

    Returns:
        A new, built model.

    Raises:
        ValueError: if the config is malformed or its graph cannot be replayed.

    Example:
        >>> from minikeras import Input, Model
        >>> from minikeras.layers import Dense
        >>> x = Input((3,))
        >>> model = Model(x, Dense(2)(x))
        >>> mk.saving.functional.functional_from_config(
        ...     Model, mk.saving.functional.functional_config(model)
        ... )(np.ones((1, 3))).shape
        (1, 2)
    """
    with custom_object_scope(custom_objects):
        return _rebuild(cls, config)


def _rebuild(cls, config):
    entries = config.get("layers")
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise ValueError("a functional config needs a list of layer entries in 'layers'")
    tensors, pending = {}, []
    for entry in entries:
        name = entry.get("name")
        if entry.get("class_name") == "InputLayer":
            layer_config = entry.get("config") or {}
            shape = layer_config.get("batch_shape")
            if not isinstance(shape, list) or not shape:
                raise ValueError(f"input {name!r} has an invalid batch_shape {shape!r}")
            tensor = Input(shape[1:], shape[0], layer_config.get("dtype"), name=name)
            tensors[(name, 0, 0)] = tensor
        else:
            nodes = entry.get("inbound_nodes")
            if not isinstance(nodes, list):
                raise ValueError(f"layer {name!r} has no list of inbound_nodes")
            pending.append([deserialize_layer(entry), name, nodes, 0])
    while any(done < len(nodes) for _, _, nodes, done in pending):
        progress = False
        for item in pending:
            layer, name, nodes, done = item
            while done < len(nodes):
                node = nodes[done]
                try:
                    args = _decode(node.get("args"), tensors)
                    kwargs = _decode(node.get("kwargs") or {}, tensors)
                except KeyError:
                    break  # its inputs come from a call not replayed yet
                if not isinstance(args, list) or not args or not isinstance(kwargs, dict):
                    raise ValueError(f"layer {name!r} has an invalid inbound node")
                outputs = layer(*args, **kwargs)
                for position, tensor in enumerate(flatten(outputs)):
                    tensors[(name, done, position)] = tensor
                done = item[3] = done + 1
                progress = True
        if not progress:
            stuck = [name for _, name, nodes, done in pending if done < len(nodes)]
            raise ValueError(f"the calls of layers {stuck} use tensors that no call makes")
    try:
        inputs = _decode(_keras_triples(config.get("input_layers")), tensors)
        outputs = _decode(_keras_triples(config.get("output_layers")), tensors)
    except KeyError as error:
        raise ValueError(f"the model's inputs or outputs name an unknown tensor {error}") from None
    base = {key: config[key] for key in ("name", "trainable", "dtype") if key in config}
    return cls(inputs=inputs, outputs=outputs, **base)
