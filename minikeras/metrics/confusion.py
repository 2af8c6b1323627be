"""Area under a curve of confusion counts: `AUC`.

It counts weighted true/false positives/negatives at thresholds (see
`minikeras.metrics.confusion_counts`) instead of averaging per-sample values.
"""

import numpy as np

from minikeras import config
from minikeras.metrics.confusion_counts import (
    _confusion_counts,
    _ConfusionMetric,
    _divide_no_nan,
    _evenly_spaced,
    _parse_thresholds,
)

__all__ = ["AUC"]


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
    With evenly spaced thresholds (the default ones, or `thresholds` that
    are), scores are clipped to [0, 1] first, as Keras does there.

    With `multi_label=True`, each label (column of `y_pred`, of shape
    `(batch, labels)`) has its own counts and curve, and the result is the
    mean of the labels' areas, weighted by `label_weights` if given. With
    `multi_label=False`, every score is a point of one curve and
    `label_weights` weigh the points by their label (last axis).

    Args:
        num_thresholds: int > 1, the number of thresholds.
        curve: `"ROC"` or `"PR"`.
        summation_method: `"interpolation"`, `"minoring"` or `"majoring"`.
        name: the metric's name.
        dtype: as in `Metric`.
        thresholds: optional list of thresholds in [0, 1] to use instead of
            the even ones (-eps and 1 + eps are added).
        multi_label: whether to compute one AUC per label and average them
            (True), or one AUC of all the scores together (False, the default).
        num_labels: None, or with `multi_label=True` the number of labels
            (otherwise it is taken from the first batch).
        label_weights: None, or one non-negative weight per label.
        from_logits: whether `y_pred` holds logits (a sigmoid is applied).

    Raises:
        ValueError: for an unknown curve or summation method, fewer than two
            thresholds, a threshold outside [0, 1], `num_labels` without
            `multi_label`, or `label_weights` that are not one non-negative
            number per label.

    Example:
        >>> mk.metrics.AUC()([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8])
        0.75
        >>> m = mk.metrics.AUC(multi_label=True)  # label 0: 1.0, label 1: 0.5
        >>> m([[0, 1], [1, 0], [1, 1]], [[0.2, 0.6], [0.7, 0.6], [0.9, 0.6]])
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
        super().__init__(dtype=dtype, name=name or "auc")
        self.curve = str(curve).upper()
        if self.curve not in ("ROC", "PR"):
            raise ValueError(f"AUC: curve must be 'ROC' or 'PR', got {curve!r}")
        self.summation_method = str(summation_method).lower()
        if self.summation_method not in ("interpolation", "minoring", "majoring"):
            raise ValueError(
                "AUC: summation_method must be 'interpolation', 'minoring' or 'majoring', "
                f"got {summation_method!r}"
            )
        self.multi_label = bool(multi_label)
        if num_labels is not None and not self.multi_label:
            raise ValueError(
                "AUC: num_labels is needed only with multi_label=True, got "
                f"num_labels={num_labels!r}"
            )
        if num_labels is not None and (
            isinstance(num_labels, bool) or int(num_labels) != num_labels or num_labels < 1
        ):
            raise ValueError(f"AUC: num_labels must be None or an int >= 1, got {num_labels!r}")
        self.num_labels = None if num_labels is None else int(num_labels)
        self.label_weights = None
        if label_weights is not None:
            weights = np.asarray(label_weights, dtype=np.float64)
            if weights.ndim != 1 or np.any(~(weights >= 0)):
                raise ValueError(
                    f"AUC: label_weights must be a list of non-negative numbers, one per label; "
                    f"got {label_weights!r}"
                )
            if self.num_labels is not None and len(weights) != self.num_labels:
                raise ValueError(
                    f"AUC: label_weights has {len(weights)} entries but num_labels is "
                    f"{self.num_labels}"
                )
            self.label_weights = weights.tolist()
        self.init_thresholds = thresholds
        if thresholds is not None:
            inner = np.sort(_parse_thresholds("AUC", thresholds, None))
        else:
            if int(num_thresholds) != num_thresholds or num_thresholds <= 1:
                raise ValueError(f"AUC: num_thresholds must be an int > 1, got {num_thresholds!r}")
            inner = np.arange(1, num_thresholds - 1) / (num_thresholds - 1)
        # Keras clips the scores to [0, 1] where the thresholds are even.
        self._clips_scores = thresholds is None or _evenly_spaced([0.0, *inner, 1.0])
        epsilon = config.epsilon()
        self._thresholds = np.concatenate([[-epsilon], inner, [1.0 + epsilon]])
        self.num_thresholds = len(self._thresholds)
        self.thresholds = self._thresholds.tolist()
        self.from_logits = bool(from_logits)
        self._labels = self.num_labels  # with multi_label, set by the first batch if None
        self.reset_state()

    def reset_state(self):
        """Sets every count to zero (with `multi_label`, one column per label).

        Example:
            >>> m = mk.metrics.AUC(multi_label=True, num_labels=3, num_thresholds=5)
            >>> m.reset_state(); m.true_positives.shape
            (5, 3)
        """
        if not self.multi_label:
            return super().reset_state()
        shape = None if self._labels is None else (self.num_thresholds, self._labels)
        self.true_positives = self.false_positives = None
        self.true_negatives = self.false_negatives = None
        if shape is not None:
            self.true_positives, self.false_positives = np.zeros(shape), np.zeros(shape)
            self.true_negatives, self.false_negatives = np.zeros(shape), np.zeros(shape)

    def update_state(self, y_true, y_pred, sample_weight=None):
        """Adds a batch's confusion counts at every threshold (per label with `multi_label`).

        Args:
            y_true: 0/1 targets (cast to bool); with `multi_label`, of shape (batch, labels).
            y_pred: scores (or logits with `from_logits`) of `y_true`'s shape.
            sample_weight: None, or weights of shape (batch,) or broadcastable.

        Raises:
            ValueError: if the shapes do not fit, `y_pred` is not (batch, labels) with
                `multi_label`, or its labels do not match `num_labels` / `label_weights`.

        Example:
            >>> m = mk.metrics.AUC(num_thresholds=3)
            >>> m.update_state([0, 1], [0.2, 0.9]); m.true_positives.tolist()
            [1.0, 1.0, 0.0]
        """
        if self.from_logits:
            logits = np.asarray(y_pred, dtype=np.float64)
            y_pred = 0.5 * (np.tanh(0.5 * logits) + 1.0)  # a sigmoid that cannot overflow
        y_pred = self._clipped(y_pred)
        labels = np.shape(y_pred)[-1] if np.ndim(y_pred) else None
        if self.multi_label and self._labels is not None and labels != self._labels:
            raise ValueError(
                f"Metric {self.name!r}: expected y_pred of shape (batch, {self._labels}) "
                f"(one column per label), got shape {np.shape(y_pred)}"
            )
        weights = None if self.label_weights is None else np.asarray(self.label_weights)
        tp, fp, tn, fn = _confusion_counts(
            self.name,
            y_true,
            y_pred,
            self._thresholds,
            sample_weight,
            self.dtype,
            label_weights=None if self.multi_label else weights,
            multi_label=self.multi_label,
        )
        if self.multi_label:
            if weights is not None and len(weights) != tp.shape[1]:
                raise ValueError(
                    f"Metric {self.name!r}: label_weights has {len(weights)} entries but "
                    f"y_pred of shape {np.shape(y_pred)} has {tp.shape[1]} labels"
                )
            if self._labels is None:
                self._labels = tp.shape[1]
                self.reset_state()
        self._add_counts(tp, fp, tn, fn)

    def result(self):
        """Returns the area under the curve so far (0.0 before any data).

        Returns:
            A Python float.

        Example:
            >>> mk.metrics.AUC(curve="PR")([0, 1], [0.2, 0.9])
            1.0
        """
        if self.true_positives is None:  # multi_label, before the first batch
            return 0.0
        tp, fp = self.true_positives, self.false_positives
        tn, fn = self.true_negatives, self.false_negatives
        if self.curve == "PR" and self.summation_method == "interpolation":
            return self._over_labels(self._interpolated_pr_auc())
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
        return self._over_labels((x[:-1] - x[1:]) * heights)

    def _over_labels(self, areas):
        """The sum of the per-interval `areas`; with `multi_label`, the labels' weighted mean."""
        if not self.multi_label:
            return float(np.sum(areas))
        by_label = np.sum(areas, axis=0)
        if self.label_weights is None:
            return float(np.mean(by_label))
        weights = np.asarray(self.label_weights)
        total = np.sum(weights)
        return float(np.sum(by_label * weights) / total) if total else 0.0

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
        return _divide_no_nan(
            slope * (d_tp + intercept * np.log(p_ratio)), np.maximum(tp[1:] + fn[1:], 0)
        )

    def get_config(self):
        """Returns the constructor arguments.

        As in Keras, `thresholds` is written only when the metric was made
        from thresholds, sorted and without the -eps and 1 + eps ends; made
        from `num_thresholds`, the count alone rebuilds them.

        Returns:
            A dict.

        Example:
            >>> mk.metrics.AUC(num_thresholds=50).get_config()["num_thresholds"]
            50
            >>> mk.metrics.AUC(thresholds=[0.7, 0.2]).get_config()["thresholds"]
            [0.2, 0.7]
        """
        config = {
            **super().get_config(),
            "num_thresholds": self.num_thresholds,
            "curve": self.curve,
            "summation_method": self.summation_method,
            "multi_label": self.multi_label,
            "num_labels": self.num_labels,
            "label_weights": self.label_weights,
            "from_logits": self.from_logits,
        }
        if self.init_thresholds is not None:
            config["thresholds"] = self.thresholds[1:-1]
        return config
