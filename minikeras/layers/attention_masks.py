"""The masks and the masked softmax of `MultiHeadAttention`.

Which (query step, key step) pairs may attend: the padding masks of the
inputs, a given `attention_mask` and the causal mask, joined by `and` into
one boolean `(batch or 1, T, S)` array; then the softmax of the scores over
the allowed pairs only.
"""

import math

import numpy as np

from minikeras import ops
from minikeras.engine.tensor import Tensor

__all__ = ["allowed_pairs", "masked_softmax", "with_padding_masks"]


def with_padding_masks(attention_mask, query_mask, value_mask, key_mask):
    """Folds the inputs' padding masks into `attention_mask`, as Keras does.

    A query step that is padding attends to nothing (its row is masked), and
    no query attends to a padded value or key step: `(B, T, 1) & (B, 1, S)`.

    Args:
        attention_mask: None, or booleans broadcastable to `(B, T, S)`.
        query_mask: None, or the query's padding mask `(B, T)`.
        value_mask: None, or the value's padding mask `(B, S)`.
        key_mask: None, or the key's padding mask `(B, S)`.

    Returns:
        A boolean numpy array, or None when no mask was given.

    Example:
        >>> from minikeras.layers.attention_masks import with_padding_masks
        >>> with_padding_masks(None, np.array([[1, 0]]), np.array([[1, 1, 0]]), None)
        array([[[ True,  True, False],
                [False, False, False]]])
    """
    found = attention_mask if attention_mask is None else _boolean(attention_mask)
    for mask, expand in ((query_mask, -1), (value_mask, 1), (key_mask, 1)):
        if mask is not None:
            mask = np.expand_dims(_boolean(mask), expand)
            found = mask if found is None else found & mask
    return found


def _boolean(mask):
    return (mask.numpy() if isinstance(mask, Tensor) else np.asarray(mask)).astype(bool)


def _large_negative(dtype):
    """What masked scores become: very negative, yet finite in `dtype` (Keras's values)."""
    return -3e4 if np.dtype(dtype) == np.float16 else -1e9


def allowed_pairs(where, batch, query_steps, key_steps, attention_mask, use_causal_mask):
    """The boolean `(batch or 1, T, S)` mask of allowed pairs, or None for no mask.

    Several middle axes are flattened: `T = prod(query_steps)`,
    `S = prod(key_steps)`.

    Args:
        where: the layer's name for errors, `"MultiHeadAttention 'mha'"`.
        batch: the batch size.
        query_steps: the query's middle axes, a tuple.
        key_steps: the key's middle axes, a tuple.
        attention_mask: None, or booleans broadcastable to
            `(batch, *query_steps, *key_steps)`.
        use_causal_mask: whether query step i may attend to key steps `<= i` only.

    Returns:
        A boolean numpy array, or None.

    Raises:
        ValueError: if `attention_mask` does not broadcast, or for a causal
            mask on several middle axes.

    Example:
        >>> from minikeras.layers.attention_masks import allowed_pairs
        >>> allowed_pairs("mha", 1, (2,), (3,), None, use_causal_mask=True)
        array([[[ True, False, False],
                [ True,  True, False]]])
    """
    query_size, key_size = math.prod(query_steps), math.prod(key_steps)
    mask = None
    if attention_mask is not None:
        mask = np.asarray(attention_mask).astype(bool)
        wanted = (batch, *query_steps, *key_steps)
        try:
            mask = np.broadcast_to(mask, wanted)
        except ValueError:
            raise ValueError(
                f"{where} needs an attention_mask that broadcasts to (batch, query steps, "
                f"key steps) {wanted}, got shape {mask.shape}"
            ) from None
        mask = mask.reshape(batch, query_size, key_size)
    if use_causal_mask:
        if len(query_steps) > 1:
            raise ValueError(
                f"{where}: use_causal_mask needs inputs with one steps axis, got query steps "
                f"{query_steps}"
            )
        # Position i attends to positions <= i, as Keras's lower-triangular mask.
        causal = np.tril(np.ones((1, query_size, key_size), dtype=bool))
        mask = causal if mask is None else mask & causal
    return mask


def masked_softmax(scores, mask):
    """The softmax over the last axis of `scores` `(B, N, T, S)`, where `mask` allows.

    Args:
        scores: the scaled dot products, a tensor `(B, N, T, S)`.
        mask: None, or booleans `(B or 1, T, S)` (the same for every head).

    Returns:
        A tensor of the scores' shape: masked pairs get a very large negative
        score before the softmax, hence ~0 weight.

    Example:
        >>> from minikeras.layers.attention_masks import masked_softmax
        >>> scores = mk.ops.convert_to_tensor(np.zeros((1, 1, 1, 3), "float32"))
        >>> masked_softmax(scores, np.array([[[True, True, False]]])).numpy()
        array([[[[0.5, 0.5, 0. ]]]], dtype=float32)
    """
    if mask is not None:
        scores = ops.where(mask[:, None], scores, _large_negative(scores.dtype))
    return ops.softmax(scores, axis=-1)
