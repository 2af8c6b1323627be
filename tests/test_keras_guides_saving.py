"""Keras 3's saving guide (keras-io `guides/keras_core/serialization_and_saving.py`) run on
minikeras with the fewest edits: files in a temporary directory, data cut small.

Each test asserts what the guide asserts: a reloaded model predicts the same, configs
rebuild their objects, weights transfer between compatible models.
"""

import os
import zipfile

import numpy as np
import pytest

import minikeras as keras
from minikeras import ops


@keras.saving.register_keras_serializable(package="GuideLayers")
class CustomLayer(keras.layers.Layer):
    def __init__(self, factor):
        super().__init__()
        self.factor = factor

    def call(self, x):
        return x * self.factor

    def get_config(self):
        return {"factor": self.factor}


@keras.saving.register_keras_serializable(package="guide_package", name="custom_fn")
def custom_fn(x):
    return x**2


@keras.saving.register_keras_serializable(package="GuideLayers", name="KernelMult")
class MyDense(keras.layers.Layer):
    def __init__(
        self, units, *, kernel_regularizer=None, kernel_initializer=None, nested_model=None,
        **kwargs,
    ):  # fmt: skip
        super().__init__(**kwargs)
        self.hidden_units = units
        self.kernel_regularizer = kernel_regularizer
        self.kernel_initializer = kernel_initializer
        self.nested_model = nested_model

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "units": self.hidden_units,
                "kernel_regularizer": self.kernel_regularizer,
                "kernel_initializer": self.kernel_initializer,
                "nested_model": self.nested_model,
            }
        )
        return config

    def build(self, input_shape):
        self.kernel = self.add_weight(
            name="kernel",
            shape=(input_shape[-1], self.hidden_units),
            regularizer=self.kernel_regularizer,
            initializer=self.kernel_initializer,
        )

    def call(self, inputs):
        return ops.matmul(inputs, self.kernel)


@keras.saving.register_keras_serializable(package="GuideComplexModels")
class CustomModel(keras.layers.Layer):
    def __init__(self, first_layer, second_layer=None, **kwargs):
        super().__init__(**kwargs)
        self.first_layer = first_layer
        if second_layer is not None:
            self.second_layer = second_layer
        else:
            self.second_layer = keras.layers.Dense(8)

    def get_config(self):
        config = super().get_config()
        config.update({"first_layer": self.first_layer, "second_layer": self.second_layer})
        return config

    @classmethod
    def from_config(cls, config):
        config["first_layer"] = keras.layers.deserialize(config["first_layer"])
        config["second_layer"] = keras.layers.deserialize(config["second_layer"])
        return cls(**config)

    def call(self, inputs):
        return self.first_layer(self.second_layer(inputs))


def _custom_model():
    inputs = keras.Input(shape=(4,))
    mid = CustomLayer(0.5)(inputs)
    outputs = keras.layers.Dense(1, activation=custom_fn)(mid)
    model = keras.Model(inputs, outputs)
    model.compile(optimizer="rmsprop", loss="mean_squared_error")
    rng = np.random.default_rng(0)
    model.fit(rng.random((4, 4)), rng.random((4, 1)), verbose=0)
    return model


def test_saving_guide_whole_model_and_custom_objects(tmp_path):
    inputs = keras.Input(shape=(32,))
    model = keras.Model(inputs, keras.layers.Dense(1)(inputs))
    model.compile(optimizer=keras.optimizers.Adam(), loss="mean_squared_error")
    rng = np.random.default_rng(1)
    test_input = rng.random((16, 32))
    model.fit(test_input, rng.random((16, 1)), verbose=0)
    model.save(tmp_path / "my_model.keras")
    reconstructed_model = keras.models.load_model(tmp_path / "my_model.keras")
    np.testing.assert_allclose(
        model.predict(test_input, verbose=0), reconstructed_model.predict(test_input, verbose=0)
    )

    test_input = rng.random((4, 4))
    custom_objects = {"CustomLayer": CustomLayer, "custom_fn": custom_fn}
    for load in (
        lambda path: keras.models.load_model(path),
        lambda path: keras.models.load_model(path, custom_objects=custom_objects),
    ):
        model = _custom_model()
        model.save(tmp_path / "custom_model.keras")
        np.testing.assert_allclose(
            model.predict(test_input, verbose=0),
            load(tmp_path / "custom_model.keras").predict(test_input, verbose=0),
        )
    with keras.saving.custom_object_scope(custom_objects):
        reconstructed_model = keras.models.load_model(tmp_path / "custom_model.keras")
    np.testing.assert_allclose(
        model.predict(test_input, verbose=0), reconstructed_model.predict(test_input, verbose=0)
    )


