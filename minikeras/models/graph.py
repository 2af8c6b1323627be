"""A graph of layer calls, as `Model(inputs, outputs)` and a `Sequential` with an input record it.

`nodes_between` finds the calls (`Node`s) that lead from the inputs to the
outputs, in an order where each call's tensors exist before it runs; `run`
replays them on data, carrying masks beside the values; `output_spec` replays
them on symbolic tensors, to give the outputs' shapes for other inputs'
shapes without running any layer. The order Keras lists a graph's layers in
(`functional_order`, `graph_operations`) is in `graph_order`, re-exported here.
"""

import numpy as np

from minikeras.layers.call_helpers import paired_masks
from minikeras.layers.input_layer import SymbolicTensor
from minikeras.models.graph_order import functional_order, graph_operations
from minikeras.tree import flatten, map_structure

__all__ = [
    "bind",
    "functional_order",
    "graph_operations",
    "input_names",
    "matched_rank",
    "nodes_between",
    "output_spec",
    "run",
]


def _symbolic(tensor, argument):
    if not isinstance(tensor, SymbolicTensor):
        raise ValueError(
            f"Model: `{argument}` must be minikeras.Input tensors or outputs of layers "
            f"called on them, got {type(tensor).__name__}"
        )
    return tensor


def nodes_between(inputs, outputs):
    """The layer calls from `inputs` to `outputs`, each after the calls it depends on.

    Args:
        inputs: the Input tensors (a tensor or a structure of them).
        outputs: symbolic tensors made from them (likewise).

    Returns:
        A list of `Node`s.

    Raises:
        ValueError: if an output depends on an Input that is not in `inputs`,
            or either argument is not symbolic.

    Example:
        >>> x = mk.Input((3,))
        >>> y = mk.layers.Dense(2)(mk.layers.Dense(4)(x))
        >>> [node.layer.units for node in mk.models.graph.nodes_between(x, y)]
        [4, 2]
    """
    if inputs is None or outputs is None:
        raise ValueError("Model: a functional model needs both `inputs` and `outputs`")
    input_ids = set()
    map_structure(lambda t: input_ids.add(id(_symbolic(t, "inputs"))), inputs)
    nodes, seen = [], set()

    def visit(tensor):
        tensor = _symbolic(tensor, "outputs")
        if id(tensor) in input_ids:
            return
        if tensor.node is None:
            raise ValueError(f"Model: output {tensor} depends on an Input that is not in `inputs`")
        if id(tensor.node) in seen:
            return
        seen.add(id(tensor.node))
        for argument in tensor.node.input_tensors():
            visit(argument)
        nodes.append(tensor.node)

    map_structure(visit, outputs)
    return nodes


def input_names(inputs):
    """The names of the Input tensors, in order (None where an input has no name).

    Args:
        inputs: a model's inputs (a tensor or a structure of them).

    Returns:
        A list of names.

    Example:
        >>> mk.models.graph.input_names([mk.Input((2,), name="a"), mk.Input((3,), name="b")])
        ['a', 'b']
    """
    leaves = flatten(inputs)
    return [leaf.name for leaf in leaves]


def bind(symbolic, value, values):
    """Records `values[id(placeholder)] = data` for matching structures.

    A dict of data keyed by input name also binds to a list of named inputs,
    as Keras allows (`model.fit({"image": x1, "meta": x2}, y)`).

    Args:
        symbolic: a symbolic tensor or a structure of them.
        value: data of the same structure.
        values: the dict to fill.

    Returns:
        None.

    Raises:
        ValueError: if the structures do not match.
        KeyError: if a dict lacks a key.

    Example:
        >>> a, b = mk.Input((1,), name="a"), mk.Input((1,), name="b")
        >>> found = {}
        >>> mk.models.graph.bind([a, b], {"b": 2, "a": 1}, found)
        >>> found[id(a)], found[id(b)]
        (1, 2)
    """
    if isinstance(symbolic, dict):
        for key in symbolic:
            bind(symbolic[key], value[key], values)
    elif isinstance(symbolic, (list, tuple)):
        if isinstance(value, dict):
            names = input_names(symbolic)
            if None in names or set(names) != set(value):
                raise ValueError("structure mismatch")
            value = [value[name] for name in names]
        if not isinstance(value, (list, tuple)) or len(value) != len(symbolic):
            raise ValueError("structure mismatch")
        for placeholder, item in zip(symbolic, value):
            bind(placeholder, item, values)
    elif isinstance(value, dict) and symbolic.name in value and len(value) == 1:
        values[id(symbolic)] = value[symbolic.name]
    else:
        values[id(symbolic)] = value


