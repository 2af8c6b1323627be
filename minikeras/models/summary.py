"""The table `Model.summary()` prints: each layer, its output shape and its parameter count.

A functional model's rows come from its graph (its symbolic shapes, `None`
where a size is not fixed; a shared layer is one row with each shape it
gives); a Sequential or subclassed model's from the layers it tracks, with
the shapes of their latest call.
"""

import re

import numpy as np

from minikeras.models.graph_order import keras_class_name
from minikeras.tree import flatten, map_structure

__all__ = ["print_summary"]


def print_summary(
    model,
    print_fn,
    show_trainable=False,
    line_length=None,
    positions=None,
    expand_nested=False,
    layer_range=None,
):
    """Prints `model`'s summary table (see `Model.summary`) line by line.

    Args:
        model: a `Model`.
        print_fn: a function taking one string.
        show_trainable: add Keras's "Trainable" column: Y or N for a layer with
            weights (its `trainable`), "-" for one without.
        line_length: the table's least width in characters; None sizes it
            to its contents.
        positions: where each column ends, as fractions of `line_length`
            (all <= 1) or as character counts; a column is never narrower
            than its contents (Keras wraps them instead).
        expand_nested: also list the layers of nested models, under theirs.
        layer_range: two layer names (regular expressions, as `re.match`
            reads them): the rows from the first layer matching the first to
            the last matching the second, both included.

    Returns:
        None.

    Raises:
        ValueError: if `layer_range` is not two strings, or matches no layer.

    Example:
        >>> model = mk.Sequential([mk.Input((3,)), mk.layers.Dense(2, name="d")], name="m")
        >>> mk.models.summary.print_summary(model, print)
        Model: "m"
        -------------------------------------
        Layer (type)  Output Shape  Param #
        =====================================
        d (Dense)     (None, 2)     8
        -------------------------------------
        Total params: 8 (32.00 B)
        Trainable params: 8 (32.00 B)
        Non-trainable params: 0 (0.00 B)
    """
    print_fn = print_fn or print
    if not model.built:
        print_fn(
            f"Model '{model.name}' is not built yet: call it on a batch of data, or call "
            "model.build(input_shape), to see its layers and parameters."
        )
        return
    connections = _connections(model)  # None for a chain of layers, as Keras decides
    header = ("Layer (type)", "Output Shape", "Param #")
    header += ("Connected to",) * (connections is not None) + ("Trainable",) * show_trainable
    rows = [header]
    entries = _entries(model)
    low, high = _layer_bounds([layer for layer, _ in entries], layer_range)
    for layer, shape in entries[low:high]:
        rows.extend(_rows(layer, shape, show_trainable, expand_nested, 0, connections))
    widths = _widths(rows, line_length, positions)
    rule = "-" * sum(widths)
    print_fn(f'Model: "{model.name}"')
    print_fn(rule)
    for index, row in enumerate(rows):
        print_fn("".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip())
        if index == 0:
            print_fn(rule.replace("-", "="))
    print_fn(rule)
    trainable, frozen = model.trainable_weights, model.non_trainable_weights
    optimizer = getattr(model, "optimizer", None) if model.compiled else None
    slots = optimizer.variables if optimizer is not None and optimizer.built else None
    counted = trainable + frozen + (slots or [])
    print_fn(f"Total params: {_count(counted)}")
    print_fn(f"Trainable params: {_count(trainable)}")
    print_fn(f"Non-trainable params: {_count(frozen)}")
    if slots is not None:
        print_fn(f"Optimizer params: {_count(slots)}")


def _entries(model):
    """(layer, output shape) for each row of `model`'s table, in Keras's order."""
    if model._inputs is not None:
        # A graph's shapes are its symbolic ones, None where a size is not fixed.
        shapes = {}  # a shared layer is one row, with each distinct shape it gives
        for node in model._nodes:
            found = shapes.setdefault(id(node.layer), (node.layer, []))[1]
            shape = map_structure(lambda t: t.shape, node.outputs)
            if shape not in found:
                found.append(shape)
        # A functional model's rows in Keras's order, its InputLayers among them.
        order = model.operations if model._summary_shows_inputs else model.layers
        entries = []
        for layer in order:
            found = shapes[id(layer)][1] if id(layer) in shapes else [layer.batch_shape]
            entries.append((layer, found[0] if len(found) == 1 else found))
        return entries
    # A subclassed model's `layers`, as Keras's: an unbuilt layer an attribute held before too.
    return [(layer, _batch_none(layer._output_shape)) for layer in model.layers]


def _rows(layer, shape, show_trainable, expand_nested, level, connections):
    """The row of `layer`, then (with `expand_nested`) those of a nested model's layers."""
    prefix = "   " * level + "\u2514 " if level else ""
    params = f"{layer.count_params():,}" if layer.built else "0 (unbuilt)"
    row = (f"{prefix}{layer.name} ({keras_class_name(layer)})", _shape_text(shape), params)
    if connections is not None:  # (a nested model's layers are not the outer graph's)
        row += (connections.get(id(layer), "-") if not level else "-",)
    if show_trainable:
        row += (("Y" if layer.trainable else "N") if layer.weights else "-",)
    rows = [row]
    if expand_nested and getattr(layer, "_inputs", False) is not False and layer.built:
        for inner, inner_shape in _entries(layer):
            rows.extend(
                _rows(inner, inner_shape, show_trainable, expand_nested, level + 1, connections)
            )
    return rows


