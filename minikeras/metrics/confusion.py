"""Confusion-count metrics: `Precision`, `Recall` and `AUC`.

They count weighted true/false positives/negatives at thresholds instead of
averaging per-sample values.
"""

import numpy as np

from minikeras import config
from minikeras.metrics.base import Metric, _aligned

__all__ = ["AUC"]


def _parse_thresholds(name, thresholds, default):
    values = [default] if thresholds is None else np.ravel(thresholds).tolist()
    array = np.asarray(values, dtype=np.float64)
    if not array.size or np.any(~((array >= 0) & (array <= 1))):
        raise ValueError(f"{name}: thresholds must be numbers in [0, 1], got {thresholds!r}")
    return array


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


def _confusion_counts(name, y_true, y_pred, thresholds, sample_weight, dtype):
    """Weighted (tp, fp, tn, fn) at each threshold; `y_pred > threshold` is positive.

    The scores are compared in the metric's `dtype` (float32 by default), as
    Keras casts them: a float64 score of 0.3 then sits on a 0.3 threshold.
    """
    y_true, y_pred = _aligned(f"Metric {name!r}", y_true, y_pred)
    if y_pred.dtype != dtype:
        y_pred = y_pred.astype(dtype)
    weights = np.ones(y_pred.shape) if sample_weight is None else sample_weight
    weights = _weights_like(name, weights, y_pred.shape).ravel()
    positive = y_true.astype(bool).ravel()
    scores = y_pred.ravel()
    order = np.argsort(thresholds, kind="stable")
    # The thresholds in that dtype too: 0.5 is 0.5 in float32 as in float64.
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
        y_pred = self._scores(y_pred)
        tp, fp, tn, fn = _confusion_counts(
            self.name, y_true, y_pred, self._thresholds, sample_weight, self.dtype
        )
        self.true_positives += tp
        self.false_positives += fp
        self.true_negatives += tn
        self.false_negatives += fn

    def _scores(self, y_pred):
        return y_pred

    def _single_or_list(self, values):
        return float(values[0]) if len(values) == 1 else [float(v) for v in values]


