"""Property: a corrupted file either loads with identical weights, or raises `LoadError`.

Hypothesis corrupts saved files, in both formats (`.minikeras` and
`.keras`): random byte flips, truncation, swapped entries and edited JSON
values. Loading must end in one of two ways, never any other exception: a
complete load whose weights equal the saved ones, or a `LoadError` (for a
file that cannot even be opened, an `OSError`).

The normal suite runs a small example budget; set `MINIKERAS_FUZZ_EXAMPLES`
for more, e.g. `MINIKERAS_FUZZ_EXAMPLES=2000 pytest tests/test_saving_hypothesis.py`.
"""

import io
import json
import os
import zipfile

import numpy as np
import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import minikeras as mk  # noqa: E402
from minikeras.saving import LoadError  # noqa: E402

EXAMPLES = int(os.environ.get("MINIKERAS_FUZZ_EXAMPLES", "25"))
SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,  # the suite stays reproducible; the flag explores more
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


def _saved(folder, suffix):
    mk.utils.set_random_seed(0)
    model = mk.Sequential([mk.Input((3,)), mk.layers.Dense(4, activation="relu"),
                           mk.layers.Dense(2)])  # fmt: skip
    model.compile("adam", "mse")
    x = np.random.default_rng(0).standard_normal((8, 3)).astype("float32")
    model.fit(x, np.ones((8, 2), "float32"), epochs=1, verbose=0)
    path = folder / f"m{suffix}"
    model.save(path)
    return model, path.read_bytes()


@pytest.fixture(scope="module", params=[".minikeras", ".keras"])
def saved(request, tmp_path_factory):
    folder = tmp_path_factory.mktemp("fuzz")
    model, data = _saved(folder, request.param)
    return request.param, [w.copy() for w in model.get_weights()], data


def _members(data):
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return [(info, archive.read(info.filename)) for info in archive.infolist()]


def _zip(members):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for info, data in members:
            archive.writestr(info.filename, data)
    return buffer.getvalue()


def _json_edit(data, draw_path, value):
    """Replaces one value somewhere in a JSON document (by the drawn path)."""
    document = json.loads(data)
    node, keys = document, []
    for step in draw_path:
        if isinstance(node, dict) and node:
            key = sorted(node)[step % len(node)]
        elif isinstance(node, list) and node:
            key = step % len(node)
        else:
            break
        keys.append(key)
        parent, node = node, node[key]
    if keys:
        parent[keys[-1]] = value
    return json.dumps(document).encode()


JSON_VALUES = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**40), 2**40), st.floats(allow_nan=True),
    st.text(max_size=8), st.lists(st.integers(-3, 10), max_size=4),
    st.dictionaries(st.text(max_size=4), st.integers(), max_size=2),
)  # fmt: skip


@st.composite
def corruptions(draw, data):
    kind = draw(st.sampled_from(["flip", "truncate", "swap", "json"]))
    if kind == "flip":
        raw = bytearray(data)
        for _ in range(draw(st.integers(1, 8))):
            position = draw(st.integers(0, len(raw) - 1))
            raw[position] ^= draw(st.integers(1, 255))
        return bytes(raw)
    if kind == "truncate":
        return data[: draw(st.integers(0, len(data) - 1))]
    members = _members(data)
    if kind == "swap":
        a = draw(st.integers(0, len(members) - 1))
        b = draw(st.integers(0, len(members) - 1))
        contents = [m[1] for m in members]
        contents[a], contents[b] = contents[b], contents[a]
        return _zip([(info, content) for (info, _), content in zip(members, contents)])
    documents = [i for i, (info, _) in enumerate(members) if info.filename.endswith(".json")]
    index = documents[draw(st.integers(0, len(documents) - 1))]
    path = draw(st.lists(st.integers(0, 50), min_size=1, max_size=6))
    value = draw(JSON_VALUES)
    members[index] = (members[index][0], _json_edit(members[index][1], path, value))
    return _zip(members)


@SETTINGS
@given(data=st.data())
def test_a_corrupted_file_loads_exactly_or_raises_load_error(saved, tmp_path, data):
    suffix, weights, original = saved
    corrupted = data.draw(corruptions(original))
    path = tmp_path / f"corrupt{suffix}"
    path.write_bytes(corrupted)
    try:
        model = mk.models.load_model(path)
    except LoadError:
        return
    loaded = model.get_weights()
    assert len(loaded) == len(weights)
    for a, b in zip(loaded, weights):
        np.testing.assert_array_equal(a, b)
