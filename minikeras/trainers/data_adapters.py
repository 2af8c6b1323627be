"""How `fit`, `evaluate` and `predict` take their data: checked, then cut into batches.

The data is either arrays (`x`, `y`, `sample_weight`: numpy arrays, tensors,
or lists, tuples and dicts of them) or an iterable of batches (tuples
`(x,)`, `(x, y)` or `(x, y, sample_weight)`), such as a generator or a
`utils.PyDataset`. `_Data` checks arrays once: numeric,
finite targets and weights, one length, `class_weight` folded into the
sample weights. `_ArrayBatches` cuts them into (shuffled) batches;
`_Batches` checks each batch of an iterable as it comes. `_validation` turns
`fit`'s `validation_data` into either.
"""

import itertools
import numbers

import numpy as np

from minikeras import random, tree
from minikeras.engine.tensor import Tensor

__all__ = []


def _with_class_weight(sample_weight, y, class_weight, method="fit"):
    if not class_weight:
        return sample_weight
    if y is None or isinstance(y, (list, tuple, dict)):
        raise ValueError(
            f"{method}: class_weight needs one array of targets (a model with one output)"
        )
    if sample_weight is not None:  # (which would win? Keras refuses both, so do we)
        raise ValueError(
            f"{method}: pass class_weight or sample_weight, not both (fold the class weights "
            "into the sample weights)"
        )
    labels = np.asarray(y)
    labels = (
        labels.argmax(axis=-1) if labels.ndim > 1 and labels.shape[-1] > 1 else labels.reshape(-1)
    )
    # A class the dict leaves out weighs 1, as in Keras.
    return np.array([class_weight.get(int(c), 1.0) for c in labels], dtype=np.float32)


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


def _check_batch_size(batch_size):
    if batch_size is None:
        return 32  # Keras's default
    if isinstance(batch_size, bool) or not isinstance(batch_size, numbers.Integral):
        raise ValueError(f"batch_size must be a positive int, got {batch_size!r}")
    if batch_size <= 0:
        raise ValueError(f"batch_size must be a positive int, got {batch_size!r}")
    return int(batch_size)


def _lengths(inputs):
    if isinstance(inputs, (list, tuple)):
        return [len(a) for a in inputs]
    if isinstance(inputs, dict):
        return [len(a) for a in inputs.values()]
    return [len(inputs)]


def _length(inputs):
    return _lengths(inputs)[0]


def _slice(inputs, index):
    if type(inputs) is np.ndarray:
        return inputs[index]
    if isinstance(inputs, (list, tuple)):
        return type(inputs)(a[index] for a in inputs)
    if isinstance(inputs, dict):
        return {key: a[index] for key, a in inputs.items()}
    return inputs[index]


def _check_numeric(array, what, method):
    if array.dtype.kind not in "biuf":
        raise ValueError(f"{method}: {what} must be numeric, got dtype {array.dtype}")
    if array.ndim == 0:
        raise ValueError(f"{method}: {what} must have a batch axis, got a scalar")


def _as_input(x, dtype, method):
    if x is None:
        raise ValueError(f"{method}: x is missing")
    if isinstance(x, (list, tuple)) and x and all(isinstance(a, (np.ndarray, Tensor)) for a in x):
        return type(x)(_as_input(a, dtype, method) for a in x)
    if isinstance(x, dict):
        return {key: _as_input(a, dtype, method) for key, a in x.items()}
    array = np.asarray(x)
    _check_numeric(array, "x", method)
    # Cast float data once to the model's dtype, not at every step.
    return array.astype(dtype) if array.dtype.kind == "f" and array.dtype != dtype else array


def _non_finite_rows(array, n):
    """Indices of the samples holding NaN or infinity, for error messages."""
    bad = np.flatnonzero(~np.isfinite(array.reshape(n, -1)).all(axis=1))
    return f"{bad[:10].tolist()}{' ...' if len(bad) > 10 else ''}"


