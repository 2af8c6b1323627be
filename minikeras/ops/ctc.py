"""Connectionist temporal classification (Graves et al., 2006): `ctc_loss`.

The negative log-likelihood of a label sequence under per-step class scores,
summed over every alignment that collapses to it (repeats merged, blanks
dropped). Computed by the forward recursion over the labels with a blank
between and around them (`2 L + 1` states), in log space:

    alpha[t, s] = logsumexp(alpha[t-1, s], alpha[t-1, s-1], alpha[t-1, s-2] if allowed)
                  + log p[t, label[s]]

(`s - 2` is allowed onto a label that differs from the one two states back).
Built from `log_softmax`, `einsum`, `where` and `logsumexp`, which give it its
gradient, second order included.
"""

import numpy as np

from minikeras.ops.activation_functions import log_softmax
from minikeras.ops.comparison import where
from minikeras.ops.core import array_of, as_float, shape_of
from minikeras.ops.creation import cast
from minikeras.ops.matrix_products import einsum
from minikeras.ops.reduction import logsumexp
from minikeras.ops.shape import concatenate, getitem, stack

__all__ = ["ctc_loss"]

# The log-probability of an impossible state: finite, so that no gradient is nan.
_IMPOSSIBLE = -1e30


def _lengths(name, lengths, batch, longest):
    """Integer lengths, one per sample, each in `[0, longest]`; else a ValueError."""
    lengths = np.asarray(array_of(lengths))
    if lengths.dtype.kind == "f":  # Keras casts the lengths to int32 (`np.ones(n) * steps`)
        lengths = lengths.astype(np.int32)
    if lengths.shape != (batch,) or lengths.dtype.kind not in "iu":
        raise ValueError(
            f"ctc_loss: {name} must be {batch} integers (one per sample), got "
            f"shape {lengths.shape} and dtype {lengths.dtype}"
        )
    if lengths.size and (lengths.min() < 0 or lengths.max() > longest):
        raise ValueError(f"ctc_loss: {name} must lie in [0, {longest}], got {lengths.tolist()}")
    return lengths.astype(np.int64)


def ctc_loss(target, output, target_length, output_length, mask_index=0):
    """The CTC loss of each sample: `-log p(target | output)` over all alignments.

    Args:
        target: integer labels `(batch, max_label_length)`, padded past
            `target_length`.
        output: unnormalized scores (logits) `(batch, max_steps, classes)`;
            a softmax over the classes is taken here, as Keras does.
        target_length: `(batch,)` integers, each label sequence's length
            (floats are cast to int32, as Keras casts them).
        output_length: `(batch,)` integers, each output's number of steps
            (floats likewise).
        mask_index: the class of the blank.

    Returns:
        A Tensor `(batch,)`, in at least float32. A target that no alignment
        of the output can produce (too long for its steps) gives a loss
        around 1e30.

    Raises:
        ValueError: for shapes that do not fit together, lengths out of
            range, or labels that are not classes (or are the blank).

    Example:
        >>> logits = np.zeros((1, 2, 2), "float32")  # two steps, blank and one label
        >>> loss = mk.ops.ctc_loss([[1]], logits, [1], [2])  # paths "1-", "-1", "11"
        >>> round(float(loss[0]), 4), round(float(-np.log(3 / 4)), 4)
        (0.2877, 0.2877)
    """
    scores = as_float(array_of(output))
    if np.dtype(scores.dtype).itemsize < 4:
        scores = cast(scores, "float32")
    labels = np.asarray(array_of(target))
    if len(shape_of(scores)) != 3 or labels.ndim != 2 or labels.shape[0] != shape_of(scores)[0]:
        raise ValueError(
            "ctc_loss: expected target (batch, max_label_length) and output (batch, max_steps, "
            f"classes), got shapes {labels.shape} and {shape_of(scores)}"
        )
    batch, steps, classes = shape_of(scores)
    label_lengths = _lengths("target_length", target_length, batch, labels.shape[1])
    step_lengths = _lengths("output_length", output_length, batch, steps)
    used = np.arange(labels.shape[1]) < label_lengths[:, None]
    if labels.dtype.kind not in "iu" or np.any(
        used & ((labels < 0) | (labels >= classes) | (labels == mask_index))
    ):
        raise ValueError(
            f"ctc_loss: the labels must be integers in [0, {classes}) other than the blank "
            f"{mask_index}, got {labels.tolist()}"
        )
    # The extended labels: blank, label 1, blank, label 2, ..., blank.
    states = 2 * labels.shape[1] + 1
    extended = np.full((batch, states), mask_index, dtype=np.int64)
    extended[:, 1::2] = np.where(used, labels, mask_index)
    skip = np.zeros((batch, states), dtype=bool)
    skip[:, 3::2] = extended[:, 3::2] != extended[:, 1:-2:2]
    ends = np.zeros((batch, states), dtype=bool)
    ends[np.arange(batch), 2 * label_lengths] = True
    ends[np.arange(batch), np.maximum(2 * label_lengths - 1, 0)] = True

    log_probs = log_softmax(scores, axis=-1)
    one_hot = np.eye(classes, dtype=np.dtype(log_probs.dtype))[extended]
    emit = einsum("btk,bsk->tbs", log_probs, one_hot)  # (steps, batch, states)
    impossible = np.full((batch, 1), _IMPOSSIBLE, dtype=np.dtype(log_probs.dtype))
    first = np.arange(states) < 2
    alpha = where(first, getitem(emit, 0), _IMPOSSIBLE)
    for t in range(1, steps):
        stay = alpha
        advance = concatenate([impossible, getitem(alpha, (slice(None), slice(None, -1)))], 1)
        jump = concatenate([impossible, getitem(advance, (slice(None), slice(None, -1)))], 1)
        jump = where(skip, jump, _IMPOSSIBLE)
        reached = logsumexp(stack([stay, advance, jump]), axis=0) + getitem(emit, t)
        alpha = where((t < step_lengths)[:, None], reached, alpha)
    return -logsumexp(where(ends, alpha, _IMPOSSIBLE), axis=1)
