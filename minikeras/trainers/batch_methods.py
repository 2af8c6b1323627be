"""The bodies of `train_on_batch`, `test_on_batch` and `predict_on_batch`.

One step on one batch, outside `fit`, `evaluate` and `predict`: the data
checked and the model built as those do, the metrics reset first, and the
logs given as a list (or a dict). The bodies of `Model`'s methods of those names.
"""

from minikeras.layers import tracking
from minikeras.models.model_metrics import python_logs
from minikeras.trainers.array_data import _as_input, _Data
from minikeras.trainers.compiling import build_compiled, needs_y
from minikeras.trainers.evaluation import _result, as_numpy_outputs
from minikeras.trainers.training_state import StepCache, build_on, weights_for_training

__all__ = ["predict_on_batch", "test_on_batch", "train_on_batch"]


def train_on_batch(model, x, y=None, sample_weight=None, class_weight=None, return_dict=False):
    """`Model.train_on_batch`'s body (the method's docstring documents it)."""
    model._check_compiled("train_on_batch")
    data = _Data(
        x, y, sample_weight, model.dtype, "train_on_batch", class_weight, need_y=needs_y(model)
    )
    build_on(model, data.x)
    build_compiled(model)
    cache = _batch_step_cache(model)
    object.__setattr__(model, "_step_cache", cache)
    try:
        model.reset_metrics()
        logs = model.train_step((data.x, data.y, data.sample_weight))
    finally:
        object.__setattr__(model, "_step_cache", None)
    return _result(python_logs(logs), return_dict)


def _batch_step_cache(model):
    """A `StepCache` for one batch, from walks over the model made once.

    The weights, the loss sources and the metrics stay what they were
    while nothing the model tracks changes and the model is not compiled
    again: while `tracking.weight_lists` gives the same tuple, which it
    makes anew after a `TrackingGeneration` move (a Metric set as an
    attribute counts) or a change inside a list or dict it walked (a
    Metric appended to a list attribute, a layer removed from one).
    """
    tracked = tracking.weight_lists(model)
    key = (id(model._compile_metrics), id(model.optimizer))
    found = model.__dict__.get("_batch_cache")
    if found is None or found[0] is not tracked or found[1] != key:
        weights, loss_sources = weights_for_training(model)  # one walk finds both
        found = [tracked, key, weights, loss_sources, None]
        object.__setattr__(model, "_batch_cache", found)
    if found[4] is None and model._metrics_known():
        found[4] = model.metrics  # (per-output trackers exist after the first step)
    return StepCache(found[2], found[3], found[4])


def test_on_batch(model, x, y=None, sample_weight=None, return_dict=False):
    """`Model.test_on_batch`'s body (the method's docstring documents it)."""
    model._check_compiled("test_on_batch")
    data = _Data(x, y, sample_weight, model.dtype, "test_on_batch", need_y=needs_y(model))
    build_on(model, data.x)
    build_compiled(model)
    model.reset_metrics()
    logs = model.test_step((data.x, data.y, data.sample_weight))
    return _result(python_logs(logs), return_dict)


def predict_on_batch(model, x):
    """`Model.predict_on_batch`'s body (the method's docstring documents it)."""
    return as_numpy_outputs([model.predict_step((_as_input(x, model.dtype, "predict"),))])
