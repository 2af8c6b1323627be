"""Calling a layer on symbolic tensors: build from the shapes, then work out the outputs' shapes.

No data flows. The layer is built with the symbolic shapes (`None` where a
size is unknown), its known sizes are checked against its `input_spec`, and
the outputs' shapes come from `compute_output_shape`. A layer that defines no
`compute_output_shape` (a custom one) is traced instead: run twice on zeros,
with each unknown size replaced by two different placeholder sizes, and each
output size that differs between the runs is unknown (`None`). If those runs
fail, they are tried again with short sizes (2 and 3) for the unknown
non-batch sizes: a layer may index a table by position, which long
placeholders overrun. Nothing the
runs do is kept: they run with `training=False`.

Masks are followed the same way, as Keras's `_keras_mask` on symbolic
tensors: a layer that makes or passes a mask (its `compute_mask`, run on
placeholder data) gives its symbolic outputs a `_keras_mask` (a boolean
`SymbolicTensor`), and a traced layer whose `call` takes `mask` is traced
with a mask of ones where its input carries one. The mask's values still
come at run time (`minikeras.models.graph`).
"""

import contextvars

import numpy as np

from minikeras.layers import call_checks, call_helpers, call_spec
from minikeras.layers.input_layer import Node, SymbolicTensor
from minikeras.layers.input_spec import check_input_spec
from minikeras.tree import flatten, map_structure

__all__ = [
    "input_dtype",
    "on_placeholders",
    "output_spec",
    "symbolic_call",
    "traced_output_spec",
    "traced_spec",
]

# True while traced_spec runs a layer on placeholder data (see on_placeholders).
_ON_PLACEHOLDERS = contextvars.ContextVar("minikeras_on_placeholders", default=False)


def on_placeholders():
    """Whether the running call sees `traced_spec`'s placeholder data, not real data.

    A layer that refuses values it does not know (a `StringLookup` with
    `num_oov_indices=0`, whose vocabulary the placeholder `"0"` is not in)
    lets placeholders through, so that a custom layer holding it can be
    called on symbolic inputs.

    Returns:
        A bool.

    Example:
        >>> mk.layers.symbolic.on_placeholders()
        False
    """
    return _ON_PLACEHOLDERS.get()


# The sizes an unknown dimension takes in a traced run: small for the batch axis, and for
# the other axes large enough for stacks of convolutions and poolings (as Keras's tracing).
_BATCH_PLACEHOLDERS = (2, 3)
_AXIS_PLACEHOLDERS = (83, 89)
_DEFAULT_SIZES = (_BATCH_PLACEHOLDERS, _AXIS_PLACEHOLDERS)
_SHORT_SIZES = (_BATCH_PLACEHOLDERS, (2, 3))  # the second try of a traced layer


def _call_kwargs(layer, kwargs):
    """The keyword arguments that bind to `call` (training and mask only if it names them)."""
    return {
        key: value
        for key, value in kwargs.items()
        if key not in ("training", "mask") or call_checks.names_argument(layer.call, key)
    }


def symbolic_call(layer, inputs, args, kwargs):
    """Calls `layer` on symbolic inputs: builds it, checks the shapes, records the call.

    Args:
        layer: the layer being called.
        inputs: its first argument (a symbolic tensor or a structure of them).
        args: further positional arguments (may hold symbolic tensors).
        kwargs: keyword arguments (may hold symbolic tensors).

    Returns:
        Symbolic outputs, each remembering this call as its `node`.

    Raises:
        ValueError: if a known size does not fit what the layer expects.

    Example:
        >>> x = mk.Input(shape=(None, 8))
        >>> mk.layers.Conv1D(4, 3)(x).shape
        (None, None, 4)
    """
    call_kwargs = _call_kwargs(layer, kwargs)
    if not layer.built:
        layer._build_on_first_call(inputs, args, call_kwargs)
    if layer.input_spec is not None and isinstance(inputs, SymbolicTensor):
        check_input_spec(layer, inputs.shape)
    specs = layer.compute_output_spec(inputs, *args, **call_kwargs)
    node = Node(layer, inputs, args, kwargs)
    node.outputs = map_structure(
        lambda spec: SymbolicTensor(spec.shape, spec.dtype, node=node), specs
    )
    layer._inbound_nodes.append(node)
    object.__setattr__(layer, "_output_shape", map_structure(lambda t: t.shape, node.outputs))
    _attach_masks(layer, inputs, kwargs, node.outputs)
    return node.outputs


def _input_mask(inputs):
    """The `_keras_mask`s of symbolic inputs, in their structure; None if none has one."""
    masks = map_structure(lambda leaf: getattr(leaf, "_keras_mask", None), inputs)
    return masks if any(m is not None for m in flatten(masks)) else None


def _placeholder_shape(leaf, run, sizes):
    placeholders = [sizes[0][run]] + [sizes[1][run]] * leaf.ndim
    return tuple(p if s is None else s for p, s in zip(placeholders, leaf.shape))


