"""`timeseries_dataset_from_array`: sliding windows over a series, in batches `fit` reads."""

import numpy as np

from minikeras.argument_checks import check_int
from minikeras.engine.tensor import Tensor
from minikeras.random import make_seed
from minikeras.utils.py_dataset import PyDataset

__all__ = ["timeseries_dataset_from_array"]

_WHERE = "timeseries_dataset_from_array"


class _Windows(PyDataset):
    """The batches of windows `timeseries_dataset_from_array` describes (built there)."""

    def __init__(self, data, targets, starts, offsets, batch_size, rng):
        super().__init__()
        self.data, self.targets, self.starts = data, targets, starts
        self.offsets, self.batch_size, self.rng = offsets, batch_size, rng

    def __len__(self):
        size = self.batch_size or 1
        return -(-len(self.starts) // size)

    def __getitem__(self, index):
        if not -len(self) <= index < len(self):
            raise IndexError(f"{_WHERE}: batch {index} of {len(self)}")
        index %= len(self)
        if self.batch_size is None:  # one window, no batch axis
            starts = self.starts[index]
        else:
            starts = self.starts[index * self.batch_size : (index + 1) * self.batch_size]
        windows = self.data[np.add.outer(starts, self.offsets)]
        return windows if self.targets is None else (windows, self.targets[starts])

    def take(self, count):
        """The first `count` batches, as a dataset of their own (tf.data's `take`).

        Keras returns a `tf.data.Dataset`, and code reads a few batches of it
        with `for inputs, targets in dataset.take(1)`; this is the one
        `tf.data` method the windows have.

        Args:
            count: int, how many batches; -1 (tf.data's "all") or more than
                there are keeps them all.

        Returns:
            A dataset of the first `count` batches (the windows are shared).

        Raises:
            TypeError: if `count` is not an int.
            ValueError: if `count` is below -1.

        Example:
            >>> dataset = mk.utils.timeseries_dataset_from_array(
            ...     np.arange(10), None, sequence_length=3, batch_size=2
            ... )
            >>> [batch.tolist() for batch in dataset.take(1)], len(dataset.take(-1))
            ([[[0, 1, 2], [1, 2, 3]]], 4)
        """
        check_int(f"{_WHERE}(...).take", "count", count, -1)
        keep = len(self.starts) if count == -1 else count * (self.batch_size or 1)
        return _Windows(
            self.data, self.targets, self.starts[:keep], self.offsets, self.batch_size, None
        )

    def on_epoch_end(self):
        if self.rng is not None:  # a new order at each epoch, as Keras's tf.data shuffle
            self.rng.shuffle(self.starts)


def _check_within(name, value, length, minimum, keras_rule):
    if not minimum <= value < length:
        raise ValueError(
            f"{_WHERE}: {name} must be {keras_rule} and lower than the length of the data "
            f"({length}), got {name}={value}"
        )


def timeseries_dataset_from_array(
    data,
    targets,
    sequence_length,
    sequence_stride=1,
    sampling_rate=1,
    batch_size=128,
    shuffle=False,
    seed=None,
    start_index=None,
    end_index=None,
    format="tf",
):
    """Cuts a series (time on axis 0) into windows, in batches of `(windows, targets)`.

    Window `i` starts at step `start_index + i * sequence_stride` and takes
    `sequence_length` steps `sampling_rate` apart; its target is
    `targets[start_index + i * sequence_stride]` (so to predict the step
    after a window of 10, pass `data[:-10]` and `targets=data[10:]`). Only
    steps in `[start_index, end_index)` are read, and only windows that fit
    there are made (none, if the range is shorter than one window, as in
    Keras).

    Keras returns a `tf.data.Dataset` (or a Grain dataset, with `format=`);
    minikeras returns a `minikeras.utils.PyDataset` of numpy batches, which
    `fit`, `evaluate` and `predict` take and a `for` loop reads. With
    `shuffle`, the windows are in a new random order at each epoch (Keras
    shuffles within a buffer of `8 * batch_size` windows).

    Args:
        data: an array or Tensor of the steps, time on axis 0.
        targets: the target of the window starting at each step (an array,
            read from `start_index`; the windows stop where it ends, as
            Keras's zipped datasets do), or None to yield the windows alone.
        sequence_length: an int >= 1, the steps in a window.
        sequence_stride: an int >= 1, the steps between two windows' starts.
        sampling_rate: an int >= 1, the steps between two steps of a window.
        batch_size: an int >= 1, the windows in a batch (the last may be
            smaller); None yields single windows, with no batch axis.
        shuffle: whether to shuffle the windows.
        seed: an int seed for the shuffle; None draws one from the global
            generator (so `minikeras.utils.set_random_seed` makes it
            reproducible).
        start_index: the first step read (int); None means 0.
        end_index: the step after the last one read (int); None means the
            end of the data.
        format: Keras's choice of dataset, `"tf"` or `"grain"`; taken for
            Keras code, both give the same `PyDataset`.

    Returns:
        A `PyDataset` whose batches are `(windows, targets)`, or `windows`
        if `targets` is None: windows of shape `(batch, sequence_length) +
        data.shape[1:]` in the data's dtype.

    Raises:
        TypeError: if a length, stride, rate, size, index or the seed is not
            an int.
        ValueError: if one is out of range (as Keras: `start_index` and
            `end_index` inside the data with `start_index < end_index`;
            `sampling_rate` and `sequence_stride` lower than its length), or
            `format` is not `"tf"` or `"grain"`.

    Example:
        >>> steps = np.arange(10, dtype="float32")
        >>> dataset = mk.utils.timeseries_dataset_from_array(
        ...     steps[:-3], targets=steps[3:], sequence_length=3, batch_size=2
        ... )
        >>> windows, targets = dataset[0]
        >>> windows.tolist(), targets.tolist()
        ([[0.0, 1.0, 2.0], [1.0, 2.0, 3.0]], [3.0, 4.0])
        >>> len(dataset)
        3
    """
    data = np.asarray(data.numpy() if isinstance(data, Tensor) else data)
    if data.ndim == 0:
        raise ValueError(f"{_WHERE}: data must have a time axis (axis 0), got a scalar")
    for name, value, minimum in (
        ("sequence_length", sequence_length, 1),
        ("sequence_stride", sequence_stride, 1),
        ("sampling_rate", sampling_rate, 1),
    ):
        check_int(_WHERE, name, value, minimum)
    check_int(_WHERE, "batch_size", batch_size, 1, allow_none=True)
    check_int(_WHERE, "start_index", start_index, 0, allow_none=True)
    check_int(_WHERE, "end_index", end_index, 1, allow_none=True)
    check_int(_WHERE, "seed", seed, 0, allow_none=True)
    if format not in ("tf", "grain"):
        raise ValueError(f"{_WHERE}: format must be 'tf' or 'grain', got {format!r}")
    length = len(data)
    if start_index is not None:
        _check_within("start_index", start_index, length, 0, "0 or greater")
    if end_index is not None:
        _check_within("end_index", end_index, length, 1, "higher than 0")
        if start_index is not None and end_index <= start_index:
            raise ValueError(
                f"{_WHERE}: end_index must be higher than start_index, got "
                f"start_index={start_index} and end_index={end_index}"
            )
    _check_within("sampling_rate", sampling_rate, length, 1, "higher than 0")
    _check_within("sequence_stride", sequence_stride, length, 1, "higher than 0")
    start_index = start_index or 0
    end_index = length if end_index is None else end_index
    data = data[start_index:end_index]
    count = end_index - start_index - (sequence_length - 1) * sampling_rate
    if targets is not None:
        targets = np.asarray(targets.numpy() if isinstance(targets, Tensor) else targets)
        targets = targets[start_index:]
        count = min(count, len(targets))
    starts = np.arange(0, max(count, 0), sequence_stride)
    rng = None
    if shuffle:
        rng = np.random.default_rng(make_seed() if seed is None else seed)
        rng.shuffle(starts)
    offsets = np.arange(sequence_length) * sampling_rate
    return _Windows(data, targets, starts, offsets, batch_size, rng)
