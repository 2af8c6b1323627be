"""Keras 3's `.keras` files and `.weights.h5` files, read and written by minikeras.

A `.keras` file is a zip of `metadata.json`, `config.json` (the model's
entry, its `build_config` and `compile_config`) and `model.weights.h5` (every
variable at the path `keras_layout` gives). Reading one checks everything
before it changes anything: the JSON (duplicate keys refused), every class
and option (`keras_config`), every weight's path, shape and dtype, and that
float64 values fit a float32 weight. Loading never unpickles: a file whose
weights come as `model.weights.npz` is read only if it holds plain arrays.

HDF5 is read and written with h5py, a run-time dependency of minikeras.
Writing is in `keras_writer`, checking a weights file against a model in
`keras_weights_reader` (their functions are re-exported here).
"""

import json
import os
import zipfile
import zlib

import numpy as np

from minikeras.models.model_training import ModelTraining
from minikeras.object_registry import custom_object_scope
from minikeras.saving import keras_config, sharing
from minikeras.saving.archive import LoadError, check_regular_file
from minikeras.saving.compile_config import compile_from_keras_config, custom_compile_skipped
from minikeras.saving.keras_weights_reader import _apply_hooks, load_keras_weights
from minikeras.saving.keras_writer import (
    KERAS_FORMAT_VERSION,
    MINIKERAS_MEMBER,
    keras_weights_bytes,
    save_keras_model,
    save_keras_weights,
)

__all__ = [
    "KERAS_FORMAT_VERSION",
    "keras_weights_bytes",
    "load_keras_file_weights",
    "load_keras_model",
    "load_keras_weights",
    "read_keras_archive",
    "save_keras_model",
    "save_keras_weights",
]


MAX_ENTRIES = 1000  # a .keras zip holds three members (and assets): anything past this is not one
MAX_JSON_BYTES = 64 * 2**20
MAX_OTHER_BYTES = 64 * 2**20  # assets and minikeras's own record of the model's config
# What a corrupted zip member makes the readers raise.
_CORRUPT = (zipfile.BadZipFile, OSError, EOFError, ValueError, zlib.error, NotImplementedError)
_WEIGHT_MEMBERS = ("model.weights.h5", "model.weights.npz")


class _LazyMember:
    """A weights member, read only up to the size the built model says it can need.

    A decompression bomb (a few kB that inflate to gigabytes) is refused
    after reading at most that many bytes, never allocated whole.
    """

    def __init__(self, path, filename, info):
        self.path, self.filename, self.info = path, filename, info

    def read(self, limit):
        """The member's bytes, or a LoadError if it claims or inflates past `limit`."""
        name = self.info.filename
        if self.info.file_size > limit:
            raise LoadError(
                self.path, [f"{name} claims {self.info.file_size} bytes; the model needs ~{limit}"]
            )
        try:
            with zipfile.ZipFile(self.filename) as archive, archive.open(self.info) as stream:
                data = stream.read(limit + 1)
        except _CORRUPT as error:
            raise LoadError(self.path, [f"{name} is corrupted: {error}"]) from None
        if len(data) > limit:
            raise LoadError(self.path, [f"{name} inflates past the ~{limit} bytes the model needs"])
        return data


def _unique_keys(pairs):
    found = {}
    for key, value in pairs:
        if key in found:
            raise ValueError(f"duplicate key {key!r}")
        found[key] = value
    return found


