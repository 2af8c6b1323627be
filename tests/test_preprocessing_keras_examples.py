"""The examples in Keras 3's own docstrings of the preprocessing layers, with Keras's printed
outputs as the expected values: a reference without Keras installed."""

import numpy as np

from minikeras.layers import (
    CategoryEncoding,
    Discretization,
    IntegerLookup,
    Normalization,
    StringLookup,
    TextVectorization,
)

VOCAB = ["a", "b", "c", "d"]
DATA = [["a", "c", "d"], ["d", "z", "b"]]
DATA4 = [["a", "c", "d", "d"], ["d", "z", "b", "z"]]


def test_string_lookup_examples():
    np.testing.assert_array_equal(
        StringLookup(vocabulary=VOCAB)(DATA).numpy(), [[1, 3, 4], [4, 0, 2]]
    )
    adapted = StringLookup()
    adapted.adapt(DATA)
    assert adapted.get_vocabulary() == ["[UNK]", "d", "z", "c", "b", "a"]
    np.testing.assert_array_equal(adapted(DATA).numpy(), [[5, 3, 1], [1, 2, 4]])
    two_oov = StringLookup(vocabulary=VOCAB, num_oov_indices=2)
    np.testing.assert_array_equal(
        two_oov([["a", "c", "d"], ["m", "z", "b"]]).numpy(), [[2, 4, 5], [0, 1, 3]]
    )
    one_hot = StringLookup(vocabulary=VOCAB, output_mode="one_hot")(["a", "b", "c", "d", "z"])
    np.testing.assert_array_equal(one_hot.numpy(), np.eye(5)[[1, 2, 3, 4, 0]])
    multi = StringLookup(vocabulary=VOCAB, output_mode="multi_hot")(DATA4)
    np.testing.assert_array_equal(multi.numpy(), [[0, 1, 0, 1, 1], [1, 0, 1, 0, 1]])
    count = StringLookup(vocabulary=VOCAB, output_mode="count")(DATA4)
    np.testing.assert_array_equal(count.numpy(), [[0, 1, 0, 1, 2], [2, 0, 1, 0, 1]])
    tf_idf = StringLookup(output_mode="tf_idf")
    tf_idf.set_vocabulary(VOCAB, idf_weights=[0.25, 0.75, 0.6, 0.4])
    expected = [[0, 0.25, 0, 0.6, 0.8], [1.0, 0, 0.75, 0, 0.4]]
    np.testing.assert_allclose(tf_idf(DATA4).numpy(), expected, rtol=1e-6)
    with_oov = StringLookup(output_mode="tf_idf")
    with_oov.set_vocabulary(["[UNK]", *VOCAB], idf_weights=[0.9, 0.25, 0.75, 0.6, 0.4])
    expected = [[0, 0.25, 0, 0.6, 0.8], [1.8, 0, 0.75, 0, 0.4]]
    np.testing.assert_allclose(with_oov(DATA4).numpy(), expected, rtol=1e-6)
    inverse = StringLookup(vocabulary=VOCAB, invert=True)
    assert inverse([[1, 3, 4], [4, 0, 2]]).numpy().tolist() == [
        ["a", "c", "d"],
        ["d", "[UNK]", "b"],
    ]


def test_integer_lookup_examples():
    vocab = [12, 36, 1138, 42]
    data = np.array([[12, 1138, 42], [42, 1000, 36]])
    np.testing.assert_array_equal(
        IntegerLookup(vocabulary=vocab)(data).numpy(), [[1, 3, 4], [4, 0, 2]]
    )
    adapted = IntegerLookup()
    adapted.adapt(data)
    assert adapted.get_vocabulary() == [-1, 42, 1138, 1000, 36, 12]
    np.testing.assert_array_equal(adapted(data).numpy(), [[5, 2, 1], [1, 3, 4]])
    two_oov = IntegerLookup(vocabulary=vocab, num_oov_indices=2)
    np.testing.assert_array_equal(
        two_oov(np.array([[12, 1138, 42], [37, 1000, 36]])).numpy(), [[2, 4, 5], [1, 0, 3]]
    )
    oov_values = np.array([100, 300, 700, 1100, 1700, 2000])
    floormod = IntegerLookup(vocabulary=[10, 20, 30], num_oov_indices=4, oov_method="floormod")
    np.testing.assert_array_equal(floormod(oov_values).numpy(), [0, 0, 0, 0, 0, 0])
    farmhash = IntegerLookup(vocabulary=[10, 20, 30], num_oov_indices=4, oov_method="farmhash")
    np.testing.assert_array_equal(farmhash(oov_values).numpy(), [3, 3, 2, 2, 0, 1])
    data4 = np.array([[12, 1138, 42, 42], [42, 7, 36, 7]])
    tf_idf = IntegerLookup(
        output_mode="tf_idf", vocabulary=vocab, idf_weights=[0.25, 0.75, 0.6, 0.4]
    )
    expected = [[0, 0.25, 0, 0.6, 0.8], [1.0, 0, 0.75, 0, 0.4]]
    np.testing.assert_allclose(tf_idf(data4).numpy(), expected, rtol=1e-6)
    inverse = IntegerLookup(vocabulary=vocab, invert=True)
    np.testing.assert_array_equal(
        inverse(np.array([[1, 3, 4], [4, 0, 2]])).numpy(), [[12, 1138, 42], [42, -1, 36]]
    )


