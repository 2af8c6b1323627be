"""What `compile` makes of its `loss`, `loss_weights`, `metrics` and `weighted_metrics`.

One output, or several: a model whose call returns a list (or a dict) of
outputs takes a loss per output, as a list in output order or a dict keyed by
output name (a single loss applies to every output), and metrics per output
(a list of lists, or a dict). Logs are named as Keras 3 names them:
`loss` (the total), then `<output>_loss` for each output when there are
several, then `<output>_<metric>`; a weighted metric whose name is taken
already becomes `weighted_<metric>`. Output names are the names of the layers
that make the outputs (the keys of a dict of outputs; `output_<i>` for a
subclassed model that returns a list).
"""

from numbers import Real

import numpy as np

from minikeras import losses as losses_module
from minikeras import metrics as metrics_module
from minikeras import ops
from minikeras.engine.tensor import Tensor
from minikeras.layers import call_checks

__all__ = ["CompileLoss", "CompileMetrics", "LossTracker", "output_names"]


class LossTracker(metrics_module.Mean):
    """The `loss` entry of the logs: the mean of the batch losses, weighted by batch size.

    A `Mean` with a fast path for what the training step gives it (a Python
    float and a batch size), so that tracking the loss costs no array work.

    Args:
        name: the log name.

    Example:
        >>> tracker = mk.trainers.compile_utils.LossTracker()
        >>> tracker.update_state(1.0, sample_weight=3); tracker.update_state(3.0, sample_weight=1)
        >>> tracker.result()
        1.5
    """

    def __init__(self, name="loss"):
        super().__init__(name=name)

    def update_state(self, values, sample_weight=None):
        """Adds a batch loss (a scalar) with weight `sample_weight` (the batch size).

        Args:
            values: the batch's loss, a number or a scalar tensor.
            sample_weight: its weight (an int, usually the batch size), or None for 1.

        Example:
            >>> t = mk.trainers.compile_utils.LossTracker(); t.update_state(2.0); t.result()
            2.0
        """
        if type(sample_weight) is int and type(values) is float:
            self.total += values * sample_weight
            self.count += sample_weight
            return
        if isinstance(values, Tensor) or np.ndim(values) == 0:
            weight = 1.0 if sample_weight is None else float(np.sum(sample_weight))
            self.total += float(values) * weight
            self.count += weight
            return
        super().update_state(values, sample_weight)


def output_names(model, y_pred):
    """The names of a model's outputs, in the order of the flat outputs.

    A dict of outputs is ordered by sorted key, as Keras 3 flattens it: a list
    of losses, loss weights or metrics given to `compile` follows that order.
    A functional model's outputs are named by the layers that make them; if
    two share a name (`Model(x, [y, y])`, two outputs of one layer), all are
    named by position, `output_0`, ..., in the logs and a loss dict. (Keras 3
    names both after the layer and logs one `<name>_loss`, the last one's.)

    Args:
        model: the model.
        y_pred: one batch of its outputs (to count them, or take a dict's keys).

    Returns:
        A list of strings.

    Example:
        >>> x = mk.Input((2,))
        >>> model = mk.Model(x, [mk.layers.Dense(1, name="a")(x), mk.layers.Dense(1, name="b")(x)])
        >>> mk.trainers.compile_utils.output_names(model, [0, 0])
        ['a', 'b']
        >>> y = mk.layers.Dense(1, name="a")(x)
        >>> mk.trainers.compile_utils.output_names(mk.Model(x, [y, y]), [0, 0])
        ['output_0', 'output_1']
    """
    if isinstance(y_pred, dict):
        return sorted(y_pred)
    count = len(y_pred) if isinstance(y_pred, (list, tuple)) else 1
    names = None
    if getattr(model, "_inputs", None) is not None:
        outputs = model.outputs
        names = [getattr(getattr(t, "node", None), "layer", None) for t in outputs]
        names = [layer.name if layer is not None else None for layer in names]
        if len(names) != count or None in names or len(set(names)) != count:
            names = None
    return names or [f"output_{i}" for i in range(count)]


def flat(structure, names):
    """A model's outputs (or targets) as a list in output order (dicts by name)."""
    if isinstance(structure, dict):
        missing = [name for name in names if name not in structure]
        if missing:
            raise ValueError(
                f"the targets are a dict keyed by output name, but lack {missing} "
                f"(the outputs are {names}); got keys {list(structure)}"
            )
        return [structure[name] for name in names]
    if isinstance(structure, (list, tuple)):
        return list(structure)
    return [structure]


def _per_output(value, names, what, make, every_output=False):
    """`value` (one entry, a list in output order, or a dict by name) as one entry per output.

    With `every_output` (a loss dict, as Keras 3 requires) a dict must name every
    output of a model with several; otherwise a missing one gets None.
    """
    if isinstance(value, dict):
        unknown = set(value) - set(names)
        if unknown:
            raise ValueError(
                f"compile: {what} has keys {sorted(unknown)} that are not output names; "
                f"the outputs are {names}"
            )
        missing = [name for name in names if name not in value]
        if every_output and missing and len(names) > 1:
            raise ValueError(
                f"compile: the {what} dict lacks the outputs {missing} (it has keys "
                f"{sorted(value)}; the outputs are {names}); give every output "
                f"a {what}, or None for an output that has none"
            )
        return [make(value.get(name)) for name in names]
    if isinstance(value, (list, tuple)) and len(names) > 1:
        if len(value) != len(names):
            raise ValueError(
                f"compile: {what} has {len(value)} entries but the model has {len(names)} "
                f"outputs {names}; give one per output, or a dict keyed by output name"
            )
        return [make(entry) for entry in value]
    return [make(value) for _ in names]


