"""`ReversibleEmbedding`: an `Embedding` that also maps vectors back to logits over its ids."""

import weakref

import numpy as np

from minikeras import ops
from minikeras.engine.context import state as _state
from minikeras.layers.embedding import Embedding
from minikeras.layers.input_layer import SymbolicTensor

__all__ = ["ReversibleEmbedding"]


class ReversibleEmbedding(Embedding):
    """An `Embedding` that, called with `reverse=True`, projects vectors back to id logits.

    Called as an `Embedding` (`reverse=False`), it looks up rows of
    `embeddings`; called with `reverse=True` on vectors `(..., output_dim)`,
    it gives logits `(..., input_dim)`:

        logits = inputs @ transpose(embeddings)     (tie_weights=True)
        logits = inputs @ reverse_embeddings        (tie_weights=False)
        logits = tanh(logits / logit_soft_cap) * logit_soft_cap   (if a cap is set)

    the output layer of a language model whose input and output vocabularies
    share one table (Press and Wolf, 2016). With `tie_weights=False` a separate
    trainable `reverse_embeddings` of shape `(output_dim, input_dim)` is made
    with `embeddings_initializer`. No bias, as in Keras. A `mask_zero` mask
    comes from a lookup only, never from a reverse call.

    Args:
        input_dim: positive int, the vocabulary size.
        output_dim: positive int, the size of each vector.
        tie_weights: whether the reverse projection uses `embeddings` itself.
        embeddings_initializer: initializer of the table(s); `"uniform"`.
        embeddings_regularizer: optional regularizer of `embeddings`.
        embeddings_constraint: optional constraint of `embeddings`.
        mask_zero: whether id 0 is padding (see `Embedding`).
        reverse_dtype: None (the layer's dtype) or a float dtype in which the
            reverse product is computed and returned, such as `"float32"` in a
            `"float16"` layer.
        logit_soft_cap: None or a positive float bounding the logits smoothly.
        **kwargs: what `Embedding` takes (`name`, `trainable`, `dtype`, ...).

    Call arguments:
        inputs: integer ids, or with `reverse=True` vectors `(..., output_dim)`.
        reverse: whether to project vectors to logits.

    Input shape:
        Ids `(batch, ...)`; with `reverse=True`, `(batch, ..., output_dim)`.

    Output shape:
        `(batch, ..., output_dim)`; with `reverse=True`, `(batch, ..., input_dim)`.

    Raises:
        ValueError: for the arguments `Embedding` refuses, a `logit_soft_cap`
            that is not positive, or reverse inputs whose last axis is not
            `output_dim`.

    Example:
        >>> layer = mk.layers.ReversibleEmbedding(10, 4)
        >>> vectors = layer(np.array([[1, 5, 2]]))
        >>> logits = layer(vectors, reverse=True)
        >>> vectors.shape, logits.shape
        ((1, 3, 4), (1, 3, 10))
        >>> bool(np.allclose(logits.numpy(), vectors.numpy() @ layer.embeddings.numpy().T))
        True
    """

    def __init__(
        self,
        input_dim,
        output_dim,
        tie_weights=True,
        embeddings_initializer="uniform",
        embeddings_regularizer=None,
        embeddings_constraint=None,
        mask_zero=False,
        reverse_dtype=None,
        logit_soft_cap=None,
        **kwargs,
    ):
        super().__init__(
            input_dim,
            output_dim,
            embeddings_initializer=embeddings_initializer,
            embeddings_regularizer=embeddings_regularizer,
            embeddings_constraint=embeddings_constraint,
            mask_zero=mask_zero,
            **kwargs,
        )
        if logit_soft_cap is not None and not (
            isinstance(logit_soft_cap, (int, float)) and logit_soft_cap > 0
        ):
            raise ValueError(
                "ReversibleEmbedding: `logit_soft_cap` must be None or a positive number, got "
                f"{logit_soft_cap!r}"
            )
        if reverse_dtype is not None:
            reverse_dtype = np.dtype(reverse_dtype).name
        self.tie_weights = bool(tie_weights)
        self.reverse_dtype = reverse_dtype
        self.logit_soft_cap = logit_soft_cap

    def build(self, input_shape=None):
        super().build(input_shape)
        if not self.tie_weights:
            self.reverse_embeddings = self.add_weight(
                name="reverse_embeddings",
                shape=(self.output_dim, self.input_dim),
                initializer=self.embeddings_initializer,
            )

    def __call__(self, inputs, *args, reverse=False, **kwargs):
        # Which way this call goes, for compute_mask (a lookup's mask only): in the thread's
        # own state, so that threads calling one layer both ways do not read each other's.
        _reverse_calls()[self] = bool(reverse)
        return super().__call__(inputs, *args, reverse=reverse, **kwargs)

    def call(self, inputs, reverse=False):
        if not reverse:
            return super().call(inputs)
        if inputs.shape[-1:] != (self.output_dim,):
            raise ValueError(
                f"ReversibleEmbedding '{self.name}' with reverse=True needs vectors whose last "
                f"axis is output_dim={self.output_dim}, got shape {inputs.shape}"
            )
        kernel = ops.transpose(self.embeddings) if self.tie_weights else self.reverse_embeddings
        if self.reverse_dtype is not None:
            inputs = ops.cast(inputs, self.reverse_dtype)
            kernel = ops.cast(kernel, self.reverse_dtype)
        logits = ops.matmul(inputs, kernel)
        if self.logit_soft_cap is not None:
            logits = ops.tanh(logits / self.logit_soft_cap) * self.logit_soft_cap
        return logits

    def compute_mask(self, inputs, mask=None):
        """A lookup's mask (`ids != 0` if `mask_zero`); None after a reverse call.

        Args:
            inputs: the call's inputs.
            mask: ignored.

        Returns:
            A boolean Tensor of the ids' shape, or None.

        Example:
            >>> layer = mk.layers.ReversibleEmbedding(5, 2, mask_zero=True)
            >>> layer.compute_mask(np.array([[3, 0]])).numpy()
            array([[ True, False]])
        """
        reverse = _reverse_calls().get(self, False)
        return None if reverse else super().compute_mask(inputs, mask)

    def compute_output_shape(self, input_shape, reverse=False):
        if reverse:
            return (*tuple(input_shape)[:-1], self.input_dim)
        return super().compute_output_shape(input_shape)

    def compute_output_spec(self, inputs, reverse=False):
        """The symbolic output: vectors for a lookup, logits for a reverse call.

        Args:
            inputs: the symbolic inputs.
            reverse: whether the call projects back.

        Returns:
            A `SymbolicTensor`, of `reverse_dtype` (if set) for a reverse call.

        Example:
            >>> layer = mk.layers.ReversibleEmbedding(10, 4)
            >>> layer.compute_output_spec(mk.Input((None, 4)), reverse=True).shape
            (None, None, 10)
        """
        shape = self.compute_output_shape(inputs.shape, reverse=reverse)
        dtype = self.reverse_dtype if reverse and self.reverse_dtype else self.compute_dtype
        return SymbolicTensor(shape, dtype)

    def get_config(self):
        return {
            **super().get_config(),
            "tie_weights": self.tie_weights,
            "reverse_dtype": self.reverse_dtype,
            "logit_soft_cap": self.logit_soft_cap,
        }


def _reverse_calls():
    """This thread's `{layer: whether its latest call was reverse}`, by weak reference (an
    id reused by a later layer must not give it another's direction)."""
    return _state.__dict__.setdefault("reverse_calls", weakref.WeakKeyDictionary())
