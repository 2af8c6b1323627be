"""Keras 3 files both ways: Keras's fixtures load without Keras; minikeras's files load in Keras.

The fixtures in tests/fixtures/keras3 were made by `make_fixtures.py` there
(Keras and JAX versions in `versions.json`); the tests that need Keras itself
skip when it is not importable.
"""

import io
import json
import os
import zipfile
from pathlib import Path

import numpy as np
import pytest

import minikeras as mk
from minikeras.saving import LoadError

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "keras3"
NAMES = ["mlp", "two_inputs", "cnn", "embedding_lstm", "batchnorm_adam", "custom_layer"]


@mk.saving.register_keras_serializable(package="fixtures")
class Scale(mk.layers.Layer):
    """The minikeras twin of the fixtures' registered Keras layer."""

    def __init__(self, initial=2.0, **kwargs):
        super().__init__(**kwargs)
        self.initial = initial

    def build(self, input_shape):
        self.scale = self.add_weight(shape=(input_shape[-1],), initializer="ones", name="scale")

    def call(self, inputs):
        return inputs * self.scale

    def get_config(self):
        return {**super().get_config(), "initial": self.initial}


def _inputs(name):
    data = np.load(FIXTURES / f"{name}.npz")
    inputs = [data[key] for key in sorted(data.files) if key.startswith("input_")]
    return (inputs if len(inputs) > 1 else inputs[0]), data["predictions"]


def _rewrite(source, target, change_config=None, members=None):
    """Copies a .keras zip, changing its config.json or its members."""
    with zipfile.ZipFile(source) as archive:
        contents = {name: archive.read(name) for name in archive.namelist()}
    if change_config is not None:
        config = json.loads(contents["config.json"])
        change_config(config)
        contents["config.json"] = json.dumps(config).encode()
    contents.update(members or {})
    with zipfile.ZipFile(target, "w") as archive:
        for name, data in contents.items():
            if data is not None:
                archive.writestr(name, data)
    return target


# --------------------------------------------------------- Keras 3 -> minikeras


@pytest.mark.parametrize("name", NAMES)
def test_keras_files_load_and_predict_as_keras_did(name):
    model = mk.models.load_model(FIXTURES / f"{name}.keras")
    inputs, expected = _inputs(name)
    np.testing.assert_allclose(model.predict(inputs, verbose=0), expected, rtol=1e-5, atol=1e-6)


def test_a_compiled_keras_file_brings_its_optimizer_state():
    model = mk.models.load_model(FIXTURES / "batchnorm_adam.keras")
    assert isinstance(model.optimizer, mk.optimizers.Adam)
    assert model.optimizer.learning_rate == pytest.approx(0.01)
    assert int(model.optimizer.iterations.numpy()) == 4  # Keras fit 32 samples in batches of 8
    import h5py

    with zipfile.ZipFile(FIXTURES / "batchnorm_adam.keras") as archive:
        weights = h5py.File(io.BytesIO(archive.read("model.weights.h5")), "r")
        first_kernel_momentum = weights["optimizer/vars/2"][()]
    momentum = next(v for v in model.optimizer.variables if v.name.endswith("kernel_momentum"))
    np.testing.assert_array_equal(momentum.numpy(), first_kernel_momentum)
    x = np.random.default_rng(0).standard_normal((16, 6)).astype("float32")
    model.fit(x, np.arange(16) % 3, epochs=1, batch_size=8, verbose=0)
    assert int(model.optimizer.iterations.numpy()) == 6


def test_an_unregistered_custom_class_is_named_with_the_fix(tmp_path):
    target = _rewrite(
        FIXTURES / "custom_layer.keras",
        tmp_path / "renamed.keras",
        lambda c: c["config"]["layers"][1].update(registered_name="elsewhere>Scale"),
    )
    with pytest.raises(LoadError, match=r"unknown layer class 'elsewhere>Scale'.*custom_objects"):
        mk.models.load_model(target)
    model = mk.models.load_model(target, custom_objects={"elsewhere>Scale": Scale})
    inputs, expected = _inputs("custom_layer")
    np.testing.assert_allclose(model.predict(inputs, verbose=0), expected, rtol=1e-5, atol=1e-6)


