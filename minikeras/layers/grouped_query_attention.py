"""`GroupQueryAttention`: multi-head attention where groups of query heads share key/value heads."""

import math

import numpy as np

from minikeras import constraints, initializers, ops, regularizers
from minikeras.engine.tensor import Tensor
from minikeras.layers.attention_masks import masked_softmax, scores_mask
from minikeras.layers.attention_paths import check_flash_attention, takes_fused_path
from minikeras.layers.dense import check_positive_int
from minikeras.layers.dropout import Dropout
from minikeras.layers.einsum_dense import EinsumDense
from minikeras.layers.input_layer import SymbolicTensor
from minikeras.layers.layer import Layer, unique_name

__all__ = ["GroupQueryAttention", "GroupedQueryAttention"]


def _boolean(mask):
    return np.asarray(mask.numpy() if isinstance(mask, Tensor) else mask).astype(bool)


class GroupQueryAttention(Layer):
    """Grouped-query attention (Ainslie et al., 2023), Keras's `GroupQueryAttention`.

    Like `MultiHeadAttention` with `num_query_heads` heads, except that the
    keys and values are projected to only `num_key_value_heads` heads, each
    shared by `num_query_heads / num_key_value_heads` consecutive query heads
    (as Keras repeats them). One key/value head is multi-query attention; as
    many as query heads is multi-head attention.

        q = query @ query_kernel + query_bias        # (batch, T, query heads, head_dim)
        k, v = key/value @ their kernels + biases    # (batch, S, key/value heads, head_dim)
        scores = softmax(q k^T / sqrt(head_dim))     # (batch, query heads, T, S), masked
        output = (dropout(scores) v) @ output_kernel + output_bias   # (batch, T, query dim)

    Masked pairs get zero weight. A query step with nothing to attend to
    gets what Keras gives it on JAX: all-zero weights (an output that is the
    output bias) when the scores are returned or the dropout rate is above
    0, and otherwise (Keras's fused kernel) a uniform average of the values.
    With `use_gate`, the attended values are
    multiplied by `sigmoid(query @ gate_kernel + gate_bias)` before the
    output projection; with `sliding_window=w`, a query step attends to key
    steps fewer than `w` positions away.

    Call it as `layer(query, value, key=None, query_mask=None,
    value_mask=None, key_mask=None, attention_mask=None,
    return_attention_scores=False, training=None, use_causal_mask=False)`,
    as `MultiHeadAttention` (the padding masks come from the inputs' masks
    when not given).

    Args:
        head_dim: positive int, the size of each head.
        num_query_heads: positive int, the number of query heads.
        num_key_value_heads: positive int dividing `num_query_heads`.
        dropout: the dropout rate on the attention weights, in `[0, 1)`.
        use_bias: whether the projections have biases.
        sliding_window: None or a positive int (see above).
        flash_attention: None, False or True: the same attention either way
            (there is no fused kernel here), True refusing what Keras's flash
            attention refuses, as for `MultiHeadAttention`.
        kernel_initializer: initializer of the kernels.
        bias_initializer: initializer of the biases.
        kernel_regularizer: None or a regularizer of the kernels.
        bias_regularizer: None or a regularizer of the biases.
        activity_regularizer: None or a regularizer of the outputs (the scores
            too, when returned) and, as in Keras, of each projection's outputs.
        kernel_constraint: None or a constraint of the kernels.
        bias_constraint: None or a constraint of the biases.
        use_gate: whether to gate the attended values (see above).
        seed: int seed of the dropout's mask stream.
        **kwargs: `name`, `trainable`, `dtype`.

    Input shape:
        query `(batch, T, dim)`, value `(batch, S, dim)` (the same last axis,
        as Keras requires), key `(batch, S, key_dim)`.

    Output shape:
        The query's shape; with `return_attention_scores=True` also the
        scores `(batch, num_query_heads, T, S)` (before dropout). The
        query's mask is kept.

    Raises:
        ValueError: for bad constructor arguments (`flash_attention=True`
            with a `dropout` rate among them), `return_attention_scores=True`
            with `flash_attention=True`, inputs that are not 3-D,
            query and value with different last axes, value and key with
            different steps, or an `attention_mask` that does not broadcast
            to `(batch, T, S)`.

    Example:
        >>> layer = mk.layers.GroupQueryAttention(
        ...     head_dim=4, num_query_heads=4, num_key_value_heads=2
        ... )
        >>> query, value = np.ones((2, 5, 8)), np.ones((2, 3, 8))
        >>> out, scores = layer(query, value, return_attention_scores=True)
        >>> out.shape, scores.shape
        ((2, 5, 8), (2, 4, 5, 3))
        >>> layer.key_dense.kernel.shape, layer.query_dense.kernel.shape
        ((8, 2, 4), (8, 4, 4))
    """

    supports_masking = True  # the output keeps the query's mask

    # The class Keras saves this layer as (it names the layer's weight folder).
    _keras_class_name = "GroupedQueryAttention"

    def __init__(
        self,
        head_dim,
        num_query_heads,
        num_key_value_heads,
        dropout=0.0,
        use_bias=True,
        sliding_window=None,
        flash_attention=None,
        kernel_initializer="glorot_uniform",
        bias_initializer="zeros",
        kernel_regularizer=None,
        bias_regularizer=None,
        activity_regularizer=None,
        kernel_constraint=None,
        bias_constraint=None,
        use_gate=False,
        seed=None,
        **kwargs,
    ):
        if kwargs.get("name") is None:  # Keras's default name, from its class name
            kwargs["name"] = unique_name("grouped_query_attention")
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        name = "GroupQueryAttention"
        self.head_dim = check_positive_int(name, "head_dim", head_dim)
        self.num_query_heads = check_positive_int(name, "num_query_heads", num_query_heads)
        self.num_key_value_heads = check_positive_int(
            name, "num_key_value_heads", num_key_value_heads
        )
        if num_query_heads % num_key_value_heads:
            raise ValueError(
                f"{name}: `num_query_heads` ({num_query_heads}) must be a multiple of "
                f"`num_key_value_heads` ({num_key_value_heads})"
            )
        if sliding_window is not None:
            check_positive_int(name, "sliding_window", sliding_window)
        if (
            isinstance(dropout, bool)
            or not isinstance(dropout, (int, float))
            or not 0 <= dropout < 1
        ):
            raise ValueError(f"{name}: `dropout` must be in [0, 1), got {dropout!r}")
        self.dropout = float(dropout)
        self._flash_attention = bool(flash_attention)
        check_flash_attention(name, self._flash_attention, self.dropout)
        self.use_bias = bool(use_bias)
        self.use_gate = bool(use_gate)
        self.sliding_window = sliding_window
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.kernel_regularizer = regularizers.get(kernel_regularizer)
        self.bias_regularizer = regularizers.get(bias_regularizer)
        self.kernel_constraint = constraints.get(kernel_constraint)
        self.bias_constraint = constraints.get(bias_constraint)
        self.seed = seed
        self._dropout_layer = Dropout(self.dropout, seed=seed, dtype=self.dtype_policy)

    def _projection(self, equation, output_shape, bias_axes, name, activation=None):
        return EinsumDense(
            equation,
            output_shape,
            activation=activation,
            bias_axes=bias_axes if self.use_bias else None,
            kernel_initializer=initializers.get(initializers.serialize(self.kernel_initializer)),
            bias_initializer=initializers.get(initializers.serialize(self.bias_initializer)),
            kernel_regularizer=self.kernel_regularizer,
            bias_regularizer=self.bias_regularizer,
            kernel_constraint=self.kernel_constraint,
            bias_constraint=self.bias_constraint,
            # As Keras: each projection's outputs are penalized too (besides the layer's).
            activity_regularizer=self.activity_regularizer,
            name=name,
            dtype=self.dtype_policy,
        )

    # Keras keeps the projections in private attributes (their names are the paths
    # of their weights in Keras files); these read them, as MultiHeadAttention's do.
    @property
    def query_dense(self):
        """The query projection, an `EinsumDense` (once built)."""
        return self._query_dense

    @property
    def key_dense(self):
        """The key projection, an `EinsumDense` (once built)."""
        return self._key_dense

    @property
    def value_dense(self):
        """The value projection, an `EinsumDense` (once built)."""
        return self._value_dense

    @property
    def output_dense(self):
        """The output projection, an `EinsumDense` (once built)."""
        return self._output_dense

    @property
    def gate_dense(self):
        """The gate's projection, an `EinsumDense` (once built with `use_gate=True`), or None."""
        return self.__dict__.get("_gate_dense")

    def build(self, query_shape, value_shape, key_shape=None):
        key_shape = value_shape if key_shape is None else key_shape
        self._check_shapes(query_shape, value_shape, key_shape)
        heads, kv_heads, size = self.num_query_heads, self.num_key_value_heads, self.head_dim
        self._query_dense = self._projection("bqm,muh->bquh", (None, heads, size), "uh", "query")
        self._query_dense.build(query_shape)
        self._key_dense = self._projection("bkm,mvh->bkvh", (None, kv_heads, size), "vh", "key")
        self._key_dense.build(key_shape)
        self._gate_dense = None
        if self.use_gate:  # before the value's, as Keras: its weights' order (and its files')
            self._gate_dense = self._projection(
                "bqm,muh->bquh", (None, heads, size), "uh", "gate", activation="sigmoid"
            )
            self._gate_dense.build(query_shape)
        self._value_dense = self._projection("bkm,mvh->bkvh", (None, kv_heads, size), "vh", "value")
        self._value_dense.build(value_shape)
        self._output_dense = self._projection(
            "bquh,uhm->bqm", (None, query_shape[-1]), "m", "attention_output"
        )
        self._output_dense.build((None, None, heads, size))

    def _check_shapes(self, query_shape, value_shape, key_shape):
        where = f"GroupQueryAttention '{self.name}'"
        shapes = [tuple(query_shape), tuple(value_shape), tuple(key_shape)]
        if any(len(shape) != 3 for shape in shapes):
            raise ValueError(
                f"{where} needs query, value and key of shape (batch, steps, features), got "
                f"shapes {shapes[0]}, {shapes[1]} and {shapes[2]}"
            )
        if shapes[0][-1] is None or shapes[0][-1] != shapes[1][-1]:
            raise ValueError(
                f"{where} needs query and value with the same known last axis, got shapes "
                f"{shapes[0]} and {shapes[1]}"
            )
        if None not in (shapes[1][1], shapes[2][1]) and shapes[1][1] != shapes[2][1]:
            raise ValueError(
                f"{where} needs value and key with the same steps, got shapes {shapes[1]} and "
                f"{shapes[2]}"
            )

    def call(
        self,
        query,
        value,
        key=None,
        query_mask=None,
        value_mask=None,
        key_mask=None,
        attention_mask=None,
        return_attention_scores=False,
        training=None,
        use_causal_mask=False,
    ):
        key = value if key is None else key  # key_mask still applies then, as in Keras
        where = f"GroupQueryAttention '{self.name}'"
        check_flash_attention(where, self._flash_attention, 0, return_attention_scores)
        self._check_shapes(query.shape, value.shape, key.shape)
        mask, joined = self._mask(query.shape, key.shape, query_mask, value_mask, key_mask,
                                  attention_mask, use_causal_mask)  # fmt: skip
        batch, steps, sources = query.shape[0], query.shape[1], key.shape[1]
        groups, repeats = self.num_key_value_heads, self.num_query_heads // self.num_key_value_heads
        size = self.head_dim
        q = self._query_dense(query) * (1.0 / math.sqrt(size))
        q = ops.reshape(q, (batch, steps, groups, repeats, size))  # query head u = g * R + r
        k = self._key_dense(key)
        v = self._value_dense(value)
        scores = ops.einsum("bqgrh,bkgh->bgrqk", q, k)
        scores = ops.reshape(scores, (batch, self.num_query_heads, steps, sources))
        fused = takes_fused_path(self.dropout, return_attention_scores)
        scores = masked_softmax(scores, mask, uniform_empty_rows=fused)
        weights = self._dropout_layer(scores, training=training)
        weights = ops.reshape(weights, (batch, groups, repeats, steps, sources))
        attended = ops.einsum("bgrqk,bkgh->bqgrh", weights, v)
        attended = ops.reshape(attended, (batch, steps, self.num_query_heads, size))
        if self._gate_dense is not None:
            attended = attended * self._gate_dense(query)
        outputs = self._output_dense(attended)
        # For compute_mask, called next: the scores carry Keras's Softmax's mask.
        object.__setattr__(self, "_returns_scores", bool(return_attention_scores))
        object.__setattr__(
            self, "_scores_mask", scores_mask(mask, joined, False, None, (steps,), (sources,))
        )
        return (outputs, scores) if return_attention_scores else outputs

    def compute_mask(self, inputs, mask=None):
        """The query's mask, kept for the outputs; after returning scores, theirs too.

        The scores carry the mask they were computed with, as Keras's do
        (see `attention_masks.scores_mask`).

        Args:
            inputs: the query.
            mask: its mask, or None.

        Returns:
            The mask, `[mask, scores' mask]`, or None.

        Example:
            >>> mask = np.array([[True, False]])
            >>> mk.layers.GroupQueryAttention(2, 2, 1).compute_mask(np.ones((1, 2, 3)), mask)
            array([[ True, False]])
        """
        if not self.__dict__.get("_returns_scores"):
            return mask
        scores = self.__dict__.get("_scores_mask")
        return mask if mask is None and scores is None else [mask, scores]

    def _mask(self, query_shape, key_shape, query_mask, value_mask, key_mask, attention_mask,
              use_causal_mask):  # fmt: skip
        """The boolean `(batch or 1, T, S)` mask of allowed pairs and the same at the
        shape the masks joined broadcast to (Keras's scores carry it), or two Nones."""
        steps, sources = query_shape[1], key_shape[1]
        found = None
        for mask, axis in ((query_mask, -1), (value_mask, -2), (key_mask, -2)):
            if mask is not None:
                mask = np.expand_dims(_boolean(mask), axis)
                found = mask if found is None else found & mask
        if use_causal_mask:
            causal = np.tril(np.ones((1, steps, sources), dtype=bool))
            found = causal if found is None else found & causal
        if self.sliding_window is not None:
            distance = np.abs(np.arange(steps)[:, None] - np.arange(sources)[None, :])
            window = (distance < self.sliding_window)[None]
            found = window if found is None else found & window
        if attention_mask is not None:
            given = _boolean(attention_mask)
            found = given if found is None else given & found
        if found is None:
            return None, None
        wanted = (query_shape[0], steps, sources)
        try:
            return np.broadcast_to(found, wanted), found
        except ValueError:
            raise ValueError(
                f"GroupQueryAttention '{self.name}' needs masks that broadcast to (batch, query "
                f"steps, key steps) {wanted}, got an attention mask of shape {found.shape}"
            ) from None

    def compute_output_shape(self, query_shape, value_shape, key_shape=None):
        key_shape = value_shape if key_shape is None else key_shape
        self._check_shapes(query_shape, value_shape, key_shape)
        return tuple(query_shape)

    def compute_output_spec(
        self,
        query,
        value,
        key=None,
        query_mask=None,
        value_mask=None,
        key_mask=None,
        attention_mask=None,
        return_attention_scores=False,
        training=None,
        use_causal_mask=False,
    ):
        key = value if key is None else key
        object.__setattr__(self, "_returns_scores", False)  # no data: no scores' mask
        outputs = SymbolicTensor(
            self.compute_output_shape(query.shape, value.shape, key.shape), self.compute_dtype
        )
        if not return_attention_scores:
            return outputs
        scores = (query.shape[0], self.num_query_heads, query.shape[1], key.shape[1])
        return outputs, SymbolicTensor(scores, self.compute_dtype)

    def get_config(self):
        return {
            **super().get_config(),
            "head_dim": self.head_dim,
            "num_query_heads": self.num_query_heads,
            "num_key_value_heads": self.num_key_value_heads,
            "dropout": self.dropout,
            "use_bias": self.use_bias,
            "sliding_window": self.sliding_window,
            "use_gate": self.use_gate,
            "kernel_initializer": initializers.serialize(self.kernel_initializer),
            "bias_initializer": initializers.serialize(self.bias_initializer),
            "kernel_regularizer": regularizers.serialize(self.kernel_regularizer),
            "bias_regularizer": regularizers.serialize(self.bias_regularizer),
            "kernel_constraint": constraints.serialize(self.kernel_constraint),
            "bias_constraint": constraints.serialize(self.bias_constraint),
            "seed": self.seed,
        }


# Keras's class is GroupedQueryAttention, exported (and written in its configs) as
# GroupQueryAttention; both names load here.
GroupedQueryAttention = GroupQueryAttention
