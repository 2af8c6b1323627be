"""`mk.utils.FeatureSpace`: each feature kind, crosses, both output modes, adapt, calls,
functional models, configs and files, with values worked out by hand on small data; and
the keras-io example "Structured data classification with FeatureSpace" trained end to end."""

import json

import numpy as np
import pytest

import minikeras as mk
from minikeras.layers.preprocessing.feature_space import FeatureSpace

FS = mk.utils.FeatureSpace

DATA = {
    "size": np.array([1.0, 3.0, 5.0]),
    "price": np.array([10.0, 20.0, 30.0]),
    "temp": np.array([0.0, 20.0, 30.0]),
    "color": np.array(["red", "green", "red"]),
    "rooms": np.array([1, 2, 2]),
}


def _kinds_space(**kwargs):
    return FS(
        {
            "size": "float_normalized",
            "price": FS.float_rescaled(scale=0.1, offset=-1.0),
            "temp": FS.float_discretized(num_bins=3, bin_boundaries=[15.0, 25.0]),
            "color": "string_categorical",
            "rooms": "integer_categorical",
        },
        **kwargs,
    )


def test_it_is_exported_under_utils_as_in_keras():
    assert mk.utils.FeatureSpace is FeatureSpace
    assert "FeatureSpace" in mk.utils.__all__
    assert not hasattr(mk.layers, "FeatureSpace")  # (as keras.layers has none)


def test_concat_encodes_every_kind_by_hand():
    space = _kinds_space()
    space.adapt(DATA, verbose=0)
    # color: vocabulary by count [UNK, red, green]; rooms: [-1 (OOV), 2, 1].
    std = np.sqrt(8 / 3)  # size: mean 3, population variance 8/3
    expected = np.array(
        [
            # color (3) | price (1) | rooms (3) | size (1) | temp (3), names sorted
            [0, 1, 0, 0.0, 0, 0, 1, -2 / std, 1, 0, 0],
            [0, 0, 1, 1.0, 0, 1, 0, 0.0, 0, 1, 0],
            [0, 1, 0, 2.0, 0, 1, 0, 2 / std, 0, 0, 1],
        ],
        dtype="float32",
    )
    out = space(DATA)
    assert out.dtype == "float32"
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-6, atol=1e-6)
    # Out-of-vocabulary values take the OOV index 0.
    unseen = {"size": [3.0], "price": [0.0], "temp": [99.0], "color": ["blue"], "rooms": [7]}
    np.testing.assert_allclose(space(unseen).numpy()[0], [1, 0, 0, -1, 1, 0, 0, 0, 0, 0, 1])


def test_dict_mode_keeps_each_feature_and_int_outputs():
    space = FS(
        {
            "color": FS.string_categorical(output_mode="int"),
            "rooms": FS.integer_categorical(num_oov_indices=0, output_mode="int"),
            "temp": FS.float_discretized(3, bin_boundaries=[15.0, 25.0], output_mode="int"),
            "size": "float",
        },
        output_mode="dict",
    )
    data = {key: DATA[key] for key in ("color", "rooms", "temp", "size")}
    space.adapt(data, verbose=0)
    out = space(data)
    assert list(out) == ["color", "rooms", "size", "temp"]
    np.testing.assert_array_equal(out["color"].numpy(), [[1], [2], [1]])
    np.testing.assert_array_equal(out["rooms"].numpy(), [[1], [0], [0]])  # vocabulary [2, 1]
    np.testing.assert_array_equal(out["temp"].numpy(), [[0], [1], [2]])
    np.testing.assert_array_equal(out["size"].numpy(), [[1.0], [3.0], [5.0]])
    assert out["color"].dtype == "int64" and out["size"].dtype == "float32"
    encoded = space.get_encoded_features()
    assert {key: str(value.dtype) for key, value in encoded.items()} == {
        "color": "int64",
        "rooms": "int64",
        "size": "float32",
        "temp": "int32",
    }


