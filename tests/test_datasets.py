"""MNIST-style loaders read files written here by hand: IDX (plain and gzipped), Keras's
`mnist.npz`, and Keras's cache when nothing else holds the data."""

import gzip

import numpy as np
import pytest

import minikeras as mk
from minikeras.datasets.idx import FILES

RNG = np.random.default_rng(0)
SPLITS = {
    "x_train": RNG.integers(0, 256, (5, 28, 28), dtype=np.uint8),
    "y_train": RNG.integers(0, 10, 5, dtype=np.uint8),
    "x_test": RNG.integers(0, 256, (3, 28, 28), dtype=np.uint8),
    "y_test": RNG.integers(0, 10, 3, dtype=np.uint8),
}


def _idx_bytes(array):
    # Magic: two zero bytes, 0x08 for uint8, then the rank; each size as a big-endian int32.
    header = bytes([0, 0, 8, array.ndim]) + b"".join(n.to_bytes(4, "big") for n in array.shape)
    return header + array.tobytes()


def _write_idx_folder(folder, gzipped):
    folder.mkdir(parents=True)
    for key, stem in FILES.items():
        raw = _idx_bytes(SPLITS[key])
        if gzipped:
            (folder / (stem + ".gz")).write_bytes(gzip.compress(raw))
        else:
            (folder / stem).write_bytes(raw)


def _assert_loaded(loaded):
    (x_train, y_train), (x_test, y_test) = loaded
    for got, key in (
        (x_train, "x_train"),
        (y_train, "y_train"),
        (x_test, "x_test"),
        (y_test, "y_test"),
    ):
        assert got.dtype == np.uint8
        np.testing.assert_array_equal(got, SPLITS[key])


@pytest.fixture
def homes(tmp_path, monkeypatch):
    """Empty home and Keras folders, and no environment variables pointing elsewhere."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("KERAS_HOME", str(tmp_path / "keras"))
    for name in ("MINIKERAS_MNIST", "MINIKERAS_FASHION_MNIST"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path


@pytest.mark.parametrize("gzipped", [False, True])
def test_an_idx_folder_loads_as_given(homes, gzipped):
    _write_idx_folder(homes / "data", gzipped)
    _assert_loaded(mk.datasets.mnist.load_data(homes / "data"))
    _assert_loaded(mk.datasets.fashion_mnist.load_data(str(homes / "data")))


def test_keras_mnist_npz_loads_by_path_and_from_keras_cache(homes):
    cache = homes / "keras" / "datasets"
    cache.mkdir(parents=True)
    np.savez(cache / "mnist.npz", **SPLITS)
    _assert_loaded(mk.datasets.mnist.load_data())  # found in Keras's cache
    _assert_loaded(mk.datasets.mnist.load_data("mnist.npz"))  # Keras's default path=
    _assert_loaded(mk.datasets.mnist.load_data(cache / "mnist.npz"))


def test_keras_fashion_mnist_folder_is_found_in_keras_cache(homes):
    _write_idx_folder(homes / "keras" / "datasets" / "fashion-mnist", gzipped=True)
    _assert_loaded(mk.datasets.fashion_mnist.load_data())


def test_the_minikeras_folder_and_the_variable_come_before_keras_cache(homes, monkeypatch):
    cache = homes / "keras" / "datasets"
    cache.mkdir(parents=True)
    np.savez(cache / "mnist.npz", **{k: v[:1] for k, v in SPLITS.items()})
    _write_idx_folder(homes / "home" / ".minikeras" / "datasets" / "mnist", gzipped=False)
    _assert_loaded(mk.datasets.mnist.load_data())
    _write_idx_folder(homes / "elsewhere", gzipped=True)
    monkeypatch.setenv("MINIKERAS_MNIST", str(homes / "elsewhere"))
    _assert_loaded(mk.datasets.mnist.load_data())


def test_missing_and_bad_files_are_named(homes):
    with pytest.raises(FileNotFoundError, match=r"mnist: cannot find the data in .*\.minikeras"):
        mk.datasets.mnist.load_data()
    with pytest.raises(FileNotFoundError, match="keras.datasets.fashion-mnist"):
        mk.datasets.fashion_mnist.load_data()
    with pytest.raises(FileNotFoundError, match="cannot find .*other.npz"):
        mk.datasets.mnist.load_data(homes / "other.npz")
    np.savez(homes / "partial.npz", x_train=SPLITS["x_train"])
    with pytest.raises(ValueError, match=r"partial.npz: not a data set file.*'y_train'"):
        mk.datasets.mnist.load_data(homes / "partial.npz")
    _write_idx_folder(homes / "cut", gzipped=False)
    stem = FILES["x_test"]
    (homes / "cut" / stem).write_bytes((homes / "cut" / stem).read_bytes()[:-10])
    with pytest.raises(ValueError, match="it may be truncated"):
        mk.datasets.mnist.load_data(homes / "cut")


def test_digits_are_bundled_with_a_fixed_split():
    (x_train, y_train), (x_test, y_test) = mk.datasets.digits.load_data()
    assert x_train.shape == (1437, 8, 8) and x_test.shape == (360, 8, 8)
    assert x_train.dtype == y_train.dtype == np.uint8
    assert set(np.unique(y_train)) == set(range(10)) and x_train.max() == 16
