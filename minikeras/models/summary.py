"""The table `Model.summary()` prints: each layer, its output shape and its parameter count.

A functional model's rows come from its graph (its symbolic shapes, `None`
where a size is not fixed; a shared layer is one row with each shape it
gives); a Sequential or subclassed model's from the layers it tracks, with
the shapes of their latest call.
"""

import numpy as np

from minikeras.layers import tracking
from minikeras.layers.layer import Layer
from minikeras.tree import map_structure

__all__ = ["print_summary"]


def print_summary(model, print_fn, show_trainable=False):
    """Prints `model`'s summary table (see `Model.summary`) line by line.

    Args:
        model: a `Model`.
        print_fn: a function taking one string.
        show_trainable: add Keras's "Trainable" column: Y or N for a layer with
            weights (its `trainable`), "-" for one without.

    Returns:
        None.

    Example:
        >>> model = mk.Sequential([mk.Input((3,)), mk.layers.Dense(2, name="d")], name="m")
        >>> mk.models.summary.print_summary(model, print)
        Model: "m"
        -------------------------------------
        Layer (type)  Output Shape  Param #
        =====================================
        d (Dense)     (None, 2)     8
        -------------------------------------
        Total params: 8
        Trainable params: 8
        Non-trainable params: 0
    """
    print_fn = print_fn or print
    if not model.built:
        print_fn(
            f"Model '{model.name}' is not built yet: call it on a batch of data, or call "
            "model.build(input_shape), to see its layers and parameters."
        )
        return
    rows = [("Layer (type)", "Output Shape", "Param #") + (("Trainable",) * show_trainable)]
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
    else:
        entries = [
            (value, _batch_none(value._output_shape))
            for path, owner, value in tracking.walk(model)
            if owner is model and isinstance(value, Layer)
        ]
    for layer, shape in entries:
        params = layer.count_params() if layer.built else 0
        row = (f"{layer.name} ({_class_name(layer)})", str(shape), f"{params:,}")
        if show_trainable:
            row += (("Y" if layer.trainable else "N") if layer.weights else "-",)
        rows.append(row)
    widths = [max(len(row[i]) for row in rows) + 2 for i in range(len(rows[0]))]
    rule = "-" * sum(widths)
    print_fn(f'Model: "{model.name}"')
    print_fn(rule)
    for index, row in enumerate(rows):
        print_fn("".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip())
        if index == 0:
            print_fn(rule.replace("-", "="))
    print_fn(rule)
    trainable = sum(int(np.prod(w.shape)) for w in model.trainable_weights)
    frozen = sum(int(np.prod(w.shape)) for w in model.non_trainable_weights)
    print_fn(f"Total params: {trainable + frozen:,}")
    print_fn(f"Trainable params: {trainable:,}")
    print_fn(f"Non-trainable params: {frozen:,}")


def _class_name(layer):
    """The class a row names; a functional `Model(inputs, outputs)` is Keras's `Functional`."""
    from minikeras.models.model import Model

    if type(layer) is Model and getattr(layer, "_inputs", None) is not None:
        return "Functional"
    return type(layer).__name__


def _batch_none(shape):
    if isinstance(shape, tuple) and shape and all(isinstance(s, (int, type(None))) for s in shape):
        return (None, *shape[1:])
    if isinstance(shape, list):
        return [_batch_none(s) for s in shape]
    return shape if shape is not None else "?"
