"""The backward pass of `GradientTape.gradient`: VJPs run in reverse topological order.

Like autograd's `backward_pass`, but from several end nodes at once, keeping
the gradient of every node asked for, adding same-shape array gradients in
place without autograd's vspaces, and telling a VJP (`may_overwrite`) when it
may write into the gradient it was handed because nothing else holds it.
"""

import operator
import sys

import numpy as np
from autograd.core import add_outgrads

__all__ = ["add_gradient", "may_overwrite"]


def _reverse_topological(end_nodes):
    """The inner nodes (those with parents) from `end_nodes` back, each after its users.

    Roots (Variables, watched Tensors) need no place in the order: a root's
    gradient is complete once every inner node has passed its share on.
    """
    user_counts = {}
    inner_ends = [*filter(_has_parents, end_nodes)]  # (no comprehension's call)
    stack, ends = inner_ends[:], set(inner_ends)
    while stack:
        for parent in stack.pop().parents:
            if parent.parents:
                if parent in user_counts:
                    user_counts[parent] += 1
                else:  # its first user: walk on from it (an end node is walked already)
                    user_counts[parent] = 1
                    if parent not in ends:
                        stack.append(parent)
    order = []
    if len(inner_ends) == 1:  # (one end node, the usual loss: no comprehension)
        ready = [] if inner_ends[0] in user_counts else inner_ends
    else:
        ready = [node for node in inner_ends if node not in user_counts]
    while ready:
        node = ready.pop()
        order.append(node)
        for parent in node.parents:
            if parent.parents:
                user_counts[parent] -= 1
                if not user_counts[parent]:
                    ready.append(parent)
    return order


_has_parents = operator.attrgetter("parents")


def _backward(seeds, wanted, release=False):
    """Pulls each end node's seed back; stores the gradient of each wanted node.

    Like autograd's `backward_pass`, but from several end nodes, and it keeps
    the gradients of many nodes. With `release`, each node drops its VJP (and
    the values that VJP holds) once used.
    """
    outgrads = {}
    for node, seed in seeds.items():  # (a loop, not a comprehension's call)
        outgrads[node] = (seed, False)
    ends = list(seeds)
    if len(ends) == 1:
        ends = _chain(ends[0], wanted, outgrads, release)
    if ends:
        for node in _reverse_topological(ends):
            _visit(node, wanted, outgrads, release)
    # What is left are the roots' gradients, complete now.
    for node in wanted:
        if node in outgrads:
            wanted[node] = outgrads[node][0]


def _chain(node, wanted, outgrads, release):
    """Pulls back along a chain from one end node; returns `[node]` where the chain ends.

    While each inner node has one inner parent (the others roots: weights),
    the chain is its own reverse topological order: that parent's only user
    here is the node before it (any other user would be computed after it,
    yet reached from its own ancestors). The usual step (a model's layers
    one after another, or a replayed model's one node, then the loss) is
    such a chain, walked without `_reverse_topological`'s counts. At a node
    with several inner parents, the general walk takes over from it:
    `[node]` is returned, its gradient still in `outgrads`; `[]` once the
    chain reaches the roots.
    """
    while node.parents:
        inner = None
        for parent in node.parents:
            if parent.parents:
                if inner is not None:  # (a second one, or the same one twice: `x * x`)
                    return [node]
                inner = parent
        _visit(node, wanted, outgrads, release)
        if inner is None:
            return []
        node = inner
    return []


def _visit(node, wanted, outgrads, release):
    """Takes `node`'s complete gradient from `outgrads` and pulls it back to its parents."""
    grad = outgrads.pop(node)[0]
    if node in wanted:
        wanted[node] = grad
    _pull_back(node, grad, outgrads)
    if release:
        node.parents, node.vjp = (), None


def _pull_back(node, grad, outgrads):
    """Adds `node`'s VJP of `grad` to its parents' gradients.

    If nothing but `_backward` holds `grad` (not the results, not another
    parent, not a view's base: references counted, so this is a function of
    its own, with no stale locals), the VJP may write into it.
    """
    global _overwritable
    if type(grad) is np.ndarray and grad.base is None and sys.getrefcount(grad) <= _SOLE_REFS:
        _overwritable = grad
    try:
        for parent, parent_grad in zip(node.parents, node.vjp(grad)):
            previous = outgrads.get(parent)
            if previous is None and type(parent_grad) is np.ndarray:
                outgrads[parent] = (parent_grad, False)  # add_gradient's first array, inline
            else:
                outgrads[parent] = add_gradient(previous, parent_grad)
    finally:
        _overwritable = None


def add_gradient(previous, grad):
    """`previous` (a `(sum, owned)` pair, or None) plus `grad`: how a node's gradients add up.

    A plain array takes `_add_arrays`; anything else (a numpy scalar,
    autograd's `SparseObject` from an indexing VJP) autograd's `add_outgrads`.
    `engine.replay` sums its gradients with it too.

    Args:
        previous: the sum so far, as `(value, owned)`, or None.
        grad: the gradient to add.

    Returns:
        The new `(value, owned)` pair.

    Example:
        >>> total = mk.engine.backward.add_gradient(None, np.ones(2))
        >>> mk.engine.backward.add_gradient(total, np.ones(2))[0]
        array([2., 2.])
    """
    if type(grad) is not np.ndarray:
        return add_outgrads(previous, grad)
    if previous is None:
        return (grad, False)  # as add_outgrads stores a first one
    return _add_arrays(previous, grad)


def _add_arrays(previous, grad):
    """`add_outgrads` for a plain array of the same shape and dtype, without vspaces.

    `previous` is `(sum so far, whether _backward owns its buffer)`: the first
    gradient may be an array a VJP still shares (its `g`), so it is added out
    of place once; the sum is then ours, and later gradients go into it in place.
    """
    total, owned = previous
    if type(total) is not np.ndarray or total.shape != grad.shape or total.dtype != grad.dtype:
        return add_outgrads(previous, grad)
    if owned:
        total += grad
        return previous
    return (total + grad, True)


# The gradient `_pull_back` is handing to a VJP that may write into it, or None.
# Shared by the threads, and safe so: a VJP compares it with its own `g` by
# identity, so another thread's value can only make the answer "no".
_overwritable = None


def may_overwrite(grad):
    """Whether a VJP may write into `grad`, the gradient it was handed.

    Yes only while `GradientTape.gradient` runs the VJP and nothing else
    refers to `grad`: writing into it (a relu mask applied in place, say)
    then changes nothing anyone can see. Only for a VJP that computes all
    its gradients in one call (`defvjp_argnums`), after its last read of the
    original `grad`; autograd's own backward pass never allows it.

    Args:
        grad: the gradient a VJP received.

    Returns:
        A bool.

    Example:
        >>> mk.engine.backward.may_overwrite(np.ones(3))  # not handed over by a tape
        False
    """
    return grad is _overwritable


def _sole_refs():
    """The references `_pull_back` counts on a gradient only `_backward` holds.

    Measured rather than assumed (the count differs between Python versions):
    a local of the caller, the parameter, and getrefcount's own argument.
    """

    def pull_back(grad):
        return sys.getrefcount(grad)

    grad = np.zeros(1)
    return pull_back(grad)


_SOLE_REFS = _sole_refs()