def _placeholder(leaf, run=0, fill=0, sizes=(_BATCH_PLACEHOLDERS, _AXIS_PLACEHOLDERS)):
    return np.full(_placeholder_shape(leaf, run, sizes), fill, dtype=leaf.dtype)


def _filled_view(leaf, fill):
    """`_placeholder`'s shape, as a read-only broadcast of one value (a compute_mask reads)."""
    shape = _placeholder_shape(leaf, 0, _DEFAULT_SIZES)
    return np.broadcast_to(np.array(fill, dtype=leaf.dtype), shape)


def _attach_masks(layer, inputs, kwargs, outputs):
    """Sets `_keras_mask` on the outputs when the layer's `compute_mask`, run on placeholder
    data, makes a mask (see the module)."""
    from minikeras.layers.layer import Layer

    mask = kwargs.get("mask", _input_mask(inputs))
    if mask is None and type(layer).compute_mask is Layer.compute_mask:
        return  # the base compute_mask only passes a mask on
    # (read-only views of one value: no memory to fill, even for images of unknown size)
    concrete = map_structure(
        lambda leaf: _filled_view(leaf, 0) if isinstance(leaf, SymbolicTensor) else leaf, inputs
    )
    ones = map_structure(
        lambda leaf: _filled_view(leaf, 1) if isinstance(leaf, SymbolicTensor) else leaf, mask
    )
    try:
        found = layer.compute_mask(concrete, ones)
    except Exception:  # a mask the layer cannot make from placeholders: left to run time
        return
    if found is None:
        return
    for output, value in call_helpers.paired_masks(outputs, found):
        if value is not None:
            shape = np.shape(value)
            known = [None] + [None if n == _AXIS_PLACEHOLDERS[0] else n for n in shape[1:]]
            output._keras_mask = SymbolicTensor(tuple(known[: len(shape)]), "bool")


def _as_shape_structure(shape):
    """Lists of ints become tuples; lists of shapes stay lists (Keras's reading)."""
    if isinstance(shape, (list, tuple)) and all(
        s is None or isinstance(s, (int, np.integer)) for s in shape
    ):
        return tuple(None if s is None else int(s) for s in shape)
    if isinstance(shape, (list, tuple)):
        return [_as_shape_structure(s) for s in shape]
    if isinstance(shape, dict):
        return {key: _as_shape_structure(s) for key, s in shape.items()}
    raise TypeError(f"not a shape: {shape!r}")


def output_spec(layer, inputs, args, kwargs):
    """The symbolic outputs (shapes and dtypes, no node) of calling `layer` this way.

    Uses `compute_output_shape` when the layer's class defines one, with the
    shapes its signature asks for (see `call_spec`); traces the layer
    otherwise (see the module).

    Args:
        layer: a built layer.
        inputs: the first argument.
        args: further positional arguments.
        kwargs: keyword arguments.

    Returns:
        A `SymbolicTensor` or a structure of them.

    Raises:
        TypeError: if `compute_output_shape` returns something that is not a shape.

    Example:
        >>> dense = mk.layers.Dense(3)
        >>> x = mk.Input((None, 5))
        >>> dense.build(x.shape)
        >>> mk.layers.symbolic.output_spec(dense, x, (), {}).shape
        (None, None, 3)
    """
    from minikeras.layers.layer import Layer

    if type(layer).compute_output_shape is Layer.compute_output_shape:
        return traced_output_spec(layer, inputs, args, kwargs)
    tensors = call_spec.tensor_arguments(layer, inputs, args, kwargs)
    shape = layer.compute_output_shape(
        **call_spec.shapes_for(layer.compute_output_shape, layer, tensors)
    )
    try:
        shape = _as_shape_structure(shape)
    except TypeError:
        raise TypeError(
            f"{type(layer).__name__} '{layer.name}'.compute_output_shape returned "
            f"{shape!r:.100}, which is not a shape (a tuple of ints and None, or a list of them)"
        ) from None

    dtype = layer.compute_dtype
    if getattr(layer, "_keeps_input_dtype", False):  # (Flatten, Reshape, Permute: Keras's too)
        first = next(leaf for leaf in flatten(inputs) if isinstance(leaf, SymbolicTensor))
        dtype = input_dtype(layer, first.dtype)

    def spec(one):
        return SymbolicTensor(one, dtype)

    if isinstance(shape, tuple):
        return spec(shape)
    return _map_shapes(spec, shape)


def input_dtype(layer, dtype):
    """The dtype an input of `dtype` has inside `layer`'s call: floats autocast to its
    compute dtype (as `Layer.__call__` casts them), other dtypes as they are.

    Args:
        layer: the layer called.
        dtype: the input's dtype name.

    Returns:
        A dtype name.

    Example:
        >>> from minikeras.layers.symbolic import input_dtype
        >>> layer = mk.layers.Flatten(dtype="mixed_float16")
        >>> input_dtype(layer, "float32"), input_dtype(layer, "int32")
        ('float16', 'int32')
    """
    if np.dtype(dtype).kind == "f" and layer.autocast and layer._casts_float_inputs:
        return layer.compute_dtype
    return dtype


