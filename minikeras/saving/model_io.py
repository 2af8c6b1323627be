"""Saving and loading whole models: the architecture, the weights and the training state.

The training state is what `fit` needs to go on as if never interrupted:
the compile arguments, the optimizer's variables (its iteration count first,
then its per-weight state, listed with the paths of the weights they belong
to) and the states of the random generators (the global one, which shuffles
and drops out, and those that layers hold). See `weights` for how weights
are matched and checked, and `saved_training_state` for how the training
state is written and checked.
"""

import os
import zipfile

from minikeras import random
from minikeras.saving import archive, sharing
from minikeras.saving.archive import LoadError, to_json
from minikeras.saving.compile_config import custom_compile_skipped
from minikeras.saving.registry import custom_objects_by_name, deserialize_layer, serialize_layer
from minikeras.saving.saved_training_state import (
    _check_training,
    _compile_objects,
    _legacy_lists,
    _training_payload,
)
from minikeras.saving.weights import (
    _check_built,
    _match,
    _read_weights,
    _weights_payload,
    saved_paths,
    weight_table,
)

__all__ = ["load_model", "save_model"]


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


def save_model(model, filepath, overwrite=True, zipped=None):
    """Saves a model: its architecture, its weights and its training state, atomically.

    The training state (compile arguments, the optimizer's variables and
    iteration count, the random generators' states) lets `fit` continue
    exactly where it stopped after `load_model`.

    Args:
        model: a built Sequential or functional model, or a registered
            subclassed model that can be rebuilt from its config.
        filepath: the path (`.minikeras` is the suggested suffix).
        overwrite: if False, an existing file is an error.
        zipped: None or True (Keras 3.15's argument): one zip file. Keras's
            unzipped directory layout (`zipped=False`) is not written.

    Returns:
        None.

    Raises:
        ValueError: if the model is not built, or cannot be rebuilt from its
            config (a subclassed model: the message says to save its weights).
        FileExistsError: if the file exists and `overwrite` is False.
        NotImplementedError: for `zipped=False`.

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
    if zipped is not None and not zipped:
        raise NotImplementedError(
            f"save_model: zipped={zipped!r} (Keras's unzipped directory layout) is not "
            "supported by minikeras; leave `zipped` None or True to write one zip file"
        )
    if os.fspath(filepath).endswith(".keras"):  # Keras 3's format, which Keras loads too
        from minikeras.saving.keras_file import save_keras_model

        return save_keras_model(model, filepath, overwrite=overwrite)
    _check_built(model, "save")
    with sharing.sharing_scope():
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
        with sharing.sharing_scope():  # a layer that several models hold is built once
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
    if compile and compile_config is not None and not custom_compile_skipped(model, "load_model"):
        try:
            objects = custom_objects_by_name(custom_objects)
            optimizer, arguments = _compile_objects(_legacy_lists(compile_config, model), objects)
            model.compile(optimizer, **arguments)
        except Exception as error:
            raise LoadError(
                source,
                [f"config.json: the compile arguments cannot be restored: {error}"],
                "Pass compile=False to load the model without its training state.",
            ) from error
        if training is not None:
            found = saved_paths(table, entries)  # (the file's paths: the optimizer's names)
            restore_training = _check_training(model, found, training, optimizer_arrays, source)

    def assign():
        for variable, array in pairs:
            variable.assign(array)
        restore_training()

    return model, assign
