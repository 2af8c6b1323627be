"""One rate at its best where another reaches a given value, as Keras 3's
`SensitivityAtSpecificity`, `SpecificityAtSensitivity`, `PrecisionAtRecall` and
`RecallAtPrecision`.

Each counts weighted true/false positives/negatives at `num_thresholds` even
thresholds in [0, 1] (`confusion._ConfusionMetric`'s counts, as `AUC` does),
then returns the largest value of one rate over the thresholds where the other
rate is at least the given value (0 if no threshold gets there):

    sensitivity = recall = tp / (tp + fn)
    specificity = tn / (tn + fp)
    precision = tp / (tp + fp)

The counts are float64 sums, so a rate that is exactly 1 (every positive
scored above the lowest threshold) stays 1 and meets a required value of 1.0.
Keras keeps float32 counts and takes `fn` as a difference of sums, which can
leave it at 1e-7 instead of 0: with some sample weights its
`PrecisionAtRecall(1.0)` then gives 0.0 where this gives the precision.
"""

import numpy as np

from minikeras.metrics.confusion_counts import _ConfusionMetric, _divide_no_nan
from minikeras.metrics.precision_recall import _class_column
from minikeras.utils.naming import to_snake_case as _snake_case

__all__ = [
    "PrecisionAtRecall",
    "RecallAtPrecision",
    "SensitivityAtSpecificity",
    "SpecificityAtSensitivity",
]


class _RateAtRate(_ConfusionMetric):
    """Counts at `num_thresholds` thresholds; `result` maximizes one rate under another."""

    _given = None  # the name of the constructor argument holding the required value

    def __init__(self, value, num_thresholds=200, class_id=None, name=None, dtype=None):
        kind = type(self).__name__
        if isinstance(value, bool) or not isinstance(value, (int, float, np.number)):
            raise ValueError(f"{kind}: {self._given} must be a number in [0, 1], got {value!r}")
        if not 0 <= value <= 1:
            raise ValueError(f"{kind}: {self._given} must be in [0, 1], got {value!r}")
        if isinstance(num_thresholds, bool) or int(num_thresholds) != num_thresholds:
            raise ValueError(f"{kind}: num_thresholds must be an int > 0, got {num_thresholds!r}")
        if num_thresholds <= 0:
            raise ValueError(f"{kind}: num_thresholds must be an int > 0, got {num_thresholds!r}")
        if class_id is not None and (
            isinstance(class_id, bool) or int(class_id) != class_id or class_id < 0
        ):
            raise ValueError(f"{kind}: class_id must be None or an int >= 0, got {class_id!r}")
        super().__init__(dtype=dtype, name=name or _snake_case(kind))
        self.value = float(value)
        self.num_thresholds = int(num_thresholds)
        self.class_id = None if class_id is None else int(class_id)
        self._clips_scores = self.num_thresholds > 1  # Keras's even thresholds
        if self.num_thresholds == 1:
            self._thresholds = np.array([0.5])
        else:
            self._thresholds = np.arange(self.num_thresholds) / (self.num_thresholds - 1)
        self.thresholds = self._thresholds.tolist()
        self.reset_state()

    def update_state(self, y_true, y_pred, sample_weight=None):
        """Adds a batch's confusion counts at every threshold (`y_pred > threshold` is positive).

        Args:
            y_true: 0/1 targets (cast to bool).
            y_pred: scores of `y_true`'s shape (a trailing axis of size 1 may differ).
            sample_weight: None, or weights of shape (batch,) or broadcastable.

        Raises:
            ValueError: if the shapes do not fit, or `class_id` is not a class of them.

        Example:
            >>> m = mk.metrics.PrecisionAtRecall(0.5, num_thresholds=3)
            >>> m.update_state([0, 1], [0.2, 0.9]); m.true_positives.tolist()
            [1.0, 1.0, 0.0]
        """
        if self.class_id is not None:
            y_true, y_pred = _class_column(self.name, self.class_id, y_true, y_pred)
        super().update_state(y_true, y_pred, sample_weight)

    def result(self):
        """Returns the best value of the rate where the constraint holds (0.0 if nowhere).

        Returns:
            A Python float.

        Example:
            >>> mk.metrics.RecallAtPrecision(0.9)([0, 1, 1], [0.2, 0.9, 0.1])
            0.5
        """
        constrained, dependent = self._rates()
        return float(np.max(np.where(constrained >= self.value, dependent, 0.0), initial=0.0))

    def _rates(self):
        raise NotImplementedError

    def _sensitivity(self):
        return _divide_no_nan(self.true_positives, self.true_positives + self.false_negatives)

    def _specificity(self):
        return _divide_no_nan(self.true_negatives, self.true_negatives + self.false_positives)

    def _precision(self):
        return _divide_no_nan(self.true_positives, self.true_positives + self.false_positives)

    def get_config(self):
        """Returns the constructor arguments.

        Returns:
            A dict.

        Example:
            >>> mk.metrics.SensitivityAtSpecificity(0.8).get_config()["specificity"]
            0.8
        """
        return {
            **super().get_config(),
            "class_id": self.class_id,
            "num_thresholds": self.num_thresholds,
            self._given: self.value,
        }


