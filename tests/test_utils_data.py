"""minikeras.utils as Keras users call it: to_categorical, normalize, pad_sequences,
split_dataset and Progbar, against hand-worked cases and Keras's documented behaviour."""

import numpy as np
import pytest
from finite_differences import check_gradients

import minikeras as mk
from minikeras import config, utils

# ------------------------------------------------------------ to_categorical


def test_to_categorical_one_hot_encodes_with_the_class_axis_last():
    got = utils.to_categorical([0, 1, 2, 3], num_classes=4)
    np.testing.assert_array_equal(got, np.eye(4))
    assert got.dtype == config.floatx()
    # A trailing axis of 1 is dropped; num_classes is inferred as max + 1.
    got = utils.to_categorical(np.array([[2], [0]]))
    np.testing.assert_array_equal(got, [[0, 0, 1], [1, 0, 0]])
    got = utils.to_categorical([[0, 1], [1, 1]], num_classes=3)
    assert got.shape == (2, 2, 3) and got[0, 1].tolist() == [0, 1, 0]
    assert utils.to_categorical([], num_classes=2).shape == (0, 2)


def test_to_categorical_feeds_categorical_crossentropy():
    labels = utils.to_categorical([0, 2], num_classes=3)
    probabilities = np.array([[0.9, 0.05, 0.05], [0.1, 0.2, 0.7]], "float32")
    loss = mk.losses.categorical_crossentropy(labels, probabilities)
    np.testing.assert_allclose(loss.numpy(), -np.log([0.9, 0.7]), rtol=1e-6)


def test_to_categorical_errors():
    with pytest.raises(ValueError, match=r"\[0, 3\).*\[3\]"):
        utils.to_categorical([0, 3], num_classes=3)
    with pytest.raises(ValueError, match=r"\[-1\]"):
        utils.to_categorical([-1, 0], num_classes=3)
    with pytest.raises(ValueError, match="num_classes"):
        utils.to_categorical([])


# ------------------------------------------------------------ normalize


def test_normalize_numpy_by_hand():
    got = utils.normalize(np.array([[3.0, 4.0], [0.0, 0.0], [1.0, 0.0]]))
    np.testing.assert_allclose(got, [[0.6, 0.8], [0.0, 0.0], [1.0, 0.0]])
    got = utils.normalize(np.array([[3.0, 4.0], [1.0, 2.0]]), axis=0, order=1)
    np.testing.assert_allclose(got, [[0.75, 4 / 6], [0.25, 2 / 6]])
    got = utils.normalize(np.array([1.0, -4.0]), order=np.inf)
    np.testing.assert_allclose(got, [0.25, -1.0])
    float32 = utils.normalize(np.ones((2, 2), "float32"))
    assert float32.dtype == np.float32


def test_normalize_tensor_matches_numpy_and_has_a_gradient():
    x = np.random.default_rng(0).standard_normal((3, 4))
    for order in (1, 2, 3):
        got = utils.normalize(mk.Tensor(x), order=order)
        assert isinstance(got, mk.Tensor)
        np.testing.assert_allclose(got.numpy(), utils.normalize(x, order=order), rtol=1e-6)
        check_gradients(lambda t, order=order: utils.normalize(t, axis=0, order=order), [x])
    with pytest.raises(ValueError, match="order"):
        utils.normalize(mk.Tensor(x), order=0)


# ------------------------------------------------------------ pad_sequences


def test_pad_sequences_defaults_pad_and_truncate_at_the_start():
    got = utils.pad_sequences([[1, 2, 3], [4, 5], [6]])
    np.testing.assert_array_equal(got, [[1, 2, 3], [0, 4, 5], [0, 0, 6]])
    assert got.dtype == np.int32
    got = utils.pad_sequences([[1, 2, 3, 4], [5]], maxlen=2)
    np.testing.assert_array_equal(got, [[3, 4], [0, 5]])


def test_keras_preprocessing_namespace_names_the_utils_functions():
    # Keras 3 keeps keras.preprocessing for older code: same functions as keras.utils.
    assert mk.preprocessing.sequence.pad_sequences is utils.pad_sequences
    assert mk.preprocessing.timeseries_dataset_from_array is utils.timeseries_dataset_from_array


@pytest.mark.parametrize(
    "padding, truncating, expected",
    [
        ("pre", "pre", [[2, 3, 4], [0, 0, 5], [0, 0, 0]]),
        ("post", "pre", [[2, 3, 4], [5, 0, 0], [0, 0, 0]]),
        ("pre", "post", [[1, 2, 3], [0, 0, 5], [0, 0, 0]]),
        ("post", "post", [[1, 2, 3], [5, 0, 0], [0, 0, 0]]),
    ],
)
def test_pad_sequences_padding_and_truncating(padding, truncating, expected):
    sequences = [[1, 2, 3, 4], [5], []]
    got = utils.pad_sequences(sequences, maxlen=3, padding=padding, truncating=truncating)
    np.testing.assert_array_equal(got, expected)


