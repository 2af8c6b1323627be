"""Scaled dot-product attention as one op: `dot_product_attention`, Keras 3's arguments.

    logits = scale * query . key             (B, N, T, S), per head
    logits = logits + bias; masked pairs get -0.7 * the dtype's largest value
    output = softmax(logits over S) . value  (B, T, N, H)

Built from `einsum`, `where` and `softmax`, which give it its gradient. Key and
value may have fewer heads than the query (grouped-query attention): query
head `n` reads key/value head `n // (N // K)`, as in Keras.
"""

import math

import numpy as np

from minikeras.ops.activation_functions import softmax
from minikeras.ops.comparison import where
from minikeras.ops.core import as_float, dtype_of, shape_of, value_of, wrap
from minikeras.ops.creation import cast
from minikeras.ops.elementary import abs
from minikeras.ops.logical import logical_and
from minikeras.ops.matrix_products import einsum
from minikeras.ops.operands import narrowed_operands
from minikeras.ops.shape import reshape

__all__ = ["dot_product_attention"]


def _broadcast_check(name, array, wanted):
    """`array`'s shape must broadcast to `wanted` `(B, N, T, S)`, else a ValueError."""
    shape = shape_of(array)
    try:
        if np.broadcast_shapes(shape, wanted) == wanted:
            return
    except ValueError:
        pass
    raise ValueError(
        f"dot_product_attention: {name} of shape {shape} does not broadcast to "
        f"(batch, heads, query steps, key steps) {wanted}"
    )


def dot_product_attention(
    query,
    key,
    value,
    bias=None,
    mask=None,
    scale=None,
    is_causal=False,
    flash_attention=None,
    attn_logits_soft_cap=None,
):
    """Scaled dot-product attention: `softmax(query . key * scale + bias) . value`.

    Shapes: `B` batch, `T` query steps, `S` key steps, `N` query heads, `K`
    key/value heads (`N` a multiple of `K`; `K < N` is grouped-query
    attention), `H` head size.

    Args:
        query: `(B, T, N, H)`.
        key: `(B, S, K, H)`.
        value: `(B, S, K, H)`, the shape of `key`.
        bias: None, or added to the logits; broadcastable to `(B, N, T, S)`.
        mask: None, or booleans broadcastable to `(B, N, T, S)`: True where a
            query step may attend to a key step. (Keras's JAX backend refuses
            a non-boolean mask; here any nonzero value counts as True.)
        scale: the logits' factor; `1 / sqrt(H)` if None.
        is_causal: whether query step `i` attends to key steps `<= i` only.
        flash_attention: None, False or True; there is no fused kernel here,
            so each computes the same attention.
        attn_logits_soft_cap: None, or a positive number `c`: the logits
            become `logits / (1 + |logits| / c)`, as Keras documents it (Keras
            applies it only on TPUs, and ignores it elsewhere).

    Returns:
        A Tensor of `query`'s shape, in the dtype the three inputs promote to
        (the logits and the softmax are computed in at least float32).

    Raises:
        ValueError: for inputs that are not 4-D, shapes that do not fit, or
            a `bias` or `mask` that does not broadcast.

    Example:
        >>> query = np.ones((1, 2, 1, 4), "float32")
        >>> value = np.arange(8, dtype="float32").reshape(1, 2, 1, 4)
        >>> mk.ops.dot_product_attention(query, query, value, is_causal=True).numpy()[0, :, 0]
        array([[0., 1., 2., 3.],
               [2., 3., 4., 5.]], dtype=float32)
    """
    # (numpy float64 operands beside a Tensor take its precision: ops.operands)
    query, key, value, bias = narrowed_operands(query, key, value, bias)
    q, k, v = (as_float(value_of(t)) for t in (query, key, value))
    shapes = [shape_of(t) for t in (q, k, v)]
    if any(len(shape) != 4 for shape in shapes):
        raise ValueError(
            "dot_product_attention: query, key and value must be 4-D (batch, steps, heads, "
            f"head size), got shapes {shapes[0]}, {shapes[1]} and {shapes[2]}"
        )
    (batch, steps, heads, size), (key_batch, key_steps, key_heads, key_size) = shapes[:2]
    if shapes[2] != shapes[1] or key_batch != batch or key_size != size or heads % key_heads:
        raise ValueError(
            "dot_product_attention: expected key (B, S, K, H) and value of the same shape for "
            "query (B, T, N, H), with N a multiple of K; got shapes "
            f"{shapes[0]}, {shapes[1]} and {shapes[2]}"
        )
    dtype = np.result_type(*(dtype_of(t) for t in (q, k, v)))
    logits_dtype = np.promote_types(dtype, np.float32)
    q, k, v = (cast(t, dtype) for t in (q, k, v))
    scale = 1.0 / math.sqrt(size) if scale is None else float(scale)
    groups = heads // key_heads
    grouped = reshape(cast(q, logits_dtype), (batch, steps, key_heads, groups, size))
    logits = einsum("btkgh,bskh->bkgts", grouped, cast(k, logits_dtype)) * scale
    logits = reshape(logits, (batch, heads, steps, key_steps))
    wanted = (batch, heads, steps, key_steps)
    if bias is not None:
        _broadcast_check("bias", value_of(bias), wanted)
        logits = logits + cast(bias, logits_dtype)
    if attn_logits_soft_cap is not None:
        logits = logits / (1.0 + abs(logits) / float(attn_logits_soft_cap))
    allowed = None
    if mask is not None:
        _broadcast_check("mask", value_of(mask), wanted)
        allowed = cast(mask, "bool")
    if is_causal:
        causal = np.tril(np.ones((steps, key_steps), dtype=bool))
        allowed = wrap(causal) if allowed is None else logical_and(allowed, causal)
    if allowed is not None:
        logits = where(allowed, logits, -0.7 * float(np.finfo(logits_dtype).max))
    probs = cast(softmax(logits, axis=-1), dtype)  # (the logits are float32 or wider)
    probs = reshape(probs, (batch, key_heads, groups, steps, key_steps))
    attended = einsum("bkgts,bskh->btkgh", probs, v)
    return reshape(attended, (batch, steps, heads, size))
