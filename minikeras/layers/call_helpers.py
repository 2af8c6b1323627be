"""The helpers `Layer.__call__` leans on: masks carried by tensors, argument forms, errors.

Keras passes masks implicitly: a layer's output carries its mask as
`_keras_mask`, and the next layer's call gets it as `mask=` (and an
`<argument>_mask` parameter gets the mask of that argument) unless the caller
gives one.
"""

import numpy as np

from minikeras.engine.tensor import Tensor
from minikeras.layers import call_spec
from minikeras.layers.input_layer import SymbolicTensor
from minikeras.tree import flatten

_PLAIN = (bool, int, float, str, type(None))

__all__ = [
    "argument_masks",
    "attach_keras_mask",
    "contains",
    "explain_mismatch",
    "fill_argument_masks",
    "is_array",
    "keras_mask_of",
    "paired_masks",
    "pop_first_argument",
    "symbolic_among",
]


def pop_first_argument(layer, kwargs):
    name = call_spec.first_argument_name(layer)
    if name is None or name not in kwargs:
        raise TypeError(
            f"{type(layer).__name__} '{layer.name}' was called without inputs: pass them "
            f"first, or by the name its call() gives them ({name!r})"
        )
    return kwargs.pop(name)


def is_array(value):
    return isinstance(value, (np.ndarray, Tensor))


def symbolic_among(args, kwargs):
    """Whether a symbolic tensor is among a call's further arguments (plain flags skipped fast)."""
    for value in args:
        if contains(value, SymbolicTensor):
            return True
    for value in kwargs.values():
        if type(value) not in _PLAIN and contains(value, SymbolicTensor):
            return True
    return False


_argument_mask_names = {}  # layer class -> the call's `<argument>_mask` parameters


def argument_masks(layer):
    cls = type(layer)
    found = _argument_mask_names.get(cls)
    if found is None:
        names = list(call_spec._signature(layer.call).parameters)
        found = _argument_mask_names[cls] = tuple(
            name for name in names if name.endswith("_mask") and name[: -len("_mask")] in names
        )
    return found


def fill_argument_masks(layer, inputs, args, kwargs):
    """Passes `<argument>_mask=` the mask each tensor argument carries, unless given (Keras)."""
    tensors = call_spec.tensor_arguments(layer, inputs, args, kwargs)
    for name in argument_masks(layer):
        argument = name[: -len("_mask")]
        if kwargs.get(name) is None and argument in tensors:
            mask = keras_mask_of(tensors[argument])
            if mask is not None:
                kwargs[name] = mask


def keras_mask_of(inputs):
    """The masks the inputs carry (`_keras_mask`), in their structure; None if none does."""
    if type(inputs) is Tensor:
        return getattr(inputs, "_keras_mask", None)
    if isinstance(inputs, (list, tuple)):
        masks = [keras_mask_of(x) for x in inputs]
        return masks if any(m is not None for m in masks) else None
    return None


def paired_masks(outputs, mask):
    """The mask of each output leaf, as Keras pairs a layer's outputs with its `compute_mask`.

    The leaves of both go together in order, as Keras's `_set_mask_metadata`
    pairs them: a layer called on `[x, y]` that passes its inputs' masks on
    (`supports_masking`) gives its one output the first input's mask, and one
    mask for several outputs goes to the first of them only (a second output
    of another shape, `x[:, 1:]`, gets none).

    Args:
        outputs: a layer's outputs, a tensor or a structure of them.
        mask: what its `compute_mask` returned (None, a mask, or a structure).

    Returns:
        A list of `(output leaf, mask or None)` pairs.

    Example:
        >>> from minikeras.layers.call_helpers import paired_masks
        >>> [m for _, m in paired_masks("out", ["mask of x", None])]
        ['mask of x']
    """
    leaves, found = flatten(outputs), flatten(mask)
    return list(zip(leaves, found + [None] * (len(leaves) - len(found))))


def attach_keras_mask(outputs, mask):
    """Sets `_keras_mask` on the outputs, as Keras does, for code that reads it."""
    if mask is None:
        return
    if isinstance(outputs, Tensor) and not isinstance(mask, (list, tuple, dict)):
        object.__setattr__(outputs, "_keras_mask", mask)  # (the usual case)
        return
    for output, one in paired_masks(outputs, mask):
        if isinstance(output, Tensor) and one is not None:
            object.__setattr__(output, "_keras_mask", one)


def explain_mismatch(layer, inputs, error):
    """Re-raises a failed call of a built layer as an error naming it and both shapes.

    Only when the inputs' known sizes differ from those the layer was built
    for: then the failure is most likely that mismatch, and the original error
    stays attached as the cause.
    """
    built_for = layer.__dict__.get("_build_input_shape")
    if not isinstance(inputs, Tensor) or not isinstance(built_for, tuple):
        return
    shape = inputs.shape
    differs = len(shape) != len(built_for) or any(
        b is not None and b != s for b, s in zip(built_for[1:], shape[1:])
    )
    if differs:
        raise ValueError(
            f"{type(layer).__name__} '{layer.name}' was built for inputs of shape "
            f"{tuple(built_for)} and cannot take shape {shape}: {error}"
        ) from error


def contains(structure, kind):
    """Whether a (nested) list, tuple or dict holds an instance of `kind`.

    Args:
        structure: anything.
        kind: a class.

    Returns:
        A bool.

    Example:
        >>> mk.layers.call_helpers.contains([1, (2, mk.Input((1,)))], mk.layers.SymbolicTensor)
        True
    """
    if isinstance(structure, kind):
        return True
    if isinstance(structure, (list, tuple)):
        return any(contains(x, kind) for x in structure)
    if isinstance(structure, dict):
        return any(contains(x, kind) for x in structure.values())
    return False
