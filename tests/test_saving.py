"""Saving: round trips of every layer and model kind, exact resume, partial loads,
checked loads that change nothing on error, atomic writes, and ModelCheckpoint."""

import inspect
import json
import os
import pickle
import sys
import time
import warnings
import zipfile

import numpy as np
import pytest

import minikeras as mk
from minikeras import Input, Model, Sequential, layers, ops
from minikeras.callbacks import ModelCheckpoint
from minikeras.layers import Dense, Dropout, Layer
from minikeras.models import load_model
from minikeras.saving import LoadError, archive, archive_writer, register_serializable

rng = np.random.default_rng(3)


def randomize(model):
    """Weights away from their initial values, so a round trip cannot pass by chance."""
    for weight in model.weights:
        weight.assign(rng.uniform(0.5, 1.5, weight.shape).astype(weight.dtype))


def weights_by_path(model):
    rows = model.tracking_report().rows  # in `weights` order
    return {row.path: weight.numpy() for row, weight in zip(rows, model.weights, strict=True)}


def assert_same_weights(model, other):
    mine, theirs = weights_by_path(model), weights_by_path(other)
    assert mine.keys() == theirs.keys()
    for path in mine:
        np.testing.assert_array_equal(mine[path], theirs[path], err_msg=path)


def assert_same_values(variables, others):
    for mine, theirs in zip(variables, others, strict=True):
        np.testing.assert_array_equal(mine.numpy(), theirs.numpy(), err_msg=mine.name)


def snapshot(model):
    return [w.numpy() for w in model.weights]


def assert_unchanged(model, before):
    for weight, old in zip(model.weights, before, strict=True):
        np.testing.assert_array_equal(weight.numpy(), old)


def as_json(config):
    return json.loads(archive.to_json(config, "a config"))


# ------------------------------------------------------- every built-in layer

# Constructor and call of the layers that need arguments: factory, input shapes
# (without the batch axis), how the inputs are passed, input dtype. A layer
# missing here is built with no arguments on an input shape guessed from its
# name ("1D", "2D", "3D"), or skipped, with the reason, if that fails.
LAYER_SPECS = {
    "Activation": (lambda: layers.Activation("tanh"), [(4,)], "single", "float32"),
    "Dense": (lambda: layers.Dense(3, activation="relu"), [(4,)], "single", "float32"),
    "Dropout": (lambda: layers.Dropout(0.5, seed=2), [(4,)], "single", "float32"),
    "GaussianNoise": (lambda: layers.GaussianNoise(0.1), [(4,)], "single", "float32"),
    "Lambda": (lambda: layers.Lambda(ops.negative), [(4,)], "single", "float32"),
    "MultiHeadAttention": (
        lambda: layers.MultiHeadAttention(num_heads=2, key_dim=3),
        [(4, 6), (5, 6)],
        "args",
        "float32",
    ),
    "Permute": (lambda: layers.Permute((2, 1)), [(3, 4)], "single", "float32"),
    "RepeatVector": (lambda: layers.RepeatVector(2), [(4,)], "single", "float32"),
    "Reshape": (lambda: layers.Reshape((2, 2)), [(4,)], "single", "float32"),
    "Flatten": (lambda: layers.Flatten(), [(2, 3)], "single", "float32"),
    "SpatialDropout2D": (lambda: layers.SpatialDropout2D(0.5), [(4, 4, 2)], "single", "float32"),
    "Cropping2D": (lambda: layers.Cropping2D(1), [(5, 5, 2)], "single", "float32"),
    "Embedding": (lambda: layers.Embedding(10, 3), [(5,)], "single", "int64"),
    "ReversibleEmbedding": (
        lambda: layers.ReversibleEmbedding(10, 3, tie_weights=False),
        [(5,)],
        "single",
        "int64",
    ),
    "Bidirectional": (lambda: layers.Bidirectional(layers.LSTM(3)), [(5, 4)], "single", "float32"),
    "TimeDistributed": (lambda: layers.TimeDistributed(Dense(2)), [(5, 4)], "single", "float32"),
    "SpectralNormalization": (
        lambda: layers.SpectralNormalization(Dense(2), power_iterations=2),
        [(4,)],
        "single",
        "float32",
    ),
}
# Preprocessing layers; string inputs cannot come through Input (it has no string dtype).
LAYER_SPECS.update(
    {
        "CategoryEncoding": (lambda: layers.CategoryEncoding(10), [(3,)], "single", "int64"),
        "CenterCrop": (lambda: layers.CenterCrop(2, 3), [(4, 5, 2)], "single", "float32"),
        "Discretization": (
            lambda: layers.Discretization(bin_boundaries=[-1.0, 0.0, 1.0]),
            [(4,)],
            "single",
            "float32",
        ),
        "Hashing": (lambda: layers.Hashing(5), [(3,)], "single", "int64"),
        "IntegerLookup": (
            lambda: layers.IntegerLookup(vocabulary=[1, 2, 3], output_mode="count"),
            [(4,)],
            "single",
            "int64",
        ),
        "Normalization": (
            lambda: layers.Normalization(mean=[1.0, 2.0], variance=[4.0, 9.0]),
            [(2,)],
            "single",
            "float32",
        ),
        "Rescaling": (lambda: layers.Rescaling(0.5, offset=1.0), [(4,)], "single", "float32"),
        "Resizing": (lambda: layers.Resizing(3, 2), [(4, 5, 2)], "single", "float32"),
        "RandomBrightness": (
            lambda: layers.RandomBrightness(0.2),
            [(4, 4, 2)],
            "single",
            "float32",
        ),
        "RandomContrast": (lambda: layers.RandomContrast(0.2), [(4, 4, 2)], "single", "float32"),
        "RandomCrop": (lambda: layers.RandomCrop(2, 3), [(4, 5, 2)], "single", "float32"),
        "RandomFlip": (lambda: layers.RandomFlip(), [(4, 4, 2)], "single", "float32"),
        "RandomRotation": (lambda: layers.RandomRotation(0.2), [(4, 4, 2)], "single", "float32"),
        "RandomTranslation": (
            lambda: layers.RandomTranslation(0.2, 0.2),
            [(4, 4, 2)],
            "single",
            "float32",
        ),
        "RandomZoom": (lambda: layers.RandomZoom(0.2), [(4, 4, 2)], "single", "float32"),
        "RandomGrayscale": (lambda: layers.RandomGrayscale(), [(4, 4, 3)], "single", "float32"),
        "RandomInvert": (lambda: layers.RandomInvert(), [(4, 4, 2)], "single", "float32"),
        "Solarization": (lambda: layers.Solarization(0.1), [(4, 4, 2)], "single", "float32"),
        "RandomPosterization": (
            lambda: layers.RandomPosterization(3),
            [(4, 4, 2)],
            "single",
            "float32",
        ),
        "AutoContrast": (lambda: layers.AutoContrast(), [(4, 4, 2)], "single", "float32"),
        "RandomErasing": (lambda: layers.RandomErasing(), [(4, 4, 2)], "single", "float32"),
        "MixUp": (lambda: layers.MixUp(), [(4, 4, 2)], "single", "float32"),
        "CutMix": (lambda: layers.CutMix(), [(4, 4, 2)], "single", "float32"),
        "Pipeline": (
            lambda: layers.Pipeline([layers.RandomErasing(), layers.Flatten(), Dense(2)]),
            [(4, 4, 2)],
            "single",
            "float32",
        ),
        "StringLookup": (
            lambda: pytest.skip("StringLookup takes strings, which Input cannot declare"),
            None,
            "single",
            "float32",
        ),
        "TextVectorization": (
            lambda: pytest.skip("TextVectorization takes strings, which Input cannot declare"),
            None,
            "single",
            "float32",
        ),
    }
)
for _name in ("Add", "Average", "Maximum", "Minimum", "Multiply", "Subtract", "Concatenate", "Dot"):
    LAYER_SPECS[_name] = (getattr(layers, _name, None), [(4,), (4,)], "list", "float32")
