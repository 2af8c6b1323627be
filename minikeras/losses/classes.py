"""The built-in `Loss` classes, each a `LossFunctionWrapper` of one loss function."""

import numpy as np

from minikeras import ops
from minikeras.engine.tensor import Tensor
from minikeras.losses.base import LossFunctionWrapper
from minikeras.losses.functions import (
    _sparse_pair,
    _valid_labels,
    binary_crossentropy,
    categorical_crossentropy,
    huber,
    kl_divergence,
    mean_absolute_error,
    mean_squared_error,
    sparse_categorical_crossentropy,
)
from minikeras.losses.pairs import check_ignore_class, check_label_smoothing
from minikeras.ops.cross_entropy import mean_sparse_categorical_crossentropy
from minikeras.ops.cross_entropy_ignoring import mean_sparse_categorical_crossentropy_ignoring

__all__ = [
    "BinaryCrossentropy",
    "CategoricalCrossentropy",
    "Huber",
    "KLDivergence",
    "MeanAbsoluteError",
    "MeanSquaredError",
    "SparseCategoricalCrossentropy",
]


class MeanSquaredError(LossFunctionWrapper):
    """Mean of squared errors: `mean((y_true - y_pred) ** 2)` (see `mean_squared_error`).

    Args:
        reduction: as in `Loss`.
        name: the loss's name.
        dtype: as in `Loss`.

    Example:
        >>> float(mk.losses.MeanSquaredError()([[0.0, 1.0]], [[1.0, 1.0]]))
        0.5
    """

    _per_element = True

    def __init__(self, reduction="sum_over_batch_size", name="mean_squared_error", dtype=None):
        super().__init__(mean_squared_error, reduction=reduction, name=name, dtype=dtype)


class MeanAbsoluteError(LossFunctionWrapper):
    """Mean of absolute errors: `mean(abs(y_true - y_pred))` (see `mean_absolute_error`).

    Args:
        reduction: as in `Loss`.
        name: the loss's name.
        dtype: as in `Loss`.

    Example:
        >>> float(mk.losses.MeanAbsoluteError()([[0.0, 1.0]], [[2.0, 1.0]]))
        1.0
    """

    _per_element = True

    def __init__(self, reduction="sum_over_batch_size", name="mean_absolute_error", dtype=None):
        super().__init__(mean_absolute_error, reduction=reduction, name=name, dtype=dtype)


class Huber(LossFunctionWrapper):
    """Huber loss, quadratic below `delta` and linear above (see `huber`).

    Args:
        delta: positive float, where the loss turns linear.
        reduction: as in `Loss`.
        name: the loss's name.
        dtype: as in `Loss`.

    Raises:
        ValueError: if `delta` is not positive.

    Example:
        >>> float(mk.losses.Huber(delta=1.0)([[0.0, 0.0]], [[0.5, 3.0]]))
        1.3125
    """

    _per_element = True

    def __init__(self, delta=1.0, reduction="sum_over_batch_size", name="huber_loss", dtype=None):
        self.delta = float(delta)
        if not self.delta > 0:
            raise ValueError(f"Huber: delta must be positive, got {delta}")
        super().__init__(huber, reduction=reduction, name=name, dtype=dtype, delta=self.delta)


class KLDivergence(LossFunctionWrapper):
    """Kullback-Leibler divergence `sum(y_true * log(y_true / y_pred))` (see `kl_divergence`).

    Args:
        reduction: as in `Loss`.
        name: the loss's name.
        dtype: as in `Loss`.

    Example:
        >>> round(float(mk.losses.KLDivergence()([[1.0, 0.0]], [[0.5, 0.5]])), 4)
        0.6931
    """

    def __init__(self, reduction="sum_over_batch_size", name="kl_divergence", dtype=None):
        super().__init__(kl_divergence, reduction=reduction, name=name, dtype=dtype)


