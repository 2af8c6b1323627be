"""Generalized cross-entropy (Zhang and Sabuncu, 2018): a loss robust to noisy labels."""

import numpy as np

from minikeras import ops
from minikeras.losses.base import LossFunctionWrapper
from minikeras.losses.functions import _sparse_pair

__all__ = ["CategoricalGeneralizedCrossEntropy", "categorical_generalized_cross_entropy"]


def categorical_generalized_cross_entropy(y_true, y_pred, q):
    """Generalized cross-entropy between integer labels and predicted probabilities.

        p = y_pred[..., y_true]      (the probability of the right class)
        result = (1 - p ** q) / q

    As `q` goes to 0 this tends to the cross-entropy `-log(p)`; `q = 1` gives
    `1 - p`, the mean absolute error's, which noisy labels disturb less.

    Args:
        y_true: integer labels of shape (batch,) or (batch, 1).
        y_pred: probabilities of shape (batch, num_classes).
        q: float in (0, 1).

    Returns:
        A Tensor of losses of shape (batch,).

    Raises:
        ValueError: if `q` is outside (0, 1), the shapes do not fit, or a label
            is not a class (Keras gives such a label loss `1 / q`).

    Example:
        >>> mk.losses.categorical_generalized_cross_entropy(
        ...     [0, 1], [[0.25, 0.75], [0.25, 0.75]], q=0.5
        ... ).numpy().round(4)
        array([1.    , 0.2679], dtype=float32)
    """
    q = _checked_q("categorical_generalized_cross_entropy", q)
    y_true, y_pred = _sparse_pair(y_true, y_pred, -1)
    labels = np.asarray(y_true.numpy()).reshape(y_pred.shape[:-1])
    num_classes = y_pred.shape[-1]
    if labels.size and (labels.min() < 0 or labels.max() >= num_classes):
        raise ValueError(
            f"categorical_generalized_cross_entropy: labels must lie in [0, {num_classes}) "
            f"for y_pred of shape {y_pred.shape}; got labels from {labels.min()} to "
            f"{labels.max()}"
        )
    one_hot = ops.one_hot(labels.astype(np.int64), num_classes, dtype=y_pred.dtype)
    p = ops.sum(y_pred * one_hot, axis=-1)
    return (1.0 - ops.power(p, q)) / q


def _checked_q(owner, q):
    q = float(q)
    if not 0.0 < q < 1.0:
        raise ValueError(f"{owner}: q must lie in the interval (0, 1), got {q}")
    return q


class CategoricalGeneralizedCrossEntropy(LossFunctionWrapper):
    """Generalized cross-entropy, robust to noisy labels.

    See `categorical_generalized_cross_entropy` for the formula. Keras 3.15's
    `keras.losses.get` does not know this class's name; minikeras's does.

    Args:
        q: float in (0, 1); near 0 it behaves as the cross-entropy, near 1 as
            the mean absolute error.
        reduction: as in `Loss`.
        name: the loss's name.
        dtype: as in `Loss`.

    Raises:
        ValueError: if `q` is outside (0, 1).

    Example:
        >>> loss = mk.losses.CategoricalGeneralizedCrossEntropy(q=0.5)
        >>> round(float(loss([0, 1], [[0.25, 0.75], [0.25, 0.75]])), 4)
        0.634
    """

    def __init__(
        self,
        q=0.5,
        reduction="sum_over_batch_size",
        name="categorical_generalized_cross_entropy",
        dtype=None,
    ):
        self.q = _checked_q(type(self).__name__, q)
        super().__init__(
            categorical_generalized_cross_entropy,
            reduction=reduction,
            name=name,
            dtype=dtype,
            q=self.q,
        )
