"""Model shapes crossing to Keras 3 and back: several outputs, nested models, attention.

Each test writes a `.keras` file in one framework, loads it in the other,
checks the predictions, then takes one more training step in both on the
same batch and checks the loss and the predictions again (so the optimizer's
state and the compile arguments crossed too). They need Keras and skip
without it.
"""

import json
import os
import re
import zipfile

import numpy as np
import pytest
from shared_layer_models import SHARED_KINDS, shared_across_models

import minikeras as mk

RNG = np.random.default_rng(0)
X = RNG.standard_normal((16, 6)).astype("float32")
Y_CLASS = np.arange(16) % 3
Y_REG = RNG.standard_normal((16, 2)).astype("float32")


def _keras():
    os.environ.setdefault("KERAS_BACKEND", "jax")
    return pytest.importorskip("keras")


def _close(a, b, rtol=1e-5, atol=1e-5):
    if isinstance(a, dict):
        assert set(a) == set(b)
        for key in a:
            _close(a[key], b[key], rtol, atol)
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b)
        for one, other in zip(a, b):
            _close(one, other, rtol, atol)
    else:
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=rtol, atol=atol)


def _step_both(keras_model, ours, x, y):
    """One training step in each framework on the same batch: the same loss and predictions."""
    theirs_logs = keras_model.train_on_batch(x, y, return_dict=True)
    our_logs = ours.train_on_batch(x, y, return_dict=True)
    assert set(our_logs) == set(theirs_logs)  # the same metrics, under the same names
    for key, value in theirs_logs.items():
        np.testing.assert_allclose(our_logs[key], float(value), rtol=1e-5, err_msg=key)
    _close(ours.predict(x, verbose=0), keras_model.predict(x, verbose=0), rtol=1e-4)


# ------------------------------------------------------------ several outputs


def _two_heads(api, structure):
    inputs = api.Input((6,), name="x")
    hidden = api.layers.Dense(8, activation="relu", name="hidden")(inputs)
    cls = api.layers.Dense(3, name="cls")(hidden)
    reg = api.layers.Dense(2, name="reg")(hidden)
    outputs = {"cls": cls, "reg": reg} if structure == "dict" else [cls, reg]
    return api.Model(inputs, outputs)


def _compile_two_heads(api, model, structure):
    cross_entropy = api.losses.SparseCategoricalCrossentropy(from_logits=True)
    if structure == "dict":
        model.compile(
            api.optimizers.Adam(0.01),
            loss={"cls": cross_entropy, "reg": "mse"},
            loss_weights={"cls": 1.0, "reg": 0.5},
            metrics={"cls": [api.metrics.SparseCategoricalAccuracy()], "reg": ["mae"]},
            weighted_metrics={"reg": [api.metrics.MeanSquaredError()]},
        )
        return {"cls": Y_CLASS, "reg": Y_REG}
    model.compile(
        api.optimizers.Adam(0.01),
        loss=[cross_entropy, "mse"],
        loss_weights=[1.0, 0.5],
        metrics=[["accuracy"], ["mae"]],
    )
    return [Y_CLASS, Y_REG]


@pytest.mark.parametrize("structure", ["list", "dict"])
def test_a_keras_model_with_several_outputs_loads_compiled_and_trains_on_alike(tmp_path, structure):
    keras = _keras()
    keras.utils.set_random_seed(0)
    theirs = _two_heads(keras, structure)
    y = _compile_two_heads(keras, theirs, structure)
    theirs.fit(X, y, epochs=1, batch_size=8, verbose=0)
    theirs.save(tmp_path / "heads.keras")

    ours = mk.models.load_model(tmp_path / "heads.keras")
    _close(ours.predict(X, verbose=0), theirs.predict(X, verbose=0))
    assert ours.loss_weights == ({"cls": 1.0, "reg": 0.5} if structure == "dict" else [1.0, 0.5])
    assert int(ours.optimizer.iterations.numpy()) == 2
    batch = (X[:8], {k: v[:8] for k, v in y.items()} if structure == "dict" else [v[:8] for v in y])
    _step_both(theirs, ours, *batch)


