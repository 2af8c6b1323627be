"""`fit`'s body: epochs of `train_step` calls, validation, callbacks and the progress bar.

`fit` checks its arguments and data before the first step, finds the
trained weights, the loss sources and the metrics once, then calls
`train_step(batch)` for each batch. The logs a step returns are what the
progress bar and the callbacks see; an epoch's logs are its last step's,
plus `val_...` from `test_step` over the validation data.
"""

import contextlib
import math
import warnings

from minikeras import callbacks as callbacks_module
from minikeras import random as random_module
from minikeras.argument_checks import check_arguments
from minikeras.callbacks.logging import _drawn_by_trainer
from minikeras.data_checks import check_before_training
from minikeras.models.model_metrics import python_logs
from minikeras.models.model_steps import DEFAULT_STEPS, ModelSteps, update_compiled_metrics
from minikeras.progress import Progress
from minikeras.trainers.array_data import _ArrayBatches, _Data, _with_class_weight
from minikeras.trainers.compiling import build_compiled, needs_y
from minikeras.trainers.data_adapters import (
    _Batches,
    _check_no_arrays_with_batches,
    _is_batch_iterable,
    _validation,
)
from minikeras.trainers.evaluation import evaluate_batches
from minikeras.trainers.interrupt import _InterruptGuard
from minikeras.trainers.steps import train_step, train_update
from minikeras.trainers.training_state import (
    StepCache,
    applied_steps,
    build_on,
    ran_out,
    report_unchanged,
    restore_state,
    saved_state,
    user_stacklevel,
    warn_out_of_data,
    weights_for_training,
)
from minikeras.training_limits import _capped_epochs, _capped_steps

__all__ = ["fit"]

_NO_LOGS = object()  # what a quiet epoch's default step leaves in place of its logs


@contextlib.contextmanager
def _finalized_at_end(model, weights, cache):
    """Calls the optimizer's `finalize_variable_values` when the epochs end, however they end.

    As Keras 3 with JAX does (in a `finally`): after a step or more, a model
    trained with `use_ema` ends on its weights' moving averages, also when a
    callback or a step raises (Keras's torch and TensorFlow `fit`s skip it then).
    """
    try:
        yield
    finally:
        optimizer = getattr(model, "optimizer", None)
        if cache.steps_done and getattr(optimizer, "use_ema", False):
            optimizer.finalize_variable_values(weights)


def _state_after_failure(model, saved, steps_done):
    """What a streamed batch's failure leaves the model with, said truly.

    `saved` (the state at the start of this epoch) has been restored; in the
    first epoch there is none, so the steps already taken stay.
    """
    if saved:
        told = "The weights and optimizer state are those of the last completed epoch"
    elif not steps_done:
        told = "The model is unchanged (no step had run)"
    else:
        batches = "batch" if steps_done == 1 else "batches"
        told = (
            "No epoch completed: the weights keep the updates of the "
            f"{steps_done} {batches} before it"
        )
    if steps_done and getattr(getattr(model, "optimizer", None), "use_ema", False):
        told += ", then take their moving averages (use_ema), as at the end of every fit"
    return told


def fit(
    model,
    x=None,
    y=None,
    batch_size=None,
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
    validation_batch_size=None,
    validation_freq=1,
):
    """`Model.fit`'s body (the method's docstring documents it)."""
    check_arguments(
        "fit", epochs=epochs, initial_epoch=initial_epoch, batch_size=batch_size,
        steps_per_epoch=steps_per_epoch, validation_steps=validation_steps,
        validation_split=validation_split, verbose=verbose, shuffle=shuffle,
        validation_freq=validation_freq, validation_batch_size=validation_batch_size,
    )  # fmt: skip
    model._check_compiled("fit")
    epochs = _capped_epochs(epochs, user_stacklevel)  # keras.config.set_max_epochs
    steps_per_epoch = _capped_steps(steps_per_epoch, user_stacklevel)
    # A fit that fails before its first step leaves the global random stream as it was.
    random_state = random_module.generator().bit_generator.state
    progress_made = [0]
    try:
        return _fit(model,
            x, y, batch_size, epochs, verbose, callbacks, validation_split, validation_data,
            shuffle, class_weight, sample_weight, initial_epoch, steps_per_epoch,
            validation_steps, validation_batch_size or batch_size, validation_freq,
            progress_made,
        )  # fmt: skip
    except BaseException:
        if not progress_made[0]:
            random_module.generator().bit_generator.state = random_state
        raise
    finally:
        object.__setattr__(model, "_step_cache", None)


