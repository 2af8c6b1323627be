"""Fused primitives: the one way to define an op whose VJP reuses its forward's work.

An ordinary op is an autograd primitive with its VJP registered beside it
(`@primitive` + `defvjp`). A *fused* op (dense, conv, pooling, the recurrent
loops, the fused cross-entropies) does more work per call, and its gradient
wants what the forward pass computed on the way: a softmax, the winners of a
max pool, a recurrent loop's states. Such an op is written in two pieces, next
to each other:

    @fused_primitive
    def _op(x, kernel, flag):
        ...
        return ans, residuals          # anything the VJP will want

    def _op_vjp(argnums, ans, args, residuals):
        x, kernel, flag = args
        def vjp(g):
            return [grad_for(argnum, g, residuals) for argnum in argnums]
        return vjp

    defvjp_fused(_op, _op_vjp)

and is called with `call_primitive(_op, x, kernel, flag)` (positional
arguments only; boxed ones are differentiated).

The contract, in full:

- The forward takes plain values and returns `(ans, residuals)`; only `ans`
  is the op's result. It may write into the arrays it created.
- The VJP maker receives the differentiated argument numbers, the result, all
  arguments and the residuals, and returns `vjp(g)` giving one gradient per
  argument number, in order.
- `residuals` is None when the forward did not run on plain arrays: when an
  outer tape traces the arguments (a gradient of a gradient), or when
  autograd's own `grad` calls the op. The VJP must then compute what it needs
  itself, from differentiable ops if it supports higher order.

`call_primitive` unboxes the innermost trace's arguments, runs the forward
(recursing for outer traces), asks the VJP maker for the VJP, and records the
node with `record`. A hot op that has already unboxed its arguments (`dense`)
calls `record_fused` directly. Every node the fused ops add goes through
`record`, so a tool that watches the graph (the tests' float32 guard) patches
that one function.

Why not autograd's own wrapper: it is general (keyword arguments, ufunc
dispatch, untraced primitives) and costs about 5 µs a call, as much as the
arithmetic of a small model's layer; and it has no place for residuals.
"""

import threading

import numpy as np
from autograd.core import VJPNode
from autograd.core import primitive_vjps as _primitive_vjps
from autograd.extend import defvjp_argnums, primitive
from autograd.numpy.numpy_boxes import ArrayBox
from autograd.tracer import box_types, new_box

__all__ = ["call_primitive", "defvjp_fused", "fused_primitive", "record", "record_fused"]

# fused primitive -> (forward returning (ans, residuals), VJP maker)
_fused = {}
# The `replay.Recorder`s watching, in any thread (empty nearly always: one check per node).
recorders = []


def fused_primitive(forward):
    """Makes a primitive of `forward(*args) -> (ans, residuals)` (see the module docstring).

    Args:
        forward: a function of positional arguments returning the result and
            whatever its VJP will reuse.

    Returns:
        An autograd primitive returning only `ans`; give it a VJP with
        `defvjp_fused` and call it with `call_primitive`. Its `forward`
        attribute is `forward` itself.

    Example:
        >>> @mk.engine.primitive.fused_primitive
        ... def cube(x):
        ...     square = x * x
        ...     return square * x, square
        >>> cube(np.array([2.0]))
        array([8.])
    """

    def plain(*args):
        return forward(*args)[0]

    plain.__name__ = forward.__name__
    plain.__qualname__ = forward.__qualname__
    plain.__doc__ = forward.__doc__
    op = primitive(plain)
    op.forward = forward  # for a fused op built on another one
    _fused[op] = (forward, None)
    return op


