"""Metrics: running summaries of how well a model does, for logs and callbacks.

A metric is stateful: `update_state(y_true, y_pred, sample_weight=None)` adds
a batch, `result()` gives the value so far as a Python float, and
`reset_state()` starts over. Metrics are not differentiated, so they work on
numpy arrays and keep float64 accumulators: the result over many batches does
not depend on how the data was split into batches.

Most metrics are a `Mean` of per-sample values (`MeanMetricWrapper`): values
with more than one axis are averaged to one per sample, then weighted.
`Precision`, `Recall` and `AUC` count weighted true/false positives/negatives
at thresholds instead.

`get("accuracy", loss=...)` picks the accuracy that fits the loss, as Keras
does; see `get`.
"""

import re

import numpy as np

from minikeras import config, losses


def _snake_case(name):
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()


def _aligned(name, y_true, y_pred):
    """numpy arrays of one shape, after Keras's trailing-axis alignment."""
    y_true, y_pred = np.asarray(y_true), np.asarray(y_pred)
    aligned_true, aligned_pred = losses.squeeze_or_expand_to_same_rank(y_true, y_pred)
    if aligned_true.shape != aligned_pred.shape:
        raise ValueError(
            f"{name}: y_true and y_pred must have the same shape (up to a trailing axis "
            f"of size 1); got y_true shape {y_true.shape} and y_pred shape {y_pred.shape}"
        )
    return np.asarray(aligned_true), np.asarray(aligned_pred)


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
        >>> accuracy([1, 2, 3], [1, 2, 0])
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
        >>> binary_accuracy([[1], [0], [1]], [[0.9], [0.2], [0.4]])
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
        >>> categorical_accuracy([[0, 1], [1, 0]], [[0.2, 0.8], [0.3, 0.7]])
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
        >>> sparse_categorical_accuracy([1, 0], [[0.2, 0.8], [0.3, 0.7]])
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
        >>> top_k_categorical_accuracy([[0, 0, 1], [1, 0, 0]], scores, k=2)
        array([1., 0.], dtype=float32)
    """
    y_true, y_pred = _one_hot_shapes("top_k_categorical_accuracy", y_true, y_pred)
    hits = _in_top_k("top_k_categorical_accuracy", np.argmax(y_true, -1), y_pred, k)
    return hits.astype(config.floatx())


def sparse_top_k_categorical_accuracy(y_true, y_pred, k=5):
    """Whether the integer label is among the `k` highest-scored classes.

    Args:
        y_true: integer labels of shape (batch,) or (batch, 1).
        y_pred: scores of shape (batch, num_classes).
        k: how many top classes count.

    Returns:
        A float32 numpy array of shape (batch,).

    Raises:
        ValueError: if the label shape does not fit or a label is out of range.

    Example:
        >>> sparse_top_k_categorical_accuracy([2, 0], [[0.1, 0.5, 0.4], [0.1, 0.5, 0.4]], k=2)
        array([1., 0.], dtype=float32)
    """
    name = "sparse_top_k_categorical_accuracy"
    labels = _sparse_labels(name, y_true, y_pred)
    return _in_top_k(name, labels, np.asarray(y_pred), k).astype(config.floatx())


def _squared_error(y_true, y_pred):
    y_true, y_pred = _aligned("mean_squared_error", y_true, y_pred)
    return np.square(y_true.astype(np.float64) - y_pred.astype(np.float64))


def _absolute_error(y_true, y_pred):
    y_true, y_pred = _aligned("mean_absolute_error", y_true, y_pred)
    return np.abs(y_true.astype(np.float64) - y_pred.astype(np.float64))


# ------------------------------------------------------------- base classes


class Metric:
    """Base class of metrics: state, `update_state`, `result`, `reset_state`.

    Subclasses create their state in `reset_state` (called by their
    `__init__`), add to it in `update_state` and summarize it in `result`.
    Calling a metric updates it and returns the result.

    Args:
        dtype: kept for Keras compatibility and reported in `get_config`;
            accumulators are float64.
        name: the metric's name in logs; the class name in snake case by default.

    Example:
        >>> class Count(Metric):
        ...     def __init__(self, name="count"):
        ...         super().__init__(name=name)
        ...         self.reset_state()
        ...     def update_state(self, values):
        ...         self.count += np.size(values)
        ...     def result(self):
        ...         return float(self.count)
        ...     def reset_state(self):
        ...         self.count = 0
        >>> Count()([1, 2, 3])
        3.0
    """

    def __init__(self, dtype=None, name=None):
        self.name = name or _snake_case(type(self).__name__)
        self.dtype = config.standardize_dtype(dtype)

    def update_state(self, *args, **kwargs):
        """Adds a batch to the state; subclasses implement it.

        Args:
            *args: the batch: `(y_true, y_pred)` for the metrics `fit` updates,
                `(values,)` for `Mean`.
            **kwargs: usually `sample_weight`, optional per-sample weights.

        Raises:
            NotImplementedError: in the base class.

        Example:
            >>> m = Mean(); m.update_state([1.0, 3.0]); m.result()
            2.0
        """
        raise NotImplementedError(f"{type(self).__name__} must implement update_state()")

    def result(self):
        """Returns the value so far; subclasses implement it.

        Returns:
            A Python float.

        Raises:
            NotImplementedError: in the base class.

        Example:
            >>> Mean().result()
            0.0
        """
        raise NotImplementedError(f"{type(self).__name__} must implement result()")

    def reset_state(self):
        """Forgets every batch seen; subclasses implement it.

        Raises:
            NotImplementedError: in the base class.

        Example:
            >>> m = Mean(); m.update_state([5.0]); m.reset_state(); m.result()
            0.0
        """
        raise NotImplementedError(f"{type(self).__name__} must implement reset_state()")

    def __call__(self, *args, **kwargs):
        """Updates the state with one batch and returns `result()`.

        Returns:
            A Python float.

        Example:
            >>> Mean()([1.0, 2.0])
            1.5
        """
        self.update_state(*args, **kwargs)
        return self.result()

    def get_config(self):
        """Returns the constructor arguments, for `from_config`.

        Returns:
            A dict.

        Example:
            >>> Mean().get_config()
            {'name': 'mean', 'dtype': 'float32'}
        """
        return {"name": self.name, "dtype": self.dtype}

    @classmethod
    def from_config(cls, config):
        """Makes a metric from `get_config()`'s dict.

        Args:
            config: a dict of constructor arguments.

        Returns:
            A new metric, with fresh state.

        Example:
            >>> AUC.from_config(AUC(curve="PR").get_config()).curve
            'PR'
        """
        return cls(**config)

    def __repr__(self):
        result = self.result()
        shown = f"{result:.6g}" if isinstance(result, float) else repr(result)
        return f"<{type(self).__name__} name={self.name!r} result={shown}>"


def _samplewise(name, values, sample_weight):
    """Weighted per-sample values and their weights, as Keras's Mean reduces them."""
    values = np.asarray(values, dtype=np.float64)
    weights = None
    if sample_weight is not None:
        weights = np.asarray(sample_weight, dtype=np.float64)
        given_shape = weights.shape
        if weights.ndim == 0 and values.ndim:  # one weight for every sample
            weights = np.full(values.shape[:1], float(weights))
        values, weights = map(np.asarray, losses.squeeze_or_expand_to_same_rank(values, weights))
        if values.ndim > weights.ndim:  # a weight per sample covers its trailing axes
            values = values.mean(axis=tuple(range(weights.ndim, values.ndim)))
        try:
            weights = np.broadcast_to(weights, values.shape)
        except ValueError:
            raise ValueError(
                f"Metric {name!r}: sample_weight of shape {given_shape} does not fit values "
                f"of shape {values.shape}; expected shape {values.shape[:1]} or one that "
                "broadcasts"
            ) from None
        values = values * weights
        if weights.ndim > 1:
            weights = weights.mean(axis=tuple(range(1, weights.ndim)))
    if values.ndim > 1:
        values = values.mean(axis=tuple(range(1, values.ndim)))
    return values, weights


