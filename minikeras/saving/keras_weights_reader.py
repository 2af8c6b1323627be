"""A Keras 3 weights file (`model.weights.h5`, or plain `.npz`) checked against a model.

`load_keras_weights` reads every group at the path `keras_layout` gives
(and the optimizer's `optimizer/vars/<i>`), checks each weight's shape,
dtype and range against the model's variable, and returns a function that
assigns them all: nothing changes until every weight has been checked.
`.npz` weights are read only as plain arrays, never unpickled.
"""

import io

import numpy as np

from minikeras.saving import (
    keras_layout,
    keras_layout_former,
    keras_optimizer_layout,
    keras_order,
)
from minikeras.saving.archive import LoadError
from minikeras.saving.keras_writer import _h5py, _overrides

__all__ = ["load_keras_weights"]


def _weights_reader(path, data):
    """`read(group_path)` -> list of arrays of that group, for an .h5 or a plain .npz."""
    if data[:4] == b"PK\x03\x04":  # an .npz: plain arrays only, never pickles
        try:
            npz = np.load(io.BytesIO(data), allow_pickle=False)
            arrays = {key: npz[key] for key in npz.files}
        except ValueError as error:
            raise LoadError(path, [f"model.weights.npz holds objects, refused: {error}"]) from None

        def read_npz(group, by_key=False):
            if by_key:
                prefix = group + "/"
                return {k[len(prefix) :]: v for k, v in arrays.items() if k.startswith(prefix)}
            found, index = [], 0
            while f"{group}/{index}" in arrays:
                found.append(arrays[f"{group}/{index}"])
                index += 1
            return found

        return read_npz
    h5py = _h5py()
    try:
        file = h5py.File(io.BytesIO(data), "r")
    except OSError as error:
        raise LoadError(path, [f"the weights are not a readable HDF5 file: {error}"]) from None

    def read_h5(group, by_key=False):
        if group not in file:
            return None
        node = file[group]
        if not isinstance(node, h5py.Group):
            return None
        if by_key:  # what a layer's own save_own_variables wrote, by its keys
            return {key: node[key] for key in node if isinstance(node[key], h5py.Dataset)}
        return [node[str(index)] for index in range(len(node)) if str(index) in node]

    return read_h5


def _check_value(variable, dataset, where, problems):
    """The dataset's values for `variable`, or None with the problem recorded."""
    shape = tuple(dataset.shape)
    if shape != tuple(variable.shape):
        problems.append(
            f"{where}: the file's weight has shape {shape}, '{variable.path}' needs "
            f"{tuple(variable.shape)}"
        )
        return None
    dtype = np.dtype(dataset.dtype)
    if dtype.kind not in "biuf":
        problems.append(f"{where}: the file's weight has dtype {dtype}, not numbers")
        return None
    array = np.asarray(dataset[()])
    target = np.dtype(variable.dtype)
    if target.kind == "f" and array.dtype.kind == "f":
        finite = np.isfinite(array)
        if (np.abs(array[finite]) > np.finfo(target).max).any():
            problems.append(f"{where}: values do not fit '{variable.path}' ({target})")
            return None
    return array.astype(target)


def _group_values(variables, datasets, group, problems):
    """`(variable, array)` for each dataset that fits its variable; problems recorded."""
    found = []
    for index, (variable, dataset) in enumerate(zip(variables, datasets)):
        array = _check_value(variable, dataset, f"{group}/{index}", problems)
        if array is not None:
            found.append((variable, array))
    return found


def load_keras_weights(model, data, path, optimizer=None, skip_mismatch=False):
    """Checks every weight of a Keras weights file against `model`; returns the assigner.

    Args:
        model: the built model.
        data: the bytes of `model.weights.h5` (or `.npz`).
        path: the file, for messages.
        optimizer: the model's built optimizer, to restore its variables too.
        skip_mismatch: as Keras's `load_weights(..., skip_mismatch=True)`:
            leave out each layer whose weights do not fit (all of its weights,
            as Keras does) instead of raising; the assigner's `skipped` lists
            the problems.

    Returns:
        A function that assigns everything (called only once all is checked).

    Raises:
        LoadError: listing every problem (without `skip_mismatch`); nothing
            has been assigned.

    Example:
        >>> model = mk.Sequential([mk.Input((3,)), mk.layers.Dense(2)])
        >>> data = mk.saving.keras_file.keras_weights_bytes(model)
        >>> callable(mk.saving.keras_weights_reader.load_keras_weights(model, data, "m"))
        True
    """
    read = _weights_reader(path, data)
    problems, assignments, hooks = [], [], []
    groups = keras_layout.layer_groups(model)
    locate = _locator(read, model, groups)
    for group, variables, layer in groups:
        if _overrides(layer, "load_own_variables"):  # the layer's own hook reads its group
            hooks.append((layer, _hook_values(read, locate(group, variables))))
            continue
        datasets = _read_group(read, locate(group, variables))
        if datasets is None:
            if variables:
                problems.append(f"{group}: missing (the model needs {len(variables)} weights)")
            continue
        if len(datasets) != len(variables):
            problems.append(
                f"{group}: the file has {len(datasets)} weights, the model needs {len(variables)}"
            )
            continue
        known = len(problems)
        found = _group_values(variables, datasets, group, problems)
        if len(problems) > known:
            # A file minikeras wrote while it listed a layer's own weights by creation (a
            # non-trainable one made before a trainable one, not Keras's order): they fit so.
            created, retried = sorted(variables, key=lambda variable: variable._index), []
            if [id(v) for v in created] != [id(v) for v in variables]:
                found_created = _group_values(created, datasets, group, retried)
                if not retried:
                    found = found_created
                    del problems[known:]
        if len(problems) == known:  # (a layer loads whole or, skipped, not at all)
            assignments.extend(found)
    wrapped = None
    if optimizer is not None:
        slots = _optimizer_slots(model, optimizer, path)
        datasets = read("optimizer/vars")
        wrapped = _loss_scaled(model, optimizer, slots, datasets)
        if wrapped is not None:
            optimizer, slots = wrapped, _optimizer_slots(model, wrapped, path)
        # A model compiled but never trained: Keras writes only the iterations (and the
        # learning rate), its slots not made yet; they start afresh here too.
        leading = optimizer._leading
        inner = getattr(optimizer, "inner_optimizer", None)
        if inner is not None and datasets is not None and len(datasets) == leading + inner._leading:
            # (Keras's LossScaleOptimizer never built: its own two, then its inner's)
            slots = optimizer._variables[:leading] + inner.variables[: inner._leading]
        if datasets is not None and (
            len(datasets) == len(slots) or (len(datasets) == leading < len(slots))
        ):
            for index, (variable, dataset) in enumerate(zip(slots, datasets)):
                array = _check_value(variable, dataset, f"optimizer/vars/{index}", problems)
                if array is not None:
                    assignments.append((variable, array))
        elif datasets is not None:
            problems.append(
                f"optimizer/vars: the file has {len(datasets)} variables, the "
                f"{type(optimizer).__name__} needs {len(slots)}"
            )
    if problems and not skip_mismatch:
        raise LoadError(path, problems)

    def assign():
        for variable, array in assignments:
            variable.assign(array)
        for layer, store in hooks:
            layer.load_own_variables(store)
        if wrapped is not None:
            model.optimizer = wrapped

    assign.skipped = problems
    return assign