class BinaryCrossentropy(LossFunctionWrapper):
    """Binary cross-entropy between 0/1 targets and probabilities or logits.

    See `binary_crossentropy` for the formula and label smoothing.

    Args:
        from_logits: whether `y_pred` holds logits (stable for any magnitude).
        label_smoothing: float in [0, 1]; targets become
            `y_true * (1 - label_smoothing) + 0.5 * label_smoothing`.
        axis: the axis to average over.
        reduction: as in `Loss`.
        name: the loss's name.
        dtype: as in `Loss`.

    Raises:
        ValueError: if `label_smoothing` is outside [0, 1].

    Example:
        >>> float(mk.losses.BinaryCrossentropy(from_logits=True)([1, 0], [1000.0, -1000.0]))
        0.0
    """

    _per_element = True

    def __init__(
        self,
        from_logits=False,
        label_smoothing=0.0,
        axis=-1,
        reduction="sum_over_batch_size",
        name="binary_crossentropy",
        dtype=None,
    ):
        self.from_logits = bool(from_logits)
        self.label_smoothing = check_label_smoothing(name, label_smoothing)
        super().__init__(
            binary_crossentropy,
            reduction=reduction,
            name=name,
            dtype=dtype,
            from_logits=self.from_logits,
            label_smoothing=self.label_smoothing,
            axis=axis,
        )


class CategoricalCrossentropy(LossFunctionWrapper):
    """Cross-entropy between one-hot targets and probabilities or logits.

    See `categorical_crossentropy` for the formula and label smoothing.

    Args:
        from_logits: whether `y_pred` holds logits (stable for any magnitude).
        label_smoothing: float in [0, 1]; targets become
            `y_true * (1 - label_smoothing) + label_smoothing / num_classes`.
        axis: the class axis.
        reduction: as in `Loss`.
        name: the loss's name.
        dtype: as in `Loss`.

    Raises:
        ValueError: if `label_smoothing` is outside [0, 1].

    Example:
        >>> round(float(mk.losses.CategoricalCrossentropy()([[0.0, 1.0]], [[0.5, 0.5]])), 4)
        0.6931
    """

    def __init__(
        self,
        from_logits=False,
        label_smoothing=0.0,
        axis=-1,
        reduction="sum_over_batch_size",
        name="categorical_crossentropy",
        dtype=None,
    ):
        self.from_logits = bool(from_logits)
        self.label_smoothing = check_label_smoothing(name, label_smoothing)
        super().__init__(
            categorical_crossentropy,
            reduction=reduction,
            name=name,
            dtype=dtype,
            from_logits=self.from_logits,
            label_smoothing=self.label_smoothing,
            axis=axis,
        )


