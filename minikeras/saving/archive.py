"""The file format: a zip archive of JSON documents and numpy `.npz` archives.

    metadata.json   {"format": "minikeras", "format_version": 1, "kind": "model" or "weights"}
    config.json     (model files) the architecture and the compile arguments
    weights.json    the index of weights.npz: each weight's path, key, shape and dtype
    weights.npz     one array per weight, named by the weight's tracked path
    training.json   (compiled model files) the optimizer's variables, the random states
    optimizer.npz   (compiled model files) the optimizer's variables, named "0", "1", ...

Design note, why this format: zip, JSON and `.npy` are plain, documented and
read by the standard library and numpy alone, on any platform, without
running code. Pickle is never involved: arrays are parsed here from their
`.npy` header (read by numpy with `ast.literal_eval`, not `eval`) and their
bytes, and only numeric dtypes are accepted, so an object array, a pickle or
a byte-code payload is refused, not run. The zip's CRC-32 checks catch
corrupted bytes. An `.npz` member is an ordinary numpy archive:
`np.load(io.BytesIO(data), allow_pickle=False)` opens it.

Writing, atomic, is in `archive_writer` (re-exported here); this module
reads, and checks everything it reads before anything is allocated or changed.
"""

import collections
import io
import json
import math
import os
import stat
import zipfile

import numpy as np

from minikeras.saving.archive_writer import (
    _NUMERIC_KINDS,
    FORMAT,
    FORMAT_VERSION,
    LAYOUT,
    atomic_write,
    to_json,
    write_archive,
    write_array,
)

__all__ = [
    "Archive",
    "LoadError",
    "atomic_write",
    "read_archive",
    "to_json",
    "write_archive",
    "write_array",
]


class LoadError(ValueError):
    """A file cannot be loaded: every problem found is listed, and nothing was changed.

    Args:
        source: the file's path, for the message.
        problems: a list of strings, one per problem.
        hint: an optional last line saying what to do.

    Attributes:
        problems: the list of problems.

    Example:
        >>> error = mk.saving.LoadError("m.minikeras", ["missing: dense/bias"])
        >>> print(error)
        Cannot load 'm.minikeras': 1 problem; nothing was changed.
          - missing: dense/bias
        >>> isinstance(error, ValueError)
        True
    """

    def __init__(self, source, problems, hint=None):
        self.problems = list(problems)
        count = len(self.problems)
        lines = [
            f"Cannot load {os.fspath(source)!r}: {count} problem{'s' if count != 1 else ''}; "
            "nothing was changed."
        ]
        lines += [f"  - {problem}" for problem in self.problems]
        if hint:
            lines.append(hint)
        super().__init__("\n".join(lines))


# ------------------------------------------------------------------- reading


class Archive:
    """What `read_archive` found: the kind, the JSON documents and the arrays.

    Args:
        kind: "model" or "weights".
        documents: dict of member name -> parsed JSON (a dict).
        arrays: dict of member name -> dict of key -> numpy array.

    Example:
        >>> mk.saving.archive.Archive("weights", {}, {}).kind
        'weights'
    """

    def __init__(self, kind, documents, arrays):
        self.kind, self.documents, self.arrays = kind, documents, arrays


MAX_FILE_BYTES = 2**31  # a file past 2 GB is not a model this library trains
MAX_ENTRIES = 64  # a minikeras file has at most six entries
MAX_JSON_BYTES = 16 * 2**20  # a config or an index: a few kB for the models here
MAX_ARRAYS = 100_000  # arrays in one .npz: far more weights than a model here has
MAX_UNDECLARED_BYTES = 2**20  # what an .npz may hold when no index says more
NPY_SLACK_BYTES = 4096  # an .npy header and the zip records around it, per array


def check_regular_file(filepath):
    """Refuses, before reading a byte, a path that is not a regular file.

    A directory, a FIFO, a device (`/dev/zero`, reached through a symlink,
    would be read forever) or a socket is an error that says so.

    Args:
        filepath: the path (a symlink is followed to what it names).

    Returns:
        None.

    Raises:
        OSError: if the path does not exist or cannot be examined.
        LoadError: if it is not a regular file.

    Example:
        >>> import tempfile
        >>> mk.saving.archive.check_regular_file(tempfile.mkdtemp())
        Traceback (most recent call last):
        ...
        minikeras.saving.archive.LoadError: Cannot load '...': 1 problem; nothing was changed.
          - it is a directory, not a regular file
    """
    mode = os.stat(filepath).st_mode
    if stat.S_ISREG(mode):
        return
    kind = (
        "a directory" if stat.S_ISDIR(mode)
        else "a FIFO (named pipe)" if stat.S_ISFIFO(mode)
        else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
        else "a socket" if stat.S_ISSOCK(mode)
        else "not a regular file"
    )  # fmt: skip
    raise LoadError(filepath, [f"it is {kind}, not a regular file"])


