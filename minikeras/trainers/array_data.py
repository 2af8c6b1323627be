"""Arrays given to `fit`, `evaluate` and `predict`: checked once, then cut into batches.

`x`, `y` and `sample_weight` are numpy arrays, tensors, or lists, tuples
and dicts of them. `_Data` checks them once: numeric, finite targets and
weights, one length, `class_weight` folded into the sample weights.
`_ArrayBatches` cuts them into (shuffled) batches. The helpers that slice
and measure such nested arrays are here too.
"""

import numbers

import numpy as np

from minikeras import config, random, tree
from minikeras.engine.tensor import Tensor
from minikeras.utils.data_tuples import pack_x_y_sample_weight

__all__ = []


def _with_class_weight(sample_weight, y, class_weight, method="fit"):
    if not class_weight:
        return sample_weight
    if y is None or isinstance(y, (list, tuple, dict)):
        # (as Keras 3, which refuses even a one-item list, tuple or dict here)
        got = "no y" if y is None else f"a {type(y).__name__} of {len(y)}"
        raise ValueError(
            f"{method}: class_weight needs y as one array of targets (a model with one "
            f"output), got {got}; pass y itself, not in a list, tuple or dict"
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


def _check_numeric(array, what, method, kinds="biuf"):
    if array.dtype.kind not in kinds:
        raise ValueError(f"{method}: {what} must be numeric, got dtype {array.dtype}")
    if array.ndim == 0:
        raise ValueError(f"{method}: {what} must have a batch axis, got a scalar")


def _object_strings(array):
    return (
        array.dtype.kind == "O"
        and array.ndim > 0
        and array.size > 0
        and all(isinstance(value, (str, bytes)) for value in array.flat)
    )


def _as_input(x, dtype, method):
    if x is None:
        raise ValueError(f"{method}: x is missing")
    if isinstance(x, (list, tuple)) and x and all(isinstance(a, (np.ndarray, Tensor)) for a in x):
        return type(x)(_as_input(a, dtype, method) for a in x)
    if isinstance(x, dict):
        return {key: _as_input(a, dtype, method) for key, a in x.items()}
    array = np.asarray(x)
    if not _object_strings(array):  # (object arrays of str, as pandas gives string columns)
        _check_numeric(array, "x", method, "biufUS")  # (strings feed an Input(dtype="string"))
    return _floats_as(array, dtype)  # (once, not at every step)


def _non_finite_rows(array, n):
    """Indices of the samples holding NaN or infinity, for error messages."""
    bad = np.flatnonzero(~np.isfinite(array.reshape(n, -1)).all(axis=1))
    return f"{bad[:10].tolist()}{' ...' if len(bad) > 10 else ''}"


def _checked_weight(weight, n, method):
    _check_numeric(weight, "sample_weight", method)
    if len(weight) != n:
        raise ValueError(f"{method}: x has {n} samples but sample_weight has {len(weight)}")
    weight = weight.astype("float32")
    if not np.all(np.isfinite(weight)):
        raise ValueError(
            f"{method}: sample_weight holds NaN or infinite values, at sample indices "
            f"{_non_finite_rows(weight, n)}"
        )
    return weight


class _Data:
    """Checked arrays: inputs, targets and optional sample weights (times class weights)."""

    def __init__(
        self, x, y, sample_weight, dtype, method, class_weight=None, check=True, need_y=True
    ):
        self.x = _as_input(x, dtype, method) if check else x
        if y is None and need_y:
            raise ValueError(f"{method}: y is missing (targets are needed: the compiled loss)")
        self.y = _as_targets(y, config.floatx()) if check else y
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
            # (one array, or one per output: a list, tuple or dict as y is)
            weights = _as_targets(sample_weight, np.float32)  # (checked as float32 below)
            self.sample_weight = tree.map_structure(
                lambda w: _checked_weight(w, n, method), weights
            )
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
        train.sample_weight = None if weight is None else _slice(weight, head)
        held = (_slice(self.x, tail), y_tail) + (() if weight is None else (_slice(weight, tail),))
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
        # (a pass's own generator: no second generator to resume at every batch)
        return self._one_pass() if not self.by_steps else self._by_steps()

    def _by_steps(self):
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
                yield packed(
                    _slice(x, index),
                    None if y is None else _slice(y, index),
                    (None if w is None else _slice(w, index)),
                )
            return
        if self.shuffle:
            # One gather per pass, then contiguous slices (views) per step.
            order = random.generator().permutation(self.n)
            x, y = _slice(x, order), None if y is None else _slice(y, order)
            w = None if w is None else _slice(w, order)
        if type(x) is np.ndarray and type(y) is np.ndarray and w is None:
            # (the usual data: `packed`'s `(x, y)` of views, without its calls at every batch)
            for start in range(0, self.n, self.batch_size):
                stop = start + self.batch_size
                yield x[start:stop], y[start:stop]
            return
        for start in range(0, self.n, self.batch_size):
            index = slice(start, start + self.batch_size)
            yield packed(
                _slice(x, index),
                None if y is None else _slice(y, index),
                (None if w is None else _slice(w, index)),
            )


def packed(x, y, sample_weight):
    """A batch as Keras hands it to `train_step`: `(x, y)` without weights, `(x, y,
    sample_weight)` with them, `x` alone (`(x,)` for a tuple or list of inputs) without
    targets; `(x, None, sample_weight)` keeps weights given without targets."""
    if y is None and sample_weight is not None:
        return (x, None, sample_weight)
    return pack_x_y_sample_weight(x, y, sample_weight)


def _as_targets(y, dtype):
    """`y` as arrays; floating ones cast once to `dtype`: floatx, as Keras's adapters do.

    (Not to the model's dtype: a float16 model's targets would overflow or
    round. Cast here, float64 targets do not keep a step from being compiled.)
    """
    if y is None:
        return None
    if isinstance(y, dict):
        return {key: _as_target(value, dtype) for key, value in y.items()}
    if isinstance(y, (list, tuple)) and y and all(isinstance(a, (np.ndarray, Tensor)) for a in y):
        return [_as_target(value, dtype) for value in y]
    return _as_target(y, dtype)


def _as_target(y, dtype):
    return _floats_as(np.asarray(y), dtype)


def _floats_as(array, dtype):
    """`array` cast to the floating `dtype` if it is floating and of another; else itself."""
    return array.astype(dtype) if array.dtype.kind == "f" and array.dtype != dtype else array