def test_a_layer_or_option_minikeras_lacks_is_named(tmp_path):
    lacking = _rewrite(
        FIXTURES / "mlp.keras",
        tmp_path / "lacking.keras",
        lambda c: c["config"]["layers"][1].update(class_name="TorchModuleWrapper"),
    )
    with pytest.raises(
        LoadError, match="keras.layers.TorchModuleWrapper, which minikeras does not have"
    ):
        mk.models.load_model(lacking)
    quantized = _rewrite(
        FIXTURES / "mlp.keras",
        tmp_path / "quantized.keras",
        lambda c: c["config"]["layers"][1]["config"].update(quantization_config={"mode": "int8"}),
    )
    with pytest.raises(LoadError, match="Dense 'dense.*quantization_config"):
        mk.models.load_model(quantized)


def test_duplicate_json_keys_are_refused(tmp_path):
    with zipfile.ZipFile(FIXTURES / "mlp.keras") as archive:
        text = archive.read("config.json").decode()
    doubled = text.replace(
        '"class_name": "Sequential"', '"class_name": "Sequential", "class_name": "X"', 1
    )
    target = _rewrite(
        FIXTURES / "mlp.keras", tmp_path / "d.keras", members={"config.json": doubled.encode()}
    )
    with pytest.raises(LoadError, match="duplicate key 'class_name'"):
        mk.models.load_model(target)


def _npz_members(arrays):
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    return {"model.weights.h5": None, "model.weights.npz": buffer.getvalue()}


def test_npz_weights_are_read_when_plain_and_refused_when_they_hold_objects(tmp_path):
    reference = mk.models.load_model(FIXTURES / "mlp.keras")
    plain = {"layers/dense/vars/0": reference.layers[0].kernel.numpy(),
             "layers/dense/vars/1": reference.layers[0].bias.numpy(),
             "layers/dense_1/vars/0": reference.layers[1].kernel.numpy(),
             "layers/dense_1/vars/1": reference.layers[1].bias.numpy()}  # fmt: skip
    target = _rewrite(FIXTURES / "mlp.keras", tmp_path / "npz.keras", members=_npz_members(plain))
    loaded = mk.models.load_model(target)
    np.testing.assert_array_equal(loaded.layers[1].bias.numpy(), plain["layers/dense_1/vars/1"])
    hostile = dict(plain, **{"layers/dense/vars/1": np.array([object()] * 16, dtype=object)})
    target = _rewrite(FIXTURES / "mlp.keras", tmp_path / "obj.keras", members=_npz_members(hostile))
    with pytest.raises(LoadError, match="holds objects, refused"):
        mk.models.load_model(target)


def test_a_weight_of_the_wrong_shape_is_refused_naming_it(tmp_path):
    import h5py

    with zipfile.ZipFile(FIXTURES / "mlp.keras") as archive:
        original = archive.read("model.weights.h5")
    buffer = io.BytesIO(original)
    with h5py.File(buffer, "r+") as file:
        kernel = file["layers/dense_1/vars/0"][()]
        del file["layers/dense_1/vars/0"]
        file["layers/dense_1/vars/0"] = kernel.reshape(kernel.shape[::-1])
    target = _rewrite(FIXTURES / "mlp.keras", tmp_path / "bad.keras",
                      members={"model.weights.h5": buffer.getvalue()})  # fmt: skip
    with pytest.raises(LoadError, match=r"layers/dense_1/vars/0.*shape \(3, 16\).*needs \(16, 3\)"):
        mk.models.load_model(target)


def test_keras_weights_h5_load_into_a_model_built_by_code(tmp_path):
    with zipfile.ZipFile(FIXTURES / "mlp.keras") as archive:
        (tmp_path / "mlp.weights.h5").write_bytes(archive.read("model.weights.h5"))
    model = mk.Sequential(
        [mk.Input((8,)), mk.layers.Dense(16, activation="relu"),
         mk.layers.Dense(3, activation="softmax")]
    )  # fmt: skip
    model.load_weights(tmp_path / "mlp.weights.h5")
    inputs, expected = _inputs("mlp")
    np.testing.assert_allclose(model.predict(inputs, verbose=0), expected, rtol=1e-5, atol=1e-6)


# --------------------------------------------------------- minikeras -> Keras 3


def _trained_mlp():
    mk.utils.set_random_seed(0)
    model = mk.Sequential(
        [mk.Input((6,)), mk.layers.Dense(8, activation="relu"), mk.layers.Dense(3)], name="mlp"
    )
    loss = mk.losses.SparseCategoricalCrossentropy(from_logits=True)
    model.compile(mk.optimizers.Adam(0.01), loss, metrics=["accuracy"])
    x = np.random.default_rng(0).standard_normal((16, 6)).astype("float32")
    model.fit(x, np.arange(16) % 3, epochs=1, batch_size=8, verbose=0)
    return model, x


