"""timeseries_dataset_from_array against the windows Keras's docstring lists, and the batch
tuples (pack/unpack_x_y_sample_weight, PyDataset iteration) as Keras defines them."""

import numpy as np
import pytest

import minikeras as mk
from minikeras import utils


def _all_windows(dataset):
    batches = list(dataset)
    if isinstance(batches[0], tuple):
        return np.concatenate([b[0] for b in batches]), np.concatenate([b[1] for b in batches])
    return np.concatenate(batches), None


def test_windows_of_keras_example_one():
    # Keras's docstring: indices 0..98, length 10, rate 2, stride 3: windows start at
    # 0, 3, 6, ... 78, and the last two points are never read.
    dataset = utils.timeseries_dataset_from_array(
        np.arange(99), None, sequence_length=10, sampling_rate=2, sequence_stride=3
    )
    windows, _ = _all_windows(dataset)
    assert windows.shape == (27, 10)
    np.testing.assert_array_equal(windows[0], np.arange(0, 20, 2))
    np.testing.assert_array_equal(windows[1], np.arange(3, 23, 2))
    np.testing.assert_array_equal(windows[-1], np.arange(78, 98, 2))


def test_targets_of_keras_example_two_next_step_regression():
    data = np.arange(100, dtype="float32") * 0.5
    dataset = utils.timeseries_dataset_from_array(
        data[:-10], data[10:], sequence_length=10, batch_size=32
    )
    windows, targets = _all_windows(dataset)
    assert len(dataset) == 3 and windows.shape == (81, 10) and windows.dtype == np.float32
    for i in (0, 40, 80):
        np.testing.assert_array_equal(windows[i], data[i : i + 10])
        assert targets[i] == data[i + 10]
    assert [len(batch[0]) for batch in dataset] == [32, 32, 17]


def test_start_and_end_index_bound_the_steps_read_and_targets_follow():
    data = np.arange(50).reshape(25, 2)  # steps with two features
    dataset = utils.timeseries_dataset_from_array(
        data, np.arange(25) * 10, sequence_length=3, start_index=5, end_index=15, batch_size=4
    )
    windows, targets = _all_windows(dataset)
    # Steps 5..14: windows start at 5..12 (8 windows); targets[start] by absolute step.
    assert windows.shape == (8, 3, 2)
    np.testing.assert_array_equal(windows[0], data[5:8])
    np.testing.assert_array_equal(windows[-1], data[12:15])
    np.testing.assert_array_equal(targets, np.arange(5, 13) * 10)


def test_shorter_targets_limit_the_windows_and_no_batch_size_gives_single_windows():
    dataset = utils.timeseries_dataset_from_array(
        np.arange(10), np.arange(4), sequence_length=2, batch_size=None
    )
    assert len(dataset) == 4
    window, target = dataset[3]
    assert window.tolist() == [3, 4] and target == 3
    with pytest.raises(IndexError):
        dataset[4]
    empty = utils.timeseries_dataset_from_array(np.arange(5), None, sequence_length=8)
    assert len(empty) == 0 and list(empty) == []  # as Keras: no window fits, no batch


def test_shuffle_is_seeded_reshuffles_each_epoch_and_keeps_pairs():
    data = np.arange(40)
    make = lambda seed: utils.timeseries_dataset_from_array(  # noqa: E731
        data, data + 100, sequence_length=4, batch_size=8, shuffle=True, seed=seed
    )
    dataset = make(3)
    windows, targets = _all_windows(dataset)
    np.testing.assert_array_equal(targets, windows[:, 0] + 100)  # each window keeps its target
    assert sorted(windows[:, 0].tolist()) == list(range(37))
    assert windows[:, 0].tolist() != list(range(37))
    np.testing.assert_array_equal(_all_windows(make(3))[0], windows)
    dataset.on_epoch_end()
    assert not np.array_equal(_all_windows(dataset)[0], windows)
    utils.set_random_seed(8)
    first = _all_windows(make(None))[0]
    utils.set_random_seed(8)
    np.testing.assert_array_equal(_all_windows(make(None))[0], first)


def test_fit_reads_the_windows():
    series = np.sin(np.arange(200) * 0.1).astype("float32")[:, None]
    dataset = utils.timeseries_dataset_from_array(
        series[:-5], series[5:, 0], sequence_length=5, batch_size=16
    )
    model = mk.Sequential([mk.Input((5, 1)), mk.layers.Flatten(), mk.layers.Dense(1)])
    model.compile("adam", "mse")
    history = model.fit(dataset, epochs=2, verbose=0)
    assert history.params["steps"] == len(dataset) == 12
    assert model.predict(dataset, verbose=0).shape == (191, 1)


def test_take_reads_the_first_batches_as_tf_datas_take():
    # keras-io's weather forecasting reads a batch with `for x, y in dataset.take(1)`.
    steps = np.arange(20, dtype="float32")
    dataset = utils.timeseries_dataset_from_array(
        steps[:-2], steps[2:], sequence_length=2, batch_size=4, shuffle=True, seed=1
    )
    first = dataset.take(2)
    assert len(first) == 2 and len(dataset.take(-1)) == len(dataset) == len(dataset.take(9)) == 5
    for (windows, targets), (expected, expected_targets) in zip(first, dataset):
        np.testing.assert_array_equal(windows, expected)
        np.testing.assert_array_equal(targets, expected_targets)
    windows, targets = next(iter(dataset.take(1)))
    np.testing.assert_array_equal(windows[:, 0] + 2, targets)  # each window's target follows it
    for count, error in ((-2, ValueError), (1.0, TypeError)):
        with pytest.raises(error, match="take: count must be an int >= -1"):
            dataset.take(count)


