"""Loss functions: one loss per sample from `(y_true, y_pred)`, with their shape checks."""

import warnings

import numpy as np

from minikeras import config, ops
from minikeras.losses.pairs import (
    _float_pair,
    check_ignore_class,
    check_label_smoothing,
    matched_pair,
    squeeze_or_expand_to_same_rank,  # (public here before it moved to losses.pairs)
)

__all__ = [
    "BCE",
    "KLD",
    "MAE",
    "MSE",
    "bce",
    "binary_crossentropy",
    "categorical_crossentropy",
    "huber",
    "kl_divergence",
    "kld",
    "mae",
    "mean_absolute_error",
    "mean_squared_error",
    "mse",
    "sparse_categorical_crossentropy",
    "squeeze_or_expand_to_same_rank",
]


# ---------------------------------------------------------------- functions


def mean_squared_error(y_true, y_pred):
    """Mean squared error over the last axis: `mean((y_true - y_pred) ** 2, axis=-1)`.

    Args:
        y_true: targets, of `y_pred`'s shape (a trailing axis of size 1 may differ).
        y_pred: predictions.

    Returns:
        A Tensor of per-sample losses, of shape `y_pred.shape[:-1]`.

    Raises:
        ValueError: if the shapes differ, naming both.

    Example:
        >>> mk.losses.mse([[0.0, 1.0]], [[1.0, 1.0]]).numpy()
        array([0.5], dtype=float32)
    """
    y_true, y_pred = matched_pair("mean_squared_error", y_true, y_pred)
    return ops.mean(ops.square(y_true - y_pred), axis=-1)


def mean_absolute_error(y_true, y_pred):
    """Mean absolute error over the last axis: `mean(abs(y_true - y_pred), axis=-1)`.

    Args:
        y_true: targets, of `y_pred`'s shape (a trailing axis of size 1 may differ).
        y_pred: predictions.

    Returns:
        A Tensor of per-sample losses, of shape `y_pred.shape[:-1]`.

    Raises:
        ValueError: if the shapes differ, naming both.

    Example:
        >>> mk.losses.mae([[0.0, 1.0]], [[2.0, 1.0]]).numpy()
        array([1.], dtype=float32)
    """
    y_true, y_pred = matched_pair("mean_absolute_error", y_true, y_pred)
    return ops.mean(ops.abs(y_true - y_pred), axis=-1)


def huber(y_true, y_pred, delta=1.0):
    """Huber loss: quadratic for small errors, linear for large ones.

        error = y_pred - y_true
        loss = 0.5 * error ** 2                      if |error| <= delta
               delta * |error| - 0.5 * delta ** 2    otherwise
        result = mean(loss, axis=-1)

    computed as `0.5 * within * (2 * |error| - within)` with
    `within = minimum(|error|, delta)`: the same numbers (the linear part
    to a rounding) and gradients (`error`, or `delta * sign(error)`), from
    recorded ops only.

    Args:
        y_true: targets, of `y_pred`'s shape (a trailing axis of size 1 may differ).
        y_pred: predictions.
        delta: positive float, where the loss turns from quadratic to linear.

    Returns:
        A Tensor of per-sample losses, of shape `y_pred.shape[:-1]`.

    Raises:
        ValueError: if the shapes differ, or `delta` is not positive.

    Example:
        >>> mk.losses.huber([[0.0, 0.0]], [[0.5, 3.0]]).numpy()
        array([1.3125], dtype=float32)
    """
    delta = float(delta)
    if not delta > 0:
        raise ValueError(f"huber: delta must be positive, got {delta}")
    y_true, y_pred = matched_pair("huber", y_true, y_pred)
    abs_error = ops.abs(y_pred - y_true)
    # The error's share up to delta, and beyond it: no comparison, whose booleans a
    # compiled step could not replay (trainers.compiled_step), only recorded ops.
    within = ops.minimum(abs_error, delta)
    return ops.mean(0.5 * within * (2.0 * abs_error - within), axis=-1)


def kl_divergence(y_true, y_pred):
    """Kullback-Leibler divergence over the last axis.

        y_true, y_pred = clip(y_true, eps, 1), clip(y_pred, eps, 1)
        result = sum(y_true * log(y_true / y_pred), axis=-1)

    Args:
        y_true: target distributions, of `y_pred`'s shape.
        y_pred: predicted distributions (probabilities).

    Returns:
        A Tensor of per-sample losses, of shape `y_pred.shape[:-1]`.

    Raises:
        ValueError: if the shapes differ, naming both.

    Example:
        >>> mk.losses.kld([[0.5, 0.5]], [[0.5, 0.5]]).numpy()
        array([0.], dtype=float32)
    """
    y_true, y_pred = matched_pair("kl_divergence", y_true, y_pred)
    y_true = ops.clip(y_true, config.epsilon(), 1.0)
    y_pred = ops.clip(y_pred, config.epsilon(), 1.0)
    return ops.sum(y_true * ops.log(y_true / y_pred), axis=-1)


