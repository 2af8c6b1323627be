"""F-scores: `FBetaScore` and `F1Score`, from weighted true/false positive counts per class."""

import numpy as np

from minikeras import config
from minikeras.metrics.base import Metric

__all__ = ["F1Score", "FBetaScore"]

_AVERAGES = (None, "micro", "macro", "weighted")


def _two_dimensional(name, y_true, y_pred):
    y_true = np.asarray(y_true, dtype=np.float64)
    y_pred = np.asarray(y_pred, dtype=np.float64)
    if y_true.ndim != 2 or y_pred.ndim != 2 or y_true.shape != y_pred.shape:
        raise ValueError(
            f"Metric {name!r} expects y_true and y_pred of one 2-D shape (batch_size, "
            f"num_classes); got y_true shape {y_true.shape} and y_pred shape {y_pred.shape}"
        )
    return y_true, y_pred


class FBetaScore(Metric):
    """F-beta score: the weighted harmonic mean of precision and recall, per class.

        precision = tp / (tp + fp + eps)
        recall = tp / (tp + fn + eps)
        f_beta = (1 + beta ** 2) * precision * recall / (beta ** 2 * precision + recall + eps)

    Counts are weighted sums over every batch seen, per class (one column of
    the 2-D inputs each), or over all classes together for `average="micro"`.
    It works for multi-class (one-hot) and multi-label targets.

    Args:
        average: None (one score per class), `"micro"` (one score from the
            counts summed over classes), `"macro"` (the mean of the class
            scores) or `"weighted"` (their mean weighted by each class's
            number of true instances).
        beta: positive number; recall weighs `beta` times as much as
            precision. (Keras accepts only a Python float.)
        threshold: None, or a float in (0, 1]: predictions above it count as
            positive. None marks the largest prediction of each row positive
            (unless it is 0).
        name: the metric's name.
        dtype: the dtype of a per-class result (`average=None`).

    Raises:
        ValueError: for an unknown `average`, a `beta` that is not positive,
            or a `threshold` outside (0, 1].

    Example:
        >>> m = mk.metrics.FBetaScore(beta=2.0, threshold=0.5)
        >>> np.round(m([[1, 1, 0]], [[0.9, 0.2, 0.7]]), 4)  # a hit, a miss, a false alarm
        array([1., 0., 0.], dtype=float32)
        >>> round(
        ...     mk.metrics.FBetaScore(average="micro", threshold=0.5)(
        ...         [[1, 1, 0]], [[0.9, 0.2, 0.7]]
        ...     ),
        ...     4,
        ... )
        0.5
    """

    _direction = "up"  # higher is better (for callbacks' mode="auto")

    def __init__(self, average=None, beta=1.0, threshold=None, name="fbeta_score", dtype=None):
        super().__init__(name=name, dtype=dtype)
        if average not in _AVERAGES:
            raise ValueError(
                f"{type(self).__name__}: average must be one of {_AVERAGES}, got {average!r}"
            )
        if isinstance(beta, bool) or not isinstance(beta, (int, float, np.number)) or not beta > 0:
            raise ValueError(f"{type(self).__name__}: beta must be a number > 0, got {beta!r}")
        if threshold is not None and (
            isinstance(threshold, bool)
            or not isinstance(threshold, (int, float, np.number))
            or not 0.0 < threshold <= 1.0
        ):
            raise ValueError(
                f"{type(self).__name__}: threshold must be None or a float with "
                f"0 < threshold <= 1, got {threshold!r}"
            )
        self.average = average
        self.beta = float(beta)
        self.threshold = None if threshold is None else float(threshold)
        self._counts = None  # (tp, fp, fn, support) Variables, made by the first batch

    def _build(self, num_classes):
        shape = () if self.average == "micro" else (num_classes,)
        names = ("true_positives", "false_positives", "false_negatives", "intermediate_weights")
        self._counts = [self.add_variable(shape, "zeros", "float64", name=n) for n in names]
        self.true_positives, self.false_positives, self.false_negatives = self._counts[:3]
        self.intermediate_weights = self._counts[3]
        self._num_classes = num_classes

    def update_state(self, y_true, y_pred, sample_weight=None):
        """Adds a batch's weighted true positives, false positives and false negatives.

        Args:
            y_true: 0/1 targets of shape (batch_size, num_classes).
            y_pred: scores of the same shape.
            sample_weight: None, or weights of shape (batch_size,) or broadcastable.

        Raises:
            ValueError: if the inputs are not 2-D of one shape, or the number of
                classes differs from the first batch's.

        Example:
            >>> m = mk.metrics.F1Score(average="macro", threshold=0.5)
            >>> m.update_state([[1, 0], [0, 1]], [[0.8, 0.1], [0.6, 0.9]])
            >>> round(m.result(), 4)  # class 0: p 1/2, r 1 -> 2/3; class 1: 1
            0.8333
        """
        y_true, y_pred = _two_dimensional(self.name, y_true, y_pred)
        if self._counts is None:
            self._build(y_pred.shape[1])
        elif y_pred.shape[1] != self._num_classes:
            raise ValueError(
                f"Metric {self.name!r} counted {self._num_classes} classes so far; got a "
                f"batch with {y_pred.shape[1]} (y_pred shape {y_pred.shape})"
            )
        if self.threshold is None:
            top = y_pred.max(axis=-1, keepdims=True)
            predicted = (y_pred >= top) & (np.abs(y_pred) > 1e-9)
        else:
            predicted = y_pred > self.threshold
        predicted = predicted.astype(np.float64)
        weights = 1.0
        if sample_weight is not None:
            weights = np.asarray(sample_weight, dtype=np.float64)
            weights = weights.reshape(weights.shape + (1,) * (2 - weights.ndim))
        axis = None if self.average == "micro" else 0
        parts = (predicted * y_true, predicted * (1 - y_true), (1 - predicted) * y_true, y_true)
        for variable, part in zip(self._counts, parts):
            variable.assign_add(np.sum(part * weights, axis=axis))

    def result(self):
        """Returns the score(s) so far (0.0 before any batch).

        Returns:
            A Python float, or a numpy array of one score per class for `average=None`.

        Example:
            >>> mk.metrics.F1Score().result()
            0.0
        """
        if self._counts is None:
            return 0.0
        tp, fp, fn, support = (variable.numpy() for variable in self._counts)
        eps = config.epsilon()
        precision = tp / (tp + fp + eps)
        recall = tp / (tp + fn + eps)
        beta2 = self.beta**2
        score = (1 + beta2) * precision * recall / (beta2 * precision + recall + eps)
        if self.average == "weighted":
            return float(np.sum(score * support / (np.sum(support) + eps)))
        if self.average is not None:
            return float(np.mean(score))
        return score.astype(self.dtype)

    def get_config(self):
        """Returns the constructor arguments.

        Returns:
            A dict.

        Example:
            >>> mk.metrics.FBetaScore(beta=0.5).get_config()["beta"]
            0.5
        """
        return {
            **super().get_config(),
            "average": self.average,
            "beta": self.beta,
            "threshold": self.threshold,
        }


