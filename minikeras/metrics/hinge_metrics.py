"""Hinge metrics: the mean hinge, squared hinge and categorical hinge losses over all samples."""

from minikeras import losses
from minikeras.metrics.mean import MeanMetricWrapper
from minikeras.metrics.regression import _float64_values

__all__ = ["CategoricalHinge", "Hinge", "SquaredHinge"]


class Hinge(MeanMetricWrapper):
    """Mean hinge loss over all samples seen (see `losses.hinge`; 0/1 labels become -1/1).

    Args:
        name: the metric's name.
        dtype: as in `Metric`.

    Example:
        >>> mk.metrics.Hinge()([[0.0, 1.0]], [[0.5, 0.5]])
        1.0
    """

    _direction = "down"  # lower is better (for callbacks' mode="auto")

    def __init__(self, name="hinge", dtype=None):
        super().__init__(_float64_values(losses.hinge), name=name, dtype=dtype)


class SquaredHinge(MeanMetricWrapper):
    """Mean squared hinge loss over all samples seen (see `losses.squared_hinge`).

    Args:
        name: the metric's name.
        dtype: as in `Metric`.

    Example:
        >>> mk.metrics.SquaredHinge()([[0.0, 1.0]], [[0.5, 0.5]])
        1.25
    """

    _direction = "down"  # lower is better (for callbacks' mode="auto")

    def __init__(self, name="squared_hinge", dtype=None):
        super().__init__(_float64_values(losses.squared_hinge), name=name, dtype=dtype)


class CategoricalHinge(MeanMetricWrapper):
    """Mean categorical hinge loss over all samples seen (see `losses.categorical_hinge`).

    Args:
        name: the metric's name.
        dtype: as in `Metric`.

    Example:
        >>> round(mk.metrics.CategoricalHinge()([[0.0, 1.0, 0.0]], [[0.3, 0.5, 0.2]]), 6)
        0.8
    """

    _direction = "down"  # lower is better (for callbacks' mode="auto")

    def __init__(self, name="categorical_hinge", dtype=None):
        super().__init__(_float64_values(losses.categorical_hinge), name=name, dtype=dtype)
