"""Regression metrics: mean squared, absolute, percentage, logarithmic errors and their kin.

The metric versions of the regression losses compute the loss function in
float64 on numpy arrays, then average it as `Mean` does. `R2Score` lives in
`r2_score.py`.
"""

import numpy as np

from minikeras import losses
from minikeras.metrics.base import _aligned
from minikeras.metrics.mean import Mean, MeanMetricWrapper

__all__ = [
    "CosineSimilarity",
    "LogCoshError",
    "MeanAbsoluteError",
    "MeanAbsolutePercentageError",
    "MeanSquaredError",
    "MeanSquaredLogarithmicError",
    "Poisson",
    "RootMeanSquaredError",
]


def _squared_error(y_true, y_pred):
    y_true, y_pred = _aligned("mean_squared_error", y_true, y_pred)
    return np.square(y_true.astype(np.float64) - y_pred.astype(np.float64))


def _absolute_error(y_true, y_pred):
    y_true, y_pred = _aligned("mean_absolute_error", y_true, y_pred)
    return np.abs(y_true.astype(np.float64) - y_pred.astype(np.float64))


class MeanSquaredError(MeanMetricWrapper):
    """Mean of squared errors over all samples seen: `mean((y_true - y_pred) ** 2)`.

    Args:
        name: the metric's name.
        dtype: as in `Metric`.

    Example:
        >>> mk.metrics.MeanSquaredError()([[0, 1], [0, 0]], [[1, 1], [0, 0]])
        0.25
    """

    _direction = "down"  # lower is better (for callbacks' mode="auto")

    def __init__(self, name="mean_squared_error", dtype=None):
        super().__init__(_squared_error, name=name, dtype=dtype)


class MeanAbsoluteError(MeanMetricWrapper):
    """Mean of absolute errors over all samples seen: `mean(abs(y_true - y_pred))`.

    Args:
        name: the metric's name.
        dtype: as in `Metric`.

    Example:
        >>> mk.metrics.MeanAbsoluteError()([[0, 1], [0, 0]], [[1, 1], [0, 0]])
        0.25
    """

    _direction = "down"  # lower is better (for callbacks' mode="auto")

    def __init__(self, name="mean_absolute_error", dtype=None):
        super().__init__(_absolute_error, name=name, dtype=dtype)


def _float64_values(fn, sign=1.0):
    """`fn`, a loss function, computed in float64 on numpy arrays (`sign` flips it)."""

    def values(y_true, y_pred, **kwargs):
        y_true = np.asarray(y_true, dtype=np.float64)
        y_pred = np.asarray(y_pred, dtype=np.float64)
        return sign * np.asarray(fn(y_true, y_pred, **kwargs))

    values.__name__ = fn.__name__
    return values


class RootMeanSquaredError(Mean):
    """Square root of the mean squared error over all samples seen.

        per_sample = mean((y_true - y_pred) ** 2, axis=-1)
        result = sqrt(sum(sample_weight * per_sample) / sum(sample_weight))

    Args:
        name: the metric's name.
        dtype: as in `Metric`.

    Example:
        >>> m = mk.metrics.RootMeanSquaredError()
        >>> m([[0, 1], [0, 0]], [[1, 1], [0, 0]])
        0.5
        >>> m.reset_state(); round(m([[0, 1], [0, 0]], [[1, 1], [0, 0]], [1, 0]), 6)
        0.707107
    """

    _direction = "down"  # lower is better (for callbacks' mode="auto")

    def __init__(self, name="root_mean_squared_error", dtype=None):
        super().__init__(name=name, dtype=dtype)

    def update_state(self, y_true, y_pred, sample_weight=None):
        """Adds a batch's squared errors to the mean.

        Args:
            y_true: targets.
            y_pred: predictions.
            sample_weight: None, or weights of shape (batch,) or broadcastable.

        Raises:
            ValueError: if the shapes do not fit, naming the metric and the shapes.

        Example:
            >>> m = mk.metrics.RootMeanSquaredError(); m.update_state([3.0], [0.0]); m.result()
            3.0
        """
        try:
            y_true, y_pred = _aligned(self.name, y_true, y_pred)
        except ValueError as error:
            raise ValueError(f"Metric {self.name!r}: {error}") from None
        error = y_true.astype(np.float64) - y_pred.astype(np.float64)
        super().update_state(np.square(error), sample_weight=sample_weight)

    def result(self):
        """Returns the root of the weighted mean squared error so far.

        Returns:
            A Python float.

        Example:
            >>> mk.metrics.RootMeanSquaredError()([[0.0], [0.0]], [[3.0], [4.0]]) ** 2
            12.5
        """
        return float(np.sqrt(super().result()))