def test_minikeras_writes_keras_files_layout(tmp_path):
    model, _ = _trained_mlp()
    model.save(tmp_path / "m.keras")
    with zipfile.ZipFile(tmp_path / "m.keras") as archive:
        names = set(archive.namelist())
        config = json.loads(archive.read("config.json"))
        import h5py

        weights = h5py.File(io.BytesIO(archive.read("model.weights.h5")), "r")
        paths = []
        weights.visititems(lambda name, node: paths.append(name))
    assert {"metadata.json", "config.json", "model.weights.h5"} <= names
    assert (config["module"], config["class_name"]) == ("keras", "Sequential")
    dense = config["config"]["layers"][1]
    assert (dense["module"], dense["class_name"], dense["registered_name"]) == (
        "keras.layers", "Dense", None)  # fmt: skip
    assert config["compile_config"]["optimizer"]["class_name"] == "Adam"
    assert {"layers/dense/vars/0", "layers/dense_1/vars/1", "optimizer/vars/0"} <= set(paths)
    np.testing.assert_array_equal(
        weights["layers/dense_1/vars/0"][()], model.layers[1].kernel.numpy()
    )
    assert int(weights["optimizer/vars/0"][()]) == 2


def test_a_minikeras_keras_file_resumes_bit_exactly(tmp_path):
    model, x = _trained_mlp()
    model.save(tmp_path / "m.keras")
    restored = mk.models.load_model(tmp_path / "m.keras")
    for each in (model, restored):
        mk.utils.set_random_seed(5)
        each.fit(x, np.arange(16) % 3, epochs=1, batch_size=8, verbose=0)
    for a, b in zip(model.get_weights(), restored.get_weights()):
        np.testing.assert_array_equal(a, b)


def test_weights_h5_round_trip(tmp_path):
    model, x = _trained_mlp()
    model.save_weights(tmp_path / "w.weights.h5")
    copy = mk.Sequential(
        [mk.Input((6,)), mk.layers.Dense(8, activation="relu"), mk.layers.Dense(3)]
    )
    copy.load_weights(tmp_path / "w.weights.h5")
    np.testing.assert_array_equal(copy.predict(x, verbose=0), model.predict(x, verbose=0))


def _keras():
    os.environ.setdefault("KERAS_BACKEND", "jax")
    return pytest.importorskip("keras")


def _models():
    """The fixture kinds, built in minikeras: (name, model, inputs, labels)."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((16, 6)).astype("float32")
    a, b = mk.Input((4,), name="a"), mk.Input((3,), name="b")
    merged = mk.layers.concatenate([mk.layers.Dense(5, activation="tanh")(a), b])
    return {
        "mlp": (mk.Sequential([mk.Input((6,)), mk.layers.Dense(8, activation="relu"),
                               mk.layers.Dense(3)]), x),
        "cnn": (mk.Sequential([mk.Input((8, 8, 1)), mk.layers.Conv2D(4, 3, activation="relu"),
                               mk.layers.MaxPooling2D(), mk.layers.Flatten(), mk.layers.Dense(3)]),
                rng.standard_normal((16, 8, 8, 1)).astype("float32")),
        "embedding_lstm": (mk.Sequential([mk.Input((None,), dtype="int32"),
                                          mk.layers.Embedding(20, 6, mask_zero=True),
                                          mk.layers.LSTM(5), mk.layers.Dense(3)]),
                           np.array([[3, 7, 1, 0, 0], [5, 2, 9, 4, 8]] * 8)),
        "batchnorm_dropout": (mk.Sequential([mk.Input((6,)), mk.layers.Dense(8),
                                             mk.layers.BatchNormalization(),
                                             mk.layers.Activation("relu"), mk.layers.Dropout(0.3),
                                             mk.layers.Dense(3)]), x),
        "two_inputs": (mk.Model([a, b], mk.layers.Dense(3)(merged)),
                       [rng.standard_normal((16, 4)).astype("float32"),
                        rng.standard_normal((16, 3)).astype("float32")]),
        "custom_layer": (mk.Sequential([mk.Input((6,)), Scale(1.5, name="scale"),
                                        mk.layers.Dense(3)]), x),
        "branches": (_branches(), [rng.standard_normal((16, 4)).astype("float32"),
                                   rng.standard_normal((16, 4)).astype("float32")]),
    }  # fmt: skip


def _branches():
    """Two branches, the shorter built first: Keras lists the deeper one's first layer first."""
    c, d = mk.Input((4,), name="c"), mk.Input((4,), name="d")
    short = mk.layers.Dense(5, name="short")(c)
    deep = mk.layers.Dense(5, name="deep2")(mk.layers.Dense(5, name="deep1")(d))
    return mk.Model(
        [c, d], mk.layers.Dense(3, name="head")(mk.layers.Add(name="add")([short, deep]))
    )


