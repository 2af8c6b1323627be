"""`Trainer`: `compile`, `fit`, `evaluate`, `predict`, mixed into `Model`.

The guarantee: each step computes gradients for `model.trainable_weights`, the
tracked list, and nothing else, and says what is not trained:
- tracking warnings surface on the first step (see `minikeras.layers.tracking`);
- a trainable weight that gets no gradient (`None`) is named by the optimizer;
- after `fit`, a trainable weight whose value never changed is named.

`fit` is this loop, which you can write yourself when you need another step
(`tests/test_custom_loop.py` checks that it matches `fit` on the digits):

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

import itertools
import math
import os
import sys
import warnings

import numpy as np

from minikeras import callbacks as callbacks_module
from minikeras import losses as losses_module
from minikeras import metrics as metrics_module
from minikeras import ops
from minikeras import optimizers as optimizers_module
from minikeras import random as random_module
from minikeras.argument_checks import check_arguments
from minikeras.data_adapter import (
    _ArrayBatches,
    _as_input,
    _Batches,
    _check_batch_size,
    _check_no_arrays_with_batches,
    _check_steps,
    _Data,
    _is_batch_iterable,
    _length,
    _no_steps_with_arrays,
    _slice,
    _validation,
    _with_class_weight,
)
from minikeras.data_checks import check_before_training
from minikeras.engine.tape import GradientTape
from minikeras.engine.tensor import Tensor
from minikeras.interrupt import _InterruptGuard
from minikeras.layers import call_checks, tracking
from minikeras.layers.layer import Layer
from minikeras.layers.tracking import TrackingWarning
from minikeras.progress import Progress

__all__ = ["Trainer"]


class Trainer:
    """Training methods for `Model`: compile, fit, evaluate, predict.

    Example:
        >>> from minikeras import Sequential, layers
        >>> model = Sequential([layers.Input((4,)), layers.Dense(3)])
        >>> model.compile(optimizer="sgd", loss="mse")
        >>> model.fit(np.ones((8, 4)), np.zeros((8, 3)), epochs=2, verbose=0).epoch
        [0, 1]
    """

    compiled = False

    def compile(self, optimizer="rmsprop", loss=None, metrics=None, report_unchanged=True):
        """Sets the optimizer, the loss and the metrics used by `fit` and `evaluate`.

        Args:
            optimizer: a name such as `"adam"`, or an `Optimizer`.
            loss: a name such as `"sparse_categorical_crossentropy"`, a `Loss`,
                or a function `loss(y_true, y_pred)`.
            metrics: a list of names (`"accuracy"` picks the accuracy that fits
                the loss) or `Metric`s.
            report_unchanged: after `fit`, warn about trainable weights whose
                values never changed (minikeras's own check; on by default).

        Returns:
            None.

        Raises:
            ValueError: if `loss` is missing or unknown.

        Example:
            >>> from minikeras import Sequential, layers
            >>> model = Sequential([layers.Dense(2)])
            >>> model.compile("adam", "mse", metrics=["mae"])
            >>> [m.name for m in model.metrics]
            ['mae']
        """
        if loss is None:
            raise ValueError(f"compile: model '{self.name}' needs a loss, e.g. loss='mse'")
        if metrics is not None and not isinstance(metrics, (list, tuple, dict)):
            raise TypeError(
                f"compile: metrics must be a list (or a dict by output), got {metrics!r:.60} of "
                f"type {type(metrics).__name__}; write metrics=[{metrics!r:.40}]"
            )
        if not isinstance(report_unchanged, bool):
            raise TypeError(
                f"compile: report_unchanged must be True or False, got {report_unchanged!r:.60}"
            )
        self.optimizer = optimizers_module.get(optimizer)
        self.loss = losses_module.get(loss)
        if not isinstance(self.loss, losses_module.Loss):
            # A plain function gives per-sample losses: reduce them as a Loss does.
            self.loss = losses_module.LossFunctionWrapper(self.loss)
        self._loss_identifier = loss
        self.metrics = [_make_metric(m, loss) for m in (metrics or [])]
        self.report_unchanged = report_unchanged
        self.compiled = True
        self.stop_training = False

    # ------------------------------------------------------------------ steps

    def _check_compiled(self, method):
        if not self.compiled:
            raise RuntimeError(
                f"{method}: model '{self.name}' must be compiled first: "
                "model.compile(optimizer, loss, metrics)"
            )

    def _train_step(self, x, y, sample_weight, weights, first=True, loss_sources=None):
        with GradientTape() as tape:
            y_pred = self(x, training=True)
            mask = _output_mask(self, x, y_pred)
            loss = _compiled_loss(self, y, y_pred, sample_weight, mask)
            loss = _plus_added_losses(self, loss, loss_sources)
        grads = tape.gradient(loss, weights)
        if not first:
            # The optimizer named the weights without a gradient on the first step;
            # leaving them out afterwards keeps that warning to one per fit.
            pairs = [(grad, w) for grad, w in zip(grads, weights) if grad is not None]
            grads, weights = [grad for grad, _ in pairs], [w for _, w in pairs]
        self.optimizer.apply(grads, weights)
        return float(loss), y_pred, mask

    def _update_metrics(self, y, y_pred, mask=None):
        # As in Keras, compiled metrics are not weighted by sample or class weights;
        # the metrics that average a value per entry (accuracies, errors: Keras's
        # MeanMetricWrapper) are weighted by the mask of the model's outputs.
        if self.metrics:
            predictions = y_pred.numpy() if isinstance(y_pred, Tensor) else y_pred
            for metric in self.metrics:
                if mask is not None and getattr(metric, "_uses_output_mask", False):
                    metric.update_state(y, predictions, sample_weight=mask.astype(np.float64))
                else:
                    metric.update_state(y, predictions)

    def _logs(self, loss_total, count, prefix=""):
        logs = {prefix + "loss": loss_total / max(count, 1)}
        for metric in self.metrics:
            logs[prefix + metric.name] = float(metric.result())
        return logs

    def train_on_batch(self, x, y, sample_weight=None, class_weight=None, return_dict=False):
        """Runs one training step on one batch.

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
        data = _Data(x, y, sample_weight, self.dtype, "train_on_batch", class_weight)
        _build_on(self, data.x)
        weights, loss_sources = _weights_for_training(self)
        for metric in self.metrics:
            metric.reset_state()
        loss, y_pred, mask = self._train_step(
            data.x, data.y, data.sample_weight, weights, loss_sources=loss_sources
        )
        self._update_metrics(data.y, y_pred, mask)
        return _result(self._logs(loss, 1), return_dict)

    def test_on_batch(self, x, y, sample_weight=None, return_dict=False):
        """Computes the loss and metrics on one batch, without training.

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
        data = _Data(x, y, sample_weight, self.dtype, "test_on_batch")
        for metric in self.metrics:
            metric.reset_state()
        y_pred = self(data.x, training=False)
        mask = _output_mask(self, data.x, y_pred)
        loss = _compiled_loss(self, data.y, y_pred, data.sample_weight, mask)
        loss = float(_plus_added_losses(self, loss))
        self._update_metrics(data.y, y_pred, mask)
        return _result(self._logs(loss, 1), return_dict)

    # -------------------------------------------------------------------- fit

    def fit(
        self,
        x=None,
        y=None,
        batch_size=32,
        epochs=1,
        verbose="auto",
        callbacks=None,
        validation_split=0.0,
        validation_data=None,
        shuffle=True,
        class_weight=None,
        sample_weight=None,
        initial_epoch=0,
        steps_per_epoch=None,
        validation_steps=None,
    ):
        """Trains the model for `epochs` passes over the data.

        Input is checked before any training happens (an iterable of batches
        that is not a list or a generator, or any iterable given with
        `steps_per_epoch`, is checked as it is read). Ctrl-C
        stops cleanly at the end of the current step: the model keeps the
        weights of its last completed step, and the History so far is
        returned (the interrupted epoch's logs without validation).
        `model.trainable` and the layers' `trainable` flags are read when
        `fit` starts. A non-finite loss warns once (`RuntimeWarning`) unless a
        callback such as `TerminateOnNaN` stops training.

        Args:
            x: inputs (a numpy array, or a list of arrays for several inputs),
                or an iterable of `(x, y)` / `(x, y, sample_weight)` batches.
            y: targets (None when `x` yields batches).
            batch_size: samples per step (None means 32; ignored for batch iterables).
            epochs: the epoch to stop at (counted from 0, like `initial_epoch`).
            verbose: `"auto"` or 1 (a progress bar), 2 (a line per epoch), 0.
            callbacks: a list of `minikeras.callbacks.Callback`.
            validation_split: fraction of the arrays, taken from the end
                before shuffling, held out for validation (ignored when
                `validation_data` is given).
            validation_data: `(x_val, y_val)` or `(x_val, y_val, sample_weight)`,
                or an iterable of such batches.
            shuffle: shuffle the training samples every epoch.
            class_weight: optional dict of class index -> loss weight (for the
                training samples; compiled metrics stay unweighted, as in Keras).
            sample_weight: optional per-sample loss weights.
            initial_epoch: the epoch to start at (to resume training).
            steps_per_epoch: for an iterable of batches: the batches of one
                epoch, taken from one iterator that carries on from epoch to
                epoch (as in Keras), so a generator that never ends can feed
                training. If the data runs out, the epoch ends there with a
                warning; a generator that runs out stops training, a list
                starts over the next epoch. None: an epoch is one pass (a
                generator is read whole first, so it must end).
            validation_steps: likewise for an iterable of validation batches:
                the batches of each validation pass.

        Returns:
            A `History` whose `history` dict holds the logs of every epoch.

        Raises:
            RuntimeError: if the model is not compiled.
            ValueError: for mismatched lengths, NaN in the targets or sample
                weights, non-numeric data, an empty data set, a class missing
                from `class_weight`, a bad `validation_split` or `batch_size`,
                or `steps_per_epoch` / `validation_steps` with arrays.

        Example:
            >>> from minikeras import Sequential, layers
            >>> model = Sequential([layers.Dense(1)])
            >>> model.compile("sgd", "mse")
            >>> history = model.fit(np.ones((16, 2)), np.ones((16, 1)), epochs=3, verbose=0)
            >>> len(history.history["loss"])
            3
            >>> def batches():  # never ends
            ...     while True:
            ...         yield np.ones((4, 2)), np.ones((4, 1))
            >>> history = model.fit(batches(), epochs=2, steps_per_epoch=5, verbose=0)
            >>> len(history.history["loss"])
            2
        """
        check_arguments(
            "fit", epochs=epochs, initial_epoch=initial_epoch, batch_size=batch_size,
            steps_per_epoch=steps_per_epoch, validation_steps=validation_steps,
            validation_split=validation_split, verbose=verbose, shuffle=shuffle,
        )  # fmt: skip
        self._check_compiled("fit")
        # A fit that fails before its first step leaves the global random stream as it was.
        random_state = random_module.generator().bit_generator.state
        progress_made = [0]
        try:
            return self._fit(
                x, y, batch_size, epochs, verbose, callbacks, validation_split, validation_data,
                shuffle, class_weight, sample_weight, initial_epoch, steps_per_epoch,
                validation_steps, progress_made,
            )  # fmt: skip
        except BaseException:
            if not progress_made[0]:
                random_module.generator().bit_generator.state = random_state
            raise

    def _fit(self, x, y, batch_size, epochs, verbose, callbacks, validation_split,
             validation_data, shuffle, class_weight, sample_weight, initial_epoch,
             steps_per_epoch, validation_steps, progress_made):  # fmt: skip
        """The body of `fit`, after its arguments are checked (`progress_made[0]`: steps done)."""
        verbose = 1 if verbose == "auto" else int(verbose)
        if _is_batch_iterable(x):
            _check_no_arrays_with_batches(y, sample_weight, "fit")
            if validation_split:
                raise ValueError("fit: validation_split needs arrays, not an iterable of batches")
            train = _Batches(x, self.dtype, "fit", class_weight, steps=steps_per_epoch)
        else:
            _no_steps_with_arrays(steps_per_epoch, "fit", "steps_per_epoch")
            data = _Data(x, y, sample_weight, self.dtype, "fit")
            if validation_split and validation_data is None:  # validation_data wins, as in Keras
                data, validation_data = data.split(validation_split)
            # Class weights apply to the training samples only, checked before any step.
            data.sample_weight = _with_class_weight(data.sample_weight, data.y, class_weight)
            train = _ArrayBatches(data, batch_size, shuffle)
            build_now = data.x[:1] if not isinstance(data.x, (list, dict)) else None
            if build_now is not None and not self.built:
                _build_on(self, build_now)  # to know its output shape for the label check
            check_before_training(self, data.x, data.y, data.sample_weight)
        validation = _validation(validation_data, self.dtype, batch_size, validation_steps)

        _build_on(self, train.first_inputs())
        weights, loss_sources = _weights_for_training(self)
        before = [w.numpy() for w in weights] if self.report_unchanged else None
        callback_list = callbacks_module.CallbackList(
            callbacks, model=self, add_history=True, epochs=epochs, steps=train.steps,
            verbose=verbose,
        )  # fmt: skip
        self.stop_training = False
        nan_warned = False
        steps_done = 0
        epoch_logs = None
        interrupt = _InterruptGuard()
        callback_list.on_train_begin()
        with interrupt:
            for epoch in range(initial_epoch, epochs):
                if getattr(train, "by_steps", False) and not train.has_next():
                    _warn_out_of_data(train, epoch, steps_done, epochs - initial_epoch)
                    break
                for metric in self.metrics:
                    metric.reset_state()
                callback_list.on_epoch_begin(epoch)
                progress = Progress(train.steps, verbose, f"Epoch {epoch + 1}/{epochs}")
                loss_total, count, epoch_steps = 0.0, 0, 0
                streamed = isinstance(train, _Batches)
                # Streamed data is checked batch by batch: a bad batch restores this point.
                saved = _training_state(self, weights) if streamed and steps_done else None
                for step, (bx, by, bw) in enumerate(train):
                    epoch_steps = step + 1
                    callback_list.on_train_batch_begin(step)
                    try:
                        loss, y_pred, mask = self._train_step(
                            bx, by, bw, weights, first=steps_done == 0, loss_sources=loss_sources
                        )
                    except (ValueError, TypeError) as error:
                        if not streamed:
                            raise
                        _restore_training_state(saved)
                        raise type(error)(
                            f"fit: batch {step} of epoch {epoch + 1} failed: {error}. The "
                            + ("weights and optimizer state are those of the last completed "
                               "epoch" if saved else "model is unchanged (no epoch completed)")
                        ) from error  # fmt: skip
                    steps_done += 1
                    progress_made[0] = steps_done
                    size = len(by)
                    loss_total, count = loss_total + loss * size, count + size
                    self._update_metrics(by, y_pred, mask)
                    logs = self._logs(loss_total, count)
                    progress.update(logs)
                    callback_list.on_train_batch_end(step, logs)
                    if not (nan_warned or math.isfinite(loss) or self.stop_training):
                        # Only when training goes on: a callback such as TerminateOnNaN stops it.
                        nan_warned = True
                        warnings.warn(
                            f"fit: the loss became {loss} at epoch {epoch + 1}, step {step + 1}; "
                            "training goes on. Add callbacks.TerminateOnNaN() to stop instead.",
                            RuntimeWarning,
                            stacklevel=_user_stacklevel(),
                        )
                    if self.stop_training or interrupt.requested:
                        break
                epochs_asked = epochs - initial_epoch
                out_of_data = _ran_out(train, epoch, epoch_steps, steps_done, epochs_asked)
                if not epoch_steps:  # the data ran out before this epoch's first step
                    progress.close()
                    break
                epoch_logs = self._logs(loss_total, count)
                if validation is not None and not interrupt.requested:
                    epoch_logs.update(
                        self._evaluate_batches(validation, "val_", callback_list=callback_list)
                    )
                progress.close(epoch_logs)
                callback_list.on_epoch_end(epoch, epoch_logs)
                if self.stop_training or interrupt.requested or out_of_data:
                    break
        callback_list.on_train_end(epoch_logs)
        if interrupt.requested:
            print(f"fit: interrupted; model '{self.name}' keeps its last completed step's weights")
        if before is not None and steps_done:
            _report_unchanged(self, weights, before)
        return callback_list.history

    # -------------------------------------------------------- evaluate, predict

    def _evaluate_batches(self, batches, prefix="", progress=None, callback_list=None):
        for metric in self.metrics:
            metric.reset_state()
        if callback_list is not None:
            callback_list.on_test_begin()
        loss_total, count = 0.0, 0
        loss_sources = None
        step = -1
        for step, (bx, by, bw) in enumerate(batches):
            if callback_list is not None:
                callback_list.on_test_batch_begin(step)
            y_pred = self(bx, training=False)
            if loss_sources is None:  # found after the first call, which builds the model
                loss_sources = self._loss_sources()
            size = len(by)
            mask = _output_mask(self, bx, y_pred)
            loss = _compiled_loss(self, by, y_pred, bw, mask)
            loss = _plus_added_losses(self, loss, loss_sources)
            loss_total += float(loss) * size
            count += size
            self._update_metrics(by, y_pred, mask)
            if progress is not None or callback_list is not None:
                logs = self._logs(loss_total, count, prefix)
                if progress is not None:
                    progress.update(logs)
                if callback_list is not None:
                    callback_list.on_test_batch_end(step, logs)
        if step < 0:  # only an iterable given with steps can be empty here
            if prefix:
                warnings.warn(
                    "fit: the validation data ran out (no batch for this epoch's validation); "
                    "the epoch's logs have no validation figures",
                    UserWarning,
                    stacklevel=_user_stacklevel(),
                )
                return {}
            raise ValueError(f"{batches.method}: the data set is empty (no batches)")
        logs = self._logs(loss_total, count, prefix)
        if callback_list is not None:
            callback_list.on_test_end(logs)
        return logs

    def evaluate(self, x=None, y=None, batch_size=32, verbose="auto", sample_weight=None,
                 steps=None, callbacks=None, return_dict=False):  # fmt: skip
        """Computes the loss and metrics over data, in batches.

        Args:
            x: inputs, or an iterable of `(x, y)` batches.
            y: targets (None when `x` yields batches).
            batch_size: samples per batch.
            verbose: `"auto"` or 1 (a progress bar), 2 (one line), 0 (silent).
            sample_weight: optional per-sample weights.
            steps: for an iterable of batches, evaluate its first `steps`
                batches (fewer if it ends first); None: all of them.
            callbacks: a list of `minikeras.callbacks.Callback`; their
                `on_test_*` hooks are called.
            return_dict: return a dict instead of a list.

        Returns:
            The loss if there are no metrics, else `[loss, *metrics]`, or a dict.

        Raises:
            RuntimeError: if the model is not compiled.
            ValueError: for bad input, as in `fit`.

        Example:
            >>> from minikeras import Sequential, layers
            >>> model = Sequential([layers.Dense(1, kernel_initializer="zeros")])
            >>> model.compile("sgd", "mse", metrics=["mae"])
            >>> model.evaluate(np.ones((8, 2)), np.full((8, 1), 2.0), verbose=0)
            [4.0, 2.0]
        """
        check_arguments("evaluate", batch_size=batch_size, steps=steps, verbose=verbose)
        self._check_compiled("evaluate")
        verbose = 1 if verbose == "auto" else int(verbose)
        if _is_batch_iterable(x):
            _check_no_arrays_with_batches(y, sample_weight, "evaluate")
            batches = _Batches(x, self.dtype, "evaluate", steps=steps)
        else:
            _no_steps_with_arrays(steps, "evaluate", "steps")
            data = _Data(x, y, sample_weight, self.dtype, "evaluate")
            batches = _ArrayBatches(data, batch_size, shuffle=False)
        progress = Progress(batches.steps, verbose, "Evaluate") if verbose else None
        callback_list = None
        if callbacks:
            callback_list = callbacks_module.CallbackList(
                callbacks, model=self, steps=batches.steps, verbose=verbose
            )
        logs = self._evaluate_batches(batches, progress=progress, callback_list=callback_list)
        if getattr(batches, "ran_out", False):
            warnings.warn(
                f"evaluate: the data ran out before steps={batches.steps} batches; the figures "
                "are over the batches it gave",
                UserWarning,
                stacklevel=_user_stacklevel(),
            )
        if progress is not None:
            progress.close(logs)
        return _result(logs, return_dict)

    def predict(self, x, batch_size=32, verbose=0, steps=None, callbacks=None):
        """Runs the model on inputs in batches and returns numpy outputs.

        Args:
            x: inputs (a numpy array, or a list of arrays), or an iterable of
                input batches.
            batch_size: samples per batch.
            verbose: 1 shows a progress bar.
            steps: for an iterable of batches, predict its first `steps`
                batches (fewer if it ends first), so a generator that never
                ends can be used; None: all of them.
            callbacks: a list of `minikeras.callbacks.Callback`; their
                `on_predict_*` hooks are called (batch logs hold `"outputs"`).

        Returns:
            A numpy array (or a list of them for several outputs).

        Raises:
            ValueError: for empty or non-numeric input, or a bad `batch_size`.

        Example:
            >>> from minikeras import Sequential, layers
            >>> model = Sequential([layers.Dense(3)])
            >>> model.predict(np.ones((70, 2)), batch_size=32).shape
            (70, 3)
        """
        check_arguments("predict", batch_size=batch_size, steps=steps, verbose=verbose)
        verbose = 0 if verbose == "auto" else int(verbose)
        if _is_batch_iterable(x):
            if steps is not None:
                x = itertools.islice(x, _check_steps(steps, "predict"))
            chunks = [_as_input(b[0] if isinstance(b, tuple) else b, self.dtype, "predict")
                      for b in x]  # fmt: skip
        else:
            _no_steps_with_arrays(steps, "predict", "steps")
            inputs = _as_input(x, self.dtype, "predict")
            total = _length(inputs)
            batch_size = _check_batch_size(batch_size)
            chunks = [_slice(inputs, slice(i, i + batch_size)) for i in range(0, total, batch_size)]
        if not chunks:
            raise ValueError("predict: the input is empty (0 samples)")
        progress = Progress(len(chunks), verbose, "Predict")
        callback_list = callbacks_module.CallbackList(
            callbacks, model=self, steps=len(chunks), verbose=verbose
        )
        callback_list.on_predict_begin()
        outputs = []
        for step, chunk in enumerate(chunks):
            callback_list.on_predict_batch_begin(step)
            outputs.append(self(chunk, training=False))
            callback_list.on_predict_batch_end(step, {"outputs": outputs[-1]})
            progress.update()
        progress.close()
        callback_list.on_predict_end()
        if isinstance(outputs[0], (list, tuple)):
            return [
                np.concatenate([np.asarray(o[i]) for o in outputs]) for i in range(len(outputs[0]))
            ]
        return np.concatenate([np.asarray(o) for o in outputs])


# ---------------------------------------------------------------------- helpers


def _make_metric(identifier, loss):
    metric = metrics_module.get(identifier, loss=loss)
    if isinstance(identifier, str):
        metric.name = identifier
    return metric


def _result(logs, return_dict):
    if return_dict:
        return logs
    values = list(logs.values())
    return values[0] if len(values) == 1 else values


def _plus_added_losses(model, loss, loss_sources=None):
    """`loss + sum(model.losses)`, each summed to a scalar: the loss Keras trains and reports.

    `loss_sources` (from `model._loss_sources()`) spares a walk over the model
    at every step; `fit` finds them once, when it starts.
    """
    sources = model._loss_sources() if loss_sources is None else loss_sources
    for added in model._gather_losses(sources):
        loss = loss + ops.sum(added)
    return loss


def _warn_out_of_data(batches, epoch, total_steps, epochs):
    warnings.warn(
        f"fit: the data ran out in epoch {epoch + 1} after {total_steps} steps in all; "
        f"training stops. With steps_per_epoch={batches.steps}, a generator must give "
        f"steps_per_epoch * epochs = {batches.steps * epochs} batches.",
        UserWarning,
        stacklevel=_user_stacklevel(),
    )


def _ran_out(batches, epoch, epoch_steps, total_steps, epochs):
    """Warns if the data ran out inside an epoch; True if training must stop."""
    if not getattr(batches, "ran_out", False):
        return False
    if batches.exhausted:
        _warn_out_of_data(batches, epoch, total_steps, epochs)
        return True
    warnings.warn(
        f"fit: epoch {epoch + 1} ended after {epoch_steps} of steps_per_epoch="
        f"{batches.steps} steps: the data ran out; the next epoch starts a new pass over it.",
        UserWarning,
        stacklevel=_user_stacklevel(),
    )
    return False


def _compiled_loss(model, y, y_pred, sample_weight, mask):
    """The compiled loss of a batch, its entries weighed by the output mask if any."""
    if mask is None or not call_checks.accepts(model.loss.__call__, "mask"):
        # (a Loss whose own __call__ takes no mask drops it, as it would in Keras)
        return model.loss(y, y_pred, sample_weight=sample_weight)
    return model.loss(y, y_pred, sample_weight=sample_weight, mask=mask)


def _output_mask(model, x, y_pred):
    """`model.compute_mask(x)` for the call that gave `y_pred`, as booleans; None if none.

    Only a single array counts (compile takes one loss), and only if it marks
    the leading axes of `y_pred` ((batch, steps) for (batch, steps, classes)):
    a subclass that reduces its graph's output leaves a mask that is not its
    output's. See `Loss.__call__` and `losses.apply_mask` for how it weighs.
    """
    mask = model.compute_mask(x)
    if mask is None or isinstance(mask, (list, tuple, dict)):
        return None
    mask = np.asarray(mask).astype(bool)
    shape = y_pred.shape if isinstance(y_pred, Tensor) else np.shape(y_pred)
    if mask.ndim >= len(shape) or mask.shape != shape[: mask.ndim]:
        return None
    return mask


def _build_on(model, x):
    """Builds an unbuilt model by a forward pass, so that its weights exist."""
    if not model.built:
        model(x, training=False)


def _weights_for_training(model):
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
            stacklevel=_user_stacklevel(),
        )
    return weights, loss_sources


def _report_unchanged(model, weights, before):
    paths = {id(v): path for path, _, v in tracking.walk(model)}
    unchanged = [
        paths.get(id(w), w.path or w.name)
        for w, old in zip(weights, before)
        if np.array_equal(w.numpy(), old)
    ]
    if unchanged:
        several = len(unchanged) > 1
        warnings.warn(
            f"fit: trainable weight{'s' if several else ''} "
            f"{', '.join(repr(n) for n in unchanged)} never changed during training: "
            f"check that {'they influence' if several else 'it influences'} the loss "
            "(switch this check off with compile(..., report_unchanged=False))",
            TrackingWarning,
            stacklevel=_user_stacklevel(),
        )


def _training_state(model, weights):
    """Copies of the trained weights and the optimizer's variables, to restore on failure."""
    optimizer = model.optimizer
    variables = list(weights) + (list(optimizer.variables) if optimizer.built else [])
    return [(variable, variable.numpy().copy()) for variable in variables]


def _restore_training_state(saved):
    for variable, value in saved or []:
        variable.assign(value)


_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


def _user_stacklevel():
    """The `stacklevel` that points a warning at the user's line, however deep it was raised."""
    level, frame = 1, sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIR):
        level, frame = level + 1, frame.f_back
    return level
