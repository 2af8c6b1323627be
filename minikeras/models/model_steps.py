"""`ModelSteps`: the steps `fit`, `evaluate` and `predict` call, overridable as in Keras 3.

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

import functools

import numpy as np

from minikeras.engine.tensor import Tensor
from minikeras.models.model_metrics import ModelMetrics

__all__ = ["DEFAULT_STEPS", "ModelSteps", "update_compiled_metrics"]


@functools.cache
def _trainers():
    """`minikeras.trainers`, where the training methods' bodies are.

    Imported at the first call, not with this module: trainers sit above
    models in the import layering (`tests/test_layering.py`), and a model
    needs them only when it trains, evaluates or predicts.
    """
    import minikeras.trainers

    return minikeras.trainers


class ModelSteps(ModelMetrics):
    """Keras 3's overridable training contract, a base of `Model` (see the module).

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
        return _trainers().steps.compute_loss(self, x, y, y_pred, sample_weight, training)

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
        update_compiled_metrics(self, x, y, y_pred, sample_weight)
        return self.get_metrics_result()

    def _compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        """`compute_loss` as a step calls it: with `training` only if it takes it.

        Keras 3's own steps call this, and its docstring asks a custom step to
        call it instead of `compute_loss`: an override of `compute_loss`
        written with the signature before Keras 3.3, `(x, y, y_pred,
        sample_weight)` (as keras-io's knowledge distillation example has), is
        called without `training`.
        """
        return _trainers().steps.step_loss(self, x, y, y_pred, sample_weight, training)

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
        return _trainers().steps.train_step(self, data)

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
        return _trainers().steps.test_step(self, data)

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
        return _trainers().steps.predict_step(self, data)

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


# The methods as defined here, which the loops compare a model's with: a step that
# is one of these runs its body in `trainers.steps` directly (one call less per
# batch); one replaced anywhere (a subclass, the instance, or a patch of this
# class) is called as it is.
DEFAULT_STEPS = {
    name: ModelSteps.__dict__[name]
    for name in ("compute_loss", "compute_metrics", "train_step", "test_step", "predict_step")
}


def update_compiled_metrics(model, x, y, y_pred, sample_weight=None):
    """The compiled metrics' update: what the default `compute_metrics` does before its logs.

    `fit` calls it alone in an epoch where nobody reads a batch's logs (see
    `trainers.fit_loop`), and makes the logs once, at the epoch's end.

    Args:
        model: a compiled model.
        x: the inputs.
        y: the targets.
        y_pred: the model's outputs.
        sample_weight: optional per-sample weights (for `weighted_metrics`).

    Returns:
        None.

    Example:
        >>> model = mk.Sequential([mk.layers.Dense(1, kernel_initializer="zeros")])
        >>> model.compile("sgd", "mse", metrics=["mae"])
        >>> x, y = np.ones((2, 3)), np.full((2, 1), 2.0)
        >>> mk.models.model_steps.update_compiled_metrics(model, x, y, model(x))
        >>> model.get_metrics_result()
        {'loss': 0.0, 'mae': 2.0}
    """
    compiled = model._compile_metrics
    if y is not None and (compiled.entries is None or compiled.entries):
        mask = model._output_mask_of(x, y_pred)
        compiled.update_state(model, y, y_pred, sample_weight, mask)
