"""`Attention` (Luong-style, dot or concat scores) and `AdditiveAttention` (Bahdanau-style):
attention without projections, called on `[query, value]` or `[query, value, key]`."""

import numpy as np

from minikeras import ops
from minikeras.engine.tensor import Tensor
from minikeras.layers.dropout import Dropout
from minikeras.layers.input_layer import SymbolicTensor
from minikeras.layers.layer import Layer

__all__ = ["AdditiveAttention", "Attention"]


def _boolean(mask):
    return (
        None
        if mask is None
        else np.asarray(mask.numpy() if isinstance(mask, Tensor) else mask).astype(bool)
    )


def _large_negative(dtype):
    """What is subtracted from masked scores (Keras's values: finite in float16 too)."""
    return 65504.0 if np.dtype(dtype) == np.float16 else 1.0e9


def _broadcast(first, second):
    """The size two broadcast axes give (None when it is not known)."""
    if first == second or second == 1:
        return first
    if first == 1 or first is None:
        return second
    return first


class Attention(Layer):
    """Dot-product attention (Luong et al., 2015) over `[query, value]` or `[query, value, key]`.

    With `query` `(batch, Tq, dim)`, `value` `(batch, Tv, dim_v)` and `key`
    `(batch, Tv, dim)` (the value by default):

        scores = query @ key^T                         score_mode="dot"
        scores = concat_score_weight * sum(tanh(query_i + key_j))   "concat"
        weights = softmax(scores)                      over Tv, masked
        outputs = weights @ value                      (batch, Tq, dim_v)

    With `use_scale`, a trained scalar `scale` (starting at 1) multiplies the
    dot scores, or the sums inside the tanh for `"concat"`. Key steps where
    the value mask is false (or later steps, with `use_causal_mask`) have
    1e9 subtracted from their scores, so they get ~0 weight; query steps
    where the query mask is false give zero outputs.

    Call it as `layer(inputs, mask=None, training=None,
    return_attention_scores=False, use_causal_mask=False)`:

    - inputs: the list `[query, value]` or `[query, value, key]`.
    - mask: the list `[query_mask, value_mask]` (booleans `(batch, Tq)`,
      `(batch, Tv)`; either may be None); by default the inputs' own masks.
    - return_attention_scores: also return the weights `(batch, Tq, Tv)`
      (after dropout, as in Keras).
    - use_causal_mask: query step i attends to key steps `<= i` only.

    Args:
        use_scale: whether to learn the scalar `scale`.
        score_mode: `"dot"` (default) or `"concat"`.
        dropout: the dropout rate on the weights while training, in `[0, 1)`.
        seed: an int for a reproducible dropout stream.
        **kwargs: `name`, `trainable`, `dtype`.

    Input shape:
        `[query (batch, Tq, dim), value (batch, Tv, dim_v), key (batch, Tv,
        dim)]`; more leading axes are allowed if all three share them.

    Output shape:
        `(batch, Tq, dim_v)`; the query's mask is kept.

    Raises:
        ValueError: for an unknown `score_mode`, a `dropout` outside `[0, 1)`,
            inputs that are not a list of 2 or 3 tensors, a mask that is not
            a list of 2 or 3, or shapes that do not fit together.

    Example:
        >>> query = np.array([[[1.0, 0.0]]])
        >>> value = np.array([[[0.0, 0.0], [np.log(3.0), 0.0]]])
        >>> out, weights = mk.layers.Attention()([query, value], return_attention_scores=True)
        >>> weights.numpy()
        array([[[0.25, 0.75]]], dtype=float32)
    """

    def __init__(self, use_scale=False, score_mode="dot", dropout=0.0, seed=None, **kwargs):
        super().__init__(**kwargs)
        if score_mode not in ("dot", "concat"):
            raise ValueError(
                f"{type(self).__name__}: `score_mode` must be 'dot' or 'concat', got {score_mode!r}"
            )
        if (
            isinstance(dropout, bool)
            or not isinstance(dropout, (int, float))
            or not 0 <= dropout < 1
        ):
            raise ValueError(f"{type(self).__name__}: `dropout` must be in [0, 1), got {dropout!r}")
        self.use_scale = bool(use_scale)
        self.score_mode = score_mode
        self.dropout = float(dropout)
        self.seed = seed
        self._dropout_layer = Dropout(self.dropout, seed=seed, dtype=self.dtype_policy)

    # --------------------------------------------------------------- checks

    def _parts(self, inputs):
        """`(query, value, key)` of a list of 2 or 3 tensors (or of their shapes)."""
        several = isinstance(inputs, (list, tuple)) and all(
            isinstance(x, (list, tuple)) or hasattr(x, "shape") for x in inputs
        )
        if not several or not 2 <= len(inputs) <= 3:
            if several:
                got = f"a list of length {len(inputs)}"
            elif hasattr(inputs, "shape") or isinstance(inputs, tuple):
                got = f"one tensor of shape {tuple(getattr(inputs, 'shape', inputs))}"
            else:
                got = type(inputs).__name__
            raise ValueError(
                f"{type(self).__name__} '{self.name}' must be called on a list [query, value] "
                f"or [query, value, key], got {got}"
            )
        return inputs[0], inputs[1], inputs[2] if len(inputs) == 3 else inputs[1]

    def _check_shapes(self, query, value, key):
        name = f"{type(self).__name__} '{self.name}'"
        shapes = {"query": tuple(query), "value": tuple(value), "key": tuple(key)}
        if any(len(shape) < 3 for shape in shapes.values()):
            raise ValueError(
                f"{name} needs query, value and key of shape (batch, steps, features), got "
                f"shapes {shapes['query']}, {shapes['value']} and {shapes['key']}"
            )

        def differ(a, b, broadcast=False):
            return len(a) != len(b) or any(x is not None and y is not None and x != y
                                           and not (broadcast and 1 in (x, y))
                                           for x, y in zip(a, b))  # fmt: skip

        # (query and value batch axes broadcast, as Keras's matmul of them: a latent array of
        # batch 1 attends to a batch of data, as in keras-io's Perceiver)
        if differ(shapes["value"][:-1], shapes["key"][:-1]) or differ(
            shapes["query"][:-2], shapes["value"][:-2], broadcast=True
        ):
            raise ValueError(
                f"{name} needs query, value and key with the same (or broadcastable) batch "
                f"axes and value and key with the same steps, got shapes {shapes['query']}, "
                f"{shapes['value']} and {shapes['key']}"
            )
        if differ(shapes["query"][-1:], shapes["key"][-1:]):
            raise ValueError(
                f"{name} needs query and key with the same last axis, got shapes "
                f"{shapes['query']} and {shapes['key']}"
            )

    # -------------------------------------------------------------- calling

    def build(self, input_shape):
        query, value, key = self._parts(input_shape)
        self._check_shapes(query, value, key)
        self.scale = self.concat_score_weight = None
        if self.use_scale:
            self.scale = self.add_weight("scale", shape=(), initializer="ones")
        if self.score_mode == "concat":
            self.concat_score_weight = self.add_weight(
                "concat_score_weight", shape=(), initializer="ones"
            )

    def _scores(self, query, key):
        """`(batch, Tq, Tv)` scores of every query step against every key step."""
        if self.score_mode == "dot":
            axes = (*range(key.ndim - 2), key.ndim - 1, key.ndim - 2)
            scores = ops.matmul(query, ops.transpose(key, axes))
            return scores if self.scale is None else scores * self.scale
        summed = ops.expand_dims(query, -2) + ops.expand_dims(key, -3)
        if self.scale is not None:
            summed = summed * self.scale
        return self.concat_score_weight * ops.sum(ops.tanh(summed), axis=-1)

    def call(
        self,
        inputs,
        mask=None,
        training=None,
        return_attention_scores=False,
        use_causal_mask=False,
    ):
        query, value, key = self._parts(inputs)
        self._check_shapes(query.shape, value.shape, key.shape)
        query_mask, value_mask = self._masks(mask)
        scores = self._scores(query, key)
        allowed = None if value_mask is None else np.expand_dims(value_mask, -2)
        if use_causal_mask:
            causal = np.tril(np.ones(scores.shape[-2:], dtype=bool))
            allowed = causal if allowed is None else allowed & causal
        if allowed is not None:
            scores = ops.where(allowed, scores, scores - _large_negative(scores.dtype))
        weights = self._dropout_layer(ops.softmax(scores, axis=-1), training=training)
        outputs = ops.matmul(weights, value)
        if query_mask is not None:
            outputs = ops.where(np.expand_dims(query_mask, -1), outputs, 0.0)
        # compute_mask, called next, gives the scores no mask (a model needs one per output).
        object.__setattr__(self, "_returns_scores", bool(return_attention_scores))
        return (outputs, weights) if return_attention_scores else outputs

    def _masks(self, mask):
        if mask is None:
            return None, None
        if not isinstance(mask, (list, tuple)) or not 2 <= len(mask) <= 3:
            raise ValueError(
                f"{type(self).__name__} '{self.name}' takes mask as a list [query_mask, "
                f"value_mask], got {type(mask).__name__}"
                + (f" of length {len(mask)}" if isinstance(mask, (list, tuple)) else "")
            )
        return _boolean(mask[0]), _boolean(mask[1])

    def compute_mask(self, inputs, mask=None):
        """The query's mask, kept for the outputs (None without one).

        Args:
            inputs: `[query, value]` or `[query, value, key]`.
            mask: `[query_mask, value_mask]` or None.

        Returns:
            The query mask or None; after a call that returned the scores,
            `[query_mask, None]`.

        Example:
            >>> query_mask = np.array([[True, False]])
            >>> mk.layers.Attention().compute_mask([np.ones((1, 2, 3))] * 2, [query_mask, None])
            array([[ True, False]])
        """
        self._parts(inputs)
        query_mask = self._masks(mask)[0]
        if self.__dict__.get("_returns_scores") and query_mask is not None:
            return [query_mask, None]
        return query_mask

    def compute_output_shape(self, input_shape):
        query, value, _ = self._parts(input_shape)
        batch = [_broadcast(q, v) for q, v in zip(tuple(query)[:-2], tuple(value)[:-2])]
        return (*batch, tuple(query)[-2], tuple(value)[-1])

    def compute_output_spec(
        self, inputs, mask=None, training=None, return_attention_scores=False, use_causal_mask=False
    ):
        query, value, key = self._parts(inputs)
        outputs = SymbolicTensor(
            self.compute_output_shape([query.shape, value.shape]), self.compute_dtype
        )
        if not return_attention_scores:
            return outputs
        return outputs, SymbolicTensor((*outputs.shape[:-1], key.shape[-2]), self.compute_dtype)

    def get_config(self):
        return {
            **super().get_config(),
            "use_scale": self.use_scale,
            "score_mode": self.score_mode,
            "dropout": self.dropout,
            "seed": self.seed,
        }


