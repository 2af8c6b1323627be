"""Saving and loading models and weights: what goes into a file, and the checks on the way back.

Weights are keyed by their tracked path (`ff1/dense_1/kernel`, as
`tracking_report()` shows them), so that creating layers in another order
cannot put a weight in the wrong place. Each weight also has a position key,
Keras 3's: inside a Sequential or functional model a layer is named by its
class and rank among the layers of that class (`ff1/dense_1/kernel` is then
the second Dense of `ff1`, whatever its name). When the names differ, as
between two copies of a model built with automatic names, the position keys
match the weights instead, if they match more of them.

Loading checks everything (the file, then every weight's presence, shape and
dtype, then the optimizer's state) before it assigns anything.
"""

import os
import sys
import warnings

import numpy as np

from minikeras import losses, metrics, optimizers, random
from minikeras.layers import tracking
from minikeras.layers.layer import Layer, _snake_case
from minikeras.saving import archive
from minikeras.saving.archive import LoadError, to_json
from minikeras.saving.registry import custom_objects_by_name, deserialize_layer, serialize_layer

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_MATCHING_HINT = (
    "Weights are matched by their tracked paths (see model.tracking_report()), or, when "
    "layer names differ, by each layer's class and position in its model. With "
    "skip_mismatch=True the matching weights are loaded and the rest listed in a warning."
)


def _warn(message):
    """A UserWarning pointing at the user's line, however deep in minikeras it was raised."""
    level, frame = 1, sys._getframe()
    while frame.f_back is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIR):
        level, frame = level + 1, frame.f_back
    warnings.warn(message, UserWarning, stacklevel=level)


def _check_built(layer, action):
    if not layer.built:
        raise ValueError(
            f"{action}: {type(layer).__name__} '{layer.name}' is not built yet, so it has no "
            "weights: call it on a batch of data, or call build(input_shape), first"
        )


# ---------------------------------------------------------------- the weights


def weight_table(layer):
    """Each weight of `layer` with its tracked path and its position key, in creation order.

    Args:
        layer: a layer or model.

    Returns:
        A list of `(path, key, variable)`.

    Example:
        >>> from minikeras import Sequential
        >>> from minikeras.layers import Dense, Input
        >>> model = Sequential([Input((3,)), Dense(2, name="first"), Dense(1, name="second")])
        >>> [(path, key) for path, key, _ in weight_table(model)][2:]
        [('second/kernel', 'dense_1/kernel'), ('second/bias', 'dense_1/bias')]
    """
    prefixes = {id(layer): ("", "")}  # id(layer) -> (its path prefix, its key prefix)
    positions = {}  # id(container) -> {id(sub-layer): position name}
    table = []
    for path, owner, value in tracking.walk(layer):
        owner_path, owner_key = prefixes[id(owner)]
        relative = path[len(owner_path) :]
        key = owner_key + _position_name(owner, value, relative, positions)
        if isinstance(value, Layer):
            prefixes[id(value)] = (path + "/", key + "/")
        else:
            table.append((path, key, value))
    table.sort(key=lambda row: row[2]._index)
    return table


def _position_name(owner, value, relative, positions):
    """A Sequential's or functional model's layer is named by class and rank, not by name."""
    container = owner.__dict__.get("_layers")
    if not (
        isinstance(value, Layer)
        and isinstance(container, list)
        and relative == value.name
        and any(layer is value for layer in container)
    ):
        return relative
    if id(owner) not in positions:
        names, counts = {}, {}
        for layer in container:
            base = _snake_case(type(layer).__name__)
            count = counts[base] = counts.get(base, -1) + 1
            names[id(layer)] = base if count == 0 else f"{base}_{count}"
        positions[id(owner)] = names
    return positions[id(owner)][id(value)]


def _weights_payload(table):
    index = [
        {"path": path, "key": key, "shape": list(v.shape), "dtype": str(v.dtype)}
        for path, key, v in table
    ]
    return to_json({"weights": index}, "the weights index"), {p: v._value for p, _, v in table}


def _is_shape(value):
    return isinstance(value, list) and all(type(s) is int and s >= 0 for s in value)


