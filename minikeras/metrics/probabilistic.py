"""Probabilistic metrics: the mean cross-entropies and KL divergence over all samples seen.

Each is the `Mean` of the loss function of the same name in `minikeras.losses`,
computed in float64 on numpy arrays (as the regression metrics are). `Poisson`,
which Keras keeps beside these, is in `regression.py`.
"""

import numpy as np

from minikeras import losses
from minikeras.losses.pairs import check_ignore_class, check_label_smoothing
from minikeras.metrics.mean import MeanMetricWrapper
from minikeras.metrics.regression import _float64_values

__all__ = [
    "BinaryCrossentropy",
    "CategoricalCrossentropy",
    "KLDivergence",
    "SparseCategoricalCrossentropy",
]


class KLDivergence(MeanMetricWrapper):
    """Mean Kullback-Leibler divergence `sum(y_true * log(y_true / y_pred), axis=-1)`.

    Both are clipped to [eps, 1] first, as in `minikeras.losses.kl_divergence`.

    Args:
        name: the metric's name.
        dtype: as in `Metric`.

    Example:
        >>> round(mk.metrics.KLDivergence()([[0.5, 0.5]], [[0.25, 0.75]]), 6)
        0.143841
    """

    _direction = "down"  # lower is better (for callbacks' mode="auto")

    def __init__(self, name="kl_divergence", dtype=None):
        super().__init__(_float64_values(losses.kl_divergence), name=name, dtype=dtype)


class BinaryCrossentropy(MeanMetricWrapper):
    """Mean binary cross-entropy over all samples seen (see `losses.binary_crossentropy`).

    Each sample's value is the mean over its last axis.

    Args:
        name: the metric's name.
        dtype: as in `Metric`.
        from_logits: whether `y_pred` holds logits.
        label_smoothing: float in [0, 1]; targets become
            `y_true * (1 - label_smoothing) + 0.5 * label_smoothing`.

    Raises:
        ValueError: if `label_smoothing` is outside [0, 1] (Keras takes any value).

    Example:
        >>> m = mk.metrics.BinaryCrossentropy()
        >>> round(m([[0, 1], [0, 0]], [[0.5, 0.5], [0.5, 0.5]]), 6)  # log 2
        0.693147
    """

    _direction = "down"  # lower is better (for callbacks' mode="auto")

    def __init__(
        self, name="binary_crossentropy", dtype=None, from_logits=False, label_smoothing=0
    ):
        check_label_smoothing(type(self).__name__, label_smoothing)
        super().__init__(
            _float64_values(losses.binary_crossentropy),
            name=name,
            dtype=dtype,
            from_logits=from_logits,
            label_smoothing=label_smoothing,
        )
        self.from_logits, self.label_smoothing = from_logits, label_smoothing


class CategoricalCrossentropy(MeanMetricWrapper):
    """Mean categorical cross-entropy of one-hot targets (see `losses.categorical_crossentropy`).

    Args:
        name: the metric's name.
        dtype: as in `Metric`.
        from_logits: whether `y_pred` holds logits.
        label_smoothing: float in [0, 1]; targets become
            `y_true * (1 - label_smoothing) + label_smoothing / num_classes`.
        axis: the class axis.

    Raises:
        ValueError: if `label_smoothing` is outside [0, 1] (Keras takes any value).

    Example:
        >>> m = mk.metrics.CategoricalCrossentropy()
        >>> round(m([[0, 1, 0], [0, 0, 1]], [[0.05, 0.95, 0], [0.1, 0.8, 0.1]]), 4)
        1.1769
    """

    _direction = "down"  # lower is better (for callbacks' mode="auto")

    def __init__(
        self,
        name="categorical_crossentropy",
        dtype=None,
        from_logits=False,
        label_smoothing=0,
        axis=-1,
    ):
        check_label_smoothing(type(self).__name__, label_smoothing)
        super().__init__(
            _float64_values(losses.categorical_crossentropy),
            name=name,
            dtype=dtype,
            from_logits=from_logits,
            label_smoothing=label_smoothing,
            axis=axis,
        )
        self.from_logits, self.label_smoothing, self.axis = from_logits, label_smoothing, axis


