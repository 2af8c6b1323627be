"""Changing a tensor's dtype beyond `cast`: `saturate_cast` (clipped to the target's range)
and `view` (the same bytes read as another dtype).
"""

import numpy as np

from minikeras import config
from minikeras.engine.tensor import getval
from minikeras.ops.comparison import clip
from minikeras.ops.core import op_error, value_of, wrap
from minikeras.ops.creation import cast

__all__ = ["saturate_cast", "view"]


def saturate_cast(x, dtype):
    """Converts to `dtype`, values beyond its range clipped to its limits (NaN to 0 for
    integers), where `cast` would wrap them around.

    Gradients flow through float-to-float casts, as in `cast` (zero where clipped).

    Args:
        x: Tensor or array-like.
        dtype: the target dtype.

    Returns:
        A Tensor.

    Raises:
        TypeError: if `dtype` is not a dtype.

    Example:
        >>> mk.ops.saturate_cast(np.array([-300.0, 1.5, 300.0]), "int8").numpy()
        array([-128,    1,  127], dtype=int8)
    """
    value = value_of(x)
    target = np.dtype(config.standardize_dtype(dtype))
    source = np.result_type(getval(value))
    if target.kind in "iu":
        limits = np.iinfo(target)
    elif target.kind == "f":
        limits = np.finfo(target)
    else:
        return cast(value, target)
    if source.kind == "b" or np.can_cast(source, target, casting="safe"):
        return cast(value, target)
    low, high = limits.min, limits.max
    if source.kind == "f":
        low, high = source.type(low), source.type(high)
        # A limit rounded up past the target's range (int32's 2**31 - 1 in float32).
        if target.kind in "iu" and int(high) > limits.max:
            high = np.nextafter(high, source.type(0))
        if target.kind in "iu" and int(low) < limits.min:
            low = np.nextafter(low, source.type(0))
    elif source.kind in "iu":  # integers meeting a narrower integer or float type
        info = np.iinfo(source)
        low, high = max(int(low), info.min), min(int(high), info.max)
        low, high = source.type(low), source.type(high)
    clipped = clip(value, low, high)
    if source.kind == "f" and target.kind in "iu":
        clipped = wrap(np.nan_to_num(getval(value_of(clipped)), nan=0.0))
    return cast(clipped, target)


def view(x, dtype=None):
    """The bytes of `x` read as `dtype` (a bitcast, as numpy's `ndarray.view`); not differentiable.

    A dtype of another item size changes the last axis: 2 float32 values read as
    int16 are 4 values.

    Args:
        x: Tensor or array-like.
        dtype: the dtype to read the bytes as; None keeps `x`'s (and its gradient).

    Returns:
        A Tensor (a copy: Tensors do not share memory here).

    Raises:
        ValueError: if the last axis's bytes do not divide into the new items.

    Example:
        >>> mk.ops.view(np.array([1, 2, 3, 4], "int8"), "int16").numpy()
        array([ 513, 1027], dtype=int16)
    """
    value = value_of(x)
    if dtype is None:
        return wrap(value)
    target = np.dtype(config.standardize_dtype(dtype))
    array = np.ascontiguousarray(getval(value))
    if target == array.dtype:
        return wrap(value)
    try:
        return wrap(array.view(target).copy())
    except ValueError:
        raise op_error(
            "view", f"the bytes of {array.dtype} values cannot be read as {target}", array
        ) from None
