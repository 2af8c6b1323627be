"""Functional graphs in files: Keras operation nodes, models shared across models, and
functions a file cannot hold (a Lambda of a lambda). The Keras comparisons are in
`tests/test_keras_interop_models.py`."""

import json
import zipfile

import numpy as np
import pytest
from shared_layer_models import SHARED_KINDS, shared_across_models

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
    assert model.layers[1:] == [embedding, gru]  # (after the InputLayer)
    assert model.operations[1:] == [embedding, not_equal, gru]
    with pytest.raises(ValueError, match=r"no layer named 'not_equal'.*'embedding', 'gru'\]"):
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
    assert [layer.name for layer in loaded.layers][1:] == ["embedding", "gru"]
    assert [op.name for op in loaded.operations][1:] == ["embedding", "not_equal", "gru"]
    np.testing.assert_allclose(
        loaded.predict(TOKENS, verbose=0), model.predict(TOKENS, verbose=0), rtol=1e-6
    )
    if suffix == "keras":  # written as Keras writes the node, from the module defining it
        with zipfile.ZipFile(tmp_path / "masked.keras") as archive:
            entries = json.loads(archive.read("config.json"))["config"]["layers"]
        entry = next(e for e in entries if e["name"] == "not_equal")
        assert (entry["module"], entry["class_name"]) == ("keras.src.ops.numpy", "NotEqual")


# ------------------------------------------------- one layer held by several models

X = rng.standard_normal((8, 4)).astype("float32")
Y = rng.standard_normal((8, 4)).astype("float32")


def _reach(model, names):
    for name in names:
        model = model.get_layer(name)
    return model


@pytest.mark.parametrize("suffix", ["minikeras", "keras"])
@pytest.mark.parametrize("kind", SHARED_KINDS)
def test_a_layer_several_models_hold_is_saved_once_and_loaded_shared(tmp_path, kind, suffix):
    mk.utils.set_random_seed(0)
    model, paths = shared_across_models(mk, kind)
    assert _reach(model, paths[0]) is _reach(model, paths[1])
    model.compile(mk.optimizers.Adam(0.01), "mse")
    model.fit(X, Y, batch_size=4, epochs=2, verbose=0)
    path = tmp_path / f"shared.{suffix}"
    if suffix == "keras":  # Keras 3.15 cannot load it: the save says so
        with pytest.warns(UserWarning, match=r"held by several models.*cannot load such a file"):
            model.save(path)
    else:
        model.save(path)
    loaded = mk.models.load_model(path)
    # One layer again, reached from both models, with the weights it was saved with.
    assert _reach(loaded, paths[0]) is _reach(loaded, paths[1])
    assert len(loaded.weights) == len(model.weights)
    for theirs, ours in zip(model.weights, loaded.weights, strict=True):
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    np.testing.assert_array_equal(loaded.predict(X, verbose=0), model.predict(X, verbose=0))
    # The training state came back too: the next step is the same step.
    assert loaded.train_on_batch(X, Y) == model.train_on_batch(X, Y)
    np.testing.assert_array_equal(loaded.predict(X, verbose=0), model.predict(X, verbose=0))


def test_every_entry_of_a_shared_model_carries_one_shared_object_id(tmp_path):
    model, _ = shared_across_models(mk, "model_direct_and_nested")
    model.save(tmp_path / "shared.minikeras")
    with zipfile.ZipFile(tmp_path / "shared.minikeras") as archive:
        entries = json.loads(archive.read("config.json"))["model"]["config"]["layers"]
    direct = next(e for e in entries if e["name"] == "inner")
    middle = next(e for e in entries if e["name"] == "middle")
    nested = next(e for e in middle["config"]["layers"] if e["name"] == "inner")
    assert direct["shared_object_id"] == nested["shared_object_id"]
    assert "shared_object_id" not in middle  # (held once)


def _without_own_record(source, target):
    """The .keras file without minikeras's own record: what Keras would have written."""
    with zipfile.ZipFile(source) as old, zipfile.ZipFile(target, "w") as new:
        for info in old.infolist():
            if not info.filename.startswith("minikeras/"):
                new.writestr(info, old.read(info))


def test_a_keras_file_holding_one_layer_in_several_models_is_refused_by_name(tmp_path):
    model, _ = shared_across_models(mk, "model_direct_and_nested")
    with pytest.warns(UserWarning):
        model.save(tmp_path / "shared.keras")
    _without_own_record(tmp_path / "shared.keras", tmp_path / "keras_only.keras")
    message = (
        r"one layer is held by several models of the file: Functional 'inner' "
        r"\(in 'outer', 'middle'\)\. Keras writes its entry in each of them .*"
        r"model\.save_weights\('model\.weights\.h5'\).*model\.load_weights"
    )
    with pytest.raises(mk.saving.LoadError, match=message):
        mk.models.load_model(tmp_path / "keras_only.keras")


