"""Accuracy metrics: the per-sample functions and their `Mean` classes.

The accuracy that `get("accuracy", loss=...)` picks for a loss, and
`_AutoAccuracy`, which picks it from the first batch's shapes, are in
`auto_accuracy`.
"""

import numpy as np

from minikeras import config
from minikeras.metrics.base import _aligned
from minikeras.metrics.mean import MeanMetricWrapper

__all__ = [
    "Accuracy",
    "BinaryAccuracy",
    "CategoricalAccuracy",
    "SparseCategoricalAccuracy",
    "SparseTopKCategoricalAccuracy",
    "TopKCategoricalAccuracy",
    "accuracy",
    "binary_accuracy",
    "categorical_accuracy",
    "sparse_categorical_accuracy",
    "sparse_top_k_categorical_accuracy",
    "top_k_categorical_accuracy",
]


def _sparse_labels(name, y_true, y_pred):
    """Labels of shape `y_pred.shape[:-1]`, from that shape or with a trailing 1."""
    y_true, y_pred = np.asarray(y_true), np.asarray(y_pred)
    sample_shape = y_pred.shape[:-1]
    if y_pred.ndim and y_true.shape == sample_shape:
        return y_true
    if y_pred.ndim and y_true.shape == sample_shape + (1,):
        return y_true[..., 0]
    hint = ""
    if y_true.shape == y_pred.shape:
        hint = "; for one-hot targets use the categorical version"
    raise ValueError(
        f"{name}: y_true must have shape {sample_shape} or {sample_shape + (1,)} "
        f"(y_pred's shape without its class axis); got y_true shape {y_true.shape} "
        f"and y_pred shape {y_pred.shape}{hint}"
    )


def _one_hot_shapes(name, y_true, y_pred):
    y_true, y_pred = np.asarray(y_true), np.asarray(y_pred)
    if y_true.shape != y_pred.shape or not y_pred.ndim:
        hint = ""
        if y_true.ndim == y_pred.ndim - 1 or (y_true.ndim and y_true.shape[-1] == 1):
            hint = "; for integer class labels use the sparse version"
        raise ValueError(
            f"{name}: y_true and y_pred must have the same shape (batch, num_classes); got "
            f"y_true shape {y_true.shape} and y_pred shape {y_pred.shape}{hint}"
        )
    return y_true, y_pred


def _in_top_k(name, labels, y_pred, k):
    """Whether each label's score is among the `k` largest (ties count as in)."""
    num_classes = y_pred.shape[-1]
    labels = np.asarray(labels).astype(np.int64)
    if labels.size and (labels.min() < 0 or labels.max() >= num_classes):
        raise ValueError(
            f"{name}: labels must lie in [0, {num_classes}), got {labels.min()} to {labels.max()}"
        )
    target = np.take_along_axis(y_pred, labels[..., None], axis=-1)
    return np.sum(y_pred > target, axis=-1) < k


# ------------------------------------------------------ per-sample functions


def accuracy(y_true, y_pred):
    """Whether predictions equal targets exactly: `y_true == y_pred`, as 0/1 floats.

    Args:
        y_true: targets.
        y_pred: predictions of `y_true`'s shape (a trailing axis of size 1 may differ).

    Returns:
        A float32 numpy array of `y_pred`'s shape.

    Raises:
        ValueError: if the shapes differ, naming both.

    Example:
        >>> mk.metrics.accuracy([1, 2, 3], [1, 2, 0])
        array([1., 1., 0.], dtype=float32)
    """
    y_true, y_pred = _aligned("accuracy", y_true, y_pred)
    return (y_true == y_pred).astype(config.floatx())


def binary_accuracy(y_true, y_pred, threshold=0.5):
    """Whether thresholded predictions equal 0/1 targets: `y_true == (y_pred > threshold)`.

    Args:
        y_true: 0/1 targets.
        y_pred: probabilities of `y_true`'s shape (a trailing axis of size 1 may differ).
        threshold: predictions above it count as 1.

    Returns:
        A float32 numpy array of 0s and 1s.

    Raises:
        ValueError: if the shapes differ, naming both.

    Example:
        >>> mk.metrics.binary_accuracy([[1], [0], [1]], [[0.9], [0.2], [0.4]])
        array([[1.], [1.], [0.]], dtype=float32)
    """
    y_true, y_pred = _aligned("binary_accuracy", y_true, y_pred)
    return (y_true == (y_pred > threshold)).astype(config.floatx())


