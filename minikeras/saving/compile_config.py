"""`Model.get_compile_config` and `Model.compile_from_config`: compile's arguments as Keras 3
writes them (`compile_config` in a `.keras` file's config) and back.

Keras keeps what `compile` was given: names stay names, a `Loss` or
`Metric` is its entry, a function is Keras's function entry
`{"module": "builtins", "class_name": "function", "config": <its registered
name>, "registered_name": "function"}` (the registered name is
`"package>name"` for a registered function, else the function's name), and
the optimizer is always its full entry (its current config). Its
`compile_from_config` compiles with them and builds the optimizer on the
model's trainable weights when the model is built.
"""

import warnings

from minikeras import serialization_lib
from minikeras.models.model_training import ModelTraining
from minikeras.saving import keras_config
from minikeras.saving.keras_writer import _keras_entry, _optimizer_entry
from minikeras.saving.saved_training_state import _map_leaves
from minikeras.trainers.training_state import user_stacklevel

__all__ = ["compile_from_keras_config", "custom_compile_skipped", "keras_compile_config"]


def keras_compile_config(model):
    """The compile config of `model` as Keras's `get_compile_config` gives it.

    Args:
        model: a `Model`.

    Returns:
        A dict with `optimizer`, `loss`, `loss_weights`, `metrics`,
        `weighted_metrics`, `run_eagerly`, `steps_per_execution` and
        `jit_compile`; `{}` for a model that is not compiled.

    Raises:
        ValueError: for a loss or metric without a usable name (a lambda).

    Example:
        >>> model = mk.Sequential([mk.Input((2,)), mk.layers.Dense(1)])
        >>> model.compile("sgd", "mse", metrics=["mae"])
        >>> config = mk.saving.compile_config.keras_compile_config(model)
        >>> config["optimizer"]["class_name"], config["loss"], config["metrics"]
        ('SGD', 'mse', ['mae'])
    """
    given = getattr(model, "_compile_arguments", None)
    if not getattr(model, "compiled", False) or given is None:
        return {}
    return {
        "optimizer": _optimizer_entry(model.optimizer),
        "loss": _map_leaves(_loss_entry, given["loss"]),
        "loss_weights": given["loss_weights"],
        "metrics": _map_leaves(_metric_entry, given["metrics"]),
        "weighted_metrics": _map_leaves(_metric_entry, given["weighted_metrics"]),
        "steps_per_execution": given["steps_per_execution"],
        **keras_config.compile_flags(given["run_eagerly"], given["jit_compile"]),
    }


def _loss_entry(loss):
    from minikeras import losses

    if loss is None or isinstance(loss, str):
        return loss
    if isinstance(loss, losses.Loss):
        return _keras_entry(losses.serialize(loss), "keras.losses")
    return _function_entry(loss, "loss")


def _metric_entry(metric):
    from minikeras import metrics
    from minikeras.metrics.base import Metric

    if metric is None or isinstance(metric, str):
        return metric
    if isinstance(metric, Metric):
        return _keras_entry(metrics.serialize(metric), "keras.metrics")
    return _function_entry(metric, "metric")


def _function_entry(function, what):
    """A function as Keras's `serialize_keras_object` writes one (found again by name)."""
    name = getattr(function, "__name__", None)
    if not callable(function) or name is None or name == "<lambda>":
        raise ValueError(
            f"get_compile_config: cannot name the {what} {function!r:.80}; use a "
            f"{what.capitalize()} or a def-function with a name"
        )
    return {
        "module": "builtins",
        "class_name": "function",
        "config": serialization_lib.get_registered_name(function),
        "registered_name": "function",
    }


def _is_function_entry(entry):
    return isinstance(entry, dict) and entry.get("class_name") == "function"