class F1Score(FBetaScore):
    """F1 score: `2 * precision * recall / (precision + recall)`, the `FBetaScore` with beta 1.

    Args:
        average: None, `"micro"`, `"macro"` or `"weighted"` (see `FBetaScore`).
        threshold: None, or a float in (0, 1] (see `FBetaScore`).
        name: the metric's name.
        dtype: the dtype of a per-class result.

    Raises:
        ValueError: for an unknown `average` or a `threshold` outside (0, 1].

    Example:
        >>> m = mk.metrics.F1Score(threshold=0.5)
        >>> m.update_state([[1, 1, 1], [1, 0, 0], [1, 1, 0]],
        ...                [[0.2, 0.6, 0.7], [0.2, 0.6, 0.6], [0.6, 0.8, 0.0]])
        >>> np.round(m.result(), 4)
        array([0.5   , 0.8   , 0.6667], dtype=float32)
    """

    def __init__(self, average=None, threshold=None, name="f1_score", dtype=None):
        super().__init__(average=average, beta=1.0, threshold=threshold, name=name, dtype=dtype)

    def get_config(self):
        """Returns the constructor arguments (no `beta`).

        Returns:
            A dict.

        Example:
            >>> sorted(mk.metrics.F1Score().get_config())
            ['average', 'dtype', 'name', 'threshold']
        """
        config = super().get_config()
        del config["beta"]
        return config
