"""`Sum`: the weighted sum of every value seen, as Keras's `metrics.Sum`."""

import numpy as np

from minikeras.metrics.base import Metric, _samplewise

__all__ = ["Sum"]


class Sum(Metric):
    """Weighted sum of all values seen: `sum(values * sample_weight)`.

    Values with more than one axis are summed to one value per sample; a
    `sample_weight` of shape (batch,) weighs each sample's sum. The total is a
    float64 variable (`self.total`), so the result does not depend on batching.

    Args:
        name: the metric's name.
        dtype: as in `Metric`.

    Example:
        >>> m = mk.metrics.Sum()
        >>> m.update_state([1.0, 3.0, 5.0, 7.0])
        >>> m.update_state([[1.0, 1.0]], sample_weight=[3.0])
        >>> m.result()
        22.0
    """

    def __init__(self, name="sum", dtype=None):
        super().__init__(dtype=dtype, name=name)
        self.total = self.add_variable((), "zeros", dtype="float64", name="total")

    def update_state(self, values, sample_weight=None):
        """Adds the (weighted) values of a batch to the total.

        Args:
            values: array-like; axis 0 indexes samples.
            sample_weight: None, or weights of shape (batch,) or broadcastable.

        Raises:
            ValueError: if `sample_weight` does not fit `values`.

        Example:
            >>> m = mk.metrics.Sum()
            >>> m.update_state([[1.0, 2.0], [3.0, 4.0]], [1.0, 0.5])
            >>> m.result()
            6.5
        """
        values, _ = _samplewise(self.name, values, sample_weight, reduce=np.sum)
        self.total.assign_add(np.sum(values))

    def result(self):
        """Returns the total so far.

        Returns:
            A Python float.

        Example:
            >>> mk.metrics.Sum()([2.0, 4.0])
            6.0
        """
        return float(self.total)