def _mask_of(symbolic, masks):
    """The masks of `symbolic` tensors, in their structure; None if none has one."""
    if not masks:
        return None
    found = map_structure(lambda t: masks.get(id(t)), symbolic)
    leaves = flatten(found)
    return found if any(leaf is not None for leaf in leaves) else None


def _bind_outputs(symbolic, value, values):
    """A call's outputs to its symbolic ones, leaf by leaf in order when both have as many,
    as Keras binds them: an eager call may nest them otherwise than its symbolic call did
    (Keras's RNN of stacked cells gives a one-state cell's state in a list eagerly)."""
    if isinstance(symbolic, SymbolicTensor):  # one output, the common case
        values[id(symbolic)] = value
        return
    leaves, found = flatten(symbolic), flatten(value)
    if len(leaves) != len(found):
        bind(symbolic, value, values)  # (the structures differ: its error says so)
        return
    for placeholder, item in zip(leaves, found):
        values[id(placeholder)] = item


def _bind_masks(layer, symbolic, mask, masks):
    try:
        bind(symbolic, mask, masks)
    except (KeyError, TypeError, ValueError):
        raise ValueError(
            f"{type(layer).__name__} '{layer.name}': its mask must have the structure of "
            f"{symbolic}, got {type(mask).__name__}"
        ) from None


def _one_input(symbolic, inputs):
    """A one-input model takes its tensor bare or in a one-item list, whichever way it was
    built, as Keras does (`Model(inputs=sequential.inputs, ...)` called on a batch)."""
    one_item_list = isinstance(symbolic, (list, tuple)) and len(symbolic) == 1
    if one_item_list and not isinstance(inputs, (list, tuple, dict)):
        return [inputs]
    bare = isinstance(symbolic, SymbolicTensor)
    if bare and isinstance(inputs, (list, tuple)) and len(inputs) == 1:
        return inputs[0]
    return inputs


def _as_input_dtypes(symbolic, values):
    """Floats bound to a float `Input` of another dtype are cast to its dtype, as Keras's
    functional models convert their inputs (`Input((3,), dtype="float16")` computes in
    float16, whatever the model's dtype policy cast the data to on the way in)."""
    from minikeras import ops

    for placeholder in flatten(symbolic):
        held = values.get(id(placeholder))
        wanted = np.dtype(placeholder.dtype) if placeholder.dtype is not None else None
        if wanted is None or wanted.kind != "f" or not hasattr(held, "dtype"):
            continue
        dtype = np.dtype(held.dtype)
        if dtype.kind == "f" and dtype != wanted:
            values[id(placeholder)] = ops.cast(held, wanted.name)


def matched_rank(shape, value):
    """`value` with a trailing axis of 1 added or dropped to meet an `Input` of `shape`.

    As Keras's functional models adjust their inputs: data of shape `(batch,)`
    feeds an `Input((1,))`, and `(batch, 3, 1)` an `Input((3,))`. Any other
    rank is left for the layers to refuse.

    Args:
        shape: the `Input`'s shape, batch axis included.
        value: the data bound to it (an array, Tensor or symbolic tensor).

    Returns:
        `value`, reshaped if one of those two cases applies.

    Example:
        >>> mk.models.graph.matched_rank((None, 1), np.ones(4)).shape
        (4, 1)
        >>> mk.models.graph.matched_rank((None, 3), np.ones((4, 3, 1))).shape
        (4, 3)
    """
    value_shape = getattr(value, "shape", None)
    if value_shape is None or shape is None or len(value_shape) == len(shape):
        return value
    from minikeras import ops

    if len(value_shape) == len(shape) + 1 and value_shape[-1] == 1:
        return ops.squeeze(value, axis=-1)
    if len(value_shape) == len(shape) - 1 and shape[-1] == 1:
        return ops.expand_dims(value, axis=-1)
    return value


