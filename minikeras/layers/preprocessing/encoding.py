"""Shared helpers of the preprocessing layers: integer codes to one-hot, multi-hot or counts.

`encode` turns an array of integer codes in `[0, depth)` into Keras 3's output
modes (`numerical_utils.encode_categorical_inputs`):

- `"int"`: the codes unchanged;
- `"one_hot"`: a new last axis of size `depth` (a trailing axis of size 1 is
  replaced instead);
- `"multi_hot"` / `"count"`: axis 1 (the tokens of a sample) is folded into a
  last axis of size `depth` holding 1 where a code occurs / how often it
  occurs. A 1-D input is one sample.
"""

import math

import numpy as np

__all__ = ["OUTPUT_MODES", "check_choice", "check_output_mode", "encode", "encoded_shape"]

OUTPUT_MODES = ("int", "one_hot", "multi_hot", "count")


def check_choice(layer_class, argument, value, choices):
    """Returns `value` if it is one of `choices`, else raises a ValueError naming both."""
    if not isinstance(value, str) or value not in choices:
        raise ValueError(
            f"{layer_class}: `{argument}` must be one of {list(choices)}, got {value!r}"
        )
    return value


def check_output_mode(layer_class, output_mode, choices=OUTPUT_MODES):
    return check_choice(layer_class, "output_mode", output_mode, choices)


def encoded_shape(input_shape, output_mode, depth):
    """The output shape of `encode` for inputs of `input_shape` (None entries allowed)."""
    input_shape = tuple(input_shape)
    if output_mode == "int":
        return input_shape
    if not input_shape:
        return (depth,)
    if output_mode == "one_hot":
        if len(input_shape) > 1 and input_shape[-1] == 1:
            return (*input_shape[:-1], depth)
        return (*input_shape, depth)
    if len(input_shape) == 1:
        return (depth,)
    return (input_shape[0], *input_shape[2:], depth)


def encode(codes, output_mode, depth, dtype="float32", count_weights=None):
    """Integer `codes` (all in `[0, depth)`) in `output_mode` (see the module docstring).

    `count_weights`, an array of the codes' shape, replaces each occurrence's 1
    in `"count"` mode (as Keras's `CategoryEncoding` does).
    """
    codes = np.asarray(codes)
    if output_mode == "int":
        return codes
    if codes.ndim == 0:
        codes = codes[None]
    if output_mode == "one_hot":
        if codes.ndim > 1 and codes.shape[-1] == 1:
            codes = codes[..., 0]
        out = np.zeros((*codes.shape, depth), dtype=dtype)
        np.put_along_axis(out, codes[..., None].astype(np.intp), 1, axis=-1)
        return out
    # multi_hot / count: fold axis 1 (axis 0 of a single 1-D sample) into the last axis.
    single = codes.ndim == 1
    if single:
        codes = codes[None]
        if count_weights is not None:
            count_weights = np.asarray(count_weights)[None]
    moved = np.moveaxis(codes, 1, -1)  # (batch, rest..., tokens)
    lead = moved.shape[:-1]
    flat = moved.reshape(math.prod(lead), moved.shape[-1]).astype(np.intp)
    rows = np.repeat(np.arange(flat.shape[0]), flat.shape[1])
    out = np.zeros((flat.shape[0], depth), dtype=dtype)
    if output_mode == "multi_hot":
        out[rows, flat.ravel()] = 1
    else:
        weights = 1
        if count_weights is not None:
            weights = np.moveaxis(np.asarray(count_weights), 1, -1).reshape(flat.shape).ravel()
        np.add.at(out, (rows, flat.ravel()), weights)
    out = out.reshape((*lead, depth))
    return out[0] if single else out