LAYER_SPECS["RNN"] = (lambda: layers.RNN(layers.GRUCell(3)), [(5, 4)], "single", "float32")
for _name in ("SimpleRNNCell", "LSTMCell", "GRUCell"):  # a cell is saved inside an RNN
    LAYER_SPECS[_name] = (
        lambda name=_name: layers.RNN(getattr(layers, name)(3), return_state=True),
        [(5, 4)],
        "single",
        "float32",
    )
LAYER_SPECS["StackedRNNCells"] = (
    lambda: layers.RNN(layers.StackedRNNCells([layers.LSTMCell(3), layers.SimpleRNNCell(2)])),
    [(5, 4)],
    "single",
    "float32",
)
for _name in ("SimpleRNN", "LSTM", "GRU"):
    LAYER_SPECS[_name] = (
        lambda name=_name: getattr(layers, name)(3),
        [(5, 4)],
        "single",
        "float32",
    )
for _name in ("Conv1D", "Conv2D", "Conv3D", "Conv1DTranspose", "Conv2DTranspose", "Conv3DTranspose",
              "SeparableConv1D", "SeparableConv2D", "Convolution1D", "Convolution2D",
              "Convolution3D", "Convolution1DTranspose", "Convolution2DTranspose",
              "Convolution3DTranspose", "SeparableConvolution1D",
              "SeparableConvolution2D"):  # fmt: skip
    LAYER_SPECS[_name] = (lambda name=_name: getattr(layers, name)(2, 3), None, "single", "float32")
for _name in ("DepthwiseConv1D", "DepthwiseConv2D"):
    LAYER_SPECS[_name] = (lambda name=_name: getattr(layers, name)(3), None, "single", "float32")

EXPORTED_LAYERS = sorted(
    name
    for name in layers.__all__
    if inspect.isclass(getattr(layers, name))
    and issubclass(getattr(layers, name), Layer)
    and name != "InputLayer"  # (it stands for an Input: tests/test_input_layer.py)
)


def _guessed_shape(name):
    for rank, shape in (("1D", (6, 3)), ("2D", (6, 6, 2)), ("3D", (4, 4, 4, 2))):
        if rank in name:
            return shape
    return (4,)


def _layer_and_inputs(name):
    factory, shapes, style, dtype = LAYER_SPECS.get(name, (None, None, "single", "float32"))
    factory = factory or getattr(layers, name)
    shapes = shapes or [_guessed_shape(name)]
    try:
        layer = factory()
    except TypeError as error:
        pytest.skip(f"{name} needs constructor arguments: add it to LAYER_SPECS ({error})")
    inputs = [Input(shape, dtype=dtype) for shape in shapes]
    try:
        if style == "single":
            outputs = layer(inputs[0])
        elif style == "list":
            outputs = layer(inputs)
        else:
            outputs = layer(*inputs)
    except (TypeError, ValueError) as error:
        pytest.skip(
            f"{name} does not accept inputs of shape {shapes}: add it to LAYER_SPECS ({error})"
        )
    if dtype.startswith("int"):
        data = [rng.integers(0, 10, (2, *shape)) for shape in shapes]
    else:
        data = [rng.standard_normal((2, *shape)).astype(dtype) for shape in shapes]
    return layer, inputs, outputs, data


def test_the_layer_specs_cover_layers_that_need_arguments():
    assert {"Dense", "Dropout", "Reshape", "Activation"} <= set(EXPORTED_LAYERS)


@pytest.mark.parametrize("name", EXPORTED_LAYERS)
def test_every_builtin_layer_round_trips_in_a_functional_model(name, tmp_path):
    layer, inputs, outputs, data = _layer_and_inputs(name)
    model = Model(inputs if len(inputs) > 1 else inputs[0], outputs)
    randomize(model)
    model.save(tmp_path / "model.minikeras")
    loaded = load_model(tmp_path / "model.minikeras")
    copy = loaded.get_layer(layer.name)
    assert type(copy) is type(layer) and copy.name == layer.name
    assert as_json(copy.get_config()) == as_json(layer.get_config())
    assert_same_weights(model, loaded)
    x = data if len(data) > 1 else data[0]
    np.testing.assert_array_equal(loaded.predict(x), model.predict(x))


@pytest.mark.parametrize("name", EXPORTED_LAYERS)
def test_every_builtin_layer_weights_load_into_a_copy_with_other_names(name, tmp_path):
    _, inputs, outputs, _ = _layer_and_inputs(name)
    model = Model(inputs if len(inputs) > 1 else inputs[0], outputs)
    randomize(model)
    model.save_weights(tmp_path / "w.weights.minikeras")
    _, inputs, outputs, _ = _layer_and_inputs(name)
    copy = Model(inputs if len(inputs) > 1 else inputs[0], outputs)
    copy.load_weights(tmp_path / "w.weights.minikeras")  # auto names differ: matched by position
    for mine, theirs in zip(model.weights, copy.weights, strict=True):
        np.testing.assert_array_equal(mine.numpy(), theirs.numpy())


# --------------------------------------------------------------------- models


def test_sequential_round_trip_keeps_layers_weights_and_predictions(tmp_path):
    model = Sequential(
        [Input((3,)), Dense(8, activation="relu", name="hidden"), Dropout(0.2), Dense(2)],
        name="mlp",
    )
    randomize(model)
    model.save(tmp_path / "mlp.minikeras")
    loaded = load_model(tmp_path / "mlp.minikeras")
    assert type(loaded) is Sequential and loaded.name == "mlp"
    assert [type(layer).__name__ for layer in loaded.layers] == ["Dense", "Dropout", "Dense"]
    assert [layer.name for layer in loaded.layers] == [layer.name for layer in model.layers]
    assert_same_weights(model, loaded)
    x = rng.standard_normal((5, 3)).astype("float32")
    np.testing.assert_array_equal(loaded.predict(x), model.predict(x))


def test_sequential_built_by_its_first_call_is_rebuilt_from_the_recorded_shape(tmp_path):
    model = Sequential([layers.Flatten(), Dense(4)])
    model(np.ones((7, 2, 3), dtype="float32"))
    model.save(tmp_path / "m.minikeras")
    loaded = load_model(tmp_path / "m.minikeras")
    assert loaded.built and loaded.layers[1].kernel.shape == (6, 4)
    assert_same_weights(model, loaded)


def test_nested_sequential_and_frozen_layers_round_trip(tmp_path):
    inner = Sequential([Dense(4, name="inner_dense")], name="inner")
    model = Sequential([Input((3,)), inner, Dense(2, name="head")])
    inner.trainable = False
    randomize(model)
    model.save(tmp_path / "nested.minikeras")
    loaded = load_model(tmp_path / "nested.minikeras")
    assert [row.path for row in loaded.tracking_report().rows] == [
        "inner/inner_dense/kernel", "inner/inner_dense/bias", "head/kernel", "head/bias",
    ]  # fmt: skip
    assert [w.trainable for w in loaded.weights] == [False, False, True, True]
    assert_same_weights(model, loaded)