def _training_data(model, x, y, sample_weight, batch_size, shuffle, class_weight,
                   validation_split, validation_data, steps_per_epoch):  # fmt: skip
    """The training batches, and `validation_data` (split off `x` if asked), checked."""
    need_y = needs_y(model)
    if _is_batch_iterable(x):
        _check_no_arrays_with_batches(y, sample_weight, "fit")
        if validation_split:
            raise ValueError("fit: validation_split needs arrays, not an iterable of batches")
        train = _Batches(x, model.dtype, "fit", class_weight, steps_per_epoch, need_y)
        return train, validation_data
    data = _Data(x, y, sample_weight, model.dtype, "fit", need_y=need_y)
    if validation_split and validation_data is None:  # validation_data wins, as in Keras
        data, validation_data = data.split(validation_split)
    # Class weights apply to the training samples only, checked before any step.
    data.sample_weight = _with_class_weight(data.sample_weight, data.y, class_weight)
    train = _ArrayBatches(data, batch_size, shuffle, steps_per_epoch, carry_on=True)
    build_now = data.x[: train.batch_size] if not isinstance(data.x, (list, dict)) else None
    if (
        build_now is not None
        and not model.built
        and type(model).train_step is ModelSteps.train_step
    ):
        build_on(model, build_now)  # to know its output shape for the label check
    check_before_training(model, data.x, data.y, data.sample_weight)
    return train, validation_data


