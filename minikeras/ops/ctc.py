"""Connectionist temporal classification (Graves et al., 2006): `ctc_loss`.

The negative log-likelihood of a label sequence under per-step class scores,
summed over every alignment that collapses to it (repeats merged, blanks
dropped). Computed, in log space, by the forward recursion Keras's JAX
backend runs (optax's `ctc_loss`), so that its numbers come out here too: two
rows of states per sample, `phi[n]` (the first `n` labels emitted, the last
step a blank or nothing yet) and `emit[n]` (label `n` just emitted), and at
each step

    phi[n]     += emit[n-1]                     (no step taken; not onto a repeat)
    emit[n]     = logaddexp(phi[n], emit[n]) + log p[t, label[n]]
    phi[n]      = phi[n] + log p[t, blank], += emit[n-1] + log p[t, blank] (onto a repeat)

where `+=` is `logaddexp`. "Impossible" is not minus infinity but the finite
`-1e5` (optax's `log_epsilon`), added once per forbidden move: a target no
alignment can produce costs about `1e5` per such move, as in Keras on JAX
(Keras on torch gives inf there). Built from `log_softmax`, `einsum`,
`where` and `logaddexp`, which give it its gradient, second order included.
"""

import numpy as np

from minikeras.ops.activation_functions import log_softmax
from minikeras.ops.comparison import where
from minikeras.ops.core import array_of, as_float, shape_of
from minikeras.ops.creation import cast
from minikeras.ops.matrix_products import einsum
from minikeras.ops.numeric_pairs import logaddexp
from minikeras.ops.shape import concatenate, getitem

__all__ = ["ctc_loss"]

# The log-probability of a forbidden move, as optax's and Keras's JAX backend's.
_LOG_EPSILON = -1e5


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
        of the output can produce (too long for its steps) gives a large
        finite loss, about `1e5` per forbidden move, the number Keras's JAX
        backend gives.

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
    float_dtype = np.dtype(scores.dtype)
    # repeat[b, n]: label n equals label n + 1, read on the padded labels as Keras reads them.
    repeat = np.zeros(labels.shape, dtype=float_dtype)
    repeat[:, :-1] = labels[:, :-1] == labels[:, 1:]
    forbid_skip, forbid_blank_skip = _LOG_EPSILON * repeat, _LOG_EPSILON * (1 - repeat)

    log_probs = log_softmax(scores, axis=-1)
    # The padded labels may be any integer: an index outside the classes emits log 1 = 0.
    valid = (labels >= 0) & (labels < classes)
    one_hot = (np.arange(classes) == np.where(valid, labels, -1)[..., None]).astype(float_dtype)
    emit_scores = einsum("btk,bnk->tbn", log_probs, one_hot)  # (steps, batch, labels)
    blank_scores = getitem(log_probs, (slice(None), slice(None), slice(mask_index, mask_index + 1)))
    blank_scores = einsum("btk->tbk", blank_scores)  # (steps, batch, 1)

    def plus_emitted(phi, added):  # phi[n] += added[n - 1], for n >= 1
        rest = logaddexp(getitem(phi, (slice(None), slice(1, None))), added)
        return concatenate([getitem(phi, (slice(None), slice(0, 1))), rest], 1)

    phi = np.full((batch, labels.shape[1] + 1), _LOG_EPSILON, dtype=float_dtype)
    phi[:, 0] = 0.0
    emit = np.full((batch, labels.shape[1]), _LOG_EPSILON, dtype=float_dtype)
    for t in range(steps):
        emitted, blank = getitem(emit_scores, t), getitem(blank_scores, t)
        moved = plus_emitted(phi, emit + forbid_skip)
        next_emit = logaddexp(
            getitem(moved, (slice(None), slice(None, -1))) + emitted, emit + emitted
        )
        next_phi = plus_emitted(moved + blank, emit + blank + forbid_blank_skip)
        running = (t < step_lengths)[:, None]  # past its length a sample keeps its states
        phi, emit = where(running, next_phi, phi), where(running, next_emit, emit)
    phi = plus_emitted(phi, emit)
    finals = (np.arange(labels.shape[1] + 1) == label_lengths[:, None]).astype(float_dtype)
    return -einsum("bn,bn->b", phi, finals)
