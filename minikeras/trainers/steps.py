"""The steps `fit`, `evaluate` and `predict` call, public and overridable as in Keras 3.

`fit` calls `train_step(data)` once per batch, `evaluate` calls `test_step`,
`predict` calls `predict_step`; `data` is what the data gives for one batch:
`(x, y, sample_weight)` for arrays (`y` and `sample_weight` may be None), or
the tuple an iterable yields. A step returns the logs dict, which the progress
bar and the callbacks show; an override changes `fit` accordingly. The
default steps are built from `compute_loss` and `compute_metrics`, which an
override can call too:

    >>> class Model(mk.Sequential):
    ...     def train_step(self, data):
    ...         x, y = data[0], data[1]
    ...         with mk.GradientTape() as tape:
    ...             y_pred = self(x, training=True)
    ...             loss = self.compute_loss(y=y, y_pred=y_pred)
    ...         grads = tape.gradient(loss, self.trainable_weights)
    ...         self.optimizer.apply(grads, self.trainable_weights)
    ...         for metric in self.metrics:
    ...             if metric.name == "loss":
    ...                 metric.update_state(loss)
    ...             else:
    ...                 metric.update_state(y, y_pred)
    ...         return {m.name: m.result() for m in self.metrics}
    >>> model = Model([mk.Input((2,)), mk.layers.Dense(1)])
    >>> model.compile("sgd", "mse", metrics=["mae"])
    >>> sorted(model.fit(np.ones((8, 2)), np.ones((8, 1)), verbose=0).history)
    ['loss', 'mae']
"""

import contextlib
import functools
import inspect

import numpy as np

from minikeras.engine.tape import GradientTape
from minikeras.engine.tensor import Tensor, wrap
from minikeras.optimizers.loss_scale_optimizer import LossScaleOptimizer
from minikeras.trainers.compile_utils import added_losses
from minikeras.trainers.compiled_step import compiled_step
from minikeras.trainers.model_metrics import ModelMetrics, python_logs  # (re-exported)

__all__ = ["Steps", "python_logs"]


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


