"""Focal cross-entropy (Lin et al., 2017): cross-entropy that down-weights easy examples.

Each element's cross-entropy is multiplied by `(1 - p_t) ** gamma`, where
`p_t` is the probability given to the right answer, so that confident right
predictions contribute little and training focuses on the hard ones.
"""

import warnings

import numpy as np

from minikeras import config, ops
from minikeras.losses.base import LossFunctionWrapper
from minikeras.losses.pairs import _float_pair, check_label_smoothing, matched_pair

__all__ = [
    "BinaryFocalCrossentropy",
    "CategoricalFocalCrossentropy",
    "binary_focal_crossentropy",
    "categorical_focal_crossentropy",
]


def binary_focal_crossentropy(
    y_true,
    y_pred,
    apply_class_balancing=False,
    alpha=0.25,
    gamma=2.0,
    from_logits=False,
    label_smoothing=0.0,
    axis=-1,
):
    """Binary focal cross-entropy, averaged over `axis`.

        y_true = y_true * (1 - label_smoothing) + 0.5 * label_smoothing
        p = sigmoid(y_pred) if from_logits else y_pred
        p_t = y_true * p + (1 - y_true) * (1 - p)
        loss = (1 - p_t) ** gamma * binary_crossentropy(y_true, p)
        loss *= y_true * alpha + (1 - y_true) * (1 - alpha)   (apply_class_balancing)
        result = mean(loss, axis)

    With `gamma=0` and no class balancing this is `binary_crossentropy`.
    With `from_logits=True` the cross-entropy takes the logits (as
    `binary_crossentropy` does), where Keras applies the sigmoid first and
    clips it to [eps, 1 - eps]: the same number for logits of magnitude up to
    about 16, finite losses and gradients for any logit.

    Args:
        y_true: 0/1 targets, of `y_pred`'s shape (a trailing axis of size 1 may differ).
        y_pred: probabilities, or logits with `from_logits=True`.
        apply_class_balancing: whether to weigh class 1 by `alpha` and class 0
            by `1 - alpha`.
        alpha: float, the weight of class 1 with `apply_class_balancing`.
        gamma: float >= 0, the focusing parameter.
        from_logits: whether `y_pred` holds logits.
        label_smoothing: float in [0, 1]; pulls targets towards 0.5.
        axis: the axis to average over.

    Returns:
        A Tensor of per-sample losses.

    Raises:
        ValueError: if the shapes differ, `gamma` is negative or
            `label_smoothing` is outside [0, 1].

    Example:
        >>> mk.losses.binary_focal_crossentropy([[1.0, 0.0]], [[0.5, 0.5]], gamma=2.0).numpy()
        array([0.1732868], dtype=float32)
    """
    label_smoothing = check_label_smoothing("binary_focal_crossentropy", label_smoothing)
    gamma = _check_gamma("binary_focal_crossentropy", gamma)
    y_true, y_pred = matched_pair("binary_focal_crossentropy", y_true, y_pred)
    if label_smoothing:
        y_true = y_true * (1.0 - label_smoothing) + 0.5 * label_smoothing
    cross_entropy = ops.binary_crossentropy(y_true, y_pred, from_logits=from_logits)
    p = ops.sigmoid(y_pred) if from_logits else y_pred
    p_t = y_true * p + (1.0 - y_true) * (1.0 - p)
    losses = ops.power(1.0 - p_t, gamma) * cross_entropy
    if apply_class_balancing:
        losses = (y_true * alpha + (1.0 - y_true) * (1.0 - alpha)) * losses
    return ops.mean(losses, axis=axis)


def categorical_focal_crossentropy(
    y_true, y_pred, alpha=0.25, gamma=2.0, from_logits=False, label_smoothing=0.0, axis=-1
):
    """Categorical focal cross-entropy between one-hot targets and predicted distributions.

        y_true = y_true * (1 - label_smoothing) + label_smoothing / num_classes
        p = softmax(y_pred) if from_logits else y_pred / sum(y_pred), clipped to [eps, 1 - eps]
        result = sum(alpha * (1 - p) ** gamma * -y_true * log(p), axis)

    With `gamma=0` and `alpha=1` this is `categorical_crossentropy`. With
    `from_logits=True`, `log(p)` is `log_softmax(y_pred)` (finite for any
    logits), where Keras clips the softmax as for probabilities: the same
    number unless a probability falls below `epsilon`.

    Args:
        y_true: one-hot or soft targets, of `y_pred`'s shape.
        y_pred: probabilities, or logits with `from_logits=True`.
        alpha: float, or a list of one float per class: the classes' weights.
        gamma: float >= 0, the focusing parameter.
        from_logits: whether `y_pred` holds logits.
        label_smoothing: float in [0, 1]; mixes the targets with the uniform
            distribution over the classes.
        axis: the class axis.

    Returns:
        A Tensor of per-sample losses, of `y_pred`'s shape without `axis`.

    Raises:
        ValueError: if the shapes differ, `gamma` is negative, `axis` is not an
            int or `label_smoothing` is outside [0, 1].

    Example:
        >>> mk.losses.categorical_focal_crossentropy([[0.0, 1.0]], [[0.5, 0.5]]).numpy()
        array([0.04332169], dtype=float32)
    """
    name = "categorical_focal_crossentropy"
    label_smoothing = check_label_smoothing(name, label_smoothing)
    gamma = _check_gamma(name, gamma)
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
        raise ValueError(f"{name}: axis must be an int, got {axis!r}")
    y_true, y_pred = _float_pair(y_true, y_pred)
    if y_true.shape != y_pred.shape:
        raise ValueError(
            f"{name}: y_true and y_pred must have the same shape; got y_true shape "
            f"{y_true.shape} and y_pred shape {y_pred.shape}"
        )
    if y_pred.ndim and y_pred.shape[axis] == 1:
        warnings.warn(
            f"{name}: y_pred has one class (shape {y_pred.shape}), so the loss is always 0; "
            "use binary_focal_crossentropy for two classes",
            UserWarning,
            stacklevel=2,
        )
    if label_smoothing:
        y_true = y_true * (1.0 - label_smoothing) + label_smoothing / y_pred.shape[axis]
    if from_logits:
        log_p = ops.log_softmax(y_pred, axis=axis)
        p = ops.exp(log_p)
    else:
        eps = config.epsilon()
        p = ops.clip(y_pred / ops.sum(y_pred, axis=axis, keepdims=True), eps, 1.0 - eps)
        log_p = ops.log(p)
    weights = ops.power(1.0 - p, gamma) * _alpha(alpha, y_pred.dtype)
    return ops.sum(weights * -y_true * log_p, axis=axis)


