"""Cross-entropies: sparse (integer labels), categorical and binary, stable from logits.

The sparse ones from logits are fused primitives: the softmax, the loss and
(for the tape) the softmax kept as the residual its VJP reuses, in one pass.
`mean_sparse_categorical_crossentropy` fuses the batch mean in too: the usual
training loss, one node on the tape.
"""

import autograd.numpy as anp
import numpy as np
from autograd.extend import defvjp, primitive
from autograd.numpy.numpy_boxes import ArrayBox
from autograd.tracer import getval, isbox

from minikeras import config
from minikeras.engine.primitive import call_primitive, defvjp_fused, fused_primitive, record_fused
from minikeras.engine.replay import replay_guard
from minikeras.ops.activation_functions import _log_softmax, _softmax, _softplus
from minikeras.ops.core import (
    as_float,
    normalize_axis,
    op_error,
    shape_of,
    value_of,
    wrap,
)
from minikeras.ops.operands import operand_values

__all__ = [
    "binary_crossentropy",
    "categorical_crossentropy",
    "mean_sparse_categorical_crossentropy",
    "sparse_categorical_crossentropy",
]


_ROWS = {}  # batch size -> np.arange(batch size), read-only, made once


def _label_index(labels):
    """Indexes the labelled class of each sample of a `(..., classes)` array."""
    if labels.ndim == 1:
        rows = _ROWS.get(labels.shape[0])
        if rows is None:
            rows = _ROWS.setdefault(labels.shape[0], np.arange(labels.shape[0]))
            rows.flags.writeable = False
        return rows, labels
    return (*np.indices(labels.shape, sparse=True), labels)


def _max_last_axis(x):
    """`x.max(axis=-1, keepdims=True)`, fast for a few classes as for many.

    numpy reduces a short contiguous axis row by row: 8 µs for (128, 10),
    against 2 µs for the same maxima taken over the long axis of a
    transposed copy. Past ~32 classes the copy costs more than it saves.
    """
    classes = x.shape[-1]
    if classes > 32 or x.ndim != 2:
        return x.max(axis=-1, keepdims=True)
    return np.maximum.reduce(x.T.copy(), axis=0)[:, None]  # (the ufunc: no method wrapper)


@fused_primitive
def _sparse_xent_logits(logits, labels):
    """The losses, and for the gradient the softmax and the labels' index."""
    if logits.ndim == 2 and labels.ndim == 1 and logits.shape[1] <= 32:
        # The usual batch, at every training step: `_max_last_axis` and
        # `_label_index` written out (two calls fewer).
        shifted = logits - np.maximum.reduce(logits.T.copy(), axis=0)[:, None]
        rows = _ROWS.get(labels.shape[0])
        index = (rows, labels) if rows is not None else _label_index(labels)
    else:
        shifted = logits - _max_last_axis(logits)
        index = _label_index(labels)
    picked = shifted[index]  # a copy: `shifted` may change now
    exps = np.exp(shifted, out=shifted)
    sums = np.add.reduce(exps, axis=-1, keepdims=True)
    loss = np.log(sums[..., 0])
    loss -= picked
    exps /= sums
    return loss, (exps, index)


def _sparse_xent_logits_vjp(argnums, ans, args, residuals):
    logits, labels = args

    def vjp(g):
        if residuals is None or isbox(g):
            # An outer tape records this gradient: build it from traced ops.
            probs = _softmax(logits, -1)
            return [anp.expand_dims(g, -1) * (probs - _one_hot_like(labels, logits))]
        # Plain numpy otherwise, where the traced version costs a dozen autograd
        # calls: (softmax - one_hot(labels)) * g, in one buffer.
        softmax, index = residuals
        grad = np.multiply(softmax, np.asarray(g)[..., None], dtype=softmax.dtype)
        grad[index] -= g
        return [grad]

    return vjp


defvjp_fused(_sparse_xent_logits, _sparse_xent_logits_vjp)