def read_archive(filepath):
    """Reads and checks a whole minikeras file; never unpickles, never runs code.

    Args:
        filepath: the path.

    Returns:
        An `Archive`.

    Raises:
        OSError: if the file cannot be opened (missing, a directory...).
        LoadError: for anything else: not a zip, not a minikeras file, a
            newer format, missing or unexpected members, truncated or
            corrupted bytes, invalid JSON, non-numeric or malformed arrays.

    Example:
        >>> import tempfile, pathlib
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "not-a-model.txt"
        >>> _ = path.write_text("hello")
        >>> mk.saving.archive.read_archive(path)
        Traceback (most recent call last):
        ...
        minikeras.saving.archive.LoadError: Cannot load '...not-a-model.txt': 1 problem; nothing was changed.
          - it is not a zip archive, so not a minikeras file (it starts with b'hello')
    """  # noqa: E501
    check_regular_file(filepath)
    if os.path.getsize(filepath) > MAX_FILE_BYTES:
        raise LoadError(filepath, [f"it is larger than {MAX_FILE_BYTES} bytes, the most read"])
    with open(filepath, "rb") as stream:
        data = stream.read()
    try:
        return _read(data)
    except LoadError as error:
        raise LoadError(filepath, error.problems) from None
    except Exception as error:  # whatever a corrupted file makes the zip or JSON readers raise
        raise LoadError(
            filepath, [f"the file is corrupted or truncated: {type(error).__name__}: {error}"]
        ) from error


def _read(data):
    if not zipfile.is_zipfile(io.BytesIO(data)):
        raise LoadError("", [_not_a_zip(data)])
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        names = archive.namelist()
        if len(names) > MAX_ENTRIES:  # a minikeras file has at most six
            raise LoadError("", [f"it holds {len(names)} entries; a minikeras file has a few"])
        counts = collections.Counter(names)
        duplicates = sorted(name for name, count in counts.items() if count > 1)
        if duplicates:
            raise LoadError("", [f"the archive holds several entries named {duplicates}"])
        if "metadata.json" not in names:
            plain_npz = names and all(name.endswith(".npy") for name in names)
            what = "a plain numpy .npz archive" if plain_npz else "a zip archive"
            raise LoadError("", [f"it is {what} without metadata.json, not a minikeras file"])
        kind = _check_metadata(_json_member(archive, "metadata.json"))
        required, optional = LAYOUT[kind]
        problems = [
            f"the {kind} file has no entry {name!r}" for name in sorted(required - {*names})
        ]
        problems += [
            f"unexpected entry {name!r} in a {kind} file" for name in names
            if name not in required | optional
        ]  # fmt: skip
        if problems:
            raise LoadError("", problems)
        documents, arrays = {}, {}
        for name in names:  # the JSON documents first: they say how large the arrays are
            if name.endswith(".json"):
                documents[name] = _json_member(archive, name)
                if not isinstance(documents[name], dict):
                    problems.append(
                        f"{name} holds a {type(documents[name]).__name__}, not an object"
                    )
        for name in names:
            if name.endswith(".npz"):
                limit = _npz_limit(name, documents)
                raw = _bounded_read(archive, name, limit)
                arrays[name], found = _read_npz(raw, name, limit)
                problems += found
        if problems:
            raise LoadError("", problems)
    return Archive(kind, documents, arrays)


def _not_a_zip(data):
    head = data[:8]
    if head.startswith(b"\x89HDF"):
        what = "an HDF5 file (Keras 2's .h5?), not a minikeras file"
    elif head.startswith(b"\x93NUMPY"):
        what = "a numpy .npy file, not a minikeras file"
    elif head[:1] == b"\x80":
        what = "a pickle, which minikeras never loads"
    elif not data:
        what = "empty"
    elif head.startswith(b"PK\x03\x04"):
        what = "a truncated or corrupted zip archive: its table of contents is missing"
    else:
        what = f"not a zip archive, so not a minikeras file (it starts with {head!r})"
    return f"it is {what}"


def _unique_keys(pairs):
    found = {}
    for key, value in pairs:
        if key in found:
            raise ValueError(f"the key {key!r} appears twice")
        found[key] = value
    return found


def _json_member(archive, name):
    raw = _bounded_read(archive, name, MAX_JSON_BYTES)
    try:
        return json.loads(raw.decode("utf-8"), object_pairs_hook=_unique_keys)
    except (UnicodeDecodeError, ValueError, RecursionError) as error:
        raise LoadError("", [f"{name} is not valid JSON: {error}"]) from None


