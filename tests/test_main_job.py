"""The main job's flags on a user's own data: --data, --save, --plot, --model lstm."""

import gzip
import struct

import numpy as np
import pytest

import minikeras as mk
from minikeras.__main__ import build_model, main

FILES = ("train-images-idx3-ubyte", "train-labels-idx1-ubyte",
         "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte")  # fmt: skip


def _idx(array):
    header = bytes([0, 0, 0x08, array.ndim]) + b"".join(struct.pack(">I", n) for n in array.shape)
    return header + array.astype(np.uint8).tobytes()


def write_mnist_like(folder, n_train=120, n_test=40, gz=False, seed=0):
    """Writes a tiny MNIST-style data set: 28x28 images whose bright row is the label."""
    rng = np.random.default_rng(seed)
    folder.mkdir(parents=True, exist_ok=True)
    arrays = []
    for n in (n_train, n_test):
        labels = rng.integers(0, 10, n)
        images = rng.integers(0, 40, (n, 28, 28))
        images[np.arange(n), 2 * labels + 4, :] = 255  # learnable: the label is where the line is
        arrays += [images, labels]
    for name, array in zip(FILES, arrays):
        data = _idx(array)
        if gz:
            (folder / (name + ".gz")).write_bytes(gzip.compress(data))
        else:
            (folder / name).write_bytes(data)
    return arrays


@pytest.mark.parametrize("gz", [False, True])
def test_data_trains_on_mnist_style_files(tmp_path, capsys, gz):
    write_mnist_like(tmp_path / "mnist", gz=gz)
    args = [
        "--data",
        str(tmp_path / "mnist"),
        "--model",
        "small",
        "--epochs",
        "8",
        "--verbose",
        "0",
    ]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "120 training and 40 test images of 28x28 pixels" in out
    accuracy = float(out.split("test accuracy: ")[1].split()[0])
    assert accuracy > 0.5  # well above the 0.1 of guessing: it learned from the files


def test_a_missing_folder_or_file_is_a_clear_error(tmp_path, capsys):
    with pytest.raises(SystemExit) as stop:
        main(["--data", str(tmp_path / "nowhere"), "--verbose", "0"])
    assert stop.value.code == 2
    assert "nowhere is not a folder of IDX files" in capsys.readouterr().err
    write_mnist_like(tmp_path / "partial")
    (tmp_path / "partial" / "t10k-labels-idx1-ubyte").unlink()
    with pytest.raises(SystemExit):
        main(["--data", str(tmp_path / "partial"), "--verbose", "0"])
    assert "cannot find t10k-labels-idx1-ubyte" in capsys.readouterr().err


@pytest.mark.parametrize("corruption", ["truncated", "bad-gzip", "bad-magic"])
def test_a_corrupt_file_is_named(tmp_path, capsys, corruption):
    folder = tmp_path / "corrupt"
    write_mnist_like(folder, gz=corruption == "bad-gzip")
    if corruption == "bad-gzip":
        target = folder / "train-images-idx3-ubyte.gz"
        target.write_bytes(target.read_bytes()[:50])
    else:
        target = folder / "train-images-idx3-ubyte"
        data = target.read_bytes()
        target.write_bytes(data[:-10] if corruption == "truncated" else b"\x01" + data[1:])
    with pytest.raises(SystemExit) as stop:
        main(["--data", str(folder), "--verbose", "0"])
    assert stop.value.code == 2 and target.name in capsys.readouterr().err


def test_labels_outside_ten_classes_are_refused(tmp_path, capsys):
    folder = tmp_path / "labels"
    write_mnist_like(folder)
    labels = np.full(40, 12)
    (folder / "t10k-labels-idx1-ubyte").write_bytes(_idx(labels))
    with pytest.raises(SystemExit):
        main(["--data", str(folder), "--verbose", "0"])
    err = capsys.readouterr().err
    assert "the test labels in" in err and "run from 12 to 12" in err


def test_save_writes_a_model_that_loads_and_predicts_the_same(tmp_path, capsys):
    path = tmp_path / "digits.keras"
    assert main(["--model", "small", "--epochs", "1", "--verbose", "0", "--save", str(path)]) == 0
    assert f"saved the model to {path}" in capsys.readouterr().out
    loaded = mk.models.load_model(path)
    (x, _), _ = mk.datasets.digits.load_data()
    x = x[:5].astype("float32") / 16.0
    assert loaded(x).shape == (5, 10)
    assert loaded.count_params() == build_model("small").count_params()


def test_plot_writes_a_png(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    path = tmp_path / "curves.png"
    assert main(["--model", "linear", "--epochs", "2", "--verbose", "0", "--plot", str(path)]) == 0
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_plot_without_matplotlib_names_the_extra_before_training(monkeypatch, capsys):
    import builtins

    real_import = builtins.__import__

    def without_matplotlib(name, *args, **kwargs):
        if name.startswith("matplotlib"):
            raise ImportError("no matplotlib here")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", without_matplotlib)
    with pytest.raises(SystemExit) as stop:
        main(["--epochs", "1", "--verbose", "0", "--plot", "x.png"])
    err = capsys.readouterr()
    assert stop.value.code == 2 and "minikeras[plot]" in err.err
    assert "trained" not in err.out


def test_lstm_reads_images_row_by_row(capsys):
    model = build_model("lstm", (28, 28))
    assert model.layers[0].__class__.__name__ == "LSTM"
    assert model.layers[0].kernel.shape == (28, 4 * 64)  # 28 pixels a step, 28 steps
    assert main(["--model", "lstm", "--epochs", "2", "--verbose", "0"]) == 0
    accuracy = float(capsys.readouterr().out.split("test accuracy: ")[1].split()[0])
    assert accuracy > 0.5