def _is_shape(value):
    return isinstance(value, tuple) and all(isinstance(s, (int, type(None))) for s in value)


def _shape_text(shape):
    """A row's shape: several outputs (a tuple or dict of shapes) as one flat list, as Keras."""
    if isinstance(shape, dict) or (isinstance(shape, tuple) and not _is_shape(shape)):
        return str(_flat_shapes(shape))
    return str(shape)


def _flat_shapes(structure):
    if _is_shape(structure):
        return [structure]
    values = structure.values() if isinstance(structure, dict) else structure
    return [shape for value in values for shape in _flat_shapes(value)]


def _connections(model):
    """Keras's "Connected to" cells by `id(layer)`, or None for a model that is a chain.

    A functional model is a chain (no column, as in Keras) when it has one
    input and each call takes one tensor that no other call takes, each
    layer called once. A cell lists each input of each of the layer's calls
    in the model as `layer[call][output]`: the layer that made it, which of
    that layer's calls, which of that call's outputs.
    """
    if model._inputs is None:
        return None
    nodes = model._nodes
    taken = [id(t) for node in nodes for t in node.input_tensors()]
    layers = [id(node.layer) for node in nodes]
    chain = (
        len(flatten(model._inputs)) == 1
        and all(len(node.input_tensors()) <= 1 for node in nodes)
        and len(set(taken)) == len(taken)
        and len(set(layers)) == len(layers)
    )
    if chain:
        return None
    sources = {}  # id(tensor) -> "layer[call][output]"
    for layer in model.operations:
        if type(layer).__name__ == "InputLayer":
            sources[id(layer.output)] = f"{layer.name}[0][0]"
    for node in nodes:
        call = node.layer._inbound_nodes.index(node)
        for index, tensor in enumerate(flatten(node.outputs)):
            sources[id(tensor)] = f"{node.layer.name}[{call}][{index}]"
    cells = {}
    for node in nodes:
        # every symbolic argument, as often as given (MultiHeadAttention(x, x) lists x twice)
        given = flatten((node.inputs, node.args, node.kwargs))
        found = [sources[id(t)] for t in given if id(t) in sources]
        cells[id(node.layer)] = ", ".join(filter(None, (cells.get(id(node.layer)), *found)))
    return cells


def _layer_bounds(layers, layer_range):
    """`[first, last + 1)` of the rows `layer_range` picks (all rows for None), as Keras."""
    if layer_range is None:
        return 0, len(layers)
    if len(layer_range) != 2 or not all(isinstance(name, str) for name in layer_range):
        raise ValueError(
            f"summary: layer_range must be two layer names (strings), got {layer_range!r}"
        )
    low = [i for i, layer in enumerate(layers) if re.match(layer_range[0], layer.name)]
    high = [i for i, layer in enumerate(layers) if re.match(layer_range[1], layer.name)]
    if not low or not high:
        raise ValueError(
            f"summary: layer_range {list(layer_range)} matches no layer of the model; its "
            f"layers are {[layer.name for layer in layers]}"
        )
    if min(low) > max(high):
        return min(high), max(low) + 1
    return min(low), max(high) + 1


def _widths(rows, line_length, positions):
    """Each column's width: its contents plus 2, widened to `positions` and `line_length`."""
    widths = [max(len(row[i]) for row in rows) + 2 for i in range(len(rows[0]))]
    if positions is not None:
        total = line_length or sum(widths)
        ends = [int(p * total) if p <= 1 else int(p) for p in positions]
        starts = [0, *ends[:-1]]
        for i, (start, end) in enumerate(zip(starts, ends[: len(widths)])):
            widths[i] = max(widths[i], end - start)
    if line_length is not None and sum(widths) < line_length:
        widths[-1] += line_length - sum(widths)
    return widths


def _count(weights):
    """`"N (size)"`: the weights' parameter count and memory, as Keras's summary gives them."""
    unique = list({id(w): w for w in weights}.values())
    count = sum(int(np.prod(w.shape)) for w in unique)
    size = float(sum(int(np.prod(w.shape)) * np.dtype(w.dtype).itemsize for w in unique))
    units = ["B", "KB", "MB", "GB", "TB"]
    while size >= 1024 and len(units) > 1:
        size, units = size / 1024, units[1:]
    return f"{count:,} ({size:.2f} {units[0]})"


def _batch_none(shape):
    if isinstance(shape, tuple) and shape and all(isinstance(s, (int, type(None))) for s in shape):
        return (None, *shape[1:])
    if isinstance(shape, list):
        return [_batch_none(s) for s in shape]
    return shape if shape is not None else "?"
