"""The functional API's placeholders: `Input(shape=...)` and the graph it records.

Calling a layer on a `SymbolicTensor` builds the layer with a dry run on a
zero batch, and returns a new `SymbolicTensor` that remembers the call. A
functional `Model(inputs, outputs)` replays those calls on real data.
"""

import numpy as np

from minikeras import config

__all__ = ["Input", "Node", "SymbolicTensor", "map_structure", "symbolic_call"]


class SymbolicTensor:
    """A placeholder for data in the functional API: a shape and a dtype.

    Made by `Input` and by calling layers on other symbolic tensors. It holds
    no values: pass it through layers, then give it to `Model(inputs, outputs)`.

    Args:
        shape: the shape, `None` for the batch axis.
        dtype: the dtype name.
        node: the layer call that produced it (None for an `Input`).
        name: a name for messages.

    Example:
        >>> x = Input(shape=(3,))
        >>> x.shape, x.dtype
        ((None, 3), 'float32')
    """

    def __init__(self, shape, dtype, node=None, name=None):
        self.shape = tuple(shape)
        self.dtype = dtype
        self.node = node
        self.name = name

    @property
    def ndim(self):
        """The number of axes."""
        return len(self.shape)

    def __repr__(self):
        return f"<SymbolicTensor shape={self.shape} dtype={self.dtype}>"

    def __array__(self, dtype=None, copy=None):
        raise TypeError(
            "A symbolic Input has no values: pass it through layers (or a Lambda layer) "
            "and build a Model(inputs, outputs), then call the model on data"
        )


class Node:
    """One recorded layer call: `outputs = layer(inputs, *args, **kwargs)`.

    Args:
        layer: the layer called.
        inputs: the symbolic inputs (a tensor or a list/tuple/dict of them).
        args: further positional arguments.
        kwargs: keyword arguments.

    Example:
        >>> Node(None, Input(shape=(2,)), (), {}).args
        ()
    """

    def __init__(self, layer, inputs, args, kwargs):
        self.layer, self.inputs, self.args, self.kwargs = layer, inputs, args, kwargs
        self.outputs = None


def Input(shape, batch_size=None, dtype=None, name=None):  # noqa: N802 (Keras's name)
    """A symbolic input for the functional API.

    Args:
        shape: the shape of one sample, without the batch axis.
        batch_size: a fixed batch size, or None.
        dtype: the dtype, float32 by default.
        name: an optional name.

    Returns:
        A `SymbolicTensor` of shape `(batch_size, *shape)`.

    Raises:
        ValueError: if `shape` is not a tuple of positive ints (or None).

    Example:
        >>> Input(shape=(28, 28)).shape
        (None, 28, 28)
    """
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    if any(s is not None and (not isinstance(s, (int, np.integer)) or s <= 0) for s in shape):
        raise ValueError(f"Input: shape must hold positive ints or None, got {shape}")
    return SymbolicTensor((batch_size, *shape), config.standardize_dtype(dtype), name=name)


def map_structure(fn, structure):
    """Applies `fn` to each leaf of a list/tuple/dict structure.

    Args:
        fn: a function of one leaf.
        structure: a leaf, or a list, tuple or dict of structures.

    Returns:
        The same structure with `fn` applied to the leaves.

    Example:
        >>> map_structure(lambda x: x * 2, [1, (2, 3)])
        [2, (4, 6)]
    """
    if isinstance(structure, dict):
        return {key: map_structure(fn, value) for key, value in structure.items()}
    if isinstance(structure, (list, tuple)):
        return type(structure)(map_structure(fn, value) for value in structure)
    return fn(structure)


def symbolic_call(layer, inputs, args, kwargs):
    """Calls `layer` on symbolic inputs: a dry run on zeros, then records it.

    Args:
        layer: the layer being called.
        inputs: symbolic tensors (a structure of them).
        args: further positional arguments.
        kwargs: keyword arguments.

    Returns:
        Symbolic outputs of the shapes the dry run gave.

    Example:
        >>> from minikeras.layers import Dense
        >>> Dense(4)(Input(shape=(3,))).shape
        (None, 4)
    """

    def zeros(tensor):
        concrete = tuple(1 if s is None else s for s in tensor.shape)
        return np.zeros(concrete, dtype=tensor.dtype)

    if not layer.built:
        # Build from the symbolic shapes: build() sees None where a size is unknown
        # (a Dense on an unknown last axis must fail here, not guess 1 from the dry run).
        layer._build_on_first_call(inputs)
    # The dry run must not change state: no moving-statistics updates, no random draws.
    dry_kwargs = {**kwargs, "training": False}
    outputs = layer(map_structure(zeros, inputs), *args, **dry_kwargs)
    node = Node(layer, inputs, args, kwargs)

    def symbolic(tensor):
        shape = tuple(tensor.shape)
        if shape and _batch_unknown(inputs):
            shape = (None, *shape[1:])
        return SymbolicTensor(shape, str(tensor.dtype), node=node)

    node.outputs = map_structure(symbolic, outputs)
    layer._output_shape = map_structure(lambda t: t.shape, node.outputs)
    return node.outputs


def _batch_unknown(inputs):
    leaves = []
    map_structure(leaves.append, inputs)
    return any(t.shape and t.shape[0] is None for t in leaves)