class SparseCategoricalCrossentropy(LossFunctionWrapper):
    """Cross-entropy between integer labels and probabilities or logits.

    See `sparse_categorical_crossentropy`; labels have shape (batch,) or
    (batch, 1) for predictions of shape (batch, num_classes), or (batch,
    steps) for (batch, steps, num_classes). Entries labelled `ignore_class`
    get loss 0 and count as masked, as in Keras: with the mean reductions the
    loss is the mean over the other entries only (0 if all are ignored).

    Args:
        from_logits: whether `y_pred` holds logits (stable for any magnitude).
        ignore_class: None, or an int label (a "void" class such as -1 or
            255) whose entries do not count.
        reduction: as in `Loss`.
        axis: the class axis of `y_pred` (the last by default).
        name: the loss's name.
        dtype: as in `Loss`.

    Raises:
        ValueError: if `ignore_class` is not None or an int, or `axis` is not an int.

    Example:
        >>> float(
        ...     mk.losses.SparseCategoricalCrossentropy(from_logits=True)([1], [[-1000.0, 1000.0]])
        ... )
        0.0
        >>> loss = mk.losses.SparseCategoricalCrossentropy(from_logits=True, ignore_class=-1)
        >>> round(float(loss([0, -1, -1], [[0.0, 0.0], [5.0, 1.0], [2.0, 3.0]])), 6)  # log 2
        0.693147
    """

    def __init__(
        self,
        from_logits=False,
        ignore_class=None,
        reduction="sum_over_batch_size",
        axis=-1,
        name="sparse_categorical_crossentropy",
        dtype=None,
    ):
        self.ignore_class = check_ignore_class(type(self).__name__, ignore_class)
        self.from_logits = bool(from_logits)
        if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
            raise ValueError(f"{type(self).__name__}: axis must be an int, got {axis!r}")
        self.axis = int(axis)
        super().__init__(
            sparse_categorical_crossentropy,
            reduction=reduction,
            name=name,
            dtype=dtype,
            from_logits=self.from_logits,
            ignore_class=self.ignore_class,
            axis=self.axis,
        )

    def get_config(self):
        """Returns the constructor arguments, Keras's `ignore_class` among them.

        Returns:
            A dict.

        Example:
            >>> mk.losses.SparseCategoricalCrossentropy().get_config()["ignore_class"] is None
            True
        """
        return {**super().get_config(), "ignore_class": self.ignore_class}

    def __call__(self, y_true, y_pred, sample_weight=None, mask=None):
        """Computes the reduced loss; the usual training case is one fused op.

        Logits, no `sample_weight` and the mean over the batch (the default
        reduction) take `ops.cross_entropy.mean_sparse_categorical_crossentropy`: the
        same number as the general path, with fewer recorded ops.

        Args:
            y_true: integer labels of shape (batch,) or (batch, 1).
            y_pred: probabilities, or logits with `from_logits=True`.
            sample_weight: None, or weights of shape (batch,) or broadcastable.
            mask: None, or booleans of the labels' shape (see `Loss.__call__`);
                entries labelled `ignore_class` are masked as well.

        Returns:
            A scalar Tensor, or per-sample losses for reduction `"none"` / None.

        Raises:
            ValueError: if the shapes do not fit or a label is out of range.

        Example:
            >>> loss = mk.losses.SparseCategoricalCrossentropy(from_logits=True)
            >>> round(float(loss([0, 1], [[0.0, 0.0], [0.0, 1000.0]])), 6)  # (log 2 + 0) / 2
            0.346574
        """
        fused = (
            sample_weight is None
            and mask is None
            and self._fn_kwargs["from_logits"]
            and self.axis == -1
            and self.reduction in ("sum_over_batch_size", "mean")
            and type(self).call is LossFunctionWrapper.call  # a subclass's own call() counts
            and self.fn is sparse_categorical_crossentropy
        )
        if self.ignore_class is not None:
            if fused and _plain_batch(y_true, y_pred, self.dtype):
                # The same numbers as the masked path below, in one op a compiled step
                # can replay (which labels count is found inside it).
                return mean_sparse_categorical_crossentropy_ignoring(
                    y_true, y_pred, self.ignore_class
                )
            mask = self._mask_ignored(y_true, y_pred, mask)
            fused = False
        if fused:
            if type(y_pred) is not Tensor:  # (a model's output is one already)
                y_pred = ops.convert_to_tensor(y_pred)
            value = y_pred._value  # (its array, one box deep in a tape: `Tensor.shape`, inline)
            array = value if type(value) is np.ndarray else getattr(value, "_value", None)
            if type(array) is np.ndarray:
                dtype, shape = array.dtype, array.shape
            else:
                dtype, shape = y_pred.dtype, y_pred.shape
            # (The mean of no losses is 0 in the general path, nan in the fused op.)
            if dtype.kind == "f" and self.dtype in (None, dtype) and 0 not in shape:
                # Labels of (batch,) or (batch, 1) for (batch, classes): the op checks them.
                if not (
                    type(y_true) is np.ndarray
                    and len(shape) == 2
                    and y_true.shape in (shape[:1], (shape[0], 1))
                ):
                    y_true, y_pred = _sparse_pair(y_true, y_pred, -1)
                return mean_sparse_categorical_crossentropy(y_true, y_pred)
        return super().__call__(y_true, y_pred, sample_weight, mask)

    def _mask_ignored(self, y_true, y_pred, mask):
        """`mask` (or all True) and False where the label is `ignore_class`."""
        y_true, y_pred = _sparse_pair(y_true, ops.convert_to_tensor(y_pred), self.axis)
        valid = _valid_labels(y_true, y_pred, self.ignore_class)
        if mask is None:
            return valid
        given = np.asarray(mask).astype(bool)
        if given.shape == (*valid.shape, 1):
            given = given[..., 0]
        if given.shape != valid.shape:
            raise ValueError(
                f"Loss {self.name!r}: the mask has shape {given.shape}, but the per-sample "
                f"losses have shape {valid.shape}"
            )
        return given & valid


def _plain_batch(y_true, y_pred, dtype):
    """Integer labels of (batch,) or (batch, 1) for float (batch, classes) scores."""
    shape, value = getattr(y_pred, "shape", None), getattr(y_pred, "dtype", None)
    return (
        shape is not None
        and type(y_true) is np.ndarray
        and y_true.dtype.kind in "iu"
        and len(shape) == 2
        and shape[0] > 0
        and y_true.shape in (shape[:1], (shape[0], 1))
        and value is not None
        and np.dtype(value).kind == "f"
        and dtype in (None, np.dtype(value))
    )