def _read_weights(contents, source):
    """The file's weights as `(path, key, array)`, the index checked against the arrays."""
    index = contents.documents["weights.json"].get("weights")
    arrays = contents.arrays["weights.npz"]
    if not isinstance(index, list):
        raise LoadError(source, ["weights.json has no list 'weights'"])
    entries, problems, paths, keys = [], [], set(), set()
    for number, entry in enumerate(index):
        if not (
            isinstance(entry, dict)
            and isinstance(entry.get("path"), str)
            and isinstance(entry.get("key"), str)
            and _is_shape(entry.get("shape"))
            and isinstance(entry.get("dtype"), str)
        ):
            problems.append(f"weights.json: entry {number} is malformed: {entry!r:.120}")
            continue
        path, key = entry["path"], entry["key"]
        if path in paths or key in keys:
            problems.append(f"weights.json lists '{path}' (key '{key}') twice")
        paths.add(path)
        keys.add(key)
        array = arrays.get(path)
        if array is None:
            problems.append(f"weights.npz has no array for '{path}'")
        elif list(array.shape) != entry["shape"] or str(array.dtype) != entry["dtype"]:
            problems.append(
                f"weights.npz: '{path}' has shape {array.shape} and dtype {array.dtype}, but "
                f"weights.json says {tuple(entry['shape'])} and {entry['dtype']}"
            )
        else:
            entries.append((path, key, array))
    problems += [
        f"weights.npz holds '{path}', which weights.json does not list"
        for path in arrays
        if path not in paths
    ]
    if problems:
        raise LoadError(source, problems, "The file is inconsistent: edited or corrupted.")
    return entries


def _match(table, entries):
    """Pairs each weight with its array; lists what is missing, unexpected or mismatched."""
    by_path = sum(path in {p for p, _, _ in entries} for path, _, _ in table)
    by_key = sum(key in {k for _, k, _ in entries} for _, key, _ in table)
    use_key = by_key > by_path
    saved = {(key if use_key else path): (path, array) for path, key, array in entries}
    pairs, problems = [], []
    for path, key, variable in table:
        found = saved.pop(key if use_key else path, None)
        label = f"'{path}'" + (f" (position '{key}')" if use_key else "")
        if found is None:
            problems.append(f"missing: {label}, shape {variable.shape}, is not in the file")
            continue
        saved_path, array = found
        if use_key and saved_path != path:
            label += f" (saved as '{saved_path}')"
        if array.shape != variable.shape:
            problems.append(
                f"shape mismatch: {label}: the model's is {variable.shape}, "
                f"the file's {array.shape}"
            )
        elif not np.can_cast(array.dtype, variable.dtype, "same_kind"):
            problems.append(
                f"dtype mismatch: {label}: the model's is {variable.dtype}, the file's "
                f"{array.dtype}, which does not convert safely"
            )
        else:
            pairs.append((variable, array.astype(variable.dtype, copy=False)))
    problems += [
        f"unexpected: '{path}', shape {array.shape}, is in the file but not in the model"
        for path, array in saved.values()
    ]
    return pairs, problems


def save_weights(layer, filepath, overwrite=True):
    """Saves a layer's or model's weights, keyed by their tracked paths, atomically.

    A sub-model saves on its own: `model.ff1.save_weights(path)` keys the
    weights relative to `ff1`, for `other.ff1.load_weights(path)`.

    Args:
        layer: a built layer or model.
        filepath: the path (`.weights.minikeras` is the suggested suffix).
        overwrite: if False, an existing file is an error.

    Returns:
        None.

    Raises:
        ValueError: if the layer is not built.
        FileExistsError: if the file exists and `overwrite` is False.

    Example:
        >>> import tempfile, pathlib
        >>> from minikeras.layers import Dense
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "dense.weights.minikeras"
        >>> layer = Dense(2); layer.build((None, 3))
        >>> save_weights(layer, path)
        >>> other = Dense(2); other.build((None, 3)); load_weights(other, path)
        >>> np.array_equal(other.kernel.numpy(), layer.kernel.numpy())
        True
    """
    _check_built(layer, "save_weights")
    index, arrays = _weights_payload(weight_table(layer))
    archive.write_archive(
        filepath, "weights", {"weights.json": index}, {"weights.npz": arrays}, overwrite
    )


