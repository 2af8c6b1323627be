"""What `compile` makes of its `metrics` and `weighted_metrics`: `CompileMetrics`.

Metrics per output (a list, a list of lists, or a dict by output name), named
in the logs as Keras 3 names them: `<output>_<metric>` when there are several
outputs; a weighted metric whose name is taken already becomes
`weighted_<metric>`.
"""

import numpy as np

from minikeras import metrics as metrics_module
from minikeras.engine.tensor import Tensor
from minikeras.trainers.compile_outputs import _per_output, flat, one_output, output_names

__all__ = ["CompileMetrics"]


def _make_metric(identifier, loss):
    metric = metrics_module.get(identifier, loss=loss)
    if isinstance(identifier, str):
        metric.name = identifier
    return metric


def _one_output(value, name, what):
    """The metrics of a model's one output, from a list, a list of lists or a dict by name."""
    if isinstance(value, dict):
        unknown = set(value) - {name}
        if unknown:  # (Keras takes any key here; a typo is more likely than intent)
            raise ValueError(
                f"compile: {what} has keys {sorted(unknown)} that are not output names; "
                f"the output is {name!r}"
            )
        value = value.get(name)
    if not isinstance(value, (list, tuple)):
        return value
    return [m for entry in value for m in (entry if isinstance(entry, (list, tuple)) else [entry])]


def _metric_list(entry, loss):
    if entry is None:
        return []
    entries = entry if isinstance(entry, (list, tuple)) else [entry]
    return [_make_metric(identifier, loss) for identifier in entries]


class CompileMetrics:
    """The compiled metrics and weighted metrics, per output, with their log names.

    Args:
        metrics: the `compile` argument: a list (one output; also a list
            of lists, or a dict by the output's name, as Keras takes them);
            for several outputs, a list with an entry (a metric or a list)
            per output, or a dict by output name.
        weighted_metrics: likewise; these are weighted by the sample weights.
        loss: the compiled loss identifier (for `"accuracy"`).

    Example:
        >>> compiled = mk.trainers.compile_metrics.CompileMetrics(["mae"], None, "mse")
        >>> [m.name for m in compiled.metrics]
        ['mae']
    """

    def __init__(self, metrics, weighted_metrics, loss):
        for what, value in (("metrics", metrics), ("weighted_metrics", weighted_metrics)):
            if value is not None and not isinstance(value, (list, tuple, dict)):
                raise TypeError(
                    f"compile: {what} must be a list (or a dict by output), got {value!r:.60} "
                    f"of type {type(value).__name__}; write {what}=[{value!r:.40}]"
                )
        self.user_metrics, self.user_weighted = metrics, weighted_metrics
        self.loss = loss
        self.entries = None  # (metric, output index or None, weighted)
        self.metrics = []
        if not isinstance(metrics, dict) and not isinstance(weighted_metrics, dict):
            nested = any(isinstance(m, (list, tuple)) for m in (metrics or []))
            nested = nested or any(isinstance(m, (list, tuple)) for m in (weighted_metrics or []))
            if not nested:  # one output: known now, as `model.metrics` shows after compile
                self._build_single()

    def _build_single(self, name=None):
        # As Keras 3, one output also takes a dict by its name and a list of lists.
        plain = _one_output(self.user_metrics, name, "metrics")
        weighted = _one_output(self.user_weighted, name, "weighted_metrics")
        self.entries = [(m, None, False) for m in _metric_list(plain, self.loss)]
        self.entries += [(m, None, True) for m in _metric_list(weighted, self.loss)]
        self._name_entries(None)

    def needs_build(self, y_pred):
        """Whether `build` must (re)resolve the metrics for outputs like `y_pred`."""
        if self.entries is None:
            return True
        several = isinstance(y_pred, (list, tuple, dict)) and len(y_pred) > 1
        return several and any(index is None for _, index, _ in self.entries)

    def build(self, model, y_pred):
        """Resolves the metrics per output, once the outputs are known."""
        names = output_names(model, y_pred)
        if len(names) == 1:
            self._build_single(names[0])
            return
        losses = self.loss if isinstance(self.loss, (list, tuple, dict)) else None
        per_loss = (
            _per_output(losses, names, "loss", lambda x: x) if losses else [self.loss] * len(names)
        )
        self.entries = []
        for weighted, value in ((False, self.user_metrics), (True, self.user_weighted)):
            if value is None:
                continue
            # As in Keras 3: a list holds one entry (a metric or a list) per output.
            what = "weighted_metrics" if weighted else "metrics"
            per_output = _per_output(value, names, what, lambda v: v)
            for index, entry in enumerate(per_output):
                self.entries += [(m, index, weighted) for m in _metric_list(entry, per_loss[index])]
        self._name_entries(names)

    def _name_entries(self, names):
        taken = set()
        for metric, index, weighted in self.entries:
            prefix = "" if index is None or names is None else f"{names[index]}_"
            name = prefix + metric.name
            if name in taken:
                name = prefix + ("weighted_" if weighted else "") + metric.name
                count = 1
                while name in taken:
                    name, count = f"{prefix}{metric.name}_{count}", count + 1
            taken.add(name)
            metric.name = name
        self.metrics = [metric for metric, _, _ in self.entries]

    def update_state(self, model, y, y_pred, sample_weight, mask):
        """Updates every metric with one batch (numpy predictions)."""
        if self.entries is None or (self.entries and self.needs_build(y_pred)):
            self.build(model, y_pred)
        if not self.entries:
            return
        several = isinstance(y_pred, (list, tuple, dict))
        if several:
            names = output_names(model, y_pred)
            predictions = [_numpy(p) for p in flat(y_pred, names)]
            targets = flat(y, names)
            # As Keras 3: nested sample weights go one per output.
            weights = (
                flat(sample_weight, names)
                if isinstance(sample_weight, (list, tuple, dict))
                else None
            )
            if len(names) == 1:  # one output in a list or dict: its metrics are built single
                several, predictions, y = False, predictions[0], targets[0]
                sample_weight = sample_weight if weights is None else weights[0]
        else:
            predictions = _numpy(y_pred)
            y, sample_weight = (
                one_output(y, model, y_pred),
                one_output(sample_weight, model, y_pred),
            )
        for metric, index, weighted in self.entries:
            y_t, y_p = (targets[index], predictions[index]) if several else (y, predictions)
            # As in Keras, `metrics` are not weighted by sample or class weights; the metrics
            # that average a value per entry are weighted by the mask of the model's outputs.
            weight = None if not weighted else sample_weight
            if weighted and several and weights is not None:
                weight = weights[index]
            if mask is not None and not several and getattr(metric, "_uses_output_mask", False):
                m = mask.astype(np.float64)
                if weight is not None:  # (batch,) or (batch, steps) weights on the mask's axes
                    weight = np.asarray(weight)
                    if weight.ndim == m.ndim + 1 and weight.shape[-1] == 1:
                        weight = weight[..., 0]  # (batch, steps, 1), as Keras squeezes it
                    weight = m * weight.reshape(weight.shape + (1,) * (m.ndim - weight.ndim))
                else:
                    weight = m
            if weight is None:
                metric.update_state(y_t, y_p)
            else:
                metric.update_state(y_t, y_p, sample_weight=weight)


def _numpy(value):
    return value.numpy() if isinstance(value, Tensor) else value
