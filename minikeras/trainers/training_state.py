"""What `fit` keeps around its loop: the weights it trains, their state, and its reports.

- `weights_for_training`: the trainable weights and loss sources, found once
  per `fit` (a walk over the model costs tens of microseconds);
- `report_unchanged`: after `fit`, the trainable weights whose values never
  changed, named in a `TrackingWarning` (custom `train_step`s included);
- `saved_state` / `restore_state`: the weights and optimizer variables, for
  going back when streamed data fails part-way;
- `user_stacklevel`: warnings point at the user's line.
"""

import os
import sys
import warnings

import numpy as np

from minikeras.layers import tracking
from minikeras.layers.layer import Layer
from minikeras.layers.tracking import TrackingWarning

__all__ = []


class StepCache:
    """What `fit` finds once and the default steps reuse at every step."""

    def __init__(self, weights, loss_sources, metrics):
        self.weights, self.loss_sources, self.metrics = weights, loss_sources, metrics
        self.steps_done = 0

    def know_metrics(self, model):
        """Keeps `model.metrics` once complete (per-output ones exist from the first step on).

        Args:
            model: the model whose step this cache serves.

        Returns:
            None.
        """
        if self.metrics is None and model._metrics_known():
            self.metrics = model.metrics


def build_on(model, x):
    """Builds an unbuilt model by a forward pass, so that its weights exist.

    The pass is no step of the data: the states a stateful layer keeps are put
    back as they were (the first batch would otherwise run twice).
    """
    if not model.built:
        kept = {id(layer): layer._state_values for layer in _stateful_layers(model)}
        model(x, training=False)
        for layer in _stateful_layers(model):  # (None: not called yet, as before the pass)
            object.__setattr__(layer, "_state_values", kept.get(id(layer)))


def _stateful_layers(model):
    """The layers of `model` that keep states (recurrent layers built `stateful=True`)."""
    return [
        layer
        for layer in tracking.tracked_layers(model)
        if getattr(layer, "stateful", False) is True and hasattr(layer, "_state_values")
    ]


def weights_for_training(model):
    """`model.trainable_weights` and `model._loss_sources()`, warning if there are no weights.

    One walk finds both, unless the model's class defines its own
    `trainable_weights` or `weights`: then those are what training updates.
    """
    if (
        type(model).trainable_weights is Layer.trainable_weights
        and type(model).weights is Layer.weights
    ):
        weights, loss_sources = model._training_sources()
    else:
        weights, loss_sources = model.trainable_weights, model._loss_sources()
    if not weights:
        warnings.warn(
            f"Model '{model.name}' has no trainable weights (all frozen, or none created): "
            "training will not change it",
            TrackingWarning,
            stacklevel=user_stacklevel(),
        )
    return weights, loss_sources


def applied_steps(model):
    """The updates `model.optimizer` has applied (`iterations`), or None without one.

    A `LossScaleOptimizer` counts only the steps it did not skip.
    """
    optimizer = getattr(model, "optimizer", None)
    iterations = getattr(optimizer, "iterations", None)
    return None if iterations is None else int(np.asarray(iterations))


def report_unchanged(model, weights, before, steps_before=None):
    """Warns, naming them, about trainable weights whose values equal `before`.

    When the optimizer applied no update at all during the fit (a
    `LossScaleOptimizer` skipping every step as its scaled gradients
    overflow), that is said instead: the weights are not to blame.
    """
    unchanged = [w for w, old in zip(weights, before) if np.array_equal(w.numpy(), old)]
    if unchanged and steps_before is not None and applied_steps(model) == steps_before:
        scale = getattr(model.optimizer, "dynamic_scale", None)
        reason = (
            f"its loss scale overflowed at every step (dynamic_scale is now "
            f"{float(np.asarray(scale.numpy())):g}): train longer, or lower "
            "LossScaleOptimizer's initial_scale"
            if scale is not None
            else "check the optimizer"
        )
        warnings.warn(
            f"fit: optimizer {model.optimizer.name!r} applied no update in this fit, so no "
            f"trainable weight changed: {reason}",
            TrackingWarning,
            stacklevel=user_stacklevel(),
        )
        return
    if unchanged:  # (named by their paths in the model: one walk, only when one is found)
        paths = {id(v): path for path, _, v in tracking.walk(model)}
        unchanged = [paths.get(id(w), w.path or w.name) for w in unchanged]
        several = len(unchanged) > 1
        warnings.warn(
            f"fit: trainable weight{'s' if several else ''} "
            f"{', '.join(repr(n) for n in unchanged)} never changed during training: "
            f"check that {'they influence' if several else 'it influences'} the loss "
            "(switch this check off with compile(..., report_unchanged=False))",
            TrackingWarning,
            stacklevel=user_stacklevel(),
        )


def saved_state(model, weights):
    """Copies of the trained weights and the optimizers' variables, to restore on failure."""
    variables = list(weights)
    for optimizer in model._optimizers():
        if optimizer.built:
            variables += list(optimizer.variables)
    return [(variable, variable.numpy().copy()) for variable in variables]


def restore_state(saved):
    """Assigns back what `saved_state` copied."""
    for variable, value in saved or []:
        variable.assign(value)


def warn_out_of_data(batches, epoch, total_steps, epochs):
    """Warns that a generator ran out before `steps_per_epoch * epochs` batches."""
    warnings.warn(
        f"fit: the data ran out in epoch {epoch + 1} after {total_steps} steps in all; "
        f"training stops. With steps_per_epoch={batches.steps}, a generator must give "
        f"steps_per_epoch * epochs = {batches.steps * epochs} batches.",
        UserWarning,
        stacklevel=user_stacklevel(),
    )


def ran_out(batches, epoch, epoch_steps, total_steps, epochs):
    """Warns if the data ran out inside an epoch; True if training must stop."""
    if not getattr(batches, "ran_out", False):
        return False
    if batches.exhausted:
        warn_out_of_data(batches, epoch, total_steps, epochs)
        return True
    warnings.warn(
        f"fit: epoch {epoch + 1} ended after {epoch_steps} of steps_per_epoch="
        f"{batches.steps} steps: the data ran out; the next epoch starts a new pass over it.",
        UserWarning,
        stacklevel=user_stacklevel(),
    )
    return False


_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def user_stacklevel():
    """The `stacklevel` that points a warning at the user's line, however deep it was raised."""
    level, frame = 1, sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIR):
        level, frame = level + 1, frame.f_back
    return level