def test_functional_round_trip_with_shared_layer_several_inputs_and_outputs(tmp_path):
    left, right = Input((4,), name="left"), Input((4,), name="right")
    shared = Dense(3, name="shared")
    merged = layers.Concatenate()([shared(left), shared(right)])
    sub = Sequential([Dense(5, activation="relu")], name="sub")
    outputs = [Dense(1, name="score")(sub(merged)), layers.Add()([shared(left), shared(right)])]
    model = Model([left, right], outputs, name="siamese")
    randomize(model)
    model.save(tmp_path / "siamese.minikeras")
    loaded = load_model(tmp_path / "siamese.minikeras")
    assert [layer.name for layer in loaded.layers] == [layer.name for layer in model.layers]
    assert_same_weights(model, loaded)
    x = [rng.standard_normal((3, 4)).astype("float32") for _ in range(2)]
    for mine, theirs in zip(model.predict(x), loaded.predict(x), strict=True):
        np.testing.assert_array_equal(mine, theirs)


def test_functional_config_has_keras_layers_and_inbound_nodes():
    x = Input((3,), name="x")
    model = Model(x, Dense(2, name="out")(x))
    config = model.get_config()
    assert [entry["class_name"] for entry in config["layers"]] == ["InputLayer", "Dense"]
    node = config["layers"][1]["inbound_nodes"][0]
    assert node["args"][0]["config"]["keras_history"] == ["x", 0, 0]
    assert config["output_layers"] == ["out", 0, 0]  # Keras writes [layer, node, tensor]


class MLP(Model):
    def __init__(self, hidden=4, **kwargs):
        super().__init__(**kwargs)
        self.hidden = Dense(hidden, activation="relu")
        self.out = Dense(2)

    def call(self, inputs):
        return self.out(self.hidden(inputs))


def test_unregistered_subclassed_model_saves_and_loads_with_custom_objects(tmp_path):
    model = MLP(hidden=5)
    model.build((None, 3))
    randomize(model)
    model.save(tmp_path / "mlp.minikeras")  # as Keras: named by its class, not refused
    with pytest.raises(LoadError, match=r"class 'MLP'.*custom_objects=\{'MLP': MLP\}"):
        load_model(tmp_path / "mlp.minikeras")
    loaded = load_model(tmp_path / "mlp.minikeras", custom_objects={"MLP": MLP})
    assert type(loaded) is MLP and loaded.hidden.units == 5
    assert_same_weights(model, loaded)
    # Its weights alone still load into a model built by the user's code.
    model.save_weights(tmp_path / "mlp.weights.minikeras")
    other = MLP(hidden=5)
    other.build((None, 3))
    other.load_weights(tmp_path / "mlp.weights.minikeras")
    assert_same_weights(model, other)


@register_serializable(package="Tests")
class RegisteredMLP(MLP):
    """Registered, with no get_config: Keras 3 captures its plain constructor arguments."""


@register_serializable(package="Tests")
class Wrapping(Layer):
    """Registered, with no get_config, and a layer as a constructor argument."""

    def __init__(self, inner, **kwargs):
        super().__init__(**kwargs)
        self.inner = inner

    def call(self, inputs):
        return self.inner(inputs)


@register_serializable(package="Tests")
class FixedNet(Model):
    def __init__(self):
        super().__init__()
        self.body = Dense(3)

    def call(self, inputs):
        return self.body(inputs)


def test_registered_subclass_without_get_config_saves_its_plain_arguments(tmp_path):
    model = RegisteredMLP(hidden=5)
    model.build((None, 3))
    randomize(model)
    assert model.get_config()["hidden"] == 5
    model.save(tmp_path / "m.minikeras")
    loaded = load_model(tmp_path / "m.minikeras")
    assert type(loaded) is RegisteredMLP and loaded.get_config()["hidden"] == 5
    assert_same_weights(model, loaded)


def test_a_layer_argument_cannot_be_captured_and_the_error_says_to_write_get_config(tmp_path):
    layer = Wrapping(Dense(2), name="wrapping")
    with pytest.raises(NotImplementedError, match=r"'wrapping'.*\['inner'\].*Write get_config"):
        layer.get_config()
    model = Sequential([Input((3,)), layer])
    with pytest.raises(ValueError, match=r"'wrapping'.*Write get_config.*save_weights"):
        model.save(tmp_path / "m.minikeras")


def test_registered_subclassed_model_without_arguments_round_trips(tmp_path):
    model = FixedNet()
    model.build((None, 4))
    randomize(model)
    model.save(tmp_path / "net.minikeras")
    loaded = load_model(tmp_path / "net.minikeras")
    assert type(loaded) is FixedNet and loaded.name == model.name
    assert_same_weights(model, loaded)


@register_serializable(package="Tests")
def doubled_relu(x):
    return ops.relu(x) * 2.0


@register_serializable(package="Tests")
class Scale(Layer):
    def __init__(self, factor=1.0, activation=None, **kwargs):
        super().__init__(**kwargs)
        self.factor = factor
        self.activation = mk.activations.get(activation)

    def build(self, input_shape):
        self.gain = self.add_weight("gain", (input_shape[-1],), initializer="ones")

    def call(self, inputs):
        return self.activation(inputs * self.gain * self.factor)

    def get_config(self):
        activation = mk.activations.serialize(self.activation)
        return {**super().get_config(), "factor": self.factor, "activation": activation}


def test_registered_custom_layer_and_activation_round_trip(tmp_path):
    model = Sequential([Input((3,)), Scale(2.0, activation=doubled_relu, name="scale")])
    randomize(model)
    model.save(tmp_path / "custom.minikeras")
    entry = model.get_config()["layers"][1]
    assert entry["registered_name"] == "Tests>Scale" and entry["module"] == __name__
    loaded = load_model(tmp_path / "custom.minikeras")
    assert type(loaded.layers[0]) is Scale and loaded.layers[0].activation is doubled_relu
    x = rng.standard_normal((4, 3)).astype("float32")
    np.testing.assert_array_equal(loaded.predict(x), model.predict(x))


def test_custom_objects_stand_in_for_a_registration_missing_at_load(tmp_path, monkeypatch):
    model = Sequential([Input((3,)), Scale(2.0, name="scale")])
    model.save(tmp_path / "custom.minikeras")
    # As in a process that never imported the class.
    monkeypatch.delitem(mk.saving.get_custom_objects(), "Tests>Scale")
    with pytest.raises(LoadError, match=r"unknown layer class 'Tests>Scale'.*custom_objects"):
        load_model(tmp_path / "custom.minikeras")
    loaded = load_model(tmp_path / "custom.minikeras", custom_objects={"Scale": Scale})
    assert type(loaded.layers[0]) is Scale


@pytest.mark.parametrize("suffix", ["minikeras", "keras"])
def test_an_unregistered_custom_layer_is_saved_by_its_class_name(tmp_path, suffix):
    class Local(Layer):  # (not even importable: defined inside a function)
        def __init__(self, factor=1.0, **kwargs):
            super().__init__(**kwargs)
            self.factor = factor

        def call(self, inputs):
            return inputs * self.factor

    model = Sequential([Input((3,)), Local(3.0, name="local")])
    path = tmp_path / f"m.{suffix}"
    model.save(path)
    with pytest.raises(LoadError, match=r"unknown layer class 'Local'.*custom_objects"):
        load_model(path)
    with mk.saving.custom_object_scope({"Local": Local}):
        loaded = load_model(path)
    assert type(loaded.get_layer("local")) is Local and loaded.get_layer("local").factor == 3.0
    np.testing.assert_array_equal(loaded.predict(np.ones((1, 3)), verbose=0), [[3.0, 3.0, 3.0]])