def test_symbolic_outputs_of_the_integer_preprocessors_have_their_dtypes():
    # Keras 3's compute_output_spec: lookups int64, Hashing int64, Discretization int32.
    text, number = mk.Input((1,), dtype=str), mk.Input((1,), dtype="float32")
    layers = mk.layers
    specs = {
        "string": layers.StringLookup(vocabulary=["a"])(text),
        "integer": layers.IntegerLookup(vocabulary=[3])(mk.Input((1,), dtype="int64")),
        "inverted": layers.StringLookup(vocabulary=["a"], invert=True)(
            mk.Input((1,), dtype="int64")
        ),
        "one_hot": layers.StringLookup(vocabulary=["a"], output_mode="one_hot")(text),
        "hashing": layers.Hashing(4)(text),
        "hashing_one_hot": layers.Hashing(4, output_mode="one_hot")(text),
        "bins": layers.Discretization(bin_boundaries=[0.0])(number),
        "bins_count": layers.Discretization(bin_boundaries=[0.0], output_mode="count")(number),
    }
    assert {key: str(spec.dtype) for key, spec in specs.items()} == {
        "string": "int64",
        "integer": "int64",
        "inverted": "str",
        "one_hot": "float32",
        "hashing": "int64",
        "hashing_one_hot": "float32",
        "bins": "int32",
        "bins_count": "float32",
    }
    # What the layers return when run agrees.
    model = mk.Model([text, number], [specs["string"], specs["hashing"], specs["bins"]])
    outputs = model([np.array([["a"]]), np.array([[1.0]], dtype="float32")])
    assert [str(out.dtype) for out in outputs] == ["int64", "int64", "int32"]


def test_one_sample_of_scalars_loses_the_batch_axis():
    space = _kinds_space()
    space.adapt(DATA, verbose=0)
    sample = {key: values[1] for key, values in DATA.items()}
    one = space(sample)
    assert one.shape == (11,)
    np.testing.assert_allclose(one.numpy(), space(DATA).numpy()[1], atol=1e-6)
    as_dict = _kinds_space(output_mode="dict")
    as_dict.adapt(DATA, verbose=0)
    out = as_dict(sample)
    assert out["color"].shape == (3,) and out["size"].shape == (1,)
    # A column of shape (batch, 1) reads like (batch,).
    columns = {key: values[:, None] for key, values in DATA.items()}
    np.testing.assert_array_equal(space(columns).numpy(), space(DATA).numpy())


def test_crosses_hash_the_preprocessed_values():
    space = FS(
        {"color": "string_categorical", "rooms": "integer_categorical"},
        crosses=[
            ("color", "rooms"),
            FS.cross(("rooms", "color"), crossing_dim=5, output_mode="int"),
        ],
        crossing_dim=4,
        output_mode="dict",
    )
    data = {key: DATA[key] for key in ("color", "rooms")}
    space.adapt(data, verbose=0)
    out = space(data)
    assert list(out) == ["color", "rooms", "color_X_rooms", "rooms_X_color"]
    color = np.array([[1], [2], [1]])  # the lookup indices, which Keras crosses too
    rooms = np.array([[2], [1], [1]])
    bins = mk.layers.HashedCrossing(4)([color, rooms]).numpy()[:, 0]
    np.testing.assert_array_equal(out["color_X_rooms"].numpy(), np.eye(4)[bins])
    np.testing.assert_array_equal(
        out["rooms_X_color"].numpy(), mk.layers.HashedCrossing(5)([rooms, color]).numpy()
    )
    assert space.crossers["color_X_rooms"].num_bins == 4


def test_hashed_features_and_the_default_widths():
    space = FS(
        {
            "color": "string_hashed",
            "rooms": FS.integer_hashed(num_bins=5),
            "t": "float_discretized",
        },
        output_mode="dict",
        hashing_dim=8,
        num_discretization_bins=4,
    )
    tiled = {key: np.resize(DATA[key], 40) for key in ("color", "rooms")}
    space.adapt({**tiled, "t": np.arange(40.0)}, verbose=0)
    out = space(
        {"color": DATA["color"], "rooms": DATA["rooms"], "t": np.array([0.0, 39.0])[[0, 1, 1]]}
    )
    np.testing.assert_array_equal(
        out["color"].numpy(), np.eye(8)[mk.layers.Hashing(8)(DATA["color"]).numpy()]
    )
    np.testing.assert_array_equal(
        out["rooms"].numpy(), np.eye(5)[mk.layers.Hashing(5)(DATA["rooms"]).numpy()]
    )
    assert out["t"].shape == (3, 4)
    np.testing.assert_array_equal(out["t"].numpy().argmax(axis=1), [0, 3, 3])


