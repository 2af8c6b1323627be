"""TextVectorization: standardize, split and ngrams by hand, adapt order, int sequences with
padding and truncation, multi_hot/count/tf_idf vectors (tf-idf by hand), configs, errors."""

import math

import numpy as np
import pytest

from minikeras.layers import TextVectorization


def test_default_standardize_and_split_by_hand():
    layer = TextVectorization(vocabulary=["hello", "world", "it's"])
    # Lower-cased, ASCII punctuation stripped ("it's" -> "its", unknown), split on whitespace.
    out = layer(np.array(["Hello,   WORLD!", "it's  hello"])).numpy()
    np.testing.assert_array_equal(out, [[2, 3], [1, 2]])  # padded to the longest: both 2 long


def test_standardize_and_split_options():
    text = np.array(["Ab, c!"])
    lower = TextVectorization(standardize="lower", split=None, vocabulary=["ab, c!"])
    np.testing.assert_array_equal(lower(text).numpy(), [[2]])
    strip = TextVectorization(standardize="strip_punctuation", vocabulary=["Ab", "c"])
    np.testing.assert_array_equal(strip(text).numpy(), [[2, 3]])
    chars = TextVectorization(standardize=None, split="character", vocabulary=["A", "b", ","])
    np.testing.assert_array_equal(chars(text).numpy(), [[2, 3, 4, 1, 1, 1]])  # " ", "c", "!"
    custom = TextVectorization(
        standardize=lambda s: s.replace("-", " "), split=lambda s: s.split("|"), vocabulary=["a b"]
    )
    np.testing.assert_array_equal(custom(np.array(["a-b|c"])).numpy(), [[2, 1]])


def test_ngrams_up_to_n_and_chosen_sizes():
    layer = TextVectorization(ngrams=2, output_mode="count")
    layer.adapt(["a b c"])
    vocabulary = layer.get_vocabulary()
    assert sorted(vocabulary[1:]) == ["a", "a b", "b", "b c", "c"]
    only_pairs = TextVectorization(ngrams=(2,), vocabulary=["a b", "b c"])
    np.testing.assert_array_equal(only_pairs(np.array(["a b c d"])).numpy(), [[2, 3, 1]])


def test_adapt_order_and_output_sequence_length():
    layer = TextVectorization(output_sequence_length=3)
    layer.adapt(np.array(["the cat sat", "the dog", "The end"]))
    # the: 3; then single counts in decreasing token order.
    assert layer.get_vocabulary() == ["", "[UNK]", "the", "sat", "end", "dog", "cat"]
    out = layer(np.array([["the cat sat on the mat"], ["dog"]])).numpy()  # (batch, 1) works too
    np.testing.assert_array_equal(out, [[2, 6, 3], [5, 0, 0]])
    assert layer.compute_output_shape((None,)) == (None, 3)
    assert layer(np.array(["", "a"])).shape == (2, 3)


def test_max_tokens_counts_the_special_indices():
    layer = TextVectorization(max_tokens=4)
    layer.adapt(["x x x y y z"])
    assert layer.get_vocabulary() == ["", "[UNK]", "x", "y"]
    assert layer.vocabulary_size() == 4


def test_multi_hot_count_and_tf_idf_by_hand():
    docs = ["a a b", "a c c", "b b b"]
    multi = TextVectorization(output_mode="multi_hot")
    multi.adapt(docs)
    assert multi.get_vocabulary() == ["[UNK]", "b", "a", "c"]  # no padding index here
    np.testing.assert_array_equal(multi(np.array(["a z a", ""])).numpy(), [[1, 0, 1, 0], [0] * 4])
    tf_idf = TextVectorization(output_mode="tf_idf")
    tf_idf.adapt(docs)
    idf_a = idf_b = math.log(1 + 3 / (1 + 2))
    idf_c = math.log(1 + 3 / (1 + 1))
    oov = (idf_a + idf_b + idf_c) / 3
    out = tf_idf(np.array(["c c a q"])).numpy()
    np.testing.assert_allclose(out, [[oov, 0.0, idf_a, 2 * idf_c]], rtol=1e-6)
    assert tf_idf.compute_output_shape((None,)) == (None, 4)


def test_adapt_on_an_iterable_of_batches():
    layer = TextVectorization()
    layer.adapt(iter([np.array(["b a"]), np.array(["b", "c b"])]))
    assert layer.get_vocabulary() == ["", "[UNK]", "b", "c", "a"]


def test_config_round_trip_keeps_the_vocabulary():
    layer = TextVectorization(max_tokens=10, ngrams=(1, 2), output_mode="tf_idf")
    layer.adapt(["a b", "b c"])
    clone = TextVectorization.from_config(layer.get_config())
    assert clone.get_vocabulary() == layer.get_vocabulary()
    text = np.array(["a b c"])
    np.testing.assert_allclose(clone(text).numpy(), layer(text).numpy(), rtol=1e-6)
    assert clone.get_config() == layer.get_config()


def test_errors_name_the_layer_and_argument():
    with pytest.raises(ValueError, match="TextVectorization: `standardize` must be one of"):
        TextVectorization(standardize="upper")
    with pytest.raises(ValueError, match="TextVectorization: `split` must be one of"):
        TextVectorization(split="comma")
    with pytest.raises(ValueError, match="TextVectorization: `output_mode` must be one of"):
        TextVectorization(output_mode="one_hot")
    with pytest.raises(ValueError, match="TextVectorization: `ngrams` must be None"):
        TextVectorization(ngrams=0)
    with pytest.raises(ValueError, match="`output_sequence_length` is only used"):
        TextVectorization(output_mode="count", output_sequence_length=3)
    with pytest.raises(ValueError, match=r"TextVectorization 'text_vectorization\w*' splits"):
        TextVectorization(vocabulary=["a"])(np.array([["a", "b"]]))
    with pytest.raises(TypeError, match="takes strings"):
        TextVectorization(vocabulary=["a"])(np.array([1, 2]))


def test_a_model_holding_it_saves_and_loads(tmp_path):
    from minikeras import Sequential, layers, saving

    vectorize = TextVectorization(output_mode="multi_hot")
    vectorize.adapt(["red green", "green blue"])
    model = Sequential([vectorize, layers.Dense(2)])
    text = np.array(["green red", "blue"])
    expected = model(text).numpy()
    model.save(tmp_path / "text.keras")
    loaded = saving.load_model(tmp_path / "text.keras")
    assert loaded.layers[0].get_vocabulary() == vectorize.get_vocabulary()
    np.testing.assert_allclose(loaded(text).numpy(), expected, rtol=1e-6)