def _as_loss(identifier):
    if identifier is None:
        return None
    loss = losses_module.get(identifier)
    if not isinstance(loss, losses_module.Loss):
        # A plain function gives per-sample losses: reduce them as a Loss does.
        loss = losses_module.LossFunctionWrapper(loss)
    return loss


class CompileLoss:
    """The compiled loss of every output, weighted and summed; a tracker per output loss.

    The trackers (`<name>_loss`) exist when two or more outputs have a loss,
    as in Keras 3.

    Args:
        loss: the `compile` argument (one identifier, a list, or a dict by output name).
        loss_weights: None, a list of numbers (one per output) or a dict by output name.

    Example:
        >>> compiled = mk.trainers.compile_utils.CompileLoss("mse")
        >>> float(compiled(None, np.zeros((2, 1)), np.ones((2, 1)), None, None))
        1.0
    """

    def __init__(self, loss, loss_weights=None):
        entries = loss_weights.values() if isinstance(loss_weights, dict) else loss_weights
        entries = entries if isinstance(entries, (list, tuple, type({}.values()))) else [entries]
        for weight in entries:
            if weight is not None and (isinstance(weight, bool) or not isinstance(weight, Real)):
                raise TypeError(
                    f"compile: loss_weights must be numbers (a list or a dict by output name), "
                    f"got {loss_weights!r:.60}; metrics go in compile(metrics=[...])"
                )
        self.identifier, self.loss_weights = loss, loss_weights
        self.single = None if isinstance(loss, (list, tuple, dict)) else _as_loss(loss)
        self.names = self.losses = self.weights = None
        self.trackers = []

    def build(self, model, y_pred):
        """Resolves the losses per output, once the outputs are known."""
        names = output_names(model, y_pred)
        self.names = names
        if len(names) == 1 and isinstance(self.identifier, (list, tuple)):
            identifier = self.identifier[0] if len(self.identifier) == 1 else self.identifier
        else:
            identifier = self.identifier
        self.losses = _per_output(identifier, names, "loss", _as_loss, every_output=True)
        weights = self.loss_weights
        if weights is not None and not isinstance(weights, (list, tuple, dict)):
            weights = [weights]
        if len(names) == 1 and isinstance(weights, (list, tuple)) and len(weights) == 1:
            weights = weights[0]  # (one output's weight, not a list to multiply its loss by)
        if weights is None:
            self.weights = [None] * len(names)
        else:
            self.weights = _per_output(weights, names, "loss_weights", lambda w: w)
        # As Keras 3: a tracker per output loss only when two or more outputs have a loss.
        if sum(fn is not None for fn in self.losses) > 1:
            self.trackers = [
                LossTracker(f"{name}_loss") if fn is not None else None
                for name, fn in zip(names, self.losses)
            ]

    def __call__(self, model, y, y_pred, sample_weight, mask):
        """The weighted sum of the outputs' losses (None when no output has one)."""
        if self.names is None:
            self.build(model, y_pred)
        if len(self.names) == 1 and not isinstance(y_pred, (list, tuple, dict)):
            fn, weight = self.losses[0], self.weights[0]
            if fn is None:
                return None
            value = _one_loss(fn, y, y_pred, sample_weight, mask)
            return value if weight is None else value * weight
        predictions, targets = flat(y_pred, self.names), flat(y, self.names)
        weights = (
            flat(sample_weight, self.names) if isinstance(sample_weight, (list, dict)) else None
        )
        total = None
        for index, (fn, weight) in enumerate(zip(self.losses, self.weights)):
            if fn is None:
                continue
            w = weights[index] if weights is not None else sample_weight
            value = _one_loss(fn, targets[index], predictions[index], w, None)
            if self.trackers and self.trackers[index] is not None:
                self.trackers[index].update_state(float(value), len(targets[index]))
            value = value if weight is None else value * weight
            total = value if total is None else total + value
        return total


def _one_loss(fn, y, y_pred, sample_weight, mask):
    if y is None:
        raise ValueError(
            f"the compiled loss {fn.name!r} needs targets, but the data has no y; give y, "
            "or compile without a loss (a model that only uses add_loss, or a custom train_step)"
        )
    if mask is None or not call_checks.accepts(fn.__call__, "mask"):
        # (a Loss whose own __call__ takes no mask drops it, as it would in Keras)
        return fn(y, y_pred, sample_weight=sample_weight)
    return fn(y, y_pred, sample_weight=sample_weight, mask=mask)


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
        >>> compiled = mk.trainers.compile_utils.CompileMetrics(["mae"], None, "mse")
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
            if len(names) == 1:  # one output in a list or dict: its metrics are built single
                several, predictions, y = False, predictions[0], targets[0]
        else:
            predictions = _numpy(y_pred)
        for metric, index, weighted in self.entries:
            y_t, y_p = (targets[index], predictions[index]) if several else (y, predictions)
            # As in Keras, `metrics` are not weighted by sample or class weights; the metrics
            # that average a value per entry are weighted by the mask of the model's outputs.
            weight = sample_weight if weighted else None
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


def added_losses(model, loss, loss_sources=None):
    """`loss + sum(model.losses)`, each summed to a scalar: the loss Keras trains and reports.

    `loss_sources` (from `model._loss_sources()`) spares a walk over the model
    at every step; `fit` finds them once, when it starts. `loss` may be None
    (no compiled loss): then the added losses alone, or None if there are none.
    """
    sources = model._loss_sources() if loss_sources is None else loss_sources
    for added in model._gather_losses(sources):
        added = ops.sum(added)
        loss = added if loss is None else loss + added
    return loss
