"""The mean sparse cross-entropy from logits that leaves out one label (`ignore_class`).

`SparseCategoricalCrossentropy(from_logits=True, ignore_class=k)` averages
the losses of the samples not labelled `k`. Written with separate ops, which
labels count is found in numpy from the labels' values, outside anything a
tape records, so a compiled step could not replay it
(`trainers.compiled_step`). This fused primitive takes the labels as they
come and finds them inside, with the same numpy calls in the same order as
those ops, for the same numbers, loss and gradient:

    valid = labels != k
    weights = where(valid, size / count(valid), 0)     (0 if none is valid)
    losses = where(valid, xent(where(valid, logits, 1), where(valid, labels, 0)), 0)
    result = sum(losses * weights) * (1 / size)
"""

import autograd.numpy as anp
import numpy as np
from autograd.tracer import isbox

from minikeras.engine.gradient_select import select_gradient
from minikeras.engine.primitive import call_primitive, defvjp_fused, fused_primitive
from minikeras.engine.replay import replay_guard
from minikeras.ops.activation_functions import _softmax
from minikeras.ops.core import wrap
from minikeras.ops.cross_entropy import (
    _labels_fit,
    _one_hot_like,
    _sparse_xent_logits,
    _sparse_xent_operands,
)

__all__ = ["mean_sparse_categorical_crossentropy_ignoring"]


def _kept(logits, labels, ignore_class):
    """`(valid, labels with the ignored ones 0, weights)` for `(n, classes)` logits."""
    if labels.ndim == logits.ndim:  # ((n, 1) labels)
        labels = labels[..., 0]
    valid = labels != ignore_class
    count = int(np.count_nonzero(valid))
    scale = valid.size / count if count else 0.0
    weights = np.where(valid, scale, 0.0).astype(logits.dtype)
    return valid, np.where(valid, labels, 0), weights


@fused_primitive
def _mean_sparse_xent_ignoring(logits, labels, ignore_class):
    """The mean loss over the kept samples, and for the gradient the softmax, index and mask."""
    valid, kept_labels, weights = _kept(logits, labels, ignore_class)
    scores = np.where(valid[:, None], logits, 1.0)
    losses, (softmax, index) = _sparse_xent_logits.forward(scores, kept_labels)
    weighted = np.where(valid, losses, 0.0) * weights
    return weighted.sum() * (1.0 / weighted.size), (softmax, index, valid, weights)


def _mean_sparse_xent_ignoring_vjp(argnums, ans, args, residuals):
    logits, labels, ignore_class = args
    inverse = 1.0 / labels.shape[0]

    if residuals is None:  # (an outer tape traces the logits: recompute from traced ops)
        valid, kept_labels, weights = _kept(logits, labels, ignore_class)
        probs = _softmax(anp.where(valid[:, None], logits, 1.0), -1)
        one_hot = _one_hot_like(kept_labels, probs)

        def traced(g):
            share = g * inverse * weights * valid
            return [anp.where(valid[:, None], share[:, None] * (probs - one_hot), 0.0)]

        return traced
    softmax, index, valid, weights = residuals

    def vjp(g):
        if isbox(g):
            probs = anp.where(valid[:, None], softmax, 0.0)
            share = g * inverse * weights * valid
            return [share[:, None] * (probs - _one_hot_like(index[-1], softmax))]
        # The separate ops' gradients, in their order: the mean's, the weights',
        # the kept losses', the cross-entropy's, the kept logits'.
        share = np.empty(valid.shape, softmax.dtype)
        share.fill(g * inverse)
        share = select_gradient(valid, share * weights)
        grad = np.multiply(softmax, share[:, None], dtype=softmax.dtype)
        grad[index] -= share
        return [select_gradient(valid[:, None], grad)]

    return vjp


defvjp_fused(_mean_sparse_xent_ignoring, _mean_sparse_xent_ignoring_vjp)


def _kept_labels_fit(args):
    """The check a replay repeats: every label not ignored is a class of the logits."""
    logits, labels, ignore_class = args
    if labels.dtype.kind not in "iu":
        return False
    return _labels_fit((logits, np.where(labels != ignore_class, labels, 0)))


replay_guard(_mean_sparse_xent_ignoring, _kept_labels_fit)


def mean_sparse_categorical_crossentropy_ignoring(target, output, ignore_class):
    """The mean sparse cross-entropy from logits over the samples not labelled `ignore_class`.

    What `SparseCategoricalCrossentropy(from_logits=True,
    ignore_class=ignore_class)` gives without sample weights or a mask, as
    one fused op (see the module); 0 when every sample is ignored.

    Args:
        target: integer labels of shape `(n,)` or `(n, 1)`, a numpy array.
        output: logits of shape `(n, classes)`.
        ignore_class: the int label to leave out.

    Returns:
        A scalar Tensor.

    Raises:
        ValueError: if the shapes do not fit or a label (other than
            `ignore_class`) is out of range.

    Example:
        >>> loss = mk.ops.cross_entropy_ignoring.mean_sparse_categorical_crossentropy_ignoring(
        ...     np.array([0, -1]), [[1000.0, 0.0], [0.0, 0.0]], ignore_class=-1
        ... )
        >>> float(loss)
        0.0
    """
    labels = np.asarray(target)
    flat = labels[..., 0] if labels.ndim == 2 and labels.shape[1:] == (1,) else labels
    # The checks of the separate ops: labels fit the logits once the ignored are 0.
    scores, _, _ = _sparse_xent_operands(
        "sparse_categorical_crossentropy", np.where(flat != ignore_class, flat, 0), output, -1
    )
    return wrap(call_primitive(_mean_sparse_xent_ignoring, scores, labels, ignore_class))