def _keras_scale(keras):
    @keras.saving.register_keras_serializable(package="fixtures")
    class Scale(keras.layers.Layer):
        def __init__(self, initial=2.0, **kwargs):
            super().__init__(**kwargs)
            self.initial = initial

        def build(self, input_shape):
            self.scale = self.add_weight(shape=(input_shape[-1],), initializer="ones", name="scale")

        def call(self, inputs):
            return inputs * self.scale

        def get_config(self):
            return {**super().get_config(), "initial": self.initial}

    return Scale


@pytest.mark.parametrize("name", sorted(_models()))
def test_keras_loads_minikeras_files_and_continues_training(tmp_path, name):
    keras = _keras()
    _keras_scale(keras)
    mk.utils.set_random_seed(0)
    model, x = _models()[name]
    loss = mk.losses.SparseCategoricalCrossentropy(from_logits=True)
    model.compile(mk.optimizers.Adam(0.01), loss, metrics=["accuracy"])
    y = np.arange(16) % 3
    model.fit(x, y, epochs=1, batch_size=8, verbose=0)
    model.save(tmp_path / "m.keras")
    loaded = keras.saving.load_model(tmp_path / "m.keras")
    expected = model.predict(x, verbose=0)
    np.testing.assert_allclose(
        np.asarray(loaded.predict(x, verbose=0)), expected, rtol=1e-5, atol=1e-6
    )
    assert int(loaded.optimizer.iterations) == 2
    from minikeras.saving.keras_layout import optimizer_variables
    from minikeras.saving.keras_order import trainable_order

    order = trainable_order(model, model.optimizer._trainable_variables)
    ours = [np.asarray(v.numpy()) for v in optimizer_variables(model.optimizer, order)]
    theirs = [np.asarray(v) for v in loaded.optimizer.variables]
    assert len(ours) == len(theirs)
    for a, b in zip(theirs, ours):
        np.testing.assert_allclose(a, b, rtol=1e-6)
    # One more step each, on the same batch: the same weights (float32 tolerance).
    first = [item[:8] for item in x] if isinstance(x, list) else x[:8]
    if name != "batchnorm_dropout":  # dropout draws differ between frameworks
        loaded.train_on_batch(first, y[:8])
        model.train_on_batch(first, y[:8])
    layers = model.layers  # (in Keras's order, as the weights)
    ours = [w.numpy() for layer in layers for w in layer.weights]
    for a, b in zip(loaded.get_weights(), ours, strict=True):
        np.testing.assert_allclose(np.asarray(a), b, rtol=1e-4, atol=1e-6)


def test_keras_files_saved_now_load_in_minikeras(tmp_path):
    keras = _keras()
    a, b = keras.Input((4,), name="a"), keras.Input((3,), name="b")
    merged = keras.layers.concatenate([keras.layers.Dense(5, activation="tanh")(a), b])
    model = keras.Model([a, b], keras.layers.Dense(2)(merged))
    model.save(tmp_path / "k.keras")
    data = [np.ones((2, 4), "float32"), np.ones((2, 3), "float32")]
    ours = mk.models.load_model(tmp_path / "k.keras")
    expected = np.asarray(model.predict(data, verbose=0))
    np.testing.assert_allclose(ours.predict(data, verbose=0), expected, rtol=1e-5, atol=1e-6)


