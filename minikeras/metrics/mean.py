"""`Mean`, the weighted mean of what a metric sees, and `MeanMetricWrapper`, a function's mean.

Most metrics are one of these: the mean of a per-sample function of
`(y_true, y_pred)` (accuracies, errors), or the mean of given values (the
loss a model reports).
"""

import numpy as np

from minikeras import losses
from minikeras.metrics.base import Metric, _samplewise

__all__ = ["Mean", "MeanMetricWrapper"]


class Mean(Metric):
    """Weighted mean of all values seen: `sum(values * sample_weight) / sum(sample_weight)`.

    Values with more than one axis are first averaged to one value per sample
    (along axis 0); `sample_weight` then weighs the samples.

    Args:
        name: the metric's name.
        dtype: as in `Metric`.

    Example:
        >>> m = mk.metrics.Mean()
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
            >>> m = mk.metrics.Mean()
            >>> m.update_state([[1.0, 3.0], [5.0, 7.0]], [1.0, 0.0])
            >>> m.result()
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
            >>> mk.metrics.Mean()([2.0, 4.0])
            3.0
        """
        return self.total / self.count if self.count else 0.0

    def reset_state(self):
        """Sets the total and the count to zero.

        Example:
            >>> m = mk.metrics.Mean(); m([1.0]); m.reset_state(); m.count
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
        >>> from minikeras.metrics import binary_accuracy
        >>> m = mk.metrics.MeanMetricWrapper(binary_accuracy, threshold=0.7)
        >>> m([1, 1], [0.8, 0.6])
        0.5
    """

    # fit and evaluate weigh this metric by the model's output mask (as Keras's
    # MeanMetricWrapper reads the mask of y_pred).
    _uses_output_mask = True

    def __init__(self, fn, name=None, dtype=None, **kwargs):
        super().__init__(name=name or fn.__name__, dtype=dtype)
        self._fn = fn
        self._fn_kwargs = kwargs
        if getattr(fn, "__module__", "").startswith("minikeras.losses"):
            self._direction = "down"  # the mean of a loss, as Keras says of one

    def update_state(self, y_true, y_pred, sample_weight=None):
        """Adds `fn(y_true, y_pred)` for a batch to the mean.

        Args:
            y_true: targets.
            y_pred: predictions.
            sample_weight: None, or weights of shape (batch,) or broadcastable.

        Raises:
            ValueError: if the shapes do not fit, naming the metric and the shapes.

        Example:
            >>> from minikeras.metrics import Accuracy
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
            >>> from minikeras.metrics import BinaryAccuracy
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
            >>> mk.metrics.MeanMetricWrapper.from_config({"fn": "binary_accuracy"}).name
            'binary_accuracy'
        """
        if cls is MeanMetricWrapper and isinstance(config.get("fn"), str):
            from minikeras.metrics.lookup import _FUNCTIONS  # (it imports this module)

            name = config["fn"]
            fn = _FUNCTIONS[name] if name in _FUNCTIONS else losses.get(name)
            config = {**config, "fn": fn}
        return cls(**config)