def _labels_fit(args):
    """The check a replay repeats: integer labels, each a class of the logits.

    Negative labels viewed as unsigned are huge: one reduction checks both ends.
    """
    logits, labels = args
    unsigned = _UNSIGNED.get(labels.dtype)
    if unsigned is None:
        if labels.dtype.kind not in "iu":
            return False
        unsigned = _UNSIGNED.setdefault(labels.dtype, labels.dtype.str.replace("i", "u"))
    return not labels.size or np.maximum.reduce(labels.view(unsigned), axis=None) < logits.shape[-1]


_UNSIGNED = {np.dtype(kind + size): np.dtype("u" + size) for kind in "iu" for size in "1248"}


replay_guard(_sparse_xent_logits, _labels_fit)


def _one_hot_like(labels, logits):
    out = np.zeros(np.shape(logits), dtype=logits.dtype)
    np.put_along_axis(out, labels[..., None], 1, axis=-1)
    return out


def _to_last(op, value, axis, *operands):
    """Moves the class axis last, after checking it against the rank."""
    ndim = np.ndim(getval(value))
    axis = normalize_axis(op, axis, ndim, *(operands or (value,)))
    return value if axis == ndim - 1 else anp.moveaxis(value, axis, -1)


def sparse_categorical_crossentropy(target, output, from_logits=False, axis=-1):
    """Cross-entropy between integer class labels and predicted scores.

    With `from_logits=True`, `output` holds unnormalized scores and the
    softmax is fused in: large logits give finite losses and gradients.
    Probabilities are rescaled to sum to one and clipped to
    `[epsilon, 1 - epsilon]`, as in Keras.

    Args:
        target: integer labels, of `output`'s shape without `axis`.
        output: logits (`from_logits=True`) or probabilities.
        from_logits: whether `output` is logits.
        axis: the class axis of `output`.

    Returns:
        A Tensor of per-sample losses.

    Raises:
        ValueError: if the shapes do not fit, `axis` is out of range or a
            label is out of range.

    Example:
        >>> loss = mk.ops.sparse_categorical_crossentropy([0], [[1000.0, 0.0]], from_logits=True)
        >>> loss.numpy()
        array([0.], dtype=float32)
    """
    scores, labels, output_value = _sparse_xent_operands(
        "sparse_categorical_crossentropy", target, output, axis
    )
    if from_logits:
        return wrap(call_primitive(_sparse_xent_logits, scores, labels))
    # As Keras does: rescale to sum to one, then clip away from 0 and 1.
    classes = shape_of(scores)[-1]
    probs = scores / anp.sum(scores, axis=-1, keepdims=True)
    probs = anp.clip(probs, config.epsilon(), 1.0 - config.epsilon())
    picked = anp.reshape(probs, (-1, classes))[np.arange(labels.size), labels.reshape(-1)]
    return wrap(-anp.reshape(anp.log(picked), labels.shape))


def _sparse_xent_operands(name, target, output, axis):
    """Checks labels against scores; returns `(scores with classes last, int labels, output)`."""
    output_value = as_float(value_of(output))
    labels = np.asarray(getval(value_of(target)))
    scores = _to_last(name, output_value, axis, labels, output_value)
    scores_shape = shape_of(scores)
    batch_shape, classes = scores_shape[:-1], scores_shape[-1]
    if labels.shape != batch_shape:
        if labels.shape == batch_shape + (1,):
            labels = labels[..., 0]
        else:
            problem = f"labels must have the shape of output without its class axis {axis}"
            raise op_error(name, problem, labels, output_value)
    if labels.dtype.kind not in "iu":
        if labels.size and not np.all(np.mod(labels, 1) == 0):
            raise ValueError(f"{name}: labels must be integer class indices, got {labels.dtype}")
        labels = labels.astype(np.int64)
    if not _labels_fit((scores, labels)):  # (the check a replay repeats)
        low, high = labels.min(), labels.max()
        problem = f"labels must lie in [0, {classes}), but range from {low} to {high}"
        raise op_error(name, problem, labels, output_value)
    return scores, labels, output_value


