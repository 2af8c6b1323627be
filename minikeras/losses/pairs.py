"""What losses and metrics share before any arithmetic: `(y_true, y_pred)` aligned and
cast to one float dtype, and the checks of `label_smoothing` and `ignore_class`."""

import numpy as np

from minikeras import config, ops

__all__ = [
    "check_ignore_class",
    "check_label_smoothing",
    "matched_pair",
    "squeeze_or_expand_to_same_rank",
]


def squeeze_or_expand_to_same_rank(x1, x2, expand_rank_1=True):
    """Aligns ranks that differ by a trailing axis of size 1, as Keras does.

    If one operand has one more axis than the other and that last axis has
    size 1, it is squeezed; except that a 1-D partner is expanded instead
    (with `expand_rank_1`), so (32,) against (32, 1) gives two (32, 1)s.

    Args:
        x1: Tensor or array-like.
        x2: Tensor or array-like.
        expand_rank_1: expand a 1-D operand rather than squeeze its partner.

    Returns:
        The pair `(x1, x2)` as Tensors, possibly reshaped.

    Example:
        >>> a, b = mk.losses.squeeze_or_expand_to_same_rank(mk.ops.ones((4,)), mk.ops.ones((4, 1)))
        >>> a.shape, b.shape
        ((4, 1), (4, 1))
    """
    x1, x2 = ops.convert_to_tensor(x1), ops.convert_to_tensor(x2)
    rank1, rank2 = x1.ndim, x2.ndim
    if rank1 == rank2 + 1 and x1.shape[-1] == 1:
        if rank2 == 1 and expand_rank_1:
            x2 = ops.expand_dims(x2, -1)
        else:
            x1 = ops.squeeze(x1, -1)
    elif rank2 == rank1 + 1 and x2.shape[-1] == 1:
        if rank1 == 1 and expand_rank_1:
            x1 = ops.expand_dims(x1, -1)
        else:
            x2 = ops.squeeze(x2, -1)
    return x1, x2


def _float_pair(y_true, y_pred):
    """`y_pred` as a float Tensor (floatx if integer), `y_true` cast to its dtype."""
    # Read together first (`ops.operands`): a numpy float64 y_pred beside a float32
    # Tensor y_true (or the other way) takes the Tensor's precision.
    y_true, y_pred = ops.operands.narrowed_operands(y_true, y_pred)
    y_pred = ops.convert_to_tensor(y_pred)
    if y_pred.dtype.kind != "f":
        y_pred = ops.cast(y_pred, config.floatx())
    y_true = ops.convert_to_tensor(y_true)
    if y_true.dtype != y_pred.dtype:
        y_true = ops.cast(y_true, y_pred.dtype)
    return y_true, y_pred


def matched_pair(name, y_true, y_pred):
    """`(y_true, y_pred)` as float Tensors of one shape, after Keras's trailing-axis alignment.

    `y_pred` becomes a float Tensor (floatx if it holds integers) and `y_true` takes
    its dtype; ranks that differ by a trailing axis of size 1 are aligned as by
    `squeeze_or_expand_to_same_rank`.

    Args:
        name: the loss or metric asking, for the error message.
        y_true: targets.
        y_pred: predictions.

    Returns:
        The pair `(y_true, y_pred)` as Tensors of one shape and one float dtype.

    Raises:
        ValueError: if the shapes still differ, naming `name` and both shapes.

    Example:
        >>> from minikeras.losses.pairs import matched_pair
        >>> y_true, y_pred = matched_pair("mse", [1, 0], [[0.5], [0.25]])
        >>> str(y_true.dtype), y_true.shape, y_pred.shape
        ('float32', (2, 1), (2, 1))
        >>> matched_pair("mse", [[1.0, 0.0]], [[1.0, 0.0, 0.0]])
        Traceback (most recent call last):
        ...
        ValueError: mse: y_true and y_pred must have the same shape (up to a trailing axis of size 1); got y_true shape (1, 2) and y_pred shape (1, 3)
    """  # noqa: E501
    y_true, y_pred = _float_pair(y_true, y_pred)
    aligned_true, aligned_pred = squeeze_or_expand_to_same_rank(y_true, y_pred)
    if aligned_true.shape != aligned_pred.shape:
        raise ValueError(
            f"{name}: y_true and y_pred must have the same shape (up to a trailing axis "
            f"of size 1); got y_true shape {y_true.shape} and y_pred shape {y_pred.shape}"
        )
    return aligned_true, aligned_pred


def check_label_smoothing(name, label_smoothing):
    """`label_smoothing` as a float in [0, 1], or a ValueError naming `name`.

    Args:
        name: the loss or metric taking it, for the error message.
        label_smoothing: a number.

    Returns:
        The float.

    Raises:
        ValueError: if it lies outside [0, 1].

    Example:
        >>> from minikeras.losses.pairs import check_label_smoothing
        >>> check_label_smoothing("BinaryCrossentropy", 0)
        0.0
        >>> check_label_smoothing("BinaryCrossentropy", 1.5)
        Traceback (most recent call last):
        ...
        ValueError: BinaryCrossentropy: label_smoothing must lie in [0, 1], got 1.5
    """
    label_smoothing = float(label_smoothing)
    if not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(f"{name}: label_smoothing must lie in [0, 1], got {label_smoothing}")
    return label_smoothing


def check_ignore_class(owner, ignore_class):
    """`ignore_class` as an int (or None), or a ValueError naming `owner`.

    Args:
        owner: the loss or metric taking it, for the error message.
        ignore_class: None, or the label whose samples are left out.

    Returns:
        None or an int.

    Raises:
        ValueError: if it is neither None nor an int (a bool is not one).

    Example:
        >>> from minikeras.losses.pairs import check_ignore_class
        >>> check_ignore_class("SparseCategoricalCrossentropy", np.int64(-1))
        -1
        >>> check_ignore_class("SparseCategoricalCrossentropy", 1.0)
        Traceback (most recent call last):
        ...
        ValueError: SparseCategoricalCrossentropy: ignore_class must be None or an int, got 1.0
    """
    if ignore_class is None:
        return None
    if isinstance(ignore_class, bool) or not isinstance(ignore_class, (int, np.integer)):
        raise ValueError(f"{owner}: ignore_class must be None or an int, got {ignore_class!r}")
    return int(ignore_class)
