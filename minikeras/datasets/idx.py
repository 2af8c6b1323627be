"""Reading IDX files (the format of MNIST and Fashion-MNIST) from a local folder."""

import gzip
import os
import zlib
from pathlib import Path

import numpy as np

__all__ = ["load_folder", "read_idx"]

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