def read_keras_archive(path):
    """The members of a `.keras` zip: its JSON documents parsed, its weights file's bytes.

    Args:
        path: the file.

    Returns:
        `(config, metadata, weights, members)`: the parsed `config.json` and
        `metadata.json`, the weights member (`model.weights.h5` or `.npz`, or
        None) to be read with `weights.read(limit)` once the model says how
        large it may be, and the dict of the other members' bytes.

    Raises:
        OSError: if the file cannot be opened.
        LoadError: for a file that is not a `.keras` zip, an oversized or
            malformed member, or invalid JSON.

    Example:
        >>> import tempfile, pathlib
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "x.keras"
        >>> _ = path.write_bytes(b"not a zip")
        >>> mk.saving.keras_file.read_keras_archive(path)
        Traceback (most recent call last):
        ...
        minikeras.saving.archive.LoadError: Cannot load '...x.keras': 1 problem; nothing was changed.
          - it is not a zip archive, so not a .keras file
    """  # noqa: E501
    check_regular_file(path)
    try:
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError):
        raise LoadError(path, ["it is not a zip archive, so not a .keras file"]) from None
    with archive:
        infos = archive.infolist()
        if len(infos) > MAX_ENTRIES:
            raise LoadError(path, [f"it holds {len(infos)} members; a .keras file has a few"])
        members = {}
        for info in infos:
            if info.filename in members:
                raise LoadError(path, [f"the member {info.filename!r} appears twice"])
            if info.filename in _WEIGHT_MEMBERS:  # read once the model says how large it is
                members[info.filename] = _LazyMember(path, archive.filename, info)
                continue
            limit = MAX_JSON_BYTES if info.filename.endswith(".json") else MAX_OTHER_BYTES
            if info.compress_type == zipfile.ZIP_STORED:  # cannot inflate: as large as it is
                limit = max(limit, info.compress_size)
            if info.file_size > limit:
                raise LoadError(path, [f"{info.filename} claims {info.file_size} bytes"])
            try:
                with archive.open(info) as stream:
                    data = stream.read(limit + 1)
            except _CORRUPT as error:
                raise LoadError(path, [f"{info.filename} is corrupted: {error}"]) from None
            if len(data) > limit:
                raise LoadError(path, [f"{info.filename} is larger than it claims"])
            members[info.filename] = data
    documents = {}
    for name in ("config.json", "metadata.json"):
        if name not in members:
            raise LoadError(path, [f"it has no {name}, so it is not a .keras file"])
        try:
            documents[name] = json.loads(members.pop(name), object_pairs_hook=_unique_keys)
        except ValueError as error:
            raise LoadError(path, [f"{name} is not valid JSON: {error}"]) from None
        if not isinstance(documents[name], dict):
            raise LoadError(path, [f"{name} must hold a JSON object"])
    weights = members.pop("model.weights.h5", None)
    if weights is None:
        weights = members.pop("model.weights.npz", None)
    return documents["config.json"], documents["metadata.json"], weights, members


def load_keras_model(path, custom_objects=None, compile=True):  # noqa: A002 (Keras's name)
    """Reads a `.keras` file that Keras 3 (any backend) or minikeras wrote.

    Args:
        path: the file.
        custom_objects: optional dict of name -> class or function, for
            classes and functions that are not registered.
        compile: compile the model as the file says, and restore the
            optimizer's state where minikeras has the same optimizer.

    Returns:
        The model, built, with the file's weights.

    Raises:
        OSError: if the file cannot be opened.
        LoadError: listing every problem (a class or option minikeras lacks,
            a weight that does not fit); nothing is half-loaded.

    Example:
        >>> import tempfile, pathlib
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "empty.keras"
        >>> mk.saving.keras_file.load_keras_model(path)
        Traceback (most recent call last):
        ...
        FileNotFoundError: [Errno 2] No such file or directory: '...empty.keras'
    """
    from minikeras.saving.registry import deserialize_layer

    config, _, weights, members = read_keras_archive(path)
    if MINIKERAS_MEMBER in members:  # minikeras's own record of the same model: exact
        model = _load_own_record(path, members[MINIKERAS_MEMBER], custom_objects, compile)
        if weights is not None:  # state that layers keep outside variables, through their hooks
            sizes = sum(int(np.prod(w.shape)) * np.dtype(w.dtype).itemsize for w in model.weights)
            _apply_hooks(model, weights.read(2 * sizes + 2**24), path)
        _load_assets(model, members, path)
        return model
    where = os.path.basename(os.fspath(path))
    try:
        sharing.check_keras_config(config)  # (before clean_entry drops the ids)
        entry = keras_config.clean_entry(config, where)
        model = deserialize_layer(entry, custom_objects)
        build_config = config.get("build_config")
        if not model.built and build_config:
            model.build_from_config(keras_config.clean_entry(build_config))
        arguments = None
        if compile and config.get("compile_config"):
            arguments = keras_config.compile_arguments(config["compile_config"], where)
    except ValueError as error:
        if isinstance(error, LoadError):
            raise
        raise LoadError(path, [str(error)]) from error
    optimizer = None
    if arguments is not None:
        try:  # per output: a list, or a dict by output name, of losses and of metrics
            with custom_object_scope(custom_objects):  # (the loss, metrics and schedule too)
                optimizer = _compiled_from_config(model, config["compile_config"], where)
        except (TypeError, ValueError) as error:
            raise LoadError(
                path,
                [f"compile_config: {error}"],
                "Pass compile=False to load the model without its training state.",
            ) from error
        if optimizer is not None and not optimizer.built:
            optimizer.build(model.trainable_weights)
    slots = model.weights + (list(optimizer.variables) if optimizer is not None else [])
    load_keras_weights(model, _weights_bytes(path, weights, slots), path, optimizer)()
    _load_assets(model, members, path)
    return model


