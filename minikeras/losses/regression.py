"""More regression losses, as Keras 3 has them: MAPE, MSLE, cosine similarity, log-cosh, Poisson.

Each is a per-sample function (the mean over the last axis, or a sum over the
feature axis for cosine similarity) and a `Loss` class wrapping it.
"""

import math

from minikeras import config, ops
from minikeras.losses.base import LossFunctionWrapper
from minikeras.losses.pairs import matched_pair

__all__ = [
    "MAPE",
    "MSLE",
    "CosineSimilarity",
    "LogCosh",
    "MeanAbsolutePercentageError",
    "MeanSquaredLogarithmicError",
    "Poisson",
    "cosine_similarity",
    "log_cosh",
    "mape",
    "mean_absolute_percentage_error",
    "mean_squared_logarithmic_error",
    "msle",
    "poisson",
]


def mean_absolute_percentage_error(y_true, y_pred):
    """Mean absolute percentage error over the last axis.

        result = 100 * mean(abs((y_true - y_pred) / maximum(abs(y_true), eps)), axis=-1)

    Args:
        y_true: targets, of `y_pred`'s shape (a trailing axis of size 1 may differ).
        y_pred: predictions.

    Returns:
        A Tensor of per-sample losses, of shape `y_pred.shape[:-1]`.

    Raises:
        ValueError: if the shapes differ, naming both.

    Example:
        >>> mk.losses.mape([[2.0, 4.0]], [[1.0, 5.0]]).numpy()
        array([37.5], dtype=float32)
    """
    y_true, y_pred = matched_pair("mean_absolute_percentage_error", y_true, y_pred)
    scale = ops.maximum(ops.abs(y_true), config.epsilon())
    return 100.0 * ops.mean(ops.abs((y_true - y_pred) / scale), axis=-1)


def mean_squared_logarithmic_error(y_true, y_pred):
    """Mean squared logarithmic error over the last axis.

        result = mean((log(maximum(y_pred, eps) + 1) - log(maximum(y_true, eps) + 1)) ** 2, axis=-1)

    Values below `eps` (negatives, zeros) count as `eps`, as in Keras.

    Args:
        y_true: targets, of `y_pred`'s shape (a trailing axis of size 1 may differ).
        y_pred: predictions.

    Returns:
        A Tensor of per-sample losses, of shape `y_pred.shape[:-1]`.

    Raises:
        ValueError: if the shapes differ, naming both.

    Example:
        >>> round(float(mk.losses.msle([[np.e - 1.0]], [[0.0]])[0]), 5)
        1.0
    """
    y_true, y_pred = matched_pair("mean_squared_logarithmic_error", y_true, y_pred)
    first = ops.log1p(ops.maximum(y_pred, config.epsilon()))
    second = ops.log1p(ops.maximum(y_true, config.epsilon()))
    return ops.mean(ops.square(first - second), axis=-1)


def _l2_normalized(x, axis):
    """`x / norm(x)` along `axis`, the squared norm floored at eps ** 2 (zero stays zero)."""
    square_sum = ops.sum(ops.square(x), axis=axis, keepdims=True)
    return x / ops.sqrt(ops.maximum(square_sum, config.epsilon() ** 2))


def cosine_similarity(y_true, y_pred, axis=-1):
    """Negative cosine similarity along `axis`: -1 for the same direction, 0 for orthogonal.

        result = -sum(l2_normalize(y_true, axis) * l2_normalize(y_pred, axis), axis)

    A zero vector on either side gives 0. Being negated, it works as a loss
    that pulls predictions towards the targets' direction.

    Args:
        y_true: targets, of `y_pred`'s shape (a trailing axis of size 1 may differ).
        y_pred: predictions.
        axis: the feature axis.

    Returns:
        A Tensor of per-sample losses, of `y_pred`'s shape without `axis`.

    Raises:
        ValueError: if the shapes differ, naming both.

    Example:
        >>> loss = mk.losses.cosine_similarity([[0.0, 1.0], [1.0, 1.0]], [[1.0, 0.0], [2.0, 2.0]])
        >>> np.round(loss.numpy(), 5)
        array([-0., -1.], dtype=float32)
    """
    y_true, y_pred = matched_pair("cosine_similarity", y_true, y_pred)
    return -ops.sum(_l2_normalized(y_true, axis) * _l2_normalized(y_pred, axis), axis=axis)


