"""StringLookup and IntegerLookup: index tables worked out by hand, adapt and its ordering,
OOV indices, masks, every output mode (tf-idf by hand), invert, configs and errors."""

import math

import numpy as np
import pytest

import minikeras as mk
from minikeras.layers import IntegerLookup, StringLookup


def test_string_lookup_table_with_mask_and_oov():
    layer = StringLookup(vocabulary=["a", "b", "c"], mask_token="")
    assert layer.get_vocabulary() == ["", "[UNK]", "a", "b", "c"]
    assert layer.vocabulary_size() == 5
    out = layer(np.array([["a", "", "c"], ["zzz", "b", "a"]]))
    assert out.dtype == np.int64
    np.testing.assert_array_equal(out.numpy(), [[2, 0, 4], [1, 3, 2]])


def test_string_lookup_takes_lists_bytes_and_object_arrays():
    layer = StringLookup(vocabulary=["a", "b"])
    np.testing.assert_array_equal(layer([["b", "a"]]).numpy(), [[2, 1]])
    np.testing.assert_array_equal(layer(np.array([b"b", b"q"])).numpy(), [2, 0])
    np.testing.assert_array_equal(layer(np.array(["a"], dtype=object)).numpy(), [1])


def test_adapt_orders_by_count_then_token_descending_and_caps_max_tokens():
    layer = StringLookup()
    layer.adapt(np.array([["b", "a", "b"], ["c", "a", "d"], ["b", "e", "e"]]))
    # counts: b 3, a 2, e 2, c 1, d 1; ties go to the larger token first (Keras's order).
    assert layer.get_vocabulary() == ["[UNK]", "b", "e", "a", "d", "c"]
    capped = StringLookup(max_tokens=3)
    capped.adapt(np.array([["b", "a", "b"], ["c", "a", "d"]]))
    assert capped.get_vocabulary() == ["[UNK]", "b", "a"]
    batches = StringLookup(mask_token="")
    batches.adapt(iter([np.array(["x", "", "y", "x"]), np.array(["y", "y"])]))
    assert batches.get_vocabulary() == ["", "[UNK]", "y", "x"]  # the mask is not learnt


def test_several_oov_indices_are_consistent():
    layer = StringLookup(vocabulary=["a"], num_oov_indices=3)
    words = np.array([f"w{i}" for i in range(60)])
    first, second = layer(words).numpy(), layer(words).numpy()
    np.testing.assert_array_equal(first, second)
    assert set(first.tolist()) == {0, 1, 2}
    assert layer(np.array(["a"])).numpy()[0] == 3
    ints = IntegerLookup(vocabulary=[100], num_oov_indices=3)
    np.testing.assert_array_equal(ints(np.array([7, 8, 9, 100])).numpy(), [1, 2, 0, 3])  # x % 3


def test_no_oov_indices_refuses_unknown_tokens():
    layer = StringLookup(vocabulary=["a"], num_oov_indices=0)
    np.testing.assert_array_equal(layer(np.array(["a"])).numpy(), [0])
    with pytest.raises(ValueError, match=r"StringLookup 'string_lookup\w*' has num_oov_indices=0"):
        layer(np.array(["a", "b"]))


def test_output_modes_by_hand():
    vocabulary = ["a", "b", "c"]
    data = np.array([["a", "b", "b"], ["c", "x", "a"]])
    one_hot = StringLookup(vocabulary=vocabulary, output_mode="one_hot")
    np.testing.assert_array_equal(
        one_hot(np.array([["a"], ["x"]])).numpy(), [[0, 1, 0, 0], [1, 0, 0, 0]]
    )
    multi = StringLookup(vocabulary=vocabulary, output_mode="multi_hot")(data).numpy()
    np.testing.assert_array_equal(multi, [[0, 1, 1, 0], [1, 1, 0, 1]])
    count = StringLookup(vocabulary=vocabulary, output_mode="count")(data).numpy()
    np.testing.assert_array_equal(count, [[0, 1, 2, 0], [1, 1, 0, 1]])
    padded = StringLookup(vocabulary=vocabulary, output_mode="count", max_tokens=6,
                          pad_to_max_tokens=True)  # fmt: skip
    assert padded(data).shape == (2, 6)
    assert padded.compute_output_shape((None, 3)) == (None, 6)


def test_mask_tokens_are_dropped_in_count_modes():
    layer = StringLookup(vocabulary=["a"], mask_token="", output_mode="count")
    assert layer.get_vocabulary() == ["[UNK]", "a"]  # no mask index outside "int" mode
    np.testing.assert_array_equal(layer(np.array([["a", "", "", "q"]])).numpy(), [[1, 1]])