def load_keras_file_weights(layer, path, skip_mismatch=False):
    """Loads the model weights of a Keras `.keras` file into a built layer or model.

    As Keras's `model.load_weights("model.keras")`: the weights only, every
    one checked before any is assigned; the optimizer keeps its state.

    Args:
        layer: the built layer or model.
        path: the `.keras` file.
        skip_mismatch: leave out the layers whose weights do not fit (see
            `load_keras_weights`) instead of raising.

    Returns:
        The problems skipped (empty without `skip_mismatch`).

    Raises:
        LoadError: for a file that is not a `.keras` zip or has no weights, or
            weights that do not match, with the layer unchanged.

    Example:
        >>> import tempfile, pathlib
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "m.keras"
        >>> model = mk.Sequential([mk.Input((3,)), mk.layers.Dense(2)]); model.save(path)
        >>> copy = mk.Sequential([mk.Input((3,)), mk.layers.Dense(2)])
        >>> mk.saving.keras_file.load_keras_file_weights(copy, path)
        []
        >>> np.array_equal(copy.get_weights()[0], model.get_weights()[0])
        True
    """
    _, _, weights, _ = read_keras_archive(path)
    data = _weights_bytes(path, weights, layer.weights)
    assign = load_keras_weights(layer, data, path, skip_mismatch=skip_mismatch)
    assign()
    return assign.skipped


def _weights_bytes(path, weights, slots):
    """The weights member's bytes, read no further than `slots` can need (or LoadError)."""
    if weights is None:
        raise LoadError(path, ["it has no model.weights.h5"])
    needed = sum(int(np.prod(w.shape)) * np.dtype(w.dtype).itemsize for w in slots)
    # HDF5's own bookkeeping: a few kB a dataset and group, and the file's header.
    return weights.read(2 * needed + 64 * len(slots) * 1024 + 2**20)


def _load_assets(model, members, path):
    from minikeras.saving.keras_assets import load_layer_assets

    try:
        load_layer_assets(model, members)
    except ValueError as error:
        raise LoadError(path, [str(error)]) from error


def _load_own_record(path, record, custom_objects, compile):
    import tempfile

    from minikeras.saving.model_io import load_model

    with tempfile.TemporaryDirectory() as folder:
        own = os.path.join(folder, "model.minikeras")
        with open(own, "wb") as stream:
            stream.write(record)
        try:
            return load_model(own, custom_objects=custom_objects, compile=compile)
        except LoadError as error:
            raise LoadError(path, [f"{MINIKERAS_MEMBER}: {p}" for p in error.problems]) from None


def _compiled_from_config(model, compile_config, where):
    """The model compiled as a file's `compile_config` says, as Keras loads it; its optimizer.

    A model class with its own `compile_from_config` has it called; one that
    overrides only `compile` is left uncompiled, with a warning (None).
    """
    if type(model).compile_from_config is not ModelTraining.compile_from_config:
        model.compile_from_config(compile_config)
        return model.optimizer if model.compiled else None
    if custom_compile_skipped(model, where):
        return None
    return compile_from_keras_config(model, compile_config, where)
