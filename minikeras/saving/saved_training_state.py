"""The training state saved with a model, written and checked before it is restored.

The training state is the compile arguments (as JSON: loss, loss weights,
metrics, the optimizer's config), the optimizer's variables (with the paths
of the weights they update) and the states of the random generators.
`_training_payload` writes it for `save_model`; `_compile_objects` and
`_check_training` read it back for `load_model`, checking everything before
anything is assigned.
"""

import numpy as np

from minikeras import losses, metrics, optimizers
from minikeras.saving.archive import LoadError, to_json
from minikeras.saving.keras_config import compile_flags
from minikeras.saving.registry import custom_objects_by_name
from minikeras.saving.weights import _warn
from minikeras.trainers.compile_outputs import output_names

__all__ = []


def _an_older_count(array, entry):
    """An iteration count as older minikeras files keep it: an int64 scalar that fits int32."""
    return (
        array.shape == ()
        and array.dtype == np.int64
        and 0 <= int(array) <= np.iinfo(np.int32).max
        and isinstance(entry, dict)
        and entry.get("shape") == []
        and entry.get("dtype") == "int64"
    )


def _map_leaves(fn, structure):
    """`fn` of each leaf of a per-output structure (lists, and dicts by output name)."""
    if isinstance(structure, dict) and "class_name" not in structure:
        return {key: _map_leaves(fn, value) for key, value in structure.items()}
    if isinstance(structure, (list, tuple)):
        return [_map_leaves(fn, value) for value in structure]
    return fn(structure)


def _metric_entry(metric, model, entries):
    """A metric `compile` was given, as a file names it: without the output's name that
    compile put before its name (`cls_accuracy` for the output `cls`), as Keras keeps it."""
    if metric is None or isinstance(metric, str):  # (None: no metric for that output)
        return metric
    entry = metrics.serialize(metrics.get(metric))
    index = next((i for m, i, _ in entries or [] if m is metric and i is not None), None)
    if index is not None and getattr(model, "_outputs", None) is not None:
        prefix = output_names(model, model._outputs)[index] + "_"
        name = entry.get("config", {}).get("name")
        if isinstance(name, str) and name.startswith(prefix):
            entry["config"] = {**entry["config"], "name": name[len(prefix) :]}
    return entry


def _compile_entries(model):
    """The compile arguments as JSON: loss, loss weights, metrics, weighted metrics."""
    compiled = model._compile_metrics

    def metric_entries(weighted):
        user = compiled.user_weighted if weighted else compiled.user_metrics
        if user is None:
            return None
        entries = compiled.entries
        if entries is not None and all(index is None for _, index, _ in entries):
            # One output: the metrics as resolved ("accuracy" for this loss) and named.
            return [metrics.serialize(m) for m, _, w in entries if w == weighted]
        return _map_leaves(lambda m: _metric_entry(m, model, entries), user)

    identifier = model._loss_identifier
    entries = {
        "loss": _map_leaves(
            lambda loss: loss if loss is None or isinstance(loss, str) else losses.serialize(loss),
            identifier,
        ),
        "loss_weights": model.loss_weights,
        "metrics": metric_entries(False) or [],
        "weighted_metrics": metric_entries(True),
    }
    outputs = getattr(model, "_outputs", None)  # a list for a dict of outputs is written
    names = output_names(model, outputs) if isinstance(outputs, dict) else None
    return _keyed(entries, names)  # by name


def _keyed(arguments, names):
    """Per-output lists of compile arguments as dicts: the i-th entry for `names[i]`."""
    if not names or len(names) < 2:
        return arguments
    per_output = ("loss", "loss_weights", "metrics", "weighted_metrics")
    return {
        key: dict(zip(names, value))
        if key in per_output and isinstance(value, list) and len(value) == len(names)
        else value
        for key, value in arguments.items()
    }


def _legacy_lists(config, model):
    """A compile config as this minikeras reads it: files now key per-output lists by
    output name, but files written before lists followed a dict of outputs' sorted keys
    hold lists in the dict's own order (the order the rebuilt model keeps)."""
    outputs = getattr(model, "_outputs", None)
    return _keyed(config, list(outputs) if isinstance(outputs, dict) else None)


