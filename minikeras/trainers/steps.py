"""The default steps' bodies: `train_step`, `test_step`, `predict_step` and `compute_loss`.

`Model`'s methods of those names (`minikeras.models.model_steps`, which
documents the contract) hand over to these functions of the model, which an
override replaces. `train_step` replays a recorded step where it can
(`compiled_step`).
"""

import contextlib
import functools
import inspect

import numpy as np

from minikeras.engine.tape import GradientTape
from minikeras.engine.tensor import wrap
from minikeras.models.model_metrics import python_logs  # (re-exported)
from minikeras.models.model_steps import DEFAULT_STEPS
from minikeras.optimizers.loss_scale_optimizer import LossScaleOptimizer
from minikeras.trainers.compile_utils import added_losses
from minikeras.trainers.compiled_step import compiled_step

__all__ = [
    "compute_loss",
    "predict_step",
    "python_logs",
    "step_loss",
    "test_step",
    "train_step",
    "train_update",
    "unpack",
]


def unpack(data):
    """`(x, y, sample_weight)` from a batch: a tuple of 1 to 3 entries, or the inputs alone."""
    if type(data) is tuple and len(data) == 3:  # (what fit's arrays give, every step)
        return data
    if isinstance(data, tuple) and 1 <= len(data) <= 3:
        return data + (None,) * (3 - len(data))
    return data, None, None


def _scaled(optimizer, loss):
    """The loss a training step differentiates: times the loss scale of a LossScaleOptimizer."""
    if isinstance(optimizer, LossScaleOptimizer):
        return optimizer.scale_loss(loss)
    return loss


@functools.cache
def _takes_training(compute_loss):
    """Whether a `compute_loss` (the function) has a `training` parameter."""
    return "training" in inspect.signature(compute_loss).parameters


def _batch_size(x):
    if type(x) is np.ndarray:
        return x.shape[0]
    while isinstance(x, (list, tuple, dict)):
        x = next(iter(x.values())) if isinstance(x, dict) else x[0]
    return int(np.shape(x)[0])


def compute_loss(model, x=None, y=None, y_pred=None, sample_weight=None, training=True):
    """`Model.compute_loss`'s body (the method's docstring documents it)."""
    del training  # the default does not use it
    mask = model._output_mask_of(x, y_pred)
    loss = None
    if model._compile_loss is not None:
        loss = model._compile_loss(model, y, y_pred, sample_weight, mask)
    cache = model._step_cache
    loss = added_losses(model, loss, cache.loss_sources if cache is not None else None)
    if loss is None:
        raise ValueError(
            f"Model '{model.name}' has no loss to compute: it was compiled without a loss "
            "and adds none with add_loss(); give compile(loss=...), call self.add_loss() "
            "in call(), or override train_step"
        )
    return loss


def step_loss(model, x, y, y_pred, sample_weight, training):
    """`Model._compute_loss`'s body: `compute_loss`, with `training` only if it takes one.

    Keras 3 added `training` to `compute_loss` in 3.3; an override written
    with the older signature `(x, y, y_pred, sample_weight)` (as keras-io's
    knowledge distillation example has) is called without it, as Keras does.
    The default `compute_loss` runs its body here directly.
    """
    method = model.compute_loss
    if getattr(method, "__func__", None) is DEFAULT_STEPS["compute_loss"]:
        return compute_loss(model, x, y, y_pred, sample_weight, training)
    if _takes_training(type(model).compute_loss):
        return model.compute_loss(x, y, y_pred, sample_weight, training=training)
    return model.compute_loss(x, y, y_pred, sample_weight)


def train_step(model, data):
    """`Model.train_step`'s body (the method's docstring documents it)."""
    x, y, y_pred, sample_weight, _ = train_update(model, data)
    return model.compute_metrics(x, y, y_pred, sample_weight)


def train_update(model, data):
    """The default `train_step` before its metrics: forward, loss, gradients, update, loss tracker.

    Args:
        model: a compiled model.
        data: the batch, as `train_step` takes it.

    Returns:
        `(x, y, y_pred, sample_weight, loss)`: the batch as the step used it
        (`x` cast to the model's dtype where the compiled step casts it), the
        model's outputs and the batch's loss as a Python float.

    Example:
        >>> model = mk.Sequential([mk.layers.Dense(1, kernel_initializer="ones")])
        >>> model.compile(mk.optimizers.SGD(0.0), "mse")
        >>> batch = (np.ones((2, 3), np.float32), np.zeros((2, 1), np.float32))
        >>> mk.trainers.steps.train_update(model, batch)[-1]  # (3 - 0) ** 2
        9.0
    """
    if type(data) is tuple and len(data) == 2:  # (fit's usual batch, `unpack` inline)
        (x, y), sample_weight = data, None
    else:
        x, y, sample_weight = unpack(data)
    cache = model._step_cache
    weights = cache.weights if cache is not None else model.trainable_weights
    # Compiled (jit_compile, see compiled_step): replayed when recorded before.
    compiled, x = compiled_step(model, x, y, sample_weight)
    replayed = compiled.run(model, x, y, weights, sample_weight) if compiled is not None else None
    if replayed is not None:
        y_pred, loss, grads, complete = replayed
        loss_value = float(loss)
        y_pred, loss = wrap(y_pred), wrap(loss)
    else:
        with GradientTape() as tape:
            recorder = None
            if compiled is not None:
                recorder = compiled.recorder(tape, x, y, sample_weight)
            with recorder or contextlib.nullcontext():
                if recorder is None:
                    y_pred = model(x, training=True)
                    loss = step_loss(model, x, y, y_pred, sample_weight, training=True)
                else:  # (what the tape watches, so that the ops on it are recorded)
                    y_pred = model(recorder.inputs, training=True)
                    loss = step_loss(
                        model, x, recorder.targets, y_pred, recorder.sample_weight, training=True
                    )
                # (mixed precision: gradients of the loss times the loss scale)
                scaled = _scaled(model.optimizer, loss)
        if cache is None:  # (as Keras reads them after the call: a first call builds weights)
            weights = model.trainable_weights
        if recorder is not None:
            compiled.keep(recorder, tape, x, y, weights, loss, y_pred, sample_weight)
        if scaled is loss:
            grads = tape.gradient(loss, weights)
        else:  # (float16 gradients of a scaled loss may overflow: the optimizer skips them)
            with np.errstate(over="ignore", invalid="ignore"):
                grads = tape.gradient(scaled, weights)
        complete, loss_value = False, float(loss)
    if not complete and cache is not None and cache.steps_done and any(g is None for g in grads):
        # The optimizer named the weights without a gradient on the first step;
        # leaving them out afterwards keeps that warning to one per fit.
        pairs = [(grad, w) for grad, w in zip(grads, weights) if grad is not None]
        grads, weights = [grad for grad, _ in pairs], [w for _, w in pairs]
    model.optimizer.apply(grads, weights)
    count = x.shape[0] if type(x) is np.ndarray else _batch_size(x)
    model._loss_tracker.update_state(loss_value, count)
    return x, y, y_pred, sample_weight, loss_value


def test_step(model, data):
    """`Model.test_step`'s body (the method's docstring documents it)."""
    x, y, sample_weight = unpack(data)
    y_pred = model(x, training=False)
    loss = step_loss(model, x, y, y_pred, sample_weight, training=False)
    model._loss_tracker.update_state(float(loss), _batch_size(x))
    return model.compute_metrics(x, y, y_pred, sample_weight)


def predict_step(model, data):
    """`Model.predict_step`'s body (the method's docstring documents it)."""
    x, _, _ = unpack(data)
    return model(x, training=False)
