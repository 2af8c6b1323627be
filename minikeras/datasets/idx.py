"""Reading IDX files (the format of MNIST and Fashion-MNIST) from a local folder."""

import gzip
import os
import zlib
from pathlib import Path

import numpy as np

__all__ = ["keras_cache", "load_folder", "load_local", "read_idx"]

_IDX_TYPES = {0x08: np.uint8, 0x09: np.int8, 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}

FILES = {
    "x_train": "train-images-idx3-ubyte",
    "y_train": "train-labels-idx1-ubyte",
    "x_test": "t10k-images-idx3-ubyte",
    "y_test": "t10k-labels-idx1-ubyte",
}


def read_idx(path):
    """Reads one IDX file (optionally gzipped) into a numpy array.

    Args:
        path: the file's path.

    Returns:
        A numpy array with the file's shape and dtype.

    Raises:
        ValueError: if the file is not a valid IDX file, naming it.

    Example:
        >>> import tempfile, os
        >>> path = os.path.join(tempfile.mkdtemp(), "labels-idx1-ubyte")
        >>> _ = open(path, "wb").write(bytes([0, 0, 8, 1, 0, 0, 0, 2, 7, 3]))
        >>> mk.datasets.idx.read_idx(path)
        array([7, 3], dtype=uint8)
    """
    path = Path(path)
    opener = gzip.open if path.suffix == ".gz" else open
    try:
        with opener(path, "rb") as file:
            raw = file.read()
    except (EOFError, zlib.error, gzip.BadGzipFile) as error:
        raise ValueError(f"{path} is not a readable gzip file: {error}") from None
    if len(raw) < 4 or raw[0] != 0 or raw[1] != 0 or raw[2] not in _IDX_TYPES:
        raise ValueError(f"{path} is not an IDX file (bad magic number {raw[:4]!r})")
    ndim = raw[3]
    header = 4 + 4 * ndim
    shape = tuple(int.from_bytes(raw[4 + 4 * i : 8 + 4 * i], "big") for i in range(ndim))
    dtype = np.dtype(_IDX_TYPES[raw[2]])
    expected = int(np.prod(shape)) * dtype.itemsize
    if len(raw) - header != expected:
        raise ValueError(
            f"{path}: header says shape {shape} ({expected} bytes of data), "
            f"but the file holds {len(raw) - header}; it may be truncated"
        )
    return (
        np.frombuffer(raw, dtype=dtype, offset=header)
        .reshape(shape)
        .astype(dtype.newbyteorder("="))
    )


def load_folder(name, path, env_var):
    """Loads the four IDX files of an MNIST-style data set from a folder.

    Args:
        name: the data set's name, for messages.
        path: the folder, or None to use `$env_var` or `~/.minikeras/datasets/<name>`.
        env_var: the environment variable that may name the folder.

    Returns:
        `(x_train, y_train), (x_test, y_test)` as uint8 arrays.

    Raises:
        FileNotFoundError: if a file is missing, saying which and where to put it.

    Example:
        >>> mk.datasets.idx.load_folder("mnist", "/nonexistent", "X")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        FileNotFoundError: mnist: cannot find train-images-idx3-ubyte[.gz] in /nonexistent...
    """
    folder = Path(path or os.environ.get(env_var) or Path.home() / ".minikeras" / "datasets" / name)
    arrays = {}
    for key, stem in FILES.items():
        candidates = [folder / stem, folder / (stem + ".gz")]
        found = next((c for c in candidates if c.exists()), None)
        if found is None:
            raise FileNotFoundError(
                f"{name}: cannot find {stem}[.gz] in {folder}. minikeras never downloads data: "
                f"put the four IDX files ({', '.join(FILES.values())}, gzipped or not) in that "
                f"folder, or pass path=, or set ${env_var}."
            )
        arrays[key] = read_idx(found)
    return (arrays["x_train"], arrays["y_train"]), (arrays["x_test"], arrays["y_test"])


def keras_cache():
    """The folder where Keras keeps the data sets it downloaded: `$KERAS_HOME/datasets`.

    Returns:
        A `Path`: `$KERAS_HOME/datasets`, or `~/.keras/datasets` if the
        variable is not set (Keras's rule).

    Example:
        >>> mk.datasets.idx.keras_cache().name
        'datasets'
    """
    return Path(os.environ.get("KERAS_HOME") or Path.home() / ".keras") / "datasets"


def _load_npz(path):
    with np.load(path, allow_pickle=False) as data:
        missing = [key for key in FILES if key not in data.files]
        if missing:
            raise ValueError(f"{path}: not a data set file, it lacks the arrays {missing}")
        return (data["x_train"], data["y_train"]), (data["x_test"], data["y_test"])


def _has_idx_files(folder):
    return all(
        (folder / stem).exists() or (folder / (stem + ".gz")).exists() for stem in FILES.values()
    )


def load_local(name, path, env_var, keras_name):
    """Loads an MNIST-style data set from local files, looking where a user keeps them.

    `path` is a folder of the four IDX files, or a `.npz` file with
    `x_train`, `y_train`, `x_test` and `y_test` (as Keras downloads MNIST);
    a relative path that does not exist is also looked for in Keras's cache
    (so Keras's `load_data(path="mnist.npz")` works). Without `path`:
    `$env_var`, then `~/.minikeras/datasets/<name>`, then what Keras
    downloaded (`keras_cache() / keras_name`), the first that has the files.

    Args:
        name: the data set's name, for messages and the default folder.
        path: a folder or `.npz` file, or None to look in the usual places.
        env_var: the environment variable that may name the folder.
        keras_name: the file or folder Keras keeps the data set as, in its cache.

    Returns:
        `(x_train, y_train), (x_test, y_test)`.

    Raises:
        FileNotFoundError: if the files are in none of the places, naming them all.
        ValueError: if a file is not a valid IDX or data set file.

    Example:
        >>> mk.datasets.idx.load_local("mnist", "/nonexistent", "X", "mnist.npz")
        Traceback (most recent call last):
        ...
        FileNotFoundError: mnist: cannot find train-images-idx3-ubyte[.gz] in /nonexistent...
    """
    if path is not None:
        path = Path(path)
        if not path.exists() and not path.is_absolute() and (keras_cache() / path).exists():
            path = keras_cache() / path
        if path.suffix == ".npz":
            if not path.exists():
                raise FileNotFoundError(
                    f"{name}: cannot find {path}. minikeras never downloads data"
                )
            return _load_npz(path)
        return load_folder(name, path, env_var)
    places = [Path(os.environ[env_var])] if os.environ.get(env_var) else []
    places += [Path.home() / ".minikeras" / "datasets" / name, keras_cache() / keras_name]
    for place in places:
        if place.suffix == ".npz" and place.is_file():
            return _load_npz(place)
        if place.is_dir() and _has_idx_files(place):
            return load_folder(name, place, env_var)
    raise FileNotFoundError(
        f"{name}: cannot find the data in {', '.join(str(p) for p in places)}. minikeras "
        f"never downloads data: put the four IDX files ({', '.join(FILES.values())}, gzipped "
        f"or not) in a folder and pass path=, or set ${env_var}."
    )