class Mean(Metric):
    """Weighted mean of all values seen: `sum(values * sample_weight) / sum(sample_weight)`.

    Values with more than one axis are first averaged to one value per sample
    (along axis 0); `sample_weight` then weighs the samples.

    Args:
        name: the metric's name.
        dtype: as in `Metric`.

    Example:
        >>> m = Mean()
        >>> m.update_state([1.0, 2.0])
        >>> m.update_state([6.0], sample_weight=[2.0])
        >>> m.result()
        3.75
    """

    def __init__(self, name="mean", dtype=None):
        super().__init__(dtype=dtype, name=name)
        self.reset_state()

    def update_state(self, values, sample_weight=None):
        """Adds a batch of values.

        Args:
            values: array-like; axis 0 indexes samples.
            sample_weight: None, or weights of shape (batch,) or broadcastable.

        Raises:
            ValueError: if `sample_weight` does not fit `values`.

        Example:
            >>> m = Mean(); m.update_state([[1.0, 3.0], [5.0, 7.0]], [1.0, 0.0]); m.result()
            2.0
        """
        values, weights = _samplewise(self.name, values, sample_weight)
        self.total += float(np.sum(values))
        if weights is not None:
            self.count += float(np.sum(weights))
        else:
            self.count += values.shape[0] if values.ndim else 1

    def result(self):
        """Returns the weighted mean so far (0.0 before any weight).

        Returns:
            A Python float.

        Example:
            >>> Mean()([2.0, 4.0])
            3.0
        """
        return self.total / self.count if self.count else 0.0

    def reset_state(self):
        """Sets the total and the count to zero.

        Example:
            >>> m = Mean(); m([1.0]); m.reset_state(); m.count
            1.0
            0.0
        """
        self.total = 0.0
        self.count = 0.0


