"""Keras's static shapes for the few ops where tracing on placeholders says otherwise.

Tracing (`operation_shapes`) finds the sizes an op gives at every
placeholder size. Keras 3 writes a rule per op instead, and for these its
static shapes are the contract a model is built on:

- `diagonal`, and `diag` of a matrix: the diagonal's length is unknown when
  either of its two axes is (tracing finds 0 for an offset past the known
  axis, or 1 where only an empty batch would give 0);
- `split` at indices of an axis of unknown size: each piece but the last
  is as long as the indices say (tracing leaves them unknown, as an axis
  shorter than the indices would cut them). Indices out of order make an
  empty piece, where Keras fails on a negative size.
"""

from numbers import Integral

import numpy as np

from minikeras.layers.input_layer import SymbolicTensor

__all__ = ["keras_shapes"]


def keras_shapes(function_name, specs, args, options):
    """`specs` with the shapes Keras 3 gives the op's outputs, where its rule differs.

    Args:
        function_name: the op's name.
        specs: the traced outputs (a `SymbolicTensor` or a list of them).
        args: the op's positional arguments (its input first).
        options: the options the op's node holds (an offset, the axes).

    Returns:
        `specs`, or new specs of the same dtypes with Keras's shapes.

    Example:
        >>> from minikeras.layers.operation_shape_rules import keras_shapes
        >>> x = mk.Input((4,))
        >>> traced = mk.layers.input_layer.SymbolicTensor((0,), "float32")
        >>> keras_shapes("diagonal", traced, (x,), {"offset": 100}).shape
        (None,)
    """
    rule = _RULES.get(function_name)
    x = args[0] if args else None
    if rule is None or not isinstance(x, SymbolicTensor):
        return specs
    return rule(specs, x.shape, options or {})


def _with_shape(spec, shape):
    return spec if tuple(shape) == spec.shape else SymbolicTensor(tuple(shape), spec.dtype)


def _diagonal(specs, shape, options):
    axes = [options.get("axis1", 0), options.get("axis2", 1)]
    if len(shape) < 2 or None not in (shape[axes[0]], shape[axes[1]]):
        return specs  # (traced exactly)
    return _with_shape(specs, specs.shape[:-1] + (None,))


def _diag(specs, shape, options):
    if len(shape) != 2 or None not in shape:
        return specs
    return _with_shape(specs, (None,))


def _split(specs, shape, options):
    indices, axis = options.get("indices_or_sections"), options.get("axis", 0)
    indices = indices.tolist() if isinstance(indices, np.ndarray) else indices
    if not isinstance(indices, (list, tuple)) or not -len(shape) <= axis < len(shape):
        return specs
    whole = all(isinstance(i, Integral) and not isinstance(i, bool) for i in indices)
    if shape[axis] is not None or not whole or any(i < 0 for i in indices):
        return specs  # (a known size, or negative indices, traced exactly)
    starts = [0, *indices]
    sizes = [max(0, int(end) - int(start)) for start, end in zip(starts, indices)] + [None]
    pieces = []
    for spec, size in zip(specs, sizes):
        piece = list(spec.shape)
        piece[axis] = size
        pieces.append(_with_shape(spec, piece))
    return pieces


_RULES = {"diagonal": _diagonal, "diag": _diag, "split": _split}