class MeanAbsolutePercentageError(MeanMetricWrapper):
    """Mean absolute percentage error over all samples seen (see `losses.mape`).

    Args:
        name: the metric's name.
        dtype: as in `Metric`.

    Example:
        >>> mk.metrics.MeanAbsolutePercentageError()([[2.0, 4.0]], [[1.0, 5.0]])
        37.5
    """

    _direction = "down"  # lower is better (for callbacks' mode="auto")

    def __init__(self, name="mean_absolute_percentage_error", dtype=None):
        fn = _float64_values(losses.mean_absolute_percentage_error)
        super().__init__(fn, name=name, dtype=dtype)


class MeanSquaredLogarithmicError(MeanMetricWrapper):
    """Mean squared logarithmic error over all samples seen (see `losses.msle`).

    Args:
        name: the metric's name.
        dtype: as in `Metric`.

    Example:
        >>> round(mk.metrics.MeanSquaredLogarithmicError()([[np.e - 1.0, 0.0]], [[0.0, 0.0]]), 6)
        0.5
    """

    _direction = "down"  # lower is better (for callbacks' mode="auto")

    def __init__(self, name="mean_squared_logarithmic_error", dtype=None):
        fn = _float64_values(losses.mean_squared_logarithmic_error)
        super().__init__(fn, name=name, dtype=dtype)


class CosineSimilarity(MeanMetricWrapper):
    """Mean cosine similarity between targets and predictions along `axis`.

    Unlike the loss `losses.cosine_similarity`, this is not negated: 1 for the
    same direction, -1 for opposite ones, 0 when either vector is zero.

    Args:
        name: the metric's name.
        dtype: as in `Metric`.
        axis: the feature axis.

    Example:
        >>> mk.metrics.CosineSimilarity()([[0.0, 1.0], [1.0, 1.0]], [[1.0, 0.0], [2.0, 2.0]])
        0.5
    """

    _direction = "up"  # higher is better (for callbacks' mode="auto")

    def __init__(self, name="cosine_similarity", dtype=None, axis=-1):
        fn = _float64_values(losses.cosine_similarity, sign=-1.0)
        super().__init__(fn, name=name, dtype=dtype, axis=int(axis))


class LogCoshError(MeanMetricWrapper):
    """Mean of `log(cosh(y_pred - y_true))` over all samples seen (see `losses.log_cosh`).

    Args:
        name: the metric's name (Keras calls it `"logcosh"`).
        dtype: as in `Metric`.

    Example:
        >>> round(mk.metrics.LogCoshError()([[0.0, 1.0], [0.0, 0.0]], [[1.0, 1.0], [0.0, 0.0]]), 4)
        0.1084
    """

    _direction = "down"  # lower is better (for callbacks' mode="auto")

    def __init__(self, name="logcosh", dtype=None):
        super().__init__(_float64_values(losses.log_cosh), name=name, dtype=dtype)


class Poisson(MeanMetricWrapper):
    """Mean Poisson loss `y_pred - y_true * log(y_pred + eps)` over all samples seen.

    Args:
        name: the metric's name.
        dtype: as in `Metric`.

    Example:
        >>> round(mk.metrics.Poisson()([[0.0, 1.0]], [[1.0, 1.0]]), 6)
        1.0
    """

    _direction = "down"  # lower is better (for callbacks' mode="auto")

    def __init__(self, name="poisson", dtype=None):
        super().__init__(_float64_values(losses.poisson), name=name, dtype=dtype)
