"""Decoding CTC outputs into label sequences: `ctc_decode`, greedy or by prefix beam search.

Greedy takes the best class of each step, merges repeats and drops blanks.
Beam search keeps the `beam_width` most probable label prefixes, each with two
log-probabilities: of its alignments ending in a label, and in a blank (a
repeated label only starts a new one after a blank). Both follow Keras's JAX
backend, scores included. Decoding picks discrete labels: it has no gradient.
"""

import numpy as np

from minikeras import config
from minikeras.ops.core import array_of, shape_of, wrap

__all__ = ["ctc_decode"]


def _greedy(scores, lengths, merge_repeated, blank):
    """Keras's greedy decode: best classes, repeats merged, blanks dropped, left-aligned."""
    batch, steps, _ = scores.shape
    best = np.argmax(scores, axis=-1)
    past_end = np.arange(steps) >= lengths[:, None]
    best = np.where(past_end, blank, best)
    score = -np.sum(np.where(past_end, 0.0, np.max(scores, axis=-1)), axis=1, keepdims=True)
    if merge_repeated:
        repeated = np.zeros_like(past_end)
        repeated[:, 1:] = best[:, 1:] == best[:, :-1]
        best = np.where(repeated, blank, best)
    decoded = np.full((1, batch, steps), -1, dtype=np.int32)
    for b in range(batch):
        kept = best[b][best[b] != blank]
        decoded[0, b, : kept.size] = kept
    return decoded, score.astype(scores.dtype)


def _beam_search(log_probs, length, beam_width, top_paths, blank):
    """One sample's prefix beam search: the `top_paths` best prefixes, their log-probabilities."""
    classes = log_probs.shape[-1]
    # prefix -> [log p(alignments ending in a label), log p(... ending in a blank)]
    beams = {}
    for k in np.argsort(-log_probs[0], kind="stable")[: min(classes, beam_width)]:
        prefix = () if k == blank else (int(k),)
        beams[prefix] = [-np.inf, log_probs[0, k]] if k == blank else [log_probs[0, k], -np.inf]
    for t in range(1, length):
        extended = {}

        def add(prefix, which, score, extended=extended):
            entry = extended.setdefault(prefix, [-np.inf, -np.inf])
            entry[which] = np.logaddexp(entry[which], score)

        for prefix, (label_end, blank_end) in beams.items():
            total = np.logaddexp(label_end, blank_end)
            add(prefix, 1, total + log_probs[t, blank])
            for k in range(classes):
                if k == blank:
                    continue
                if prefix and prefix[-1] == k:  # the same label again: merged, or new after a blank
                    add(prefix, 0, label_end + log_probs[t, k])
                    add((*prefix, k), 0, blank_end + log_probs[t, k])
                else:
                    add((*prefix, k), 0, total + log_probs[t, k])
        ranked = sorted(extended.items(), key=lambda item: -np.logaddexp(*item[1]))
        beams = dict(ranked[:beam_width])
    ranked = sorted(beams.items(), key=lambda item: -np.logaddexp(*item[1]))[:top_paths]
    paths = [prefix for prefix, _ in ranked] + [()] * (top_paths - len(ranked))
    scores = [np.logaddexp(*entry) for _, entry in ranked] + [-np.inf] * (top_paths - len(ranked))
    return paths, scores


def ctc_decode(
    inputs,
    sequence_lengths,
    strategy="greedy",
    beam_width=100,
    top_paths=1,
    merge_repeated=True,
    mask_index=0,
):
    """Decodes per-step class scores into label sequences, as Keras's `ctc_decode`.

    Args:
        inputs: scores `(batch, steps, classes)`: greedy decoding takes them
            as they are; beam search takes their log-softmax, as Keras does.
        sequence_lengths: `(batch,)` integers, each sample's number of steps
            (floats are cast to int32, as Keras casts them).
        strategy: `"greedy"` or `"beam_search"`.
        beam_width: the prefixes beam search keeps at each step.
        top_paths: how many of the best sequences beam search returns
            (greedy returns one).
        merge_repeated: greedy only: merge repeated classes (Keras's beam
            search always merges those not separated by a blank).
        mask_index: the class of the blank.

    Returns:
        A tuple `(decoded, scores)`: `decoded` int32 `(paths, batch, steps)`,
        each sequence left-aligned and padded with -1; `scores` `(batch,
        paths)` in at least float32: for greedy, minus the sum of each step's
        best score; for beam search, each sequence's log-probability (-inf
        where fewer than `top_paths` sequences were found).

    Raises:
        ValueError: for an unknown strategy, inputs that are not 3-D,
            lengths that do not fit, or a width or path count below 1.

    Example:
        >>> scores = np.log([[[0.1, 0.9], [0.2, 0.8], [0.9, 0.1], [0.3, 0.7]]])
        >>> decoded, _ = mk.ops.ctc_decode(scores, [4])
        >>> decoded.numpy()
        array([[[ 1,  1, -1, -1]]], dtype=int32)
    """
    if strategy not in ("greedy", "beam_search"):
        raise ValueError(
            f"ctc_decode: strategy must be 'greedy' or 'beam_search', got {strategy!r}"
        )
    scores = np.asarray(array_of(inputs))
    if scores.ndim != 3:
        raise ValueError(f"ctc_decode: inputs must be (batch, steps, classes), got {scores.shape}")
    dtype = np.promote_types(scores.dtype, config.floatx())
    scores = scores.astype(dtype if dtype.kind == "f" else config.floatx())
    batch, steps, classes = scores.shape
    lengths = np.asarray(array_of(sequence_lengths))
    if lengths.dtype.kind == "f":  # Keras casts them to int32: `np.ones(n) * steps` is common
        lengths = lengths.astype(np.int32)
    if lengths.shape != (batch,) or lengths.dtype.kind not in "iu" or np.any(lengths > steps):
        raise ValueError(
            f"ctc_decode: sequence_lengths must be {batch} integers up to {steps}, got "
            f"{lengths.tolist()} (shape {shape_of(lengths)})"
        )
    if strategy == "greedy":
        decoded, score = _greedy(scores, lengths, merge_repeated, mask_index)
        return wrap(decoded), wrap(score)
    if beam_width < 1 or top_paths < 1:
        raise ValueError(
            f"ctc_decode: beam_width and top_paths must be at least 1, got {beam_width} "
            f"and {top_paths}"
        )
    shifted = scores - np.max(scores, axis=-1, keepdims=True)
    log_probs = shifted - np.log(np.sum(np.exp(shifted), axis=-1, keepdims=True))
    decoded = np.full((top_paths, batch, steps), -1, dtype=np.int32)
    score = np.full((batch, top_paths), -np.inf, dtype=scores.dtype)
    for b in range(batch):
        paths, found = _beam_search(log_probs[b], lengths[b], beam_width, top_paths, mask_index)
        for p, (path, value) in enumerate(zip(paths, found)):
            decoded[p, b, : len(path)] = path
            score[b, p] = value
    return wrap(decoded), wrap(score)
