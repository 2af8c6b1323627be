"""One registry and one serialization library, in Keras 3's shape, as Keras code uses them."""

import json

import numpy as np
import pytest

import minikeras as mk
from minikeras import layers
from minikeras.saving import (
    custom_object_scope,
    deserialize_keras_object,
    get_custom_objects,
    get_registered_name,
    get_registered_object,
    register_keras_serializable,
    serialize_keras_object,
)


@register_keras_serializable(package="test_lib")
class Gain(layers.Layer):
    """A custom layer with no get_config: its plain constructor arguments are captured."""

    def __init__(self, factor=1.0, **kwargs):
        super().__init__(**kwargs)
        self.factor = factor

    def call(self, inputs):
        return inputs * self.factor


@register_keras_serializable(package="test_lib")
def halved(x):
    return x * 0.5


def test_a_builtin_layer_is_written_in_keras_shape_and_read_back():
    dense = layers.Dense(3, activation="relu", name="d")
    dense.build((None, 4))
    entry = serialize_keras_object(dense)
    assert set(entry) == {"module", "class_name", "config", "registered_name", "build_config"}
    assert (entry["module"], entry["class_name"], entry["registered_name"]) == (
        "keras.layers",
        "Dense",
        None,
    )
    assert entry["build_config"] == {"input_shape": (None, 4)}
    entry = json.loads(json.dumps(entry))  # what a file holds
    copy = deserialize_keras_object(entry)
    assert type(copy) is layers.Dense and copy.built and copy.kernel.shape == (4, 3)
    assert copy.units == 3 and copy.activation is mk.activations.relu


def test_functions_are_written_by_module_and_name():
    assert serialize_keras_object(mk.activations.relu) == {
        "module": "keras.activations",
        "class_name": "function",
        "config": "relu",
        "registered_name": "function",
    }
    assert deserialize_keras_object(serialize_keras_object(mk.activations.relu)) is (
        mk.activations.relu
    )
    entry = serialize_keras_object(halved)
    assert entry["registered_name"] == "test_lib>halved"
    assert deserialize_keras_object(json.loads(json.dumps(entry))) is halved


def test_tuples_arrays_and_nested_dicts_round_trip():
    value = {"pair": (1, 2.5), "table": np.arange(6, dtype="float32").reshape(2, 3), "n": [None]}
    back = deserialize_keras_object(json.loads(json.dumps(serialize_keras_object(value))))
    assert back["pair"] == [1, 2.5]  # a tuple is a list once in JSON, as in Keras
    assert back["table"].dtype == np.float32 and np.array_equal(back["table"], value["table"])
    assert back["n"] == [None]


def test_one_registration_serves_every_family():
    assert get_registered_name(Gain) == "test_lib>Gain"
    assert get_registered_object("test_lib>Gain") is Gain
    assert get_custom_objects()["test_lib>halved"] is halved
    layer = Gain(3.0, name="gain")
    entry = json.loads(json.dumps(serialize_keras_object(layer)))
    assert entry["registered_name"] == "test_lib>Gain" and entry["config"]["factor"] == 3.0
    for read in (deserialize_keras_object, layers.deserialize):
        copy = read(entry)
        assert type(copy) is Gain and copy.factor == 3.0 and copy.name == "gain"
    # A registered function is found by an activation argument too.
    dense = layers.Dense(2, activation="test_lib>halved")
    assert dense.activation is halved


def test_custom_objects_and_scopes_stand_in_for_a_registration():
    class Local(layers.Layer):
        def __init__(self, width=2, **kwargs):
            super().__init__(**kwargs)
            self.width = width

    entry = {"module": "mine", "class_name": "Local", "config": {"width": 5, "name": "l"},
             "registered_name": "mine>Local"}  # fmt: skip
    with pytest.raises(
        ValueError, match=r"unknown class 'mine>Local'.*register_keras_serializable"
    ):
        deserialize_keras_object(entry)
    assert deserialize_keras_object(entry, custom_objects={"mine>Local": Local}).width == 5
    with custom_object_scope({"Local": Local}):
        assert deserialize_keras_object(entry).width == 5
    with pytest.raises(ValueError, match="unknown class"):
        deserialize_keras_object(entry)  # the scope is closed


def test_a_layer_inside_a_layer_config_round_trips():
    outer = layers.Bidirectional(layers.LSTM(3, name="inner"), name="bi")
    outer.build((None, 5, 2))
    copy = layers.deserialize(json.loads(json.dumps(layers.serialize(outer))))
    assert type(copy) is layers.Bidirectional and copy.forward_layer.units == 3
    copy.set_weights(outer.get_weights())
    x = np.random.default_rng(0).standard_normal((2, 5, 2)).astype("float32")
    np.testing.assert_allclose(copy(x).numpy(), outer(x).numpy(), rtol=1e-6)