def _check_gamma(name, gamma):
    gamma = float(gamma)
    if not gamma >= 0:
        raise ValueError(f"{name}: gamma must be >= 0, got {gamma}")
    return gamma


def _alpha(alpha, dtype):
    """`alpha` as a number or an array of `dtype` (one weight per class)."""
    return float(alpha) if np.ndim(alpha) == 0 else np.asarray(alpha, dtype=dtype)


def _plain_alpha(alpha):
    """`alpha` as a float or a list of floats (what a config holds)."""
    return float(alpha) if np.ndim(alpha) == 0 else [float(a) for a in np.ravel(alpha)]


class BinaryFocalCrossentropy(LossFunctionWrapper):
    """Binary focal cross-entropy between 0/1 targets and probabilities or logits.

    See `binary_focal_crossentropy` for the formula; `gamma=0` gives
    `BinaryCrossentropy`.

    Args:
        apply_class_balancing: whether to weigh class 1 by `alpha` and class 0
            by `1 - alpha`.
        alpha: float, the weight of class 1 with `apply_class_balancing`.
        gamma: float >= 0, the focusing parameter.
        from_logits: whether `y_pred` holds logits.
        label_smoothing: float in [0, 1]; pulls targets towards 0.5.
        axis: the axis to average over.
        reduction: as in `Loss`.
        name: the loss's name.
        dtype: as in `Loss`.

    Raises:
        ValueError: if `gamma` is negative or `label_smoothing` is outside [0, 1].

    Example:
        >>> loss = mk.losses.BinaryFocalCrossentropy(gamma=2.0)
        >>> round(float(loss([[1.0, 0.0]], [[0.5, 0.5]])), 6)
        0.173287
    """

    _per_element = True

    def __init__(
        self,
        apply_class_balancing=False,
        alpha=0.25,
        gamma=2.0,
        from_logits=False,
        label_smoothing=0.0,
        axis=-1,
        reduction="sum_over_batch_size",
        name="binary_focal_crossentropy",
        dtype=None,
    ):
        self.apply_class_balancing = bool(apply_class_balancing)
        self.alpha = float(alpha)
        self.gamma = _check_gamma(type(self).__name__, gamma)
        self.from_logits = bool(from_logits)
        self.label_smoothing = check_label_smoothing(type(self).__name__, label_smoothing)
        self.axis = axis
        super().__init__(
            binary_focal_crossentropy,
            reduction=reduction,
            name=name,
            dtype=dtype,
            apply_class_balancing=self.apply_class_balancing,
            alpha=self.alpha,
            gamma=self.gamma,
            from_logits=self.from_logits,
            label_smoothing=self.label_smoothing,
            axis=axis,
        )


class CategoricalFocalCrossentropy(LossFunctionWrapper):
    """Categorical focal cross-entropy between one-hot targets and probabilities or logits.

    See `categorical_focal_crossentropy` for the formula; `gamma=0` and
    `alpha=1` give `CategoricalCrossentropy`.

    Args:
        alpha: float, or a list of one float per class: the classes' weights.
        gamma: float >= 0, the focusing parameter.
        from_logits: whether `y_pred` holds logits.
        label_smoothing: float in [0, 1]; mixes the targets with the uniform
            distribution over the classes.
        axis: the class axis.
        reduction: as in `Loss`.
        name: the loss's name.
        dtype: as in `Loss`.

    Raises:
        ValueError: if `gamma` is negative, `axis` is not an int or
            `label_smoothing` is outside [0, 1].

    Example:
        >>> loss = mk.losses.CategoricalFocalCrossentropy()
        >>> round(float(loss([[0.0, 1.0], [1.0, 0.0]], [[0.5, 0.5], [0.9, 0.1]])), 6)
        0.021793
    """

    def __init__(
        self,
        alpha=0.25,
        gamma=2.0,
        from_logits=False,
        label_smoothing=0.0,
        axis=-1,
        reduction="sum_over_batch_size",
        name="categorical_focal_crossentropy",
        dtype=None,
    ):
        if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
            raise ValueError(f"{type(self).__name__}: axis must be an int, got {axis!r}")
        self.alpha = _plain_alpha(alpha)
        self.gamma = _check_gamma(type(self).__name__, gamma)
        self.from_logits = bool(from_logits)
        self.label_smoothing = check_label_smoothing(type(self).__name__, label_smoothing)
        self.axis = int(axis)
        super().__init__(
            categorical_focal_crossentropy,
            reduction=reduction,
            name=name,
            dtype=dtype,
            alpha=self.alpha,
            gamma=self.gamma,
            from_logits=self.from_logits,
            label_smoothing=self.label_smoothing,
            axis=self.axis,
        )
