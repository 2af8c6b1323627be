"""`evaluate` and `predict`: `test_step` and `predict_step` over batches, with callbacks.

Both take the data `fit` takes; `evaluate` reports the loss and the metrics
(`test_step`'s logs), `predict` gathers `predict_step`'s outputs into numpy
arrays. Their callbacks get the `on_test_*` and `on_predict_*` hooks.
"""

import itertools
import warnings

import numpy as np

from minikeras import callbacks as callbacks_module
from minikeras.argument_checks import check_arguments
from minikeras.callbacks.logging import _drawn_by_trainer
from minikeras.models.model_metrics import python_logs
from minikeras.models.model_steps import DEFAULT_STEPS
from minikeras.progress import Progress
from minikeras.trainers.array_data import (
    _ArrayBatches,
    _as_input,
    _check_batch_size,
    _Data,
    _length,
    _slice,
)
from minikeras.trainers.compiling import build_compiled, needs_y
from minikeras.trainers.data_adapters import (
    _Batches,
    _check_no_arrays_with_batches,
    _check_steps,
    _is_batch_iterable,
    _is_py_dataset,
    _PyDatasetSource,
)
from minikeras.trainers.steps import predict_step, test_step
from minikeras.trainers.training_state import StepCache, build_on, user_stacklevel
from minikeras.training_limits import _capped_steps

__all__ = ["as_numpy_outputs", "evaluate", "evaluate_batches", "predict"]


def _result(logs, return_dict):
    if return_dict:
        return logs
    values = list(logs.values())
    return values[0] if len(values) == 1 else values


def as_numpy_outputs(outputs):
    """Batches of outputs (Tensors, or lists / dicts of them, nested) joined into numpy arrays.

    The structure is kept at every level, as Keras's `predict` keeps it (a
    stacked RNN's states `[output, [h, c], h2]`).
    """
    first = outputs[0]
    if isinstance(first, dict):
        return {key: as_numpy_outputs([o[key] for o in outputs]) for key in first}
    if isinstance(first, (list, tuple)):
        return [as_numpy_outputs([o[i] for o in outputs]) for i in range(len(first))]
    return np.concatenate([np.asarray(o) for o in outputs])


def evaluate_batches(model, batches, prefix="", progress=None, callback_list=None):
    model.reset_metrics()
    if callback_list is not None:
        callback_list.on_test_begin()
    logs = {}
    step = -1
    default_step = DEFAULT_STEPS["test_step"]
    for step, batch in enumerate(batches):
        if callback_list is not None:
            callback_list.on_test_batch_begin(step)
        step_method = model.test_step  # (at each batch: a callback may replace it)
        if getattr(step_method, "__func__", None) is default_step:
            logs = python_logs(test_step(model, batch))  # (the default's body, one call less)
        else:
            logs = python_logs(step_method(batch))
        if step == 0 and model._step_cache is not None:
            model._step_cache.know_metrics(model)  # (per-output metrics exist after a step)
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
                stacklevel=user_stacklevel(),
            )
            return {}
        raise ValueError(f"{batches.method}: the data set is empty (no batches)")
    if prefix and getattr(batches, "ran_out", False):
        warnings.warn(
            f"fit: the validation data ran out before validation_steps={batches.steps} "
            f"batches; the val_ figures are over the {step + 1} it gave",
            UserWarning,
            stacklevel=user_stacklevel(),
        )
    if callback_list is not None:
        callback_list.on_test_end(logs)  # unprefixed, as in Keras, also when fit validates
    return {prefix + key: value for key, value in logs.items()} if prefix else logs