def test_shared_layers_names_the_outermost_shared_layer_and_its_models():
    def dense(name, **shared):
        return {"class_name": "Dense", "config": {"name": name, "units": 2}, **shared}

    def functional(name, layers, **shared):
        config = {"name": name, "layers": layers}
        return {"class_name": "Functional", "config": config, **shared}

    # As Keras 3.15 writes it when the nested use comes first: only the later entry marked.
    inner = functional("inner", [dense("d")])
    marked = functional("inner", [dense("d", shared_object_id=8)], shared_object_id=7)
    outer = functional("outer", [functional("middle", [inner, dense("e")]), marked])
    assert mk.saving.sharing.shared_layers(outer) == ["Functional 'inner' (in 'middle', 'outer')"]
    # An id on an entry held once (Keras marks what it serialized twice) is no sharing.
    assert (
        mk.saving.sharing.shared_layers(functional("outer", [dense("d", shared_object_id=3)])) == []
    )


# ------------------------------------------------- functions a file cannot hold


def doubled(x):
    """A named module-level function, not registered."""
    return x * 2.0


def _scaler(factor):
    def scale(x):
        return x * factor

    return scale


def _lambda_model(function):
    inputs = mk.Input((3,), name="x")
    return mk.Model(inputs, mk.layers.Lambda(function, name="squash")(inputs))


@pytest.mark.parametrize("suffix", ["minikeras", "keras"])
@pytest.mark.parametrize(
    ("function", "what", "suggested"),
    [
        (lambda x: x * 2.0, r"is a Python lambda", "my_function"),
        (_scaler(3.0), r"is the function _scaler\.<locals>\.scale \(defined inside", "scale"),
    ],
)
def test_saving_a_lambda_says_how_to_make_it_saveable(tmp_path, suffix, function, what, suggested):
    path = tmp_path / f"model.{suffix}"
    message = (
        rf"save: Lambda 'squash', 'function' {what}.*which a file cannot hold.*never as code.*"
        rf"`def {suggested}\(x\): \.\.\.`, decorated with "
        r"@minikeras\.saving\.register_keras_serializable\(\).*"
        r"@keras\.saving\.register_keras_serializable\(\)"
    )
    with pytest.raises(ValueError, match=message):
        _lambda_model(function).save(path)
    assert not path.exists()  # refused before anything is written


@pytest.mark.parametrize("suffix", ["minikeras", "keras"])
def test_an_unregistered_named_function_is_saved_by_name_and_loads_with_custom_objects(
    tmp_path, suffix
):
    path = tmp_path / f"model.{suffix}"
    _lambda_model(doubled).save(path)  # as Keras: by its name, never as code
    with pytest.raises(mk.saving.LoadError, match=r"doubled.*custom_objects=\{'doubled'"):
        mk.models.load_model(path)
    loaded = mk.models.load_model(path, custom_objects={"doubled": doubled})
    assert loaded.get_layer("squash").function is doubled
    np.testing.assert_array_equal(loaded.predict(np.ones((1, 3)), verbose=0), [[2.0, 2.0, 2.0]])


@pytest.mark.parametrize("suffix", ["minikeras", "keras"])
def test_a_registered_closure_is_saved_by_its_registered_name(tmp_path, suffix):
    scale = mk.saving.register_keras_serializable(package="GraphTests", name="times_three")(
        _scaler(3.0)
    )
    _lambda_model(scale).save(tmp_path / f"model.{suffix}")
    loaded = mk.models.load_model(tmp_path / f"model.{suffix}")
    assert loaded.get_layer("squash").function is scale
    np.testing.assert_array_equal(loaded.predict(np.ones((1, 3)), verbose=0), [[3.0, 3.0, 3.0]])


def _as_keras_wrote_a_lambda(source, target):
    """The .keras file as Keras 3.15 writes a Lambda of a Python lambda: its function entry
    holds base64 bytecode (never decoded here), and there is no minikeras record."""
    with zipfile.ZipFile(source) as old, zipfile.ZipFile(target, "w") as new:
        for info in old.infolist():
            data = old.read(info)
            if info.filename == "config.json":
                config = json.loads(data)
                squash = next(e for e in config["config"]["layers"] if e["name"] == "squash")
                code = {"code": "4wEAAAAAAAAAAAAAAAIAAAADAAAA8wwAAAA=\n", "defaults": None,
                        "closure": None}  # fmt: skip
                squash["config"]["function"] = {"class_name": "__lambda__", "config": code}
                data = json.dumps(config).encode()
            if not info.filename.startswith("minikeras/"):
                new.writestr(info, data)


@pytest.mark.parametrize("safe_mode", [True, False])
def test_a_keras_lambda_of_bytecode_is_refused_naming_the_layer_and_the_fix(tmp_path, safe_mode):
    _lambda_model(mk.ops.tanh).save(tmp_path / "tanh.keras")
    _as_keras_wrote_a_lambda(tmp_path / "tanh.keras", tmp_path / "bytecode.keras")
    message = (
        r"Lambda 'squash', 'function' is a Python lambda saved as bytecode, which minikeras "
        r"never runs \(safe_mode=False changes nothing\)\. Define it as a named module-level "
        r"function, register it under the same name in Keras .* and in minikeras"
    )
    with pytest.raises(mk.saving.LoadError, match=message):
        mk.models.load_model(tmp_path / "bytecode.keras", safe_mode=safe_mode)
