"""`jvp`: forward-mode derivatives (Jacobian-vector products), as Keras's `ops.jvp`.

minikeras differentiates in reverse mode only, so `jvp` takes two reverse
passes, the "double VJP" trick: a vector-Jacobian product `u -> J^T u` is
linear in `u`, and its own VJP, pulled back from the tangents `t`, is `J t`.
An inner tape records `fun`; an outer one records the inner tape's backward
pass (every op's VJP is differentiable, as the second-order tests check);
`J t` is the outer gradient with respect to `u`. It costs about three
evaluations of `fun`, where a true forward mode costs two.
"""

import numpy as np

from minikeras import tree
from minikeras.engine.tape import GradientTape
from minikeras.ops.core import Tensor, value_of, wrap
from minikeras.ops.creation import convert_to_tensor
from minikeras.ops.reduction import sum as _sum

__all__ = ["jvp"]


def jvp(fun, primals, tangents, has_aux=False):
    """The value of `fun(*primals)` and its derivative in the direction `tangents`.

    Args:
        fun: function of the tensors in `primals`, returning a tensor or a
            nested structure of them (with `has_aux`, a pair `(output, aux)`).
        primals: a tuple or list of the arguments (nested structures allowed).
        tangents: a tuple or list of the same structure and shapes.
        has_aux: whether `fun` returns `(output, aux)`; `aux` is returned as
            it is, without a derivative.

    Returns:
        `(primals_out, tangents_out)`, or `(primals_out, tangents_out, aux)`
        with `has_aux`; `tangents_out` has the structure of `primals_out`.

    Raises:
        TypeError: if `primals` or `tangents` is not a tuple or list, or a
            primal is not floating.
        ValueError: if the structures or shapes of `primals` and `tangents`
            differ.

    Example:
        >>> out, tangent = mk.ops.jvp(lambda x: x * x, (np.float32(3.0),), (np.float32(1.0),))
        >>> float(out), float(tangent)
        (9.0, 6.0)
    """
    for name, value in (("primals", primals), ("tangents", tangents)):
        if not isinstance(value, (tuple, list)):
            raise TypeError(f"jvp: {name} must be a tuple or list, got {type(value).__name__}")
    flat_primals, flat_tangents = tree.flatten(primals), tree.flatten(tangents)
    if len(flat_primals) != len(flat_tangents):
        raise ValueError(
            f"jvp: primals has {len(flat_primals)} tensors but tangents {len(flat_tangents)}"
        )
    inputs = [_fresh(convert_to_tensor(primal)) for primal in flat_primals]
    directions = []
    for index, (primal, tangent) in enumerate(zip(inputs, flat_tangents)):
        if primal.dtype.kind != "f":
            raise TypeError(f"jvp: primal {index} must be floating, got dtype {primal.dtype}")
        direction = value_of(convert_to_tensor(tangent, dtype=primal.dtype))
        if np.shape(direction) != primal.shape:
            raise ValueError(
                f"jvp: tangent {index} has shape {np.shape(direction)}, but its primal "
                f"has shape {primal.shape}"
            )
        directions.append(direction)
    with GradientTape() as outer:
        with GradientTape() as inner:
            inner.watch(inputs)
            returned = fun(*tree.pack_sequence_as(list(primals), inputs))
        output, aux = returned if has_aux else (returned, None)
        outputs = [convert_to_tensor(leaf) for leaf in tree.flatten(output)]
        cotangents = [_fresh(wrap(np.zeros(o.shape, dtype=o.dtype))) for o in outputs]
        outer.watch(cotangents)
        pulled = inner.gradient(
            outputs, inputs, output_gradients=cotangents, unconnected_gradients="zero"
        )
        total = sum(_sum(grad * direction) for grad, direction in zip(pulled, directions))
    if isinstance(total, Tensor):
        pushed = outer.gradient(total, cotangents, unconnected_gradients="zero")
    else:  # no input reaches any output
        pushed = [wrap(np.zeros(o.shape, dtype=o.dtype)) for o in outputs]
    tangents_out = tree.pack_sequence_as(output, pushed)
    primals_out = tree.pack_sequence_as(output, outputs)
    return (primals_out, tangents_out, aux) if has_aux else (primals_out, tangents_out)


def _fresh(tensor):
    """A Tensor of its own around the same value, for a tape to watch (not the caller's)."""
    return wrap(value_of(tensor))