@pytest.mark.parametrize("kind", ["sequential", "functional"])
def test_models_round_trip_through_the_library(kind):
    if kind == "sequential":
        model = mk.Sequential([mk.Input((4,)), layers.Dense(3, name="h"), Gain(2.0, name="g")])
    else:
        x = mk.Input((4,))
        model = mk.Model(x, Gain(2.0, name="g")(layers.Dense(3, name="h")(x)))
    entry = json.loads(json.dumps(serialize_keras_object(model)))
    assert entry["module"] == "keras.models"
    copy = deserialize_keras_object(entry)
    copy.set_weights(model.get_weights())
    data = np.ones((2, 4), "float32")
    np.testing.assert_allclose(copy(data).numpy(), model(data).numpy(), rtol=1e-6)


def test_older_entries_without_a_module_are_read():
    layer = deserialize_keras_object({"class_name": "Dense", "config": {"units": 7}})
    assert type(layer) is layers.Dense and layer.units == 7


def test_lambdas_are_refused_both_ways():
    with pytest.raises(ValueError, match="a lambda cannot be saved"):
        serialize_keras_object(lambda x: x)
    with pytest.raises(ValueError, match="never runs code from a file"):
        deserialize_keras_object({"class_name": "__lambda__", "config": {"value": "..."}})


def test_malformed_entries_are_clear_errors():
    with pytest.raises(ValueError, match="needs a dict 'config'"):
        deserialize_keras_object({"module": "keras.layers", "class_name": "Dense", "config": 3})
    with pytest.raises(ValueError, match="unknown class 'NoSuchLayer' from keras.layers"):
        deserialize_keras_object({"module": "keras.layers", "class_name": "NoSuchLayer",
                                  "config": {}})  # fmt: skip
    with pytest.raises(ValueError, match="malformed entry"):
        deserialize_keras_object({"class_name": "__numpy__", "config": {"dtype": "float32"}})


@register_keras_serializable(package="test_lib")
class HalfInit(mk.initializers.Initializer):
    def __call__(self, shape, dtype=None):
        return np.full(shape, 0.5, dtype=dtype or "float32")

    def get_config(self):
        return {}


@register_keras_serializable(package="test_lib")
class Doubled(mk.regularizers.Regularizer):
    def __call__(self, x):
        return 2.0 * mk.ops.sum(x)

    def get_config(self):
        return {}


@register_keras_serializable(package="test_lib")
class Clipped(mk.constraints.Constraint):
    def __call__(self, w):
        return mk.ops.clip(w, -1.0, 1.0)

    def get_config(self):
        return {}


@register_keras_serializable(package="test_lib")
class ScaledMSE(mk.losses.Loss):
    def __init__(self, scale=2.0, **kwargs):
        super().__init__(**kwargs)
        self.scale = scale

    def call(self, y_true, y_pred):
        return self.scale * mk.ops.mean(mk.ops.square(y_true - y_pred), axis=-1)

    def get_config(self):
        return {**super().get_config(), "scale": self.scale}


@pytest.mark.parametrize(
    "family, obj, check",
    [
        (mk.initializers, HalfInit(), lambda o: isinstance(o, HalfInit)),
        (mk.regularizers, Doubled(), lambda o: isinstance(o, Doubled)),
        (mk.constraints, Clipped(), lambda o: isinstance(o, Clipped)),
        (mk.losses, ScaledMSE(scale=3.0), lambda o: isinstance(o, ScaledMSE) and o.scale == 3.0),
    ],
)
def test_every_family_finds_registered_classes_by_their_registered_name(family, obj, check):
    entry = family.serialize(obj)
    assert entry["registered_name"] == f"test_lib>{type(obj).__name__}"
    assert check(family.deserialize(json.loads(json.dumps(entry))))
    assert check(family.get(entry))


def test_a_model_of_custom_pieces_saves_and_loads_in_both_formats(tmp_path):
    def make():
        model = mk.Sequential([
            mk.Input((3,)),
            layers.Dense(2, kernel_initializer=HalfInit(), kernel_regularizer=Doubled(),
                         kernel_constraint=Clipped(), activation=halved),
        ])  # fmt: skip
        model.compile("sgd", ScaledMSE(scale=3.0))
        return model

    model = make()
    model.fit(np.ones((4, 3), "float32"), np.zeros((4, 2), "float32"), epochs=1, verbose=0)
    for name in ("m.minikeras", "m.keras"):
        model.save(tmp_path / name)
        loaded = mk.models.load_model(tmp_path / name)
        dense = loaded.layers[0]
        assert isinstance(dense.kernel_initializer, HalfInit)
        assert isinstance(dense.kernel_regularizer, Doubled)
        assert isinstance(dense.kernel_constraint, Clipped)
        assert dense.activation is halved
        assert isinstance(loaded.loss, ScaledMSE) and loaded.loss.scale == 3.0
        np.testing.assert_array_equal(dense.kernel.numpy(), model.layers[0].kernel.numpy())
