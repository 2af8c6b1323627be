"""Nodes made for a tape directly: Variables' roots without their reads' boxes, and one node
standing for many ops.

A replayed model call (`models.replayed_call`) is one node of the user's
tape: its parents are the tape's roots of the model's weights, which reading
each weight through `read_variable` would make (and box, for nothing), and
its result a Tensor around that node's box. Both are made here, inline, as
`GradientTape._record_read` and `primitive.record` make them: this runs at
every step of a custom training loop.
"""

import numpy as np
from autograd.core import VJPNode
from autograd.numpy.numpy_boxes import ArrayBox

from minikeras.engine.primitive import record
from minikeras.engine.tape import _root_vjp
from minikeras.engine.tensor import Tensor, wrap
from minikeras.engine.variable import Variable

__all__ = ["read_roots", "recorded_tensor"]

_new_node, _new_tensor = VJPNode.__new__, Tensor.__new__


def read_roots(tape, variables, first, parents, positions):
    """What `read_variable` gives a read of each of `variables` under `tape` alone, as nodes.

    For each Variable the tape watches (as `GradientTape._record_read`
    decides: a root it has, or a trainable floating one it now roots), its
    root node goes to `parents` and its position (counted from `first`) to
    `positions`, without the box a read makes around it. Only where a read
    would do nothing more: one tape, no read observer, no traced rule, no
    autocast (the caller checks).

    Args:
        tape: the one recording `GradientTape`.
        variables: the Variables read.
        first: the position of the first of them.
        parents: a list the watched ones' root nodes are appended to.
        positions: a list their positions are appended to.

    Returns:
        How many nodes were added.

    Example:
        >>> w, steps = mk.Variable([1.0]), mk.Variable([0], dtype="int32")
        >>> with mk.GradientTape() as tape:
        ...     parents, positions = [], []
        ...     mk.engine.tape_nodes.read_roots(tape, [steps, w], 0, parents, positions)
        1
        >>> positions, parents == [tape._nodes[id(w)]]
        ([1], True)
    """
    nodes, watching, added = tape._nodes, tape.watch_accessed_variables, 0
    for position, variable in enumerate(variables, first):
        node = nodes.get(id(variable))
        if node is None:
            # (a Variable's `trainable` is its `_trainable`; a subclass's may be its own)
            trainable = variable._trainable if type(variable) is Variable else variable.trainable
            if not (watching and trainable and variable._value.dtype.kind in "fc"):
                continue  # read as data: not watched
            node = _new_node(VJPNode)  # (`tape._new_root(variable)`, inline)
            node.parents, node.vjp = (), _root_vjp
            nodes[id(variable)] = node
            tape._keep_alive.append(variable)
        parents.append(node)
        positions.append(position)
        added += 1
    return added


def recorded_tensor(output, trace, parents, vjp):
    """`wrap(primitive.record(output, trace, parents, vjp))`, inline for an array `output`.

    Args:
        output: the value the node computed.
        trace: the tape's trace id.
        parents: a tuple of the node's parent nodes.
        vjp: `vjp(g)` returning one gradient per parent.

    Returns:
        A Tensor around the boxed `output`.

    Example:
        >>> from autograd.core import VJPNode
        >>> t = mk.engine.tape_nodes.recorded_tensor(np.ones(2), 7, (VJPNode.new_root(),), tuple)
        >>> t._value._trace, len(t._value._node.parents)
        (7, 1)
    """
    if type(output) is not np.ndarray:
        return wrap(record(output, trace, parents, vjp))
    node = _new_node(VJPNode)
    node.parents, node.vjp = parents, vjp
    tensor = _new_tensor(Tensor)
    tensor._value = ArrayBox(output, trace, node)
    return tensor
