"""Functional graphs in files: Keras operation nodes, models shared across models, and
functions a file cannot hold (a Lambda of a lambda). The Keras comparisons are in
`tests/test_keras_interop_models.py`."""

import json
import zipfile

import numpy as np
import pytest

import minikeras as mk
from minikeras.saving.keras_ops import KERAS_OPERATIONS

rng = np.random.default_rng(11)
TOKENS = np.array([[3, 1, 0, 0], [2, 4, 4, 1], [0, 2, 0, 0]])


def _randomize(model):
    for weight in model.weights:
        weight.assign(rng.uniform(-1.0, 1.0, weight.shape).astype(weight.dtype))


# ------------------------------------------------------------- operation nodes


def _masked_by_an_operation_node():
    """What Keras 3 writes for Embedding(mask_zero=True) feeding a GRU: the mask is a
    NotEqual operation node's output, passed as `mask=`."""
    tokens = mk.Input((4,), dtype="int32", name="tokens")
    embedding = mk.layers.Embedding(5, 3, name="embedding")
    not_equal = KERAS_OPERATIONS["NotEqual"](name="not_equal")
    gru = mk.layers.GRU(2, name="gru")
    model = mk.Model(tokens, gru(embedding(tokens), mask=not_equal(tokens, 0)), name="masked")
    _randomize(model)
    return model, embedding, not_equal, gru


def test_operation_nodes_run_in_the_graph_but_are_not_layers(capsys):
    model, embedding, not_equal, gru = _masked_by_an_operation_node()
    # Listed as Keras lists them: `layers` (and get_layer) hold Layer instances only,
    # `operations` and the summary every call of the graph.
    assert model.layers == [embedding, gru]
    assert model.operations == [embedding, not_equal, gru]
    with pytest.raises(ValueError, match=r"no layer named 'not_equal'.*\['embedding', 'gru'\]"):
        model.get_layer("not_equal")
    assert model.get_layer(index=-1) is gru
    model.summary()
    assert "not_equal (NotEqual)" in capsys.readouterr().out
    # It still counts in the call: the GRU reads the mask it makes.
    by_hand = gru(embedding(TOKENS), mask=TOKENS != 0).numpy()
    unmasked = gru(embedding(TOKENS)).numpy()
    np.testing.assert_allclose(model.predict(TOKENS, verbose=0), by_hand, rtol=1e-6)
    assert not np.allclose(by_hand, unmasked, atol=1e-3)


@pytest.mark.parametrize("suffix", ["minikeras", "keras"])
def test_operation_nodes_are_saved_back_and_stay_out_of_layers(tmp_path, suffix):
    model, *_ = _masked_by_an_operation_node()
    model.save(tmp_path / f"masked.{suffix}")
    loaded = mk.models.load_model(tmp_path / f"masked.{suffix}")
    assert [layer.name for layer in loaded.layers] == ["embedding", "gru"]
    assert [op.name for op in loaded.operations] == ["embedding", "not_equal", "gru"]
    np.testing.assert_allclose(
        loaded.predict(TOKENS, verbose=0), model.predict(TOKENS, verbose=0), rtol=1e-6
    )
    if suffix == "keras":  # written as Keras writes the node, from the module defining it
        with zipfile.ZipFile(tmp_path / "masked.keras") as archive:
            entries = json.loads(archive.read("config.json"))["config"]["layers"]
        entry = next(e for e in entries if e["name"] == "not_equal")
        assert (entry["module"], entry["class_name"]) == ("keras.src.ops.numpy", "NotEqual")