def categorical_accuracy(y_true, y_pred):
    """Whether the top prediction is the one-hot target: `argmax(y_true) == argmax(y_pred)`.

    Args:
        y_true: one-hot targets of shape (batch, num_classes).
        y_pred: scores of the same shape.

    Returns:
        A float32 numpy array of shape (batch,).

    Raises:
        ValueError: if the shapes differ, naming both.

    Example:
        >>> mk.metrics.categorical_accuracy([[0, 1], [1, 0]], [[0.2, 0.8], [0.3, 0.7]])
        array([1., 0.], dtype=float32)
    """
    y_true, y_pred = _one_hot_shapes("categorical_accuracy", y_true, y_pred)
    return (np.argmax(y_true, -1) == np.argmax(y_pred, -1)).astype(config.floatx())


def sparse_categorical_accuracy(y_true, y_pred):
    """Whether the top prediction is the integer label: `y_true == argmax(y_pred)`.

    Args:
        y_true: integer labels of shape (batch,) or (batch, 1).
        y_pred: scores of shape (batch, num_classes).

    Returns:
        A float32 numpy array of shape (batch,).

    Raises:
        ValueError: if the label shape does not fit, naming both shapes.

    Example:
        >>> mk.metrics.sparse_categorical_accuracy([1, 0], [[0.2, 0.8], [0.3, 0.7]])
        array([1., 0.], dtype=float32)
    """
    labels = _sparse_labels("sparse_categorical_accuracy", y_true, y_pred)
    return (labels == np.argmax(y_pred, -1)).astype(config.floatx())


def top_k_categorical_accuracy(y_true, y_pred, k=5):
    """Whether the one-hot target is among the `k` highest-scored classes.

    A class tied with the k-th score counts as in the top k (as TensorFlow's
    `in_top_k`).

    Args:
        y_true: one-hot targets of shape (batch, num_classes).
        y_pred: scores of the same shape.
        k: how many top classes count.

    Returns:
        A float32 numpy array of shape (batch,).

    Raises:
        ValueError: if the shapes differ, naming both.

    Example:
        >>> scores = [[0.1, 0.5, 0.4], [0.1, 0.5, 0.4]]
        >>> mk.metrics.top_k_categorical_accuracy([[0, 0, 1], [1, 0, 0]], scores, k=2)
        array([1., 0.], dtype=float32)
    """
    y_true, y_pred = _one_hot_shapes("top_k_categorical_accuracy", y_true, y_pred)
    hits = _in_top_k("top_k_categorical_accuracy", np.argmax(y_true, -1), y_pred, k)
    return hits.astype(config.floatx())


def sparse_top_k_categorical_accuracy(y_true, y_pred, k=5, from_sorted_ids=False):
    """Whether the integer label is among the `k` highest-scored classes.

    With `from_sorted_ids=True` (Keras 3.15), `y_pred` holds the ids of the
    top classes themselves, best first, `(batch, N)` with `N >= k`: a label
    counts when it is among the first `k` of them (a repeated id once).

    Args:
        y_true: integer labels of shape (batch,) or (batch, 1).
        y_pred: scores of shape (batch, num_classes); or, with
            `from_sorted_ids`, class ids of shape (batch, N), best first.
        k: how many top classes count.
        from_sorted_ids: whether `y_pred` holds sorted class ids rather than
            the scores of every class.

    Returns:
        A float32 numpy array of shape (batch,).

    Raises:
        ValueError: if the label shape does not fit or a label is out of range.

    Example:
        >>> mk.metrics.sparse_top_k_categorical_accuracy(
        ...     [2, 0], [[0.1, 0.5, 0.4], [0.1, 0.5, 0.4]], k=2
        ... )
        array([1., 0.], dtype=float32)
        >>> mk.metrics.sparse_top_k_categorical_accuracy(
        ...     [2, 1], [[1, 0, 3], [1, 2, 3]], k=1, from_sorted_ids=True
        ... )
        array([0., 1.], dtype=float32)
    """
    name = "sparse_top_k_categorical_accuracy"
    labels = _sparse_labels(name, y_true, y_pred)
    if from_sorted_ids:
        top = np.asarray(y_pred)[..., :k]
        return np.any(top == np.asarray(labels)[..., None], axis=-1).astype(config.floatx())
    return _in_top_k(name, labels, np.asarray(y_pred), k).astype(config.floatx())


# ------------------------------------------------------------ mean metrics


