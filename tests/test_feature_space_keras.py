"""`mk.utils.FeatureSpace` against Keras 3's `keras.utils.FeatureSpace`, where Keras runs.

Keras's FeatureSpace needs TensorFlow for `adapt` and for calls (it turns data into a
`tf.data.Dataset` and tf tensors), and its lookup and hashing layers need TensorFlow even
to be made. Without TensorFlow, what runs is the float kinds' symbolic graph: these tests
adapt Keras's preprocessors the way its `adapt` does (a `Discretization` through
`update_state` on batches of 32 rows, a `Normalization` through `adapt`), then run
`keras.Model(get_inputs(), get_encoded_features())`, and compare with minikeras's space
adapted on the same data. Its configs are compared too. Skipped when Keras is absent.
"""

import numpy as np
import pytest

import minikeras as mk

keras = pytest.importorskip("keras")

FS = mk.utils.FeatureSpace


def _data(n=100):
    rng = np.random.default_rng(7)
    return {
        "plain": rng.normal(size=n).astype("float32"),
        "scaled": rng.uniform(0, 10, n).astype("float32"),
        "normal": rng.normal(50, 5, n).astype("float32"),
        "bins": rng.exponential(2.0, n).astype("float32"),
        "bin_ids": rng.uniform(size=n).astype("float32"),
    }


def _spaces(space_module, output_mode):
    kinds = space_module.utils.FeatureSpace
    return kinds(
        {
            "plain": "float",
            "scaled": kinds.float_rescaled(scale=0.5, offset=2.0),
            "normal": "float_normalized",
            "bins": kinds.float_discretized(num_bins=6),
            "bin_ids": kinds.float_discretized(num_bins=4, output_mode="int"),
        }
        if output_mode == "dict"
        else {
            "plain": "float",
            "scaled": kinds.float_rescaled(scale=0.5, offset=2.0),
            "normal": "float_normalized",
            "bins": kinds.float_discretized(num_bins=6),
        },
        output_mode=output_mode,
    )


def _adapt_keras(space, data):
    """What Keras's FeatureSpace.adapt does to these preprocessors, without tf.data."""
    for name in space._list_adaptable_preprocessors():
        layer = space.preprocessors[name]
        column = data[name][:, None]
        if hasattr(layer, "update_state"):
            layer.reset_state()
            for start in range(0, len(column), 32):  # Keras batches single samples by 32
                layer.update_state(column[start : start + 32])
            layer.finalize_state()
        else:
            layer.adapt(column)
    space._is_adapted = True


@pytest.mark.parametrize("output_mode", ["concat", "dict"])
def test_float_kinds_encode_as_keras_encodes_them(output_mode):
    data = _data()
    theirs = _spaces(keras, output_mode)
    _adapt_keras(theirs, data)
    keras_model = keras.Model(theirs.get_inputs(), theirs.get_encoded_features())
    expected = keras_model(
        {name: values[:, None] for name, values in data.items() if name in theirs.features}
    )

    ours = _spaces(mk, output_mode)
    ours.adapt({name: data[name] for name in ours.features}, verbose=0)
    np.testing.assert_allclose(
        ours.preprocessors["bins"].bin_boundaries,
        theirs.preprocessors["bins"].bin_boundaries,
        rtol=1e-5,  # (float32 interpolation: a last-bit difference)
    )
    got = ours({name: data[name] for name in ours.features})
    if output_mode == "concat":
        np.testing.assert_allclose(got.numpy(), np.asarray(expected), rtol=1e-5, atol=1e-5)
        return
    assert list(got) == list(expected)
    for name, value in expected.items():
        value = np.asarray(value)
        assert got[name].shape == value.shape, name
        np.testing.assert_allclose(got[name].numpy(), value, rtol=1e-5, atol=1e-5)
        assert str(ours.get_encoded_features()[name].dtype) == str(value.dtype), name


def test_configs_have_keras_shape_and_keras_reads_ours():
    ours = _spaces(mk, "concat")
    theirs = _spaces(keras, "concat")
    config, keras_config = ours.get_config(), theirs.get_config()
    assert set(config) - {"name"} == set(keras_config)
    for name, entry in config["features"].items():
        keras_entry = keras_config["features"][name]
        for key in ("module", "class_name", "registered_name"):
            assert entry[key] == keras_entry[key]
        assert entry["config"]["dtype"] == keras_entry["config"]["dtype"]
        assert entry["config"]["output_mode"] == keras_entry["config"]["output_mode"]
    cross = FS.cross(("plain", "scaled"), crossing_dim=8, output_mode="int")
    keras_cross = keras.utils.FeatureSpace.cross(
        ("plain", "scaled"), crossing_dim=8, output_mode="int"
    )
    assert cross.get_config() == keras_cross.get_config()
    # Keras rebuilds our config (the float kinds' layers exist in Keras without TensorFlow).
    rebuilt = keras.utils.FeatureSpace.from_config(mk.saving.serialize_keras_object(config))
    assert sorted(rebuilt.features) == sorted(ours.features)
    assert rebuilt.preprocessors["scaled"].scale == 0.5
    assert rebuilt.preprocessors["bins"].num_bins == 6