def load_weights(layer, filepath, skip_mismatch=False):
    """Loads weights saved by `save_weights` (or the weights of a model file).

    Every weight of the file and of the layer is checked (present on both
    sides, same shape, a dtype that converts safely) before any is assigned.

    Args:
        layer: a built layer or model.
        filepath: the path.
        skip_mismatch: load the weights that match, and list the others
            (missing, unexpected, mismatched) in a warning, instead of raising.

    Returns:
        None.

    Raises:
        ValueError: if the layer is not built.
        LoadError: listing every problem, with the layer unchanged: a wrong,
            truncated or corrupted file, or (without `skip_mismatch`) missing,
            unexpected or mismatched weights.
        OSError: if the file cannot be opened.

    Example:
        >>> import tempfile, pathlib
        >>> from minikeras.layers import Dense
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "dense.weights.minikeras"
        >>> small = Dense(2); small.build((None, 3)); save_weights(small, path)
        >>> big = Dense(2); big.build((None, 4))
        >>> load_weights(big, path)
        Traceback (most recent call last):
        ...
        minikeras.saving.archive.LoadError: Cannot load '...': 1 problem; nothing was changed.
          - shape mismatch: 'kernel': the model's is (4, 2), the file's (3, 2)
        ...
    """
    _check_built(layer, "load_weights")
    contents = archive.read_archive(filepath)
    pairs, problems = _match(weight_table(layer), _read_weights(contents, filepath))
    if problems and not skip_mismatch:
        raise LoadError(filepath, problems, _MATCHING_HINT)
    if problems:
        _warn(
            f"load_weights: {len(problems)} entr{'ies' if len(problems) > 1 else 'y'} of "
            f"{os.fspath(filepath)!r} skipped (skip_mismatch=True); the rest was loaded:\n"
            + "\n".join(f"  - {problem}" for problem in problems)
        )
    for variable, array in pairs:
        variable.assign(array)


# ---------------------------------------------------------------- the model


def _compile_objects(config, objects):
    """The optimizer, loss and metrics that a compile config describes (new objects)."""
    optimizer = optimizers.deserialize(config["optimizer"], objects)
    loss = config["loss"]
    if isinstance(loss, str) and loss in objects:
        loss = objects[loss]
    elif isinstance(loss, dict):
        loss = losses.deserialize(loss, objects)
    metric_list = [metrics.deserialize(metric, objects) for metric in config["metrics"]]
    return optimizer, loss, metric_list, bool(config.get("report_unchanged", True))


def _random_states(model):
    """The state of the global generator and of generators that layers hold (seeded Dropout)."""
    layers = [("", model)] + [
        (p + "/", v) for p, _, v in tracking.walk(model) if isinstance(v, Layer)
    ]
    held = {
        prefix + attribute: value
        for prefix, layer in layers
        for attribute, value in vars(layer).items()
        if isinstance(value, np.random.Generator)
    }
    return {"global": random.generator(), "layers": held}


def _training_payload(model, table):
    """The compile config, training.json and the optimizer's arrays; Nones if not saveable."""
    if not getattr(model, "compiled", False):
        return None, None, None
    try:
        identifier = model._loss_identifier
        config = {
            "optimizer": optimizers.serialize(model.optimizer),
            "loss": identifier if isinstance(identifier, str) else losses.serialize(identifier),
            "metrics": [metrics.serialize(metric) for metric in model.metrics],
            "report_unchanged": bool(model.report_unchanged),
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
        >>> save_model(model, path)
        >>> loaded = load_model(path)
        >>> np.array_equal(loaded.predict(np.ones((1, 3))), model.predict(np.ones((1, 3))))
        True
    """
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


def load_model(filepath, custom_objects=None, compile=True):  # noqa: A002 (Keras's name)
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
        >>> int(load_model(path).optimizer.iterations.numpy())
        1
    """
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
            model.compile(*_compile_objects(compile_config, objects))
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
        for number, variable in enumerate(variables):
            array = arrays[str(number)]
            if array.shape != variable.shape or array.dtype != variable.dtype:
                problems.append(
                    f"optimizer variable {number} ('{variable.name}'): expected shape "
                    f"{variable.shape} and dtype {variable.dtype}, the file has {array.shape} "
                    f"and {array.dtype}"
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