def test_a_weights_bomb_is_refused_before_it_is_inflated(tmp_path):
    import tracemalloc

    target = tmp_path / "bomb.keras"
    with zipfile.ZipFile(FIXTURES / "mlp.keras") as source:
        contents = {n: source.read(n) for n in source.namelist() if n != "model.weights.h5"}
    with zipfile.ZipFile(target, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, data in contents.items():
            archive.writestr(name, data)
        with archive.open("model.weights.h5", "w", force_zip64=True) as stream:
            block = bytes(2**20)
            for _ in range(64):  # 64 MB of zeros: a few hundred kB in the file
                stream.write(block)
    assert target.stat().st_size < 2**20
    tracemalloc.start()
    try:
        with pytest.raises(LoadError, match="model.weights.h5 (claims|inflates)"):
            mk.models.load_model(target)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 16 * 2**20


def test_keras_reads_minikeras_weights_h5(tmp_path):
    keras = _keras()
    model, x = _trained_mlp()
    model.save_weights(tmp_path / "w.weights.h5")
    twin = keras.Sequential(
        [keras.Input((6,)), keras.layers.Dense(8, activation="relu"), keras.layers.Dense(3)]
    )
    twin.load_weights(tmp_path / "w.weights.h5")
    expected = model.predict(x, verbose=0)
    np.testing.assert_allclose(
        np.asarray(twin.predict(x, verbose=0)), expected, rtol=1e-5, atol=1e-6
    )


def test_a_registered_subclassed_keras_model_loads_in_minikeras(tmp_path):
    keras = _keras()

    @keras.saving.register_keras_serializable(package="interop")
    class TwoLayers(keras.Model):
        def __init__(self, units=4, **kwargs):
            super().__init__(**kwargs)
            self.units = units
            self.hidden = keras.layers.Dense(units, activation="relu")
            self.head = keras.layers.Dense(2)

        def call(self, inputs):
            return self.head(self.hidden(inputs))

        def get_config(self):
            return {**super().get_config(), "units": self.units}

    @mk.saving.register_keras_serializable(package="interop", name="TwoLayers")
    class OurTwoLayers(mk.Model):
        def __init__(self, units=4, **kwargs):
            super().__init__(**kwargs)
            self.units = units
            self.hidden = mk.layers.Dense(units, activation="relu")
            self.head = mk.layers.Dense(2)

        def call(self, inputs):
            return self.head(self.hidden(inputs))

        def get_config(self):
            return {**super().get_config(), "units": self.units}

    theirs = TwoLayers(units=5)
    x = np.random.default_rng(0).standard_normal((3, 6)).astype("float32")
    expected = np.asarray(theirs.predict(x, verbose=0))
    theirs.save(tmp_path / "sub.keras")
    ours = mk.models.load_model(tmp_path / "sub.keras")
    assert isinstance(ours, OurTwoLayers) and ours.units == 5
    np.testing.assert_allclose(ours.predict(x, verbose=0), expected, rtol=1e-5, atol=1e-6)


def _gain_class(api):
    """An unregistered custom layer `Gain`, written alike for Keras and minikeras."""

    class Gain(api.layers.Layer):
        def __init__(self, initial=2.0, **kwargs):
            super().__init__(**kwargs)
            self.initial = initial

        def build(self, input_shape):
            self.gain = self.add_weight(shape=(input_shape[-1],), initializer="ones", name="gain")

        def call(self, inputs):
            return inputs * self.gain * self.initial

        def get_config(self):
            return {**super().get_config(), "initial": self.initial}

    return Gain


@pytest.mark.parametrize("direction", ["keras to minikeras", "minikeras to keras"])
def test_an_unregistered_custom_layer_crosses_with_custom_objects(tmp_path, direction):
    keras = _keras()
    theirs_class, ours_class = _gain_class(keras), _gain_class(mk)
    source, target = (keras, mk) if direction == "keras to minikeras" else (mk, keras)
    layer_class = theirs_class if source is keras else ours_class
    inputs = source.Input((3,))
    model = source.Model(inputs, layer_class(3.0, name="gain")(inputs))
    model.layers[-1].gain.assign(np.array([1.0, -2.0, 0.5], "float32"))
    model.save(tmp_path / "gain.keras")  # neither refuses: named by its class's name
    wanted = ours_class if target is mk else theirs_class
    loaded = target.models.load_model(tmp_path / "gain.keras", custom_objects={"Gain": wanted})
    assert type(loaded.get_layer("gain")) is wanted and loaded.get_layer("gain").initial == 3.0
    x = np.ones((2, 3), "float32")
    np.testing.assert_allclose(
        np.asarray(loaded.predict(x, verbose=0)), [[3.0, -6.0, 1.5]] * 2, rtol=1e-6
    )


@mk.saving.register_keras_serializable(package="interop")
class Vocabulary(mk.layers.Layer):
    """Keeps a lookup table that is not a variable, saved through the layer's own hooks."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.table = np.zeros(3, "float32")

    def call(self, inputs):
        return inputs + self.table

    def save_own_variables(self, store):
        store["table"] = self.table

    def load_own_variables(self, store):
        self.table = np.asarray(store["table"], "float32")


def test_a_layer_saves_and_loads_its_own_state_through_the_hooks(tmp_path):
    model = mk.Sequential([mk.Input((3,)), Vocabulary(name="vocabulary")])
    model.layers[0].table = np.array([1.0, 2.0, 3.0], "float32")
    model.save(tmp_path / "m.keras")
    loaded = mk.models.load_model(tmp_path / "m.keras")
    np.testing.assert_array_equal(loaded.layers[0].table, [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(loaded(np.zeros((1, 3), "float32")).numpy(), [[1.0, 2.0, 3.0]])
    model.save_weights(tmp_path / "w.weights.h5")
    twin = mk.Sequential([mk.Input((3,)), Vocabulary()])
    twin.load_weights(tmp_path / "w.weights.h5")
    np.testing.assert_array_equal(twin.layers[0].table, [1.0, 2.0, 3.0])


def test_a_keras_file_compiled_but_never_trained_loads_with_fresh_slots(tmp_path):
    # Keras writes only the iterations and the learning rate before the first step.
    import h5py

    with zipfile.ZipFile(FIXTURES / "batchnorm_adam.keras") as archive:
        buffer = io.BytesIO(archive.read("model.weights.h5"))
    with h5py.File(buffer, "r+") as file:
        group = file["optimizer/vars"]
        for name in [name for name in group if int(name) >= 2]:
            del group[name]
        group["0"][()] = 0
    target = _rewrite(FIXTURES / "batchnorm_adam.keras", tmp_path / "untrained.keras",
                      members={"model.weights.h5": buffer.getvalue()})  # fmt: skip
    model = mk.models.load_model(target, safe_mode=True)
    assert int(model.optimizer.iterations.numpy()) == 0
    assert all(not v.numpy().any() for v in model.optimizer.variables[2:])


def test_a_learning_rate_schedule_is_no_optimizer_variable_in_the_keras_layout(tmp_path):
    import h5py

    model = mk.Sequential([mk.Input((3,)), mk.layers.Dense(2)])
    schedule = mk.optimizers.schedules.ExponentialDecay(0.1, decay_steps=10, decay_rate=0.5)
    model.compile(mk.optimizers.Adam(schedule), "mse")
    model.fit(np.ones((4, 3)), np.ones((4, 2)), verbose=0)
    path = tmp_path / "scheduled.keras"
    model.save(path)
    with zipfile.ZipFile(path) as archive:
        weights = io.BytesIO(archive.read("model.weights.h5"))
    with h5py.File(weights, "r") as file:
        count = len(file["optimizer/vars"])
    assert count == 1 + 2 * len(model.trainable_weights)  # iterations, then m and v
    again = mk.models.load_model(path)
    assert int(again.optimizer.iterations.numpy()) == 1


def test_optimizer_slots_are_written_in_kerass_order_of_the_layers(tmp_path):
    # Keras lists a functional model's layers by depth from the outputs, the deepest
    # first: deep1 (three layers from the output), then short and deep2 (two), then
    # head. The slots follow that order, not the order the layers were built in.
    import h5py

    model = _branches()
    called = [layer for layer in model.layers if not isinstance(layer, mk.layers.InputLayer)]
    assert [layer.name for layer in called] == [
        "deep1", "short", "deep2", "add", "head",
    ]  # fmt: skip
    model.compile(mk.optimizers.Adam(0.01), "mse")
    rng = np.random.default_rng(1)
    x = [rng.standard_normal((8, 4)).astype("float32") for _ in range(2)]
    model.fit(x, rng.standard_normal((8, 3)).astype("float32"), verbose=0)
    model.save(tmp_path / "branches.keras")
    with zipfile.ZipFile(tmp_path / "branches.keras") as archive:
        weights = io.BytesIO(archive.read("model.weights.h5"))
    with h5py.File(weights, "r") as file:
        first_slot = file["optimizer/vars/2"][()]  # (after iterations and the learning rate)
    momentum = next(v for v in model.optimizer.variables if v.name == "deep1_kernel_momentum")
    np.testing.assert_array_equal(first_slot, momentum.numpy())


@pytest.mark.parametrize("suffix", [".minikeras", ".keras"])
def test_dict_inputs_and_outputs_come_back_as_dicts(tmp_path, suffix):
    a, b = mk.Input((4,), name="a"), mk.Input((2,), name="b")
    joined = mk.layers.Concatenate()([a, b])
    model = mk.Model(
        {"a": a, "b": b},
        {"reg": mk.layers.Dense(2, name="reg")(joined), "cls": mk.layers.Dense(1, name="cls")(a)},
    )
    x = {"a": np.ones((3, 4), "float32"), "b": np.full((3, 2), 0.5, "float32")}
    model.save(tmp_path / f"dicts{suffix}")
    again = mk.models.load_model(tmp_path / f"dicts{suffix}")
    want, got = model.predict(x, verbose=0), again.predict(x, verbose=0)
    assert isinstance(got, dict) and got.keys() == want.keys()
    for key in want:
        np.testing.assert_array_equal(got[key], want[key])


def test_an_optimizer_whose_keras_layout_is_unknown_is_a_load_error(tmp_path):
    keras = _keras()
    inputs = keras.Input((3,))
    model = keras.Model(inputs, keras.layers.Dense(2)(inputs))
    model.compile(keras.optimizers.Nadam(), "mse")
    model.fit(np.ones((4, 3)), np.ones((4, 2)), verbose=0)
    model.save(tmp_path / "nadam.keras")
    with pytest.raises(LoadError, match=r"Nadam.*compile=False"):
        mk.models.load_model(tmp_path / "nadam.keras")
    assert mk.models.load_model(tmp_path / "nadam.keras", compile=False).layers


def test_keras_loads_a_learning_rate_schedule_and_trains_on_alike(tmp_path):
    keras = _keras()
    model = mk.Sequential([mk.Input((3,)), mk.layers.Dense(2)])
    schedule = mk.optimizers.schedules.ExponentialDecay(0.1, decay_steps=2, decay_rate=0.5)
    model.compile(mk.optimizers.Adam(schedule), "mse")
    x, y = np.linspace(0, 1, 12, dtype="float32").reshape(4, 3), np.ones((4, 2), "float32")
    model.fit(x, y, verbose=0)
    model.save(tmp_path / "scheduled.keras")
    loaded = keras.saving.load_model(tmp_path / "scheduled.keras")
    assert int(loaded.optimizer.iterations) == 1
    loaded.train_on_batch(x, y)
    model.train_on_batch(x, y)
    np.testing.assert_allclose(
        np.asarray(loaded.predict(x, verbose=0)), model.predict(x, verbose=0), rtol=1e-4, atol=1e-5
    )  # (Keras's Adam computes its step size in float32)


def test_an_optimizer_keras_on_torch_wrote_from_its_backend_module_loads(tmp_path):
    # Keras on the torch backend writes `keras.src.backend.torch.optimizers.torch_adam`
    # as the module of its Adam: the same optimizer, whose state loads as usual.
    def as_torch_wrote(config):
        config["compile_config"]["optimizer"]["module"] = (
            "keras.src.backend.torch.optimizers.torch_adam"
        )

    target = _rewrite(FIXTURES / "batchnorm_adam.keras", tmp_path / "t.keras", as_torch_wrote)
    model = mk.models.load_model(target)
    assert isinstance(model.optimizer, mk.optimizers.Adam)
    assert int(model.optimizer.iterations.numpy()) == 4
    reference = mk.models.load_model(FIXTURES / "batchnorm_adam.keras")
    for ours, theirs in zip(model.optimizer.variables, reference.optimizer.variables):
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


@pytest.mark.parametrize("name", ["mlp", "cnn"])
def test_load_weights_reads_the_weights_of_a_keras_model_file(name):
    path = FIXTURES / f"{name}.keras"
    loaded = mk.saving.load_model(path, compile=False)
    twin = type(loaded).from_config(loaded.get_config())  # same layers, fresh weights
    assert not all(np.array_equal(a, b) for a, b in zip(twin.get_weights(), loaded.get_weights()))
    twin.load_weights(path)  # Keras's model.load_weights("model.keras")
    for mine, keras_weight in zip(twin.get_weights(), loaded.get_weights()):
        np.testing.assert_array_equal(mine, keras_weight)
    inputs, predictions = _inputs(name)
    np.testing.assert_allclose(twin.predict(inputs, verbose=0), predictions, rtol=1e-5, atol=1e-6)


def test_load_weights_of_a_keras_file_that_does_not_fit_changes_nothing(tmp_path):
    model = mk.Sequential([mk.Input((3,)), mk.layers.Dense(2)])
    model.save(tmp_path / "m.keras")
    other = mk.Sequential([mk.Input((4,)), mk.layers.Dense(2)])
    before = other.get_weights()
    with pytest.raises(LoadError, match=r"shape \(3, 2\).*needs \(4, 2\)"):
        other.load_weights(tmp_path / "m.keras")
    assert all(np.array_equal(a, b) for a, b in zip(before, other.get_weights()))


def _three_to_two_to_four(api, inputs=3):
    return api.Sequential(
        [api.Input((inputs,)), api.layers.Dense(2, name="a"), api.layers.Dense(4, name="b")]
    )


@pytest.mark.parametrize("suffix", ["keras", "weights.h5"])
def test_skip_mismatch_leaves_out_a_keras_files_layer_whole(tmp_path, suffix):
    model = _three_to_two_to_four(mk)
    randomize = np.random.default_rng(0)
    model.set_weights([randomize.standard_normal(w.shape) for w in model.get_weights()])
    path = tmp_path / f"m.{suffix}"
    model.save(path) if suffix == "keras" else model.save_weights(path)
    other = _three_to_two_to_four(mk, inputs=5)  # layer a's kernel no longer fits
    before = other.get_weights()
    with pytest.raises(LoadError, match="layers/dense/vars/0"):
        other.load_weights(path)
    with pytest.warns(UserWarning, match=r"1 entry .* skipped \(skip_mismatch=True\)"):
        other.load_weights(path, skip_mismatch=True)
    after, saved = other.get_weights(), model.get_weights()
    np.testing.assert_array_equal(after[0], before[0])  # a: kernel and bias both left out,
    np.testing.assert_array_equal(after[1], before[1])  # as Keras leaves the layer out whole
    np.testing.assert_array_equal(after[2], saved[2])  # b: loaded
    np.testing.assert_array_equal(after[3], saved[3])


def test_skip_mismatch_leaves_out_what_keras_leaves_out(tmp_path):
    keras = pytest.importorskip("keras")
    theirs = _three_to_two_to_four(keras)
    randomize = np.random.default_rng(1)
    theirs.set_weights([randomize.standard_normal(w.shape) for w in theirs.get_weights()])
    theirs.save_weights(tmp_path / "k.weights.h5")
    keras_twin, ours = _three_to_two_to_four(keras, inputs=5), _three_to_two_to_four(mk, inputs=5)
    keras_before, ours_before = keras_twin.get_weights(), ours.get_weights()
    keras_twin.load_weights(tmp_path / "k.weights.h5", skip_mismatch=True)
    with pytest.warns(UserWarning, match="skipped"):
        ours.load_weights(tmp_path / "k.weights.h5", skip_mismatch=True)
    keras_kept = [np.array_equal(a, b) for a, b in zip(keras_twin.get_weights(), keras_before)]
    ours_kept = [np.array_equal(a, b) for a, b in zip(ours.get_weights(), ours_before)]
    assert ours_kept == keras_kept == [True, True, False, False]
    for mine, file_weight in zip(ours.get_weights()[2:], theirs.get_weights()[2:]):
        np.testing.assert_array_equal(mine, file_weight)


def doubled_relu(x):  # (module level and written with operators: the same for both APIs)
    return x + abs(x)


def halve(x):
    return x * 0.5


def gap(y_true, y_pred):
    return abs(y_true - y_pred)


def _doubled_relu(api):
    class Biggest(api.metrics.Mean):
        def update_state(self, y_true, y_pred, sample_weight=None):
            return super().update_state(api.ops.max(y_pred), sample_weight)

    return {"doubled_relu": doubled_relu, "halve": halve, "gap": gap, "Biggest": Biggest}


@pytest.mark.parametrize("direction", ["keras to minikeras", "minikeras to keras"])
def test_unregistered_functions_and_compile_objects_cross_with_custom_objects(tmp_path, direction):
    keras = _keras()
    source, target = (keras, mk) if direction == "keras to minikeras" else (mk, keras)
    made = _doubled_relu(source)
    inputs = source.Input((3,))
    hidden = source.layers.Dense(2, activation=made["doubled_relu"], name="d")(inputs)
    model = source.Model(inputs, source.layers.Lambda(made["halve"], name="half")(hidden))
    model.compile("adam", made["gap"], metrics=[made["Biggest"]()])
    x = np.random.default_rng(0).standard_normal((4, 3)).astype("float32")
    y = np.zeros((4, 2), "float32")
    model.fit(x, y, epochs=1, verbose=0)
    model.save(tmp_path / "model.keras")
    wanted = _doubled_relu(target)
    loaded = target.models.load_model(tmp_path / "model.keras", custom_objects=wanted)
    assert loaded.get_layer("d").activation is doubled_relu
    assert loaded.get_layer("half").function is halve
    np.testing.assert_allclose(
        np.asarray(loaded.predict(x, verbose=0)), np.asarray(model.predict(x, verbose=0)),
        rtol=1e-5, atol=1e-6,
    )  # fmt: skip
    ours, theirs = loaded.evaluate(x, y, verbose=0), model.evaluate(x, y, verbose=0)
    assert len(ours) == len(theirs) == 2  # (the loss and the Biggest metric)
    np.testing.assert_allclose(ours, theirs, rtol=1e-5)
