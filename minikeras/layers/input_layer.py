"""The functional API's placeholders: `Input(shape=...)` and the graph it records.

Calling a layer on a `SymbolicTensor` builds the layer from the symbolic
shapes and returns new `SymbolicTensor`s of the shapes its
`compute_output_shape` gives (`minikeras.layers.symbolic`), each remembering
the call (a `Node`). A functional `Model(inputs, outputs)` replays those
calls on real data.
"""

import numpy as np

from minikeras import config, ops
from minikeras.engine.operators import Operators
from minikeras.ops.symbolic import SymbolicValueError
from minikeras.tree import flatten, map_structure

__all__ = ["Input", "Node", "SymbolicTensor"]


class SymbolicTensor(Operators):
    """A placeholder for data in the functional API: a shape and a dtype.

    Made by `Input` and by calling layers on other symbolic tensors. It holds
    no values: pass it through layers, then give it to `Model(inputs, outputs)`.

    Args:
        shape: the shape, `None` for the batch axis.
        dtype: the dtype name.
        node: the layer call that produced it (None for an `Input`).
        name: a name for messages.

    Example:
        >>> x = mk.Input(shape=(3,))
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

    # Numpy hands its operators over to the reflected ones here (`array + x` is `x.__radd__`).
    __array_ufunc__ = None

    def _no_values(self, *args, **kwargs):
        raise SymbolicValueError(
            "A symbolic tensor has no values: pass it through layers or minikeras.ops "
            "functions (or a Lambda layer) and build a Model(inputs, outputs), then call "
            "the model on data"
        )

    # Reading values fails with a SymbolicValueError, which the public ops catch to record
    # a node instead (minikeras.ops.symbolic): nothing checks for symbolic arguments first.
    __array__ = __bool__ = __float__ = __int__ = __index__ = __len__ = __iter__ = _no_values

    # Operators, as Keras's KerasTensor has them: Tensor's (engine.operators), each a
    # minikeras.ops function, recorded in the graph; `/` as Keras's `true_divide` node.
    # No `==`: symbolic tensors compare (and hash) by identity, as Keras's do.
    def __truediv__(self, other):
        return ops.true_divide(self, other)

    def __rtruediv__(self, other):
        return ops.true_divide(other, self)

    __eq__ = object.__eq__
    __hash__ = object.__hash__


def _same(leaf):
    return leaf


class Node:
    """One recorded layer call: `outputs = layer(inputs, *args, **kwargs)`.

    Args:
        layer: the layer called.
        inputs: the symbolic inputs (a tensor or a list/tuple/dict of them).
        args: further positional arguments.
        kwargs: keyword arguments.

    Example:
        >>> mk.layers.input_layer.Node(None, mk.Input(shape=(2,)), (), {}).args
        ()
    """

    def __init__(self, layer, inputs, args, kwargs):
        # The containers copied, as Keras copies them: a list appended to after the
        # call must not change what the graph runs (its leaves are kept as they are).
        inputs, args, kwargs = map_structure(_same, (inputs, tuple(args), dict(kwargs)))
        self.layer, self.inputs, self.args, self.kwargs = layer, inputs, args, kwargs
        self.outputs = None

    def input_tensors(self):
        """The symbolic tensors the call takes, in its inputs, arguments and keywords.

        Returns:
            A list of `SymbolicTensor`s, each once, in order.

        Example:
            >>> a, b = mk.Input((2,)), mk.Input((2,))
            >>> len(mk.layers.Add()([a, b]).node.input_tensors())
            2
        """
        found = flatten((self.inputs, self.args, self.kwargs))
        unique, seen = [], set()
        for leaf in found:
            if isinstance(leaf, SymbolicTensor) and id(leaf) not in seen:
                seen.add(id(leaf))
                unique.append(leaf)
        return unique


def Input(  # noqa: N802 (Keras's name)
    shape=None,
    batch_size=None,
    dtype=None,
    sparse=None,
    ragged=None,
    batch_shape=None,
    name=None,
    tensor=None,
    optional=False,
):
    """A symbolic input for the functional API.

    Give the shape of one sample (`shape`, without the batch axis), or the
    whole shape (`batch_shape`, Keras 3's spelling), with `None` for each
    size that is not known yet: `Input((None, 8))` takes sequences of any
    length, and every layer called on it keeps that `None`.

    Args:
        shape: the shape of one sample, without the batch axis.
        batch_size: a fixed batch size, or None.
        dtype: the dtype, float32 by default. Strings: `"string"` (Keras's
            name) or `str`; the tensor's `dtype` then says `"str"` (numpy's
            name; Keras says `"string"`), and files write `"string"`.
        sparse: None or False (Keras's sparse inputs are not supported).
        ragged: None or False (nor are ragged ones).
        batch_shape: the whole shape, batch axis first (instead of `shape`
            and `batch_size`).
        name: an optional name.
        tensor: None (Keras wraps an existing backend tensor; not supported).
        optional: False (Keras's optional inputs, which may be None, are not
            supported).

    Returns:
        A `SymbolicTensor` of shape `(batch_size, *shape)`.

    Raises:
        ValueError: if neither or both of `shape` and `batch_shape` are given,
            a size is not a positive int or None, or `sparse`, `ragged`,
            `tensor` or `optional` asks for what is not supported.

    Example:
        >>> mk.Input(shape=(28, 28)).shape
        (None, 28, 28)
        >>> mk.Input(batch_shape=(None, 10, 3)).shape
        (None, 10, 3)
    """
    for key, value in (("sparse", sparse), ("ragged", ragged), ("optional", optional)):
        if value not in (False, None):
            raise ValueError(f"Input: `{key}={value!r}` is not supported here")
    if tensor is not None:
        raise ValueError("Input: `tensor` is not supported here (give `shape` and `dtype`)")
    if (shape is None) == (batch_shape is None):
        raise ValueError(
            "Input: give exactly one of `shape` (one sample's shape) and `batch_shape` "
            f"(with the batch axis), got shape={shape!r}, batch_shape={batch_shape!r}"
        )
    if batch_shape is not None:
        full = (batch_shape,) if isinstance(batch_shape, int) else tuple(batch_shape)
        if not full:
            raise ValueError("Input: `batch_shape` needs at least the batch axis, got ()")
    else:
        full = (batch_size, *((shape,) if isinstance(shape, int) else tuple(shape)))
    if any(s is not None and (not isinstance(s, (int, np.integer)) or s <= 0) for s in full):
        raise ValueError(f"Input: shape must hold positive ints or None, got {full}")
    full = tuple(None if s is None else int(s) for s in full)
    return SymbolicTensor(full, config.standardize_dtype(dtype), name=name)
