"""`pad_sequences`: lists of sequences of different lengths as one padded array."""

import numpy as np

from minikeras.argument_checks import check_int

__all__ = ["pad_sequences"]


def pad_sequences(
    sequences, maxlen=None, dtype="int32", padding="pre", truncating="pre", value=0.0
):
    """Pads (and truncates) sequences to one length, as `keras.utils.pad_sequences` does.

    Sequences longer than `maxlen` lose values at the start (`truncating="pre"`)
    or the end (`"post"`); shorter ones are filled with `value` before
    (`padding="pre"`) or after (`"post"`). Each element of a sequence may
    itself be an array: the result then has its shape after the two first axes.

    Args:
        sequences: a list of sequences (lists or arrays); an empty sequence
            becomes a row of `value`.
        maxlen: an int >= 0, the length of every row; None means the longest
            sequence.
        dtype: the result's dtype; use `object` for strings of any length.
        padding: `"pre"` or `"post"`, where to pad.
        truncating: `"pre"` or `"post"`, where to cut long sequences.
        value: the padding value (a float or a string).

    Returns:
        A numpy array of shape `(len(sequences), maxlen) + element_shape`.

    Raises:
        TypeError: if `maxlen` is not an int or None.
        ValueError: if `sequences` is not a list of sequences, `maxlen` < 0, `padding` or
            `truncating` is not `"pre"`/`"post"`, a string `value` meets a
            non-string `dtype`, or an element's shape differs from the first
            non-empty sequence's.

    Example:
        >>> mk.utils.pad_sequences([[1, 2, 3], [4, 5], [6]])
        array([[1, 2, 3],
               [0, 4, 5],
               [0, 0, 6]], dtype=int32)
        >>> mk.utils.pad_sequences([[1, 2, 3], [4]], maxlen=2, padding="post", value=-1)
        array([[ 2,  3],
               [ 4, -1]], dtype=int32)
    """
    if not hasattr(sequences, "__len__"):
        raise ValueError(
            f"pad_sequences: sequences must be a list of sequences, got {type(sequences).__name__}"
        )
    if padding not in ("pre", "post"):
        raise ValueError(f'pad_sequences: padding must be "pre" or "post", got {padding!r}')
    if truncating not in ("pre", "post"):
        raise ValueError(f'pad_sequences: truncating must be "pre" or "post", got {truncating!r}')
    check_int("pad_sequences", "maxlen", maxlen, 0, allow_none=True)
    lengths, sample_shape = [], None
    for position, sequence in enumerate(sequences):
        try:
            lengths.append(len(sequence))
        except TypeError:
            raise ValueError(
                f"pad_sequences: sequences must be a list of sequences; the one at position "
                f"{position} is {sequence!r}"
            ) from None
        if sample_shape is None and len(sequence):
            sample_shape = np.asarray(sequence).shape[1:]
    sample_shape = sample_shape or ()
    maxlen = max(lengths, default=0) if maxlen is None else int(maxlen)
    is_string_dtype = np.issubdtype(dtype, np.str_) or np.issubdtype(dtype, np.bytes_)
    if isinstance(value, str) and dtype is not object and not is_string_dtype:
        raise ValueError(
            f"pad_sequences: dtype {dtype} does not fit the string value {value!r}; "
            "use dtype=object for strings of any length"
        )
    padded = np.full((len(sequences), maxlen) + sample_shape, value, dtype=dtype)
    for position, sequence in enumerate(sequences):
        if not len(sequence) or not maxlen:
            continue
        kept = sequence[-maxlen:] if truncating == "pre" else sequence[:maxlen]
        kept = np.asarray(kept, dtype=dtype)
        if kept.shape[1:] != sample_shape:
            raise ValueError(
                f"pad_sequences: the elements of the sequence at position {position} have "
                f"shape {kept.shape[1:]}, but the first non-empty sequence's have shape "
                f"{sample_shape}"
            )
        if padding == "post":
            padded[position, : len(kept)] = kept
        else:
            padded[position, -len(kept) :] = kept
    return padded