def test_a_custom_feature_with_its_own_layer():
    # Keras's docstring example: TF-IDF of a short text, through TextVectorization.
    layer = mk.layers.TextVectorization(output_mode="tf_idf")
    space = FS({"text": FS.feature(preprocessor=layer, dtype="string", output_mode="float")})
    data = {"text": ["1st string", "2nd string", "3rd string"]}
    space.adapt(data, verbose=0)
    out = space(data).numpy()
    # idf = log(1 + documents / (1 + documents holding the token)).
    common, own = np.log(1 + 3 / 4), np.log(1 + 3 / 2)
    assert out.shape == (3, 5)
    np.testing.assert_allclose(out[:, 1], common, rtol=1e-6)
    np.testing.assert_allclose(np.sort(out[:, 2:], axis=1)[:, -1], own, rtol=1e-6)
    np.testing.assert_allclose(out[:, 0], 0.0)


def test_adapt_reads_dicts_batches_pairs_and_single_samples_alike():
    rng = np.random.default_rng(0)
    data = {"x": rng.normal(size=70), "c": rng.choice(["a", "b", "c"], size=70)}

    def space():
        return FS(
            {"x": "float_normalized", "c": "string_categorical", "d": FS.float_discretized(5)}
        )

    data["d"] = rng.uniform(size=70)
    batches = [{key: v[i : i + 32] for key, v in data.items()} for i in range(0, 70, 32)]
    ways = {
        "dict": data,
        "batches": batches,
        "pairs": ((batch, np.zeros(len(batch["x"]))) for batch in batches),
        "samples": ({key: v[i] for key, v in data.items()} for i in range(70)),
    }
    reference = mk.layers.Discretization(num_bins=5)
    reference.adapt([data["d"][:32, None], data["d"][32:64, None], data["d"][64:, None]])
    for way, dataset in ways.items():
        adapted = space()
        adapted.adapt(dataset, verbose=0)
        normalization = adapted.preprocessors["x"]
        np.testing.assert_allclose(normalization.adapt_mean.numpy(), [data["x"].mean()], rtol=1e-5)
        np.testing.assert_allclose(
            normalization.adapt_variance.numpy(), [data["x"].var()], rtol=1e-5
        )
        counts = {t: int((data["c"] == t).sum()) for t in "abc"}
        expected = ["[UNK]", *sorted(counts, key=lambda t: (counts[t], t), reverse=True)]
        assert adapted.preprocessors["c"].get_vocabulary() == expected, way
        assert adapted.preprocessors["d"].bin_boundaries == reference.bin_boundaries, way


def test_adapt_shows_progress_when_verbose(capsys):
    space = FS({"x": "float_normalized"})
    space.adapt({"x": np.arange(70.0)})
    assert "3/Unknown" in capsys.readouterr().out  # three batches of up to 32 rows