class MeanMetricWrapper(Mean):
    """The `Mean` of a per-sample function `fn(y_true, y_pred, **kwargs)`.

    Args:
        fn: a function returning one value per sample (or per element).
        name: the metric's name; `fn`'s name by default.
        dtype: as in `Metric`.
        **kwargs: further arguments for `fn`.

    Example:
        >>> m = MeanMetricWrapper(binary_accuracy, threshold=0.7)
        >>> m([1, 1], [0.8, 0.6])
        0.5
    """

    def __init__(self, fn, name=None, dtype=None, **kwargs):
        super().__init__(name=name or fn.__name__, dtype=dtype)
        self._fn = fn
        self._fn_kwargs = kwargs

    def update_state(self, y_true, y_pred, sample_weight=None):
        """Adds `fn(y_true, y_pred)` for a batch to the mean.

        Args:
            y_true: targets.
            y_pred: predictions.
            sample_weight: None, or weights of shape (batch,) or broadcastable.

        Raises:
            ValueError: if the shapes do not fit, naming the metric and the shapes.

        Example:
            >>> m = Accuracy(); m.update_state([1, 2], [1, 3]); m.result()
            0.5
        """
        try:
            values = self._fn(y_true, y_pred, **self._fn_kwargs)
        except ValueError as error:
            raise ValueError(f"Metric {self.name!r}: {error}") from None
        super().update_state(values, sample_weight=sample_weight)

    def get_config(self):
        """Returns the constructor arguments, `fn`'s arguments among them.

        Returns:
            A dict.

        Example:
            >>> BinaryAccuracy(threshold=0.3).get_config()["threshold"]
            0.3
        """
        config = {**super().get_config(), **self._fn_kwargs}
        if type(self) is MeanMetricWrapper:
            config["fn"] = self._fn.__name__
        return config

    @classmethod
    def from_config(cls, config):
        """Makes the metric from `get_config()`'s dict.

        Args:
            config: a dict of constructor arguments.

        Returns:
            A new metric.

        Example:
            >>> MeanMetricWrapper.from_config({"fn": "binary_accuracy"}).name
            'binary_accuracy'
        """
        if cls is MeanMetricWrapper and isinstance(config.get("fn"), str):
            name = config["fn"]
            fn = _FUNCTIONS[name] if name in _FUNCTIONS else losses.get(name)
            config = {**config, "fn": fn}
        return cls(**config)


# ------------------------------------------------------------ mean metrics


class Accuracy(MeanMetricWrapper):
    """How often predictions equal targets exactly (see `accuracy`).

    Args:
        name: the metric's name.
        dtype: as in `Metric`.

    Example:
        >>> Accuracy()([[1], [2], [3], [4]], [[0], [2], [3], [4]])
        0.75
    """

    def __init__(self, name="accuracy", dtype=None):
        super().__init__(accuracy, name=name, dtype=dtype)


