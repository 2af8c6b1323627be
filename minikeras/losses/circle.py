"""Circle loss (Sun et al., 2020): metric learning on unit-norm embeddings with integer labels.

Each embedding is compared with every reference embedding (by default the
batch itself): pairs of one label should be close, pairs of different labels
far apart, each pair weighted by how far it is from where it should be.
"""

import numpy as np

from minikeras import config, ops
from minikeras.losses.base import LossFunctionWrapper, loss_dtype
from minikeras.losses.reduction import reduce_weighted_values

__all__ = ["Circle", "circle"]


def circle(
    y_true,
    y_pred,
    ref_labels=None,
    ref_embeddings=None,
    remove_diagonal=True,
    gamma=80,
    margin=0.4,
):
    """Circle loss of each embedding against the reference embeddings.

        distance = max(1 - y_pred @ ref_embeddings.T, 0)        (cosine distances)
        positive: pairs of one label (without each embedding with itself,
                  if remove_diagonal); negative: pairs of different labels
        positive_logits = -gamma * max(margin + distance, 0) * (margin - distance)
        negative_logits = gamma * max(1 + margin - distance, 0) * (1 - margin - distance)
        result = softplus(logsumexp(positive_logits over positive pairs)
                          + logsumexp(negative_logits over negative pairs))

    An embedding with no positive or no negative pair gets loss 0.

    Args:
        y_true: integer labels of shape (batch,) or (batch, 1).
        y_pred: L2-normalized embeddings of shape (batch, dim) (a
            `UnitNormalization` layer gives them).
        ref_labels: None (`y_true`), or the reference embeddings' labels.
        ref_embeddings: None (`y_pred`), or L2-normalized reference embeddings
            of shape (references, dim).
        remove_diagonal: whether an embedding is not its own positive pair
            (meant for references that are the batch itself).
        gamma: float, the scale of the logits.
        margin: float, the relaxation margin.

    Returns:
        A Tensor of losses of shape (batch,).

    Raises:
        ValueError: if the labels do not fit the embeddings, naming both shapes.

    Example:
        >>> embeddings = [[1.0, 0.0], [0.6, 0.8], [0.0, 1.0]]
        >>> mk.losses.circle([0, 0, 1], embeddings, gamma=1.0, margin=0.25).numpy().round(4)
        array([0.7108, 1.0866, 0.    ], dtype=float32)
    """
    # (numpy float64 embeddings beside Tensor labels take floatx: ops.operands)
    y_true, y_pred, ref_embeddings = ops.operands.narrowed_operands(y_true, y_pred, ref_embeddings)
    y_pred = ops.convert_to_tensor(y_pred)
    if y_pred.dtype.kind != "f":
        y_pred = ops.cast(y_pred, config.floatx())
    references = y_pred if ref_embeddings is None else ops.cast(ref_embeddings, y_pred.dtype)
    labels = _labels("circle", "y_true", y_true, y_pred)
    reference_labels = (
        labels if ref_labels is None else _labels("circle", "ref_labels", ref_labels, references)
    )
    positive = labels[:, None] == reference_labels[None, :]
    negative = ~positive
    if remove_diagonal:
        positive &= ~np.eye(len(labels), len(reference_labels), dtype=bool)
    distance = ops.maximum(1.0 - ops.matmul(y_pred, ops.transpose(references)), 0.0)
    positive_weights = ops.maximum((margin + distance) * positive, 0.0)
    negative_weights = ops.maximum((1.0 + margin - distance) * negative, 0.0)
    positive_logits = -gamma * positive_weights * (margin - distance)
    negative_logits = gamma * negative_weights * (1.0 - margin - distance)
    # A finite stand-in for -inf: a row without pairs then gives softplus(-huge) = 0,
    # and its gradient 0 rather than the nan that logsumexp of -infs gives.
    excluded = np.finfo(y_pred.dtype).min / 2
    positive_loss = ops.logsumexp(ops.where(positive, positive_logits, excluded), axis=1)
    negative_loss = ops.logsumexp(ops.where(negative, negative_logits, excluded), axis=1)
    return ops.softplus(positive_loss + negative_loss)


def _labels(owner, argument, labels, embeddings):
    """Integer labels as a 1-D numpy array, one per row of `embeddings`."""
    given = ops.convert_to_tensor(labels).numpy()
    found = given[..., 0] if given.ndim == 2 and given.shape[-1] == 1 else given
    if embeddings.ndim != 2 or found.shape != embeddings.shape[:1]:
        raise ValueError(
            f"{owner}: {argument} must hold one integer label per embedding, of shape "
            f"(batch,) or (batch, 1) for embeddings of shape (batch, dim); got {argument} "
            f"shape {given.shape} and embeddings shape {embeddings.shape}"
        )
    return found.astype(np.int64)


class Circle(LossFunctionWrapper):
    """Circle loss between integer labels and L2-normalized embeddings (see `circle`).

    The model should end in embeddings without activation followed by
    `UnitNormalization`. As in Keras, only the embeddings with a positive
    loss count: the mean reductions average over those (0 if there is none).

    Args:
        gamma: float, the scale of the logits.
        margin: float, the relaxation margin.
        remove_diagonal: whether an embedding is not its own positive pair.
        reduction: as in `Loss`.
        name: the loss's name.
        dtype: as in `Loss`.

    Example:
        >>> embeddings = [[1.0, 0.0], [0.6, 0.8], [0.0, 1.0]]
        >>> loss = mk.losses.Circle(gamma=1.0, margin=0.25)
        >>> round(float(loss([0, 0, 1], embeddings)), 4)  # the mean of the two positive losses
        0.8987
    """

    def __init__(
        self,
        gamma=80.0,
        margin=0.4,
        remove_diagonal=True,
        reduction="sum_over_batch_size",
        name="circle",
        dtype=None,
    ):
        self.gamma, self.margin = float(gamma), float(margin)
        self.remove_diagonal = bool(remove_diagonal)
        super().__init__(
            circle,
            reduction=reduction,
            name=name,
            dtype=dtype,
            gamma=self.gamma,
            margin=self.margin,
            remove_diagonal=self.remove_diagonal,
        )

    def __call__(self, y_true, y_pred, sample_weight=None, mask=None):
        """Computes the reduced loss over the embeddings whose loss is positive.

        Args:
            y_true: integer labels of shape (batch,) or (batch, 1).
            y_pred: L2-normalized embeddings of shape (batch, dim).
            sample_weight: None, or weights of shape (batch,).
            mask: None, or booleans of shape (batch,): the embeddings that count.

        Returns:
            A scalar Tensor, or per-sample losses for reduction `"none"` / None.

        Raises:
            ValueError: if the labels do not fit the embeddings.

        Example:
            >>> loss = mk.losses.Circle(gamma=1.0, margin=0.25)
            >>> round(float(loss([0, 0], [[1.0, 0.0], [0.6, 0.8]])), 4)  # no negatives: 0
            0.0
        """
        y_pred = ops.convert_to_tensor(y_pred)
        dtype = self.dtype or loss_dtype(y_pred.dtype)
        losses = self.call(y_true, ops.cast(y_pred, dtype))
        positive = losses.numpy() > 0  # Keras's mask: the zero losses do not count
        mask = positive if mask is None else np.reshape(np.asarray(mask, bool), positive.shape)
        sample_weight = self._masked_weights(losses, sample_weight, mask & positive)
        return reduce_weighted_values(losses, sample_weight, self.reduction, self.name)
