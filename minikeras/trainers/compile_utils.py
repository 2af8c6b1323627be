"""What `compile` makes of its `loss` and `loss_weights`, and the loss of a step.

A loss per output, as a list in output order or a dict keyed by output name
(a single loss applies to every output; see `compile_outputs`). Logs are
named as Keras 3 names them: `loss` (the total), then `<output>_loss` for
each output when there are several. The metrics are `compile_metrics`'s;
`CompileMetrics` and `output_names` are also importable from here.
"""

from numbers import Real

import numpy as np

from minikeras import losses as losses_module
from minikeras import metrics as metrics_module
from minikeras import ops
from minikeras.engine.tensor import Tensor
from minikeras.layers import call_checks
from minikeras.trainers.compile_metrics import CompileMetrics
from minikeras.trainers.compile_outputs import _per_output, flat, one_output, output_names

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
            y, sample_weight = (
                one_output(y, model, y_pred),
                one_output(sample_weight, model, y_pred),
            )
            value = _one_loss(fn, y, y_pred, sample_weight, mask)
            return value if weight is None else value * weight
        predictions, targets = flat(y_pred, self.names), flat(y, self.names)
        weights = (
            flat(sample_weight, self.names)
            if isinstance(sample_weight, (list, tuple, dict))
            else None
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