def evaluate(model, x=None, y=None, batch_size=None, verbose="auto", sample_weight=None,
             steps=None, callbacks=None, return_dict=False):  # fmt: skip
    """`Model.evaluate`'s body (the method's docstring documents it)."""
    check_arguments("evaluate", batch_size=batch_size, steps=steps, verbose=verbose)
    model._check_compiled("evaluate")
    steps = _capped_steps(steps, user_stacklevel)  # keras.config.set_max_steps_per_epoch
    verbose = 1 if verbose == "auto" else int(verbose)
    if _is_batch_iterable(x):
        _check_no_arrays_with_batches(y, sample_weight, "evaluate")
        batches = _Batches(x, model.dtype, "evaluate", steps=steps, need_y=needs_y(model))
    else:
        data = _Data(x, y, sample_weight, model.dtype, "evaluate", need_y=needs_y(model))
        batches = _ArrayBatches(data, batch_size, shuffle=False, steps=steps)
    progress = Progress(batches.steps, verbose, "Evaluate") if verbose else None
    callback_list = callbacks_module.CallbackList(
        callbacks, model=model, steps=batches.steps, verbose=verbose, epochs=1
    )
    _drawn_by_trainer(callback_list.callbacks, "test")
    build_on(model, batches.first_inputs())
    build_compiled(model)
    own_cache = model._step_cache is None
    if own_cache:
        object.__setattr__(model, "_step_cache", StepCache(None, model._loss_sources(), None))
        model._step_cache.know_metrics(model)
    try:
        logs = evaluate_batches(model, batches, progress=progress, callback_list=callback_list)
    finally:
        if own_cache:
            object.__setattr__(model, "_step_cache", None)
    if getattr(batches, "ran_out", False):
        warnings.warn(
            f"evaluate: the data ran out before steps={batches.steps} batches; the figures "
            "are over the batches it gave",
            UserWarning,
            stacklevel=user_stacklevel(),
        )
    if progress is not None:
        progress.close(logs)
    return _result(logs, return_dict)


def predict(model, x, batch_size=None, verbose=0, steps=None, callbacks=None):
    """`Model.predict`'s body (the method's docstring documents it)."""
    check_arguments("predict", batch_size=batch_size, steps=steps, verbose=verbose)
    steps = _capped_steps(steps, user_stacklevel)  # keras.config.set_max_steps_per_epoch
    verbose = 0 if verbose == "auto" else int(verbose)
    if _is_batch_iterable(x):
        if _is_py_dataset(x):
            x = _PyDatasetSource(x)
        if steps is not None:
            x = itertools.islice(x, _check_steps(steps, "predict"))
        chunks = [_as_input(b[0] if isinstance(b, tuple) else b, model.dtype, "predict")
                  for b in x]  # fmt: skip
        if steps is not None and 0 < len(chunks) < steps:  # as Keras: say so
            warnings.warn(
                f"predict: the data ran out before steps={steps} batches (it gave "
                f"{len(chunks)}); the outputs are for those",
                UserWarning,
                stacklevel=user_stacklevel(),
            )
    else:
        inputs = _as_input(x, model.dtype, "predict")
        total = _length(inputs)
        if batch_size is None and steps is not None:  # as Keras: steps batches cover x
            batch_size = -(-total // steps)
        batch_size = _check_batch_size(batch_size)
        chunks = [_slice(inputs, slice(i, i + batch_size)) for i in range(0, total, batch_size)]
        if steps is not None and steps < len(chunks):
            chunks = chunks[:steps]
        elif steps is not None and steps > len(chunks):
            warnings.warn(
                f"predict: the data ran out before steps={steps} batches (it makes "
                f"{len(chunks)} of batch_size={batch_size}); the outputs are for all of it",
                UserWarning,
                stacklevel=user_stacklevel(),
            )
    if not chunks:
        raise ValueError("predict: the input is empty (0 samples)")
    announced = len(chunks) if steps is None else int(steps)  # as Keras: the steps asked
    progress = Progress(announced, verbose, "Predict")
    callback_list = callbacks_module.CallbackList(
        callbacks, model=model, steps=announced, verbose=verbose, epochs=1
    )
    _drawn_by_trainer(callback_list.callbacks, "predict")
    callback_list.on_predict_begin()
    outputs = []
    default_step = DEFAULT_STEPS["predict_step"]
    for step, chunk in enumerate(chunks):
        callback_list.on_predict_batch_begin(step)
        step_method = model.predict_step  # (at each batch: a callback may replace it)
        if getattr(step_method, "__func__", None) is default_step:
            outputs.append(predict_step(model, (chunk,)))
        else:
            outputs.append(step_method((chunk,)))
        callback_list.on_predict_batch_end(step, {"outputs": outputs[-1]})
        progress.update()
    progress.close()
    callback_list.on_predict_end()
    return as_numpy_outputs(outputs)