def _fit(model, x, y, batch_size, epochs, verbose, callbacks, validation_split,
         validation_data, shuffle, class_weight, sample_weight, initial_epoch,
         steps_per_epoch, validation_steps, validation_batch_size, validation_freq,
         progress_made):  # fmt: skip
    """The body of `fit`, after its arguments are checked (`progress_made[0]`: steps done)."""
    given_verbose = verbose  # (the callbacks' params hold it as given: "auto", as Keras's)
    verbose = 1 if verbose == "auto" else int(verbose)
    train, validation_data = _training_data(model,
        x, y, sample_weight, batch_size, shuffle, class_weight, validation_split,
        validation_data, steps_per_epoch,
    )  # fmt: skip
    if validation_data is not None:
        validation_steps = _capped_steps(validation_steps, user_stacklevel)
    validation = _validation(
        validation_data, model.dtype, validation_batch_size, validation_steps, needs_y(model)
    )
    if type(model).train_step is ModelSteps.train_step:
        build_on(model, train.first_inputs())
    elif not model.built:
        # A custom step may call the model on other data (a GAN's generator: noise).
        with contextlib.suppress(ValueError, TypeError, NotImplementedError):
            build_on(model, train.first_inputs())
    build_compiled(model)
    weights, loss_sources = weights_for_training(model)
    before = [w.numpy() for w in weights] if model.report_unchanged else None
    steps_before = applied_steps(model)
    callback_list = callbacks_module.CallbackList(
        callbacks, model=model, add_history=True, epochs=epochs, steps=train.steps,
        verbose=given_verbose,
    )  # fmt: skip
    _drawn_by_trainer(callback_list.callbacks, "train")
    model.stop_training = False
    compiled = model.__dict__.get("_compiled_step")
    if compiled is not None:  # (a refusal under a former fit's weights may not stand)
        compiled.forget_refusals()
    cache = StepCache(weights, loss_sources, None)
    object.__setattr__(model, "_step_cache", cache)
    cache.know_metrics(model)
    nan_warned = False
    epoch_logs = {}
    interrupt = _InterruptGuard()
    streamed = isinstance(train, _Batches)
    model._initial_epoch = None
    model._fit_interrupted = False  # (read by BackupAndRestore: keep the backup on Ctrl-C)
    callback_list.on_train_begin()
    if model._initial_epoch is not None:  # BackupAndRestore restored a later epoch
        initial_epoch, model._initial_epoch = model._initial_epoch, None
    default_step, default_metrics = DEFAULT_STEPS["train_step"], DEFAULT_STEPS["compute_metrics"]
    with interrupt, _finalized_at_end(model, weights, cache):
        for epoch in range(initial_epoch, epochs):
            if getattr(train, "by_steps", False) and not train.has_next():
                warn_out_of_data(train, epoch, cache.steps_done, epochs - initial_epoch)
                break
            model.reset_metrics()
            callback_list.on_epoch_begin(epoch)
            # (stop_training is read after each batch and each epoch, as Keras reads
            # it: set before, it still lets one batch, and the epoch's end, run)
            progress = Progress(train.steps, verbose, f"Epoch {epoch + 1}/{epochs}")
            # An epoch where nobody reads a batch's logs (no progress bar, no callback's
            # batch hook) and the metrics are the default's: the default step makes none
            # (`train_update`), and the epoch's are made once, at its end. The same
            # figures: a step's logs are the metrics' results after its update.
            quiet = (
                progress.bar is None
                and getattr(model.compute_metrics, "__func__", None) is default_metrics
                and not callback_list.reads_train_batches()
            )
            epoch_steps, logs = 0, {}
            # Streamed data is checked batch by batch: a bad batch restores this point.
            saved = saved_state(model, weights) if streamed and cache.steps_done else None
            for step, batch in enumerate(train):
                epoch_steps = step + 1
                if not quiet:
                    callback_list.on_train_batch_begin(step)
                try:
                    # (looked up at each batch, as Keras's eager loop: a callback may replace it)
                    step_method = model.train_step
                    if getattr(step_method, "__func__", None) is not default_step:
                        logs = step_method(batch)
                    elif quiet:  # (the default step's body without its logs)
                        x_, y_, y_pred, weights_, loss = train_update(model, batch)
                        update_compiled_metrics(model, x_, y_, y_pred, weights_)
                        logs = _NO_LOGS
                    else:
                        logs = train_step(model, batch)  # (the default's body, one call less)
                except (ValueError, TypeError) as error:
                    if not streamed:
                        raise
                    restore_state(saved)
                    raise type(error)(
                        f"fit: batch {step} of epoch {epoch + 1} failed: {error}. "
                        + _state_after_failure(model, saved, cache.steps_done)
                    ) from error
                cache.steps_done += 1
                progress_made[0] = cache.steps_done
                if cache.metrics is None:  # per-output metrics exist after the first step
                    cache.metrics = model.metrics
                if logs is not _NO_LOGS:
                    logs = python_logs(logs)
                    if not quiet:
                        progress.update(logs)
                        callback_list.on_train_batch_end(step, logs)
                    loss = logs.get("loss", 0.0)
                elif not math.isfinite(loss):  # (the batch's: so is then the running mean's)
                    loss = model.get_metrics_result().get("loss", 0.0)
                if not (nan_warned or math.isfinite(loss) or model.stop_training):
                    # Only when training goes on: a callback such as TerminateOnNaN stops it.
                    nan_warned = True
                    warnings.warn(
                        f"fit: the loss became {loss} at epoch {epoch + 1}, step {step + 1}; "
                        "training goes on. Add callbacks.TerminateOnNaN() to stop instead.",
                        RuntimeWarning,
                        stacklevel=user_stacklevel(),
                    )
                if model.stop_training or interrupt.requested:
                    break
            epochs_asked = epochs - initial_epoch
            out_of_data = ran_out(train, epoch, epoch_steps, cache.steps_done, epochs_asked)
            if not epoch_steps:  # the data ran out before this epoch's first step
                progress.close()
                break
            if logs is _NO_LOGS:  # (a quiet epoch's last step made none)
                logs = model.get_metrics_result()
            epoch_logs = dict(logs)
            validate = validation is not None and (epoch + 1) % validation_freq == 0
            if validate and not interrupt.requested:
                epoch_logs.update(
                    evaluate_batches(model, validation, "val_", callback_list=callback_list)
                )
            if getattr(train, "py_dataset", None) is not None:
                train.py_dataset.on_epoch_end()
            progress.close(epoch_logs)
            model._fit_interrupted = interrupt.requested
            callback_list.on_epoch_end(epoch, epoch_logs)
            if model.stop_training or interrupt.requested or out_of_data:
                break
    model._fit_interrupted = interrupt.requested  # (also when Ctrl-C came between epochs)
    callback_list.on_train_end(epoch_logs)
    if interrupt.requested:
        print(f"fit: interrupted; model '{model.name}' keeps its last completed step's weights")
    if before is not None and cache.steps_done:
        report_unchanged(model, weights, before, steps_before)
    return callback_list.history
