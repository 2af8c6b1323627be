"""`ModelTraining`: `compile` and the compiled state, a base of `Model` with the loops and steps.

The guarantee: each step computes gradients for `model.trainable_weights`, the
tracked list, and nothing else, and says what is not trained:
- tracking warnings surface on the first step (see `minikeras.layers.tracking`);
- a trainable weight that gets no gradient (`None`) is named by the optimizer;
- after `fit`, a trainable weight whose value never changed is named, for a
  custom `train_step` too.

`fit` is this loop, which you can write yourself when you need another step
(`tests/test_custom_loop.py` checks that it matches `fit` on the digits); to
change only the step, override `train_step` (see `minikeras.models.model_steps`):

    >>> from minikeras import GradientTape, Sequential, layers, losses, optimizers
    >>> model = Sequential([layers.Input((4,)), layers.Dense(3)])
    >>> loss_fn = losses.SparseCategoricalCrossentropy(from_logits=True)
    >>> optimizer = optimizers.Adam(learning_rate=0.01)
    >>> x, y = np.ones((8, 4), "float32"), np.arange(8) % 3
    >>> for start in range(0, len(x), 4):
    ...     x_batch, y_batch = x[start : start + 4], y[start : start + 4]
    ...     with GradientTape() as tape:
    ...         # model.losses: add_loss()'s losses and the regularizers' penalties.
    ...         loss = loss_fn(y_batch, model(x_batch, training=True)) + sum(model.losses)
    ...     grads = tape.gradient(loss, model.trainable_weights)
    ...     _ = optimizer.apply_gradients(zip(grads, model.trainable_weights))
    >>> int(optimizer.iterations.numpy())
    2
"""

import numpy as np

from minikeras import optimizers as optimizers_module
from minikeras import random
from minikeras.engine.variable import TrackingGeneration
from minikeras.layers import tracking
from minikeras.layers.layer import Layer
from minikeras.metrics.base import Metric
from minikeras.models.model_loops import ModelLoops
from minikeras.models.model_steps import _trainers

__all__ = ["ModelTraining"]


