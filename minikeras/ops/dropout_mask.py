"""`dropout_mask`: inputs times a random keep mask, the mask drawn inside the op.

Drawn inside a fused primitive, the mask is part of what a tape records: a
replayed training step (`engine.replay`) draws a fresh mask from the same
generator, in the same order, where a mask drawn in the layer's Python would
be frozen into the recording. Forward and VJP keep the kept entries (scaled)
with `engine.gradient_select`: for float16 a select, as JAX's dropout, so an
inf in a dropped entry gives 0, not NaN; for float32/64 the product.
`layers.Dropout` and `random.dropout` both draw their masks here.
"""

import numpy as np
from autograd.numpy.numpy_boxes import ArrayBox

from minikeras.engine.context import TRACING
from minikeras.engine.context import state as _state
from minikeras.engine.gradient_select import select_gradient
from minikeras.engine.primitive import call_primitive, defvjp_fused, fused_primitive
from minikeras.engine.replay import replay_draws
from minikeras.engine.tensor import note_effect
from minikeras.ops.core import dtype_of, value_of, wrap
from minikeras.ops.math import multiply

__all__ = ["dropout_mask"]


def _draw(rate, mask_shape, generator):
    """The boolean keep mask: each entry kept with probability `1 - rate`."""
    if TRACING[0] and _state.effect_observers:
        note_effect("a random draw")
    rng = _state.generator if generator is None else generator  # the thread's, at each call
    return rng.random(mask_shape, dtype=np.float32) >= rate


def _scaled_mask(dtype, rate, mask_shape, generator):
    keep = _draw(rate, mask_shape, generator)
    return keep.astype(dtype) * dtype.type(1.0 / (1.0 - rate))


@fused_primitive
def _dropout_mask(x, rate, mask_shape, generator):
    """`x / (1 - rate)` where `keep`, drawn now, holds, 0 elsewhere; the residual is `keep`.

    For float16 a select, as JAX's dropout: an inf or NaN in a dropped entry
    gives 0 (forward and backward), not NaN; float32/64 take the product.
    """
    keep = _draw(rate, mask_shape, generator)
    out = x * x.dtype.type(1.0 / (1.0 - rate))
    return select_gradient(keep, out, out=out), keep


def _dropout_mask_vjp(argnums, ans, args, keep):
    # (`keep` is None only where the forward did not run on plain arrays, which
    # `dropout_mask` never lets happen: nested tapes take the unfused path.)
    x, rate = args[0], args[1]
    scale = x.dtype.type(1.0 / (1.0 - rate))

    def vjp(g):
        scaled = g * scale
        return [select_gradient(keep, scaled, out=scaled)]

    return vjp


defvjp_fused(_dropout_mask, _dropout_mask_vjp)
replay_draws(_dropout_mask)  # a replay that gives up puts the generators back


def dropout_mask(x, rate, mask_shape, generator=None):
    """Multiplies `x` by a keep mask of `mask_shape` drawn from `generator`, scaled.

    Each mask entry is kept with probability `1 - rate` (a float32 uniform
    draw `>= rate`) and scaled by `1 / (1 - rate)`; the mask broadcasts over
    `x`. The draw happens inside the op, so a compiled training step draws
    a fresh mask at each step.

    Args:
        x: a floating Tensor.
        rate: the fraction to drop, in `[0, 1)`.
        mask_shape: the mask's shape, broadcastable to `x`'s.
        generator: a numpy `Generator`, or None for the thread's default one
            (`minikeras.random.generator()`), read at each call.

    Returns:
        A Tensor of `x`'s shape and dtype.

    Example:
        >>> out = mk.ops.dropout_mask.dropout_mask(
        ...     mk.ops.ones((2, 4)), 0.5, (2, 4), np.random.default_rng(0)
        ... )
        >>> sorted(set(out.numpy().ravel().tolist()))
        [0.0, 2.0]
    """
    value = value_of(x)
    inner = value._value if type(value) is ArrayBox else value
    if type(inner) is not np.ndarray:  # nested tapes (a gradient of a gradient): mask as data
        mask = _scaled_mask(np.dtype(dtype_of(value)), rate, tuple(mask_shape), generator)
        return multiply(x, mask)
    return wrap(call_primitive(_dropout_mask, value, float(rate), tuple(mask_shape), generator))