def _check_metadata(metadata):
    if not isinstance(metadata, dict):
        raise LoadError("", ["metadata.json does not hold an object"])
    if metadata.get("format") != FORMAT:
        keras = "keras_version" in metadata
        what = "a Keras .keras file" if keras else f"format {metadata.get('format')!r}"
        raise LoadError("", [f"metadata.json says {what}, not a minikeras file"])
    version = metadata.get("format_version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise LoadError("", [f"metadata.json has an invalid format_version {version!r}"])
    if version > FORMAT_VERSION:
        raise LoadError(
            "",
            [
                f"the file has format version {version}, newer than this minikeras reads "
                f"({FORMAT_VERSION}): upgrade minikeras"
            ],
        )
    kind = metadata.get("kind")
    if kind not in LAYOUT:
        raise LoadError("", [f"metadata.json has an unknown kind {kind!r}"])
    return kind


def _declared_bytes(entries):
    """The bytes that `[{"shape", "dtype"}, ...]` entries need, or None if malformed."""
    total = 0
    try:
        for entry in entries:
            shape, dtype = entry["shape"], np.dtype(entry["dtype"])
            if not (isinstance(shape, list) and all(type(n) is int and n >= 0 for n in shape)):
                return None
            total += math.prod(shape) * dtype.itemsize
    except (TypeError, KeyError, ValueError):
        return None
    return total


def _npz_limit(name, documents):
    """How many bytes an .npz entry may inflate to: what its JSON index declares, plus room.

    A decompression bomb (a few kB that inflate to gigabytes) is refused after
    reading at most this many bytes: each array's `.npy` header and the zip's
    own records take less than the slack allowed per array.
    """
    if name == "weights.npz":
        entries = (documents.get("weights.json") or {}).get("weights")
    else:
        optimizer = (documents.get("training.json") or {}).get("optimizer")
        entries = optimizer.get("variables") if isinstance(optimizer, dict) else None
    declared = _declared_bytes(entries) if isinstance(entries, list) else None
    if declared is None:
        return MAX_UNDECLARED_BYTES
    return declared + (len(entries) + 1) * NPY_SLACK_BYTES


def _bounded_read(archive, name, limit):
    """An entry's bytes, refused (not allocated) past `limit` whatever its header claims."""
    info = archive.getinfo(name)
    if info.file_size > limit:
        raise LoadError("", [f"{name} claims {info.file_size} bytes, more than the {limit} "
                             "its index declares"])  # fmt: skip
    with archive.open(info) as stream:
        raw = stream.read(limit + 1)
    if len(raw) > limit:
        raise LoadError("", [f"{name} inflates past the {limit} bytes its index declares"])
    return raw


def _read_npz(data, member, limit=None):
    """Parses an `.npz` archive: numeric arrays only, each checked against its header."""
    arrays, problems = {}, []
    limit = MAX_UNDECLARED_BYTES if limit is None else limit
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        names = archive.namelist()
        if len(names) > MAX_ARRAYS:
            return {}, [f"{member} holds {len(names)} arrays; a model has fewer"]
        if len(set(names)) != len(names):
            return {}, [f"{member} holds several entries with the same name"]
        for name in names:
            if not name.endswith(".npy"):
                problems.append(f"{member}: entry {name!r} is not an .npy array")
                continue
            try:
                raw = _bounded_read(archive, name, limit)
            except LoadError as error:
                return {}, [f"{member}: {problem}" for problem in error.problems]
            array = _parse_npy(raw, f"{member}: {name[:-4]!r}", problems)
            if array is not None:
                arrays[name[:-4]] = array
    return arrays, problems


def _parse_npy(raw, where, problems):
    stream = io.BytesIO(raw)
    try:
        version = np.lib.format.read_magic(stream)
        if version == (1, 0):
            shape, fortran_order, dtype = np.lib.format.read_array_header_1_0(stream)
        elif version == (2, 0):
            shape, fortran_order, dtype = np.lib.format.read_array_header_2_0(stream)
        else:
            problems.append(f"{where} has .npy version {version}, which is not read")
            return None
    except (ValueError, TypeError, SyntaxError, OverflowError) as error:
        problems.append(f"{where} has an invalid .npy header: {error}")
        return None
    if dtype.hasobject or dtype.kind not in _NUMERIC_KINDS or dtype.fields or dtype.subdtype:
        # An object array would need pickle, which may run code: refused, never loaded.
        problems.append(f"{where} has dtype {dtype}; only numbers are loaded (never objects)")
        return None
    if any(not isinstance(size, int) or size < 0 for size in shape):
        problems.append(f"{where} has an invalid shape {shape}")
        return None
    offset = stream.tell()
    expected = math.prod(shape) * dtype.itemsize
    if len(raw) - offset != expected:
        problems.append(
            f"{where} should hold {expected} bytes for shape {shape} and dtype {dtype}, "
            f"but holds {len(raw) - offset}: truncated or corrupted"
        )
        return None
    array = np.frombuffer(raw, dtype=dtype, count=math.prod(shape), offset=offset)
    array = array.reshape(shape, order="F" if fortran_order else "C")
    return np.array(array, dtype=dtype.newbyteorder("="), order="C")