class ModelTraining(ModelLoops):
    """Training methods for `Model`: compile, fit, evaluate, predict and their steps.

    Their bodies are in `minikeras.trainers`, which each method reaches when
    it runs (trainers sit above models in the import layering).

    Example:
        >>> from minikeras import Sequential, layers
        >>> model = Sequential([layers.Input((4,)), layers.Dense(3)])
        >>> model.compile(optimizer="sgd", loss="mse")
        >>> model.fit(np.ones((8, 4)), np.zeros((8, 3)), epochs=2, verbose=0).epoch
        [0, 1]
    """

    compiled = False
    _loss_tracker = _compile_loss = None
    _initial_epoch = None  # set by BackupAndRestore in on_train_begin: the epoch to resume at

    def compile(
        self,
        optimizer="rmsprop",
        loss=None,
        loss_weights=None,
        metrics=None,
        weighted_metrics=None,
        run_eagerly=False,
        steps_per_execution=1,
        jit_compile="auto",
        auto_scale_loss=True,
        report_unchanged=True,
    ):
        """Sets the optimizer, the loss and the metrics used by `fit` and `evaluate`.

        Args:
            optimizer: a name such as `"adam"`, or an `Optimizer`.
            loss: a name such as `"sparse_categorical_crossentropy"`, a `Loss`,
                or a function `loss(y_true, y_pred)`; for several outputs, a
                list (in output order) or a dict keyed by output name (None
                for an output with no loss); the logs hold each output's
                `<name>_loss` when two or more outputs have a loss, as in
                Keras 3. None: no compiled loss, for a model that only uses `add_loss` or
                computes its loss in its own `train_step`.
            loss_weights: for several outputs, the weight of each output's
                loss (a list or a dict by output name) in the total.
            metrics: a list of names (`"accuracy"` picks the accuracy that fits
                the loss) or `Metric`s; for several outputs, a list with an
                entry (a metric or a list of them) per output, or a dict by
                output name, as in Keras 3 (one output takes these shapes
                too: a dict by its name, a list of lists).
                Not weighted by sample or class weights.
            weighted_metrics: likewise, weighted by `sample_weight` / `class_weight`.
            run_eagerly: True runs every step eagerly (no compiled step), as in Keras.
            steps_per_execution: accepted; minikeras runs one step per batch
                whatever it is.
            jit_compile: `"auto"` (the default) or True compiles the default
                `train_step` where it can: each kind of batch runs eagerly
                once while its numpy calls are recorded, and later batches
                replay them (bit for bit the same results, without the
                Python around them; see `trainers.compiled_step` for which
                models qualify). False runs every step eagerly. minikeras
                has no XLA: True asks for nothing more than `"auto"`.
            auto_scale_loss: if True and the model's dtype policy is
                `"mixed_float16"`, the optimizer is wrapped in a
                `mixed_precision.LossScaleOptimizer` (unless it is one), as in Keras.
            report_unchanged: after `fit`, warn about trainable weights whose
                values never changed (minikeras's own check; on by default).

        Returns:
            None.

        Raises:
            TypeError: if `metrics` is not a list or dict, or `report_unchanged`
                is not a bool.
            ValueError: for an unknown loss or metric.

        Example:
            >>> from minikeras import Sequential, layers
            >>> model = Sequential([layers.Dense(2)])
            >>> model.compile("adam", "mse", metrics=["mae"])
            >>> [m.name for m in model.metrics]
            ['loss', 'mae']
        """
        return _trainers().compiling.compile_model(
            self,
            optimizer,
            loss,
            loss_weights,
            metrics,
            weighted_metrics,
            run_eagerly,
            steps_per_execution,
            jit_compile,
            auto_scale_loss,
            report_unchanged,
        )

    def get_compile_config(self):
        """What `compile` was given, serialized as Keras 3's `get_compile_config` does.

        Names stay names; a `Loss` or `Metric` is its class entry; a
        function is Keras's function entry, `{"module": "builtins",
        "class_name": "function", "config": name, "registered_name":
        "function"}`, where `name` is `"package>name"` for a function
        registered with `register_keras_serializable`, else the function's
        name; the optimizer is its full entry (its current config). It is what a
        `.keras` file keeps as `compile_config`, and what Keras's
        `compile_from_config` takes.

        Returns:
            A dict with `optimizer`, `loss`, `loss_weights`, `metrics`,
            `weighted_metrics`, `run_eagerly`, `steps_per_execution` and
            `jit_compile`; `{}` if the model is not compiled.

        Raises:
            ValueError: for a loss or metric without a usable name (a lambda).

        Example:
            >>> model = mk.Sequential([mk.Input((2,)), mk.layers.Dense(1)])
            >>> model.compile(mk.optimizers.SGD(0.5), "mse", metrics=["mae"])
            >>> config = model.get_compile_config()
            >>> config["optimizer"]["config"]["learning_rate"], config["loss"], config["metrics"]
            (0.5, 'mse', ['mae'])
        """
        from minikeras.saving.compile_config import keras_compile_config

        return keras_compile_config(self)

    def compile_from_config(self, config):
        """Compiles the model as `config` (from `get_compile_config`, here or in Keras) says.

        As Keras's: the optimizer is built on the trainable weights when the
        model is built; a model class that overrides `compile` is not
        compiled, with a warning (it should override this method too).

        Args:
            config: a compile config dict.

        Returns:
            None.

        Raises:
            ValueError: for an option minikeras cannot honour, or what
                `compile` refuses.

        Example:
            >>> model = mk.Sequential([mk.Input((2,)), mk.layers.Dense(1)])
            >>> model.compile_from_config({"optimizer": "adam", "loss": "mse"})
            >>> type(model.optimizer).__name__, model.optimizer.built
            ('Adam', True)
        """
        from minikeras.saving.compile_config import (
            compile_from_keras_config,
            custom_compile_skipped,
        )

        if not custom_compile_skipped(self, "compile_from_config"):
            compile_from_keras_config(self, config)

    @property
    def compiled_metrics(self):
        """The metrics `compile` was given, resolved to `Metric`s (per output, in order).

        Example:
            >>> model = mk.Sequential([mk.layers.Dense(1)]); model.compile("sgd", "mse", metrics=["mae"])
            >>> [m.name for m in model.compiled_metrics]
            ['mae']
        """  # noqa: E501
        return list(self._compile_metrics.metrics) if self.compiled else []

    def _check_compiled(self, method):
        if not self.compiled:
            raise RuntimeError(
                f"{method}: model '{self.name}' must be compiled first: "
                "model.compile(optimizer=..., loss=..., metrics=[...])"
            )

    def _optimizers(self):
        """Every optimizer the model holds (a GAN holds two), `optimizer` first."""
        found = [self.optimizer] if getattr(self, "optimizer", None) is not None else []
        for value in vars(self).values():
            if isinstance(value, optimizers_module.Optimizer) and all(
                value is not o for o in found
            ):
                found.append(value)
        return found

    def __setattr__(self, name, value):
        # A Metric held by the model is one of its metrics (see `metrics`), not part of the
        # network: its variables are neither weights nor an untracked-variable warning.
        metric = isinstance(value, Metric) or isinstance(self.__dict__.get(name), Metric)
        if isinstance(value, Metric) and name not in self._untracked_attributes:
            object.__setattr__(self, "_untracked_attributes", self._untracked_attributes | {name})
        super().__setattr__(name, value)
        if metric:  # `metrics` changed, though no weight did
            TrackingGeneration.bump()

    def _random_generators(self):
        """The global generator (`"global"`) and the generators layers hold, by path.

        A layer's `SeedGenerator` (seeded Dropout, say) counts by its numpy
        generator. Saving and `BackupAndRestore` keep their states.
        """
        layers = [("", self)] + [
            (p + "/", v) for p, _, v in tracking.walk(self) if isinstance(v, Layer)
        ]
        held = {"global": random.generator()}
        for prefix, layer in layers:
            for attribute, value in vars(layer).items():
                if isinstance(value, np.random.Generator):
                    held[prefix + attribute] = value
                elif isinstance(value, random.SeedGenerator):
                    held[prefix + attribute + "/generator"] = value.generator
        return held