def _function_of(entry, what, known, where):
    """The function a Keras function entry names: its `config` is the function's name,
    or `"package>name"` for a registered one (as Keras reads it, whatever the `module`)."""
    name = entry.get("config")
    found = None
    if isinstance(name, str):
        found = serialization_lib.get_registered_object(name, None, known)
    if not callable(found):
        raise ValueError(
            f"{where}: unknown {what} function {name!r}; register it with "
            "mk.saving.register_keras_serializable or pass it in custom_objects"
        )
    return found


def _metric_functions():
    import types

    from minikeras import metrics

    return {
        name: value
        for name, value in vars(metrics).items()
        if isinstance(value, types.FunctionType)
        and not name.startswith("_")
        and name not in ("get", "serialize", "deserialize")
    }


def custom_compile_skipped(model, where):
    """Whether `model`'s class overrides `compile`, so that a config does not compile it.

    As Keras 3's `compile_from_config` (which loading calls): a custom
    `compile` may take other arguments (a GAN's two optimizers) than the
    config holds, so it is not called, and a warning says so.

    Args:
        model: a `Model`.
        where: what to name in the warning (`compile_from_config`, `load_model`).

    Returns:
        A bool; True after warning.

    Example:
        >>> mk.saving.compile_config.custom_compile_skipped(mk.Sequential(), "load_model")
        False
    """
    if type(model).compile is ModelTraining.compile:
        return False
    warnings.warn(
        f"{where}: {type(model).__name__} overrides compile(), so it was not called "
        "with the saved compile config; override get_compile_config() and "
        "compile_from_config() too, or call compile() yourself",
        UserWarning,
        stacklevel=user_stacklevel(),
    )
    return True


def compile_from_keras_config(model, compile_config, where="compile_from_config"):
    """Compiles `model` as a Keras compile config says; builds the optimizer if the model is built.

    Args:
        model: a `Model`.
        compile_config: what `keras_compile_config` (or Keras's
            `get_compile_config`, or a `.keras` file) gives.
        where: what to name in errors.

    Returns:
        The model's new optimizer.

    Raises:
        ValueError: for an option minikeras cannot honour, or what `compile`
            refuses.

    Example:
        >>> model = mk.Sequential([mk.Input((2,)), mk.layers.Dense(1)])
        >>> config = {"optimizer": "adam", "loss": "mse", "metrics": ["mae"]}
        >>> optimizer = mk.saving.compile_config.compile_from_keras_config(model, config)
        >>> type(optimizer).__name__, optimizer.built, model.get_compile_config()["loss"]
        ('Adam', True, 'mse')
    """
    from minikeras import losses, metrics, optimizers

    if not isinstance(compile_config, dict):
        raise ValueError(f"{where}: expected a compile config dict, got {compile_config!r:.80}")
    arguments = keras_config.compile_arguments(compile_config, where)
    optimizer = optimizers.get(arguments["optimizer"])
    arguments = keras_config.keyed_by_output(arguments, getattr(model, "_outputs", None))

    def loss_of(entry):
        if _is_function_entry(entry):
            return _function_of(entry, "loss", losses._FUNCTIONS, where)
        return entry if entry is None or isinstance(entry, str) else losses.deserialize(entry)

    def metric_of(entry):
        if _is_function_entry(entry):
            return _function_of(entry, "metric", _metric_functions(), where)
        return entry if entry is None or isinstance(entry, str) else metrics.deserialize(entry)

    def metrics_of(structure):
        return None if not structure else _map_leaves(metric_of, structure)

    model.compile(
        optimizer=optimizer,
        loss=_map_leaves(loss_of, arguments["loss"]),
        loss_weights=arguments["loss_weights"],
        metrics=metrics_of(arguments["metrics"]),
        weighted_metrics=metrics_of(arguments["weighted_metrics"]),
        steps_per_execution=compile_config.get("steps_per_execution", 1),
        **keras_config.compile_flags(
            compile_config.get("run_eagerly", False), compile_config.get("jit_compile", "auto")
        ),
    )
    optimizer = model.optimizer  # (compile wraps it for a mixed_float16 model, as Keras)
    if model.built:
        optimizer.build(model.trainable_weights)
    return optimizer
