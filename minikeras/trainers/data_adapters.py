"""How `fit`, `evaluate` and `predict` take their data: checked, then cut into batches.

The data is either arrays (`x`, `y`, `sample_weight`: numpy arrays, tensors,
or lists, tuples and dicts of them) or an iterable of batches (tuples
`(x,)`, `(x, y)` or `(x, y, sample_weight)`), such as a generator or a
`utils.PyDataset`. Arrays are checked and batched in `array_data`
(`_Data`, `_ArrayBatches`); here `_Batches` checks each batch of an
iterable as it comes, and `_validation` turns `fit`'s `validation_data`
into either.
"""

import itertools
import numbers

import numpy as np

from minikeras.engine.tensor import Tensor
from minikeras.trainers.array_data import _ArrayBatches, _Data, packed
from minikeras.utils.data_tuples import unpack_x_y_sample_weight

__all__ = []


class _PyDatasetSource:
    """A `utils.PyDataset` read as a re-iterable list of batches, `on_epoch_end` called by fit."""

    def __init__(self, dataset):
        self.dataset = dataset

    def __len__(self):
        return len(self.dataset)

    def __iter__(self):
        for index in range(len(self.dataset)):
            yield self.dataset[index]


def _is_py_dataset(x):
    return hasattr(x, "__getitem__") and hasattr(x, "__len__") and hasattr(x, "on_epoch_end")


def _is_batch_iterable(x):
    """True for an iterable of batches, False for arrays (or a list of arrays)."""
    if _is_py_dataset(x):
        return True
    if isinstance(x, list):
        return bool(x) and all(isinstance(batch, tuple) for batch in x)
    excluded = (np.ndarray, Tensor, tuple, dict, str, bytes)
    return x is not None and not isinstance(x, excluded) and hasattr(x, "__iter__")


def _check_no_arrays_with_batches(y, sample_weight, method):
    if y is not None or sample_weight is not None:
        raise ValueError(
            f"{method}: x is an iterable of (x, y) batches, so y and sample_weight must be "
            "None (put them in the batches: (x, y) or (x, y, sample_weight))"
        )


