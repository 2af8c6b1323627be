"""Saving and loading whole models: the architecture, the weights and the training state.

The training state is what `fit` needs to go on as if never interrupted:
the compile arguments, the optimizer's variables (its iteration count first,
then its per-weight state, listed with the paths of the weights they belong
to) and the states of the random generators (the global one, which shuffles
and drops out, and those that layers hold). See `weights` for how weights
are matched and checked.
"""

import os
import zipfile

from minikeras import losses, metrics, optimizers, random
from minikeras.saving import archive
from minikeras.saving.archive import LoadError, to_json
from minikeras.saving.keras_config import compile_flags
from minikeras.saving.registry import custom_objects_by_name, deserialize_layer, serialize_layer
from minikeras.saving.weights import (
    _check_built,
    _match,
    _read_weights,
    _warn,
    _weights_payload,
    weight_table,
)

__all__ = ["load_model", "save_model"]

# ---------------------------------------------------------------- the model


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
    from minikeras.trainers.compile_utils import output_names

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
    return {
        "loss": _map_leaves(
            lambda loss: loss if loss is None or isinstance(loss, str) else losses.serialize(loss),
            identifier,
        ),
        "loss_weights": model.loss_weights,
        "metrics": metric_entries(False) or [],
        "weighted_metrics": metric_entries(True),
    }


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
        **compile_flags(config.get("run_eagerly", False), config.get("jit_compile", "auto")),
    }
    return optimizer, arguments


def _random_states(model):
    """The state of the global generator and of generators that layers hold (seeded Dropout)."""
    held = model._random_generators()
    return {"global": held.pop("global"), "layers": held}


def _training_payload(model, table):
    """The compile config, training.json and the optimizer's arrays; Nones if not saveable."""
    if not getattr(model, "compiled", False):
        return None, None, None
    try:
        config = {
            "optimizer": optimizers.serialize(model.optimizer),
            **_compile_entries(model),
            "report_unchanged": bool(model.report_unchanged),
            **compile_flags(model.run_eagerly, model.jit_compile),
        }
        to_json(config, "the compile arguments")
        _compile_objects(config, custom_objects_by_name())  # they can be made again
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
            "return it uncompiled. Use named, registered functions and schedules "
            "(@minikeras.saving.register_serializable()) to save the training state."
        )
        return None, None, None


def _is_keras_file(filepath):
    """Whether the file is a Keras-format zip (its weights are model.weights.*), not read whole."""
    try:
        archive.check_regular_file(filepath)
        if not zipfile.is_zipfile(filepath):
            return False
        with zipfile.ZipFile(filepath) as zipped:
            names = zipped.namelist()[:MAX_NAMES_TO_LOOK_AT]
            return "model.weights.h5" in names or "model.weights.npz" in names
    except (OSError, zipfile.BadZipFile, NotImplementedError, ValueError, EOFError):
        return False  # not a zip this can open: the minikeras reader says what is wrong


MAX_NAMES_TO_LOOK_AT = 64


def save_model(model, filepath, overwrite=True):
    """Saves a model: its architecture, its weights and its training state, atomically.

    The training state (compile arguments, the optimizer's variables and
    iteration count, the random generators' states) lets `fit` continue
    exactly where it stopped after `load_model`.

    Args:
        model: a built Sequential or functional model, or a registered
            subclassed model that can be rebuilt from its config.
        filepath: the path (`.minikeras` is the suggested suffix).
        overwrite: if False, an existing file is an error.

    Returns:
        None.

    Raises:
        ValueError: if the model is not built, or cannot be rebuilt from its
            config (a subclassed model: the message says to save its weights).
        FileExistsError: if the file exists and `overwrite` is False.

    Example:
        >>> import tempfile, pathlib
        >>> from minikeras import Sequential
        >>> from minikeras.layers import Dense, Input
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "model.minikeras"
        >>> model = Sequential([Input((3,)), Dense(2)])
        >>> mk.saving.save_model(model, path)
        >>> loaded = mk.saving.load_model(path)
        >>> np.array_equal(loaded.predict(np.ones((1, 3))), model.predict(np.ones((1, 3))))
        True
    """
    if os.fspath(filepath).endswith(".keras"):  # Keras 3's format, which Keras loads too
        from minikeras.saving.keras_file import save_keras_model

        return save_keras_model(model, filepath, overwrite=overwrite)
    _check_built(model, "save")
    entry = serialize_layer(model)
    table = weight_table(model)
    compile_config, training, optimizer_arrays = _training_payload(model, table)
    index, arrays = _weights_payload(table)
    config = to_json({"model": entry, "compile": compile_config}, "the model's config")
    documents = {"config.json": config, "weights.json": index}
    tables = {"weights.npz": arrays}
    if training is not None:
        documents["training.json"] = training
        tables["optimizer.npz"] = optimizer_arrays
    archive.write_archive(filepath, "model", documents, tables, overwrite)