class Steps(ModelMetrics):
    """Keras 3's overridable training contract, mixed into `Model` (see the module).

    Example:
        >>> model = mk.Sequential([mk.Input((2,)), mk.layers.Dense(1)])
        >>> model.compile("sgd", "mse")
        >>> sorted(model.train_step((np.ones((4, 2)), np.ones((4, 1)))))
        ['loss']
    """

    # -------------------------------------------------------------- loss, logs

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        """The loss to minimize: the compiled loss plus `self.losses` (add_loss, regularizers).

        Args:
            x: the inputs (unused by default; an override may use them).
            y: the targets (None for a model without a compiled loss).
            y_pred: the model's outputs for `x`.
            sample_weight: optional per-sample weights.
            training: whether this is for a training step.

        Returns:
            A scalar Tensor.

        Raises:
            ValueError: if there is neither a compiled loss nor an added one.

        Example:
            >>> model = mk.Sequential([mk.layers.Dense(1, kernel_initializer="zeros")])
            >>> model.compile("sgd", "mse")
            >>> x, y = np.ones((2, 3)), np.ones((2, 1))
            >>> float(model.compute_loss(x, y, model(x)))
            1.0
        """
        del training  # the default does not use it
        mask = self._output_mask_of(x, y_pred)
        loss = None
        if self._compile_loss is not None:
            loss = self._compile_loss(self, y, y_pred, sample_weight, mask)
        cache = self._step_cache
        loss = added_losses(self, loss, cache.loss_sources if cache is not None else None)
        if loss is None:
            raise ValueError(
                f"Model '{self.name}' has no loss to compute: it was compiled without a loss "
                "and adds none with add_loss(); give compile(loss=...), call self.add_loss() "
                "in call(), or override train_step"
            )
        return loss

    def _compute_loss(self, x, y, y_pred, sample_weight, training):
        """`compute_loss` as the default steps call it: `training` only if it takes one.

        Keras 3 added `training` to `compute_loss` in 3.3; an override written
        with the older signature `(x, y, y_pred, sample_weight)` (as keras-io's
        knowledge distillation example has) is called without it, as Keras does.
        """
        if _takes_training(type(self).compute_loss):
            return self.compute_loss(x, y, y_pred, sample_weight, training=training)
        return self.compute_loss(x, y, y_pred, sample_weight)

    def compute_metrics(self, x, y, y_pred, sample_weight=None):
        """Updates the compiled metrics with a batch and returns `get_metrics_result()`.

        Args:
            x: the inputs (unused by default).
            y: the targets.
            y_pred: the model's outputs.
            sample_weight: optional per-sample weights (for `weighted_metrics`).

        Returns:
            The logs dict, `{name: value}` for every metric in `metrics`.

        Example:
            >>> model = mk.Sequential([mk.layers.Dense(1, kernel_initializer="zeros")])
            >>> model.compile("sgd", "mse", metrics=["mae"])
            >>> x, y = np.ones((2, 3)), np.full((2, 1), 2.0)
            >>> model.compute_metrics(x, y, model(x))
            {'loss': 0.0, 'mae': 2.0}
        """
        compiled = self._compile_metrics
        if y is not None and (compiled.entries is None or compiled.entries):
            mask = self._output_mask_of(x, y_pred)
            compiled.update_state(self, y, y_pred, sample_weight, mask)
        return self.get_metrics_result()

    # ------------------------------------------------------------------- steps

    def train_step(self, data):
        """One training step on one batch: forward, loss, gradients, update, metrics.

        Args:
            data: the batch: `(x, y, sample_weight)` (a tuple of 1 to 3), or `x`.

        Returns:
            The logs dict (see `compute_metrics`).

        Example:
            >>> model = mk.Sequential([mk.Input((2,)), mk.layers.Dense(1)])
            >>> model.compile("sgd", "mse")
            >>> list(model.train_step((np.ones((4, 2)), np.ones((4, 1)))))
            ['loss']
        """
        x, y, sample_weight = unpack(data)
        cache = self._step_cache
        weights = cache.weights if cache is not None else self.trainable_weights
        # Compiled (jit_compile, see compiled_step): replayed when recorded before.
        compiled, x = compiled_step(self, x, y, sample_weight)
        replayed = (
            compiled.run(self, x, y, weights, sample_weight) if compiled is not None else None
        )
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
                        y_pred = self(x, training=True)
                        loss = self._compute_loss(x, y, y_pred, sample_weight, training=True)
                    else:  # (what the tape watches, so that the ops on it are recorded)
                        y_pred = self(recorder.inputs, training=True)
                        loss = self._compute_loss(
                            x, recorder.targets, y_pred, recorder.sample_weight, training=True
                        )
                    # (mixed precision: gradients of the loss times the loss scale)
                    scaled = _scaled(self.optimizer, loss)
            if recorder is not None:
                compiled.keep(recorder, tape, x, y, weights, loss, y_pred, sample_weight)
            if scaled is loss:
                grads = tape.gradient(loss, weights)
            else:  # (float16 gradients of a scaled loss may overflow: the optimizer skips them)
                with np.errstate(over="ignore", invalid="ignore"):
                    grads = tape.gradient(scaled, weights)
            complete, loss_value = False, float(loss)
        if (
            not complete
            and cache is not None
            and cache.steps_done
            and any(g is None for g in grads)
        ):
            # The optimizer named the weights without a gradient on the first step;
            # leaving them out afterwards keeps that warning to one per fit.
            pairs = [(grad, w) for grad, w in zip(grads, weights) if grad is not None]
            grads, weights = [grad for grad, _ in pairs], [w for _, w in pairs]
        self.optimizer.apply(grads, weights)
        self._loss_tracker.update_state(loss_value, _batch_size(x))
        return self.compute_metrics(x, y, y_pred, sample_weight)

    def test_step(self, data):
        """One evaluation step on one batch: forward, loss and metrics, no update.

        Args:
            data: the batch, as for `train_step`.

        Returns:
            The logs dict.

        Example:
            >>> model = mk.Sequential([mk.layers.Dense(1, kernel_initializer="zeros")])
            >>> model.compile("sgd", "mse")
            >>> model.test_step((np.ones((4, 2)), np.ones((4, 1))))
            {'loss': 1.0}
        """
        x, y, sample_weight = unpack(data)
        y_pred = self(x, training=False)
        loss = self._compute_loss(x, y, y_pred, sample_weight, training=False)
        self._loss_tracker.update_state(float(loss), _batch_size(x))
        return self.compute_metrics(x, y, y_pred, sample_weight)

    def predict_step(self, data):
        """One prediction step: the model's outputs for a batch of inputs.

        Args:
            data: the batch: the inputs, or a tuple whose first entry is the inputs.

        Returns:
            The outputs (Tensors), which `predict` gathers into numpy arrays.

        Example:
            >>> model = mk.Sequential([mk.layers.Dense(3)])
            >>> model.predict_step((np.ones((2, 4)),)).shape
            (2, 3)
        """
        x, _, _ = unpack(data)
        return self(x, training=False)

    def _output_mask_of(self, x, y_pred):
        """`compute_mask(x)` for the call that gave `y_pred`, as booleans; None if none.

        Without `x` (an override that calls `compute_loss(y=..., y_pred=...)`), the
        mask the model's latest call ended with.

        Only a single array counts, and only if it marks the leading axes of
        `y_pred` ((batch, steps) for (batch, steps, classes)): a subclass that
        reduces its graph's output leaves a mask that is not its output's.
        See `Loss.__call__` and `losses.apply_mask` for how it weighs.
        """
        mask = self.compute_mask(x) if x is not None else getattr(self, "_output_mask", None)
        if mask is None or isinstance(mask, (list, tuple, dict)):
            return None
        if isinstance(y_pred, (list, tuple, dict)):
            return None
        mask = np.asarray(mask).astype(bool)
        shape = y_pred.shape if isinstance(y_pred, Tensor) else np.shape(y_pred)
        if mask.ndim >= len(shape) or mask.shape != shape[: mask.ndim]:
            return None
        return mask
