"""Correlation between targets and predictions: Pearson's and Lin's concordance coefficient.

The functions give one coefficient per sample (along `axis`), in
`minikeras.ops`, as Keras's `keras.metrics.pearson_correlation` and
`concordance_correlation` do; the metrics average them over the samples seen.
"""

from minikeras import config, ops
from minikeras.losses.pairs import matched_pair
from minikeras.metrics.mean import MeanMetricWrapper
from minikeras.metrics.regression import _float64_values

__all__ = [
    "ConcordanceCorrelation",
    "PearsonCorrelation",
    "concordance_correlation",
    "pearson_correlation",
]


def pearson_correlation(y_true, y_pred, axis=-1):
    """Pearson's correlation coefficient of targets and predictions along `axis`.

        t = (y_true - mean(y_true)) / std(y_true)
        p = (y_pred - mean(y_pred)) / std(y_pred)
        result = mean(t * p, axis)

    The means and (population) standard deviations are along `axis`. As in
    Keras there is no epsilon: a constant `y_true` or `y_pred` gives nan.

    Args:
        y_true: targets, of `y_pred`'s shape (a trailing axis of size 1 may differ).
        y_pred: predictions.
        axis: the axis (or tuple of axes) to correlate along.

    Returns:
        A Tensor of coefficients in [-1, 1], of `y_pred`'s shape without `axis`.

    Raises:
        ValueError: if the shapes differ, naming both.

    Example:
        >>> mk.metrics.pearson_correlation([[1.0, 2.0, 3.0]], [[2.0, 4.0, 6.0]]).numpy()
        array([1.], dtype=float32)
    """
    y_true, y_pred = matched_pair("pearson_correlation", y_true, y_pred)
    y_true = y_true - ops.mean(y_true, axis=axis, keepdims=True)
    y_pred = y_pred - ops.mean(y_pred, axis=axis, keepdims=True)
    y_true = y_true / ops.std(y_true, axis=axis, keepdims=True)
    y_pred = y_pred / ops.std(y_pred, axis=axis, keepdims=True)
    return ops.mean(y_true * y_pred, axis=axis)


def concordance_correlation(y_true, y_pred, axis=-1):
    """Lin's concordance correlation coefficient of targets and predictions along `axis`.

        covariance = mean((y_true - mean(y_true)) * (y_pred - mean(y_pred)))
        result = 2 * covariance / (var(y_true) + var(y_pred)
                                   + (mean(y_true) - mean(y_pred)) ** 2 + epsilon)

    1 only when the predictions equal the targets; unlike Pearson's
    coefficient it falls when they are shifted or scaled. Keras adds
    `epsilon` to each element's term instead (the same number).

    Args:
        y_true: targets, of `y_pred`'s shape (a trailing axis of size 1 may differ).
        y_pred: predictions.
        axis: the axis (or tuple of axes) to correlate along.

    Returns:
        A Tensor of coefficients in [-1, 1], of `y_pred`'s shape without `axis`.

    Raises:
        ValueError: if the shapes differ, naming both.

    Example:
        >>> mk.metrics.concordance_correlation([[1.0, 2.0, 3.0]], [[1.0, 2.0, 3.0]]).numpy()
        array([1.], dtype=float32)
        >>> mk.metrics.concordance_correlation([[1.0, 2.0, 3.0]], [[2.0, 3.0, 4.0]]).numpy()
        array([0.5714286], dtype=float32)
    """
    y_true, y_pred = matched_pair("concordance_correlation", y_true, y_pred)
    true_mean = ops.mean(y_true, axis=axis, keepdims=True)
    pred_mean = ops.mean(y_pred, axis=axis, keepdims=True)
    covariance = ops.mean((y_true - true_mean) * (y_pred - pred_mean), axis=axis, keepdims=True)
    norm = ops.var(y_true, axis=axis, keepdims=True) + ops.var(y_pred, axis=axis, keepdims=True)
    norm = norm + ops.square(true_mean - pred_mean)
    return ops.mean(2.0 * covariance / (norm + config.epsilon()), axis=axis)


class PearsonCorrelation(MeanMetricWrapper):
    """Mean of Pearson's correlation coefficient per sample (see `pearson_correlation`).

    Computed in float64 on numpy arrays, as the other regression metrics.

    Args:
        name: the metric's name.
        dtype: as in `Metric`.
        axis: the axis (or axes) each coefficient is computed along.

    Example:
        >>> m = mk.metrics.PearsonCorrelation()
        >>> m([[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]], [[2.0, 4.0, 6.0], [3.0, 2.0, 1.0]])
        0.0
    """

    _direction = "up"  # higher is better (for callbacks' mode="auto")

    def __init__(self, name="pearson_correlation", dtype=None, axis=-1):
        super().__init__(_float64_values(pearson_correlation), name=name, dtype=dtype, axis=axis)
        self.axis = axis


class ConcordanceCorrelation(MeanMetricWrapper):
    """Mean of Lin's concordance correlation coefficient per sample (see `concordance_correlation`).

    Computed in float64 on numpy arrays, as the other regression metrics.

    Args:
        name: the metric's name.
        dtype: as in `Metric`.
        axis: the axis (or axes) each coefficient is computed along.

    Example:
        >>> m = mk.metrics.ConcordanceCorrelation()
        >>> round(m([[1.0, 2.0, 3.0]], [[2.0, 3.0, 4.0]]), 6)
        0.571429
    """

    _direction = "up"  # higher is better (for callbacks' mode="auto")

    def __init__(self, name="concordance_correlation", dtype=None, axis=-1):
        fn = _float64_values(concordance_correlation)
        super().__init__(fn, name=name, dtype=dtype, axis=axis)
        self.axis = axis