class BinaryAccuracy(MeanMetricWrapper):
    """How often `y_pred > threshold` matches 0/1 targets (see `binary_accuracy`).

    Args:
        name: the metric's name.
        dtype: as in `Metric`.
        threshold: predictions above it count as 1; use 0.0 for logits.

    Example:
        >>> BinaryAccuracy()([[1], [1], [0], [0]], [[0.98], [1], [0], [0.6]])
        0.75
    """

    def __init__(self, name="binary_accuracy", dtype=None, threshold=0.5):
        self.threshold = float(threshold)
        super().__init__(binary_accuracy, name=name, dtype=dtype, threshold=self.threshold)


class CategoricalAccuracy(MeanMetricWrapper):
    """How often the top prediction is the one-hot target (see `categorical_accuracy`).

    Args:
        name: the metric's name.
        dtype: as in `Metric`.

    Example:
        >>> CategoricalAccuracy()([[0, 0, 1], [0, 1, 0]], [[0.1, 0.9, 0.8], [0.05, 0.95, 0]])
        0.5
    """

    def __init__(self, name="categorical_accuracy", dtype=None):
        super().__init__(categorical_accuracy, name=name, dtype=dtype)


class SparseCategoricalAccuracy(MeanMetricWrapper):
    """How often the top prediction is the integer label (see `sparse_categorical_accuracy`).

    Args:
        name: the metric's name.
        dtype: as in `Metric`.

    Example:
        >>> SparseCategoricalAccuracy()([[2], [1]], [[0.1, 0.6, 0.3], [0.05, 0.95, 0]])
        0.5
    """

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
        >>> TopKCategoricalAccuracy(k=1)([[0, 0, 1], [0, 1, 0]], [[0.1, 0.9, 0.8], [0.05, 0.95, 0]])
        0.5
    """

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

    Example:
        >>> SparseTopKCategoricalAccuracy(k=1)([2, 1], [[0.1, 0.9, 0.8], [0.05, 0.95, 0]])
        0.5
    """

    def __init__(self, k=5, name="sparse_top_k_categorical_accuracy", dtype=None):
        self.k = int(k)
        super().__init__(sparse_top_k_categorical_accuracy, name=name, dtype=dtype, k=self.k)


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


# ----------------------------------------------------- confusion-count metrics


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