def test_saving_guide_configs_json_and_objects():
    model = _custom_model()
    assert keras.models.clone_model(model).output_shape == (None, 1)
    layer_config = keras.layers.Dense(3, activation="relu").get_config()
    assert keras.layers.Dense.from_config(layer_config).units == 3
    model = keras.Sequential([keras.Input((32,)), keras.layers.Dense(1)])
    assert keras.Sequential.from_config(model.get_config()).output_shape == (None, 1)
    assert keras.models.model_from_json(model.to_json()).output_shape == (None, 1)
    inputs = keras.Input((32,))
    model = keras.Model(inputs, keras.layers.Dense(1)(inputs))
    assert keras.Model.from_config(model.get_config()).output_shape == (None, 1)

    config = keras.saving.serialize_keras_object(keras.regularizers.L1(0.005))
    assert (config["module"], config["class_name"]) == ("keras.regularizers", "L1")
    new_reg = keras.saving.deserialize_keras_object(config)
    assert isinstance(new_reg, keras.regularizers.L1)
    np.testing.assert_allclose(new_reg.l1, 0.005)


def test_saving_guide_in_memory_weight_transfer(tmp_path):
    def mlp(dropout=False):
        inputs = keras.Input(shape=(784,), name="digits")
        x = keras.layers.Dense(64, activation="relu", name="dense_1")(inputs)
        x = keras.layers.Dense(64, activation="relu", name="dense_2")(x)
        if dropout:
            x = keras.layers.Dropout(0.5)(x)
        outputs = keras.layers.Dense(10, name="predictions")(x)
        return keras.Model(inputs=inputs, outputs=outputs, name="3_layer_mlp")

    class SubclassedModel(keras.Model):
        def __init__(self, output_dim, name=None):
            super().__init__(name=name)
            self.output_dim = output_dim
            self.dense_1 = keras.layers.Dense(64, activation="relu", name="dense_1")
            self.dense_2 = keras.layers.Dense(64, activation="relu", name="dense_2")
            self.dense_3 = keras.layers.Dense(output_dim, name="predictions")

        def call(self, inputs):
            return self.dense_3(self.dense_2(self.dense_1(inputs)))

    functional_model = mlp()
    subclassed_model = SubclassedModel(10)
    subclassed_model(np.ones((1, 784)))
    subclassed_model.set_weights(functional_model.get_weights())
    assert len(functional_model.weights) == len(subclassed_model.weights)
    for a, b in zip(functional_model.weights, subclassed_model.weights):
        np.testing.assert_allclose(a.numpy(), b.numpy())
    with_dropout = mlp(dropout=True)
    with_dropout.set_weights(functional_model.get_weights())
    x = np.random.default_rng(2).random((2, 784)).astype("float32")
    np.testing.assert_allclose(with_dropout(x).numpy(), functional_model(x).numpy(), rtol=1e-6)

    class NestedDenseLayer(keras.layers.Layer):
        def __init__(self, units, name=None):
            super().__init__(name=name)
            self.dense_1 = keras.layers.Dense(units, name="dense_1")
            self.dense_2 = keras.layers.Dense(units, name="dense_2")

        def call(self, inputs):
            return self.dense_2(self.dense_1(inputs))

    nested_model = keras.Sequential([keras.Input((784,)), NestedDenseLayer(10, "nested")])
    names = [v.name for v in nested_model.weights]
    nested_model.get_layer("nested").dense_1.trainable = False
    assert [v.name for v in nested_model.weights] == names == ["kernel", "bias"] * 2

    mlp().save_weights(tmp_path / "pretrained.weights.h5")
    pretrained_model = mlp()
    pretrained_model.load_weights(tmp_path / "pretrained.weights.h5")
    extracted_layers = pretrained_model.layers[:-1]
    extracted_layers.append(keras.layers.Dense(5, name="dense_3"))
    model = keras.Sequential(extracted_layers)
    assert model(np.ones((1, 784))).shape == (1, 5)
    assert [layer.name for layer in model.layers] == ["dense_1", "dense_2", "dense_3"]