def test_saving_or_loading_an_unbuilt_model_is_a_clear_error(tmp_path):
    model = Sequential([Dense(2)])
    for action in (model.save, model.save_weights, model.load_weights):
        with pytest.raises(ValueError, match="not built yet.*build\\(input_shape\\)"):
            action(tmp_path / "m.minikeras")
    assert list(tmp_path.iterdir()) == []


# ------------------------------------------------------------ exact resume

OPTIMIZERS = {
    "sgd": lambda: mk.optimizers.SGD(0.05, momentum=0.9, nesterov=True),
    "adam": lambda: mk.optimizers.Adam(0.01, amsgrad=True),
    "adamw": lambda: mk.optimizers.AdamW(0.01),
    "rmsprop": lambda: mk.optimizers.RMSprop(0.01, momentum=0.5, centered=True),
    "adagrad": lambda: mk.optimizers.Adagrad(0.05),
    "adamax": lambda: mk.optimizers.Adamax(0.01),
    "nadam": lambda: mk.optimizers.Nadam(0.01),
    "schedule": lambda: mk.optimizers.Adam(mk.schedules.ExponentialDecay(0.01, 3, 0.5)),
}


def _digits_model(optimizer):
    model = Sequential(
        [Input((8,)), Dense(16, activation="relu"), Dropout(0.3), Dense(16),
         Dropout(0.2, seed=5), Dense(3)]
    )  # fmt: skip
    loss = mk.losses.SparseCategoricalCrossentropy(from_logits=True)
    model.compile(optimizer, loss, metrics=["accuracy"])
    return model


@pytest.mark.parametrize("optimizer", sorted(OPTIMIZERS))
def test_train_2_epochs_save_load_train_1_equals_3_epochs_straight(optimizer, tmp_path):
    data = np.random.default_rng(0)
    x = data.standard_normal((60, 8)).astype("float32")
    y = data.integers(0, 3, 60)
    fit = dict(batch_size=16, verbose=0, validation_split=0.2)

    mk.utils.set_random_seed(11)
    first = _digits_model(OPTIMIZERS[optimizer]())
    first.fit(x, y, epochs=2, **fit)
    first.save(tmp_path / "run.minikeras")
    mk.utils.set_random_seed(999)  # whatever happens in between does not matter
    np.random.default_rng().random(10)
    resumed = load_model(tmp_path / "run.minikeras")
    resumed_history = resumed.fit(x, y, epochs=3, initial_epoch=2, **fit)
    resumed_random_state = mk.random.generator().bit_generator.state

    mk.utils.set_random_seed(11)
    straight = _digits_model(OPTIMIZERS[optimizer]())
    straight_history = straight.fit(x, y, epochs=3, **fit)

    assert_same_values(resumed.weights, straight.weights)  # automatic names differ
    assert_same_values(resumed.optimizer.variables, straight.optimizer.variables)
    assert int(resumed.optimizer.iterations.numpy()) == 3 * 3
    for key, values in straight_history.history.items():
        assert resumed_history.history[key] == values[-1:], key
    assert mk.random.generator().bit_generator.state == resumed_random_state


def test_load_model_restores_the_compile_arguments(tmp_path):
    model = _digits_model(mk.optimizers.Adam(0.005, clipnorm=1.0))
    model.fit(np.ones((4, 8)), np.zeros(4, dtype=int), verbose=0)
    model.save(tmp_path / "m.minikeras")
    loaded = load_model(tmp_path / "m.minikeras")
    assert loaded.compiled
    assert loaded.optimizer.get_config() == model.optimizer.get_config()
    assert (
        type(loaded.loss) is type(model.loss)
        and loaded.loss.get_config() == model.loss.get_config()
    )
    assert [m.name for m in loaded.metrics] == ["loss", "accuracy"]
    assert type(loaded.metrics[1]) is type(model.metrics[1])


def _dict_heads_model():
    inputs = Input((3,), name="x")
    heads = {  # not in sorted order
        "zeta": Dense(1, name="zeta", kernel_initializer="ones")(inputs),
        "alpha": Dense(1, name="alpha", kernel_initializer="zeros")(inputs),
    }
    model = Model(inputs, heads)  # lists follow the sorted keys: alpha first
    model.compile("sgd", loss=["mse", "mae"], loss_weights=[1.0, 2.0], metrics=[["mae"], []])
    return model


_DICT_X = np.arange(24, dtype="float32").reshape(8, 3) / 10
_DICT_Y = {"zeta": np.zeros((8, 1), "float32"), "alpha": np.full((8, 1), 3.0, "float32")}


def test_per_output_lists_of_a_dict_model_are_saved_by_output_name(tmp_path):
    model = _dict_heads_model()
    model.save(tmp_path / "m.minikeras")
    with zipfile.ZipFile(tmp_path / "m.minikeras") as zipped:
        compiled = json.loads(zipped.read("config.json"))["compile"]
    assert compiled["loss"] == {"alpha": "mse", "zeta": "mae"}
    assert compiled["loss_weights"] == {"alpha": 1.0, "zeta": 2.0}
    logs = model.test_on_batch(_DICT_X, _DICT_Y, return_dict=True)
    loaded = load_model(tmp_path / "m.minikeras")
    assert loaded.test_on_batch(_DICT_X, _DICT_Y, return_dict=True) == logs


def test_lists_in_a_file_from_before_sorted_keys_keep_their_heads(tmp_path):
    # Files written while a list followed the dict's own order (zeta, alpha) hold such
    # lists; they load with each entry on the head it was compiled for.
    model = _dict_heads_model()
    logs = model.test_on_batch(_DICT_X, _DICT_Y, return_dict=True)
    model.save(tmp_path / "m.minikeras")

    def as_before(config):
        config["compile"].update(
            loss=["mae", "mse"], loss_weights=[2.0, 1.0], metrics=[[], ["mae"]]
        )
        return config

    _rewrite(tmp_path / "m.minikeras", "config.json", as_before)
    loaded = load_model(tmp_path / "m.minikeras")
    assert loaded.test_on_batch(_DICT_X, _DICT_Y, return_dict=True) == logs


def test_compile_false_gives_an_uncompiled_model_and_leaves_the_random_stream(tmp_path):
    model = _digits_model("adam")
    model.fit(np.ones((4, 8)), np.zeros(4, dtype=int), verbose=0)
    model.save(tmp_path / "m.minikeras")
    mk.utils.set_random_seed(5)
    state = mk.random.generator().bit_generator.state
    loaded = load_model(tmp_path / "m.minikeras", compile=False)
    assert not loaded.compiled
    assert mk.random.generator().bit_generator.state == state
    assert_same_weights(model, loaded)


def test_a_training_state_that_cannot_be_saved_warns_and_the_weights_are_saved(tmp_path):
    model = Sequential([Input((2,)), Dense(1)])
    model.compile("sgd", loss=lambda y_true, y_pred: ops.mean((y_true - y_pred) ** 2))
    with pytest.warns(UserWarning, match="without its training state.*uncompiled"):
        model.save(tmp_path / "m.minikeras")
    loaded = load_model(tmp_path / "m.minikeras")
    assert not loaded.compiled
    assert_same_weights(model, loaded)


