"""`R2Score`: the coefficient of determination, from running weighted sums."""

import warnings

import numpy as np

from minikeras import losses
from minikeras.metrics.base import Metric

__all__ = ["R2Score"]

_AGGREGATIONS = (None, "uniform_average", "variance_weighted_average")


class R2Score(Metric):
    """Coefficient of determination R², per output column, over every batch seen.

        residual = sum(w * (y_true - y_pred) ** 2)
        total = sum(w * (y_true - mean_w(y_true)) ** 2)
        r2 = 1 - residual / total                       (0 where that is infinite)
        adjusted = 1 - (1 - r2) * (n - 1) / (n - num_regressors - 1)

    where `n` counts every value of `y_true` seen (rows times outputs,
    weights aside), as Keras counts it.

    1 is a perfect fit, 0 is no better than predicting the mean, below 0 is
    worse. Inputs are 2-D (batch_size, outputs); a (batch_size,) operand
    against a (batch_size, 1) one gains the output axis.

    Args:
        class_aggregation: how to combine the columns: None (one score each),
            `"uniform_average"` (their mean) or `"variance_weighted_average"`
            (weighted by each column's `total`).
        num_regressors: int >= 0; above 0, the adjusted R² for that many
            independent regressors (falling back, with a warning, to R² when
            there are too few samples).
        name: the metric's name.
        dtype: the dtype of a per-column result (`class_aggregation=None`).

    Raises:
        ValueError: for an unknown `class_aggregation` or a negative `num_regressors`.

    Example:
        >>> m = mk.metrics.R2Score()
        >>> m.update_state([[1.0], [4.0], [3.0]], [[2.0], [4.0], [4.0]])
        >>> round(m.result(), 6)  # 1 - 2 / (26 - 64 / 3)
        0.571429
    """

    _direction = "up"  # higher is better (for callbacks' mode="auto")

    def __init__(
        self, class_aggregation="uniform_average", num_regressors=0, name="r2_score", dtype=None
    ):
        super().__init__(name=name, dtype=dtype)
        if class_aggregation not in _AGGREGATIONS:
            raise ValueError(
                f"R2Score: class_aggregation must be one of {_AGGREGATIONS}, got "
                f"{class_aggregation!r}"
            )
        if (
            isinstance(num_regressors, bool)
            or not isinstance(num_regressors, (int, np.integer))
            or num_regressors < 0
        ):
            raise ValueError(f"R2Score: num_regressors must be an int >= 0, got {num_regressors!r}")
        self.class_aggregation = class_aggregation
        self.num_regressors = int(num_regressors)
        self.num_samples = self.add_variable((), "zeros", "float64", name="num_samples")
        self._sums = None  # (sum, squared_sum, residual, count) Variables, per output

    def update_state(self, y_true, y_pred, sample_weight=None):
        """Adds a batch to the weighted sums.

        Args:
            y_true: targets of shape (batch_size, outputs).
            y_pred: predictions of the same shape.
            sample_weight: None, or weights of shape (batch_size,) or
                (batch_size, outputs).

        Raises:
            ValueError: if the inputs are not 2-D of one shape (after the
                output axis is added), or the outputs differ from the first batch's.

        Example:
            >>> m = mk.metrics.R2Score(); m.update_state([1.0, 2.0], [[1.0], [2.0]]); m.result()
            1.0
        """
        y_true, y_pred = losses.squeeze_or_expand_to_same_rank(
            np.asarray(y_true, np.float64), np.asarray(y_pred, np.float64)
        )
        y_true, y_pred = np.asarray(y_true), np.asarray(y_pred)
        if y_true.ndim != 2 or y_true.shape != y_pred.shape:
            raise ValueError(
                f"Metric {self.name!r} expects y_true and y_pred of one 2-D shape (batch_size, "
                f"outputs); got y_true shape {y_true.shape} and y_pred shape {y_pred.shape}"
            )
        if self._sums is None:
            names = ("sum", "squared_sum", "residual", "count")
            outputs = y_true.shape[1]
            self._sums = [self.add_variable((outputs,), "zeros", "float64", name=n) for n in names]
        elif self._sums[0].shape[0] != y_true.shape[1]:
            raise ValueError(
                f"Metric {self.name!r} saw {self._sums[0].shape[0]} outputs so far; got a batch "
                f"with {y_true.shape[1]} (y_true shape {y_true.shape})"
            )
        weights = np.ones(1) if sample_weight is None else np.asarray(sample_weight, np.float64)
        if weights.ndim == 1:
            weights = weights[:, None]
        weights = np.broadcast_to(weights, y_true.shape)
        parts = (
            weights * y_true,
            weights * y_true * y_true,
            weights * (y_true - y_pred) ** 2,
            weights,
        )
        for variable, part in zip(self._sums, parts):
            variable.assign_add(part.sum(axis=0))
        self.num_samples.assign_add(y_true.size)  # (Keras's n: every value, weights aside)

    def result(self):
        """Returns R² (or the adjusted R²) so far; 0.0 before any batch.

        Returns:
            A Python float, or a numpy array of one score per output for
            `class_aggregation=None`.

        Example:
            >>> mk.metrics.R2Score().result()
            0.0
        """
        if self._sums is None:
            return 0.0
        total_sum, squared_sum, residual, count = (v.numpy() for v in self._sums)
        with np.errstate(divide="ignore", invalid="ignore"):
            mean = total_sum / count
            total = squared_sum - total_sum * mean
            scores = 1.0 - residual / total
        scores = np.where(np.isinf(scores), 0.0, scores)
        if self.class_aggregation == "uniform_average":
            score = float(np.mean(scores))
        elif self.class_aggregation == "variance_weighted_average":
            score = float(np.sum(total * scores) / np.sum(total))
        else:
            score = scores.astype(self.dtype)
        n, p = float(self.num_samples), self.num_regressors
        if p:
            if p > n - 1:
                warnings.warn(
                    "R2Score: more regressors than samples for the adjusted R2; "
                    "returning the plain R2",
                    UserWarning,
                    stacklevel=2,
                )
            elif p == n - 1:
                warnings.warn(
                    "R2Score: the adjusted R2 divides by zero (num_regressors == samples - 1); "
                    "returning the plain R2",
                    UserWarning,
                    stacklevel=2,
                )
            else:
                score = 1.0 - (1.0 - score) * (n - 1.0) / (n - p - 1.0)
        return score

    def get_config(self):
        """Returns the constructor arguments.

        Returns:
            A dict.

        Example:
            >>> mk.metrics.R2Score(num_regressors=2).get_config()["num_regressors"]
            2
        """
        return {
            **super().get_config(),
            "class_aggregation": self.class_aggregation,
            "num_regressors": self.num_regressors,
        }