class AdditiveAttention(Attention):
    """Additive attention (Bahdanau et al., 2015) over `[query, value]` or `[query, value, key]`.

    As `Attention`, with the scores

        scores[i, j] = sum(scale * tanh(query_i + key_j))

    where `scale` is a trained vector of the query's last size (glorot
    uniform at first) with `use_scale`, else 1. Masks, causal masking,
    dropout and `return_attention_scores` work as in `Attention`.

    Args:
        use_scale: whether to learn `scale` (default True).
        dropout: the dropout rate on the weights while training, in `[0, 1)`.
        **kwargs: `name`, `trainable`, `dtype`, `seed`.

    Input shape:
        `[query (batch, Tq, dim), value (batch, Tv, dim_v), key (batch, Tv,
        dim)]`.

    Output shape:
        `(batch, Tq, dim_v)`; the query's mask is kept.

    Raises:
        ValueError: as `Attention`.

    Example:
        >>> layer = mk.layers.AdditiveAttention(use_scale=False)
        >>> query, value = np.zeros((1, 1, 2)), np.array([[[0.0, 0.0], [np.log(2.0), 0.0]]])
        >>> out = layer([query, value])
        >>> out.shape
        (1, 1, 2)
    """

    def __init__(self, use_scale=True, dropout=0.0, **kwargs):
        super().__init__(use_scale=use_scale, dropout=dropout, **kwargs)

    def build(self, input_shape):
        query, value, key = self._parts(input_shape)
        self._check_shapes(query, value, key)
        if query[-1] is None:
            raise ValueError(
                f"AdditiveAttention '{self.name}' needs a query with a known last axis, got "
                f"shape {tuple(query)}"
            )
        self.scale = None
        if self.use_scale:
            self.scale = self.add_weight("scale", shape=(query[-1],), initializer="glorot_uniform")

    def _scores(self, query, key):
        summed = ops.tanh(ops.expand_dims(query, -2) + ops.expand_dims(key, -3))
        if self.scale is not None:
            summed = summed * self.scale
        return ops.sum(summed, axis=-1)

    def get_config(self):
        config = super().get_config()
        del config["score_mode"]
        return config