def _map_shapes(fn, shapes):
    if isinstance(shapes, tuple):
        return fn(shapes)
    if isinstance(shapes, dict):
        return {key: _map_shapes(fn, s) for key, s in shapes.items()}
    return [_map_shapes(fn, s) for s in shapes]


def traced_output_spec(layer, inputs, args, kwargs):
    """The outputs' shapes and dtypes found by running the layer on zeros (see the module).

    Args:
        layer: a built layer.
        inputs: the first argument (symbolic).
        args: further positional arguments.
        kwargs: keyword arguments.

    Returns:
        A `SymbolicTensor` or a structure of them, `None` for each size that
        follows an unknown input size.

    Example:
        >>> class Twice(mk.layers.Layer):
        ...     def call(self, inputs):
        ...         return mk.ops.concatenate([inputs, inputs], axis=1)
        >>> mk.layers.symbolic.traced_output_spec(Twice(), mk.Input((None, 3)), (), {}).shape
        (None, None, 3)
    """
    mask = _input_mask(inputs)
    if mask is not None and "mask" not in kwargs and call_checks.names_argument(layer.call, "mask"):
        kwargs = {**kwargs, "mask": mask}  # traced with a mask of ones (see the module)
    mask_leaves = {id(leaf) for leaf in flatten(kwargs.get("mask"))}

    def run(concrete):
        return layer(concrete[0], *concrete[1], **{**concrete[2], "training": False})

    def fill(leaf):
        return 1 if id(leaf) in mask_leaves else 0

    try:
        return traced_spec(run, (inputs, args, kwargs), fill=fill)
    except Exception:
        if not _unknown_length(inputs, args, kwargs):
            raise
        # An unknown length of 83 can be too long for the layer's own tables (a position
        # embedding of `sequence_length` rows under `Input((None,))`); Keras's tracer never
        # reads the values, so it passes. Short placeholders take such a layer.
        try:
            return traced_spec(run, (inputs, args, kwargs), fill=fill, sizes=_SHORT_SIZES)
        except Exception:
            pass
        raise


def _unknown_length(*arguments):
    """Whether a symbolic tensor among `arguments` has an unknown size past the batch axis."""
    leaves = flatten(list(arguments))
    return any(None in leaf.shape[1:] for leaf in leaves if isinstance(leaf, SymbolicTensor))


def traced_spec(run, arguments, fill=lambda leaf: 0, sizes=None):
    """The symbolic outputs of `run(arguments)`, found by running it on placeholder data.

    Each symbolic tensor in `arguments` becomes an array of `fill(tensor)`
    (of two placeholder sizes for each unknown size, see the module), and
    each output size that differs between the runs is unknown (`None`).

    Args:
        run: a function of one argument, the structure `arguments` with
            arrays in place of its symbolic tensors.
        arguments: a structure holding symbolic tensors (and anything else).
        fill: the value of each symbolic tensor's placeholder, a function of it.
        sizes: `((batch, batch), (axis, axis))`, the placeholder sizes of the
            two runs for an unknown batch size and an unknown other size
            (by default, sizes unlikely to meet a real one by chance).

    Returns:
        A `SymbolicTensor` or a structure of them, as `run` returns Tensors.

    Example:
        >>> spec = mk.layers.symbolic.traced_spec(
        ...     lambda xs: mk.ops.concatenate(xs, axis=1), [mk.Input((2,)), mk.Input((None,))]
        ... )
        >>> spec.shape, spec.dtype
        ((None, None), 'float32')
    """
    leaves = []
    map_structure(leaves.append, arguments)
    unknown = any(
        s is None for leaf in leaves if isinstance(leaf, SymbolicTensor) for s in leaf.shape
    )
    runs = []
    for index in range(2 if unknown else 1):

        def placeholder(leaf, index=index):
            if not isinstance(leaf, SymbolicTensor):
                return leaf
            return _placeholder(leaf, index, fill(leaf), sizes or _DEFAULT_SIZES)

        token = _ON_PLACEHOLDERS.set(True)
        try:
            runs.append(run(map_structure(placeholder, arguments)))
        finally:
            _ON_PLACEHOLDERS.reset(token)
    first, last = [], []
    map_structure(first.append, runs[0])
    map_structure(last.append, runs[-1])
    if len(first) != len(last) or any(np.ndim(a) != np.ndim(b) for a, b in zip(first, last)):
        # (`unstack` of an unknown axis: how many outputs, or their rank, depends on a size)
        raise ValueError(
            f"the number or rank of the outputs depends on an unknown size ({len(first)} "
            f"outputs for one placeholder size, {len(last)} for another); give the size"
        )
    specs = iter(
        SymbolicTensor(
            tuple(a if a == b else None for a, b in zip(one.shape, two.shape)), str(one.dtype)
        )
        for one, two in zip(first, last)
    )
    return map_structure(lambda _: next(specs), runs[0])