def binary_crossentropy(y_true, y_pred, from_logits=False, label_smoothing=0.0, axis=-1):
    """Binary cross-entropy, averaged over `axis`.

        y_true = y_true * (1 - label_smoothing) + 0.5 * label_smoothing
        p = sigmoid(y_pred) if from_logits else clip(y_pred, eps, 1 - eps)
        result = mean(-(y_true * log(p) + (1 - y_true) * log(1 - p)), axis)

    With `from_logits=True` the sigmoid is fused in, so that any logit gives a
    finite loss and gradient.

    Args:
        y_true: 0/1 targets, of `y_pred`'s shape (a trailing axis of size 1 may differ).
        y_pred: probabilities, or logits with `from_logits=True`.
        from_logits: whether `y_pred` holds logits.
        label_smoothing: float in [0, 1]; pulls targets towards 0.5.
        axis: the axis to average over.

    Returns:
        A Tensor of per-sample losses.

    Raises:
        ValueError: if the shapes differ or `label_smoothing` is outside [0, 1].

    Example:
        >>> mk.losses.bce([[1.0, 0.0]], [[1000.0, -1000.0]], from_logits=True).numpy()
        array([0.], dtype=float32)
    """
    label_smoothing = check_label_smoothing("binary_crossentropy", label_smoothing)
    y_true, y_pred = matched_pair("binary_crossentropy", y_true, y_pred)
    if label_smoothing:
        y_true = y_true * (1.0 - label_smoothing) + 0.5 * label_smoothing
    losses = ops.binary_crossentropy(y_true, y_pred, from_logits=from_logits)
    return ops.mean(losses, axis=axis)


def categorical_crossentropy(y_true, y_pred, from_logits=False, label_smoothing=0.0, axis=-1):
    """Cross-entropy between one-hot (or soft) targets and predicted distributions.

        y_true = y_true * (1 - label_smoothing) + label_smoothing / num_classes
        p = softmax(y_pred) if from_logits else y_pred / sum(y_pred), clipped to [eps, 1 - eps]
        result = -sum(y_true * log(p), axis)

    With `from_logits=True` the softmax is fused in: large logits give finite
    losses and gradients.

    Args:
        y_true: one-hot or soft targets, of `y_pred`'s shape.
        y_pred: probabilities, or logits with `from_logits=True`.
        from_logits: whether `y_pred` holds logits.
        label_smoothing: float in [0, 1]; mixes the targets with the uniform
            distribution over the `y_pred.shape[axis]` classes.
        axis: the class axis.

    Returns:
        A Tensor of per-sample losses, of `y_pred`'s shape without `axis`.

    Raises:
        ValueError: if the shapes differ (integer labels belong to
            `sparse_categorical_crossentropy`) or `label_smoothing` is outside [0, 1].

    Example:
        >>> mk.losses.categorical_crossentropy(
        ...     [[0.0, 1.0]], [[-1000.0, 1000.0]], from_logits=True
        ... ).numpy()
        array([0.], dtype=float32)
    """
    label_smoothing = check_label_smoothing("categorical_crossentropy", label_smoothing)
    y_true, y_pred = _float_pair(y_true, y_pred)
    if y_true.shape != y_pred.shape:
        hint = ""
        if y_true.ndim == y_pred.ndim - 1 or (y_true.ndim and y_true.shape[-1] == 1):
            hint = "; for integer class labels use sparse_categorical_crossentropy"
        raise ValueError(
            "categorical_crossentropy: y_true and y_pred must have the same shape; got "
            f"y_true shape {y_true.shape} and y_pred shape {y_pred.shape}{hint}"
        )
    if y_pred.ndim and y_pred.shape[axis] == 1:
        warnings.warn(
            f"categorical_crossentropy: y_pred has one class (shape {y_pred.shape}), so the "
            "loss is always 0; use binary_crossentropy for two classes",
            UserWarning,
            stacklevel=2,
        )
    if label_smoothing:
        num_classes = y_pred.shape[axis]
        y_true = y_true * (1.0 - label_smoothing) + label_smoothing / num_classes
    return ops.categorical_crossentropy(y_true, y_pred, from_logits=from_logits, axis=axis)


