"""Weights in files: keyed by tracked path, matched and checked before any is assigned.

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

from minikeras.layers import layer_record, tracking
from minikeras.layers.layer import Layer
from minikeras.saving import archive
from minikeras.saving.archive import LoadError, to_json
from minikeras.utils.naming import to_snake_case

__all__ = ["load_weights", "save_weights", "saved_paths", "weight_table"]

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
    """Each weight of `layer` with its tracked path and its position key, in `weights` order.

    Args:
        layer: a layer or model.

    Returns:
        A list of `(path, key, variable)`.

    Example:
        >>> from minikeras import Sequential
        >>> from minikeras.layers import Dense, Input
        >>> model = Sequential([Input((3,)), Dense(2, name="first"), Dense(1, name="second")])
        >>> [(path, key) for path, key, _ in mk.saving.weights.weight_table(model)][2:]
        [('second/kernel', 'dense_1/kernel'), ('second/bias', 'dense_1/bias')]
    """
    prefixes = {id(layer): ("", "")}  # id(layer) -> (its path prefix, its key prefix)
    positions = {}  # id(container) -> {id(sub-layer): position name}
    table, layers = [], [layer]
    for path, owner, value in tracking.walk(layer):
        owner_path, owner_key = prefixes[id(owner)]
        relative = path[len(owner_path) :]
        key = owner_key + _position_name(owner, value, relative, positions)
        if isinstance(value, Layer):
            prefixes[id(value)] = (path + "/", key + "/")
            layers.append(value)
        else:
            table.append((path, key, value))
    table += _held_before_rows(layers, prefixes)
    order = {id(variable): index for index, variable in enumerate(layer.weights)}
    # (a layer Keras's tracker leaves out of `weights`, see layer_record, comes last)
    table.sort(key=lambda row: order.get(id(row[2]), len(order)))
    return table


# A layer an attribute held before (layer_record) is reached by no attribute: its
# weights (in `weights`, as Keras's) are saved under its rank among its owner's.
_HELD_BEFORE = "(held before {})/"


def _held_before_rows(layers, prefixes):
    """`(path, key, variable)` for the weights of layers held before, by no path reached."""
    rows = []
    for owner in layers:
        owner_path, owner_key = prefixes[id(owner)]
        held = [sub for sub in layer_record.held_before(owner) if id(sub) not in prefixes]
        for rank, sub in enumerate(held):
            part = _HELD_BEFORE.format(rank)
            for path, _, value in tracking.walk(sub):
                if not isinstance(value, Layer):
                    rows.append((owner_path + part + path, owner_key + part + path, value))
    return rows


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
            base = to_snake_case(type(layer).__name__)
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


def _out_of_range(array, dtype):
    """Whether finite float values would become inf in `dtype` (1e300 into float32)."""
    target = np.dtype(dtype)
    if array.dtype.kind != "f" or target.kind != "f" or array.dtype.itemsize <= target.itemsize:
        return False
    finite = array[np.isfinite(array)]
    return bool(finite.size) and bool(np.abs(finite).max() > np.finfo(target).max)


def _before_cells(name):
    """A recurrent layer's weight as minikeras 0.2 named it: `lstm/kernel` for `lstm/cell/kernel`.

    Until SimpleRNN, LSTM and GRU held a cell, their weights were their own;
    files written then still load.
    """
    parts = name.split("/")
    if "cell" not in parts[:-1]:
        return None
    index = len(parts) - 2 - parts[-2::-1].index("cell")
    return "/".join(parts[:index] + parts[index + 1 :])


def _by_position(table, entries):
    """Whether the file's weights are matched by position key rather than by path.

    By key when more of them match so: a subclassed model rebuilt in a new
    session names its inner layers anew (`seq/dense_2/kernel` for the file's
    `seq/dense/kernel`), where their positions stay.
    """
    by_path = sum(path in {p for p, _, _ in entries} for path, _, _ in table)
    by_key = sum(key in {k for _, k, _ in entries} for _, key, _ in table)
    return by_key > by_path


def saved_paths(table, entries):
    """`{the file's path of a weight: the model's Variable}`, matched as `_match` does.

    Args:
        table: the model's `weight_table`.
        entries: the file's `(path, key, array)`.

    Returns:
        A dict; a file's weight the model lacks is left out.

    Example:
        >>> layer = mk.layers.Dense(1, name="new")
        >>> layer.build((None, 2))
        >>> table = mk.saving.weights.weight_table(layer)
        >>> entries = [("old/kernel", "kernel", None), ("old/bias", "bias", None)]
        >>> sorted(mk.saving.weights.saved_paths(table, entries))
        ['old/bias', 'old/kernel']
    """
    use_key = _by_position(table, entries)
    variables = {(key if use_key else path): variable for path, key, variable in table}
    found = {}
    for path, key, _ in entries:
        variable = variables.get(key if use_key else path)
        if variable is not None:
            found[path] = variable
    return found


def _match(table, entries):
    """Pairs each weight with its array; lists what is missing, unexpected or mismatched."""
    use_key = _by_position(table, entries)
    saved = {(key if use_key else path): (path, array) for path, key, array in entries}
    pairs, problems = [], []
    for path, key, variable in table:
        found = saved.pop(key if use_key else path, None)
        if found is None:
            found = saved.pop(_before_cells(key if use_key else path), None)
        label = f"'{path}'" + (f" (position '{key}')" if use_key else "")
        if found is None and "(held before " in path:
            continue  # (a file from before minikeras saved them: they keep their values)
        if found is None:
            problems.append(f"missing: {label}, shape {variable.shape}, is not in the file")
            continue
        saved_path, array = found
        if use_key and saved_path != path:
            label = f"'{path}' (matched by position to the file's '{saved_path}')"
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
        elif _out_of_range(array, variable.dtype):
            problems.append(
                f"out of range: {label}: the file's values (up to "
                f"{np.abs(array[np.isfinite(array)]).max():.3g}) do not fit {variable.dtype}"
            )
        else:
            pairs.append((variable, array.astype(variable.dtype, copy=False)))
    problems += [
        f"unexpected: '{path}', shape {array.shape}, is in the file but not in the model"
        for path, array in saved.values()
    ]
    return pairs, problems


def save_weights(model, filepath, overwrite=True, max_shard_size=None):
    """Saves a layer's or model's weights, keyed by their tracked paths, atomically.

    A sub-model saves on its own: `model.ff1.save_weights(path)` keys the
    weights relative to `ff1`, for `other.ff1.load_weights(path)`.

    Args:
        model: a built layer or model (Keras's name for the argument).
        filepath: the path (`.weights.minikeras` is the suggested suffix).
        overwrite: if False, an existing file is an error.
        max_shard_size: None only (Keras 3's sharded weight files are not
            written).

    Returns:
        None.

    Raises:
        ValueError: if the layer is not built.
        FileExistsError: if the file exists and `overwrite` is False.
        NotImplementedError: for a `max_shard_size` other than None.

    Example:
        >>> import tempfile, pathlib
        >>> from minikeras.layers import Dense
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "dense.weights.minikeras"
        >>> layer = Dense(2); layer.build((None, 3))
        >>> mk.saving.save_weights(layer, path)
        >>> other = Dense(2); other.build((None, 3)); mk.saving.load_weights(other, path)
        >>> np.array_equal(other.kernel.numpy(), layer.kernel.numpy())
        True
    """
    if max_shard_size is not None:
        raise NotImplementedError(
            f"save_weights: max_shard_size={max_shard_size!r} (Keras's sharded weight files) "
            "is not supported by minikeras; leave it None"
        )
    _check_built(model, "save_weights")
    if os.fspath(filepath).endswith(".weights.h5"):  # Keras's layout: keras load_weights reads it
        from minikeras.saving.keras_file import save_keras_weights

        return save_keras_weights(model, filepath, overwrite=overwrite)
    index, arrays = _weights_payload(weight_table(model))
    archive.write_archive(
        filepath, "weights", {"weights.json": index}, {"weights.npz": arrays}, overwrite
    )


def load_weights(model, filepath, skip_mismatch=False):
    """Loads weights saved by `save_weights` (or the weights of a model file).

    Every weight of the file and of the layer is checked (present on both
    sides, same shape, a dtype that converts safely) before any is assigned.

    Args:
        model: a built layer or model (Keras's name for the argument).
        filepath: the path: a minikeras weights or model file, a Keras
            `.weights.h5`, or a Keras `.keras` model file (its model's
            weights; the optimizer's state stays as it is).
        skip_mismatch: load the weights that match, and list the others
            (missing, unexpected, mismatched) in a warning, instead of raising
            (from a Keras file, as Keras does, a layer whose weights do not
            all fit is left out whole).

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
        >>> small = Dense(2); small.build((None, 3)); mk.saving.save_weights(small, path)
        >>> big = Dense(2); big.build((None, 4))
        >>> mk.saving.load_weights(big, path)
        Traceback (most recent call last):
        ...
        minikeras.saving.archive.LoadError: Cannot load '...': 1 problem; nothing was changed.
          - shape mismatch: 'kernel': the model's is (4, 2), the file's (3, 2)
        ...
    """
    _check_built(model, "load_weights")
    if os.fspath(filepath).endswith(".h5"):  # Keras's .weights.h5 layout
        from minikeras.saving.keras_file import load_keras_weights

        with open(filepath, "rb") as stream:
            data = stream.read()
        assign = load_keras_weights(model, data, filepath, skip_mismatch=skip_mismatch)
        _warn_skipped(filepath, assign.skipped)
        assign()
        return
    if os.fspath(filepath).endswith(".keras"):  # a Keras model file: its model.weights.h5
        from minikeras.saving.keras_file import load_keras_file_weights

        _warn_skipped(filepath, load_keras_file_weights(model, filepath, skip_mismatch))
        return
    contents = archive.read_archive(filepath)
    pairs, problems = _match(weight_table(model), _read_weights(contents, filepath))
    if problems and not skip_mismatch:
        raise LoadError(filepath, problems, _MATCHING_HINT)
    _warn_skipped(filepath, problems)
    for variable, array in pairs:
        variable.assign(array)


def _warn_skipped(filepath, problems):
    if problems:
        _warn(
            f"load_weights: {len(problems)} entr{'ies' if len(problems) > 1 else 'y'} of "
            f"{os.fspath(filepath)!r} skipped (skip_mismatch=True); the rest was loaded:\n"
            + "\n".join(f"  - {problem}" for problem in problems)
        )
