"""`MultiHeadAttention`'s output shapes and masks, without running it.

`compute_output_shape` and `compute_output_spec` give the outputs' (and the
scores') shapes for the inputs'; `compute_mask` gives the query's mask to the
outputs and, after a call that returned scores, the mask those scores carry
(the call leaves it in `_scores_mask`, see `attention_masks.scores_mask`).
"""

from minikeras.layers.input_layer import SymbolicTensor

__all__ = ["AttentionShapes"]


class AttentionShapes:
    """Mixin for `MultiHeadAttention`: its output shapes and masks.

    The layer using it sets `num_heads`, `_output_shape_arg` (its
    `output_shape` argument) and `compute_dtype`.

    Example:
        >>> mk.layers.MultiHeadAttention(2, 4).compute_output_shape((None, 5, 8))
        (None, 5, 8)
    """

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
            >>> mk.layers.MultiHeadAttention(1, 2).compute_mask(np.ones((1, 2, 3)), mask)
            array([[ True, False]])
        """
        if not self.__dict__.get("_returns_scores"):
            return mask
        scores = self.__dict__.get("_scores_mask")
        return mask if mask is None and scores is None else [mask, scores]

    def compute_output_spec(self, query, value, key=None, return_attention_scores=False, **kwargs):
        """The symbolic outputs for symbolic inputs, and the scores' with `return_attention_scores`.

        Args:
            query: the query (a `SymbolicTensor`).
            value: the value.
            key: the key; the value by default.
            return_attention_scores: also give the scores, `(batch, heads, T, S)`.
            **kwargs: the call's other arguments (masks, `training`): no bearing on shapes.

        Returns:
            A `SymbolicTensor`, or `(outputs, scores)`.

        Example:
            >>> mha = mk.layers.MultiHeadAttention(2, 4)
            >>> out, scores = mha.compute_output_spec(
            ...     mk.Input((5, 8)), mk.Input((3, 8)), return_attention_scores=True
            ... )
            >>> out.shape, scores.shape
            ((None, 5, 8), (None, 2, 5, 3))
        """
        key = value if key is None else key
        object.__setattr__(self, "_returns_scores", False)  # no data: no scores' mask
        outputs = SymbolicTensor(self.compute_output_shape(query.shape), self.compute_dtype)
        if not return_attention_scores:
            return outputs
        scores = (query.shape[0], self.num_heads, *query.shape[1:-1], *key.shape[1:-1])
        return outputs, SymbolicTensor(scores, self.compute_dtype)

    def compute_output_shape(self, query_shape, value_shape=None, key_shape=None):
        """The output shape: the query's, with the last axis `output_shape`.

        Args:
            query_shape: the query's shape.
            value_shape: the value's shape (unused but for Keras's signature).
            key_shape: the key's shape (unused).

        Returns:
            A tuple.

        Example:
            >>> mk.layers.MultiHeadAttention(2, 4, output_shape=3).compute_output_shape(
            ...     (None, 5, 8)
            ... )
            (None, 5, 3)
        """
        if self._output_shape_arg is not None:
            return (*query_shape[:-1], *self._output_shape_arg)
        return tuple(query_shape)
