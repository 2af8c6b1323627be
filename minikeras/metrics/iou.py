"""Intersection-over-union metrics, `IoU` and `MeanIoU`, from a weighted confusion matrix.

For each class, `iou = tp / (tp + fp + fn)`; the metrics average it over
target classes that occurred (in the targets or the predictions).
"""

import numpy as np

from minikeras import config
from minikeras.metrics.base import Metric

__all__ = ["IoU", "MeanIoU"]


class IoU(Metric):
    """Intersection-over-union for the given classes, averaged over those present.

        iou[c] = tp[c] / (tp[c] + fp[c] + fn[c])
        result = mean of iou[c] over c in target_class_ids with tp + fp + fn > 0

    The counts come from a confusion matrix summed over every batch seen.
    Labels outside [0, num_classes), and targets equal to `ignore_class`, do
    not count. The matrix is float64, so fractional sample weights count as
    given (Keras keeps it in integers and truncates them).

    Args:
        num_classes: positive int, the number of classes.
        target_class_ids: list of the class ids to average over.
        name: the metric's name.
        dtype: as in `Metric`.
        ignore_class: None, or a target class id to leave out (a "void" class).
        sparse_y_true: whether targets are class ids; False takes the argmax along `axis`.
        sparse_y_pred: whether predictions are class ids; False takes the argmax along `axis`.
        axis: the class axis of dense targets or predictions.

    Raises:
        ValueError: if `num_classes` is not positive or a target class id is
            outside [0, num_classes).

    Example:
        >>> m = mk.metrics.IoU(num_classes=2, target_class_ids=[0])
        >>> round(m([0, 0, 1, 1], [0, 1, 0, 1]), 6)  # class 0: tp 1, fp 1, fn 1
        0.333333
    """

    _direction = "up"  # higher is better (for callbacks' mode="auto")

    def __init__(
        self,
        num_classes,
        target_class_ids,
        name=None,
        dtype=None,
        ignore_class=None,
        sparse_y_true=True,
        sparse_y_pred=True,
        axis=-1,
    ):
        super().__init__(name=name, dtype=dtype)
        if isinstance(num_classes, bool) or not isinstance(num_classes, (int, np.integer)):
            raise ValueError(
                f"{type(self).__name__}: num_classes must be an int, got {num_classes!r}"
            )
        if num_classes < 1:
            raise ValueError(f"{type(self).__name__}: num_classes must be >= 1, got {num_classes}")
        target_class_ids = [int(class_id) for class_id in target_class_ids]
        if not target_class_ids or not all(0 <= c < num_classes for c in target_class_ids):
            raise ValueError(
                f"{type(self).__name__}: target_class_ids must be class ids in [0, "
                f"{num_classes}), got {target_class_ids}"
            )
        self.num_classes = int(num_classes)
        self.target_class_ids = target_class_ids
        self.ignore_class = None if ignore_class is None else int(ignore_class)
        self.sparse_y_true = bool(sparse_y_true)
        self.sparse_y_pred = bool(sparse_y_pred)
        self.axis = int(axis)
        shape = (self.num_classes, self.num_classes)
        self.total_cm = self.add_variable(shape, "zeros", "float64", name="total_confusion_matrix")

    def update_state(self, y_true, y_pred, sample_weight=None):
        """Adds a batch to the confusion matrix (rows: targets, columns: predictions).

        Args:
            y_true: class ids (or dense scores with `sparse_y_true=False`).
            y_pred: class ids (or dense scores with `sparse_y_pred=False`).
            sample_weight: None, or weights of the labels' shape, or of a leading
                part of it such as (batch,) (trailing axes are broadcast).

        Raises:
            ValueError: if targets and predictions hold different numbers of labels.

        Example:
            >>> m = mk.metrics.MeanIoU(num_classes=2)
            >>> m.update_state([0, 1], [0, 0])
            >>> m.total_cm.numpy()
            array([[1., 0.],
                   [1., 0.]])
        """
        y_true, y_pred = np.asarray(y_true), np.asarray(y_pred)
        if not self.sparse_y_true:
            y_true = np.argmax(y_true, axis=self.axis)
        if not self.sparse_y_pred:
            y_pred = np.argmax(y_pred, axis=self.axis)
        if y_true.size != y_pred.size:
            raise ValueError(
                f"Metric {self.name!r}: y_true and y_pred must hold as many labels; got "
                f"y_true shape {y_true.shape} and y_pred shape {y_pred.shape}"
            )
        weights = np.ones(y_true.shape)
        if sample_weight is not None:
            weights = np.asarray(sample_weight, np.float64)
            given_shape = weights.shape
            if weights.size == y_true.size:
                weights = weights.reshape(y_true.shape)
            weights = weights.reshape(weights.shape + (1,) * (y_true.ndim - weights.ndim))
            try:
                weights = np.broadcast_to(weights, y_true.shape)
            except ValueError:
                raise ValueError(
                    f"Metric {self.name!r}: sample_weight of shape {given_shape} does not fit "
                    f"labels of shape {y_true.shape}"
                ) from None
        y_true = y_true.reshape(-1).astype(np.int64)
        y_pred = y_pred.reshape(-1).astype(np.int64)
        weights = weights.reshape(-1)
        keep = (y_true >= 0) & (y_true < self.num_classes) & (y_pred >= 0)
        keep &= y_pred < self.num_classes
        if self.ignore_class is not None:
            keep &= y_true != self.ignore_class
        cells = y_true[keep] * self.num_classes + y_pred[keep]
        counts = np.bincount(cells, weights=weights[keep], minlength=self.num_classes**2)
        self.total_cm.assign_add(counts.reshape(self.num_classes, self.num_classes))

    def result(self):
        """Returns the mean IoU over the target classes present (0.0 if none).

        Returns:
            A Python float.

        Example:
            >>> mk.metrics.IoU(num_classes=3, target_class_ids=[1]).result()
            0.0
        """
        matrix = self.total_cm.numpy()
        true_positives = np.diag(matrix)
        denominator = matrix.sum(axis=0) + matrix.sum(axis=1) - true_positives
        true_positives = true_positives[self.target_class_ids]
        denominator = denominator[self.target_class_ids]
        valid = denominator > 1e-9
        iou = np.where(valid, true_positives / (denominator + config.epsilon()), 0.0)
        return float(np.sum(iou) / (np.sum(valid) + config.epsilon()))

    def get_config(self):
        """Returns the constructor arguments.

        Returns:
            A dict.

        Example:
            >>> mk.metrics.IoU(num_classes=4, target_class_ids=[2, 3]).get_config()[
            ...     "target_class_ids"
            ... ]
            [2, 3]
        """
        return {
            **super().get_config(),
            "num_classes": self.num_classes,
            "target_class_ids": self.target_class_ids,
            "ignore_class": self.ignore_class,
            "sparse_y_true": self.sparse_y_true,
            "sparse_y_pred": self.sparse_y_pred,
            "axis": self.axis,
        }


