"""Signal quality: `psnr`, the peak signal-to-noise ratio of a reconstruction."""

import numpy as np

from minikeras.ops.core import array_of, as_float, shape_of
from minikeras.ops.creation import cast
from minikeras.ops.elementary import log10
from minikeras.ops.math import square, subtract
from minikeras.ops.operands import narrowed_operands
from minikeras.ops.reduction import mean

__all__ = ["psnr"]


def psnr(x1, x2, max_val):
    """Peak signal-to-noise ratio, in decibels: `20 log10(max_val) - 10 log10(mse)`.

    `mse` is the mean of `(x1 - x2) ** 2` over every element (one number for
    a whole batch, as in Keras). Higher is closer; identical inputs give inf.

    Args:
        x1: Tensor or array-like, one signal (an image, say).
        x2: Tensor or array-like of `x1`'s shape, the other.
        max_val: a number, the largest value a signal can take (1.0, 255...).

    Returns:
        A scalar floating Tensor (integers give float32).

    Raises:
        ValueError: if the shapes differ.

    Example:
        >>> float(mk.ops.psnr([0.0, 1.0], [0.0, 0.9], max_val=1.0))
        23.0103
    """
    # (numpy float64 operands beside a Tensor take its precision: ops.operands)
    x1, x2 = narrowed_operands(x1, x2)
    a, b = as_float(array_of(x1)), as_float(array_of(x2))
    if shape_of(a) != shape_of(b):
        raise ValueError(
            f"psnr: x1 and x2 must have the same shape, got {shape_of(a)} and {shape_of(b)}"
        )
    mse = mean(square(subtract(a, b)))
    with np.errstate(divide="ignore"):  # (identical signals: inf, as in Keras, no warning)
        noise = log10(mse)
    return 20.0 * log10(cast(max_val, mse.dtype)) - 10.0 * noise