def _matched_ranks(symbolic, values):
    for placeholder in flatten(symbolic):
        held = values.get(id(placeholder))
        if held is not None:
            values[id(placeholder)] = matched_rank(placeholder.shape, held)


def run(model, inputs, training, mask=None):
    """Replays a model's graph on data, masks travelling beside the values.

    Args:
        model: a model with `_inputs`, `_outputs` and `_nodes`.
        inputs: data structured like its inputs (or a dict keyed by input name).
        training: passed to the layers that accept it.
        mask: masks of the inputs, or None.

    Returns:
        The outputs, structured like the model's outputs.

    Raises:
        ValueError: if the data does not match the inputs' structure.

    Example:
        >>> x = mk.Input((2,))
        >>> model = mk.Model(x, mk.layers.Dense(1)(x))
        >>> mk.models.graph.run(model, np.ones((3, 2)), None).shape
        (3, 1)
    """
    values, masks = {}, {}  # id(symbolic tensor) -> its value; its mask, if any
    inputs = _one_input(model._inputs, inputs)
    try:
        bind(model._inputs, inputs, values)
    except (KeyError, TypeError, ValueError):
        raise ValueError(
            f"Model '{model.name}' expects inputs structured like {model._inputs}, "
            f"got {type(inputs).__name__}"
        ) from None
    _matched_ranks(model._inputs, values)
    _as_input_dtypes(model._inputs, values)
    if mask is not None:
        _bind_masks(model, model._inputs, mask, masks)

    def value(leaf):
        return values[id(leaf)] if isinstance(leaf, SymbolicTensor) else leaf

    for node in model._nodes:
        args = map_structure(value, node.inputs)
        kwargs = map_structure(value, node.kwargs)
        if training is not None:  # the model's call decides, over what the graph recorded
            kwargs["training"] = training  # (as Keras 3: predict is inference everywhere)
        # Masks travel beside the values (see Layer.compute_mask); None too, so that a
        # mask a tensor still carries from an earlier layer is not picked up.
        kwargs.setdefault("mask", _mask_of(node.inputs, masks))
        extra = map_structure(value, node.args)
        _bind_outputs(node.outputs, node.layer(args, *extra, **kwargs), values)
        output_mask = node.layer.compute_mask(args, kwargs.get("mask"))
        if output_mask is not None:
            for output, one in paired_masks(node.outputs, output_mask):
                if one is not None:
                    masks[id(output)] = one
    object.__setattr__(model, "_output_mask", _mask_of(model._outputs, masks))
    return map_structure(lambda t: values[id(t)], model._outputs)


def output_spec(model, inputs):
    """The symbolic outputs of a model's graph for symbolic `inputs` (no layer runs).

    Each call is replayed with the layer's `compute_output_spec`, so a graph
    built for `(None, 10, 8)` reports what it gives for `(None, None, 8)`.

    Args:
        model: a model with `_inputs`, `_outputs` and `_nodes`.
        inputs: symbolic tensors structured like its inputs.

    Returns:
        Symbolic tensors structured like its outputs (with no node).

    Example:
        >>> x = mk.Input((10, 8))
        >>> model = mk.Model(x, mk.layers.Conv1D(4, 3)(x))
        >>> mk.models.graph.output_spec(model, mk.Input((None, 8))).shape
        (None, None, 4)
    """
    specs = {}
    inputs = _one_input(model._inputs, inputs)
    try:
        bind(model._inputs, inputs, specs)
    except (KeyError, TypeError, ValueError):
        raise ValueError(
            f"Model '{model.name}' expects inputs structured like {model._inputs}, got {inputs}"
        ) from None

    def spec(leaf):
        return specs[id(leaf)] if isinstance(leaf, SymbolicTensor) else leaf

    for node in model._nodes:
        layer = node.layer
        kwargs = {
            key: value
            for key, value in map_structure(spec, node.kwargs).items()
            if key not in ("training", "mask")
        }
        outputs = layer.compute_output_spec(
            map_structure(spec, node.inputs), *map_structure(spec, node.args), **kwargs
        )
        bind(node.outputs, outputs, specs)
    return map_structure(lambda t: specs[id(t)], model._outputs)