def _optimizer_slots(model, optimizer, path):
    """The optimizer's variables in the order Keras writes them (or LoadError)."""
    order = keras_order.trainable_order(model, optimizer._trainable_variables)
    try:
        return keras_optimizer_layout.optimizer_variables(optimizer, order)
    except ValueError as error:  # (a kind whose Keras layout minikeras does not know)
        raise LoadError(
            path, [f"optimizer: {error}; load_model(..., compile=False) gives the model"]
        ) from None


def _loss_scaled(model, optimizer, slots, datasets):
    """A `LossScaleOptimizer` around `optimizer`, built, if the file holds one's variables.

    Keras wraps the optimizer of a mixed_float16 model when it compiles and
    writes the wrapper's four variables (iterations, learning rate,
    `step_counter`, `dynamic_scale`) before the inner optimizer's. A
    functional model's own policy is the global one where it is loaded, so
    its compile may not wrap (Keras's does not either: it warns and drops
    the optimizer's state); the file then has four variables more than the
    optimizer. None when that is not the case.
    """
    from minikeras.optimizers import LossScaleOptimizer

    if datasets is None or isinstance(optimizer, LossScaleOptimizer):
        return None
    # (compiled, never trained: Keras writes the wrapper's iteration and learning rate, then
    # the inner optimizer's)
    if len(datasets) == len(slots) or len(datasets) not in (
        len(slots) + 4,
        optimizer._leading + 2,
    ):
        return None
    layers = [layer for _, _, layer in keras_layout.layer_groups(model) if layer is not None]
    policies = {layer.dtype_policy.name for layer in layers}
    if "mixed_float16" not in policies:
        return None
    wrapped = LossScaleOptimizer(optimizer, name="loss_scale_optimizer")
    wrapped.build(list(optimizer._trainable_variables))
    return wrapped


def _apply_hooks(model, data, path):
    """Runs the `load_own_variables` hooks that a layer overrides, from a Keras weights file."""
    read = _weights_reader(path, data)
    groups = keras_layout.layer_groups(model)
    locate = _locator(read, model, groups)
    for group, variables, layer in groups:
        if _overrides(layer, "load_own_variables"):
            layer.load_own_variables(_hook_values(read, locate(group, variables)))


def _hook_values(read, paths):
    """A group's arrays by key, for a layer's own `load_own_variables` hook."""
    stored = _read_group(read, paths, by_key=True) or {}
    return {key: np.asarray(value[()]) for key, value in stored.items()}


def _read_group(read, paths, by_key=False):
    """The datasets at the first of `paths` the file has, or None."""
    for path in paths:
        found = read(path, by_key=by_key)
        if found is not None:
            return found
    return None


def _locator(read, model, groups):
    """`locate(group, variables)`: the paths to read a group at, in the file's layout.

    Keras's path (or where Keras before 3.3 kept it, `keras_layout.older_path`)
    when the file has every group there; else the path under the first former
    minikeras layout (`keras_layout_former`) the file has every group at; else,
    group by group, all of those in that order.
    """

    def keras_paths(group):
        older = keras_layout.older_path(group)
        return (group,) if older is None else (group, older)

    def present(paths):
        return any(read(path) is not None for path in paths)

    needed = [(group, tuple(map(id, variables))) for group, variables, _ in groups if variables]
    if all(present(keras_paths(group)) for group, _ in needed):
        return lambda group, variables: keras_paths(group)
    layouts = keras_layout_former.former_paths(model)
    for layout in layouts:
        if all(present((layout.get(ids, group),)) for group, ids in needed):
            # (a group without variables, such as a replaced layer's, had no place then)
            return lambda group, variables, layout=layout: (
                (layout.get(tuple(map(id, variables)), group),) if variables else ()
            )

    def every_path(group, variables):
        ids = tuple(map(id, variables))
        former = [layout[ids] for layout in layouts if variables and ids in layout]
        return tuple(dict.fromkeys((*keras_paths(group), *former)))

    return every_path