def defvjp_fused(op, vjp_maker):
    """Registers the VJP of a `fused_primitive`.

    Args:
        op: what `fused_primitive` returned.
        vjp_maker: `vjp_maker(argnums, ans, args, residuals)` returning
            `vjp(g)`, which gives one gradient per argument number in
            `argnums`. `residuals` is None when the forward did not run on
            plain arrays.

    Returns:
        None.

    Raises:
        TypeError: if `op` was not made by `fused_primitive`.

    Example:
        >>> @mk.engine.primitive.fused_primitive
        ... def cube(x):
        ...     square = x * x
        ...     return square * x, square
        >>> def cube_vjp(argnums, ans, args, square):
        ...     square = args[0] * args[0] if square is None else square
        ...     return lambda g: [3 * g * square]
        >>> mk.engine.primitive.defvjp_fused(cube, cube_vjp)
        >>> from autograd import grad
        >>> float(grad(lambda x: mk.engine.primitive.call_primitive(cube, x))(2.0))
        12.0
    """
    if op not in _fused:
        raise TypeError(f"defvjp_fused: {op!r} was not made with fused_primitive")
    _fused[op] = (_fused[op][0], vjp_maker)
    # autograd's own calls (its `grad`, the nodes of outer traces) get no residuals.
    defvjp_argnums(
        op, lambda argnums, ans, args, kwargs: vjp_maker(tuple(argnums), ans, args, None)
    )


def call_primitive(op, *args):
    """Calls a primitive on positional arguments, recording it if traced.

    The same as `op(*args)`, only faster; for a `fused_primitive` it also
    hands the forward's residuals to the VJP maker.

    Args:
        op: a `fused_primitive` with its VJP, or any autograd primitive with
            a VJP registered by `defvjp` or `defvjp_argnums` (one without a
            VJP, such as `anp.equal`, is simply called).
        *args: its positional arguments; boxed ones are differentiated.

    Returns:
        The result, boxed for the innermost trace among the arguments, if any.

    Example:
        >>> from autograd import grad
        >>> from autograd.extend import defvjp, primitive
        >>> relu = primitive(lambda x: np.maximum(x, 0.0))
        >>> defvjp(relu, lambda ans, x: lambda g: g * (ans > 0))
        >>> mk.engine.primitive.call_primitive(relu, np.array([-1.0, 2.0]))
        array([0., 2.])
        >>> float(grad(lambda x: mk.engine.primitive.call_primitive(relu, x))(2.0))
        1.0
    """
    # The usual call: boxes of one trace around plain arrays (or numpy scalars, as a
    # full `sum` gives), or no boxes at all.
    trace = None
    for arg in args:
        kind = type(arg)
        if kind is ArrayBox:
            value = arg._value
            if (type(value) is not np.ndarray and not isinstance(value, np.generic)) or (
                trace is not None and arg._trace != trace
            ):
                break
            trace = arg._trace
        elif kind in box_types:
            break
    else:
        if trace is None:
            return op.fun(*args)
        if op not in _primitive_vjps:
            return op(*args)
        first = args[0]
        if len(args) == 1:  # unary ops and activations
            argnums, parents, values = (0,), (first._node,), (first._value,)
        elif len(args) == 2 and type(first) is ArrayBox:  # binary ops
            second = args[1]
            if type(second) is ArrayBox:
                argnums, parents = (0, 1), (first._node, second._node)
                values = (first._value, second._value)
            else:
                argnums, parents, values = (0,), (first._node,), (first._value, second)
        else:
            argnums = tuple(i for i, arg in enumerate(args) if type(arg) is ArrayBox)
            parents = tuple(args[i]._node for i in argnums)
            values = tuple(arg._value if type(arg) is ArrayBox else arg for arg in args)
        if op in _fused:
            return record_fused(op, trace, argnums, parents, values)
        ans = op.fun(*values)
        box = record(ans, trace, parents, _primitive_vjps[op](argnums, ans, values, {}))
        if recorders:
            _tell_recorders(op, trace, argnums, parents, values, box)
        return box
    if recorders:
        _tell_recorders(op, None, (), (), args, None)  # several traces: not replayable
    return _call_traced(op, args)