@pytest.mark.parametrize(
    "kwargs, error, message",
    [
        ({"sequence_length": 0}, ValueError, "sequence_length must be an int >= 1"),
        ({"sequence_length": 2.0}, TypeError, "sequence_length must be an int >= 1"),
        ({"sampling_rate": 0}, ValueError, "sampling_rate must be an int >= 1"),
        ({"sampling_rate": 10}, ValueError, r"sampling_rate must be .* lower than .* \(10\)"),
        ({"sequence_stride": 12}, ValueError, "sequence_stride must be .*got sequence_stride=12"),
        ({"batch_size": 0}, ValueError, "batch_size must be an int >= 1 or None"),
        ({"start_index": -1}, ValueError, "start_index must be an int >= 0"),
        ({"start_index": 10}, ValueError, "start_index must be 0 or greater and lower"),
        ({"end_index": 10}, ValueError, "end_index must be higher than 0 and lower"),
        ({"end_index": 0}, ValueError, "end_index must be an int >= 1"),
        ({"start_index": 5, "end_index": 5}, ValueError, "end_index must be higher than start"),
        ({"seed": "x", "shuffle": True}, TypeError, "seed must be an int >= 0 or None"),
        ({"format": "torch"}, ValueError, "format must be 'tf' or 'grain'.*'torch'"),
    ],
)
def test_bad_arguments_are_named(kwargs, error, message):
    arguments = {"sequence_length": 2, **kwargs}
    with pytest.raises(error, match="timeseries_dataset_from_array: " + message):
        utils.timeseries_dataset_from_array(np.arange(10), None, **arguments)


@pytest.mark.parametrize("format", ["tf", "grain"])
def test_keras_format_argument_gives_the_same_windows(format):
    # Keras 3.15 takes format="tf" (its default) or "grain"; both are our batches.
    steps = np.arange(10, dtype="float32")
    dataset = utils.timeseries_dataset_from_array(
        steps, steps + 100, sequence_length=3, batch_size=2, format=format
    )
    windows, targets = dataset[1]
    assert windows.tolist() == [[2, 3, 4], [3, 4, 5]] and targets.tolist() == [102, 103]


# ------------------------------------------------------------ batch tuples


def test_unpack_x_y_sample_weight_as_keras():
    x, y, w = np.ones(2), np.zeros(2), np.full(2, 0.5)
    assert utils.unpack_x_y_sample_weight(x)[1:] == (None, None)
    assert utils.unpack_x_y_sample_weight((x,))[0] is x
    assert utils.unpack_x_y_sample_weight([x, y])[1] is y
    assert utils.unpack_x_y_sample_weight((x, y, w))[2] is w
    inputs = {"a": x}
    assert utils.unpack_x_y_sample_weight(inputs) == (inputs, None, None)
    with pytest.raises(ValueError, match="unpack_x_y_sample_weight: .*tuple of 4 items"):
        utils.unpack_x_y_sample_weight((x, y, w, w))


def test_pack_x_y_sample_weight_as_keras():
    x, y, w = np.ones(2), np.zeros(2), np.full(2, 0.5)
    assert utils.pack_x_y_sample_weight(x) is x
    packed = utils.pack_x_y_sample_weight([x, x])
    assert isinstance(packed, tuple) and len(packed) == 1  # a list of inputs is not (x, y)
    assert utils.pack_x_y_sample_weight(x, y) == (x, y)
    assert utils.pack_x_y_sample_weight(x, y, w) == (x, y, w)
    assert utils.pack_x_y_sample_weight(x, None, w) is x  # Keras drops a weight without y


def test_pydataset_iterates_and_sequence_is_its_keras_alias():
    class Batches(utils.Sequence):
        def __len__(self):
            return 2

        def __getitem__(self, index):
            return np.full((3, 1), float(index)), np.zeros((3, 1))

    assert utils.Sequence is utils.PyDataset
    assert [batch[0][0, 0] for batch in Batches()] == [0.0, 1.0]


def test_keras_agrees_on_the_batch_tuples():
    keras = pytest.importorskip("keras")
    x, y = np.ones(2), np.zeros(2)
    for data in (x, (x,), [x, y], (x, y, y)):
        ours = utils.unpack_x_y_sample_weight(data)
        theirs = keras.utils.unpack_x_y_sample_weight(data)
        assert [a is b for a, b in zip(ours, theirs)] == [True, True, True]
    for args in ((x,), ([x, y],), (x, y), (x, y, y), (x, None, y)):
        ours, theirs = (
            utils.pack_x_y_sample_weight(*args),
            keras.utils.pack_x_y_sample_weight(*args),
        )
        assert type(ours) is type(theirs)
        assert len(ours) == len(theirs)
    for dtype in (None, "float32", np.int64, "bool", float):
        assert utils.standardize_dtype(dtype) == keras.utils.standardize_dtype(dtype)


def test_timeseries_takes_keras_arguments_and_defaults():
    keras = pytest.importorskip("keras")
    import inspect

    ours = inspect.signature(utils.timeseries_dataset_from_array).parameters
    theirs = inspect.signature(keras.utils.timeseries_dataset_from_array).parameters
    assert [(p.name, p.default) for p in ours.values()] == [
        (p.name, p.default) for p in theirs.values()
    ]
