"""What `fit` checks in arrays before its first step: every sample, so that no bad input trains.

With data in memory, minikeras reads it all before training and refuses,
naming the argument and the first bad sample:

- non-finite values (NaN, inf) in the inputs, targets or sample weights;
- labels outside `[0, classes)` for a sparse categorical cross-entropy;
- ids outside `[0, input_dim)` for an `Embedding` that reads a model input.

Streamed data (generators, `PyDataset`) cannot be read ahead: a bad batch
stops `fit` with an error naming it, and the weights and optimizer state
go back to the end of the last completed epoch.
"""

import numpy as np

from minikeras.tree import flatten

__all__ = ["check_before_training"]


def _first_bad(mask):
    return int(np.argwhere(mask)[0][0])


def _check_finite(name, array):
    array = np.asarray(array)
    if array.dtype.kind != "f":
        return
    finite = np.isfinite(array)
    if not finite.all():
        sample = _first_bad(~finite.reshape(len(array), -1).all(axis=1))
        bad = array.reshape(len(array), -1)[sample][~finite.reshape(len(array), -1)[sample]][0]
        raise ValueError(
            f"fit: {name} holds {bad} at sample {sample}; training on it would make every "
            "weight nan. Clean or drop those samples first"
        )


def _sparse_classes(model):
    """The number of classes a sparse categorical cross-entropy compares labels with, or None."""
    loss = getattr(model, "loss", None)
    fn = getattr(loss, "fn", None)
    names = {type(loss).__name__, getattr(fn, "__name__", "")}
    if not names & {"SparseCategoricalCrossentropy", "sparse_categorical_crossentropy"}:
        return None
    try:
        shape = model.output_shape
    except AttributeError:
        return None
    if not isinstance(shape, tuple) or not shape or shape[-1] is None:
        return None
    return shape[-1]


def _embedding_inputs(model, x):
    """`(layer, array)` for each Embedding that reads one of the model's inputs directly."""
    from minikeras.layers.embedding import Embedding

    found = []
    if getattr(model, "_inputs", None) is None or not hasattr(model, "_nodes"):
        return found
    inputs = flatten(model._inputs)
    arrays = flatten(x)
    if len(inputs) != len(arrays):
        return found
    by_input = {id(tensor): array for tensor, array in zip(inputs, arrays)}
    for node in model._nodes:
        if isinstance(node.layer, Embedding) and id(node.inputs) in by_input:
            found.append((node.layer, by_input[id(node.inputs)]))
    return found


def check_before_training(model, x, y, sample_weight):
    """Refuses in-memory data that would fail or poison training part-way (see the module).

    Args:
        model: the compiled model about to be trained.
        x: the inputs (an array, or a list or dict of arrays).
        y: the targets.
        sample_weight: the sample weights, or None.

    Returns:
        None.

    Raises:
        ValueError: naming the argument, the first bad sample and what was expected.

    Example:
        >>> model = mk.Sequential([mk.Input((2,)), mk.layers.Dense(3)])
        >>> model.compile("sgd", mk.losses.SparseCategoricalCrossentropy(from_logits=True))
        >>> mk.data_checks.check_before_training(model, np.ones((4, 2)), np.array([0, 1, 3, 2]), None)
        Traceback (most recent call last):
        ...
        ValueError: fit: y holds the label 3 at sample 2; the model's 3 outputs take labels in [0, 3)
    """  # noqa: E501
    for index, array in enumerate(flatten(x)):
        _check_finite(
            "x" if index == 0 and not isinstance(x, (list, dict)) else f"x[{index}]", array
        )
    for array in flatten(y):
        _check_finite("y", array)
    if sample_weight is not None:
        _check_finite("sample_weight", sample_weight)
    classes = _sparse_classes(model)
    labels = flatten(y)
    if classes is not None and len(labels) == 1 and np.asarray(labels[0]).size:
        values = np.asarray(labels[0]).reshape(len(labels[0]), -1)
        ignore = getattr(model.loss, "ignore_class", None)
        bad = (values < 0) | (values >= classes)
        if ignore is not None:
            bad &= values != ignore
        if bad.any():
            sample = _first_bad(bad.any(axis=1))
            label = values[sample][bad[sample]][0]
            raise ValueError(
                f"fit: y holds the label {label} at sample {sample}; the model's {classes} "
                f"outputs take labels in [0, {classes})"
            )
    for layer, ids in _embedding_inputs(model, x):
        ids = np.asarray(ids)
        if ids.size == 0:
            continue
        bad = (ids < 0) | (ids >= layer.input_dim)
        if bad.any():
            sample = _first_bad(bad.reshape(len(ids), -1).any(axis=1))
            value = ids.reshape(len(ids), -1)[sample][bad.reshape(len(ids), -1)[sample]][0]
            raise ValueError(
                f"fit: the inputs of Embedding '{layer.name}' hold the id {value} at sample "
                f"{sample}; its input_dim is {layer.input_dim}, so ids must lie in "
                f"[0, {layer.input_dim})"
            )