def _call_traced(op, args):
    """`call_primitive` for boxes of several traces (nested tapes), or of non-arrays."""
    top_trace = -1
    traces = 0
    for arg in args:
        if type(arg) in box_types:
            traces += 1
            if arg._trace > top_trace:
                top_trace = arg._trace
    if top_trace < 0:
        return op.fun(*args)
    if op not in _primitive_vjps:
        return op(*args)  # not differentiable (a comparison, say): autograd unboxes it
    argnums, parents, values = [], [], list(args)
    for argnum, arg in enumerate(args):
        if type(arg) in box_types and arg._trace == top_trace:
            argnums.append(argnum)
            parents.append(arg._node)
            value = values[argnum] = arg._value
            if type(value) in box_types:
                traces += 1
    if traces > len(argnums):
        # Boxes of outer traces are left in `values`: the recursion records those.
        ans = call_primitive(op, *values)
        vjp = _primitive_vjps[op](tuple(argnums), ans, tuple(values), {})
        return record(ans, top_trace, tuple(parents), vjp)
    if op in _fused:
        return record_fused(op, top_trace, tuple(argnums), tuple(parents), tuple(values))
    ans = op.fun(*values)
    vjp = _primitive_vjps[op](tuple(argnums), ans, tuple(values), {})
    return record(ans, top_trace, tuple(parents), vjp)


def record_fused(op, trace, argnums, parents, values):
    """Runs a `fused_primitive` on plain `values` and records it for `trace`.

    The part of `call_primitive` after unboxing, for a hot op that unboxed
    its own arguments (`ops.dense`).

    Args:
        op: a `fused_primitive` with its VJP.
        trace: the trace id of the boxes that were unboxed.
        argnums: the tuple of argument numbers that were boxed.
        parents: their nodes, a tuple in the same order.
        values: all arguments, unboxed, as a tuple.

    Returns:
        The boxed result.

    Example:
        >>> from autograd.core import VJPNode
        >>> @mk.engine.primitive.fused_primitive
        ... def scale(x, factor):
        ...     return x * factor, None
        >>> mk.engine.primitive.defvjp_fused(
        ...     scale, lambda argnums, ans, args, residuals: lambda g: [g * args[1]]
        ... )
        >>> box = mk.engine.primitive.record_fused(
        ...     scale, 7, (0,), (VJPNode.new_root(),), (np.ones(2), 3.0)
        ... )
        >>> box._node.vjp(np.ones(2))
        [array([3., 3.])]
    """
    forward, vjp_maker = _fused[op]
    ans, residuals = forward(*values)
    box = record(ans, trace, parents, vjp_maker(argnums, ans, values, residuals))
    if recorders:
        _tell_recorders(op, trace, argnums, parents, values, box)
    return box


def _tell_recorders(op, trace, argnums, parents, values, box):
    """Tells this thread's `replay.Recorder`s of a node just recorded."""
    thread = threading.get_ident()
    for recorder in recorders:
        if recorder.thread == thread:
            recorder.note(op, trace, argnums, parents, values, box)


def record(ans, trace, parents, vjp):
    """Boxes `ans` for `trace`, with a node that pulls gradients back to `parents` by `vjp`.

    Every node `call_primitive` and `record_fused` add is made here.

    Args:
        ans: the op's result on unboxed values.
        trace: the trace id of the boxes that were unboxed.
        parents: a tuple of their nodes, in argument order.
        vjp: `vjp(g)` returning one gradient per parent.

    Returns:
        The boxed result.

    Example:
        >>> from autograd.core import VJPNode
        >>> box = mk.engine.primitive.record(np.ones(2), 7, (VJPNode.new_root(),), lambda g: (g,))
        >>> box._trace, len(box._node.parents)
        (7, 1)
    """
    node = VJPNode.__new__(VJPNode)
    node.parents = parents
    node.vjp = vjp
    if type(ans) in _ARRAY_BOXED:  # (an array, or a reduction's scalar: a mean loss)
        return ArrayBox(ans, trace, node)
    return new_box(ans, trace, node)


# Types autograd boxes in an ArrayBox (`new_box` finds that out with a call).
_ARRAY_BOXED = frozenset({np.ndarray, np.float32, np.float64})
