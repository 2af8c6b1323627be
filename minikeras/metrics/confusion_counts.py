"""Weighted confusion counts at thresholds, and the base class of the metrics built on them.

`_confusion_counts` turns labels, scores and sample weights into weighted
true/false positives/negatives at each threshold; `_ConfusionMetric` keeps
those counts as state for `Precision`, `Recall`, `AUC` and the
sensitivity/specificity metrics.
"""

import numpy as np

from minikeras import config
from minikeras.metrics.base import Metric, _aligned

__all__ = []


def _parse_thresholds(name, thresholds, default):
    values = [default] if thresholds is None else np.ravel(thresholds).tolist()
    array = np.asarray(values, dtype=np.float64)
    if not array.size or np.any(~((array >= 0) & (array <= 1))):
        raise ValueError(f"{name}: thresholds must be numbers in [0, 1], got {thresholds!r}")
    return array


def _evenly_spaced(thresholds):
    """Keras's test for thresholds it counts by bucket, with the scores clipped to [0, 1]."""
    n = len(thresholds)
    even = np.arange(n, dtype=np.float32) / max(n - 1, 1)
    return n >= 3 and np.allclose(thresholds, even, atol=config.epsilon())


def _weights_like(name, sample_weight, shape):
    """Sample weights broadcast to `shape`; per-sample weights cover trailing axes."""
    weights = np.asarray(sample_weight, dtype=np.float64)
    given_shape = weights.shape
    if weights.ndim == len(shape) + 1 and weights.shape[-1] == 1:
        weights = weights[..., 0]
    weights = weights.reshape(weights.shape + (1,) * (len(shape) - weights.ndim))
    try:
        return np.broadcast_to(weights, shape)
    except ValueError:
        raise ValueError(
            f"Metric {name!r}: sample_weight of shape {given_shape} does not fit y_pred of "
            f"shape {shape}; expected shape {shape[:1]} or one that broadcasts"
        ) from None


def _confusion_counts(
    name, y_true, y_pred, thresholds, sample_weight, dtype, label_weights=None, multi_label=False
):
    """Weighted (tp, fp, tn, fn) at each threshold; `y_pred > threshold` is positive.

    The scores are compared in the metric's `dtype` (float32 by default), as
    Keras casts them: a float64 score of 0.3 then sits on a 0.3 threshold.
    `label_weights` weigh the last axis's labels. With `multi_label`, `y_pred`
    must be (batch, labels) and each count has shape (thresholds, labels);
    otherwise every label's score counts in one curve.
    """
    y_true, y_pred = _aligned(f"Metric {name!r}", y_true, y_pred)
    if multi_label and y_pred.ndim != 2:
        raise ValueError(
            f"Metric {name!r}: with multi_label=True, y_pred must have rank 2 "
            f"(batch, labels); got shape {y_pred.shape}"
        )
    if y_pred.dtype != dtype:
        y_pred = y_pred.astype(dtype)
    weights = np.ones(y_pred.shape) if sample_weight is None else sample_weight
    weights = _weights_like(name, weights, y_pred.shape)
    if label_weights is not None:
        if not y_pred.ndim or y_pred.shape[-1] != len(label_weights):
            raise ValueError(
                f"Metric {name!r}: label_weights has {len(label_weights)} entries, one per "
                f"label, but y_pred of shape {y_pred.shape} has "
                f"{y_pred.shape[-1] if y_pred.ndim else 1} labels on its last axis"
            )
        weights = weights * label_weights
    positive = y_true.astype(bool)
    if not multi_label:
        return _counts_at(positive.ravel(), y_pred.ravel(), weights.ravel(), thresholds)
    columns = [
        _counts_at(positive[:, j], y_pred[:, j], weights[:, j], thresholds)
        for j in range(y_pred.shape[1])
    ]
    return tuple(np.stack(counts, axis=1) for counts in zip(*columns))


def _counts_at(positive, scores, weights, thresholds):
    """(tp, fp, tn, fn) of 1-D labels, scores and weights at each threshold."""
    order = np.argsort(thresholds, kind="stable")
    # The thresholds in the scores' dtype too: 0.5 is 0.5 in float32 as in float64.
    ordered = thresholds[order].astype(scores.dtype)
    # How many thresholds each score exceeds; a score is positive at threshold j iff above > j.
    above = np.searchsorted(ordered, scores, side="left")
    above[np.isnan(scores)] = 0

    def exceeding(mask):
        counts = np.bincount(above[mask], weights=weights[mask], minlength=len(ordered) + 1)
        return np.cumsum(counts[::-1])[::-1][1:]

    tp, fp = np.empty(len(order)), np.empty(len(order))
    tp[order], fp[order] = exceeding(positive), exceeding(~positive)
    return tp, fp, weights[~positive].sum() - fp, weights[positive].sum() - tp


def _divide_no_nan(numerator, denominator):
    return np.divide(numerator, denominator, out=np.zeros_like(numerator), where=denominator != 0)


class _ConfusionMetric(Metric):
    """Weighted true/false positive/negative counts at `self._thresholds`."""

    _direction = "up"  # higher is better (for callbacks' mode="auto")

    _clips_scores = False  # whether scores are clipped to [0, 1] first

    def reset_state(self):
        size = len(self._thresholds)
        self.true_positives, self.false_positives = np.zeros(size), np.zeros(size)
        self.true_negatives, self.false_negatives = np.zeros(size), np.zeros(size)

    def update_state(self, y_true, y_pred, sample_weight=None):
        """Adds a batch's confusion counts at every threshold.

        Args:
            y_true: 0/1 targets (cast to bool).
            y_pred: scores of `y_true`'s shape (a trailing axis of size 1 may differ).
            sample_weight: None, or weights of shape (batch,) or broadcastable.

        Raises:
            ValueError: if the shapes do not fit, naming the metric and the shapes.

        Example:
            >>> m = mk.metrics.Precision(); m.update_state([1, 0, 1], [0.9, 0.8, 0.1]); m.result()
            0.5
        """
        y_pred = self._clipped(y_pred)
        counts = _confusion_counts(
            self.name, y_true, y_pred, self._thresholds, sample_weight, self.dtype
        )
        self._add_counts(*counts)

    def _clipped(self, y_pred):
        """`y_pred` clipped to [0, 1] if `_clips_scores` (as Keras counts even thresholds)."""
        return np.clip(np.asarray(y_pred), 0, 1) if self._clips_scores else y_pred

    def _add_counts(self, tp, fp, tn, fn):
        self.true_positives += tp
        self.false_positives += fp
        self.true_negatives += tn
        self.false_negatives += fn

    def _single_or_list(self, values):
        return float(values[0]) if len(values) == 1 else [float(v) for v in values]