def test_a_compiled_model_not_trained_yet_builds_its_optimizer_at_its_first_step(tmp_path):
    model = Sequential([Input((3,)), Dense(2)])
    model.compile(mk.optimizers.SGD(0.1, momentum=0.9), "mse")
    model.save(tmp_path / "m.minikeras")
    loaded = load_model(tmp_path / "m.minikeras")
    assert not loaded.optimizer.built and len(loaded.optimizer.variables) == 2
    loaded.fit(np.ones((4, 3)), np.ones((4, 2)), verbose=0)
    assert int(loaded.optimizer.iterations.numpy()) == 1 and len(loaded.optimizer.variables) == 4


def test_an_uncompiled_model_loads_uncompiled(tmp_path):
    model = Sequential([Input((2,)), Dense(1)])
    model.save(tmp_path / "m.minikeras")
    assert not load_model(tmp_path / "m.minikeras").compiled


# ---------------------------------------------------------- weights by path


class TwoBlocks(Model):
    def __init__(self, second_first=False):
        super().__init__()
        # Creation order differs, attribute names do not.
        if second_first:
            self.second = Dense(3)
            self.first = Dense(3)
        else:
            self.first = Dense(3)
            self.second = Dense(3)

    def call(self, inputs):
        return self.second(self.first(inputs))


def test_weights_follow_their_paths_not_their_creation_order(tmp_path):
    model = TwoBlocks()
    model.build((None, 3))
    randomize(model)
    model.save_weights(tmp_path / "w.weights.minikeras")
    other = TwoBlocks(second_first=True)
    other.build((None, 3))
    other.load_weights(tmp_path / "w.weights.minikeras")
    np.testing.assert_array_equal(other.first.kernel.numpy(), model.first.kernel.numpy())
    np.testing.assert_array_equal(other.second.kernel.numpy(), model.second.kernel.numpy())


def test_a_copy_with_other_automatic_names_loads_by_position(tmp_path):
    model = Sequential([Input((3,)), Dense(4), Dense(2)])
    randomize(model)
    model.save_weights(tmp_path / "w.weights.minikeras")
    other = Sequential([Input((3,)), Dense(4), Dense(2)])
    assert [layer.name for layer in other.layers] != [layer.name for layer in model.layers]
    other.load_weights(tmp_path / "w.weights.minikeras")
    for mine, theirs in zip(model.weights, other.weights, strict=True):
        np.testing.assert_array_equal(mine.numpy(), theirs.numpy())


class Hierarchy(Model):
    def __init__(self, width=4):
        super().__init__()
        self.ff1 = Sequential([Dense(width, activation="relu"), Dense(width)])
        self.ff2 = Sequential([Dense(2)])

    def call(self, inputs):
        return self.ff2(self.ff1(inputs))


def test_a_sub_model_saves_and_loads_on_its_own(tmp_path):
    pretrained = Hierarchy()
    pretrained.build((None, 3))
    randomize(pretrained)
    pretrained.ff1.save_weights(tmp_path / "ff1.weights.minikeras")
    assert [entry["path"] for entry in _index(tmp_path / "ff1.weights.minikeras")] == [
        f"{layer.name}/{w}" for layer in pretrained.ff1.layers for w in ("kernel", "bias")
    ]
    model = Hierarchy()
    model.build((None, 3))
    ff2_before = snapshot(model.ff2)
    model.ff1.load_weights(tmp_path / "ff1.weights.minikeras")
    for mine, theirs in zip(model.ff1.weights, pretrained.ff1.weights, strict=True):
        np.testing.assert_array_equal(mine.numpy(), theirs.numpy())
    assert_unchanged(model.ff2, ff2_before)


def test_a_sub_model_of_another_shape_is_refused_and_left_unchanged(tmp_path):
    pretrained = Hierarchy(width=5)
    pretrained.build((None, 3))
    pretrained.ff1.save_weights(tmp_path / "ff1.weights.minikeras")
    model = Hierarchy(width=4)
    model.build((None, 3))
    before = snapshot(model)
    with pytest.raises(LoadError, match="4 problems") as error:
        model.ff1.load_weights(tmp_path / "ff1.weights.minikeras")
    assert all(problem.startswith("shape mismatch") for problem in error.value.problems)
    assert_unchanged(model, before)


def _index(path):
    with zipfile.ZipFile(path) as zipped:
        return json.loads(zipped.read("weights.json"))["weights"]


# --------------------------------------------------------- checked loading


@register_serializable(package="Tests")
class Counter(Layer):
    def __init__(self, dtype_of_count="int32", **kwargs):
        super().__init__(**kwargs)
        self.dtype_of_count = dtype_of_count

    def build(self, input_shape):
        self.count = self.add_weight("count", (3,), dtype=self.dtype_of_count, initializer="zeros")

    def get_config(self):
        return {**super().get_config(), "dtype_of_count": self.dtype_of_count}


def test_every_problem_is_listed_in_one_error_and_nothing_changes(tmp_path):
    source = Model()
    source.a = Dense(2, name="a")
    source.b = Dense(3, name="b")
    source.gone = Dense(2, name="gone")
    source.counts = Counter("float32", name="counts")
    for layer in (source.a, source.b, source.gone, source.counts):
        layer.build((None, 4))
    source.built = True
    source.save_weights(tmp_path / "w.weights.minikeras")

    target = Model()
    target.a = Dense(2, name="a")  # fits
    target.b = Dense(5, name="b")  # other shapes
    target.new = Dense(2, name="new")  # not in the file
    target.counts = Counter("int32", name="counts")  # float32 values cannot become int32
    for layer in (target.a, target.b, target.new, target.counts):
        layer.build((None, 4))
    target.built = True
    before = snapshot(target)
    with pytest.raises(LoadError) as error:
        target.load_weights(tmp_path / "w.weights.minikeras")
    problems = error.value.problems
    assert sorted(problem.split(":")[0] for problem in problems) == sorted(
        ["shape mismatch"] * 2 + ["missing"] * 2 + ["unexpected"] * 2 + ["dtype mismatch"]
    )
    text = str(error.value)
    assert "'b/kernel': the model's is (4, 5), the file's (4, 3)" in text
    assert "'new/kernel', shape (4, 2), is not in the file" in text
    assert "'gone/bias', shape (2,), is in the file but not in the model" in text
    assert "'counts/count': the model's is int32, the file's float32" in text
    assert "nothing was changed" in text and "tracking_report" in text
    assert_unchanged(target, before)


def test_skip_mismatch_loads_what_fits_and_lists_the_rest_in_a_warning(tmp_path):
    source = Sequential([Input((3,)), Dense(4, name="a"), Dense(2, name="b")])
    randomize(source)
    source.save_weights(tmp_path / "w.weights.minikeras")
    target = Sequential([Input((3,)), Dense(4, name="a"), Dense(5, name="b")])
    b_before = snapshot(target.layers[1])
    with pytest.warns(UserWarning, match=r"2 entries .* skipped") as caught:
        target.load_weights(tmp_path / "w.weights.minikeras", skip_mismatch=True)
    assert "shape mismatch: 'b/kernel'" in str(caught[0].message)
    assert caught[0].filename == __file__
    np.testing.assert_array_equal(target.layers[0].kernel.numpy(), source.layers[0].kernel.numpy())
    assert_unchanged(target.layers[1], b_before)


