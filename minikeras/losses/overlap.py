"""Overlap losses for segmentation: Dice and its weighted form, Tversky.

Both compare the soft intersection `sum(y_true * y_pred)` with the sizes of
the two masks; `axis` says which axes are summed (None: all of them, one
number for the whole batch, as in Keras).
"""

from minikeras import config, ops
from minikeras.losses.base import LossFunctionWrapper
from minikeras.losses.pairs import matched_pair

__all__ = ["Dice", "Tversky", "dice", "tversky"]


def dice(y_true, y_pred, axis=None):
    """Dice loss: one minus the soft Dice coefficient of the two masks.

        intersection = sum(y_true * y_pred, axis)
        result = 1 - 2 * intersection / (sum(y_true, axis) + sum(y_pred, axis) + eps)

    Args:
        y_true: target masks (0/1 or soft), of `y_pred`'s shape (a trailing
            axis of size 1 may differ).
        y_pred: predicted masks, probabilities.
        axis: None (sum everything: one loss for the batch), an int or a
            tuple of ints; `(1, 2, 3)` gives one loss per image of shape
            (batch, height, width, channels).

    Returns:
        A Tensor of losses, of `y_pred`'s shape without `axis`.

    Raises:
        ValueError: if the shapes differ, naming both.

    Example:
        >>> mk.losses.dice([[1.0, 1.0, 0.0, 0.0]], [[1.0, 0.0, 1.0, 0.0]]).numpy()
        array(0.5, dtype=float32)
    """
    y_true, y_pred = matched_pair("dice", y_true, y_pred)
    intersection = ops.sum(y_true * y_pred, axis=axis)
    sizes = ops.sum(y_true, axis=axis) + ops.sum(y_pred, axis=axis)
    return 1.0 - 2.0 * intersection / (sizes + config.epsilon())


def tversky(y_true, y_pred, alpha=0.5, beta=0.5, axis=None):
    """Tversky loss: Dice with false positives and false negatives weighed apart.

        intersection = sum(y_true * y_pred, axis)
        false_positives = sum((1 - y_true) * y_pred, axis)
        false_negatives = sum(y_true * (1 - y_pred), axis)
        result = 1 - intersection / (intersection + alpha * false_positives
                                     + beta * false_negatives + eps)

    `alpha = beta = 0.5` gives `dice`. Keras 3.15 computes the two counts
    with `y_true` and `y_pred` exchanged (so `alpha` weighs its false
    negatives); minikeras follows the formula above, as Keras's own source
    does from 3.16.

    Args:
        y_true: target masks (0/1 or soft), of `y_pred`'s shape (a trailing
            axis of size 1 may differ).
        y_pred: predicted masks, probabilities.
        alpha: float, the weight of false positives.
        beta: float, the weight of false negatives.
        axis: None (sum everything: one loss for the batch), an int or a
            tuple of ints.

    Returns:
        A Tensor of losses, of `y_pred`'s shape without `axis`.

    Raises:
        ValueError: if the shapes differ, naming both.

    Example:
        >>> mk.losses.tversky([[1.0, 1.0, 0.0]], [[1.0, 0.0, 1.0]], alpha=0.0, beta=1.0).numpy()
        array(0.5, dtype=float32)
    """
    y_true, y_pred = matched_pair("tversky", y_true, y_pred)
    intersection = ops.sum(y_true * y_pred, axis=axis)
    false_positives = ops.sum((1.0 - y_true) * y_pred, axis=axis)
    false_negatives = ops.sum(y_true * (1.0 - y_pred), axis=axis)
    denominator = intersection + alpha * false_positives + beta * false_negatives
    return 1.0 - intersection / (denominator + config.epsilon())


def _checked_axis(owner, axis):
    """`axis` as None, an int or a tuple of ints (a list becomes a tuple: JSON has no tuples)."""
    if axis is None:
        return None
    values = axis if isinstance(axis, (list, tuple)) else (axis,)
    if not all(isinstance(a, int) and not isinstance(a, bool) for a in values):
        raise ValueError(f"{owner}: axis must be None, an int or a tuple of ints, got {axis!r}")
    return tuple(values) if isinstance(axis, (list, tuple)) else axis


class Dice(LossFunctionWrapper):
    """Dice loss, one minus the soft Dice coefficient (see `dice`).

    With the default `axis=None` the loss is one number for the whole batch,
    as in Keras: per-sample weights (or a mask) scale it by their mean; pass
    `axis=(1, 2, 3)` for one loss per image.

    Args:
        reduction: as in `Loss`.
        name: the loss's name.
        axis: None, an int or a tuple of ints: the axes summed over.
        dtype: as in `Loss`.

    Raises:
        ValueError: if `axis` is not None, an int or a tuple of ints.

    Example:
        >>> y_true = [[[1.0, 1.0], [0.0, 0.0]], [[1.0, 0.0], [0.0, 0.0]]]
        >>> y_pred = [[[1.0, 0.0], [1.0, 0.0]], [[1.0, 0.0], [0.0, 0.0]]]
        >>> mk.losses.Dice(reduction=None, axis=(1, 2))(y_true, y_pred).numpy()
        array([0.5, 0. ], dtype=float32)
    """

    def __init__(self, reduction="sum_over_batch_size", name="dice", axis=None, dtype=None):
        self.axis = _checked_axis(type(self).__name__, axis)
        super().__init__(dice, reduction=reduction, name=name, dtype=dtype, axis=self.axis)


class Tversky(LossFunctionWrapper):
    """Tversky loss, Dice with weighted false positives and negatives (see `tversky`).

    Args:
        alpha: float, the weight of false positives.
        beta: float, the weight of false negatives.
        reduction: as in `Loss`.
        name: the loss's name.
        axis: None, an int or a tuple of ints: the axes summed over.
        dtype: as in `Loss`.

    Raises:
        ValueError: if `axis` is not None, an int or a tuple of ints.

    Example:
        >>> float(mk.losses.Tversky(alpha=0.0, beta=1.0)([[1.0, 1.0, 0.0]], [[1.0, 0.0, 1.0]]))
        0.5
    """

    def __init__(
        self,
        alpha=0.5,
        beta=0.5,
        reduction="sum_over_batch_size",
        name="tversky",
        axis=None,
        dtype=None,
    ):
        self.alpha, self.beta = float(alpha), float(beta)
        self.axis = _checked_axis(type(self).__name__, axis)
        super().__init__(
            tversky,
            reduction=reduction,
            name=name,
            dtype=dtype,
            alpha=self.alpha,
            beta=self.beta,
            axis=self.axis,
        )