@pytest.mark.parametrize("structure", ["list", "dict"])
def test_a_minikeras_model_with_several_outputs_loads_compiled_in_keras(tmp_path, structure):
    keras = _keras()
    mk.utils.set_random_seed(0)
    ours = _two_heads(mk, structure)
    y = _compile_two_heads(mk, ours, structure)
    ours.fit(X, y, epochs=1, batch_size=8, verbose=0)
    ours.save(tmp_path / "heads.keras")

    theirs = keras.saving.load_model(tmp_path / "heads.keras")
    _close(theirs.predict(X, verbose=0), ours.predict(X, verbose=0))
    assert int(theirs.optimizer.iterations) == 2
    batch = (X[:8], {k: v[:8] for k, v in y.items()} if structure == "dict" else [v[:8] for v in y])
    _step_both(theirs, ours, *batch)


@pytest.mark.parametrize("suffix", [".minikeras", ".keras"])
def test_metric_objects_of_several_outputs_keep_their_names_through_a_file(tmp_path, suffix):
    # compile logs a metric of the output `cls` as `cls_<name>`; the file keeps <name>,
    # so the model loaded back logs `cls_<name>` again, not `cls_cls_<name>`.
    inputs = mk.Input((6,), name="x")
    heads = {
        "cls": mk.layers.Dense(3, name="cls")(inputs),
        "reg": mk.layers.Dense(2, name="reg")(inputs),
    }
    model = mk.Model(inputs, heads)
    model.compile("adam", "mse", metrics={"cls": [mk.metrics.MeanAbsoluteError()], "reg": ["mae"]})
    y = {"cls": np.ones((4, 3), "float32"), "reg": np.ones((4, 2), "float32")}
    logs = model.train_on_batch(X[:4], y, return_dict=True)
    assert set(logs) == {"loss", "cls_loss", "reg_loss", "cls_mean_absolute_error", "reg_mae"}
    model.save(tmp_path / f"heads{suffix}")
    again = mk.models.load_model(tmp_path / f"heads{suffix}")
    assert set(again.train_on_batch(X[:4], y, return_dict=True)) == set(logs)


# ------------------------------------------------------------ MultiHeadAttention

SEQUENCES = [RNG.standard_normal((16, 4, 6)).astype("float32"),
             RNG.standard_normal((16, 5, 3)).astype("float32"),
             RNG.standard_normal((16, 5, 2)).astype("float32")]  # fmt: skip


def _attention_model(api):
    query, value = api.Input((4, 6), name="query"), api.Input((5, 3), name="value")
    key = api.Input((5, 2), name="key")
    # (value_dim other than key_dim: Keras 3.15 on JAX fails to run it.)
    cross = api.layers.MultiHeadAttention(2, 3, name="cross")(query, value, key)
    mixed = api.layers.MultiHeadAttention(3, 2, output_shape=5, name="self")(cross, cross)
    pooled = api.layers.GlobalAveragePooling1D()(mixed)
    return api.Model([query, value, key], api.layers.Dense(3, name="head")(pooled))


@pytest.mark.parametrize("writer", ["keras", "minikeras"])
def test_multi_head_attention_crosses_both_ways_and_trains_on_alike(tmp_path, writer):
    keras = _keras()
    keras.utils.set_random_seed(0)
    mk.utils.set_random_seed(0)
    api, other = (keras, mk) if writer == "keras" else (mk, keras)
    model = _attention_model(api)
    model.compile(api.optimizers.Adam(0.01), api.losses.SparseCategoricalCrossentropy(True))
    model.fit(SEQUENCES, Y_CLASS, epochs=1, batch_size=8, verbose=0)
    model.save(tmp_path / "attention.keras")
    loaded = other.saving.load_model(tmp_path / "attention.keras")
    _close(loaded.predict(SEQUENCES, verbose=0), model.predict(SEQUENCES, verbose=0))
    theirs, ours = (model, loaded) if writer == "keras" else (loaded, model)
    _step_both(theirs, ours, [s[:8] for s in SEQUENCES], Y_CLASS[:8])