def _sparse_values(y_true, y_pred, **kwargs):
    """`losses.sparse_categorical_crossentropy` of float64 scores (the labels stay ints)."""
    y_pred = np.asarray(y_pred, dtype=np.float64)
    return np.asarray(losses.sparse_categorical_crossentropy(y_true, y_pred, **kwargs))


_sparse_values.__name__ = "sparse_categorical_crossentropy"


class SparseCategoricalCrossentropy(MeanMetricWrapper):
    """Mean cross-entropy of integer labels (see `losses.sparse_categorical_crossentropy`).

    With `ignore_class`, entries with that label have value 0 and, as in
    Keras 3, are left out of the mean only when a `sample_weight` is given
    (it is then 0 for them); without one, they count as zeros.

    Args:
        name: the metric's name.
        dtype: as in `Metric`.
        from_logits: whether `y_pred` holds logits.
        ignore_class: None, or an int label whose entries do not count.
        axis: the class axis.

    Raises:
        ValueError: if `ignore_class` is not None or an int.

    Example:
        >>> m = mk.metrics.SparseCategoricalCrossentropy()
        >>> round(m([1, 2], [[0.05, 0.95, 0], [0.1, 0.8, 0.1]]), 4)
        1.1769
    """

    _direction = "down"  # lower is better (for callbacks' mode="auto")

    def __init__(
        self,
        name="sparse_categorical_crossentropy",
        dtype=None,
        from_logits=False,
        ignore_class=None,
        axis=-1,
    ):
        ignore_class = check_ignore_class(type(self).__name__, ignore_class)
        super().__init__(
            _sparse_values,
            name=name,
            dtype=dtype,
            from_logits=from_logits,
            ignore_class=ignore_class,
            axis=axis,
        )
        self.from_logits, self.ignore_class, self.axis = from_logits, ignore_class, axis

    def update_state(self, y_true, y_pred, sample_weight=None):
        """Adds a batch's cross-entropies to the mean.

        Args:
            y_true: integer labels of `y_pred`'s shape without `axis` (or with a
                trailing axis of size 1 instead).
            y_pred: probabilities, or logits with `from_logits`.
            sample_weight: None, or weights of shape (batch,) or broadcastable;
                with `ignore_class`, they become 0 for the ignored entries.

        Raises:
            ValueError: if the shapes do not fit or a label is out of range.

        Example:
            >>> m = mk.metrics.SparseCategoricalCrossentropy(ignore_class=-1)
            >>> m.update_state([0, -1], [[0.5, 0.5], [0.9, 0.1]], sample_weight=[1.0, 1.0])
            >>> round(m.result(), 6)  # log 2, the ignored entry left out
            0.693147
        """
        if self.ignore_class is None or sample_weight is None:
            return super().update_state(y_true, y_pred, sample_weight)
        try:
            values = self._fn(y_true, y_pred, **self._fn_kwargs)
        except ValueError as error:
            raise ValueError(f"Metric {self.name!r}: {error}") from None
        labels = np.asarray(y_true)
        if labels.ndim == values.ndim + 1:  # a trailing axis of size 1
            labels = labels[..., 0]
        weights = np.asarray(sample_weight, dtype=np.float64)
        if weights.ndim == values.ndim + 1 and weights.shape[-1:] == (1,):
            weights = weights[..., 0]
        weights = weights.reshape(weights.shape + (1,) * (values.ndim - weights.ndim))
        try:
            weights = np.broadcast_to(weights, values.shape) * (labels != self.ignore_class)
        except ValueError:
            raise ValueError(
                f"Metric {self.name!r}: sample_weight of shape {np.shape(sample_weight)} does "
                f"not fit values of shape {values.shape}"
            ) from None
        return super(MeanMetricWrapper, self).update_state(values, sample_weight=weights)
