"""`Embedding`: integer ids to dense vectors, rows of a trained table."""

from minikeras import constraints, initializers, ops, regularizers
from minikeras.layers.dense import check_positive_int, refuse_keras_only, take_keras_only
from minikeras.layers.layer import Layer

__all__ = ["Embedding"]


class Embedding(Layer):
    """Turns integer ids into dense vectors: id `i` becomes row `i` of `embeddings`.

    The lookup is `ops.embedding_lookup`, one primitive whose gradient sums
    the rows of repeated ids by sorting them (not with `np.add.at`).

    Args:
        input_dim: positive int, the vocabulary size: ids lie in `[0, input_dim)`.
        output_dim: positive int, the size of each vector.
        embeddings_initializer: initializer of the `(input_dim, output_dim)`
            table; `"uniform"` (in `[-0.05, 0.05)`) by default, as in Keras.
        embeddings_regularizer: optional regularizer of the table.
        embeddings_constraint: optional constraint of the table.
        mask_zero: whether id 0 is padding. If True, `compute_mask` gives
            `ids != 0`, which Sequential and functional models pass to the
            layers after this one (an RNN skips those steps), and id 0 should
            not be a real token (so `input_dim` is the vocabulary size + 1).
        weights: optional initial table, an array or a list of one array.
        input_length: Keras 2's fixed sequence length; it only gives the
            input shape `(input_length,)`.
        **kwargs: `name`, `trainable`, `dtype`, `input_shape`, and Keras's
            `quantization_config` and `lora_rank` as None only (the values in
            the config of a layer that is not quantized; minikeras has
            neither) and `lora_alpha` (ignored, as Keras ignores it then).

    Input shape:
        Integer ids `(batch, ...)`, such as `(batch, sequence_length)`.

    Output shape:
        `(batch, ..., output_dim)`: one vector per id.

    Raises:
        ValueError: if `input_dim` or `output_dim` is not a positive int, or
            `lora_rank` or `quantization_config` is set; at
            call time, for ids that are not whole numbers or fall outside
            `[0, input_dim)`, naming the layer.

    Example:
        >>> layer = mk.layers.Embedding(10, 3, mask_zero=True)
        >>> ids = np.array([[4, 2, 0, 0]])
        >>> layer(ids).shape, layer.embeddings.shape
        ((1, 4, 3), (10, 3))
        >>> layer.compute_mask(ids).numpy()
        array([[ True,  True, False, False]])
    """

    # The last input axis is the sequence, free to change from call to call.

    def __init__(
        self,
        input_dim,
        output_dim,
        embeddings_initializer="uniform",
        embeddings_regularizer=None,
        embeddings_constraint=None,
        mask_zero=False,
        weights=None,
        input_length=None,
        **kwargs,
    ):
        keras_only = take_keras_only(kwargs, "lora_rank", "lora_alpha", "quantization_config")
        if input_length is not None and "input_shape" not in kwargs:
            kwargs["input_shape"] = (input_length,)
        super().__init__(**kwargs)
        self.input_dim = check_positive_int("Embedding", "input_dim", input_dim)
        self.output_dim = check_positive_int("Embedding", "output_dim", output_dim)
        refuse_keras_only(self, keras_only)
        self.embeddings_initializer = initializers.get(embeddings_initializer)
        self.embeddings_regularizer = regularizers.get(embeddings_regularizer)
        self.embeddings_constraint = constraints.get(embeddings_constraint)
        self.mask_zero = bool(mask_zero)
        if weights is not None and not isinstance(weights, (list, tuple)):
            weights = [weights]
        self._initial_weights = weights

    def build(self, input_shape):
        self.embeddings = self.add_weight(
            "embeddings",
            shape=(self.input_dim, self.output_dim),
            initializer=self.embeddings_initializer,
            regularizer=self.embeddings_regularizer,
            constraint=self.embeddings_constraint,
        )
        if self._initial_weights is not None:
            self.set_weights(self._initial_weights)
            self._initial_weights = None

    def call(self, inputs):
        try:
            return ops.embedding_lookup(self.embeddings, inputs)
        except ValueError as error:
            raise ValueError(f"Embedding '{self.name}': {error}") from None

    def compute_mask(self, inputs, mask=None):
        """`inputs != 0` if `mask_zero`, else None.

        Args:
            inputs: the integer ids.
            mask: ignored (an Embedding starts masks, it does not pass them on).

        Returns:
            A boolean Tensor of the ids' shape, or None.

        Example:
            >>> mk.layers.Embedding(5, 2).compute_mask(np.array([[1, 0]])) is None
            True
        """
        return ops.not_equal(inputs, 0) if self.mask_zero else None

    def compute_output_shape(self, input_shape):
        return (*input_shape, self.output_dim)

    def get_config(self):
        return {
            **super().get_config(),
            "input_dim": self.input_dim,
            "output_dim": self.output_dim,
            "embeddings_initializer": initializers.serialize(self.embeddings_initializer),
            "embeddings_regularizer": regularizers.serialize(self.embeddings_regularizer),
            "embeddings_constraint": constraints.serialize(self.embeddings_constraint),
            "mask_zero": self.mask_zero,
            "quantization_config": None,
        }