class _Data:
    """Checked arrays: inputs, targets and optional sample weights (times class weights)."""

    def __init__(
        self, x, y, sample_weight, dtype, method, class_weight=None, check=True, need_y=True
    ):
        self.x = _as_input(x, dtype, method) if check else x
        if y is None and need_y:
            raise ValueError(f"{method}: y is missing (targets are needed: the compiled loss)")
        self.y = _as_targets(y) if check else y
        self.sample_weight = sample_weight
        if not check:
            return
        lengths = _lengths(self.x)
        n = lengths[0]
        if n == 0:
            raise ValueError(f"{method}: the data set is empty (x has 0 samples)")
        if len(set(lengths)) > 1:
            raise ValueError(f"{method}: the inputs in x have different lengths, {lengths}")
        for y_part in [] if self.y is None else tree.flatten(self.y):
            _check_numeric(y_part, "y", method)
            if len(y_part) != n:
                raise ValueError(f"{method}: x has {n} samples but y has {len(y_part)}")
            if y_part.dtype.kind == "f" and not np.all(np.isfinite(y_part)):
                raise ValueError(
                    f"{method}: y holds NaN or infinite values, at sample indices "
                    f"{_non_finite_rows(y_part, n)}"
                )
        if sample_weight is not None:
            weight = np.asarray(sample_weight)
            _check_numeric(weight, "sample_weight", method)
            if len(weight) != n:
                raise ValueError(f"{method}: x has {n} samples but sample_weight has {len(weight)}")
            weight = weight.astype("float32")
            if not np.all(np.isfinite(weight)):
                raise ValueError(
                    f"{method}: sample_weight holds NaN or infinite values, at sample indices "
                    f"{_non_finite_rows(weight, n)}"
                )
            self.sample_weight = weight
        self.sample_weight = _with_class_weight(self.sample_weight, self.y, class_weight, method)

    def split(self, fraction):
        n = _length(self.x)
        cut = n - int(round(n * fraction))
        if cut <= 0 or cut >= n:
            raise ValueError(
                f"fit: validation_split={fraction} leaves no training or no validation "
                f"samples out of {n}"
            )
        head, tail = slice(0, cut), slice(cut, n)
        weight = self.sample_weight
        y_head = None if self.y is None else _slice(self.y, head)
        y_tail = None if self.y is None else _slice(self.y, tail)
        train = _Data(_slice(self.x, head), y_head, None, None, "fit", check=False)
        train.sample_weight = None if weight is None else weight[head]
        held = (_slice(self.x, tail), y_tail) + (() if weight is None else (weight[tail],))
        return train, held


class _ArrayBatches:
    """Batches of arrays, reshuffled each pass from the global generator.

    Without `steps`, every iteration is one pass over the data. With `steps`
    (`fit`'s `steps_per_epoch`, `evaluate`'s or `validation_steps`), an
    iteration takes the next `steps` batches of a pass that carries on from
    iteration to iteration (`carry_on`, fit's training data) or starts afresh
    each time (validation). As in Keras 3: `batch_size` None means
    `ceil(samples / steps)`; a pass that ends inside an iteration ends that
    iteration early (`ran_out`), and the next one starts a new (reshuffled)
    pass.
    """

    def __init__(self, data, batch_size, shuffle, steps=None, carry_on=False):
        self.data, self.shuffle = data, shuffle
        self.n = _length(data.x)
        if batch_size is None and steps is not None:
            batch_size = -(-self.n // steps)
        self.batch_size = _check_batch_size(batch_size)
        self.batches_per_pass = -(-self.n // self.batch_size)
        self.by_steps, self.carry_on = steps is not None, carry_on
        self.steps = self.batches_per_pass if steps is None else steps
        self.ran_out = self.exhausted = False  # (an array pass can always start again)
        self._pass, self._taken = None, 0

    def first_inputs(self):
        """The inputs of a first batch, without shuffling (to build the model)."""
        return _slice(self.data.x, slice(0, self.batch_size))

    def has_next(self):
        """Whether another batch comes: always, as a new pass can start."""
        return True

    def __iter__(self):
        if not self.by_steps:
            yield from self._one_pass()
            return
        if self._pass is None or not self.carry_on:
            self._pass, self._taken = self._one_pass(), 0
        self.ran_out = False
        for _ in range(self.steps):
            if self._taken == self.batches_per_pass:
                self.ran_out = True
                break
            self._taken += 1
            yield next(self._pass)
        if self._taken == self.batches_per_pass:  # the next iteration starts a new pass
            self._pass = None

    def _one_pass(self):
        x, y, w = self.data.x, self.data.y, self.data.sample_weight
        if self.shuffle == "batch":  # as Keras: the batches in order, each one shuffled
            for start in range(0, self.n, self.batch_size):
                size = min(self.batch_size, self.n - start)
                index = start + random.generator().permutation(size)
                yield (
                    _slice(x, index),
                    None if y is None else _slice(y, index),
                    (None if w is None else w[index]),
                )
            return
        if self.shuffle:
            # One gather per pass, then contiguous slices (views) per step.
            order = random.generator().permutation(self.n)
            x, y = _slice(x, order), None if y is None else _slice(y, order)
            w = None if w is None else w[order]
        for start in range(0, self.n, self.batch_size):
            index = slice(start, start + self.batch_size)
            yield (
                _slice(x, index),
                None if y is None else _slice(y, index),
                (None if w is None else w[index]),
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
        return data.x, data.y, data.sample_weight

    def first_inputs(self):
        """The inputs of the first batch (to build the model)."""
        if self.by_steps:  # peek, and hand the batch to the first pass
            if self.has_next():
                return self._pending[0]
        else:
            for x, _, _ in self:
                return x
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


def _as_targets(y):
    if y is None:
        return None
    if isinstance(y, dict):
        return {key: np.asarray(value) for key, value in y.items()}
    if isinstance(y, (list, tuple)) and y and all(isinstance(a, (np.ndarray, Tensor)) for a in y):
        return [np.asarray(value) for value in y]
    return np.asarray(y)


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