def _compile_objects(config, objects):
    """The optimizer and the other compile arguments that a compile config describes (new)."""
    optimizer = optimizers.deserialize(config["optimizer"], objects)

    def loss_of(loss):
        if isinstance(loss, str) and loss in objects:
            return objects[loss]
        return losses.deserialize(loss, objects) if isinstance(loss, dict) else loss

    def metric_of(metric):
        if metric is None or isinstance(metric, str):
            return objects.get(metric, metric)
        return metrics.deserialize(metric, objects)

    weighted = config.get("weighted_metrics")
    arguments = {
        "loss": _map_leaves(loss_of, config["loss"]),
        "loss_weights": config.get("loss_weights"),
        "metrics": _map_leaves(metric_of, config["metrics"]) or None,
        "weighted_metrics": None if weighted is None else _map_leaves(metric_of, weighted),
        "report_unchanged": bool(config.get("report_unchanged", True)),
        "steps_per_execution": config.get("steps_per_execution", 1),  # (older files lack it)
        **compile_flags(config.get("run_eagerly", False), config.get("jit_compile", "auto")),
    }
    return optimizer, arguments


def _random_states(model):
    """The state of the global generator and of generators that layers hold (seeded Dropout)."""
    held = model._random_generators()
    return {"global": held.pop("global"), "layers": held}


def _own_objects(model):
    """The classes and functions of the model's compile arguments, by the names a file gives
    them: what loading finds again in `custom_objects` when they are not registered."""
    given = dict(getattr(model, "_compile_arguments", None) or {})
    leaves = []
    for key in ("loss", "metrics", "weighted_metrics"):
        _map_leaves(leaves.append, given.get(key))
    optimizer = model.optimizer
    leaves += [optimizer, getattr(optimizer, "_learning_rate", None)]
    # A function a wrapper holds (LossFunctionWrapper(fn), MeanMetricWrapper(fn)).
    leaves += [getattr(leaf, attribute, None) for leaf in leaves for attribute in ("fn", "_fn")]
    found = {}
    for leaf in leaves:
        if leaf is None or isinstance(leaf, (str, int, float)):
            continue
        obj = leaf if callable(leaf) and hasattr(leaf, "__name__") else type(leaf)
        found.setdefault(getattr(obj, "__name__", None), obj)
    found.pop(None, None)
    return found


def _training_payload(model, table):
    """The compile config, training.json and the optimizer's arrays; Nones if not saveable."""
    if not getattr(model, "compiled", False):
        return None, None, None
    try:
        config = {
            "optimizer": optimizers.serialize(model.optimizer),
            **_compile_entries(model),
            "report_unchanged": bool(model.report_unchanged),
            "steps_per_execution": model.steps_per_execution,
            **compile_flags(model.run_eagerly, model.jit_compile),
        }
        to_json(config, "the compile arguments")
        # They can be made again: by their registered names, or, for what is not
        # registered, by the names custom_objects will give them when loading (as Keras).
        _compile_objects(config, {**custom_objects_by_name(), **_own_objects(model)})
        optimizer = model.optimizer
        paths = {id(variable): path for path, _, variable in table}
        foreign = [v.name for v in optimizer._trainable_variables if id(v) not in paths]
        if foreign:
            raise ValueError(f"the optimizer updates variables the model does not track: {foreign}")
        states = _random_states(model)
        training = {
            "optimizer": {
                "built": bool(optimizer.built),
                "weight_paths": [paths[id(v)] for v in optimizer._trainable_variables],
                "variables": [
                    {"name": v.name, "shape": list(v.shape), "dtype": str(v.dtype)}
                    for v in optimizer.variables
                ],
            },
            "random": {
                "global": states["global"].bit_generator.state,
                "layers": {key: g.bit_generator.state for key, g in states["layers"].items()},
            },
        }
        arrays = {str(number): v._value for number, v in enumerate(optimizer.variables)}
        return config, to_json(training, "the training state"), arrays
    except Exception as error:  # an unsaveable loss, metric, schedule...: keep the weights safe
        _warn(
            f"save: model '{model.name}' is saved without its training state (compile "
            f"arguments, optimizer state, random states), because {error}. load_model will "
            "return it uncompiled. Give compile losses, metrics and schedules that a file "
            "can name: built-ins, or def-functions and classes with get_config() (not "
            "lambdas)."
        )
        return None, None, None


