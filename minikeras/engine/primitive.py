"""`call_primitive`: autograd's primitive call, minus what our hot ops never need.

autograd's wrapper around a primitive is general: keyword arguments, ufunc
dispatch to foreign array types, primitives that are not traced. It costs
about 5 µs per call, which for a small model is as much as the arithmetic.
The fused ops (`dense`, `mean`, sparse cross-entropy) take positional arrays
only, so they call their primitive through `call_primitive`, which does the
same tracing in a fraction of the time: unbox the innermost trace's boxes,
compute (recursing for outer traces), record a node with the VJP that
`defvjp` registered, and box the result.
"""

import numpy as np
from autograd.core import VJPNode, primitive_vjps
from autograd.numpy.numpy_boxes import ArrayBox
from autograd.tracer import box_types, new_box


def call_primitive(primitive, *args):
    """Calls an autograd primitive on positional arguments, recording it if traced.

    The same as `primitive(*args)`, only faster: the result and the recorded
    node (parents, VJP) are the ones autograd would make.

    Args:
        primitive: a function made with `autograd.extend.primitive`, with a
            VJP registered by `defvjp` or `defvjp_argnums`.
        *args: its positional arguments; boxed ones are differentiated.

    Returns:
        The result, boxed for the innermost trace among the arguments, if any.

    Example:
        >>> from minikeras.ops.nn import _relu
        >>> call_primitive(_relu, np.array([-1.0, 2.0]))
        array([0., 2.])
    """
    top_trace = -1
    traces = 0
    for arg in args:
        if type(arg) in box_types:
            traces += 1
            if arg._trace > top_trace:
                top_trace = arg._trace
    if top_trace < 0:
        return primitive.fun(*args)
    argnums, parents, values = [], [], list(args)
    for argnum, arg in enumerate(args):
        if type(arg) in box_types and arg._trace == top_trace:
            argnums.append(argnum)
            parents.append(arg._node)
            value = values[argnum] = arg._value
            if type(value) in box_types:
                traces += 1
    residuals = {}
    if traces > len(argnums):
        # Boxes of outer traces are left in `values`: the recursion records those.
        ans = call_primitive(primitive, *values)
    elif primitive in _forwards_with_residuals:
        ans, residuals = _forwards_with_residuals[primitive](*values)
    else:
        ans = primitive.fun(*values)
    vjp = primitive_vjps[primitive](tuple(argnums), ans, tuple(values), residuals)
    return record(ans, top_trace, tuple(parents), vjp)


def record(ans, trace, parents, vjp):
    """Boxes `ans` for `trace`, with a node that pulls gradients back to `parents` by `vjp`.

    The last step of `call_primitive`, for an op that unboxes its own
    arguments on a path that cannot afford the general one (`ops.dense`).

    Args:
        ans: the op's result on unboxed values.
        trace: the trace id of the boxes that were unboxed.
        parents: a tuple of their nodes, in argument order.
        vjp: `vjp(g)` returning one gradient per parent.

    Returns:
        The boxed result.

    Example:
        >>> from autograd.core import VJPNode
        >>> box = record(np.ones(2), 7, (VJPNode.new_root(),), lambda g: (g,))
        >>> box._trace, len(box._node.parents)
        (7, 1)
    """
    node = VJPNode.__new__(VJPNode)
    node.parents = parents
    node.vjp = vjp
    if type(ans) is np.ndarray:
        return ArrayBox(ans, trace, node)
    return new_box(ans, trace, node)


# primitive -> forward(*args) returning (ans, residuals); see `defresiduals`.
_forwards_with_residuals = {}


def defresiduals(primitive, forward):
    """Lets a primitive's VJP reuse what its forward pass computed.

    When `call_primitive` records `primitive` on plain arrays, it runs
    `forward(*args)` instead, which returns `(ans, residuals)`: the result and
    a dict that the VJP maker receives as keyword arguments (a softmax, say,
    that the gradient would otherwise recompute). autograd's own calls, and
    the nodes of outer traces, pass no keywords: the VJP maker must then
    compute what it needs itself.

    Args:
        primitive: a function made with `autograd.extend.primitive`.
        forward: a function of the same arguments returning `(ans, residuals)`.

    Returns:
        None.

    Example:
        >>> from minikeras.ops.nn import _sparse_xent_logits
        >>> _sparse_xent_logits in _forwards_with_residuals
        True
    """
    _forwards_with_residuals[primitive] = forward
