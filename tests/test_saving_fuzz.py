"""Random corruptions of saved files fed to load_model and load_weights.

Every case must end in one of two ways: a `LoadError`, with the target model,
the global random stream and the file system unchanged; or a complete load
that gives exactly the saved weights (a corruption the format does not care
about, such as a changed timestamp). Any other exception is a crash. Among
the corruptions are pickled payloads that would create a marker directory if
anything unpickled them.
"""

import io
import json
import os
import warnings
import zipfile

import numpy as np
import pytest

import minikeras as mk
from minikeras import Input, Sequential
from minikeras.layers import Dense, Dropout
from minikeras.models import load_model
from minikeras.saving import LoadError

CASES_PER_KIND = 220


class Payload:
    """Unpickling this creates `path` as a directory: proof that code ran."""

    def __init__(self, path):
        self.path = str(path)

    def __reduce__(self):
        return (os.mkdir, (self.path,))


def _architecture():
    return Sequential(
        [Input((4,)), Dense(5, activation="relu", name="hidden"), Dropout(0.2, seed=1, name="drop"),
         Dense(3, name="out")],
        name="fuzzed",
    )  # fmt: skip


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    folder = tmp_path_factory.mktemp("fuzz")
    mk.utils.set_random_seed(0)
    model = _architecture()
    model.compile("adam", "mse", metrics=["mae"])
    model.fit(np.ones((8, 4), "float32"), np.zeros((8, 3)), epochs=1, verbose=0)
    model.save(folder / "model.minikeras")
    model.save_weights(folder / "weights.minikeras")
    return {
        "folder": folder,
        "files": {
            "model": (folder / "model.minikeras").read_bytes(),
            "weights": (folder / "weights.minikeras").read_bytes(),
        },
        "weights": [w.numpy() for w in model.weights],
        "marker": folder / "payload-ran",
    }


# ------------------------------------------------------------------ mutations


def _members(data):
    with zipfile.ZipFile(io.BytesIO(data)) as zipped:
        return [(info.filename, zipped.read(info)) for info in zipped.infolist()]


def _zip(members):
    buffer = io.BytesIO()
    with warnings.catch_warnings(), zipfile.ZipFile(buffer, "w") as zipped:
        warnings.simplefilter("ignore")  # duplicate names are one of the corruptions
        for name, data in members:
            method = zipfile.ZIP_STORED if name.endswith(".npz") else zipfile.ZIP_DEFLATED
            zipped.writestr(zipfile.ZipInfo(name), data, method)
    return buffer.getvalue()


def _npy(array, allow_pickle=False):
    stream = io.BytesIO()
    np.lib.format.write_array(stream, array, allow_pickle=allow_pickle)
    return stream.getvalue()


def truncate(data, draw, marker):
    return data[: int(draw.integers(0, len(data)))]


def flip_bytes(data, draw, marker):
    data = bytearray(data)
    for _ in range(int(draw.integers(1, 9))):
        data[int(draw.integers(0, len(data)))] ^= int(draw.integers(1, 256))
    return bytes(data)


def edit_members(data, draw, marker):
    members = _members(data)
    index = int(draw.integers(0, len(members)))
    name, content = members[index]
    edit = int(draw.integers(0, 6))
    if edit == 0:
        del members[index]
    elif edit == 1:
        members[index] = (name + ".renamed", content)
    elif edit == 2:
        members.append((name, content))  # a duplicate entry
    elif edit == 3:
        members.append(("unexpected.json", b"{}"))
    elif edit == 4:
        members[index] = (name, draw.bytes(int(draw.integers(0, 64))))
    else:
        other = members[int(draw.integers(0, len(members)))][1]
        members[index] = (name, other)
    return _zip(members)


_BAD_VALUES = [
    None, -1, 0, 1, 2**40, -(2**63), 2**70, 1e308, float("nan"), "", "x", "Custom>Evil",
    [], [None], [[1, 2], [3]], {}, {"class_name": "Evil", "config": {}}, True, False,
    {"module": "os", "function_name": "system"},
]  # fmt: skip


def _nodes(document, path=()):
    yield path
    if isinstance(document, dict):
        for key, value in document.items():
            yield from _nodes(value, (*path, key))
    elif isinstance(document, list):
        for index, value in enumerate(document):
            yield from _nodes(value, (*path, index))


def edit_json(data, draw, marker):
    members = _members(data)
    candidates = [i for i, (name, _) in enumerate(members) if name.endswith(".json")]
    index = candidates[int(draw.integers(0, len(candidates)))]
    name, content = members[index]
    document = json.loads(content)
    nodes = [path for path in _nodes(document) if path]
    path = nodes[int(draw.integers(0, len(nodes)))]
    parent = document
    for key in path[:-1]:
        parent = parent[key]
    edit = int(draw.integers(0, 4))
    if edit == 0 and isinstance(parent, dict):
        del parent[path[-1]]
    elif edit == 1:
        text = "[" * 5000 + "]" * 5000 if draw.random() < 0.5 else '{"unterminated": '
        members[index] = (name, text.encode())
        return _zip(members)
    else:
        parent[path[-1]] = _BAD_VALUES[int(draw.integers(0, len(_BAD_VALUES)))]
    members[index] = (name, json.dumps(document).encode())
    return _zip(members)


