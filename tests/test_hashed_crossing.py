"""HashedCrossing: TensorFlow's `sparse.cross_hashed` bins (which Keras 3 uses) in plain Python,
checked against TensorFlow's and Keras's published values; shapes, modes, configs, errors."""

import numpy as np
import pytest

import minikeras as mk
from minikeras import layers
from minikeras.layers.preprocessing import hashed_crossing

FEATURE_1 = np.array(["A", "B", "A", "B", "A"])
FEATURE_2 = np.array([101, 101, 101, 102, 102])


def test_tensorflow_cross_hash_values():
    # tensorflow/python/kernel_tests/sparse_ops/sparse_cross_op_test.py: three string
    # features crossed with the default key (no buckets: modulo 2**63 - 1; 100
    # buckets), and with the key plus one.
    features = [np.array([f"batch1-FC{i}-F1"]) for i in (1, 2, 3)]
    assert hashed_crossing.cross_hashed(features, 2**63 - 1).tolist() == [1971693436396284976]
    assert hashed_crossing.cross_hashed(features, 100).tolist() == [83]
    columns = [hashed_crossing._feature_values(f)[0] for f in features]
    value = hashed_crossing.HASH_KEY + 1
    for column in columns:
        value = hashed_crossing._fingerprint_cat64(value, column)
    assert value % (2**63 - 1) == 4847552627144134031


def test_keras_documented_bins_int_and_one_hot():
    # Keras 3's HashedCrossing docstring and tests: strings crossed with integers.
    got = layers.HashedCrossing(num_bins=5)((FEATURE_1, FEATURE_2))
    assert got.dtype == np.int64 and got.numpy().tolist() == [1, 4, 1, 1, 3]
    one_hot = layers.HashedCrossing(num_bins=5, output_mode="one_hot")((FEATURE_1, FEATURE_2))
    assert one_hot.dtype == np.float32
    np.testing.assert_array_equal(one_hot.numpy(), np.eye(5, dtype="float32")[[1, 4, 1, 1, 3]])


def test_shapes_scalar_column_and_order_of_inputs():
    layer = layers.HashedCrossing(num_bins=7)
    column = layer([FEATURE_1[:, None], FEATURE_2[:, None]]).numpy()
    assert (
        column.shape == (5, 1)
        and column[:, 0].tolist() == layer([FEATURE_1, FEATURE_2]).numpy().tolist()
    )
    scalar = layer([np.array("A"), np.array(101)])
    assert scalar.shape == () and int(scalar) == int(column[0, 0])
    swapped = layer([FEATURE_2.astype(str), FEATURE_1]).numpy()
    assert swapped.tolist() != column[:, 0].tolist()  # (not commutative)
    one_hot = layers.HashedCrossing(num_bins=4, output_mode="one_hot")
    assert one_hot.compute_output_shape([(None, 1), (None, 1)]) == (None, 4)
    assert one_hot.compute_output_shape([(None,), (None,)]) == (None, 4)
    assert layer.compute_output_shape([(None, 1), (None, 1)]) == (None, 1)
    assert layers.HashedCrossing(3, dtype="int32")([FEATURE_1, FEATURE_2]).dtype == np.int32


def test_three_features_fold_in_turn():
    third = np.array([-1, 0, 5, 2**40, -(2**62)])
    got = layers.HashedCrossing(num_bins=11)([FEATURE_1, FEATURE_2, third]).numpy()
    key = hashed_crossing.HASH_KEY
    for row, (a, b, c) in enumerate(zip(FEATURE_1, FEATURE_2, third)):
        value = key
        strings = hashed_crossing._feature_values(np.array([a]))
        for feature in (strings[0], int(b), int(c) % 2**64):  # two's complement, as TF
            value = hashed_crossing._fingerprint_cat64(value, feature)
        assert got[row] == value % 11


def test_config_round_trip_and_functional_model():
    layer = layers.HashedCrossing(num_bins=6, output_mode="one_hot", name="cross")
    config = layer.get_config()
    assert config["num_bins"] == 6 and config["output_mode"] == "one_hot"
    assert config["sparse"] is False
    assert layers.HashedCrossing.from_config(config).get_config() == config
    assert layers.HashedCrossing(3).get_config()["dtype"] == "int64"  # (as Keras)
    first, second = mk.Input((1,), dtype="int64"), mk.Input((1,), dtype="int64")
    model = mk.Model([first, second], layers.HashedCrossing(num_bins=5)([first, second]))
    ints = np.array([[3], [-4], [3]]), FEATURE_2[:3, None]
    got = model.predict(list(ints), verbose=0)
    assert got.tolist() == layers.HashedCrossing(num_bins=5)(ints).numpy().tolist()


def test_bad_arguments_and_inputs_raise_clear_errors():
    with pytest.raises(ValueError, match="output_mode"):
        layers.HashedCrossing(3, output_mode="multi_hot")
    with pytest.raises(ValueError, match="sparse"):
        layers.HashedCrossing(3, sparse=True)
    with pytest.raises(ValueError, match="num_bins"):
        layers.HashedCrossing(0)
    layer = layers.HashedCrossing(3)
    with pytest.raises(ValueError, match="at least two inputs"):
        layer([FEATURE_1])
    with pytest.raises(ValueError, match=r"shape \(\), \(batch,\) or \(batch, 1\)"):
        layer([np.ones((2, 2), "int64"), np.ones((2, 2), "int64")])
    with pytest.raises(ValueError, match="one shape"):
        layer([FEATURE_1, FEATURE_2[:4]])
    with pytest.raises((ValueError, TypeError), match="float"):
        layer([FEATURE_1, FEATURE_2.astype("float32")])