def test_load_weights_reads_the_weights_of_a_model_file(tmp_path):
    model = Sequential([Input((3,)), Dense(2, name="d")])
    randomize(model)
    model.save(tmp_path / "m.minikeras")
    other = Sequential([Input((3,)), Dense(2, name="d")])
    other.load_weights(tmp_path / "m.minikeras")
    assert_same_weights(model, other)


def test_a_weights_file_given_to_load_model_says_what_to_do(tmp_path):
    model = Sequential([Input((3,)), Dense(2)])
    model.save_weights(tmp_path / "w.weights.minikeras")
    with pytest.raises(LoadError, match="(?s)weights only.*load_weights"):
        load_model(tmp_path / "w.weights.minikeras")


@pytest.mark.parametrize(
    "content, message",
    [
        (b"", "it is empty"),
        (b"hello world", "not a zip archive"),
        (b"\x89HDF\r\n\x1a\n" + bytes(100), "HDF5"),
        (pickle.dumps({"weights": [1, 2]}), "a pickle, which minikeras never loads"),
    ],
    ids=["empty", "text", "hdf5", "pickle"],
)
def test_wrong_file_types_are_named(tmp_path, content, message):
    path = tmp_path / "file"
    path.write_bytes(content)
    model = Sequential([Input((3,)), Dense(2)])
    before = snapshot(model)
    for load in (load_model, model.load_weights):
        with pytest.raises(LoadError, match=message):
            load(path)
    assert_unchanged(model, before)


