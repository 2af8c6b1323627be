"""The accuracy `"accuracy"` stands for in `compile(metrics=[...])`: picked by loss or by shapes.

`_accuracy_for_loss` reads the kind of accuracy off a cross-entropy loss;
for any other loss, or none, `_AutoAccuracy` picks it from the shapes of the
first batch, by Keras 3's rule. `metrics.get("accuracy", loss=...)` calls the first.
"""

import numpy as np

from minikeras import losses
from minikeras.metrics.accuracies import (
    Accuracy,
    BinaryAccuracy,
    CategoricalAccuracy,
    SparseCategoricalAccuracy,
)
from minikeras.metrics.base import Metric

__all__ = []  # private: reached through metrics.get("accuracy", loss=...)


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
        >>> m = mk.metrics.auto_accuracy._AutoAccuracy()
        >>> m([1, 0], [[0.2, 0.8], [0.6, 0.4]]), type(m.resolved).__name__
        (1.0, 'SparseCategoricalAccuracy')
    """

    _direction = "up"  # higher is better (for callbacks' mode="auto")

    # fit and evaluate weigh this metric by the model's output mask (as Keras's
    # MeanMetricWrapper reads the mask of y_pred).
    _uses_output_mask = True

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
            >>> m = mk.metrics.auto_accuracy._AutoAccuracy()
            >>> m.update_state([[1], [0]], [[0.9], [0.8]])
            >>> m.result()
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
            >>> mk.metrics.auto_accuracy._AutoAccuracy().result()
            0.0
        """
        return self.resolved.result() if self.resolved is not None else 0.0

    def reset_state(self):
        """Resets the chosen accuracy (the choice stays).

        Example:
            >>> m = mk.metrics.auto_accuracy._AutoAccuracy()
            >>> m([1], [[0.0, 1.0]])
            1.0
            >>> m.reset_state()
            >>> m.result()
            0.0
        """
        if self.resolved is not None:
            self.resolved.reset_state()


def _accuracy_for_loss(loss, name):
    """The accuracy a loss calls for: its kind of cross-entropy (focal too), else by the shapes."""
    if loss is None:
        return _AutoAccuracy(name=name)
    try:
        loss = losses.get(loss)  # a name, config or class becomes a function or Loss
    except ValueError:
        return _AutoAccuracy(name=name)
    fn, kwargs = loss, {}
    if isinstance(loss, losses.LossFunctionWrapper):
        fn, kwargs = loss.fn, loss._fn_kwargs
    if fn in (losses.sparse_categorical_crossentropy, losses.categorical_generalized_cross_entropy):
        return SparseCategoricalAccuracy(name=name)
    if fn in (losses.categorical_crossentropy, losses.categorical_focal_crossentropy):
        return CategoricalAccuracy(name=name)
    if fn in (losses.binary_crossentropy, losses.binary_focal_crossentropy):
        # sigmoid(logit) > 0.5 exactly when logit > 0.
        return BinaryAccuracy(name=name, threshold=0.0 if kwargs.get("from_logits") else 0.5)
    # Any other loss (mse on one-hot targets, say): by the shapes, as Keras 3 picks it.
    return _AutoAccuracy(name=name)