class SensitivityAtSpecificity(_RateAtRate):
    """The best sensitivity (recall) over the thresholds where specificity >= `specificity`.

    Thresholds: `i / (num_thresholds - 1)` for i = 0 .. num_thresholds - 1
    (0.5 alone for `num_thresholds=1`); a score above one is positive there.
    With two or more thresholds, scores are clipped to [0, 1] first, as in
    Keras (a score of 1.5 is above none of them).

    Args:
        specificity: float in [0, 1].
        num_thresholds: int > 0, the number of thresholds.
        class_id: None, or the one class (last axis) to count.
        name: the metric's name.
        dtype: as in `Metric`.

    Raises:
        ValueError: if `specificity` is outside [0, 1], `num_thresholds` is not
            a positive int, or `class_id` is not a non-negative int.

    Example:
        >>> m = mk.metrics.SensitivityAtSpecificity(0.5)
        >>> m([0, 0, 0, 1, 1], [0, 0.3, 0.8, 0.3, 0.8])
        0.5
    """

    _given = "specificity"

    def __init__(self, specificity, num_thresholds=200, class_id=None, name=None, dtype=None):
        super().__init__(specificity, num_thresholds, class_id, name, dtype)
        self.specificity = self.value

    def _rates(self):
        return self._specificity(), self._sensitivity()


class SpecificityAtSensitivity(_RateAtRate):
    """The best specificity over the thresholds where sensitivity (recall) >= `sensitivity`.

    Thresholds as in `SensitivityAtSpecificity`.

    Args:
        sensitivity: float in [0, 1].
        num_thresholds: int > 0, the number of thresholds.
        class_id: None, or the one class (last axis) to count.
        name: the metric's name.
        dtype: as in `Metric`.

    Raises:
        ValueError: if `sensitivity` is outside [0, 1], `num_thresholds` is not
            a positive int, or `class_id` is not a non-negative int.

    Example:
        >>> m = mk.metrics.SpecificityAtSensitivity(0.5)
        >>> round(m([0, 0, 0, 1, 1], [0, 0.3, 0.8, 0.3, 0.8]), 6)
        0.666667
    """

    _given = "sensitivity"

    def __init__(self, sensitivity, num_thresholds=200, class_id=None, name=None, dtype=None):
        super().__init__(sensitivity, num_thresholds, class_id, name, dtype)
        self.sensitivity = self.value

    def _rates(self):
        return self._sensitivity(), self._specificity()


class PrecisionAtRecall(_RateAtRate):
    """The best precision over the thresholds where recall >= `recall`.

    Thresholds as in `SensitivityAtSpecificity`.

    Args:
        recall: float in [0, 1].
        num_thresholds: int > 0, the number of thresholds.
        class_id: None, or the one class (last axis) to count.
        name: the metric's name.
        dtype: as in `Metric`.

    Raises:
        ValueError: if `recall` is outside [0, 1], `num_thresholds` is not a
            positive int, or `class_id` is not a non-negative int.

    Example:
        >>> m = mk.metrics.PrecisionAtRecall(0.5)
        >>> m([0, 0, 0, 1, 1], [0, 0.3, 0.8, 0.3, 0.8])
        0.5
    """

    _given = "recall"

    def __init__(self, recall, num_thresholds=200, class_id=None, name=None, dtype=None):
        super().__init__(recall, num_thresholds, class_id, name, dtype)
        self.recall = self.value

    def _rates(self):
        return self._sensitivity(), self._precision()


class RecallAtPrecision(_RateAtRate):
    """The best recall over the thresholds where precision >= `precision` (0 if none).

    Thresholds as in `SensitivityAtSpecificity`.

    Args:
        precision: float in [0, 1].
        num_thresholds: int > 0, the number of thresholds.
        class_id: None, or the one class (last axis) to count.
        name: the metric's name.
        dtype: as in `Metric`.

    Raises:
        ValueError: if `precision` is outside [0, 1], `num_thresholds` is not a
            positive int, or `class_id` is not a non-negative int.

    Example:
        >>> m = mk.metrics.RecallAtPrecision(0.8)
        >>> m([0, 0, 1, 1], [0, 0.5, 0.3, 0.9])
        0.5
    """

    _given = "precision"

    def __init__(self, precision, num_thresholds=200, class_id=None, name=None, dtype=None):
        super().__init__(precision, num_thresholds, class_id, name, dtype)
        self.precision = self.value

    def _rates(self):
        return self._precision(), self._sensitivity()