def test_tf_idf_adapted_by_hand():
    docs = np.array([["a", "a", "b"], ["a", "c", "c"], ["b", "b", "b"]])
    layer = StringLookup(output_mode="tf_idf")
    layer.adapt(docs)
    # counts: b 4, a 3, c 2. Document frequencies: a 2, b 2, c 1, of 3 documents.
    assert layer.get_vocabulary() == ["[UNK]", "b", "a", "c"]
    idf_a = idf_b = math.log(1 + 3 / 3)
    idf_c = math.log(1 + 3 / 2)
    idf_oov = (idf_a + idf_b + idf_c) / 3
    out = layer(np.array([["a", "a", "c", "z"]])).numpy()
    np.testing.assert_allclose(out, [[idf_oov, 0.0, 2 * idf_a, idf_c]], rtol=1e-6)
    clone = StringLookup.from_config(layer.get_config())
    np.testing.assert_allclose(clone(np.array([["a", "a", "c", "z"]])).numpy(), out, rtol=1e-6)


def test_tf_idf_with_given_weights():
    layer = StringLookup(vocabulary=["a", "b"], idf_weights=[0.5, 1.5], output_mode="tf_idf")
    # The OOV index gets the mean weight, 1.0.
    np.testing.assert_allclose(layer(np.array([["b", "b", "q"]])).numpy(), [[1.0, 0.0, 3.0]])
    with pytest.raises(ValueError, match="needs `idf_weights`"):
        StringLookup(vocabulary=["a"], output_mode="tf_idf")


def test_invert_maps_indices_back():
    layer = StringLookup(vocabulary=["a", "b"], mask_token="", invert=True)
    out = layer(np.array([[0, 1, 2, 3, 9]])).numpy()
    assert out.tolist() == [["", "[UNK]", "a", "b", "[UNK]"]]
    ints = IntegerLookup(vocabulary=[12, 36], invert=True)
    np.testing.assert_array_equal(ints(np.array([2, 0, 1])).numpy(), [36, -1, 12])


def test_integer_lookup_adapt_and_mask():
    layer = IntegerLookup(mask_token=0)
    layer.adapt(np.array([[5, 5, 0], [7, 5, 9], [7, 0, 0]]))
    assert layer.get_vocabulary() == [0, -1, 5, 7, 9]
    np.testing.assert_array_equal(layer(np.array([[5, 0, 4]])).numpy(), [[2, 0, 1]])


def test_vocabulary_file_and_set_vocabulary(tmp_path):
    path = tmp_path / "vocab.txt"
    path.write_text("[UNK]\nx\ny\n")  # special tokens at the front are recognised
    layer = StringLookup(vocabulary=str(path))
    assert layer.get_vocabulary() == ["[UNK]", "x", "y"]
    layer.set_vocabulary(["p", "q", "r"])
    np.testing.assert_array_equal(layer(np.array(["r"])).numpy(), [3])


def test_configs_round_trip_with_the_vocabulary():
    layer = IntegerLookup(vocabulary=[3, 1, 2], num_oov_indices=2, mask_token=0)
    config = layer.get_config()
    assert config["vocabulary"] == [3, 1, 2]
    assert IntegerLookup.from_config(config).get_config() == config
    adapted = StringLookup(max_tokens=10, output_mode="count")
    adapted.adapt(["a", "b", "a"])
    clone = StringLookup.from_config(adapted.get_config())
    assert clone.get_vocabulary() == adapted.get_vocabulary()
    assert clone.get_config() == adapted.get_config()


def test_in_a_model_called_on_strings():
    # (fit/predict refuse string arrays in data_adapter; calling the model works.)
    layer = StringLookup(vocabulary=["a", "b"], output_mode="multi_hot")
    model = mk.Sequential([layer, mk.layers.Dense(1, kernel_initializer="ones")])
    np.testing.assert_allclose(model(np.array([["a", "b"], ["a", "q"]])).numpy(), [[2.0], [2.0]])


def test_errors_name_the_layer_and_argument():
    with pytest.raises(ValueError, match="StringLookup: `max_tokens` must be None or an int > 1"):
        StringLookup(max_tokens=1)
    with pytest.raises(ValueError, match="StringLookup: `num_oov_indices` must be an int >= 0"):
        StringLookup(num_oov_indices=-1)
    with pytest.raises(ValueError, match="StringLookup: `output_mode` must be one of"):
        StringLookup(output_mode="bag")
    with pytest.raises(ValueError, match="`invert=True` needs output_mode='int'"):
        StringLookup(invert=True, output_mode="count")
    with pytest.raises(ValueError, match="repeats the tokens"):
        StringLookup(vocabulary=["a", "a"])
    with pytest.raises(ValueError, match="mask token '' may only lead"):
        StringLookup(vocabulary=["a", ""], mask_token="")
    with pytest.raises(ValueError, match="over max_tokens=3"):
        StringLookup(vocabulary=["a", "b", "c"], max_tokens=3)
    with pytest.raises(ValueError, match="cannot adapt"):
        StringLookup(vocabulary=["a"]).adapt(["b"])
    with pytest.raises(TypeError, match="IntegerLookup: expected integers"):
        IntegerLookup(vocabulary=[1.5])
    with pytest.raises(ValueError, match="IntegerLookup: `oov_method` must be one of"):
        IntegerLookup(oov_method="modulo")