def _confusion_counts(name, y_true, y_pred, thresholds, sample_weight):
    """Weighted (tp, fp, tn, fn) at each threshold; `y_pred > threshold` is positive."""
    y_true, y_pred = _aligned(f"Metric {name!r}", y_true, y_pred)
    if y_pred.dtype.kind != "f":
        y_pred = y_pred.astype(config.floatx())
    weights = np.ones(y_pred.shape) if sample_weight is None else sample_weight
    weights = _weights_like(name, weights, y_pred.shape).ravel()
    positive = y_true.astype(bool).ravel()
    scores = y_pred.ravel()
    order = np.argsort(thresholds, kind="stable")
    # Compared in the predictions' dtype, as Keras does: 0.5 is 0.5 in float32 too.
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
            >>> m = Precision(); m.update_state([1, 0, 1], [0.9, 0.8, 0.1]); m.result()
            0.5
        """
        y_pred = self._scores(y_pred)
        tp, fp, tn, fn = _confusion_counts(
            self.name, y_true, y_pred, self._thresholds, sample_weight
        )
        self.true_positives += tp
        self.false_positives += fp
        self.true_negatives += tn
        self.false_negatives += fn

    def _scores(self, y_pred):
        return y_pred

    def _single_or_list(self, values):
        return float(values[0]) if len(values) == 1 else [float(v) for v in values]


class _RateAtThresholds(_ConfusionMetric):
    """A ratio of counts at `thresholds` (default 0.5): Precision's and Recall's shape."""

    def __init__(self, thresholds=None, name=None, dtype=None):
        super().__init__(dtype=dtype, name=name or _snake_case(type(self).__name__))
        self.init_thresholds = thresholds
        self._thresholds = _parse_thresholds(type(self).__name__, thresholds, 0.5)
        self.thresholds = self._thresholds.tolist()
        self.reset_state()

    def get_config(self):
        """Returns the constructor arguments.

        Returns:
            A dict.

        Example:
            >>> Precision(thresholds=0.3).get_config()["thresholds"]
            0.3
        """
        return {**super().get_config(), "thresholds": self.init_thresholds}


class Precision(_RateAtThresholds):
    """Fraction of predicted positives that are positive: `tp / (tp + fp)`.

    A prediction is positive when `y_pred > threshold`. Empty counts give 0.

    Args:
        thresholds: None (0.5), a float in [0, 1], or a list of them.
        name: the metric's name.
        dtype: as in `Metric`.

    Raises:
        ValueError: if a threshold lies outside [0, 1].

    Example:
        >>> Precision()([0, 1, 1, 1], [1, 0, 1, 1])
        0.6666666666666666
    """

    def result(self):
        """Returns the precision so far.

        Returns:
            A Python float, or a list of them (one per threshold) when several
            thresholds were given.

        Example:
            >>> Precision(thresholds=[0.2, 0.7])([1, 0], [0.9, 0.5])
            [0.5, 1.0]
        """
        tp, fp = self.true_positives, self.false_positives
        return self._single_or_list(_divide_no_nan(tp, tp + fp))


class Recall(_RateAtThresholds):
    """Fraction of positives predicted positive: `tp / (tp + fn)`.

    A prediction is positive when `y_pred > threshold`. Empty counts give 0.

    Args:
        thresholds: None (0.5), a float in [0, 1], or a list of them.
        name: the metric's name.
        dtype: as in `Metric`.

    Raises:
        ValueError: if a threshold lies outside [0, 1].

    Example:
        >>> Recall()([0, 1, 1, 1], [1, 0, 1, 1])
        0.6666666666666666
    """

    def result(self):
        """Returns the recall so far.

        Returns:
            A Python float, or a list of them (one per threshold) when several
            thresholds were given.

        Example:
            >>> Recall(thresholds=[0.2, 0.7])([1, 1], [0.9, 0.5])
            [1.0, 0.5]
        """
        tp, fn = self.true_positives, self.false_negatives
        return self._single_or_list(_divide_no_nan(tp, tp + fn))


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
        from_logits: whether `y_pred` holds logits (a sigmoid is applied).

    Raises:
        ValueError: for an unknown curve or summation method, fewer than two
            thresholds, or a threshold outside [0, 1].

    Example:
        >>> AUC()([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8])
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
            >>> AUC(curve="PR")([0, 1], [0.2, 0.9])
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
            >>> AUC(num_thresholds=50).get_config()["num_thresholds"]
            50
        """
        return {
            **super().get_config(),
            "num_thresholds": self.num_thresholds,
            "curve": self.curve,
            "summation_method": self.summation_method,
            "thresholds": self.init_thresholds,
            "from_logits": self.from_logits,
        }


# ---------------------------------------------------------- "accuracy" by loss


def _accuracy_from_shapes(y_true, y_pred, name):
    """The accuracy that fits a batch, by Keras 3's rule (compile_utils.get_metric)."""
    true_shape, y_pred = np.shape(y_true), np.asarray(y_pred)
    if y_pred.dtype.kind in "iub":  # predicted labels, not scores
        return Accuracy(name=name)
    if y_pred.ndim <= 1 or y_pred.shape[-1] == 1:
        return BinaryAccuracy(name=name)
    if len(true_shape) < y_pred.ndim or (true_shape and true_shape[-1] == 1):
        return SparseCategoricalAccuracy(name=name)
    return CategoricalAccuracy(name=name)