class MeanIoU(IoU):
    """Intersection-over-union averaged over every class present (see `IoU`).

    Args:
        num_classes: positive int, the number of classes.
        name: the metric's name.
        dtype: as in `Metric`.
        ignore_class: None, or a target class id to leave out.
        sparse_y_true: whether targets are class ids.
        sparse_y_pred: whether predictions are class ids.
        axis: the class axis of dense targets or predictions.

    Raises:
        ValueError: if `num_classes` is not positive.

    Example:
        >>> m = mk.metrics.MeanIoU(num_classes=2)
        >>> round(m([0, 0, 1, 1], [0, 1, 0, 1]), 6)  # 1/3 for each class
        0.333333
    """

    def __init__(
        self,
        num_classes,
        name=None,
        dtype=None,
        ignore_class=None,
        sparse_y_true=True,
        sparse_y_pred=True,
        axis=-1,
    ):
        super().__init__(
            num_classes,
            target_class_ids=(
                range(num_classes) if isinstance(num_classes, (int, np.integer)) else [0]
            ),
            name=name,
            dtype=dtype,
            ignore_class=ignore_class,
            sparse_y_true=sparse_y_true,
            sparse_y_pred=sparse_y_pred,
            axis=axis,
        )

    def get_config(self):
        """Returns the constructor arguments (no `target_class_ids`).

        Returns:
            A dict.

        Example:
            >>> mk.metrics.MeanIoU(num_classes=3).get_config()["num_classes"]
            3
        """
        config = super().get_config()
        del config["target_class_ids"]
        return config