def sparse_categorical_crossentropy(y_true, y_pred, from_logits=False, ignore_class=None, axis=-1):
    """Cross-entropy between integer class labels and predicted distributions.

        p = softmax(y_pred) if from_logits else clip(y_pred, eps, 1 - eps)
        result = -log(p[..., y_true])   (0 where y_true == ignore_class)

    Args:
        y_true: integer labels of shape `y_pred.shape` without `axis`, or with
            a trailing axis of size 1 (e.g. (batch,) or (batch, 1)).
        y_pred: probabilities, or logits with `from_logits=True`.
        from_logits: whether `y_pred` holds logits (the softmax is then fused
            in: large logits give finite losses and gradients).
        ignore_class: None, or an int label (such as -1 or 255, a "void"
            class; it need not be a valid class) whose entries get loss 0 and
            gradient 0. Keras also marks them in a mask so that its losses
            leave them out of the mean; `SparseCategoricalCrossentropy` does
            that here, this function returns only the zeros.
        axis: the class axis.

    Returns:
        A Tensor of per-sample losses, of `y_pred`'s shape without `axis`.

    Raises:
        ValueError: if the label shape does not fit (one-hot targets belong to
            `categorical_crossentropy`), a label is out of range (other than
            `ignore_class`), or `ignore_class` is not an int.

    Example:
        >>> mk.losses.sparse_categorical_crossentropy(
        ...     [1, 0], [[0.0, 1000.0], [0.0, 0.0]], True
        ... ).numpy()
        array([0.       , 0.6931472], dtype=float32)
        >>> mk.losses.sparse_categorical_crossentropy(
        ...     [1, -1], [[0.0, 0.0], [0.0, 0.0]], True, ignore_class=-1
        ... ).numpy()
        array([0.6931472, 0.       ], dtype=float32)
    """
    y_true, y_pred = _sparse_pair(y_true, y_pred, axis)
    if ignore_class is None:
        return ops.sparse_categorical_crossentropy(
            y_true, y_pred, from_logits=from_logits, axis=axis
        )
    valid = _valid_labels(y_true, y_pred, ignore_class)
    class_axis = axis % y_pred.ndim
    # Ignored entries get label 0 and scores of 1 (Keras uses 0s, which make 0 / 0
    # in the normalization of probabilities), so that neither a label out of range
    # nor a nan among their scores reaches the loss or its gradient.
    labels = ops.where(valid, ops.reshape(y_true, valid.shape), 0)
    y_pred = ops.where(np.expand_dims(valid, class_axis), y_pred, 1.0)
    losses = ops.sparse_categorical_crossentropy(labels, y_pred, from_logits=from_logits, axis=axis)
    return ops.where(valid, losses, 0.0)


def _valid_labels(y_true, y_pred, ignore_class):
    """A numpy mask of the per-sample losses' shape: True where `y_true != ignore_class`."""
    ignore_class = check_ignore_class("sparse_categorical_crossentropy", ignore_class)
    labels = np.asarray(y_true.numpy())
    if labels.ndim == y_pred.ndim:  # a trailing axis of size 1
        labels = labels[..., 0]
    return labels != ignore_class


def _sparse_pair(y_true, y_pred, axis):
    """Tensors of labels and float predictions, after checking that their shapes fit."""
    # (numpy float64 predictions beside a Tensor of labels take floatx: ops.operands)
    y_true, y_pred = ops.operands.narrowed_operands(y_true, y_pred)
    y_pred = ops.convert_to_tensor(y_pred)
    if y_pred.dtype.kind != "f":
        y_pred = ops.cast(y_pred, config.floatx())
    y_true = ops.convert_to_tensor(y_true)
    if not y_pred.ndim:
        raise ValueError("sparse_categorical_crossentropy: y_pred needs a class axis; got shape ()")
    sample_shape = y_pred.shape[: axis % y_pred.ndim] + y_pred.shape[axis % y_pred.ndim + 1 :]
    if y_true.shape not in (sample_shape, sample_shape + (1,)):
        hint = ""
        if y_true.shape == y_pred.shape:
            hint = "; for one-hot targets use categorical_crossentropy"
        raise ValueError(
            f"sparse_categorical_crossentropy: y_true must have shape {sample_shape} or "
            f"{sample_shape + (1,)} (y_pred's shape without its class axis); got y_true shape "
            f"{y_true.shape} and y_pred shape {y_pred.shape}{hint}"
        )
    return y_true, y_pred


mse = MSE = mean_squared_error
mae = MAE = mean_absolute_error
kld = KLD = kl_divergence
bce = BCE = binary_crossentropy