class _Batches:
    """An iterable of `(x, y)` or `(x, y, sample_weight)` batches, checked.

    Without `steps`, a list (a generator is read into one) is checked whole,
    before training starts, and every epoch is one pass over it; another
    iterable is checked batch by batch as it is read.

    With `steps` (`fit`'s `steps_per_epoch`, `evaluate`'s `steps`), each pass
    takes the next `steps` batches from one iterator that carries on from
    pass to pass, as in Keras, so a generator that never ends can feed
    training. When the data runs out inside a pass, the pass ends there and
    `ran_out` says so: a one-shot iterator (a generator) is then exhausted
    for good (`exhausted`), while a re-iterable (a list) starts over on the
    next pass.
    """

    def __init__(self, source, dtype, method, class_weight=None, steps=None, need_y=True):
        self.py_dataset = source if _is_py_dataset(source) else None
        if self.py_dataset is not None:
            source = _PyDatasetSource(source)
        self.need_y = need_y
        one_shot = iter(source) is source
        if one_shot and steps is None:
            source = list(source)  # a one-shot iterator: keep it for every epoch
        self.source, self.dtype, self.method = source, dtype, method
        self.class_weight = class_weight
        self.by_steps = steps is not None
        self.one_shot = one_shot and self.by_steps
        if self.by_steps:
            self.steps = _check_steps(steps, method)
        else:
            self.steps = len(source) if hasattr(source, "__len__") else None
        if hasattr(source, "__len__") and not len(source):
            raise ValueError(f"{method}: the data set is empty (no batches)")
        self.checked = None
        if isinstance(source, (list, tuple)):
            self.checked = [self._check(batch, index) for index, batch in enumerate(source)]
        self.ran_out = self.exhausted = False
        self._iterator, self._pending, self._read = None, None, 0

    def _check(self, batch, index):
        where = f"{self.method} (batch {index})"
        if isinstance(batch, list) and len(batch) in (2, 3) and self.py_dataset is not None:
            batch = tuple(batch)
        if isinstance(batch, (np.ndarray, Tensor, dict)):  # inputs alone, as Keras takes them
            batch = (batch,)
        if not isinstance(batch, tuple) or len(batch) not in (1, 2, 3):
            raise ValueError(
                f"{where}: each batch must be a tuple (x,), (x, y) or (x, y, sample_weight), "
                f"got {type(batch).__name__}"
            )
        y = batch[1] if len(batch) > 1 else None
        weight = batch[2] if len(batch) == 3 else None
        data = _Data(batch[0], y, weight, self.dtype, where, self.class_weight, need_y=self.need_y)
        return packed(data.x, data.y, data.sample_weight)

    def first_inputs(self):
        """The inputs of the first batch (to build the model)."""
        if self.by_steps:  # peek, and hand the batch to the first pass
            if self.has_next():
                return unpack_x_y_sample_weight(self._pending)[0]
        else:
            for batch in self:
                return unpack_x_y_sample_weight(batch)[0]
        raise ValueError(f"{self.method}: the data set is empty (no batches)")

    def has_next(self):
        """Whether another batch comes (read ahead, and kept for the next pass)."""
        if self._pending is None:
            self._pending = self._next_batch(restart=True)
        return self._pending is not None

    def _next_batch(self, restart=False):
        """The next checked batch of the carried-on iterator, or None when it runs out.

        A re-iterable that ran out starts over at once if `restart` (at the start
        of a pass, so that data of exactly `steps` batches a pass never runs out).
        """
        if self._pending is not None:
            batch, self._pending = self._pending, None
            return batch
        for _attempt in range(2):
            if self.exhausted:
                return None
            if self._iterator is None:
                self._iterator = iter(self.checked if self.checked is not None else self.source)
            for raw in self._iterator:
                self._read += 1
                return raw if self.checked is not None else self._check(raw, self._read - 1)
            self._iterator = None  # a re-iterable starts over; a one-shot iterator stays empty
            self.exhausted = self.one_shot
            if not restart:
                return None
        return None

    def __iter__(self):
        if self.by_steps:
            self.ran_out = False
            for index in range(self.steps):
                batch = self._next_batch(restart=index == 0)
                if batch is None:
                    self.ran_out = True
                    return
                yield batch
            return
        if self.checked is not None:
            yield from self.checked
            return
        empty = True
        for index, batch in enumerate(self.source):
            empty = False
            yield self._check(batch, index)
        if empty:
            raise ValueError(f"{self.method}: the data set is empty (no batches)")


def _check_steps(steps, method, name="steps"):
    if isinstance(steps, bool) or not isinstance(steps, numbers.Integral) or steps < 1:
        raise ValueError(f"{method}: {name} must be a positive int or None, got {steps!r}")
    return int(steps)


def _validation(validation_data, dtype, batch_size, steps=None, need_y=True):
    if validation_data is None:
        if steps is not None:
            _check_steps(steps, "fit", "validation_steps")
        return None
    if _is_batch_iterable(validation_data):
        if steps is not None:
            # As Keras: validation starts from the data's beginning at each epoch, so every
            # epoch is scored on the same first `validation_steps` batches (read once).
            steps = _check_steps(steps, "fit", "validation_steps")
            source = validation_data
            if _is_py_dataset(source):
                source = _PyDatasetSource(source)
            first = list(itertools.islice(iter(source), steps))
            return _Batches(first, dtype, "fit (validation_data)", need_y=need_y)
        return _Batches(validation_data, dtype, "fit (validation_data)", need_y=need_y)
    if steps is not None:
        steps = _check_steps(steps, "fit", "validation_steps")
    if not isinstance(validation_data, (tuple, list)) or len(validation_data) not in (2, 3):
        raise ValueError(
            "fit: validation_data must be (x_val, y_val) or (x_val, y_val, sample_weight)"
        )
    weight = validation_data[2] if len(validation_data) == 3 else None
    data = _Data(
        validation_data[0], validation_data[1], weight, dtype, "fit (validation_data)",
        need_y=need_y,
    )  # fmt: skip
    # As Keras: each validation starts afresh, on the first `steps` batches.
    return _ArrayBatches(data, batch_size, shuffle=False, steps=steps)