class AUC(_ConfusionMetric):
    """Area under the ROC or precision-recall curve, from counts at thresholds.

    The curve is sampled at `num_thresholds` thresholds: -eps, then
    `i / (num_thresholds - 1)` for i = 1 .. num_thresholds - 2, then 1 + eps.
    With x and y the curve's coordinates at consecutive thresholds (ROC:
    x = fp / (fp + tn), y = tp / (tp + fn); PR: x = recall, y = precision):

        "interpolation": sum((x[i] - x[i+1]) * (y[i] + y[i+1]) / 2)
        "minoring":      sum((x[i] - x[i+1]) * min(y[i], y[i+1]))
        "majoring":      sum((x[i] - x[i+1]) * max(y[i], y[i+1]))

    except that PR with "interpolation" integrates precision exactly along a
    straight line between consecutive (tp, fp) points (Davis & Goadrich, 2006),
    as Keras does. The result approaches the exact area as thresholds get finer.

    Args:
        num_thresholds: int > 1, the number of thresholds.
        curve: `"ROC"` or `"PR"`.
        summation_method: `"interpolation"`, `"minoring"` or `"majoring"`.
        name: the metric's name.
        dtype: as in `Metric`.
        thresholds: optional list of thresholds in [0, 1] to use instead of
            the even ones (-eps and 1 + eps are added).
        multi_label: False only (Keras's default: one curve over every label's
            scores); True raises.
        num_labels: accepted, as in Keras (it only matters with `multi_label`).
        label_weights: None only; anything else raises.
        from_logits: whether `y_pred` holds logits (a sigmoid is applied).

    Raises:
        ValueError: for an unknown curve or summation method, fewer than two
            thresholds, or a threshold outside [0, 1].
        NotImplementedError: for `multi_label=True` or `label_weights`.

    Example:
        >>> mk.metrics.AUC()([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8])
        0.75
    """

    def __init__(
        self,
        num_thresholds=200,
        curve="ROC",
        summation_method="interpolation",
        name=None,
        dtype=None,
        thresholds=None,
        multi_label=False,
        num_labels=None,
        label_weights=None,
        from_logits=False,
    ):
        if multi_label or label_weights is not None:
            raise NotImplementedError(
                "AUC: multi_label=True and label_weights (one curve per label, averaged) are "
                "not supported yet; the AUC of all labels' scores together is multi_label=False"
            )
        super().__init__(dtype=dtype, name=name or "auc")
        self.multi_label, self.num_labels, self.label_weights = False, num_labels, None
        self.curve = str(curve).upper()
        if self.curve not in ("ROC", "PR"):
            raise ValueError(f"AUC: curve must be 'ROC' or 'PR', got {curve!r}")
        self.summation_method = str(summation_method).lower()
        if self.summation_method not in ("interpolation", "minoring", "majoring"):
            raise ValueError(
                "AUC: summation_method must be 'interpolation', 'minoring' or 'majoring', "
                f"got {summation_method!r}"
            )
        self.init_thresholds = thresholds
        if thresholds is not None:
            inner = np.sort(_parse_thresholds("AUC", thresholds, None))
        else:
            if int(num_thresholds) != num_thresholds or num_thresholds <= 1:
                raise ValueError(f"AUC: num_thresholds must be an int > 1, got {num_thresholds!r}")
            inner = np.arange(1, num_thresholds - 1) / (num_thresholds - 1)
        epsilon = config.epsilon()
        self._thresholds = np.concatenate([[-epsilon], inner, [1.0 + epsilon]])
        self.num_thresholds = len(self._thresholds)
        self.thresholds = self._thresholds.tolist()
        self.from_logits = bool(from_logits)
        self.reset_state()

    def _scores(self, y_pred):
        if not self.from_logits:
            return y_pred
        logits = np.asarray(y_pred, dtype=np.float64)
        return 0.5 * (np.tanh(0.5 * logits) + 1.0)  # a sigmoid that cannot overflow

    def result(self):
        """Returns the area under the curve so far (0.0 before any data).

        Returns:
            A Python float.

        Example:
            >>> mk.metrics.AUC(curve="PR")([0, 1], [0.2, 0.9])
            1.0
        """
        tp, fp = self.true_positives, self.false_positives
        tn, fn = self.true_negatives, self.false_negatives
        if self.curve == "PR" and self.summation_method == "interpolation":
            return self._interpolated_pr_auc()
        recall = _divide_no_nan(tp, tp + fn)
        if self.curve == "ROC":
            x, y = _divide_no_nan(fp, fp + tn), recall
        else:
            x, y = recall, _divide_no_nan(tp, tp + fp)
        if self.summation_method == "interpolation":
            heights = (y[:-1] + y[1:]) / 2.0
        elif self.summation_method == "minoring":
            heights = np.minimum(y[:-1], y[1:])
        else:
            heights = np.maximum(y[:-1], y[1:])
        return float(np.sum((x[:-1] - x[1:]) * heights))

    def _interpolated_pr_auc(self):
        # Between consecutive thresholds tp grows linearly with p = tp + fp,
        # tp = slope * p + intercept, and precision tp / p integrates in closed form.
        tp, fp, fn = self.true_positives, self.false_positives, self.false_negatives
        d_tp = tp[:-1] - tp[1:]
        p = tp + fp
        d_p = p[:-1] - p[1:]
        slope = _divide_no_nan(d_tp, np.maximum(d_p, 0))
        intercept = tp[1:] - slope * p[1:]
        both_positive = (p[:-1] > 0) & (p[1:] > 0)
        p_ratio = np.ones_like(p[1:])
        p_ratio[both_positive] = p[:-1][both_positive] / p[1:][both_positive]
        increments = _divide_no_nan(
            slope * (d_tp + intercept * np.log(p_ratio)), np.maximum(tp[1:] + fn[1:], 0)
        )
        return float(np.sum(increments))

    def get_config(self):
        """Returns the constructor arguments.

        Returns:
            A dict.

        Example:
            >>> mk.metrics.AUC(num_thresholds=50).get_config()["num_thresholds"]
            50
        """
        return {
            **super().get_config(),
            "num_thresholds": self.num_thresholds,
            "curve": self.curve,
            "summation_method": self.summation_method,
            "thresholds": self.init_thresholds,
            "multi_label": self.multi_label,
            "num_labels": self.num_labels,
            "label_weights": self.label_weights,
            "from_logits": self.from_logits,
        }