class _AutoAccuracy(Metric):
    """Accuracy for an unknown loss: picks its kind from the first batch's shapes.

    Integer predictions: `Accuracy`. Predictions of shape (batch,) or
    (..., 1): `BinaryAccuracy`. Labels with fewer axes than the predictions,
    or a last axis of 1: `SparseCategoricalAccuracy`. Otherwise
    `CategoricalAccuracy`. The choice survives `reset_state`.

    Args:
        name: the metric's name.
        dtype: as in `Metric`.

    Example:
        >>> m = _AutoAccuracy()
        >>> m([1, 0], [[0.2, 0.8], [0.6, 0.4]]), type(m.resolved).__name__
        (1.0, 'SparseCategoricalAccuracy')
    """

    def __init__(self, name="accuracy", dtype=None):
        super().__init__(dtype=dtype, name=name)
        self.resolved = None

    def update_state(self, y_true, y_pred, sample_weight=None):
        """Picks the accuracy on the first call, then updates it.

        Args:
            y_true: targets.
            y_pred: predictions.
            sample_weight: None, or weights of shape (batch,) or broadcastable.

        Raises:
            ValueError: if the shapes do not fit the chosen accuracy.

        Example:
            >>> m = _AutoAccuracy(); m.update_state([[1], [0]], [[0.9], [0.8]]); m.result()
            0.5
        """
        if self.resolved is None:
            self.resolved = _accuracy_from_shapes(y_true, y_pred, self.name)
        self.resolved.name = self.name
        self.resolved.update_state(y_true, y_pred, sample_weight=sample_weight)

    def result(self):
        """Returns the chosen accuracy's result (0.0 before the first batch).

        Returns:
            A Python float.

        Example:
            >>> _AutoAccuracy().result()
            0.0
        """
        return self.resolved.result() if self.resolved is not None else 0.0

    def reset_state(self):
        """Resets the chosen accuracy (the choice stays).

        Example:
            >>> m = _AutoAccuracy(); m([1], [[0.0, 1.0]]); m.reset_state(); m.result()
            1.0
            0.0
        """
        if self.resolved is not None:
            self.resolved.reset_state()


def _accuracy_for_loss(loss, name):
    """The accuracy a loss calls for: its kind of cross-entropy, else exact equality."""
    if loss is None:
        return _AutoAccuracy(name=name)
    try:
        loss = losses.get(loss)  # a name, config or class becomes a function or Loss
    except ValueError:
        return _AutoAccuracy(name=name)
    fn, kwargs = loss, {}
    if isinstance(loss, losses.LossFunctionWrapper):
        fn, kwargs = loss.fn, loss._fn_kwargs
    if fn is losses.sparse_categorical_crossentropy:
        return SparseCategoricalAccuracy(name=name)
    if fn is losses.categorical_crossentropy:
        return CategoricalAccuracy(name=name)
    if fn is losses.binary_crossentropy:
        # sigmoid(logit) > 0.5 exactly when logit > 0.
        return BinaryAccuracy(name=name, threshold=0.0 if kwargs.get("from_logits") else 0.5)
    builtin = (losses.mse, losses.mae, losses.huber, losses.kld)
    if fn in builtin:
        return Accuracy(name=name)
    return _AutoAccuracy(name=name)


# ------------------------------------------------------------ lookup by name

_CLASSES = {
    cls.__name__: cls
    for cls in (
        Mean,
        MeanMetricWrapper,
        Accuracy,
        BinaryAccuracy,
        CategoricalAccuracy,
        SparseCategoricalAccuracy,
        TopKCategoricalAccuracy,
        SparseTopKCategoricalAccuracy,
        MeanSquaredError,
        MeanAbsoluteError,
        Precision,
        Recall,
        AUC,
        _AutoAccuracy,
    )
}
_FUNCTIONS = {
    fn.__name__: fn
    for fn in (
        accuracy,
        binary_accuracy,
        categorical_accuracy,
        sparse_categorical_accuracy,
        top_k_categorical_accuracy,
        sparse_top_k_categorical_accuracy,
    )
}
# Names that make a metric instance named after them.
_NAMES = {
    "mse": MeanSquaredError,
    "MSE": MeanSquaredError,
    "mean_squared_error": MeanSquaredError,
    "mae": MeanAbsoluteError,
    "MAE": MeanAbsoluteError,
    "mean_absolute_error": MeanAbsoluteError,
    "binary_accuracy": BinaryAccuracy,
    "categorical_accuracy": CategoricalAccuracy,
    "sparse_categorical_accuracy": SparseCategoricalAccuracy,
    "top_k_categorical_accuracy": TopKCategoricalAccuracy,
    "sparse_top_k_categorical_accuracy": SparseTopKCategoricalAccuracy,
    "auc": AUC,
    "precision": Precision,
    "recall": Recall,
    "mean": Mean,
}