def test_pad_sequences_value_dtype_and_element_shape():
    got = utils.pad_sequences([[1.5], [2.5, 3.5]], dtype="float32", value=-1.0, padding="post")
    np.testing.assert_array_equal(got, np.array([[1.5, -1.0], [2.5, 3.5]], "float32"))
    assert got.dtype == np.float32
    # The default int32 dtype truncates floats, as in Keras.
    np.testing.assert_array_equal(utils.pad_sequences([[1.7]]), [[1]])
    words = utils.pad_sequences([["a", "bb"], ["ccc"]], dtype=object, value="<pad>")
    assert words.tolist() == [["a", "bb"], ["<pad>", "ccc"]]
    vectors = utils.pad_sequences([np.ones((2, 3)), np.ones((1, 3))], maxlen=3, dtype="float32")
    assert vectors.shape == (2, 3, 3)
    np.testing.assert_array_equal(vectors[1].sum(axis=1), [0, 0, 3])
    np.testing.assert_array_equal(
        utils.pad_sequences([np.array([7, 8])], maxlen=0), np.zeros((1, 0))
    )
    assert utils.pad_sequences([]).shape == (0, 0)


def test_pad_sequences_errors():
    with pytest.raises(ValueError, match="padding"):
        utils.pad_sequences([[1]], padding="middle")
    with pytest.raises(ValueError, match="truncating"):
        utils.pad_sequences([[1]], truncating="middle")
    with pytest.raises(ValueError, match="position 1"):
        utils.pad_sequences([[1], 5])
    with pytest.raises(ValueError, match="sequences"):
        utils.pad_sequences(5)
    with pytest.raises(ValueError, match="dtype=object"):
        utils.pad_sequences([["a"]], value="x")
    with pytest.raises(ValueError, match=r"position 1.*\(2,\).*\(3,\)"):
        utils.pad_sequences([np.ones((2, 3)), np.ones((1, 2))])


def test_pad_sequences_feeds_an_embedding_model():
    x = utils.pad_sequences([[3, 1], [2], [4, 4, 1]], maxlen=4)
    model = mk.Sequential([mk.Input((4,)), mk.layers.Embedding(5, 2), mk.layers.Flatten()])
    assert model.predict(x, verbose=0).shape == (3, 8)


# ------------------------------------------------------------ split_dataset


def test_split_dataset_sizes_by_count_and_fraction():
    data = np.arange(20).reshape(10, 2)
    left, right = utils.split_dataset(data, left_size=0.8)
    np.testing.assert_array_equal(left, data[:8])
    np.testing.assert_array_equal(right, data[8:])
    left, right = utils.split_dataset(data, right_size=3)
    assert len(left) == 7 and len(right) == 3
    # Both given and short of the total: the middle samples are dropped.
    left, right = utils.split_dataset(data, left_size=2, right_size=0.3)
    np.testing.assert_array_equal(left, data[:2])
    np.testing.assert_array_equal(right, data[7:])
    left, right = utils.split_dataset(data, left_size=np.int64(4))
    assert len(left) == 4


@pytest.mark.parametrize("backend", ["tensorflow", "torch"])
def test_split_dataset_takes_keras_preferred_backend(backend):
    # Keras 3.15's argument picks tf.data or torch datasets; both are numpy arrays here.
    data = np.arange(10)
    left, right = utils.split_dataset(data, left_size=0.6, preferred_backend=backend)
    assert left.tolist() == [0, 1, 2, 3, 4, 5] and right.tolist() == [6, 7, 8, 9]


