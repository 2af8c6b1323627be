"""Writing the file format (see `minikeras.saving.archive`), atomically.

The archive goes to a temporary file in the target's directory, which is
flushed, fsynced and then renamed over the target, so an error or a crash
mid-save leaves the previous file as it was; temporaries a killed save left
behind are removed by the next save to the same path once they are stale.
"""

import contextlib
import io
import json
import os
import tempfile
import time
import zipfile

import numpy as np

__all__ = [
    "FORMAT",
    "FORMAT_VERSION",
    "LAYOUT",
    "atomic_write",
    "to_json",
    "write_archive",
    "write_array",
]

FORMAT = "minikeras"
FORMAT_VERSION = 1
# kind -> (members every file of that kind has, members it may have)
LAYOUT = {
    "model": (
        {"metadata.json", "config.json", "weights.json", "weights.npz"},
        {"training.json", "optimizer.npz"},
    ),
    "weights": ({"metadata.json", "weights.json", "weights.npz"}, set()),
}
_DATE = (1980, 1, 1, 0, 0, 0)  # a fixed timestamp: the same model gives the same bytes
_NUMERIC_KINDS = "biuf"


def atomic_write(filepath, write, overwrite=True):
    """Writes a file so that it is either entirely new or untouched.

    `write(stream)` fills a temporary file in the same directory, which is then
    flushed, fsynced and renamed over `filepath` (an atomic step on POSIX and
    Windows). If `write` raises, the temporary file is removed and the
    previous file, if any, is left as it was.

    Args:
        filepath: the path to write.
        write: a function taking a binary stream open for writing.
        overwrite: if False, an existing file is an error.

    Returns:
        None.

    Raises:
        FileExistsError: if the file exists and `overwrite` is False.
        FileNotFoundError: if the directory does not exist.

    Example:
        >>> import tempfile, pathlib
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "note.txt"
        >>> mk.saving.archive.atomic_write(path, lambda stream: stream.write(b"hello"))
        >>> path.read_bytes()
        b'hello'
    """
    filepath = os.fspath(filepath)
    if not overwrite and os.path.exists(filepath):
        raise FileExistsError(f"save: {filepath!r} exists and overwrite=False")
    directory = os.path.dirname(os.path.abspath(filepath))
    if not os.path.isdir(directory):
        raise FileNotFoundError(f"save: the directory {directory!r} does not exist")
    mode = _file_mode(filepath)
    descriptor, temporary = tempfile.mkstemp(
        prefix=f".{os.path.basename(filepath)}.", suffix=".tmp", dir=directory
    )
    try:
        with os.fdopen(descriptor, "w+b") as stream:
            write(stream)
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, filepath)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    _fsync_directory(directory)
    _remove_stale_temporaries(directory, os.path.basename(filepath))


STALE_TEMPORARY_SECONDS = 60


def _remove_stale_temporaries(directory, basename):
    """Removes what a killed save to the same path left: its `.NAME.*.tmp` files.

    Only files older than `STALE_TEMPORARY_SECONDS`: a younger one may belong
    to a save still running in another process.
    """
    prefix, now = f".{basename}.", time.time()
    with contextlib.suppress(OSError):
        for entry in os.scandir(directory):
            if entry.name.startswith(prefix) and entry.name.endswith(".tmp"):
                with contextlib.suppress(OSError):
                    if now - entry.stat().st_mtime > STALE_TEMPORARY_SECONDS:
                        os.unlink(entry.path)


def _file_mode(filepath):
    """The permissions the file would get from `open`: the old file's, or by the umask."""
    if os.path.exists(filepath):
        return os.stat(filepath).st_mode & 0o777
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def _fsync_directory(directory):
    # The rename itself is durable only once the directory entry is on disk (POSIX).
    if os.name != "posix":
        return
    descriptor = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    except OSError:
        pass
    finally:
        os.close(descriptor)


def _json_default(value):
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray) and value.dtype.kind in _NUMERIC_KINDS:
        return value.tolist()
    if callable(value):
        raise TypeError(
            f"{value!r} is a function object, not a JSON value: use a named module-level "
            "function registered with @minikeras.saving.register_keras_serializable()"
        )
    raise TypeError(f"{value!r} of type {type(value).__name__} is not a JSON value")


def to_json(document, what):
    """Encodes `document` as JSON bytes, or raises naming `what` could not be.

    Args:
        document: JSON-friendly data (numpy scalars and tuples are accepted).
        what: what it is, for the message, such as "the config of layer 'dense'".

    Returns:
        UTF-8 bytes.

    Raises:
        ValueError: if a value is not a JSON value (a function, an object...).

    Example:
        >>> mk.saving.archive.to_json({"units": np.int64(3), "shape": (None, 2)}, "a config")
        b'{"units": 3, "shape": [null, 2]}'
    """
    try:
        return json.dumps(document, default=_json_default).encode("utf-8")
    except (TypeError, ValueError) as error:
        raise ValueError(f"save: {what} cannot be written as JSON: {error}") from None


def _member(name):
    info = zipfile.ZipInfo(name, date_time=_DATE)
    info.external_attr = 0o644 << 16
    return info


def _npz_bytes(arrays):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as archive:
        for key, array in arrays.items():
            array = np.asarray(array, order="C")  # ascontiguousarray would make scalars 1-d
            if array.dtype.kind not in _NUMERIC_KINDS:
                raise ValueError(f"save: array {key!r} has dtype {array.dtype}, not a number")
            with archive.open(_member(f"{key}.npy"), "w", force_zip64=array.nbytes > 2**30) as out:
                write_array(out, array)
    return buffer.getvalue()


def write_array(stream, array):
    """Writes one array in the `.npy` format, never with pickle.

    Args:
        stream: a binary stream.
        array: a numeric numpy array.

    Returns:
        None.

    Example:
        >>> import io
        >>> stream = io.BytesIO(); mk.saving.archive.write_array(stream, np.zeros(2))
        >>> stream.getvalue()[:6]
        b'\\x93NUMPY'
    """
    np.lib.format.write_array(stream, array, allow_pickle=False)


def write_archive(filepath, kind, documents, arrays, overwrite=True):
    """Writes a minikeras file atomically (see the module's layout).

    Args:
        filepath: the path.
        kind: "model" or "weights".
        documents: dict of member name -> JSON bytes (from `to_json`).
        arrays: dict of member name (".npz") -> dict of key -> numeric array.
        overwrite: if False, an existing file is an error.

    Returns:
        None.

    Raises:
        FileExistsError: if the file exists and `overwrite` is False.
        ValueError: if an array is not numeric.

    Example:
        >>> import tempfile, pathlib
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "w.weights.minikeras"
        >>> index = mk.saving.archive.to_json({"weights": []}, "the index")
        >>> mk.saving.archive.write_archive(
        ...     path, "weights", {"weights.json": index}, {"weights.npz": {}}
        ... )
        >>> mk.saving.archive.read_archive(path).kind
        'weights'
    """
    metadata = to_json(
        {"format": FORMAT, "format_version": FORMAT_VERSION, "kind": kind}, "the metadata"
    )

    def write(stream):
        with zipfile.ZipFile(stream, "w") as archive:
            archive.writestr(_member("metadata.json"), metadata, zipfile.ZIP_DEFLATED)
            for name, data in documents.items():
                archive.writestr(_member(name), data, zipfile.ZIP_DEFLATED)
            for name, table in arrays.items():
                archive.writestr(_member(name), _npz_bytes(table), zipfile.ZIP_STORED)

    atomic_write(filepath, write, overwrite)