def test_saving_guide_config_methods_with_nested_layers(tmp_path):
    layer = MyDense(units=16, kernel_regularizer="l1", kernel_initializer="ones")
    layer3 = MyDense(units=64, nested_model=layer)
    config = keras.layers.serialize(layer3)
    assert config["registered_name"] == "GuideLayers>KernelMult"
    assert config["config"]["nested_model"]["config"]["units"] == 16
    assert keras.layers.deserialize(config).hidden_units == 64

    # A config holding layers as they are: the model's config writes them as entries.
    inputs = keras.Input((32,))
    model = keras.Model(inputs, CustomModel(first_layer=layer)(inputs))
    entry = model.get_config()["layers"][-1]["config"]
    assert entry["first_layer"]["registered_name"] == "GuideLayers>KernelMult"
    assert entry["second_layer"]["class_name"] == "Dense"
    new_model = keras.Model.from_config(model.get_config())
    assert new_model.output_shape == (None, 16)
    model.save(tmp_path / "custom_model.keras")
    x = np.random.default_rng(3).random((2, 32)).astype("float32")
    reloaded = keras.models.load_model(tmp_path / "custom_model.keras")
    np.testing.assert_allclose(reloaded(x).numpy(), model(x).numpy(), rtol=1e-5)

    layer = MyDense(
        units=16,
        kernel_regularizer=keras.regularizers.L1L2(l1=1e-5, l2=1e-4),
        kernel_initializer="ones",
    )
    config = keras.layers.serialize(layer)
    assert config["class_name"] == "MyDense"
    assert config["config"]["kernel_regularizer"]["class_name"] == "L1L2"


def test_custom_entries_name_a_script_module_as_none():
    namespace = {"keras": keras, "__name__": "__main__"}
    exec(
        "class Twice(keras.layers.Layer):\n    def call(self, x):\n        return 2 * x\n",
        namespace,
    )
    entry = keras.saving.serialize_keras_object(namespace["Twice"]())
    assert entry["module"] is None and entry["class_name"] == "Twice"
    assert keras.saving.serialize_keras_object(CustomLayer(2.0))["module"] == __name__


def test_saving_guide_configs_match_keras():
    k = pytest.importorskip("keras")
    ours = keras.layers.serialize(MyDense(units=16, kernel_initializer="ones"))
    theirs = k.saving.serialize_keras_object(k.layers.Dense(16, kernel_initializer="ones"))
    assert set(ours) == set(theirs) - {"build_config"}
    ours = keras.saving.serialize_keras_object(keras.regularizers.L1(0.005))
    theirs = k.saving.serialize_keras_object(k.regularizers.L1(0.005))
    assert ours["module"] == theirs["module"] and ours["class_name"] == theirs["class_name"]


# --- customizing_saving_and_serialization (Keras's older guide, its Keras 3 parts) ---


@keras.saving.register_keras_serializable(package="guide_custom_package")
class LayerWithCustomVariables(keras.layers.Dense):
    def __init__(self, units, **kwargs):
        super().__init__(units, **kwargs)
        self.stored_variables = keras.Variable(
            np.random.default_rng(5).random((10,)), name="special_arr", dtype="float32",
            trainable=False,
        )  # fmt: skip

    def save_own_variables(self, store):
        super().save_own_variables(store)
        store["variables"] = self.stored_variables.numpy()

    def load_own_variables(self, store):
        self.stored_variables.assign(store["variables"])
        for i, v in enumerate(self.weights):
            v.assign(store[f"{i}"])

    def call(self, inputs):
        return super().call(inputs) * self.stored_variables


