"""Hinge losses for maximum-margin classifiers: hinge, squared hinge, categorical hinge.

`hinge` and `squared_hinge` expect labels -1 or 1; labels that are all 0 or
1 are turned into -1/1 first, as in Keras. `categorical_hinge` expects
one-hot targets.
"""

from minikeras import ops
from minikeras.losses.base import LossFunctionWrapper
from minikeras.losses.pairs import matched_pair
from minikeras.ops.hinge_labels import signed_binary_labels

__all__ = [
    "CategoricalHinge",
    "Hinge",
    "SquaredHinge",
    "categorical_hinge",
    "hinge",
    "squared_hinge",
]


def hinge(y_true, y_pred):
    """Hinge loss over the last axis: `mean(maximum(1 - y_true * y_pred, 0), axis=-1)`.

    Args:
        y_true: labels -1 or 1 (or 0/1, converted to -1/1), of `y_pred`'s
            shape (a trailing axis of size 1 may differ).
        y_pred: scores.

    Returns:
        A Tensor of per-sample losses, of shape `y_pred.shape[:-1]`.

    Raises:
        ValueError: if the shapes differ, naming both.

    Example:
        >>> mk.losses.hinge([[0.0, 1.0]], [[0.5, 0.5]]).numpy()  # labels -1, 1: (1.5 + 0.5) / 2
        array([1.], dtype=float32)
    """
    y_true, y_pred = matched_pair("hinge", y_true, y_pred)
    return ops.mean(ops.maximum(1.0 - signed_binary_labels(y_true) * y_pred, 0.0), axis=-1)


def squared_hinge(y_true, y_pred):
    """Squared hinge loss: `mean(maximum(1 - y_true * y_pred, 0) ** 2, axis=-1)`.

    Args:
        y_true: labels -1 or 1 (or 0/1, converted to -1/1), of `y_pred`'s
            shape (a trailing axis of size 1 may differ).
        y_pred: scores.

    Returns:
        A Tensor of per-sample losses, of shape `y_pred.shape[:-1]`.

    Raises:
        ValueError: if the shapes differ, naming both.

    Example:
        >>> mk.losses.squared_hinge([[0.0, 1.0]], [[0.5, 0.5]]).numpy()  # (1.5 ** 2 + 0.5 ** 2) / 2
        array([1.25], dtype=float32)
    """
    y_true, y_pred = matched_pair("squared_hinge", y_true, y_pred)
    margins = ops.maximum(1.0 - signed_binary_labels(y_true) * y_pred, 0.0)
    return ops.mean(ops.square(margins), axis=-1)


def categorical_hinge(y_true, y_pred):
    """Categorical hinge loss: the best wrong score against the right one.

        positive = sum(y_true * y_pred, axis=-1)
        negative = max((1 - y_true) * y_pred, axis=-1)
        result = maximum(negative - positive + 1, 0)

    Args:
        y_true: one-hot targets, of `y_pred`'s shape.
        y_pred: scores.

    Returns:
        A Tensor of per-sample losses, of shape `y_pred.shape[:-1]`.

    Raises:
        ValueError: if the shapes differ, naming both.

    Example:
        >>> mk.losses.categorical_hinge([[0.0, 1.0, 0.0]], [[0.3, 0.5, 0.2]]).numpy()
        array([0.8], dtype=float32)
    """
    y_true, y_pred = matched_pair("categorical_hinge", y_true, y_pred)
    positive = ops.sum(y_true * y_pred, axis=-1)
    negative = ops.max((1.0 - y_true) * y_pred, axis=-1)
    return ops.maximum(negative - positive + 1.0, 0.0)


class Hinge(LossFunctionWrapper):
    """Hinge loss `maximum(1 - y_true * y_pred, 0)` (see `hinge`).

    Args:
        reduction: as in `Loss`.
        name: the loss's name.
        dtype: as in `Loss`.

    Example:
        >>> float(mk.losses.Hinge()([[0.0, 1.0]], [[0.5, 0.5]]))
        1.0
    """

    _per_element = True

    def __init__(self, reduction="sum_over_batch_size", name="hinge", dtype=None):
        super().__init__(hinge, reduction=reduction, name=name, dtype=dtype)


class SquaredHinge(LossFunctionWrapper):
    """Squared hinge loss `maximum(1 - y_true * y_pred, 0) ** 2` (see `squared_hinge`).

    Args:
        reduction: as in `Loss`.
        name: the loss's name.
        dtype: as in `Loss`.

    Example:
        >>> float(mk.losses.SquaredHinge()([[0.0, 1.0]], [[0.5, 0.5]]))
        1.25
    """

    _per_element = True

    def __init__(self, reduction="sum_over_batch_size", name="squared_hinge", dtype=None):
        super().__init__(squared_hinge, reduction=reduction, name=name, dtype=dtype)


class CategoricalHinge(LossFunctionWrapper):
    """Categorical hinge loss for one-hot targets (see `categorical_hinge`).

    Args:
        reduction: as in `Loss`.
        name: the loss's name.
        dtype: as in `Loss`.

    Example:
        >>> round(float(mk.losses.CategoricalHinge()([[0.0, 1.0, 0.0]], [[0.3, 0.5, 0.2]])), 6)
        0.8
    """

    def __init__(self, reduction="sum_over_batch_size", name="categorical_hinge", dtype=None):
        super().__init__(categorical_hinge, reduction=reduction, name=name, dtype=dtype)