def test_multi_head_attention_weights_of_keras_before_3_3_load_too(tmp_path):
    # Keras before 3.3 kept the projections at `_query_dense` (no public property yet).
    import io
    import zipfile

    import h5py

    model = _attention_model(mk)
    model.save(tmp_path / "now.keras")
    with zipfile.ZipFile(tmp_path / "now.keras") as archive:
        members = {n: archive.read(n) for n in archive.namelist() if not n.startswith("minikeras")}
    buffer = io.BytesIO(members["model.weights.h5"])
    with h5py.File(buffer, "r+") as file:
        for layer in ("cross", "self"):
            group = file[f"layers/multi_head_attention{'_1' if layer == 'self' else ''}"]
            for part in ("query", "key", "value", "output"):
                group.move(f"{part}_dense", f"_{part}_dense")
    members["model.weights.h5"] = buffer.getvalue()
    with zipfile.ZipFile(tmp_path / "old.keras", "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    old = mk.models.load_model(tmp_path / "old.keras")
    np.testing.assert_array_equal(
        old.predict(SEQUENCES, verbose=0), model.predict(SEQUENCES, verbose=0)
    )


# ------------------------------------------------------------ nested models


def _nested(api, kind):
    """A model used as a layer inside another: functional in functional (its branches
    built in another order than Keras lists them), functional in Sequential, and
    Sequential in functional."""
    if kind == "sequential_inside":
        inner = api.Sequential(
            [api.Input((6,)), api.layers.Dense(5, activation="tanh"), api.layers.Dense(4)],
            name="inner",
        )
    else:
        a = api.Input((6,), name="inner_in")
        short = api.layers.Dense(4, name="short")(a)
        deep = api.layers.Dense(4, name="deep2")(api.layers.Dense(5, name="deep1")(a))
        inner = api.Model(a, api.layers.Add(name="add")([short, deep]), name="inner")
    if kind == "functional_in_sequential":
        return api.Sequential([api.Input((6,)), inner, api.layers.Dense(3, name="head")])
    x = api.Input((6,), name="x")
    features = api.layers.Dense(6, activation="relu", name="pre")(x)
    return api.Model(x, api.layers.Dense(3, name="head")(inner(features)), name="outer")


@pytest.mark.parametrize("writer", ["keras", "minikeras"])
@pytest.mark.parametrize(
    "kind", ["functional_inside", "functional_in_sequential", "sequential_inside"]
)
def test_nested_models_cross_both_ways_and_train_on_alike(tmp_path, writer, kind):
    keras = _keras()
    keras.utils.set_random_seed(0)
    mk.utils.set_random_seed(0)
    api, other = (keras, mk) if writer == "keras" else (mk, keras)
    model = _nested(api, kind)
    model.compile(api.optimizers.Adam(0.01), api.losses.SparseCategoricalCrossentropy(True))
    model.fit(X, Y_CLASS, epochs=1, batch_size=8, verbose=0)
    model.save(tmp_path / "nested.keras")
    loaded = other.saving.load_model(tmp_path / "nested.keras")
    _close(loaded.predict(X, verbose=0), model.predict(X, verbose=0))
    theirs, ours = (model, loaded) if writer == "keras" else (loaded, model)
    _step_both(theirs, ours, X[:8], Y_CLASS[:8])


# ------------------------------------------------------------ masks as operation nodes

TOKENS = np.array([[3, 7, 1, 0, 0], [5, 2, 9, 4, 8], [0, 6, 6, 2, 0], [1, 0, 0, 0, 0]] * 2)
MORE_TOKENS = np.array([[1, 4, 0, 0, 0], [2, 0, 0, 0, 0], [8, 8, 8, 8, 1], [3, 3, 0, 0, 0]] * 2)
VALUES = RNG.standard_normal((8, 5, 3)).astype("float32")
VALUES[::2, 3:] = 0.0


def _masked(keras, kind):
    """Keras 3.15 records the mask these models pass to a recurrent layer as operation
    nodes (`NotEqual`, `Any`, for merged masks `ExpandDims`, `ZerosLike`, `LogicalOr`,
    `Concatenate`, after Attention `ConvertToTensor`) in the functional config."""
    layers = keras.layers
    if kind == "masking":
        inputs = keras.Input((5, 3))
        return keras.Model(inputs, layers.GRU(4)(layers.Masking(0.0)(inputs))), VALUES
    tokens = keras.Input((None,), dtype="int32")
    embedding = layers.Embedding(20, 6, mask_zero=True)
    if kind == "concatenated":
        more = keras.Input((None,), dtype="int32")
        joined = layers.Concatenate(axis=1)([embedding(tokens), embedding(more)])
        return keras.Model([tokens, more], layers.LSTM(3)(joined)), [TOKENS, MORE_TOKENS]
    if kind == "attention":  # (the mask then passes a ConvertToTensor node)
        attended = layers.Attention()([embedding(tokens), embedding(tokens)])
        return keras.Model(tokens, layers.LSTM(3)(attended)), TOKENS
    sequences = layers.Bidirectional(layers.LSTM(4, return_sequences=True))(embedding(tokens))
    pooled = layers.GlobalAveragePooling1D()(layers.SimpleRNN(3, return_sequences=True)(sequences))
    return keras.Model(tokens, pooled), TOKENS


@pytest.mark.parametrize("kind", ["embedding", "masking", "concatenated", "attention"])
def test_keras_masks_recorded_as_operation_nodes_load_and_train_on_alike(tmp_path, kind):
    keras = _keras()
    keras.utils.set_random_seed(0)
    theirs, x = _masked(keras, kind)
    config = theirs.get_config()
    assert "NotEqual" in {entry["class_name"] for entry in config["layers"]}
    theirs.compile(keras.optimizers.Adam(0.01), "mse")
    y = RNG.standard_normal((8, *theirs.output_shape[1:])).astype("float32")
    theirs.fit(x, y, batch_size=4, verbose=0)
    theirs.save(tmp_path / "masked.keras")

    ours = mk.models.load_model(tmp_path / "masked.keras")
    _close(ours.predict(x, verbose=0), theirs.predict(x, verbose=0))
    if kind == "embedding":  # the mask works: a padded sequence scores as the short one
        short = ours.predict(TOKENS[3:4, :1], verbose=0)
        np.testing.assert_allclose(ours.predict(TOKENS[3:4], verbose=0), short, atol=1e-6)
    _step_both(theirs, ours, x, y)
    ours.save(tmp_path / "back.keras")  # and back to Keras, operation nodes and all
    back = keras.saving.load_model(tmp_path / "back.keras")
    _close(back.predict(x, verbose=0), ours.predict(x, verbose=0))
    ours.save(tmp_path / "own.minikeras")
    _close(mk.models.load_model(tmp_path / "own.minikeras").predict(x, verbose=0),
           ours.predict(x, verbose=0))  # fmt: skip


@pytest.mark.parametrize("kind", ["embedding", "masking", "concatenated", "attention"])
def test_operation_nodes_are_listed_where_keras_lists_them(tmp_path, kind, capsys):
    keras = _keras()
    theirs, _ = _masked(keras, kind)
    theirs.save(tmp_path / "masked.keras")
    ours = mk.models.load_model(tmp_path / "masked.keras")

    def names(items):  # (minikeras has no InputLayer objects: its Inputs are tensors)
        return sorted(item.name for item in items if type(item).__name__ != "InputLayer")

    operation_names = set(names(theirs.operations)) - set(names(theirs.layers))
    assert operation_names and names(ours.layers) == names(theirs.layers)
    assert names(ours.operations) == names(theirs.operations)
    for name in operation_names:  # get_layer does not find them, in either
        for model in (theirs, ours):
            with pytest.raises(ValueError, match=name):
                model.get_layer(name)
    capsys.readouterr()
    theirs.summary()
    their_summary = capsys.readouterr().out
    ours.summary()
    our_summary = capsys.readouterr().out
    for name in operation_names:  # the summary shows them, in both
        assert re.search(rf"\b{name}\b", their_summary) and re.search(rf"\b{name}\b", our_summary)


def test_an_operation_node_minikeras_cannot_replay_is_named(tmp_path):
    keras = _keras()
    inputs = keras.Input((4, 4, 3))
    gray = keras.ops.image.rgb_to_grayscale(inputs)
    model = keras.Model(inputs, keras.layers.Flatten()(gray))
    model.save(tmp_path / "gray.keras")
    images = RNG.uniform(size=(2, 4, 4, 3)).astype("float32")
    loaded = mk.models.load_model(tmp_path / "gray.keras")  # (every keras.ops op replays)
    np.testing.assert_allclose(loaded(images).numpy(), np.asarray(model(images)), rtol=1e-6)
    # An operation minikeras does not know (a later Keras's, say) is named.
    with zipfile.ZipFile(tmp_path / "gray.keras") as archive:
        files = {name: archive.read(name) for name in archive.namelist()}
    files["config.json"] = files["config.json"].replace(b"RGBToGrayscale", b"RGBToSepia")
    with zipfile.ZipFile(tmp_path / "sepia.keras", "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    with pytest.raises(
        mk.saving.LoadError, match=r"'rgb_to_grayscale' is the Keras operation .*RGBToSepia"
    ):
        mk.models.load_model(tmp_path / "sepia.keras")


# ------------------------------------------------------------ EMA slots


@pytest.mark.parametrize("writer", ["keras", "minikeras"])
@pytest.mark.parametrize("optimizer", ["Adam", "SGD"])
def test_moving_averages_of_use_ema_cross_in_kerass_order(tmp_path, writer, optimizer):
    keras = _keras()
    keras.utils.set_random_seed(0)
    mk.utils.set_random_seed(0)
    api, other = (keras, mk) if writer == "keras" else (mk, keras)
    model = _nested(api, "functional_inside")  # (Keras's order differs from the build order)
    options = {"momentum": 0.5} if optimizer == "SGD" else {}
    make = getattr(api.optimizers, optimizer)
    model.compile(make(0.01, use_ema=True, ema_momentum=0.9, **options), "mse")
    y = RNG.standard_normal((16, 3)).astype("float32")
    model.fit(X, y, epochs=1, batch_size=8, verbose=0)
    model.save(tmp_path / "ema.keras")
    loaded = other.saving.load_model(tmp_path / "ema.keras")
    theirs, ours = (model, loaded) if writer == "keras" else (loaded, model)
    if writer == "keras":  # (Keras 3.15 on JAX fails a step after fit with use_ema; its
        theirs = keras.saving.load_model(tmp_path / "ema.keras")  # own reload steps on)
    # Keras's averages, variable by variable in its order, are ours in the same order.
    from minikeras.saving.keras_order import trainable_order

    order = trainable_order(ours, ours.optimizer._trainable_variables)
    averages = [ours.optimizer._averages[index].numpy() for index in order]
    kept = theirs.optimizer._model_variables_moving_average
    assert len(kept) == len(averages) == len(theirs.trainable_variables)
    for theirs_average, our_average in zip(kept, averages):
        np.testing.assert_allclose(np.asarray(theirs_average), our_average, rtol=1e-6)
    assert any(np.abs(average).max() > 0 for average in averages)
    _step_both(theirs, ours, X[:8], y[:8])


# ------------------------------------------------------------ Lambda


@mk.saving.register_keras_serializable(package="interop")
def scaled_tanh(x):
    """A named module-level function, registered (in Keras too, by the tests)."""
    return mk.ops.tanh(x) * 2.0 if isinstance(x, mk.Tensor) else _keras_tanh(x) * 2.0


def _keras_tanh(x):
    import keras

    return keras.ops.tanh(x)


def _lambda_model(api, function):
    inputs = api.Input((6,), name="x")
    hidden = api.layers.Lambda(function, name="squash")(api.layers.Dense(4, name="d")(inputs))
    return api.Model(inputs, api.layers.Dense(3, name="head")(hidden))


@pytest.mark.parametrize("writer", ["keras", "minikeras"])
@pytest.mark.parametrize("function", ["registered", "keras.ops", "activation"])
def test_a_lambda_of_a_named_function_crosses_both_ways(tmp_path, writer, function):
    keras = _keras()
    keras.saving.register_keras_serializable(package="interop")(scaled_tanh)
    keras.utils.set_random_seed(0)
    mk.utils.set_random_seed(0)
    api, other = (keras, mk) if writer == "keras" else (mk, keras)
    chosen = {"registered": scaled_tanh, "keras.ops": api.ops.square,
              "activation": api.activations.softplus}[function]  # fmt: skip
    model = _lambda_model(api, chosen)
    model.compile(api.optimizers.SGD(0.1), "mse")
    y = RNG.standard_normal((16, 3)).astype("float32")
    model.fit(X, y, batch_size=8, verbose=0)
    model.save(tmp_path / "lambda.keras")
    loaded = other.saving.load_model(tmp_path / "lambda.keras")
    _close(loaded.predict(X, verbose=0), model.predict(X, verbose=0))
    theirs, ours = (model, loaded) if writer == "keras" else (loaded, model)
    _step_both(theirs, ours, X[:8], y[:8])


def test_a_keras_lambda_of_an_unregistered_function_loads_with_custom_objects(tmp_path):
    keras = _keras()
    model = _lambda_model(keras, _keras_tanh)  # Keras writes its bare name
    model.save(tmp_path / "bare.keras")
    unregistered = r"'squash', 'function' names the function '_keras_tanh', which is not registered"
    with pytest.raises(mk.saving.LoadError, match=unregistered + ".*custom_objects"):
        mk.models.load_model(tmp_path / "bare.keras")
    ours = mk.models.load_model(
        tmp_path / "bare.keras", custom_objects={"_keras_tanh": mk.ops.tanh}
    )
    _close(ours.predict(X, verbose=0), model.predict(X, verbose=0))


def test_a_keras_lambda_of_bytecode_is_refused_in_a_short_message(tmp_path):
    keras = _keras()
    model = _lambda_model(keras, lambda x: x * 2.0)
    model.save(tmp_path / "bytecode.keras")
    for safe_mode in (True, False):
        with pytest.raises(mk.saving.LoadError) as caught:
            mk.models.load_model(tmp_path / "bytecode.keras", safe_mode=safe_mode)
        message = str(caught.value)
        assert "Lambda 'squash', 'function' is a Python lambda saved as bytecode" in message
        assert "register_keras_serializable" in message and "safe_mode" in message
        assert "code" not in message.replace("bytecode", "") and len(message) < 800


def test_a_lambda_of_a_lambda_keras_saves_as_bytecode_minikeras_refuses_to_save(tmp_path):
    # Keras writes the bytecode and refuses it on load unless safe_mode=False; minikeras
    # refuses at save, saying how to make the function saveable (tests/test_saving_graph_*).
    keras = _keras()
    _lambda_model(keras, lambda x: x * 2.0).save(tmp_path / "theirs.keras")
    with pytest.raises(ValueError, match="safe_mode=False"):
        keras.saving.load_model(tmp_path / "theirs.keras")
    with pytest.raises(ValueError, match=r"is a Python lambda.*register_keras_serializable"):
        _lambda_model(mk, lambda x: x * 2.0).save(tmp_path / "ours.keras")


def test_a_registered_lambda_crosses_to_keras_by_its_registered_name(tmp_path):
    keras = _keras()
    ours = mk.saving.register_keras_serializable(package="interop", name="halved")(
        lambda x: x * 0.5
    )
    keras.saving.register_keras_serializable(package="interop", name="halved")(lambda x: x * 0.5)
    model = _lambda_model(mk, ours)
    model.save(tmp_path / "halved.keras")
    theirs = keras.saving.load_model(tmp_path / "halved.keras")  # (safe_mode: no bytecode)
    _close(theirs.predict(X, verbose=0), model.predict(X, verbose=0))
    _close(theirs.get_layer("squash")(np.ones((1, 4), "float32")), np.full((1, 4), 0.5))


def test_a_minikeras_model_merging_two_masks_predicts_alike_in_keras(tmp_path):
    # Add of two masked sequences: Keras 3 keeps a step either mask keeps; a GRU after it
    # reads the merged mask, so a different rule gives other predictions in Keras.
    keras = _keras()
    mk.utils.set_random_seed(0)
    tokens, more = mk.Input((5,), dtype="int32"), mk.Input((5,), dtype="int32")
    embedded = [mk.layers.Embedding(20, 6, mask_zero=True)(t) for t in (tokens, more)]
    summed = mk.layers.Add()(embedded)
    model = mk.Model([tokens, more], mk.layers.Dense(2)(mk.layers.GRU(4)(summed)))
    model.save(tmp_path / "merged.keras")
    theirs = keras.saving.load_model(tmp_path / "merged.keras")
    x = [TOKENS, TOKENS[:, ::-1].copy()]
    _close(model.predict(x, verbose=0), theirs.predict(x, verbose=0))


def test_a_lambda_with_numpy_scalar_arguments_saves_to_a_keras_file(tmp_path):
    # Keras writes a numpy scalar in a config as the number it holds; so does minikeras.
    inputs = mk.Input((6,), name="x")
    scaled = mk.layers.Lambda(mk.ops.multiply, arguments={"x2": np.float32(2.5)})(inputs)
    model = mk.Model(inputs, scaled)
    model.save(tmp_path / "scalar.keras")
    loaded = mk.models.load_model(tmp_path / "scalar.keras")
    np.testing.assert_allclose(loaded.predict(X, verbose=0), X * 2.5, rtol=1e-6)
    os.environ.setdefault("KERAS_BACKEND", "jax")
    try:
        import keras
    except ImportError:
        return  # (the minikeras half runs without Keras)
    theirs = keras.saving.load_model(tmp_path / "scalar.keras")
    np.testing.assert_allclose(theirs.predict(X, verbose=0), X * 2.5, rtol=1e-6)


def _metrics_for_some_outputs(api):
    inputs = api.Input((6,), name="x")
    heads = [api.layers.Dense(3, name="a")(inputs), api.layers.Dense(2, name="r")(inputs)]
    model = api.Model(inputs, heads)
    model.compile(
        api.optimizers.SGD(0.1),
        loss=[None, "mse"],  # (Keras: no loss, no metric for an output given None)
        metrics=[[api.metrics.MeanAbsoluteError(name="err")], None],
        weighted_metrics=[None, ["mae"]],
    )
    return model, [np.zeros((16, 3), "float32"), Y_REG]


# Head "a" has no loss, so its weights get no gradient: the warning says so (tested elsewhere).
@pytest.mark.filterwarnings("ignore:Variable 'a/:minikeras.layers.tracking.TrackingWarning")
@pytest.mark.parametrize("suffix", [".minikeras", ".keras"])
def test_metrics_given_for_some_outputs_only_cross_a_file(tmp_path, suffix):
    mk.utils.set_random_seed(0)
    model, y = _metrics_for_some_outputs(mk)
    logs = model.train_on_batch(X, y, return_dict=True)
    assert set(logs) == {"loss", "a_err", "r_mae"}
    model.save(tmp_path / f"some{suffix}")
    again = mk.models.load_model(tmp_path / f"some{suffix}")
    again_logs, next_logs = (m.train_on_batch(X, y, return_dict=True) for m in (again, model))
    assert again_logs == pytest.approx(next_logs)


def test_a_keras_model_with_metrics_for_some_outputs_loads_compiled(tmp_path):
    keras = _keras()
    keras.utils.set_random_seed(0)
    theirs, y = _metrics_for_some_outputs(keras)
    theirs.fit(X, y, batch_size=8, verbose=0)
    theirs.save(tmp_path / "some.keras")
    ours = mk.models.load_model(tmp_path / "some.keras")
    _step_both(theirs, ours, X[:8], [v[:8] for v in y])


def _dict_heads(api):
    # Keras lists a dict's outputs by sorted key ('alpha', 'zeta'); the dict holds 'zeta' first.
    inputs = api.Input((6,), name="x")
    zeta, alpha = api.layers.Dense(2, name="z")(inputs), api.layers.Dense(2, name="a")(inputs)
    heads = {"zeta": zeta, "alpha": alpha}
    return api.Model(inputs, heads)


def test_a_list_of_losses_keras_gave_a_dict_of_outputs_keeps_its_outputs(tmp_path):
    # The heads have one shape: a loss put on the other head would run, silently wrong.
    keras = _keras()
    keras.utils.set_random_seed(0)
    theirs = _dict_heads(keras)
    theirs.compile(keras.optimizers.Adam(0.01), loss=["mse", "mae"], loss_weights=[2.0, 0.5],
                   metrics=[["mae"], ["mse"]])  # fmt: skip
    y = {"zeta": Y_REG, "alpha": 3.0 * Y_REG[::-1]}
    theirs.fit(X, y, batch_size=8, verbose=0)
    theirs.save(tmp_path / "dict.keras")
    ours = mk.models.load_model(tmp_path / "dict.keras")
    assert ours.loss_weights == {"alpha": 2.0, "zeta": 0.5}
    _step_both(theirs, ours, X[:8], {k: v[:8] for k, v in y.items()})


def test_a_list_of_losses_minikeras_gave_a_dict_of_outputs_keeps_its_outputs(tmp_path):
    keras = _keras()
    mk.utils.set_random_seed(0)
    ours = _dict_heads(mk)  # (minikeras takes the list in the dict's order: zeta, alpha)
    ours.compile(mk.optimizers.Adam(0.01), loss=["mse", "mae"], loss_weights=[2.0, 0.5])
    y = {"zeta": Y_REG, "alpha": 3.0 * Y_REG[::-1]}
    ours.fit(X, y, batch_size=8, verbose=0)
    ours.save(tmp_path / "dict.keras")
    theirs = keras.saving.load_model(tmp_path / "dict.keras")
    _step_both(theirs, ours, X[:8], {k: v[:8] for k, v in y.items()})


def test_a_mask_leaving_a_nested_keras_model_still_masks_the_next_layer(tmp_path):
    # Keras writes the GRU's call with mask=None: to Keras, "the mask its input carries".
    keras = _keras()
    keras.utils.set_random_seed(0)
    tokens = keras.Input((5,), dtype="int32")
    inner = keras.Model(tokens, keras.layers.Embedding(20, 4, mask_zero=True)(tokens))
    outer_tokens = keras.Input((5,), dtype="int32")
    theirs = keras.Model(outer_tokens, keras.layers.GRU(3)(inner(outer_tokens)))
    theirs.save(tmp_path / "across.keras")
    ours = mk.models.load_model(tmp_path / "across.keras")
    _close(ours.predict(TOKENS, verbose=0), theirs.predict(TOKENS, verbose=0))
    short = ours.predict(TOKENS[3:4, :1], verbose=0)  # (the padding is left out)
    np.testing.assert_allclose(ours.predict(TOKENS[3:4], verbose=0), short, atol=1e-6)


# ------------------------------------------------- one layer held by several models


@pytest.mark.parametrize("kind", SHARED_KINDS)
def test_a_keras_file_holding_one_layer_in_several_models_is_refused_as_keras_cannot_load_it(
    tmp_path, kind
):
    keras = _keras()
    keras.utils.set_random_seed(0)
    theirs, _ = shared_across_models(keras, kind)
    theirs.save(tmp_path / "shared.keras")
    if keras.__version__.startswith("3.15."):  # (docs/saving.md says so: update it if not)
        with pytest.raises(ValueError):
            keras.saving.load_model(tmp_path / "shared.keras")
    with pytest.raises(mk.saving.LoadError, match=r"held by several models of the file: \w+ '"):
        mk.models.load_model(tmp_path / "shared.keras")
    # What the message suggests: the weights, through a .weights.h5 file, both ways.
    ours, _ = shared_across_models(mk, kind)
    theirs.save_weights(tmp_path / "theirs.weights.h5")
    ours.load_weights(tmp_path / "theirs.weights.h5")
    _close(ours.predict(X[:, :4], verbose=0), theirs.predict(X[:, :4], verbose=0))
    ours.compile(mk.optimizers.SGD(0.1), "mse")
    ours.fit(X[:, :4], Y_REG[:, :1] * np.ones((1, 4)), verbose=0)
    ours.save_weights(tmp_path / "ours.weights.h5")
    theirs.load_weights(tmp_path / "ours.weights.h5")
    _close(theirs.predict(X[:, :4], verbose=0), ours.predict(X[:, :4], verbose=0))


# ------------------------------------------------------------ nested outputs


def _stacked_states(api):
    inputs = api.Input((4, 2), name="x")
    cells = [api.layers.LSTMCell(3, name="c1"), api.layers.SimpleRNNCell(2, name="c2")]
    return api.Model(inputs, api.layers.RNN(cells, return_state=True, name="rnn")(inputs))


def test_nested_outputs_keep_their_nesting_in_both_files(tmp_path):
    model = _stacked_states(mk)
    assert model.get_config()["output_layers"] == [
        ["rnn", 0, 0],
        [["rnn", 0, 1], ["rnn", 0, 2]],
        ["rnn", 0, 3],
    ]  # (as Keras writes them)
    x = RNG.standard_normal((5, 4, 2)).astype("float32")
    for suffix in ("minikeras", "keras"):
        model.save(tmp_path / f"m.{suffix}")
        loaded = mk.models.load_model(tmp_path / f"m.{suffix}")
        predicted = loaded.predict(x, verbose=0)
        assert len(predicted) == 3 and len(predicted[1]) == 2
        _close(predicted, model.predict(x, verbose=0), rtol=1e-6, atol=1e-7)


def test_nested_outputs_cross_to_keras_and_back(tmp_path):
    keras = _keras()
    theirs = _stacked_states(keras)
    x = RNG.standard_normal((5, 4, 2)).astype("float32")
    written = json.loads(json.dumps(theirs.get_config()["output_layers"]))  # (tuples: lists)
    assert written == _stacked_states(mk).get_config()["output_layers"]
    theirs.save(tmp_path / "keras_made.keras")
    ours = mk.models.load_model(tmp_path / "keras_made.keras")
    _close(ours.predict(x, verbose=0), theirs.predict(x, verbose=0), rtol=1e-5)
    ours.save(tmp_path / "ours.keras")
    again = keras.saving.load_model(tmp_path / "ours.keras")
    _close(again.predict(x, verbose=0), theirs.predict(x, verbose=0), rtol=1e-5)