def test_a_truncated_file_is_named(tmp_path):
    model = Sequential([Input((3,)), Dense(2)])
    model.save(tmp_path / "m.minikeras")
    data = (tmp_path / "m.minikeras").read_bytes()
    (tmp_path / "m.minikeras").write_bytes(data[: len(data) // 2])
    with pytest.raises(LoadError, match="truncated or corrupted zip archive"):
        load_model(tmp_path / "m.minikeras")


def test_a_plain_npz_or_a_keras_file_is_named(tmp_path):
    np.savez(tmp_path / "plain.npz", kernel=np.zeros((3, 2)))
    with pytest.raises(LoadError, match="plain numpy .npz"):
        load_model(tmp_path / "plain.npz")
    with zipfile.ZipFile(tmp_path / "model.keras", "w") as zipped:
        zipped.writestr("metadata.json", json.dumps({"keras_version": "3.3.0"}))
    with pytest.raises(LoadError, match="a Keras .keras file"):
        load_model(tmp_path / "model.keras")


def test_a_missing_file_is_an_os_error_and_what_is_not_a_file_is_refused_unread(tmp_path):
    with pytest.raises(FileNotFoundError):
        load_model(tmp_path / "nothing.minikeras")
    with pytest.raises(LoadError, match="it is a directory, not a regular file"):
        load_model(tmp_path)
    os.mkfifo(tmp_path / "pipe.minikeras")  # reading it would wait forever
    with pytest.raises(LoadError, match="it is a FIFO"):
        load_model(tmp_path / "pipe.minikeras")
    (tmp_path / "zero.minikeras").symlink_to("/dev/zero")  # reading it would never end
    with pytest.raises(LoadError, match="it is a device"):
        load_model(tmp_path / "zero.minikeras")
    model = Sequential([Input((3,)), Dense(2)])
    with pytest.raises(LoadError, match="it is a device"):
        model.load_weights(tmp_path / "zero.minikeras")
    (tmp_path / "zero.keras").symlink_to("/dev/zero")
    with pytest.raises(LoadError, match="it is a device"):
        load_model(tmp_path / "zero.keras")


def test_a_newer_format_version_asks_for_an_upgrade(tmp_path):
    model = Sequential([Input((3,)), Dense(2)])
    model.save(tmp_path / "m.minikeras")
    _rewrite(tmp_path / "m.minikeras", "metadata.json", lambda doc: {**doc, "format_version": 99})
    with pytest.raises(LoadError, match="format version 99.*upgrade minikeras"):
        load_model(tmp_path / "m.minikeras")


def _rewrite(path, member, edit):
    with zipfile.ZipFile(path) as zipped:
        contents = {name: zipped.read(name) for name in zipped.namelist()}
    contents[member] = json.dumps(edit(json.loads(contents[member]))).encode()
    with zipfile.ZipFile(path, "w") as zipped:
        for name, data in contents.items():
            zipped.writestr(name, data)


# ------------------------------------------------------------ never run code


def test_a_pickle_payload_in_the_weights_is_refused_not_run(tmp_path):
    marker = tmp_path / "payload-ran"

    class Payload:
        def __reduce__(self):
            return (os.mkdir, (str(marker),))

    model = Sequential([Input((3,)), Dense(2, name="d")])
    model.save_weights(tmp_path / "w.weights.minikeras")
    with zipfile.ZipFile(tmp_path / "w.weights.minikeras") as zipped:
        contents = {name: zipped.read(name) for name in zipped.namelist()}
    crafted = tmp_path / "crafted.npz"
    np.savez(crafted, **{"d/kernel": np.array([Payload()], dtype=object), "d/bias": np.zeros(2)})
    contents["weights.npz"] = crafted.read_bytes()
    with zipfile.ZipFile(tmp_path / "evil.minikeras", "w") as zipped:
        for name, data in contents.items():
            zipped.writestr(name, data)
    # The payload is live: numpy with allow_pickle=True would run it.
    np.load(crafted, allow_pickle=True)["d/kernel"]
    assert marker.exists()
    marker.rmdir()

    before = snapshot(model)
    with pytest.raises(LoadError, match="dtype object; only numbers are loaded"):
        model.load_weights(tmp_path / "evil.minikeras")
    with pytest.raises(LoadError):
        load_model(tmp_path / "evil.minikeras")
    (tmp_path / "raw.pickle").write_bytes(pickle.dumps(Payload()))
    with pytest.raises(LoadError, match="pickle"):
        load_model(tmp_path / "raw.pickle")
    assert not marker.exists()
    assert_unchanged(model, before)


def test_a_function_named_in_a_config_is_never_imported(tmp_path, monkeypatch):
    marker = tmp_path / "import-ran"
    module = tmp_path / "side_effect_module.py"
    module.write_text(f"import os\nos.mkdir({str(marker)!r})\ndef f(x):\n    return x\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    model = Sequential([Input((3,)), layers.Lambda(ops.negative, name="neg")])
    model.save(tmp_path / "m.minikeras")
    reference = {"module": "side_effect_module", "function_name": "f"}
    for target in (reference, {"module": "os", "function_name": "system"}):

        def edit(doc, target=target):
            doc["model"]["config"]["layers"][1]["config"]["function"] = target
            return doc

        _rewrite(tmp_path / "m.minikeras", "config.json", edit)
        with pytest.raises(LoadError, match="not registered; loading never imports code"):
            load_model(tmp_path / "m.minikeras")
    assert not marker.exists() and "side_effect_module" not in sys.modules


def test_a_module_named_in_a_file_is_never_imported(tmp_path):
    model = Sequential([Input((3,)), Dense(2)])
    model.save(tmp_path / "m.minikeras")

    def edit(doc):
        doc["model"]["module"] = "antigravity"
        doc["model"]["registered_name"] = doc["model"]["class_name"] = "Antigravity"
        return doc

    _rewrite(tmp_path / "m.minikeras", "config.json", edit)
    with pytest.raises(LoadError, match="unknown layer class 'Antigravity'"):
        load_model(tmp_path / "m.minikeras")
    assert "antigravity" not in sys.modules


# -------------------------------------------------------------- atomic writes


def _fail_after(monkeypatch, calls):
    real = archive_writer.write_array
    count = {"n": 0}

    def failing(stream, array):
        count["n"] += 1
        if count["n"] > calls:
            raise OSError("disk full (simulated)")
        real(stream, array)

    monkeypatch.setattr(archive_writer, "write_array", failing)


@pytest.mark.parametrize("method", ["save", "save_weights"])
def test_a_save_that_fails_halfway_leaves_the_previous_file_intact(tmp_path, monkeypatch, method):
    model = Sequential([Input((3,)), Dense(4), Dense(2)])
    path = tmp_path / "m.minikeras"
    getattr(model, method)(path)
    previous = path.read_bytes()
    randomize(model)
    _fail_after(monkeypatch, calls=2)  # the third array fails, mid-file
    with pytest.raises(OSError, match="disk full"):
        getattr(model, method)(path)
    assert path.read_bytes() == previous
    assert [p.name for p in tmp_path.iterdir()] == ["m.minikeras"]  # no temporary file left


def test_an_interrupt_mid_save_leaves_the_previous_file_intact(tmp_path, monkeypatch):
    model = Sequential([Input((3,)), Dense(2)])
    path = tmp_path / "m.minikeras"
    model.save(path)
    previous = path.read_bytes()

    def interrupted(stream, array):
        raise KeyboardInterrupt

    monkeypatch.setattr(archive_writer, "write_array", interrupted)
    with pytest.raises(KeyboardInterrupt):
        model.save(path)
    assert path.read_bytes() == previous and len(list(tmp_path.iterdir())) == 1


def test_a_save_fsyncs_then_renames(tmp_path, monkeypatch):
    events = []
    real_fsync, real_replace = os.fsync, os.replace
    monkeypatch.setattr(os, "fsync", lambda fd: (events.append("fsync"), real_fsync(fd))[1])
    monkeypatch.setattr(
        os, "replace", lambda a, b: (events.append("replace"), real_replace(a, b))[1]
    )
    Sequential([Input((3,)), Dense(2)]).save(tmp_path / "m.minikeras")
    assert events[:2] == ["fsync", "replace"]


def test_overwrite_false_refuses_an_existing_file(tmp_path):
    model = Sequential([Input((3,)), Dense(2)])
    model.save(tmp_path / "m.minikeras")
    with pytest.raises(FileExistsError):
        model.save(tmp_path / "m.minikeras", overwrite=False)
    with pytest.raises(FileNotFoundError, match="does not exist"):
        model.save(tmp_path / "no" / "such" / "m.minikeras")


# --------------------------------------------------------------- the format


def test_the_format_is_a_zip_of_json_and_npz_that_numpy_reads_without_pickle(tmp_path):
    model = Sequential([Input((3,)), Dense(2, name="d")])
    model.compile("adam", "mse")
    model.fit(np.ones((4, 3)), np.ones((4, 2)), verbose=0)
    model.save(tmp_path / "m.minikeras")
    with zipfile.ZipFile(tmp_path / "m.minikeras") as zipped:
        assert sorted(zipped.namelist()) == sorted(
            ["metadata.json", "config.json", "weights.json", "weights.npz", "training.json",
             "optimizer.npz"]
        )  # fmt: skip
        metadata = json.loads(zipped.read("metadata.json"))
        assert metadata == {"format": "minikeras", "format_version": 1, "kind": "model"}
        config = json.loads(zipped.read("config.json"))
        assert config["model"]["class_name"] == "Sequential"
        assert config["compile"]["loss"] == "mse"
        import io

        weights = np.load(io.BytesIO(zipped.read("weights.npz")), allow_pickle=False)
        np.testing.assert_array_equal(weights["d/kernel"], model.layers[0].kernel.numpy())
        optimizer = np.load(io.BytesIO(zipped.read("optimizer.npz")), allow_pickle=False)
        assert int(optimizer["0"]) == 1  # iterations first


def test_the_same_model_gives_the_same_bytes(tmp_path):
    model = Sequential([Input((3,)), Dense(2)])
    model.save(tmp_path / "a.minikeras")
    model.save(tmp_path / "b.minikeras")
    assert (tmp_path / "a.minikeras").read_bytes() == (tmp_path / "b.minikeras").read_bytes()


# ------------------------------------------------------------ ModelCheckpoint


def _small_model():
    model = Sequential([Input((2,)), Dense(1)])
    model.compile("sgd", "mse")
    return model


DATA = (rng.standard_normal((16, 2)).astype("float32"), rng.standard_normal((16, 1)))


def test_checkpoint_every_epoch_formats_the_path_from_the_logs(tmp_path):
    model = _small_model()
    path = str(tmp_path / "ckpt" / "e{epoch:02d}-{val_loss:.2f}.minikeras")
    history = model.fit(*DATA, epochs=2, validation_split=0.25, verbose=0,
                        callbacks=[ModelCheckpoint(path)])  # fmt: skip
    names = sorted(p.name for p in (tmp_path / "ckpt").iterdir())
    expected = [
        f"e{e + 1:02d}-{v:.2f}.minikeras" for e, v in enumerate(history.history["val_loss"])
    ]
    assert names == expected
    assert_same_weights(model, load_model(tmp_path / "ckpt" / names[-1]))


def test_checkpoint_save_best_only_keeps_the_best_epoch(tmp_path, capsys):
    model = _small_model()
    checkpoint = ModelCheckpoint(str(tmp_path / "best.minikeras"), monitor="loss",
                                 save_best_only=True, verbose=1)  # fmt: skip
    checkpoint.set_model(model)
    saved = []
    for epoch, loss in enumerate([0.5, 0.4, 0.45]):
        randomize(model)
        checkpoint.on_epoch_end(epoch, {"loss": loss})
        if loss == 0.4:
            saved = snapshot(model)
    loaded = load_model(tmp_path / "best.minikeras")
    for weight, old in zip(loaded.weights, saved, strict=True):
        np.testing.assert_array_equal(weight.numpy(), old)
    assert checkpoint.best == 0.4
    out = capsys.readouterr().out
    assert "Epoch 2: loss improved from 0.50000 to 0.40000, saving model to" in out
    assert "Epoch 3: loss did not improve from 0.40000" in out


def test_checkpoint_max_mode_and_initial_value_threshold(tmp_path):
    model = _small_model()
    checkpoint = ModelCheckpoint(str(tmp_path / "m.minikeras"), monitor="val_auc", mode="max",
                                 save_best_only=True, initial_value_threshold=0.8)  # fmt: skip
    checkpoint.set_model(model)
    checkpoint.on_epoch_end(0, {"val_auc": 0.7})
    assert not (tmp_path / "m.minikeras").exists()
    checkpoint.on_epoch_end(1, {"val_auc": 0.9})
    assert (tmp_path / "m.minikeras").exists()


def test_checkpoint_weights_only_every_few_batches(tmp_path):
    model = _small_model()
    path = str(tmp_path / "w-{epoch}-{batch}.weights.minikeras")
    checkpoint = ModelCheckpoint(path, save_weights_only=True, save_freq=3)
    model.fit(*DATA, epochs=2, batch_size=4, verbose=0, callbacks=[checkpoint])  # 4 steps/epoch
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == ["w-1-3.weights.minikeras", "w-2-2.weights.minikeras"]
    with pytest.raises(LoadError, match="weights only"):
        load_model(tmp_path / names[0])


def test_checkpoint_misuse_is_reported(tmp_path):
    with pytest.raises(ValueError, match="save_freq"):
        ModelCheckpoint("x", save_freq=0)
    model = _small_model()
    checkpoint = ModelCheckpoint(str(tmp_path / "{nothing}.minikeras"))
    checkpoint.set_model(model)
    with pytest.raises(KeyError, match="names 'nothing'"):
        checkpoint.on_epoch_end(0, {"loss": 1.0})
    quiet = ModelCheckpoint(str(tmp_path / "m.minikeras"), monitor="val_loss", save_best_only=True)
    quiet.set_model(model)
    with pytest.warns(UserWarning, match="val_loss"):
        quiet.on_epoch_end(0, {"loss": 1.0})
    assert (tmp_path / "m.minikeras").exists()  # saved, as Keras 3 saves
    unsure = ModelCheckpoint(str(tmp_path / "m.minikeras"), monitor="wobble", save_best_only=True)
    unsure.set_model(model)
    with pytest.raises(ValueError, match="mode='max' or mode='min'"):
        unsure.on_epoch_end(0, {"wobble": 1.0})


def test_warnings_are_clean_for_ordinary_saves(tmp_path):
    model = _digits_model("adam")
    model.fit(np.ones((4, 8)), np.zeros(4, dtype=int), verbose=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model.save(tmp_path / "m.minikeras")
        load_model(tmp_path / "m.minikeras")


# ------------------------------------------------- weights that must be refused (#18)


def _weights_file_with(tmp_path, change):
    """A weights file of a Dense(2) on 3 features, with `change(arrays)` applied to its arrays."""
    import io as _io

    source = Dense(2, name="dense_src")
    source.build((None, 3))
    path = tmp_path / "w.weights.minikeras"
    mk.saving.save_weights(source, path)
    with zipfile.ZipFile(path) as archive:
        members = {name: archive.read(name) for name in archive.namelist()}
    arrays = dict(np.load(_io.BytesIO(members["weights.npz"])))
    index = json.loads(members["weights.json"])
    change(arrays, index)
    buffer = _io.BytesIO()
    np.savez(buffer, **arrays)
    members["weights.npz"], members["weights.json"] = buffer.getvalue(), json.dumps(index)
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return path


def test_a_weight_of_the_same_size_but_another_shape_is_refused_and_nothing_changes(tmp_path):
    def transpose(arrays, index):
        arrays["kernel"] = arrays["kernel"].T.copy()  # (2, 3) where (3, 2) is expected
        index["weights"][0]["shape"] = [2, 3]

    path = _weights_file_with(tmp_path, transpose)
    target = Dense(2)
    target.build((None, 3))
    before = target.get_weights()
    with pytest.raises(
        LoadError, match=r"shape mismatch: 'kernel': the model's is \(3, 2\), the file's \(2, 3\)"
    ):
        mk.saving.load_weights(target, path)
    for old, new in zip(before, target.get_weights()):
        np.testing.assert_array_equal(old, new)


def test_float64_values_that_do_not_fit_float32_are_refused_naming_the_weight(tmp_path):
    def huge(arrays, index):
        arrays["bias"] = np.array([1e300, 0.0])
        index["weights"][1]["dtype"] = "float64"

    path = _weights_file_with(tmp_path, huge)
    target = Dense(2)
    target.build((None, 3))
    with pytest.raises(LoadError, match=r"out of range: 'bias'.*1e\+300.*float32"):
        mk.saving.load_weights(target, path)
    assert np.isfinite(target.bias.numpy()).all()


def test_a_zip_of_many_entries_is_refused_at_once(tmp_path, monkeypatch):
    # Refused from the central directory alone: no entry is opened or read (the
    # old check compared every name with every other, 6.6 s for this file).
    path = tmp_path / "many.minikeras"
    with zipfile.ZipFile(path, "w") as archive:
        for number in range(30_000):
            archive.writestr(f"e{number}", b"")

    def no_reading(*args, **kwargs):
        raise AssertionError("an entry was opened before the archive was refused")

    monkeypatch.setattr(zipfile.ZipFile, "open", no_reading)
    with pytest.raises(LoadError, match="30000 entries"):
        load_model(path)


def test_a_deflated_bomb_is_refused_before_it_is_inflated(tmp_path):
    import tracemalloc

    model = Sequential([Input((3,)), Dense(2)])
    model.save(tmp_path / "m.minikeras")
    with zipfile.ZipFile(tmp_path / "m.minikeras") as archive:
        members = {name: archive.read(name) for name in archive.namelist()}
    bomb = tmp_path / "bomb.minikeras"
    with zipfile.ZipFile(bomb, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            if name != "weights.npz":
                archive.writestr(name, data)
        with archive.open("weights.npz", "w", force_zip64=True) as stream:
            block = bytes(2**20)
            for _ in range(128):  # 128 MB of zeros, ~130 kB in the file
                stream.write(block)
    assert bomb.stat().st_size < 2**20
    tracemalloc.start()
    try:
        with pytest.raises(LoadError, match="weights.npz (claims|inflates)"):
            load_model(bomb)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 16 * 2**20


def test_duplicate_json_keys_are_refused(tmp_path):
    model = Sequential([Input((3,)), Dense(2)])
    model.save(tmp_path / "m.minikeras")
    with zipfile.ZipFile(tmp_path / "m.minikeras") as archive:
        members = {name: archive.read(name) for name in archive.namelist()}
    text = members["metadata.json"].decode()
    members["metadata.json"] = text.replace("{", '{"kind": "weights", ', 1).encode()
    with zipfile.ZipFile(tmp_path / "d.minikeras", "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    with pytest.raises(LoadError, match="the key 'kind' appears twice"):
        load_model(tmp_path / "d.minikeras")


def test_a_killed_saves_temporary_file_is_removed_by_the_next_save(tmp_path):
    path = tmp_path / "m.minikeras"
    stale = tmp_path / ".m.minikeras.abc123.tmp"  # what a save killed mid-write leaves
    stale.write_bytes(b"half a model")
    old = time.time() - 3600
    os.utime(stale, (old, old))
    young = tmp_path / ".m.minikeras.def456.tmp"  # maybe another process saving right now
    young.write_bytes(b"being written")
    other = tmp_path / ".other.minikeras.abc.tmp"
    other.write_bytes(b"another file's")
    os.utime(other, (old, old))
    Sequential([Input((3,)), Dense(2)]).save(path)
    assert not stale.exists() and young.exists() and other.exists()
    assert load_model(path).count_params() == 8


@pytest.mark.parametrize("suffix", ["keras", "minikeras"])
def test_a_plain_callable_learning_rate_saves_the_model_uncompiled_with_a_warning(tmp_path, suffix):
    model = Sequential([Input((3,)), Dense(1)])
    model.compile(mk.optimizers.Adam(learning_rate=lambda: 0.1), "mse")
    model.fit(np.ones((4, 3)), np.ones((4, 1)), verbose=0)
    with pytest.warns(UserWarning, match="without its training state"):
        model.save(tmp_path / f"m.{suffix}")  # (a .keras file failed: no JSON of the callable)
    loaded = load_model(tmp_path / f"m.{suffix}")
    assert not loaded.compiled
    x = np.ones((2, 3), "float32")
    np.testing.assert_array_equal(loaded.predict(x, verbose=0), model.predict(x, verbose=0))