def _check_training(model, variables_by_path, training, arrays, source):
    """Builds the optimizer for the saved weights, checks its saved state; returns the assigner.

    `variables_by_path` maps the file's weight paths to the model's Variables
    (`weights.saved_paths`): a subclassed model rebuilt in another session may
    name its inner layers anew.
    """
    problems = []
    document = training.get("optimizer")
    if not (
        isinstance(document, dict)
        and isinstance(document.get("built"), bool)
        and isinstance(document.get("weight_paths"), list)
        and isinstance(document.get("variables"), list)
    ):
        raise LoadError(source, ["training.json: the optimizer entry is malformed"])
    odd = [p for p in document["weight_paths"] if not isinstance(p, str)]
    if odd:
        raise LoadError(
            source, [f"training.json: the field optimizer.weight_paths holds non-paths {odd!r:.80}"]
        )
    optimizer = model.optimizer
    if document["built"]:
        unknown = [p for p in document["weight_paths"] if variables_by_path.get(p) is None]
        if unknown:
            raise LoadError(
                source, [f"training.json: the optimizer updates unknown weights {unknown}"]
            )
        try:
            optimizer.build([variables_by_path[p] for p in document["weight_paths"]])
        except ValueError as error:
            raise LoadError(source, [f"training.json: {error}"]) from error
    variables = optimizer.variables
    if _before_learning_rate_variable(document["variables"]):
        # (the rate came with the optimizer's config; its Variable keeps it)
        variables = [v for v in variables if v is not optimizer._learning_rate]
    if len(variables) != len(document["variables"]) or set(arrays) != {
        str(n) for n in range(len(variables))
    }:
        problems.append(
            f"optimizer.npz holds {len(arrays)} arrays and training.json lists "
            f"{len(document['variables'])} variables, but the optimizer has {len(variables)}"
        )
    else:
        for number, (variable, entry) in enumerate(zip(variables, document["variables"])):
            array = arrays[str(number)]
            if variable is optimizer.iterations and _an_older_count(array, entry):
                continue  # (assigned as int32)
            if array.shape != variable.shape or array.dtype != variable.dtype:
                problems.append(
                    f"optimizer variable {number} ('{variable.name}'): expected shape "
                    f"{variable.shape} and dtype {variable.dtype}, the file has {array.shape} "
                    f"and {array.dtype}"
                )
            elif not (
                isinstance(entry, dict)
                and entry.get("shape") == list(variable.shape)
                and entry.get("dtype") == str(variable.dtype)
            ):
                problems.append(
                    f"training.json: the field variables[{number}] is {entry!r:.100}, but "
                    f"optimizer.npz and the optimizer have shape {list(variable.shape)} and "
                    f"dtype {variable.dtype}"
                )
    generators = _checked_random_states(model, training.get("random"), problems)
    if problems:
        raise LoadError(source, problems, "The file's training state is inconsistent.")

    def assign():
        for number, variable in enumerate(variables):
            variable.assign(arrays[str(number)])
        for generator, state in generators:
            generator.bit_generator.state = state

    return assign


def _before_learning_rate_variable(entries):
    """Whether a file lists the optimizer's variables as minikeras did while its learning
    rate was a float, not a Variable: `iterations` (so named then), then the slots."""
    first = entries[0] if entries else None
    return isinstance(first, dict) and first.get("name") == "iterations"


def _checked_random_states(model, saved, problems):
    """`(generator, state)` pairs, each state tried on a scratch generator first."""
    if not isinstance(saved, dict) or not isinstance(saved.get("layers"), dict):
        problems.append("training.json: the random states are malformed")
        return []
    held = _random_states(model)
    targets = [("the global random generator", held["global"], saved.get("global"))]
    for key, state in saved["layers"].items():
        if key not in held["layers"]:
            problems.append(f"training.json: no layer holds the random generator '{key}'")
            continue
        targets.append((f"the random generator '{key}'", held["layers"][key], state))
    pairs = []
    for label, generator, state in targets:
        try:
            type(generator.bit_generator)().state = state
        except Exception as error:
            problems.append(f"training.json: invalid state of {label}: {error!r:.200}")
            continue
        pairs.append((generator, state))
    return pairs