@fused_primitive
def _mean_sparse_xent_logits(logits, labels):
    """The mean of `_sparse_xent_logits`, keeping its residuals.

    `(n, 1)` labels of `(n, classes)` logits (CIFAR's come so) are taken as
    `(n,)` here, inside the op, so that a compiled step sees the batch's own
    labels array; their last axis is 1 (`mean_sparse_categorical_crossentropy`).
    """
    if labels.ndim == logits.ndim:
        labels = labels[..., 0]
    losses, residuals = _sparse_xent_logits.forward(logits, labels)
    count = losses.size  # (1 / count, or nan for no samples: the mean of nothing)
    return np.add.reduce(losses, axis=None) * (1.0 / count if count else float("nan")), residuals


def _mean_sparse_xent_logits_vjp(argnums, ans, args, residuals):
    """The per-sample losses' VJP, each sample's share of `g` being `g / count`."""
    logits, labels = args
    if labels.ndim == logits.ndim:  # ((n, 1) labels, as the forward takes them; a box has ndim)
        labels = labels[..., 0]
        args = (logits, labels)
    count = labels.size  # (as the forward's mean)
    inverse = 1.0 / count if count else float("nan")

    def traced(g):  # from the per-sample VJP, which an outer tape can record
        shares = np.full(labels.shape, inverse, dtype=getval(logits).dtype)
        return _sparse_xent_logits_vjp(argnums, ans, args, residuals)(g * shares)

    if residuals is None:
        return traced
    softmax, index = residuals

    def vjp(g):
        if type(g) is not np.ndarray and isbox(g):
            return traced(g)
        # (softmax - one_hot(labels)) * g / count, in one buffer.
        share = np.multiply(g, inverse, dtype=softmax.dtype)
        grad = np.multiply(softmax, share, dtype=softmax.dtype)
        grad[index] -= share
        return [grad]

    return vjp


defvjp_fused(_mean_sparse_xent_logits, _mean_sparse_xent_logits_vjp)
replay_guard(_mean_sparse_xent_logits, _labels_fit)


def mean_sparse_categorical_crossentropy(target, output, axis=-1):
    """The mean of `sparse_categorical_crossentropy(target, output, from_logits=True)`.

    One fused op for the usual training loss: the losses and their mean in
    one primitive, whose gradient is `(softmax - one_hot) / count`, built
    in one buffer from the softmax the forward pass kept.

    Args:
        target: integer labels, of `output`'s shape without `axis`.
        output: logits.
        axis: the class axis of `output`.

    Returns:
        A scalar Tensor: the mean loss over every sample (nan for none).

    Raises:
        ValueError: as `sparse_categorical_crossentropy` does.

    Example:
        >>> loss = mk.ops.cross_entropy.mean_sparse_categorical_crossentropy(
        ...     [0, 1], [[0.0, 0.0], [0.0, 1000.0]]
        ... )
        >>> round(float(loss), 6)  # (log 2 + 0) / 2
        0.346574
    """
    value = value_of(output)
    scores = value._value if type(value) is ArrayBox else value
    if (
        type(target) is np.ndarray  # the usual training batch: checked in a few lines
        and type(scores) is np.ndarray
        and scores.ndim == 2
        and (target.ndim == 1 or target.shape == (scores.shape[0], 1))
        and axis in (-1, 1)
        and target.dtype.kind == "i"
        and scores.dtype.kind == "f"
        and target.shape[0] == scores.shape[0] > 0
        and _labels_fit((scores, target))  # (the check a replay repeats)
    ):
        if scores is not value:  # one tape's box: recorded here, as call_primitive would
            node = (value._node,)
            return wrap(
                record_fused(_mean_sparse_xent_logits, value._trace, (0,), node, (scores, target))
            )
        return wrap(call_primitive(_mean_sparse_xent_logits, value, target))
    scores, labels, _ = _sparse_xent_operands(
        "sparse_categorical_crossentropy", target, output, axis
    )
    return wrap(call_primitive(_mean_sparse_xent_logits, scores, labels))