def edit_arrays(data, draw, marker):
    members = _members(data)
    candidates = [i for i, (name, _) in enumerate(members) if name.endswith(".npz")]
    index = candidates[int(draw.integers(0, len(candidates)))]
    name, content = members[index]
    arrays = _members(content)
    position = int(draw.integers(0, len(arrays)))
    key, raw = arrays[position]
    array = np.lib.format.read_array(io.BytesIO(raw), allow_pickle=False)
    edit = int(draw.integers(0, 10))
    if edit == 0:
        raw = _npy(np.zeros((*array.shape, 2), array.dtype))  # another shape
    elif edit == 1:
        raw = _npy(array.astype(["float64", "int8", "bool", "complex64"][int(draw.integers(0, 4))]))
    elif edit == 2:
        raw = _npy(np.array([Payload(marker)], dtype=object), allow_pickle=True)
    elif edit == 3:
        raw = _npy(np.array(["text"] * max(array.size, 1)))
    elif edit == 4:
        raw = _npy(np.zeros(2, dtype=[("a", "f4"), ("b", "O")]), allow_pickle=True)
    elif edit == 5:
        raw = raw[: int(draw.integers(0, len(raw)))]
    elif edit == 6:  # a header that promises far more data than there is
        raw = raw.replace(repr(array.shape).encode(), b"(1099511627776, 1024)", 1)
    elif edit == 7:
        del arrays[position]
        return _zip([*members[:index], (name, _zip(arrays)), *members[index + 1 :]])
    elif edit == 8:
        arrays.append(("extra.npy", _npy(np.zeros(3))))
        return _zip([*members[:index], (name, _zip(arrays)), *members[index + 1 :]])
    else:  # the same values in Fortran order and big-endian: a valid file
        raw = _npy(np.asfortranarray(array).astype(array.dtype.newbyteorder(">")))
    arrays[position] = (key, raw)
    members[index] = (name, _zip(arrays))
    return _zip(members)


MUTATIONS = [truncate, flip_bytes, edit_members, edit_json, edit_arrays]


# ---------------------------------------------------------------------- checks


def _check(path, saved, target):
    """A LoadError with nothing changed, or a complete, exact load."""
    generator = mk.random.generator()
    random_state = generator.bit_generator.state
    before = [w.numpy() for w in target.weights]
    try:
        target.load_weights(path)
    except LoadError:
        for weight, old in zip(target.weights, before, strict=True):
            np.testing.assert_array_equal(weight.numpy(), old)
    else:
        for weight, expected in zip(target.weights, saved["weights"], strict=True):
            np.testing.assert_array_equal(weight.numpy(), expected)
        target.set_weights(before)
    try:
        model = load_model(path)
    except LoadError:
        assert generator.bit_generator.state == random_state
    else:
        for weight, expected in zip(model.weights, saved["weights"], strict=True):
            np.testing.assert_array_equal(weight.numpy(), expected)
        generator.bit_generator.state = random_state
    assert not saved["marker"].exists(), "a pickled payload ran"


@pytest.mark.parametrize("kind", ["model", "weights"])
def test_random_corruptions_end_in_a_clean_error_or_an_exact_load(saved, kind, tmp_path):
    target = _architecture()
    original = saved["files"][kind]
    draw = np.random.default_rng(1234 if kind == "model" else 5678)
    outcomes = {}
    for case in range(CASES_PER_KIND):
        mutation = MUTATIONS[case % len(MUTATIONS)]
        corrupted = mutation(original, draw, saved["marker"])
        path = tmp_path / f"case-{case}.minikeras"
        path.write_bytes(corrupted)
        try:
            _check(path, saved, target)
        except AssertionError as error:
            raise AssertionError(f"case {case} ({mutation.__name__}): {error}") from error
        path.unlink()
        outcomes[mutation.__name__] = outcomes.get(mutation.__name__, 0) + 1
    assert set(outcomes) == {m.__name__ for m in MUTATIONS}


def test_the_pickled_payload_is_live(saved, tmp_path):
    """The payload does run when unpickled, so the fuzz's check of its marker means something."""
    marker = tmp_path / "ran"
    np.lib.format.read_array(
        io.BytesIO(_npy(np.array([Payload(marker)], dtype=object), allow_pickle=True)),
        allow_pickle=True,
    )
    assert marker.is_dir()


def test_the_unmodified_files_load_exactly(saved):
    target = _architecture()
    target.load_weights(saved["folder"] / "weights.minikeras")
    for weight, expected in zip(target.weights, saved["weights"], strict=True):
        np.testing.assert_array_equal(weight.numpy(), expected)
    model = load_model(saved["folder"] / "model.minikeras")
    assert int(model.optimizer.iterations.numpy()) == 1
