"""IoU for other kinds of targets and predictions: `BinaryIoU`, `OneHotIoU`, `OneHotMeanIoU`.

Each is `IoU` (or `MeanIoU`) with its inputs turned into class ids first: scores
thresholded into classes 0 and 1, or one-hot rows into their argmax.
"""

import numpy as np

from minikeras.metrics.iou import IoU, MeanIoU

__all__ = ["BinaryIoU", "OneHotIoU", "OneHotMeanIoU"]


class BinaryIoU(IoU):
    """Intersection-over-union of a binary task, from scores thresholded into classes 0 and 1.

        predicted class = 1 if y_pred >= threshold else 0
        result = mean of iou[c] over c in target_class_ids present (see `IoU`)

    `target_class_ids=[1]` gives the IoU of the positives alone, `[0]` of the
    negatives, `[0, 1]` (the default) their mean. The targets are 0/1 (cast
    to int).

    Args:
        target_class_ids: list of classes to average over, each 0 or 1.
        threshold: float; a score `>= threshold` predicts class 1.
        name: the metric's name.
        dtype: as in `Metric`.

    Raises:
        ValueError: if a target class id is not 0 or 1.

    Example:
        >>> m = mk.metrics.BinaryIoU(target_class_ids=[1], threshold=0.3)
        >>> round(m([0, 1, 0, 1], [0.1, 0.2, 0.4, 0.7]), 6)  # predicted 0, 0, 1, 1: 1 / (1 + 1 + 1)
        0.333333
    """

    def __init__(self, target_class_ids=(0, 1), threshold=0.5, name=None, dtype=None):
        super().__init__(num_classes=2, target_class_ids=target_class_ids, name=name, dtype=dtype)
        if isinstance(threshold, bool) or not isinstance(threshold, (int, float, np.number)):
            raise ValueError(f"BinaryIoU: threshold must be a float, got {threshold!r}")
        self.threshold = float(threshold)

    def update_state(self, y_true, y_pred, sample_weight=None):
        """Adds a batch: the scores become class 1 at `threshold` or above, else class 0.

        Args:
            y_true: 0/1 targets.
            y_pred: scores, as many as the targets.
            sample_weight: None, or weights of the targets' shape, or of a leading
                part of it such as (batch,).

        Raises:
            ValueError: if targets and scores hold different numbers of values.

        Example:
            >>> m = mk.metrics.BinaryIoU()
            >>> m.update_state([1, 1], [0.5, 0.4]); m.total_cm.numpy()
            array([[0., 0.],
                   [1., 1.]])
        """
        y_true = np.asarray(y_true)
        # Keras compares float32 scores with the threshold.
        y_pred = np.asarray(y_pred, dtype=np.float32) >= np.float32(self.threshold)
        super().update_state(y_true.astype(np.float64), y_pred, sample_weight)

    def get_config(self):
        """Returns the constructor arguments.

        Returns:
            A dict.

        Example:
            >>> mk.metrics.BinaryIoU(threshold=0.3).get_config()["threshold"]
            0.3
        """
        return {
            "target_class_ids": self.target_class_ids,
            "threshold": self.threshold,
            "name": self.name,
            "dtype": self.dtype,
        }


class OneHotIoU(IoU):
    """`IoU` for one-hot targets: each target row's argmax is its class.

    The predictions are scores (their argmax is the predicted class) unless
    `sparse_y_pred=True`, when they are class ids.

    Args:
        num_classes: positive int, the number of classes.
        target_class_ids: list of the class ids to average over.
        name: the metric's name.
        dtype: as in `Metric`.
        ignore_class: None, or a target class id to leave out.
        sparse_y_pred: whether predictions are class ids (False: scores).
        axis: the class axis.

    Raises:
        ValueError: if `num_classes` is not positive or a target class id is
            outside [0, num_classes).

    Example:
        >>> m = mk.metrics.OneHotIoU(num_classes=3, target_class_ids=[0, 2])
        >>> y_true = [[0, 0, 1], [1, 0, 0], [0, 1, 0], [1, 0, 0]]
        >>> y_pred = [[0.2, 0.3, 0.5], [0.1, 0.2, 0.7], [0.5, 0.3, 0.1], [0.1, 0.4, 0.5]]
        >>> round(m(y_true, y_pred), 6)  # class 0: 0 / 3; class 2: 1 / 3
        0.166667
    """

    def __init__(
        self,
        num_classes,
        target_class_ids,
        name=None,
        dtype=None,
        ignore_class=None,
        sparse_y_pred=False,
        axis=-1,
    ):
        super().__init__(
            num_classes,
            target_class_ids,
            name=name,
            dtype=dtype,
            ignore_class=ignore_class,
            sparse_y_true=False,
            sparse_y_pred=sparse_y_pred,
            axis=axis,
        )

    def get_config(self):
        """Returns the constructor arguments (no `sparse_y_true`: it is always False).

        Returns:
            A dict.

        Example:
            >>> mk.metrics.OneHotIoU(num_classes=3, target_class_ids=[1]).get_config()[
            ...     "sparse_y_pred"
            ... ]
            False
        """
        config = super().get_config()
        del config["sparse_y_true"]
        return config


class OneHotMeanIoU(MeanIoU):
    """`MeanIoU` for one-hot targets: each target row's argmax is its class.

    Args:
        num_classes: positive int, the number of classes.
        name: the metric's name.
        dtype: as in `Metric`.
        ignore_class: None, or a target class id to leave out.
        sparse_y_pred: whether predictions are class ids (False: scores).
        axis: the class axis.

    Raises:
        ValueError: if `num_classes` is not positive.

    Example:
        >>> m = mk.metrics.OneHotMeanIoU(num_classes=3)
        >>> y_true = [[0, 0, 1], [1, 0, 0], [0, 1, 0], [1, 0, 0]]
        >>> y_pred = [[0.2, 0.3, 0.5], [0.1, 0.2, 0.7], [0.5, 0.3, 0.1], [0.1, 0.4, 0.5]]
        >>> round(m(y_true, y_pred), 6)  # classes 0, 1, 2: 0, 0, 1 / 3
        0.111111
    """

    def __init__(
        self,
        num_classes,
        name=None,
        dtype=None,
        ignore_class=None,
        sparse_y_pred=False,
        axis=-1,
    ):
        super().__init__(
            num_classes,
            name=name,
            dtype=dtype,
            ignore_class=ignore_class,
            sparse_y_true=False,
            sparse_y_pred=sparse_y_pred,
            axis=axis,
        )

    def get_config(self):
        """Returns the constructor arguments (no `sparse_y_true`: it is always False).

        Returns:
            A dict.

        Example:
            >>> mk.metrics.OneHotMeanIoU(num_classes=3).get_config()["num_classes"]
            3
        """
        config = super().get_config()
        del config["sparse_y_true"]
        return config