@primitive
def _xent_logits(logits, target):
    return -np.sum(target * _log_softmax(logits, -1), axis=-1)


def _xent_logits_vjp_logits(ans, logits, target):
    def vjp(g):
        probs = _softmax(logits, -1)
        total = anp.sum(target, axis=-1, keepdims=True)
        return anp.expand_dims(g, -1) * (probs * total - target)

    return vjp


defvjp(
    _xent_logits,
    _xent_logits_vjp_logits,
    lambda ans, logits, target: lambda g: -anp.expand_dims(g, -1) * _log_softmax(logits, -1),
)


def _targets_like_output(target, output):
    """Targets are data: they take the predictions' float dtype.

    float64 one-hot labels (`np.eye(10)[labels]`) must not turn a float32
    model's loss, and its whole backward pass, into float64.
    """
    # (numpy float64 predictions beside a Tensor of targets take its precision: ops.operands)
    target_value, scores = operand_values(target, output)
    target_value, scores = as_float(target_value), as_float(scores)
    if target_value.dtype != scores.dtype:
        target_value = target_value.astype(scores.dtype)
    return target_value, scores


def categorical_crossentropy(target, output, from_logits=False, axis=-1):
    """Cross-entropy between one-hot (or soft) targets and predictions.

    Args:
        target: class probabilities, of `output`'s shape; cast to `output`'s
            float dtype.
        output: logits (`from_logits=True`) or probabilities.
        from_logits: whether `output` is logits.
        axis: the class axis.

    Returns:
        A Tensor of per-sample losses.

    Raises:
        ValueError: if `target` and `output` have different shapes or `axis`
            is out of range.

    Example:
        >>> mk.ops.categorical_crossentropy([[0.0, 1.0]], [[0.0, 1000.0]], from_logits=True).numpy()
        array([0.], dtype=float32)
    """
    target_value, scores = _targets_like_output(target, output)
    if np.shape(target_value) != np.shape(scores):
        raise op_error(
            "categorical_crossentropy", "target and output shapes differ", target_value, scores
        )
    name = "categorical_crossentropy"
    target_value = _to_last(name, target_value, axis)
    scores = _to_last(name, scores, axis)
    if from_logits:
        return wrap(_xent_logits(scores, target_value))
    probs = scores / anp.sum(scores, axis=-1, keepdims=True)
    probs = anp.clip(probs, config.epsilon(), 1.0 - config.epsilon())
    return wrap(-anp.sum(target_value * anp.log(probs), axis=-1))


def binary_crossentropy(target, output, from_logits=False):
    """Element-wise binary cross-entropy between 0/1 targets and predictions.

    Args:
        target: targets in [0, 1], of `output`'s shape; cast to `output`'s
            float dtype.
        output: logits (`from_logits=True`) or probabilities.
        from_logits: whether `output` is logits.

    Returns:
        A Tensor of `output`'s shape.

    Raises:
        ValueError: if `target` and `output` have different shapes.

    Example:
        >>> mk.ops.binary_crossentropy([1.0], [1000.0], from_logits=True).numpy()
        array([0.], dtype=float32)
    """
    z, x = _targets_like_output(target, output)
    if np.shape(z) != np.shape(x):
        raise op_error("binary_crossentropy", "target and output shapes differ", z, x)
    if from_logits:
        # log(1 + exp(x)) - x z, with the overflow-free softplus: finite for any x.
        return wrap(_softplus(x) - x * z)
    p = anp.clip(x, config.epsilon(), 1.0 - config.epsilon())
    return wrap(-(z * anp.log(p) + (1.0 - z) * anp.log(1.0 - p)))
