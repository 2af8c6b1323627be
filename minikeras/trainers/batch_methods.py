"""`BatchMethods`: `train_on_batch`, `test_on_batch` and `predict_on_batch`.

One step on one batch, outside `fit`, `evaluate` and `predict`: the data
checked and the model built as those do, the metrics reset first, and the
logs given as a list (or a dict). A base class of `Trainer`.
"""

from minikeras.layers import tracking
from minikeras.trainers.array_data import _as_input, _Data
from minikeras.trainers.evaluation import _result, as_numpy_outputs
from minikeras.trainers.steps import python_logs
from minikeras.trainers.training_state import StepCache, build_on, weights_for_training

__all__ = ["BatchMethods"]


class BatchMethods:
    """The one-batch methods of `Model` (through `Trainer`): one step, no loop.

    Example:
        >>> model = mk.Sequential([mk.layers.Dense(1, kernel_initializer="zeros")])
        >>> model.compile("sgd", "mse")
        >>> model.test_on_batch(np.ones((4, 2)), np.ones((4, 1)))
        1.0
    """

    def train_on_batch(self, x, y=None, sample_weight=None, class_weight=None, return_dict=False):
        """Runs one training step (`train_step`) on one batch.

        Args:
            x: input data of one batch.
            y: targets of the batch.
            sample_weight: optional per-sample weights.
            class_weight: optional dict of class index -> weight.
            return_dict: return a dict of logs instead of a list.

        Returns:
            The loss (a float) if there are no metrics, else `[loss, *metrics]`,
            or a dict with `return_dict=True`.

        Raises:
            RuntimeError: if the model is not compiled.

        Example:
            >>> from minikeras import Sequential, layers
            >>> model = Sequential([layers.Dense(1)])
            >>> model.compile("sgd", "mse")
            >>> isinstance(model.train_on_batch(np.ones((4, 2)), np.ones((4, 1))), float)
            True
        """
        self._check_compiled("train_on_batch")
        data = _Data(
            x, y, sample_weight, self.dtype, "train_on_batch", class_weight, need_y=self._needs_y()
        )
        build_on(self, data.x)
        self._build_compiled()
        cache = self._batch_step_cache()
        object.__setattr__(self, "_step_cache", cache)
        try:
            self.reset_metrics()
            logs = self.train_step((data.x, data.y, data.sample_weight))
        finally:
            object.__setattr__(self, "_step_cache", None)
        return _result(python_logs(logs), return_dict)

    def _batch_step_cache(self):
        """A `StepCache` for one batch, from walks over the model made once.

        The weights, the loss sources and the metrics stay what they were
        while nothing the model tracks changes and the model is not compiled
        again: while `tracking.weight_lists` gives the same tuple, which it
        makes anew after a `TrackingGeneration` move (a Metric set as an
        attribute counts) or a change inside a list or dict it walked (a
        Metric appended to a list attribute, a layer removed from one).
        """
        tracked = tracking.weight_lists(self)
        key = (id(self._compile_metrics), id(self.optimizer))
        found = self.__dict__.get("_batch_cache")
        if found is None or found[0] is not tracked or found[1] != key:
            weights, loss_sources = weights_for_training(self)  # one walk finds both
            found = [tracked, key, weights, loss_sources, None]
            object.__setattr__(self, "_batch_cache", found)
        if found[4] is None and self._metrics_known():
            found[4] = self.metrics  # (per-output trackers exist after the first step)
        return StepCache(found[2], found[3], found[4])

    def test_on_batch(self, x, y=None, sample_weight=None, return_dict=False):
        """Computes the loss and metrics on one batch (`test_step`), without training.

        Args:
            x: input data of one batch.
            y: targets of the batch.
            sample_weight: optional per-sample weights.
            return_dict: return a dict of logs instead of a list.

        Returns:
            Like `train_on_batch`.

        Raises:
            RuntimeError: if the model is not compiled.

        Example:
            >>> from minikeras import Sequential, layers
            >>> model = Sequential([layers.Dense(1, kernel_initializer="zeros")])
            >>> model.compile("sgd", "mse")
            >>> model.test_on_batch(np.ones((4, 2)), np.ones((4, 1)))
            1.0
        """
        self._check_compiled("test_on_batch")
        data = _Data(x, y, sample_weight, self.dtype, "test_on_batch", need_y=self._needs_y())
        build_on(self, data.x)
        self._build_compiled()
        self.reset_metrics()
        logs = self.test_step((data.x, data.y, data.sample_weight))
        return _result(python_logs(logs), return_dict)

    def predict_on_batch(self, x):
        """The model's outputs for one batch (`predict_step`), as numpy arrays.

        Args:
            x: input data of one batch.

        Returns:
            A numpy array (or a list of them for several outputs).

        Example:
            >>> model = mk.Sequential([mk.layers.Dense(3)])
            >>> model.predict_on_batch(np.ones((2, 4))).shape
            (2, 3)
        """
        return as_numpy_outputs([self.predict_step((_as_input(x, self.dtype, "predict"),))])
