"""`TruePositives`, `FalsePositives`, `TrueNegatives`, `FalseNegatives`: weighted counts.

Each keeps one of the four confusion counts of `confusion_counts` at its
thresholds and reports it as is, as Keras's `_ConfusionMatrixConditionCount`
does.
"""

from minikeras.metrics.confusion_counts import (
    _ConfusionMetric,
    _evenly_spaced,
    _parse_thresholds,
)
from minikeras.utils.naming import to_snake_case as _snake_case

__all__ = ["FalseNegatives", "FalsePositives", "TrueNegatives", "TruePositives"]


class _ConditionCount(_ConfusionMetric):
    """The weighted count of one confusion condition at `thresholds` (default 0.5)."""

    _count = None  # the `_ConfusionMetric` attribute the subclass reports
    _direction = None  # a count is neither better high nor low (Keras gives none)

    def __init__(self, thresholds=None, name=None, dtype=None):
        super().__init__(dtype=dtype, name=name or _snake_case(type(self).__name__))
        self.init_thresholds = thresholds
        self._thresholds = _parse_thresholds(type(self).__name__, thresholds, 0.5)
        self.thresholds = self._thresholds.tolist()
        self._clips_scores = _evenly_spaced(self._thresholds)  # as Keras: [0, 0.5, 1], ...
        self.reset_state()

    def result(self):
        """Returns the weighted count so far.

        Returns:
            A Python float, or a list of them (one per threshold) when several
            thresholds were given.

        Example:
            >>> mk.metrics.TruePositives(thresholds=[0.2, 0.7])([1, 1, 0], [0.9, 0.5, 0.8])
            [2.0, 1.0]
        """
        return self._single_or_list(getattr(self, self._count))

    def get_config(self):
        """Returns the constructor arguments.

        Returns:
            A dict.

        Example:
            >>> mk.metrics.FalsePositives(thresholds=[0.3, 0.6]).get_config()["thresholds"]
            [0.3, 0.6]
        """
        return {**super().get_config(), "thresholds": self.init_thresholds}


class TruePositives(_ConditionCount):
    """Weighted number of positives predicted positive (`y_true` 1, `y_pred > threshold`).

    With `sample_weight`, each sample counts its weight (0 leaves it out).
    With evenly spaced thresholds from 0 to 1 (such as `[0, 0.5, 1]`), scores
    are clipped to [0, 1] first, as Keras does there.

    Args:
        thresholds: None (0.5), a float in [0, 1], or a list of them; for
            logits (a loss with `from_logits=True`) use 0.
        name: the metric's name.
        dtype: as in `Metric`.

    Raises:
        ValueError: if a threshold lies outside [0, 1].

    Example:
        >>> mk.metrics.TruePositives()([0, 1, 1, 1], [1, 0, 1, 1])
        2.0
        >>> mk.metrics.TruePositives()([0, 1, 1, 1], [1, 0, 1, 1], sample_weight=[0, 0, 1, 0])
        1.0
    """

    _count = "true_positives"


class FalsePositives(_ConditionCount):
    """Weighted number of negatives predicted positive (`y_true` 0, `y_pred > threshold`).

    With `sample_weight`, each sample counts its weight (0 leaves it out).
    With evenly spaced thresholds from 0 to 1 (such as `[0, 0.5, 1]`), scores
    are clipped to [0, 1] first, as Keras does there.

    Args:
        thresholds: None (0.5), a float in [0, 1], or a list of them; for
            logits (a loss with `from_logits=True`) use 0.
        name: the metric's name.
        dtype: as in `Metric`.

    Raises:
        ValueError: if a threshold lies outside [0, 1].

    Example:
        >>> mk.metrics.FalsePositives()([0, 1, 0, 0], [0, 0, 1, 1])
        2.0
    """

    _count = "false_positives"


class TrueNegatives(_ConditionCount):
    """Weighted number of negatives predicted negative (`y_true` 0, `y_pred <= threshold`).

    With `sample_weight`, each sample counts its weight (0 leaves it out).
    With evenly spaced thresholds from 0 to 1 (such as `[0, 0.5, 1]`), scores
    are clipped to [0, 1] first, as Keras does there.

    Args:
        thresholds: None (0.5), a float in [0, 1], or a list of them; for
            logits (a loss with `from_logits=True`) use 0.
        name: the metric's name.
        dtype: as in `Metric`.

    Raises:
        ValueError: if a threshold lies outside [0, 1].

    Example:
        >>> mk.metrics.TrueNegatives()([0, 1, 0, 0], [1, 1, 0, 0])
        2.0
    """

    _count = "true_negatives"


class FalseNegatives(_ConditionCount):
    """Weighted number of positives predicted negative (`y_true` 1, `y_pred <= threshold`).

    With `sample_weight`, each sample counts its weight (0 leaves it out).
    With evenly spaced thresholds from 0 to 1 (such as `[0, 0.5, 1]`), scores
    are clipped to [0, 1] first, as Keras does there.

    Args:
        thresholds: None (0.5), a float in [0, 1], or a list of them; for
            logits (a loss with `from_logits=True`) use 0.
        name: the metric's name.
        dtype: as in `Metric`.

    Raises:
        ValueError: if a threshold lies outside [0, 1].

    Example:
        >>> mk.metrics.FalseNegatives()([0, 1, 1, 1], [0, 1, 0, 0])
        2.0
    """

    _count = "false_negatives"