def test_a_space_with_nothing_to_learn_needs_no_adapt():
    space = FS({"a": "float", "b": FS.float_rescaled(scale=2.0)})
    np.testing.assert_array_equal(space({"a": [1.0], "b": [3.0]}).numpy(), [[1.0, 6.0]])
    assert space.get_encoded_features().shape == (None, 2)


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda: FS({}), "non-empty dict"),
        (lambda: FS({"a": "floats"}), "unknown kind 'floats'"),
        (lambda: FS({"a": "float"}, output_mode="list"), "'concat' or 'dict'"),
        (lambda: FS({"a": "float"}, crosses=[("a", "b")]), r"unknown features \['b'\]"),
        (lambda: FS.cross(("a",), 4), "two or more"),
        (lambda: FS.cross(("a", "b"), 0), "crossing_dim"),
        (lambda: FS.feature("float64", mk.layers.Identity(), "float"), "`dtype`"),
        (lambda: FS.feature("float32", mk.layers.Identity(), "multi_hot"), "`output_mode`"),
    ],
)
def test_bad_arguments_are_named(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_bad_uses_are_named_before_anything_changes():
    space = _kinds_space()
    with pytest.raises(ValueError, match=r"call adapt\(data\)"):
        space(DATA)
    with pytest.raises(ValueError, match="dict of feature arrays"):
        space.adapt(np.ones(3), verbose=0)
    with pytest.raises(ValueError, match=r"no values for the features \['rooms'\]"):
        space.adapt({k: v for k, v in DATA.items() if k != "rooms"}, verbose=0)
    with pytest.raises(TypeError, match="feature 'size'.*takes numbers"):
        space.adapt({**DATA, "size": np.array(["a", "b", "c"])}, verbose=0)
    assert space.preprocessors["color"].get_vocabulary() == ["[UNK]"]  # nothing learnt
    space.adapt(DATA, verbose=0)
    with pytest.raises(ValueError, match="does not have: \\['extra'\\]"):
        space({**DATA, "extra": [1, 2, 3]})
    with pytest.raises(ValueError, match="different numbers of samples"):
        space({**DATA, "size": [1.0]})
    with pytest.raises(ValueError, match="only be called on a dict"):
        space([1.0, 2.0])
    with pytest.raises(TypeError, match="feature 'rooms'.*takes integers"):
        space({**DATA, "rooms": np.array([1.5, 2.0, 2.0])})


def test_concat_refuses_features_left_as_integers_or_of_unknown_width():
    space = FS({"c": FS.string_categorical(output_mode="int"), "x": "float"})
    with pytest.raises(ValueError, match="cannot concatenate feature 'c'.*int64"):
        space.adapt({"c": DATA["color"], "x": DATA["size"]}, verbose=0)
    odd = FS({"x": FS.feature("float32", mk.layers.Rescaling(2.0), "one_hot")})
    with pytest.raises(ValueError, match="feature 'x' has output_mode='one_hot'.*Rescaling"):
        odd({"x": [1.0]})


def test_a_functional_model_on_the_encoded_features():
    space = _kinds_space(crosses=[("color", "rooms")], crossing_dim=4)
    space.adapt(DATA, verbose=0)
    inputs, encoded = space.get_inputs(), space.get_encoded_features()
    assert sorted(inputs) == sorted(DATA) and inputs["color"].shape == (None, 1)
    assert encoded.shape == (None, 15)
    model = mk.Model(inputs, encoded)
    columns = {key: values[:, None] for key, values in DATA.items()}
    np.testing.assert_allclose(model(columns).numpy(), space(DATA).numpy(), atol=1e-6)


def test_config_round_trip_keeps_vocabularies_and_weights_keep_statistics():
    space = _kinds_space(crosses=[FS.cross(("color", "rooms"), 8)], name="space")
    space.adapt(DATA, verbose=0)
    config = space.get_config()
    json.dumps(mk.saving.serialize_keras_object(config))
    assert config["features"]["color"]["class_name"] == "Feature"
    assert config["crosses"][0]["config"]["feature_names"] == ("color", "rooms")
    again = FS.from_config(config)
    assert again.name == "space" and again.crosses[0].crossing_dim == 8
    assert again.preprocessors["color"].get_vocabulary() == ["[UNK]", "red", "green"]
    with pytest.raises(ValueError, match="call adapt"):
        again(DATA)  # the normalization's mean and variance are weights, not config
    again.build_from_config(space.get_build_config())
    again.set_weights(space.get_weights())
    np.testing.assert_array_equal(again(DATA).numpy(), space(DATA).numpy())


@pytest.mark.parametrize("suffix", ["minikeras", "keras"])
def test_save_and_load_model(tmp_path, suffix):
    space = _kinds_space(crosses=[("color", "rooms")], output_mode="dict")
    space.adapt(DATA, verbose=0)
    path = tmp_path / f"space.{suffix}"
    space.save(path)
    loaded = mk.saving.load_model(path)
    assert isinstance(loaded, FeatureSpace)
    for key, value in space(DATA).items():
        np.testing.assert_array_equal(loaded(DATA)[key].numpy(), value.numpy())


# ------------------------------------------------- the keras-io example, end to end


def _heart_data(n, rng):
    """Synthetic rows with the heart-disease columns; the target follows a simple rule."""
    data = {
        "sex": rng.integers(0, 2, n),
        "cp": rng.integers(0, 5, n),
        "fbs": rng.integers(0, 2, n),
        "restecg": rng.integers(0, 3, n),
        "exang": rng.integers(0, 2, n),
        "ca": rng.integers(0, 4, n),
        "thal": rng.choice(["normal", "fixed", "reversible"], n),
        "age": rng.uniform(30, 75, n),
        "trestbps": rng.normal(130, 15, n),
        "chol": rng.normal(240, 40, n),
        "thalach": rng.normal(150, 20, n),
        "oldpeak": rng.exponential(1.0, n),
        "slope": rng.integers(1, 4, n).astype("float64"),
    }
    target = (data["thal"] == "reversible") | ((data["age"] > 55) & (data["sex"] == 1))
    return data, target.astype("float32")


def test_the_keras_io_structured_data_example_trains():
    mk.utils.set_random_seed(1337)
    rng = np.random.default_rng(1337)
    train, train_y = _heart_data(240, rng)
    feature_space = FS(
        features={
            **{
                name: FS.integer_categorical(num_oov_indices=0)
                for name in ("sex", "cp", "fbs", "restecg", "exang", "ca")
            },
            "thal": FS.string_categorical(num_oov_indices=0),
            "age": FS.float_discretized(num_bins=30),
            **{
                name: FS.float_normalized()
                for name in ("trestbps", "chol", "thalach", "oldpeak", "slope")
            },
        },
        crosses=[
            FS.cross(feature_names=("sex", "age"), crossing_dim=64),
            FS.cross(feature_names=("thal", "ca"), crossing_dim=16),
        ],
        output_mode="concat",
    )
    # The example adapts on a dataset of (features, label) batches, mapped to the features.
    batches = [
        ({key: v[i : i + 32] for key, v in train.items()}, train_y[i : i + 32])
        for i in range(0, 240, 32)
    ]
    feature_space.adapt(x for x, _ in batches)
    preprocessed = feature_space(train)
    width = 2 + 5 + 2 + 3 + 2 + 4 + 3 + 30 + 5 + 64 + 16  # one-hots, normalized, crosses
    assert preprocessed.shape == (240, width) and preprocessed.dtype == "float32"

    dict_inputs = feature_space.get_inputs()
    encoded_features = feature_space.get_encoded_features()
    x = mk.layers.Dense(32, activation="relu")(encoded_features)
    x = mk.layers.Dropout(0.5)(x)
    predictions = mk.layers.Dense(1, activation="sigmoid")(x)
    training_model = mk.Model(inputs=encoded_features, outputs=predictions)
    training_model.compile(optimizer="adam", loss="binary_crossentropy", metrics=["accuracy"])
    inference_model = mk.Model(inputs=dict_inputs, outputs=predictions)

    history = training_model.fit(preprocessed.numpy(), train_y, epochs=30, batch_size=32, verbose=0)
    assert history.history["loss"][-1] < 0.6 * history.history["loss"][0]
    assert history.history["accuracy"][-1] > 0.9

    sample = {
        "age": 60,
        "sex": 1,
        "cp": 1,
        "trestbps": 145,
        "chol": 233,
        "fbs": 1,
        "restecg": 2,
        "thalach": 150,
        "exang": 0,
        "oldpeak": 2.3,
        "slope": 3,
        "ca": 0,
        "thal": "fixed",
    }
    # minikeras's functional models take (batch, 1) columns for (None, 1) inputs.
    input_dict = {name: np.array([[value]]) for name, value in sample.items()}
    probability = inference_model(input_dict).numpy()
    np.testing.assert_allclose(
        probability, training_model(feature_space(sample).numpy()[None]).numpy(), rtol=1e-6
    )
    assert probability[0, 0] > 0.5  # older than 55 and male: the rule says 1