def load_model(filepath, custom_objects=None, compile=True, safe_mode=True):  # noqa: A002
    """Loads a model saved by `Model.save`, checked before anything is assigned.

    With `compile=True` the training state comes back too: the model is
    compiled as it was, its optimizer has its variables and iteration count,
    and the global random generator (and those layers hold) are set to their
    saved states, so `fit(..., initial_epoch=...)` continues exactly.
    Otherwise the global random stream is left as it was.

    Args:
        filepath: the path.
        custom_objects: optional dict of name -> class or function, for
            classes and functions that are not registered.
        compile: restore the training state, if the file has one.
        safe_mode: accepted for Keras's signature. minikeras never runs code
            from a file (a Keras `Lambda` saved as Python bytecode is refused
            either way), so False changes nothing.

    Returns:
        The model.

    Raises:
        LoadError: listing every problem: a wrong, truncated or corrupted
            file, a weights-only file, an unknown class, or weights that do
            not fit the architecture.
        OSError: if the file cannot be opened.

    Example:
        >>> import tempfile, pathlib
        >>> from minikeras import Sequential
        >>> from minikeras.layers import Dense, Input
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "model.minikeras"
        >>> model = Sequential([Input((3,)), Dense(2)]); model.compile("adam", "mse")
        >>> model.fit(np.ones((4, 3)), np.ones((4, 2)), verbose=0).epoch
        [0]
        >>> model.save(path)
        >>> int(mk.saving.load_model(path).optimizer.iterations.numpy())
        1
    """
    if _is_keras_file(filepath):  # a .keras zip, from Keras or from minikeras
        from minikeras.saving.keras_file import load_keras_model

        return load_keras_model(filepath, custom_objects=custom_objects, compile=compile)
    contents = archive.read_archive(filepath)
    if contents.kind != "model":
        raise LoadError(
            filepath,
            ["it holds weights only, not a model"],
            "Build the model in code, then call model.load_weights(path).",
        )
    generator = random.generator()
    before = generator.bit_generator.state
    try:
        model, assign = _rebuild(contents, filepath, custom_objects, compile)
    finally:
        generator.bit_generator.state = before  # building drew initial weights from it
    assign()
    return model


def _rebuild(contents, source, custom_objects, compile):  # noqa: A002
    """The model, and a function assigning its checked state; nothing global changes."""
    entries = _read_weights(contents, source)
    training = contents.documents.get("training.json")
    optimizer_arrays = contents.arrays.get("optimizer.npz")
    if (training is None) != (optimizer_arrays is None):
        raise LoadError(source, ["training.json and optimizer.npz must come together"])
    config = contents.documents["config.json"]
    try:
        model = deserialize_layer(config.get("model"), custom_objects)
    except Exception as error:
        raise LoadError(source, [f"config.json: {error}"]) from error
    if not model.built:
        raise LoadError(source, ["config.json does not say how to build the model"])
    table = weight_table(model)
    pairs, problems = _match(table, entries)
    if problems:
        raise LoadError(source, problems, "The weights do not fit the file's own architecture.")
    restore_training = lambda: None  # noqa: E731
    compile_config = config.get("compile")
    if compile and compile_config is not None:
        try:
            objects = custom_objects_by_name(custom_objects)
            optimizer, arguments = _compile_objects(compile_config, objects)
            model.compile(optimizer, **arguments)
        except Exception as error:
            raise LoadError(
                source,
                [f"config.json: the compile arguments cannot be restored: {error}"],
                "Pass compile=False to load the model without its training state.",
            ) from error
        if training is not None:
            restore_training = _check_training(model, table, training, optimizer_arrays, source)

    def assign():
        for variable, array in pairs:
            variable.assign(array)
        restore_training()

    return model, assign


def _check_training(model, table, training, arrays, source):
    """Builds the optimizer for the saved weights, checks its saved state; returns the assigner."""
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
    variables_by_path = {path: variable for path, _, variable in table}
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