class Accuracy(MeanMetricWrapper):
    """How often predictions equal targets exactly (see `accuracy`).

    Args:
        name: the metric's name.
        dtype: as in `Metric`.

    Example:
        >>> mk.metrics.Accuracy()([[1], [2], [3], [4]], [[0], [2], [3], [4]])
        0.75
    """

    _direction = "up"  # higher is better (for callbacks' mode="auto")

    def __init__(self, name="accuracy", dtype=None):
        super().__init__(accuracy, name=name, dtype=dtype)


class BinaryAccuracy(MeanMetricWrapper):
    """How often `y_pred > threshold` matches 0/1 targets (see `binary_accuracy`).

    Args:
        name: the metric's name.
        dtype: as in `Metric`.
        threshold: predictions above it count as 1; use 0.0 for logits.

    Example:
        >>> mk.metrics.BinaryAccuracy()([[1], [1], [0], [0]], [[0.98], [1], [0], [0.6]])
        0.75
    """

    _direction = "up"  # higher is better (for callbacks' mode="auto")

    def __init__(self, name="binary_accuracy", dtype=None, threshold=0.5):
        self.threshold = float(threshold)
        super().__init__(binary_accuracy, name=name, dtype=dtype, threshold=self.threshold)


class CategoricalAccuracy(MeanMetricWrapper):
    """How often the top prediction is the one-hot target (see `categorical_accuracy`).

    Args:
        name: the metric's name.
        dtype: as in `Metric`.

    Example:
        >>> mk.metrics.CategoricalAccuracy()(
        ...     [[0, 0, 1], [0, 1, 0]], [[0.1, 0.9, 0.8], [0.05, 0.95, 0]]
        ... )
        0.5
    """

    _direction = "up"  # higher is better (for callbacks' mode="auto")

    def __init__(self, name="categorical_accuracy", dtype=None):
        super().__init__(categorical_accuracy, name=name, dtype=dtype)


class SparseCategoricalAccuracy(MeanMetricWrapper):
    """How often the top prediction is the integer label (see `sparse_categorical_accuracy`).

    Args:
        name: the metric's name.
        dtype: as in `Metric`.

    Example:
        >>> mk.metrics.SparseCategoricalAccuracy()([[2], [1]], [[0.1, 0.6, 0.3], [0.05, 0.95, 0]])
        0.5
    """

    _direction = "up"  # higher is better (for callbacks' mode="auto")

    def __init__(self, name="sparse_categorical_accuracy", dtype=None):
        super().__init__(sparse_categorical_accuracy, name=name, dtype=dtype)


class TopKCategoricalAccuracy(MeanMetricWrapper):
    """How often the one-hot target is among the `k` top predictions.

    See `top_k_categorical_accuracy`.

    Args:
        k: how many top classes count.
        name: the metric's name.
        dtype: as in `Metric`.

    Example:
        >>> mk.metrics.TopKCategoricalAccuracy(k=1)(
        ...     [[0, 0, 1], [0, 1, 0]], [[0.1, 0.9, 0.8], [0.05, 0.95, 0]]
        ... )
        0.5
    """

    _direction = "up"  # higher is better (for callbacks' mode="auto")

    def __init__(self, k=5, name="top_k_categorical_accuracy", dtype=None):
        self.k = int(k)
        super().__init__(top_k_categorical_accuracy, name=name, dtype=dtype, k=self.k)


class SparseTopKCategoricalAccuracy(MeanMetricWrapper):
    """How often the integer label is among the `k` top predictions.

    See `sparse_top_k_categorical_accuracy`.

    Args:
        k: how many top classes count.
        name: the metric's name.
        dtype: as in `Metric`.
        from_sorted_ids: whether `y_pred` holds the top class ids, best
            first, rather than every class's score. Written into the config
            only when True, as Keras does.

    Example:
        >>> mk.metrics.SparseTopKCategoricalAccuracy(k=1)(
        ...     [2, 1], [[0.1, 0.9, 0.8], [0.05, 0.95, 0]]
        ... )
        0.5
        >>> mk.metrics.SparseTopKCategoricalAccuracy(k=1, from_sorted_ids=True)(
        ...     [2, 1], [[1, 0, 3], [1, 2, 3]]
        ... )
        0.5
    """

    _direction = "up"  # higher is better (for callbacks' mode="auto")

    def __init__(
        self, k=5, name="sparse_top_k_categorical_accuracy", dtype=None, from_sorted_ids=False
    ):
        self.k = int(k)
        self.from_sorted_ids = bool(from_sorted_ids)
        extra = {"from_sorted_ids": True} if self.from_sorted_ids else {}
        super().__init__(
            sparse_top_k_categorical_accuracy, name=name, dtype=dtype, k=self.k, **extra
        )
