"""What `MultiHeadAttention`'s scores may see: its inputs' steps, masks and masked softmax.

The steps of query and key, checked against each other and the built
kernels; which (query step, key step) pairs may attend: the padding masks of
the inputs, a given `attention_mask`, the causal mask and a sliding window,
joined by `and` into one boolean `(batch or 1, T, S)` array; then the softmax
of the scores over the allowed pairs only.
"""

import math

import numpy as np

from minikeras import ops
from minikeras.engine.tensor import Tensor

__all__ = [
    "allowed_pairs",
    "checked_steps",
    "masked_softmax",
    "scores_mask",
    "with_padding_masks",
]


def checked_steps(where, query_shape, value_shape, key_shape, built):
    """Checks ranks, batch and step sizes and last axes; the steps of query and key.

    Args:
        where: the layer's name for errors, `"MultiHeadAttention 'mha'"`.
        query_shape: the query's shape `(batch, *T, dim)`.
        value_shape: the value's shape `(batch, *S, dim)`.
        key_shape: the key's shape `(batch, *S, dim)`.
        built: the last axis the layer was built for, by part (`"query"`,
            `"value"`, `"key"`).

    Returns:
        The pair `(query steps, key steps)` of tuples, `(T, S)`.

    Raises:
        ValueError: for a rank below 3, different batch sizes, value and key
            of different steps, or a last axis unlike the one built for.

    Example:
        >>> from minikeras.layers.attention_masks import checked_steps
        >>> built = {"query": 4, "value": 6, "key": 6}
        >>> checked_steps("mha", (2, 3, 4), (2, 5, 6), (2, 5, 6), built)
        ((3,), (5,))
    """
    shapes = {"query": tuple(query_shape), "value": tuple(value_shape), "key": tuple(key_shape)}
    for part, shape in shapes.items():
        if len(shape) < 3:
            raise ValueError(
                f"{where} needs {part} of shape (batch, steps, features), got shape {shape}"
            )
    if len({shape[0] for shape in shapes.values()}) > 1:
        raise ValueError(
            f"{where} needs query, value and key of one batch size, got shapes "
            f"{shapes['query']}, {shapes['value']} and {shapes['key']}"
        )
    if shapes["value"][1:-1] != shapes["key"][1:-1]:
        raise ValueError(
            f"{where} needs value and key with the same steps, got shapes {shapes['value']} "
            f"and {shapes['key']}"
        )
    for part, size in built.items():
        if shapes[part][-1] != size:
            raise ValueError(
                f"{where} was built for {part} with last axis {size}, got shape {shapes[part]}"
            )
    return shapes["query"][1:-1], shapes["key"][1:-1]


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


def allowed_pairs(
    where, batch, query_steps, key_steps, attention_mask, use_causal_mask, sliding_window=None
):
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
        sliding_window: None, or `w`: query step i attends to key steps j with
            `|i - j| < w` only.

    Returns:
        A boolean numpy array, or None.

    Raises:
        ValueError: if `attention_mask` does not broadcast, or for a causal
            mask or a sliding window on several middle axes.

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
    for argument, used in (
        ("use_causal_mask", use_causal_mask),
        ("sliding_window", sliding_window),
    ):
        if used and len(query_steps) > 1:
            raise ValueError(
                f"{where}: {argument} needs inputs with one steps axis, got query steps "
                f"{query_steps}"
            )
    if use_causal_mask:
        # Position i attends to positions <= i, as Keras's lower-triangular mask.
        causal = np.tril(np.ones((1, query_size, key_size), dtype=bool))
        mask = causal if mask is None else mask & causal
    if sliding_window is not None:
        distance = np.abs(np.arange(query_size)[:, None] - np.arange(key_size)[None, :])
        window = (distance < sliding_window)[None]
        mask = window if mask is None else mask & window
    return mask


def scores_mask(allowed, padding, use_causal_mask, sliding_window, query_steps, key_steps):
    """The mask Keras 3.15's returned scores carry: its `Softmax`'s, heads axes added.

    Keras's scores come out of a masked `Softmax` layer, which leaves its
    mask on them: the joined masks at the shape their `and` broadcasts to
    (`(batch, 1, S)` for a value mask alone, `(1, T, S)` for the causal mask
    alone), with axes of 1 for the heads up to the scores' rank.

    Args:
        allowed: None, or the joined boolean mask `(batch or 1, T, S)` (see
            `allowed_pairs`).
        padding: None, or the padding and given masks joined (see
            `with_padding_masks`), at their own shape.
        use_causal_mask: whether the causal mask was joined in.
        sliding_window: None, or the window that was.
        query_steps: the query's middle axes, a tuple.
        key_steps: the key's middle axes, a tuple.

    Returns:
        A boolean numpy array, or None when `allowed` is None.

    Example:
        >>> from minikeras.layers.attention_masks import scores_mask
        >>> allowed = np.array([[[True, False], [True, False]]])
        >>> scores_mask(allowed, np.array([[[True, False]]]), False, None, (2,), (2,)).shape
        (1, 1, 1, 2)
    """
    if allowed is None:
        return None
    made_of = [] if padding is None else [np.shape(padding)]
    made_of += [(1, *query_steps, *key_steps)] * (
        bool(use_causal_mask) + (sliding_window is not None)
    )
    shape = np.broadcast_shapes(*made_of)
    full = allowed.reshape(allowed.shape[0], *query_steps, *key_steps)
    full = full[(0,) * max(full.ndim - len(shape), 0)]  # leading axes Keras's mask lacks
    picked = full[tuple(slice(0, 1) if size == 1 else slice(None) for size in shape[-full.ndim :])]
    axes = len(query_steps) + len(key_steps)
    heads = (1,) * max(2 + axes - picked.ndim, 0)
    return picked.reshape(picked.shape[: picked.ndim - axes] + heads + picked.shape[-axes:])


def masked_softmax(scores, mask, uniform_empty_rows=False):
    """The softmax over the last axis of `scores` `(B, N, T, S)`, where `mask` allows.

    Args:
        scores: the scaled dot products, a tensor `(B, N, T, S)`.
        mask: None, or booleans `(B or 1, T, S)` (the same for every head).
        uniform_empty_rows: what a row with every pair masked gets: all
            zeros (False, Keras's `Softmax` and its scores), or uniform
            weights (True, Keras's fused kernel on JAX; see
            `attention_paths.takes_fused_path`).

    Returns:
        A tensor of the scores' shape: masked pairs get zero weight (a very
        large negative score before the softmax, and zero after it).

    Example:
        >>> from minikeras.layers.attention_masks import masked_softmax
        >>> scores = mk.ops.convert_to_tensor(np.zeros((1, 1, 2, 3), "float32"))
        >>> mask = np.array([[[True, True, False], [False, False, False]]])
        >>> masked_softmax(scores, mask).numpy()[0, 0].round(3).tolist()
        [[0.5, 0.5, 0.0], [0.0, 0.0, 0.0]]
        >>> masked_softmax(scores, mask, uniform_empty_rows=True).numpy()[0, 0].round(3).tolist()
        [[0.5, 0.5, 0.0], [0.333, 0.333, 0.333]]
    """
    if mask is None:
        return ops.softmax(scores, axis=-1)
    allowed = mask[:, None]  # the same for every head
    weights = ops.softmax(ops.where(allowed, scores, _large_negative(scores.dtype)), axis=-1)
    if uniform_empty_rows:  # every masked score is the same, so such a row is uniform
        return weights
    return ops.where(allowed, weights, 0.0)