def get(identifier, loss=None):
    """Returns the metric `identifier` stands for, as a fresh stateful `Metric`.

    `"accuracy"` and `"acc"` (any case) pick the accuracy that fits `loss`:
    sparse categorical cross-entropy gives `SparseCategoricalAccuracy`,
    categorical cross-entropy `CategoricalAccuracy`, binary cross-entropy
    `BinaryAccuracy` (threshold 0 when it takes logits), other built-in
    losses `Accuracy`. Without a loss, or with a custom one, the choice is
    made from the shapes of the first batch (see `_AutoAccuracy`).

    Args:
        identifier: None; a name (`"accuracy"`, `"mse"`, `"mae"`, `"auc"`,
            `"precision"`, `"recall"`, `"binary_accuracy"`, ..., or a class
            name such as `"AUC"`); a `serialize` dict; a `Metric` class or
            instance (returned as is); or a function `fn(y_true, y_pred)` of
            per-sample values, wrapped in `MeanMetricWrapper`.
        loss: the loss the model is compiled with (a name, function or `Loss`),
            for `"accuracy"`.

    Returns:
        A `Metric` (None for None), named after a name identifier.

    Raises:
        ValueError: for an unknown name or anything that is not a metric.

    Example:
        >>> type(get("accuracy", loss="sparse_categorical_crossentropy")).__name__
        'SparseCategoricalAccuracy'
        >>> get("mse").name
        'mse'
    """
    if identifier is None or isinstance(identifier, Metric):
        return identifier
    if isinstance(identifier, dict):
        return deserialize(identifier)
    if isinstance(identifier, str):
        if identifier.lower() in ("accuracy", "acc"):
            return _accuracy_for_loss(loss, name=identifier)
        if identifier in _NAMES:
            return _NAMES[identifier](name=identifier)
        if identifier in _CLASSES:
            return _CLASSES[identifier]()
        known = ", ".join(sorted({"accuracy", "acc", *_NAMES, *_CLASSES} - {"_AutoAccuracy"}))
        raise ValueError(f"Unknown metric {identifier!r}; known metrics: {known}")
    if isinstance(identifier, type) and issubclass(identifier, Metric):
        return identifier()
    if callable(identifier):
        return MeanMetricWrapper(identifier, name=getattr(identifier, "__name__", None))
    raise ValueError(
        "metrics.get: expected a metric name, config dict, Metric or function, "
        f"got {identifier!r} of type {type(identifier).__name__}"
    )


def serialize(metric):
    """Returns the dict that `deserialize` turns back into `metric` (without its state).

    Args:
        metric: a `Metric`.

    Returns:
        `{"class_name": ..., "config": ...}`.

    Raises:
        ValueError: if `metric` is not a `Metric`.

    Example:
        >>> serialize(AUC(curve="PR"))["config"]["curve"]
        'PR'
    """
    if not isinstance(metric, Metric):
        raise ValueError(f"metrics.serialize: expected a Metric, got {type(metric).__name__}")
    return {"class_name": type(metric).__name__, "config": metric.get_config()}


def deserialize(config, custom_objects=None):
    """Returns a fresh metric from `serialize`'s dict (or a name, see `get`).

    Args:
        config: a `{"class_name": ..., "config": ...}` dict, or a name.
        custom_objects: optional dict of name -> `Metric` class, searched first.

    Returns:
        A `Metric`.

    Raises:
        ValueError: if the class is unknown or the dict malformed.

    Example:
        >>> deserialize(serialize(Precision(thresholds=0.3))).thresholds
        [0.3]
    """
    if isinstance(config, str):
        if custom_objects and config in custom_objects:
            return get(custom_objects[config])
        return get(config)
    if not isinstance(config, dict) or "class_name" not in config:
        raise ValueError(
            f"metrics.deserialize: expected a dict with 'class_name' and 'config', got {config!r}"
        )
    known = {**_CLASSES, **(custom_objects or {})}
    cls = known.get(config["class_name"])
    if not (isinstance(cls, type) and issubclass(cls, Metric)):
        raise ValueError(f"Unknown metric class {config['class_name']!r}")
    arguments = dict(config.get("config", {}))
    if custom_objects and arguments.get("fn") in custom_objects:
        arguments["fn"] = custom_objects[arguments["fn"]]  # a wrapped custom function
    return cls.from_config(arguments)