@keras.utils.register_keras_serializable(package="guide_custom_package")
class LayerWithCustomAssets(keras.layers.Dense):
    def __init__(self, vocab=None, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.vocab = vocab

    def save_assets(self, inner_path):
        with open(os.path.join(inner_path, "vocabulary.txt"), "w") as f:
            f.write(self.vocab)

    def load_assets(self, inner_path):
        with open(os.path.join(inner_path, "vocabulary.txt")) as f:
            text = f.read()
        self.vocab = text.replace("<unk>", "little")


def test_customizing_saving_guide_own_variables_and_assets(tmp_path):
    model = keras.Sequential([LayerWithCustomVariables(1)])
    model.compile(optimizer="adam", loss="mean_squared_error")
    rng = np.random.default_rng(6)
    model.fit(rng.random((8, 10)), rng.random((8, 10)), verbose=0)
    model.layers[0].stored_variables.assign(np.arange(10, dtype="float32"))
    model.save(tmp_path / "custom_vars_model.keras")
    restored_model = keras.models.load_model(tmp_path / "custom_vars_model.keras")
    np.testing.assert_allclose(
        model.layers[0].stored_variables.numpy(), restored_model.layers[0].stored_variables.numpy()
    )

    model = keras.Sequential([LayerWithCustomAssets(vocab="Mary had a <unk> lamb.", units=5)])
    model(rng.random((10, 10)))
    model.save(tmp_path / "custom_assets_model.keras")
    with zipfile.ZipFile(tmp_path / "custom_assets_model.keras") as archive:
        stored = archive.read("assets/layers/layer_with_custom_assets/vocabulary.txt")
    assert stored == b"Mary had a <unk> lamb."  # where Keras keeps a layer's assets
    restored_model = keras.models.load_model(tmp_path / "custom_assets_model.keras")
    np.testing.assert_string_equal(restored_model.layers[0].vocab, "Mary had a little lamb.")


def test_asset_members_that_leave_their_directory_are_refused(tmp_path):
    model = keras.Sequential([LayerWithCustomAssets(vocab="x", units=2)])
    model(np.ones((1, 3)))
    model.save(tmp_path / "m.keras")
    with zipfile.ZipFile(tmp_path / "m.keras") as source:
        members = {info.filename: source.read(info) for info in source.infolist()}
    members["assets/layers/layer_with_custom_assets/../../evil.txt"] = b"x"
    with zipfile.ZipFile(tmp_path / "bad.keras", "w") as target:
        for name, data in members.items():
            target.writestr(name, data)
    with pytest.raises(keras.saving.LoadError, match="leaves its layer's directory"):
        keras.models.load_model(tmp_path / "bad.keras")


_ASSET_LAYER = """
class Vocab(keras.layers.Layer):
    def __init__(self, vocab=None, **kwargs):
        super().__init__(**kwargs)
        self.vocab = vocab

    def call(self, x):
        return x

    def save_assets(self, inner_path):
        with open(os.path.join(inner_path, "vocabulary.txt"), "w") as f:
            f.write(self.vocab)

    def load_assets(self, inner_path):
        with open(os.path.join(inner_path, "vocabulary.txt")) as f:
            self.vocab = f.read()


Vocab = keras.saving.register_keras_serializable(package="assets_interop")(Vocab)
"""


def test_assets_round_trip_with_keras(tmp_path):
    k = pytest.importorskip("keras")
    ours, theirs = {"keras": keras, "os": os}, {"keras": k, "os": os}
    exec(_ASSET_LAYER, ours)
    exec(_ASSET_LAYER, theirs)
    model = keras.Sequential([keras.Input((3,)), ours["Vocab"](vocab="from minikeras")])
    model.save(tmp_path / "ours.keras")
    loaded = k.models.load_model(tmp_path / "ours.keras")
    assert loaded.layers[0].vocab == "from minikeras"
    model = k.Sequential([k.Input((3,)), theirs["Vocab"](vocab="from keras")])
    model.save(tmp_path / "theirs.keras")
    loaded = keras.models.load_model(tmp_path / "theirs.keras")
    assert loaded.layers[0].vocab == "from keras"