def log_cosh(y_true, y_pred):
    """Mean of `log(cosh(y_pred - y_true))` over the last axis.

        error = y_pred - y_true
        result = mean(error + softplus(-2 * error) - log(2), axis=-1)

    That is `log(cosh(error))` written so that large errors do not overflow:
    about `error ** 2 / 2` for small errors and `abs(error) - log(2)` for large.

    Args:
        y_true: targets, of `y_pred`'s shape (a trailing axis of size 1 may differ).
        y_pred: predictions.

    Returns:
        A Tensor of per-sample losses, of shape `y_pred.shape[:-1]`.

    Raises:
        ValueError: if the shapes differ, naming both.

    Example:
        >>> mk.losses.log_cosh([[0.0, 1.0], [0.0, 0.0]], [[1.0, 1.0], [0.0, 0.0]]).numpy()
        array([0.2168904, 0.       ], dtype=float32)
    """
    y_true, y_pred = matched_pair("log_cosh", y_true, y_pred)
    error = y_pred - y_true
    return ops.mean(error + ops.softplus(-2.0 * error) - math.log(2.0), axis=-1)


def poisson(y_true, y_pred):
    """Poisson loss over the last axis: `mean(y_pred - y_true * log(y_pred + eps), axis=-1)`.

    Args:
        y_true: observed counts, of `y_pred`'s shape (a trailing axis of size 1 may differ).
        y_pred: predicted rates (positive).

    Returns:
        A Tensor of per-sample losses, of shape `y_pred.shape[:-1]`.

    Raises:
        ValueError: if the shapes differ, naming both.

    Example:
        >>> mk.losses.poisson([[0.0, 1.0]], [[1.0, 1.0]]).numpy()
        array([1.], dtype=float32)
    """
    y_true, y_pred = matched_pair("poisson", y_true, y_pred)
    return ops.mean(y_pred - y_true * ops.log(y_pred + config.epsilon()), axis=-1)


mape = MAPE = mean_absolute_percentage_error
msle = MSLE = mean_squared_logarithmic_error


class MeanAbsolutePercentageError(LossFunctionWrapper):
    """Mean absolute percentage error (see `mean_absolute_percentage_error`).

    Args:
        reduction: as in `Loss`.
        name: the loss's name.
        dtype: as in `Loss`.

    Example:
        >>> float(mk.losses.MeanAbsolutePercentageError()([[2.0, 4.0]], [[1.0, 5.0]]))
        37.5
    """

    _per_element = True

    def __init__(
        self, reduction="sum_over_batch_size", name="mean_absolute_percentage_error", dtype=None
    ):
        super().__init__(
            mean_absolute_percentage_error, reduction=reduction, name=name, dtype=dtype
        )


class MeanSquaredLogarithmicError(LossFunctionWrapper):
    """Mean squared logarithmic error (see `mean_squared_logarithmic_error`).

    Args:
        reduction: as in `Loss`.
        name: the loss's name.
        dtype: as in `Loss`.

    Example:
        >>> round(
        ...     float(mk.losses.MeanSquaredLogarithmicError()([[np.e - 1.0, 0.0]], [[0.0, 0.0]])), 5
        ... )
        0.5
    """

    _per_element = True

    def __init__(
        self, reduction="sum_over_batch_size", name="mean_squared_logarithmic_error", dtype=None
    ):
        super().__init__(
            mean_squared_logarithmic_error, reduction=reduction, name=name, dtype=dtype
        )


class CosineSimilarity(LossFunctionWrapper):
    """Negative cosine similarity between targets and predictions (see `cosine_similarity`).

    Args:
        axis: the feature axis.
        reduction: as in `Loss`.
        name: the loss's name.
        dtype: as in `Loss`.

    Example:
        >>> float(mk.losses.CosineSimilarity()([[0.0, 1.0], [1.0, 1.0]], [[1.0, 0.0], [2.0, 2.0]]))
        -0.5
    """

    def __init__(
        self, axis=-1, reduction="sum_over_batch_size", name="cosine_similarity", dtype=None
    ):
        super().__init__(
            cosine_similarity, reduction=reduction, name=name, dtype=dtype, axis=int(axis)
        )


class LogCosh(LossFunctionWrapper):
    """Mean of `log(cosh(y_pred - y_true))` (see `log_cosh`).

    Args:
        reduction: as in `Loss`.
        name: the loss's name.
        dtype: as in `Loss`.

    Example:
        >>> round(float(mk.losses.LogCosh()([[0.0, 1.0], [0.0, 0.0]], [[1.0, 1.0], [0.0, 0.0]])), 4)
        0.1084
    """

    _per_element = True

    def __init__(self, reduction="sum_over_batch_size", name="log_cosh", dtype=None):
        super().__init__(log_cosh, reduction=reduction, name=name, dtype=dtype)


class Poisson(LossFunctionWrapper):
    """Poisson loss `y_pred - y_true * log(y_pred + eps)` (see `poisson`).

    Args:
        reduction: as in `Loss`.
        name: the loss's name.
        dtype: as in `Loss`.

    Example:
        >>> float(mk.losses.Poisson()([[0.0, 1.0]], [[1.0, 1.0]]))
        1.0
    """

    _per_element = True

    def __init__(self, reduction="sum_over_batch_size", name="poisson", dtype=None):
        super().__init__(poisson, reduction=reduction, name=name, dtype=dtype)
