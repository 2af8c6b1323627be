"""`rearrange`: einops's patterns for reshaping and transposing in one, the common subset.

`"b h w c -> b c h w"` moves axes, `"b h w c -> b (h w) c"` merges them,
`"b (h h1) w -> b h h1 w"` splits one (its parts' lengths given, all but one).
As Keras does: split the input's grouped axes (reshape), move the axes into
the output's order (transpose), merge the output's groups (reshape). So its
gradient is those ops'. Beyond this subset einops also takes `...`, axes of
length 1 written `1` or `()`, and new axes to repeat; those are refused with
an error that says so.
"""

import re

import numpy as np

from minikeras.ops.core import array_of, op_error
from minikeras.ops.shape import reshape, transpose

__all__ = ["rearrange"]

_TOKEN = re.compile(r"\(([^()]*)\)|(\S+)")
_NAME = re.compile(r"[A-Za-z_]\w*")


def _groups(op, side, pattern):
    """The side's axes, each a list of names (one name, or a parenthesised group)."""
    groups = []
    for match in _TOKEN.finditer(side):
        names = match.group(1).split() if match.group(1) is not None else [match.group(2)]
        for name in names:
            if not _NAME.fullmatch(name):
                raise ValueError(
                    f"{op}: {name!r} in {pattern!r} is beyond the patterns minikeras takes "
                    "(axis names, and names grouped in parentheses; not '...', '1', '()' "
                    "or nested groups)"
                )
        if not names:
            raise ValueError(f"{op}: an empty group '()' in {pattern!r} is not supported")
        groups.append(names)
    return groups


def rearrange(tensor, pattern, **axes_lengths):
    """Reshapes and transposes `tensor` as an einops pattern says.

    Args:
        tensor: Tensor or array-like.
        pattern: `"<input axes> -> <output axes>"`: names, and names grouped in
            parentheses, one name per axis on each side (the same names on both).
        **axes_lengths: the lengths of the axes a group splits (all but one
            of each group).

    Returns:
        A Tensor.

    Raises:
        ValueError: for a pattern beyond names and groups, names that differ
            between the sides or repeat, a rank other than the input side's,
            or lengths that do not divide.

    Example:
        >>> images = np.zeros((32, 30, 40, 3), "float32")
        >>> mk.ops.rearrange(images, "b (h h1) (w w1) c -> b h w (c h1 w1)", h1=2, w1=2).shape
        (32, 15, 20, 12)
    """
    op = "rearrange"
    value = array_of(tensor)
    sides = pattern.split("->")
    if len(sides) != 2:
        raise ValueError(f"{op}: the pattern must be 'inputs -> outputs', got {pattern!r}")
    inputs, outputs = _groups(op, sides[0], pattern), _groups(op, sides[1], pattern)
    names_in = [name for group in inputs for name in group]
    names_out = [name for group in outputs for name in group]
    if len(set(names_in)) != len(names_in) or len(set(names_out)) != len(names_out):
        raise ValueError(f"{op}: an axis name repeats on one side of {pattern!r}")
    if set(names_in) != set(names_out):
        raise ValueError(
            f"{op}: the two sides of {pattern!r} must name the same axes "
            f"(only on one side: {sorted(set(names_in) ^ set(names_out))})"
        )
    unknown = sorted(set(axes_lengths) - set(names_in))
    if unknown:
        raise ValueError(f"{op}: lengths given for axes not in {pattern!r}: {unknown}")
    shape = np.shape(value)
    if len(inputs) != len(shape):
        raise op_error(op, f"{pattern!r} names {len(inputs)} axes", value)
    lengths = {}
    for group, size in zip(inputs, shape):
        known = [name for name in group if name in axes_lengths]
        missing = [name for name in group if name not in axes_lengths]
        product = int(np.prod([axes_lengths[name] for name in known], dtype=np.int64))
        if len(missing) > 1 or (not missing and product != size) or size % max(product, 1):
            raise op_error(
                op, f"cannot split an axis of {size} into {group} with lengths {axes_lengths}",
                value,
            )  # fmt: skip
        lengths.update({name: int(axes_lengths[name]) for name in known})
        if missing:
            lengths[missing[0]] = size // product
    split = tuple(lengths[name] for name in names_in)
    if split != shape:
        value = reshape(value, split)
    moved = transpose(value, tuple(names_in.index(name) for name in names_out))
    merged = tuple(int(np.prod([lengths[name] for name in group])) for group in outputs)
    return reshape(moved, merged)