def test_text_vectorization_examples():
    layer = TextVectorization(max_tokens=5000, output_mode="int", output_sequence_length=4)
    layer.adapt(["foo bar", "bar baz", "baz bada boom"])
    np.testing.assert_array_equal(
        layer([["foo qux bar"], ["qux baz"]]).numpy(), [[4, 1, 3, 0], [1, 2, 0, 0]]
    )
    given = TextVectorization(output_sequence_length=4, vocabulary=["earth", "wind", "and", "fire"])
    assert given.get_vocabulary() == ["", "[UNK]", "earth", "wind", "and", "fire"]


def test_category_encoding_examples():
    one_hot = CategoryEncoding(num_tokens=4, output_mode="one_hot")([3, 2, 0, 1])
    np.testing.assert_array_equal(one_hot.numpy(), np.eye(4)[[3, 2, 0, 1]])
    pairs = [[0, 1], [0, 0], [1, 2], [3, 1]]
    multi = CategoryEncoding(num_tokens=4, output_mode="multi_hot")(pairs)
    np.testing.assert_array_equal(
        multi.numpy(), [[1, 1, 0, 0], [1, 0, 0, 0], [0, 1, 1, 0], [0, 1, 0, 1]]
    )
    weights = np.array([[0.1, 0.2], [0.1, 0.1], [0.2, 0.3], [0.4, 0.2]])
    count = CategoryEncoding(num_tokens=4, output_mode="count")(pairs, count_weights=weights)
    expected = [[0.1, 0.2, 0, 0], [0.2, 0, 0, 0], [0, 0.2, 0.3, 0], [0, 0.2, 0, 0.4]]
    np.testing.assert_allclose(count.numpy(), expected, rtol=1e-6)


def test_discretization_examples():
    data = np.array([[-1.5, 1.0, 3.4, 0.5], [0.0, 3.0, 1.3, 0.0]])
    given = Discretization(bin_boundaries=[0.0, 1.0, 2.0])
    np.testing.assert_array_equal(given(data).numpy(), [[0, 2, 3, 1], [1, 3, 2, 1]])
    adapted = Discretization(num_bins=4, epsilon=0.01)
    adapted.adapt(data)
    np.testing.assert_array_equal(adapted(data).numpy(), [[0, 2, 3, 2], [1, 3, 3, 1]])


def test_normalization_examples():
    scalar = Normalization(axis=None)
    scalar.adapt(np.array([1.0, 2.0, 3.0, 4.0, 5.0], dtype="float32"))
    np.testing.assert_allclose(
        scalar(np.array([1.0, 2.0, 3.0])).numpy(), [-1.4142135, -0.70710677, 0.0], rtol=1e-6
    )
    adapt_data = np.array([[0, 7, 4], [2, 9, 6], [0, 7, 4], [2, 9, 6]], dtype="float32")
    features = Normalization(axis=-1)
    features.adapt(adapt_data)
    np.testing.assert_allclose(features(np.array([[0.0, 7.0, 4.0]])).numpy(), [[-1, -1, -1]])
    given = Normalization(mean=3.0, variance=2.0)
    np.testing.assert_allclose(
        given(np.array([[1.0], [2.0], [3.0]])).numpy(),
        [[-1.4142135], [-0.70710677], [0]],
        rtol=1e-6,
    )
    inverse = Normalization(axis=-1, invert=True)
    inverse.adapt(adapt_data)
    np.testing.assert_allclose(inverse(np.array([[1.0, 2.0, 3.0]])).numpy(), [[2, 10, 8]])
