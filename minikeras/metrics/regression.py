"""Regression metrics: mean squared and mean absolute error."""

import numpy as np

from minikeras.metrics.base import MeanMetricWrapper, _aligned

__all__ = ["MeanAbsoluteError", "MeanSquaredError"]


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
        >>> MeanSquaredError()([[0, 1], [0, 0]], [[1, 1], [0, 0]])
        0.25
    """

    def __init__(self, name="mean_squared_error", dtype=None):
        super().__init__(_squared_error, name=name, dtype=dtype)


class MeanAbsoluteError(MeanMetricWrapper):
    """Mean of absolute errors over all samples seen: `mean(abs(y_true - y_pred))`.

    Args:
        name: the metric's name.
        dtype: as in `Metric`.

    Example:
        >>> MeanAbsoluteError()([[0, 1], [0, 0]], [[1, 1], [0, 0]])
        0.25
    """

    def __init__(self, name="mean_absolute_error", dtype=None):
        super().__init__(_absolute_error, name=name, dtype=dtype)
