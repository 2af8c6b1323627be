"""The metrics a model reports: `metrics`, `metrics_names`, `reset_metrics`, `get_metrics_result`.

`ModelMetrics` is a base of `ModelSteps`, and so of `Model`: the list of
metrics `fit` and `evaluate` report, in the order Keras 3 tracks them (the loss
tracker, the compiled metrics, then the `Metric`s the model holds), and
their current values as the logs dict. `python_logs` gives a logs dict's
scalars as Python floats. The steps that update the metrics are in
`model_steps.py` (and their bodies in `minikeras.trainers.steps`).
"""

import numpy as np

from minikeras.engine.tensor import Tensor
from minikeras.metrics.base import Metric

__all__ = ["ModelMetrics", "python_logs"]


class ModelMetrics:
    """The metrics of a model, as `fit` reports them; a base of `ModelSteps` (see the module).

    Example:
        >>> model = mk.Sequential([mk.layers.Dense(1)])
        >>> model.compile("sgd", "mse", metrics=["mae"])
        >>> model.metrics_names
        ['loss', 'mae']
    """

    _step_cache = None  # set by fit: the weights, loss sources and metrics found once

    @property
    def metrics(self):
        """The metrics `fit` reports: the loss tracker, the compiled metrics, then the user's.

        Per-output loss trackers follow the loss tracker for a model with
        several outputs (from the first step on, once the outputs are
        known); the `Metric`s the model holds as attributes (or in a list,
        tuple or dict attribute) come last, as Keras tracks them.

        Differs from Keras 3, which groups the compiled metrics into one
        entry named `"compile_metrics"` (whose own `metrics` hold them), set
        right after the loss tracker and before the per-output loss
        trackers: for two outputs `a`, `b` with a loss and a metric each,
        Keras lists `loss, compile_metrics, a_loss, b_loss` where minikeras
        lists `loss, a_loss, b_loss, a_mae, b_mse`, and for one output,
        `loss, compile_metrics` where minikeras lists `loss, mae`. minikeras
        keeps each metric in the list so that a custom `train_step` can
        update and read them one by one. The logs, and `evaluate`'s list,
        are the same in both.

        Returns:
            A list of `Metric`s (empty before `compile`).

        Example:
            >>> model = mk.Sequential([mk.layers.Dense(1)])
            >>> model.compile("sgd", "mse", metrics=["mae"])
            >>> [m.name for m in model.metrics]
            ['loss', 'mae']
        """
        cache = self._step_cache
        if cache is not None and cache.metrics is not None:
            return cache.metrics
        found = []
        if self.compiled:
            if self._loss_tracker is not None:
                found.append(self._loss_tracker)
            if self._compile_loss is not None:
                found.extend(t for t in self._compile_loss.trackers if t is not None)
            found.extend(self._compile_metrics.metrics)
        for value in vars(self).values():
            if isinstance(value, dict):
                value = value.values()
            elif not isinstance(value, (list, tuple)):
                value = (value,)
            for item in value:  # (as Keras tracks them: attributes, lists, tuples, dicts)
                if isinstance(item, Metric) and all(item is not m for m in found):
                    found.append(item)
        return found

    def _metrics_known(self):
        """Whether `metrics` is complete (per-output ones exist from the first step on)."""
        if not self.compiled:
            return True
        loss_built = self._compile_loss is None or self._compile_loss.names is not None
        return loss_built and self._compile_metrics.entries is not None

    @property
    def metrics_names(self):
        """The names of `metrics`, in order.

        Differs from Keras 3 as `metrics` does: each compiled metric by its
        own name (`['loss', 'mae']`) where Keras 3 gives one
        `'compile_metrics'` (`['loss', 'compile_metrics']`).

        Example:
            >>> model = mk.Sequential([mk.layers.Dense(1)]); model.compile("sgd", "mse")
            >>> model.metrics_names
            ['loss']
        """
        return [metric.name for metric in self.metrics]

    def reset_metrics(self):
        """Resets every metric in `metrics`; `fit` calls it at the start of each epoch.

        Returns:
            None.

        Example:
            >>> model = mk.Sequential([mk.layers.Dense(1)]); model.compile("sgd", "mse")
            >>> model.metrics[0].update_state(2.0); model.reset_metrics()
            >>> model.metrics[0].result()
            0.0
        """
        for metric in self.metrics:
            metric.reset_state()

    def get_metrics_result(self):
        """The current value of every metric in `metrics`, as a dict of floats.

        Returns:
            A dict `{name: value}`.

        Example:
            >>> model = mk.Sequential([mk.layers.Dense(1)]); model.compile("sgd", "mse")
            >>> model.get_metrics_result()
            {'loss': 0.0}
        """
        logs = {}
        for metric in self.metrics:  # (python_logs, without a second dict: it runs every step)
            value = metric.result()
            logs[metric.name] = value if type(value) is float else _python(value)
        return logs


def python_logs(logs):
    """The logs with Python floats for scalars and float32 arrays for the rest.

    A metric's result may be a Tensor or a numpy scalar; a metric with one value
    per class (`F1Score(average=None)`) keeps its array, as in Keras's logs.

    Args:
        logs: a dict of metric results.

    Returns:
        A new dict.

    Example:
        >>> mk.models.model_metrics.python_logs({"loss": np.float32(0.5), "f1": np.ones(2)})
        {'loss': 0.5, 'f1': array([1., 1.], dtype=float32)}
    """
    return {key: value if type(value) is float else _python(value) for key, value in logs.items()}


def _python(value):
    array = np.asarray(value.numpy() if isinstance(value, Tensor) else value)
    return float(array) if array.ndim == 0 else array.astype(np.float32)
