"""`Model.summary`'s Keras arguments and totals: expand_nested, layer_range, line_length,
the memory of each count and the optimizer's line (keras-io's examples call them)."""

import re

import numpy as np
import pytest

import minikeras as mk


def _lines(model, **kwargs):
    printed = []
    model.summary(print_fn=printed.append, **kwargs)
    return "\n".join(printed).splitlines()  # (Keras prints the whole table at once)


def _nested(lib):
    inner = lib.Sequential(
        [lib.Input((3,)), lib.layers.Dense(4, name="a"), lib.layers.Dense(2, name="b")],
        name="inner",
    )
    return lib.Sequential(
        [
            lib.Input((3,)),
            inner,
            lib.layers.Dense(1, name="head"),
            lib.layers.Dense(1, name="tail"),
        ],
        name="outer",
    )


def _rows(lines):
    # the first cell of each row: "name (Class)", with a nested row's "└ " kept
    cells = [re.split(r"\s{2,}|│|┃", line.strip().strip("│┃").strip())[0] for line in lines]
    found = [cell.strip() for cell in cells if re.search(r"\(\w+\)$", cell.strip())]
    return [cell for cell in found if cell != "Layer (type)"]


def _totals(lines):
    text = "\n".join(lines)
    return re.findall(
        r"(Total|Trainable|Non-trainable|Optimizer) params: ([\d,]+ \([\d.]+ \w+\))", text
    )


def test_totals_give_memory_and_the_optimizers_params_by_hand():
    model = mk.Sequential([mk.Input((3,)), mk.layers.Dense(2)])
    assert _totals(_lines(model)) == [
        ("Total", "8 (32.00 B)"),
        ("Trainable", "8 (32.00 B)"),
        ("Non-trainable", "0 (0.00 B)"),
    ]
    model.compile(mk.optimizers.SGD(momentum=0.9), "mse")
    model.fit(np.ones((4, 3)), np.ones((4, 2)), verbose=0)
    # iteration (int32) and learning_rate, then one momentum per weight: 2 + 8, 4 B each
    assert ("Optimizer", "10 (40.00 B)") in _totals(_lines(model))


def test_expand_nested_and_layer_range_rows_by_hand():
    model = _nested(mk)
    assert _rows(_lines(model)) == ["inner (Sequential)", "head (Dense)", "tail (Dense)"]
    nested = ["\u2514 a (Dense)", "\u2514 b (Dense)"]
    assert _rows(_lines(model, expand_nested=True)) == [
        "inner (Sequential)", *nested, "head (Dense)", "tail (Dense)",
    ]  # fmt: skip
    assert _rows(_lines(model, layer_range=["he", "tail"])) == ["head (Dense)", "tail (Dense)"]
    with pytest.raises(ValueError, match="layer_range .* matches no layer"):
        model.summary(layer_range=["nothing", "tail"])
    with pytest.raises(ValueError, match="layer_range must be two layer names"):
        model.summary(layer_range=["head"])


def test_line_length_widens_the_table():
    model = mk.Sequential([mk.Input((3,)), mk.layers.Dense(2)])
    lines = _lines(model, line_length=90, positions=[0.5, 0.8, 1.0])
    assert len(lines[1]) == 90  # the rule under the title
    assert lines[2].index("Output Shape") == 45 and lines[2].index("Param #") == 72


def test_rows_and_totals_match_keras():
    keras = pytest.importorskip("keras")
    theirs, ours = _nested(keras), _nested(mk)
    for model, lib in ((theirs, keras), (ours, mk)):
        model.compile(lib.optimizers.Adam(), "mse")
        model.fit(np.ones((4, 3), "float32"), np.ones((4, 1), "float32"), verbose=0)
    for kwargs in ({}, {"expand_nested": True}, {"layer_range": ["head", "tail"]}):
        assert _rows(_lines(ours, **kwargs)) == _rows(_lines(theirs, **kwargs))
        assert _totals(_lines(ours, **kwargs)) == _totals(_lines(theirs, **kwargs))


def _branched(lib):
    a, b = lib.Input((3,), name="a"), lib.Input((3,), name="b")
    shared = lib.layers.Dense(2, name="shared")
    added = lib.layers.Add(name="add")([shared(a), shared(b)])
    steps = lib.layers.Reshape((1, 2), name="steps")(added)
    attended = lib.layers.MultiHeadAttention(1, 2, name="mha")(steps, steps)
    return lib.Model([a, b], lib.layers.Dense(1, name="out")(attended))


def _connected(lines):
    # "name (Class)" -> the last cell of its row
    found = {}
    for line in lines:
        cells = [c.strip() for c in re.split(r"│|┃|\s{2,}", line.strip().strip("│┃")) if c.strip()]
        if len(cells) >= 4 and re.search(r"\(\w+\)$", cells[0]) and cells[0] != "Layer (type)":
            found[cells[0]] = cells[3]
    return found


def test_connected_to_column_of_a_branched_graph_by_hand():
    assert _connected(_lines(_branched(mk))) == {
        "a (InputLayer)": "-",
        "b (InputLayer)": "-",
        "shared (Dense)": "a[0][0], b[0][0]",
        "add (Add)": "shared[0][0], shared[1][0]",
        "steps (Reshape)": "add[0][0]",
        "mha (MultiHeadAttention)": "steps[0][0], steps[0][0]",  # (query and value)
        "out (Dense)": "mha[0][0]",
    }
    inputs = mk.Input((3,))
    chain = mk.Model(inputs, mk.layers.Dense(1)(mk.layers.Dense(2)(inputs)))
    assert "Connected to" not in "\n".join(_lines(chain))


def test_connected_to_column_matches_keras(monkeypatch):
    keras = pytest.importorskip("keras")
    monkeypatch.setenv("COLUMNS", "200")  # (rich cuts Keras's table to the terminal's width)
    wide = {"line_length": 120}
    assert _connected(_lines(_branched(mk))) == _connected(_lines(_branched(keras), **wide))


def _two_outputs(lib):
    class Two(lib.layers.Layer):
        def call(self, x):
            return x * 2.0, x[:, :1]

    inputs = lib.Input((3,), name="x")
    doubled, first = Two(name="two")(inputs)
    return lib.Model(inputs, lib.layers.Add(name="add")([doubled, first]))


def _shapes(lines):
    found = {}
    for line in lines:
        cells = [c.strip() for c in re.split(r"│|┃|\s{2,}", line.strip().strip("│┃")) if c.strip()]
        if len(cells) >= 3 and re.search(r"\(\w+\)$", cells[0]) and cells[0] != "Layer (type)":
            found[cells[0]] = cells[1]
    return found


def test_a_row_of_several_outputs_shows_one_flat_list():
    assert _shapes(_lines(_two_outputs(mk)))["two (Two)"] == "[(None, 3), (None, 1)]"


def test_a_row_of_several_outputs_matches_keras(monkeypatch):
    keras = pytest.importorskip("keras")
    monkeypatch.setenv("COLUMNS", "200")
    theirs = _shapes(_lines(_two_outputs(keras), line_length=150))
    assert _shapes(_lines(_two_outputs(mk))) == theirs
