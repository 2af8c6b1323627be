"""`Precision` and `Recall`: ratios of confusion counts at thresholds, Keras's way.

The counts are `confusion._ConfusionMetric`'s; these add Keras's `top_k`
(only each sample's highest scores may be positive) and `class_id` (one
class's column).
"""

import numpy as np

from minikeras.metrics.confusion_counts import (
    _ConfusionMetric,
    _divide_no_nan,
    _evenly_spaced,
    _parse_thresholds,
)
from minikeras.utils.naming import to_snake_case as _snake_case

__all__ = ["Precision", "Recall"]

_NOT_IN_TOP_K = -1e10  # Keras's score for those, and its threshold when `top_k` alone is given


def _top_k_only(scores, k):
    """`scores` with all but each row's `k` highest (the first of ties) made -1e10, as Keras."""
    if scores.ndim == 0 or k >= scores.shape[-1]:
        return scores
    order = np.argsort(-scores, axis=-1, kind="stable")[..., :k]
    kept = np.zeros(scores.shape, dtype=bool)
    np.put_along_axis(kept, order, True, axis=-1)
    return np.where(kept, scores, _NOT_IN_TOP_K)


def _class_column(name, class_id, y_true, y_pred):
    """The targets' and scores' column `class_id` of their last axis, as Keras's `class_id`."""
    y_true, y_pred = np.asarray(y_true), np.asarray(y_pred)
    if y_pred.ndim < 2:  # one score per sample: no class axis (Keras raises too)
        raise ValueError(
            f"Metric {name!r}: class_id={class_id} needs y_pred of shape (num_samples, "
            f"num_classes) (a class axis last), got shape {y_pred.shape}"
        )
    if not class_id < y_pred.shape[-1] or y_true.shape[-1:] != y_pred.shape[-1:]:
        raise ValueError(
            f"Metric {name!r}: class_id={class_id} needs targets and scores with that class "
            f"on their last axis, got shapes {y_true.shape} and {y_pred.shape}"
        )
    return y_true[..., class_id], y_pred[..., class_id]


class _RateAtThresholds(_ConfusionMetric):
    """A ratio of counts at `thresholds` (default 0.5): Precision's and Recall's shape."""

    def __init__(self, thresholds=None, top_k=None, class_id=None, name=None, dtype=None):
        super().__init__(dtype=dtype, name=name or _snake_case(type(self).__name__))
        self.init_thresholds = thresholds
        self._thresholds = _parse_thresholds(type(self).__name__, thresholds, 0.5)
        if thresholds is None and top_k is not None:  # each sample's top_k are its positives
            self._thresholds = np.array([_NOT_IN_TOP_K])
        self.thresholds = self._thresholds.tolist()
        self._clips_scores = _evenly_spaced(self._thresholds)  # as Keras: [0, 0.5, 1], ...
        for argument, value in (("top_k", top_k), ("class_id", class_id)):
            if value is not None and (
                isinstance(value, bool) or int(value) != value or value < (argument == "top_k")
            ):
                raise ValueError(
                    f"{type(self).__name__}: {argument} must be None or an int "
                    f"{'>= 1' if argument == 'top_k' else '>= 0'}, got {value!r}"
                )
        self.top_k = None if top_k is None else int(top_k)
        self.class_id = None if class_id is None else int(class_id)
        self.reset_state()

    def update_state(self, y_true, y_pred, sample_weight=None):
        """Adds a batch's confusion counts, as `_ConfusionMetric.update_state`, after Keras's
        `top_k` (only each sample's `top_k` highest scores can be positive) and `class_id`
        (one class's column only).

        Args:
            y_true: 0/1 targets of shape `(batch, classes)` (or any, without `class_id`).
            y_pred: scores of `y_true`'s shape.
            sample_weight: None, or weights of shape (batch,) or broadcastable.

        Raises:
            ValueError: if the shapes do not fit, or `class_id` is not a class of them.

        Example:
            >>> m = mk.metrics.Recall(top_k=1)
            >>> m.update_state([[0, 1, 1]], [[0.2, 0.9, 0.8]]); m.result()
            0.5
        """
        if self.top_k is not None or self.class_id is not None:
            y_true, y_pred = np.asarray(y_true), np.asarray(y_pred)
            if self.top_k is not None:
                y_pred = _top_k_only(y_pred, self.top_k)
            if self.class_id is not None:
                y_true, y_pred = _class_column(self.name, self.class_id, y_true, y_pred)
        super().update_state(y_true, y_pred, sample_weight)

    def get_config(self):
        """Returns the constructor arguments.

        Returns:
            A dict.

        Example:
            >>> mk.metrics.Precision(thresholds=0.3).get_config()["thresholds"]
            0.3
        """
        return {
            **super().get_config(),
            "thresholds": self.init_thresholds,
            "top_k": self.top_k,
            "class_id": self.class_id,
        }


class Precision(_RateAtThresholds):
    """Fraction of predicted positives that are positive: `tp / (tp + fp)`.

    A prediction is positive when `y_pred > threshold`. Empty counts give 0.
    With evenly spaced thresholds from 0 to 1 (such as `[0, 0.5, 1]`), scores
    are clipped to [0, 1] first, as Keras does there.

    Args:
        thresholds: None (0.5), a float in [0, 1], or a list of them.
        top_k: None, or count only each sample's `top_k` highest scores as
            candidates (the others are never positive), as Keras does; with
            no `thresholds`, those are all positive.
        class_id: None, or the one class (last axis) to count.
        name: the metric's name.
        dtype: as in `Metric`.

    Raises:
        ValueError: if a threshold lies outside [0, 1], or `top_k` / `class_id`
            is not a non-negative int (`top_k` at least 1).

    Example:
        >>> mk.metrics.Precision()([0, 1, 1, 1], [1, 0, 1, 1])
        0.6666666666666666
    """

    def result(self):
        """Returns the precision so far.

        Returns:
            A Python float, or a list of them (one per threshold) when several
            thresholds were given.

        Example:
            >>> mk.metrics.Precision(thresholds=[0.2, 0.7])([1, 0], [0.9, 0.5])
            [0.5, 1.0]
        """
        tp, fp = self.true_positives, self.false_positives
        return self._single_or_list(_divide_no_nan(tp, tp + fp))


class Recall(_RateAtThresholds):
    """Fraction of positives predicted positive: `tp / (tp + fn)`.

    A prediction is positive when `y_pred > threshold`. Empty counts give 0.
    With evenly spaced thresholds from 0 to 1 (such as `[0, 0.5, 1]`), scores
    are clipped to [0, 1] first, as Keras does there.

    Args:
        thresholds: None (0.5), a float in [0, 1], or a list of them.
        top_k: None, or count only each sample's `top_k` highest scores as
            candidates (the others are never positive), as Keras does; with
            no `thresholds`, those are all positive.
        class_id: None, or the one class (last axis) to count.
        name: the metric's name.
        dtype: as in `Metric`.

    Raises:
        ValueError: if a threshold lies outside [0, 1], or `top_k` / `class_id`
            is not a non-negative int (`top_k` at least 1).

    Example:
        >>> mk.metrics.Recall()([0, 1, 1, 1], [1, 0, 1, 1])
        0.6666666666666666
    """

    def result(self):
        """Returns the recall so far.

        Returns:
            A Python float, or a list of them (one per threshold) when several
            thresholds were given.

        Example:
            >>> mk.metrics.Recall(thresholds=[0.2, 0.7])([1, 1], [0.9, 0.5])
            [1.0, 0.5]
        """
        tp, fn = self.true_positives, self.false_negatives
        return self._single_or_list(_divide_no_nan(tp, tp + fn))