def test_split_dataset_keeps_the_structure_and_shuffles_arrays_together():
    x, y = np.arange(30).reshape(10, 3), np.arange(10)
    (x_left, y_left), (x_right, y_right) = utils.split_dataset(
        (x, y), left_size=0.6, shuffle=True, seed=3
    )
    assert (x_left.shape, x_right.shape) == ((6, 3), (4, 3))
    np.testing.assert_array_equal(x_left[:, 0] // 3, y_left)  # rows stay paired
    np.testing.assert_array_equal(np.sort(np.concatenate([y_left, y_right])), y)
    assert not np.array_equal(y_left, np.arange(6))  # seed 3 moves something
    again = utils.split_dataset((x, y), left_size=0.6, shuffle=True, seed=3)
    np.testing.assert_array_equal(again[0][1], y_left)
    left, right = utils.split_dataset({"a": x, "b": y}, right_size=0.5)
    assert set(left) == {"a", "b"} and len(right["b"]) == 5
    left, right = utils.split_dataset([x, y], left_size=1)
    assert isinstance(left, list) and left[1].tolist() == [0]


def test_split_dataset_errors():
    data = np.arange(10)
    with pytest.raises(ValueError, match="left_size or right_size"):
        utils.split_dataset(data)
    with pytest.raises(TypeError, match="left_size"):
        utils.split_dataset(data, left_size="half")
    with pytest.raises(TypeError, match="right_size"):
        utils.split_dataset(data, right_size=True)
    for size in (0, 10, -1, 0.0, 1.0, 1.5):
        with pytest.raises(ValueError, match="left_size"):
            utils.split_dataset(data, left_size=size)
    with pytest.raises(ValueError, match="at most 1"):
        utils.split_dataset(data, left_size=0.7, right_size=0.4)
    with pytest.raises(ValueError, match="more than the 10"):
        utils.split_dataset(data, left_size=6, right_size=5)
    with pytest.raises(ValueError, match="right part empty"):
        utils.split_dataset(np.arange(3), left_size=0.9)
    with pytest.raises(ValueError, match=r"same number of samples.*\[10, 9\]"):
        utils.split_dataset((data, data[:9]), left_size=2)


# ------------------------------------------------------------ Progbar


def test_progbar_averages_by_steps_and_keeps_stateful_values(capsys):
    bar = utils.Progbar(target=4, verbose=2, stateful_metrics=["lr"])
    bar.update(1, [("loss", 4.0), ("lr", 0.1)])
    bar.update(4, [("loss", 0.0), ("lr", 0.01)])  # three steps at 0.0
    assert bar.averages() == {"loss": 1.0, "lr": 0.01}
    line = capsys.readouterr().out
    assert line.startswith("4/4 - ") and line.endswith(" - loss: 1.0000 - lr: 0.0100\n")


def test_progbar_stateless_metrics_and_add(capsys):
    bar = utils.Progbar(target=None, verbose=0, stateless_metrics=["loss"])
    bar.add(2, [("loss", 1.0), ("acc", 0.5)])
    bar.add(2, [("loss", 3.0), ("acc", 0.75)])
    assert bar.averages() == {"loss": 2.0, "acc": 0.75}
    assert capsys.readouterr().out == ""
    with pytest.raises(ValueError, match="not both"):
        utils.Progbar(3, stateful_metrics=["a"], stateless_metrics=["b"])


def test_progbar_verbose_one_draws_a_bar_and_ends_the_line(capsys):
    bar = utils.Progbar(target=3, width=6, verbose=1, interval=0.0, unit_name="sample")
    bar.update(1, [("loss", 0.5)])
    bar.update(3, [("loss", 0.25)])
    out = capsys.readouterr().out
    assert "1/3 [==>...]" in out and "3/3 [======]" in out
    assert "/sample" in out and "ETA" in out and out.endswith("loss: 0.3333\n")
    bar = utils.Progbar(target=None, verbose=1, interval=0.0)
    bar.update(5, [("loss", 1e-5)])
    assert "5/Unknown" in capsys.readouterr().out


# ------------------------------------------------------------ Keras edges


def test_to_categorical_of_a_tensor_is_a_tensor_and_num_classes_is_checked():
    got = utils.to_categorical(mk.ops.convert_to_tensor(np.array([[1], [0]])), 3)
    assert isinstance(got, mk.Tensor) and got.dtype == np.float32
    np.testing.assert_array_equal(got.numpy(), [[0, 1, 0], [1, 0, 0]])
    with pytest.raises(TypeError, match=r"to_categorical: num_classes must be an int >= 1 or "):
        utils.to_categorical([1], 2.5)
    with pytest.raises(ValueError, match=r"num_classes must be an int >= 1 or None, got 0"):
        utils.to_categorical([0, 1], 0)
    assert utils.to_categorical([1], np.int64(3)).shape == (1, 3)


def test_pad_sequences_maxlen_must_be_an_int():
    with pytest.raises(TypeError, match=r"pad_sequences: maxlen must be an int >= 0 or None"):
        utils.pad_sequences([[1, 2, 3]], maxlen=2.5)
    with pytest.raises(ValueError, match=r"maxlen must be an int >= 0 or None, got -1"):
        utils.pad_sequences([[1, 2, 3]], maxlen=-1)
    assert utils.pad_sequences([[1, 2, 3]], maxlen=np.int64(2)).tolist() == [[2, 3]]


def test_split_dataset_shuffle_without_a_seed_follows_set_random_seed():
    data = np.arange(50)
    utils.set_random_seed(4)
    first = utils.split_dataset(data, left_size=0.5, shuffle=True)
    utils.set_random_seed(4)
    again = utils.split_dataset(data, left_size=0.5, shuffle=True)
    np.testing.assert_array_equal(first[0], again[0])
    assert not np.array_equal(first[0], data[:25])
