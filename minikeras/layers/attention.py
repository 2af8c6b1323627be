"""`MultiHeadAttention`: scaled dot-product attention over several learned projections."""

import math
import warnings

from minikeras import constraints, initializers, ops, regularizers
from minikeras.layers.attention_masks import (
    allowed_pairs,
    checked_steps,
    masked_softmax,
    scores_mask,
    with_padding_masks,
)
from minikeras.layers.attention_paths import check_flash_attention, takes_fused_path
from minikeras.layers.attention_projections import AttentionProjections
from minikeras.layers.attention_shapes import AttentionShapes
from minikeras.layers.dense import check_positive_int
from minikeras.layers.dropout import Dropout
from minikeras.layers.layer import Layer

__all__ = ["MultiHeadAttention", "check_flash_attention"]


class MultiHeadAttention(AttentionProjections, AttentionShapes, Layer):
    """Multi-head attention (Vaswani et al., 2017), with Keras's weights and arguments.

    Each of `num_heads` heads projects the query, key and value, and attends:

        q = query @ query_kernel + query_bias            # (batch, T, heads, key_dim)
        k = key @ key_kernel + key_bias                  # (batch, S, heads, key_dim)
        v = value @ value_kernel + value_bias            # (batch, S, heads, value_dim)
        scores = softmax(q k^T / sqrt(key_dim))          # (batch, heads, T, S), masked
        gate = sigmoid(query @ gate_kernel + gate_bias)  # (batch, T, heads, value_dim)
        output = (gate * (dropout(scores) v)) @ output_kernel + output_bias

    where the output projection joins the heads, and the gate is there only
    with `use_gate=True` (Keras's gated attention, Qiu et al., 2025; without
    it, `gate` is 1). Masked positions (where `attention_mask` is false, a
    later position under `use_causal_mask`, or one `sliding_window` or more
    steps away) get zero weight. A query step
    with every key step masked (a padded query step, say) gets what Keras
    gives it on JAX: all-zero weights (so an output that is the output bias)
    when the scores are returned, the dropout rate is above 0 or the query
    has several steps axes, and otherwise (Keras's fused kernel) a uniform
    average of the values.

    Call it as `layer(query, value, key=None, query_mask=None,
    value_mask=None, key_mask=None, attention_mask=None,
    return_attention_scores=False, training=None, use_causal_mask=False)`:

    - query: `(batch, T, query_dim)`; value: `(batch, S, value_dim)`; key:
      `(batch, S, key_dim)`, the value by default.
    - query_mask, value_mask, key_mask: padding masks `(batch, T)` /
      `(batch, S)`, true for real steps. As in Keras they are taken from the
      inputs' masks (an `Embedding(mask_zero=True)` before, say) when not
      given: padded value steps get no attention, and padded query steps
      attend to nothing. The output keeps the query's mask. As in Keras
      3.15, a `query_mask` passed explicitly is ignored (with a warning):
      only the mask the query carries counts.
    - attention_mask: booleans `(batch, T, S)` (or broadcastable to it), true
      where a query position may attend to a key position.
    - use_causal_mask: query position i attends to key positions `<= i` only.
    Inputs with several middle axes, `(batch, T1, T2, dim)`, attend over all
    of them jointly (the mask is then `(batch, T1, T2, S1, S2)`).

    Args:
        num_heads: positive int, the number of heads.
        key_dim: positive int, the size of each head for query and key.
        value_dim: size of each head for the value; `key_dim` by default.
        dropout: the dropout rate on the attention scores, in `[0, 1)`.
        use_bias: whether the four projections have biases.
        output_shape: the size of the output's last axis (an int or a tuple
            of sizes); the query's last axis by default.
        attention_axes: None, or those same axes (all but the batch and the
            last, as Keras's default): other axes raise at build.
        sliding_window: None or a positive int `w`: a query step attends to
            key steps fewer than `w` positions away only (inputs with one
            steps axis).
        flash_attention: None, False or True. There is no fused kernel here:
            True computes the same attention the same way, and refuses what
            Keras's flash attention refuses (a `dropout` rate above 0, and
            `return_attention_scores=True` at an eager call). Keras's
            backends may still refuse a call that this computes (JAX without
            cuDNN, say). Not in the config, as in Keras.
        kernel_initializer: initializer of the four kernels.
        bias_initializer: initializer of the four biases.
        kernel_regularizer: None or a regularizer of the four kernels.
        bias_regularizer: None or a regularizer of the four biases.
        activity_regularizer: None or a regularizer applied, as in Keras, to
            the outputs of each of the four projections (the projected query,
            key and value, and the output), not to the attention scores.
        kernel_constraint: None or a constraint of the four kernels.
        bias_constraint: None or a constraint of the four biases.
        use_gate: whether to gate the attended values, per head, with a
            sigmoid projection of the query (see above). Its kernel
            `(query_dim, heads, value_dim)` and bias `(heads, value_dim)` are
            an `EinsumDense` named `gate` (`gate_dense`), built between the
            key's and the value's projections, in Keras's weight order and
            at Keras's place in `.keras` files.
        seed: int seed of the dropout's mask stream.
        **kwargs: `name`, `trainable`, `dtype`.

    Input shape:
        query `(batch, T, query_dim)`, value `(batch, S, value_dim)`, key
        `(batch, S, key_dim)` (the value by default).

    Output shape:
        `(batch, T, *output_shape)` (`output_shape` is `query_dim` by default); the
        scores, with `return_attention_scores=True`, are `(batch, num_heads, T, S)`.

    Returns:
        When called: the output `(batch, T, *output_shape)`, and with
        `return_attention_scores=True` the pair `(output, scores)`, scores of
        shape `(batch, num_heads, T, S)` (before dropout).

    Raises:
        ValueError: for bad constructor arguments (`flash_attention=True` with
            a `dropout` rate among them), `return_attention_scores=True` with
            `flash_attention=True`, a missing `value`, inputs
            of rank below 3, batch or sequence sizes that do not match, a last
            axis unlike the one the layer was built for, or an
            `attention_mask` that does not broadcast to `(batch, T, S)`.

    Example:
        >>> mha = mk.layers.MultiHeadAttention(num_heads=2, key_dim=4)
        >>> query, value = np.ones((3, 5, 8)), np.ones((3, 7, 6))
        >>> out, scores = mha(query, value, return_attention_scores=True)
        >>> out.shape, scores.shape
        ((3, 5, 8), (3, 2, 5, 7))
        >>> mha.query_kernel.shape, mha.value_kernel.shape, mha.output_kernel.shape
        ((8, 2, 4), (6, 2, 4), (2, 4, 8))
    """

    supports_masking = True  # the output keeps the query's mask, as in Keras
    # Keras's sub-layers (query, key, gate, value, output) are made in its order, most of
    # them kept here as own weights: listed in creation order, they are in Keras's.
    _weights_in_creation_order = True

    def __init__(
        self,
        num_heads,
        key_dim,
        value_dim=None,
        dropout=0.0,
        use_bias=True,
        output_shape=None,
        attention_axes=None,
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
        super().__init__(**kwargs)  # not activity_regularizer: it is the projections'
        self.num_heads = check_positive_int("MultiHeadAttention", "num_heads", num_heads)
        self.key_dim = check_positive_int("MultiHeadAttention", "key_dim", key_dim)
        value_dim = key_dim if value_dim is None else value_dim
        self.value_dim = check_positive_int("MultiHeadAttention", "value_dim", value_dim)
        if isinstance(attention_axes, int):
            attention_axes = (attention_axes,)
        if attention_axes is not None and not all(
            isinstance(a, int) and not isinstance(a, bool) for a in attention_axes
        ):
            raise ValueError(
                f"MultiHeadAttention: attention_axes must be None or ints, got {attention_axes!r}"
            )
        # Checked at build, against the query's rank: only the default's axes are supported.
        self.attention_axes = None if attention_axes is None else tuple(attention_axes)
        if isinstance(output_shape, int):
            output_shape = (output_shape,)
        if output_shape is not None:
            output_shape = tuple(
                check_positive_int("MultiHeadAttention", "output_shape", s) for s in output_shape
            )
        self._output_shape_arg = output_shape
        if not 0 <= dropout < 1:
            raise ValueError(f"MultiHeadAttention: `dropout` must be in [0, 1), got {dropout!r}")
        self.dropout = float(dropout)
        self.use_bias = bool(use_bias)
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        if sliding_window is not None:
            check_positive_int("MultiHeadAttention", "sliding_window", sliding_window)
        self.sliding_window = sliding_window
        self.use_gate = bool(use_gate)
        # No fused kernel here: flash attention only refuses what Keras's refuses.
        self._flash_attention = bool(flash_attention)
        check_flash_attention("MultiHeadAttention", self._flash_attention, self.dropout)
        self.kernel_regularizer = regularizers.get(kernel_regularizer)
        self.bias_regularizer = regularizers.get(bias_regularizer)
        # As Keras's `_activity_regularizer`: a penalty on each projection's outputs.
        self._activity_regularizer = regularizers.get(activity_regularizer)
        self.kernel_constraint = constraints.get(kernel_constraint)
        self.bias_constraint = constraints.get(bias_constraint)
        self.seed = seed
        self._dropout_layer = Dropout(self.dropout, seed=seed, dtype=self.dtype_policy)

    def build(self, query_shape, value_shape=None, key_shape=None):
        """Creates the four projections for the shapes of query, value and key.

        Args:
            query_shape: the query's shape (or a dict of the three shapes).
            value_shape: the value's shape.
            key_shape: the key's shape; the value's by default.

        Returns:
            None.

        Raises:
            ValueError: if a shape has fewer than 3 axes or an unknown last axis.

        Example:
            >>> mha = mk.layers.MultiHeadAttention(num_heads=2, key_dim=3)
            >>> mha.build((None, 4, 5), (None, 6, 7))
            >>> [w.shape for w in mha.weights][::2]
            [(5, 2, 3), (7, 2, 3), (7, 2, 3), (2, 3, 5)]
        """
        if not isinstance(query_shape, dict):
            # One dict of shapes, as __call__ builds, so that saving records all three.
            shapes = {"query": query_shape, "value": value_shape, "key": key_shape}
            self.build({part: shape for part, shape in shapes.items() if shape is not None})
            return
        query_shape, value_shape, key_shape = (
            query_shape.get(part) for part in ("query", "value", "key")
        )
        if value_shape is None:
            raise ValueError(f"MultiHeadAttention '{self.name}'.build needs the value's shape")
        key_shape = value_shape if key_shape is None else key_shape
        for part, shape in [("query", query_shape), ("value", value_shape), ("key", key_shape)]:
            if len(shape) < 3 or shape[-1] is None:
                raise ValueError(
                    f"MultiHeadAttention '{self.name}' needs {part} of shape (batch, steps, "
                    f"features) with a known last axis, got shape {tuple(shape)}"
                )
        rank = len(query_shape)
        if self.attention_axes is not None and sorted(
            a % rank for a in self.attention_axes
        ) != list(range(1, rank - 1)):
            raise ValueError(
                f"MultiHeadAttention '{self.name}': only attention over every axis but the "
                f"batch and the last ({tuple(range(1, rank - 1))} for inputs of rank {rank}) "
                f"is supported, got attention_axes={self.attention_axes}"
            )
        heads = self.num_heads
        output_shape = self._output_shape_arg or (query_shape[-1],)
        self.query_kernel, self.query_bias = self._projection(
            "query", (query_shape[-1], heads, self.key_dim)
        )
        self.key_kernel, self.key_bias = self._projection(
            "key", (key_shape[-1], heads, self.key_dim)
        )
        self._gate_dense = None
        if self.use_gate:  # between the key's and the value's, as Keras (its weights' order)
            self._gate_dense = self._gate(query_shape)
        self.value_kernel, self.value_bias = self._projection(
            "value", (value_shape[-1], heads, self.value_dim)
        )
        self.output_kernel, self.output_bias = self._projection(
            "attention_output", (heads, self.value_dim, *output_shape), output_shape, 2
        )

    def __call__(self, *args, **kwargs):
        if kwargs.pop("query_mask", None) is not None:  # Keras 3.15 reads the query's own
            warnings.warn(
                f"MultiHeadAttention '{self.name}' ignores query_mask, as Keras 3.15 does: "
                "only the mask the query carries counts (an Embedding(mask_zero=True) "
                "before it, say); pass attention_mask to mask query steps",
                stacklevel=2,
            )
        return super().__call__(*args, **kwargs)

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
        where = f"MultiHeadAttention '{self.name}'"
        check_flash_attention(where, self._flash_attention, 0, return_attention_scores)
        kernels = {"query": self.query_kernel, "value": self.value_kernel, "key": self.key_kernel}
        built = {part: kernel.shape[0] for part, kernel in kernels.items()}
        query_steps, key_steps = checked_steps(where, query.shape, value.shape, key.shape, built)
        attention_mask = with_padding_masks(attention_mask, query_mask, value_mask, key_mask)
        batch, heads = query.shape[0], self.num_heads
        mask = allowed_pairs(
            where, batch, query_steps, key_steps, attention_mask, use_causal_mask,
            self.sliding_window,
        )  # fmt: skip
        # Several middle axes attend jointly: flatten them into one.
        q = self._project(query, self.query_kernel, self.query_bias)
        k = self._project(key, self.key_kernel, self.key_bias)
        v = self._project(value, self.value_kernel, self.value_bias)
        q = ops.transpose(q, (0, 2, 1, 3)) * (1.0 / math.sqrt(self.key_dim))  # (B, N, T, K)
        k = ops.transpose(k, (0, 2, 3, 1))  # (B, N, K, S)
        v = ops.transpose(v, (0, 2, 1, 3))  # (B, N, S, V)
        scores = ops.matmul(q, k)  # (B, N, T, S)
        fused = takes_fused_path(self.dropout, return_attention_scores, len(query_steps))
        scores = masked_softmax(scores, mask, uniform_empty_rows=fused)
        attended = ops.matmul(self._dropout_layer(scores, training=training), v)
        attended = ops.transpose(attended, (0, 2, 1, 3))  # (B, T, N, V)
        if self._gate_dense is not None:
            gate = self._gate_dense(query)
            steps = math.prod(query_steps)  # (written out: -1 is ambiguous for 0 samples)
            attended = attended * ops.reshape(gate, (batch, steps, heads, self.value_dim))
        attended = ops.reshape(attended, (batch, math.prod(query_steps), heads * self.value_dim))
        kernel = ops.reshape(self.output_kernel, (heads * self.value_dim, -1))
        bias = None if self.output_bias is None else ops.reshape(self.output_bias, (-1,))
        output_shape = self.output_kernel.shape[2:]
        outputs = ops.reshape(ops.dense(attended, kernel, bias), (*query.shape[:-1], *output_shape))
        self._regularize_activity(outputs)
        # For compute_mask, called next: the scores carry Keras's Softmax's mask.
        object.__setattr__(self, "_returns_scores", bool(return_attention_scores))
        object.__setattr__(self, "_scores_mask", scores_mask(
            mask, attention_mask, use_causal_mask, self.sliding_window, query_steps, key_steps
        ))  # fmt: skip
        if not return_attention_scores:
            return outputs
        return outputs, ops.reshape(scores, (batch, heads, *query_steps, *key_steps))

    def get_config(self):
        return {
            **super().get_config(),
            "num_heads": self.num_heads,
            "key_dim": self.key_dim,
            "value_dim": self.value_dim,
            "dropout": self.dropout,
            "use_bias": self.use_bias,
            "output_shape": self._output_shape_arg,
            "attention_axes": self.attention_axes,
            "sliding_window": self.sliding_window,
            "use_gate": self.use_gate,
            "kernel_initializer": initializers.serialize(self.kernel_initializer),
            "bias_initializer": initializers.serialize(self.bias_initializer),
            "kernel_regularizer": regularizers.serialize(self.kernel_regularizer),
            "bias_regularizer": regularizers.serialize(self.bias_regularizer),
            "activity_regularizer": regularizers.serialize(self._activity_regularizer),
            "kernel_constraint": constraints.serialize(self.kernel_constraint),
            "bias_constraint": constraints.serialize(self.bias_constraint),
            "seed": self.seed,
        }
