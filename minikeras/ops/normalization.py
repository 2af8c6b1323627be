"""Normalizing ops: normalize, moments, batch_normalization, layer_normalization and
rms_normalization, with Keras 3's formulas, arguments and dtypes.

Each is a short composition of other ops (mean, var, rsqrt...), which give it
its gradient, second order included. As in Keras, float16 statistics are
computed in float32, and the normalizations return the input's dtype.
"""

import warnings

import numpy as np
from autograd.extend import defvjp, primitive

from minikeras import config
from minikeras.engine.tensor import Tensor
from minikeras.ops import elementary, reduction
from minikeras.ops.comparison import clip, maximum
from minikeras.ops.core import array_of, as_float, dtype_of, op_error, shape_of, value_of, wrap
from minikeras.ops.creation import cast
from minikeras.ops.elementary import rsqrt
from minikeras.ops.math import power, square
from minikeras.ops.normalization_folded import folded_normalization
from minikeras.ops.operands import narrowed_operands
from minikeras.ops.shape import expand_dims, reshape

__all__ = [
    "batch_normalization",
    "layer_normalization",
    "moments",
    "moving_average",
    "normalize",
    "rms_normalization",
]

_FLOAT16_MAX = float(np.finfo(np.float16).max)


@primitive
def _moving_average(moving, value, momentum):
    return moving * momentum + value * (1.0 - momentum)


# A statistic that follows the data, not a function to train: no gradient flows back.
defvjp(_moving_average, None, None)


def moving_average(moving, value, momentum):
    """A moving statistic's next value: `moving * momentum + value * (1 - momentum)`.

    One op, through which no gradient flows (as through `stop_gradient`).
    `BatchNormalization` updates its moving mean and variance with it: as an
    op on the batch's statistics, a compiled training step records it (and
    assigns its replayed result, see `engine.replay`).

    Args:
        moving: the statistic so far (a Variable, Tensor or array).
        value: its value on this batch, of `moving`'s shape and dtype.
        momentum: a float in `[0, 1]`, the weight of `moving`.

    Returns:
        A Tensor of `moving`'s shape.

    Example:
        >>> moving = mk.Variable([1.0, 2.0])
        >>> batch = np.array([3.0, 2.0], "float32")
        >>> mk.ops.normalization.moving_average(moving, batch, 0.75).numpy()
        array([1.5, 2. ], dtype=float32)
    """
    return wrap(_moving_average(value_of(moving), value_of(value), float(momentum)))


def _axes(op, axis, ndim, x):
    """`axis` (an int, or a list or tuple of ints) as a sorted tuple of non-negative ints."""
    axes = axis if isinstance(axis, (list, tuple)) else [axis]
    found = []
    for item in axes:
        if not isinstance(item, (int, np.integer)) or isinstance(item, bool):
            raise TypeError(f"{op}: axis must be an int or a list of ints, got {axis!r}")
        if not -ndim <= item < ndim:
            raise op_error(op, f"axis {item} is out of range for {ndim} axes", x)
        found.append(int(item) % ndim)
    if len(set(found)) != len(found):
        raise op_error(op, f"axis {axis!r} repeats an axis", x)
    return tuple(sorted(found))


def _compute_float(x):
    """`x` as a Tensor of at least float32, and the dtype to give back (Keras's rule)."""
    value = array_of(x)
    dtype = dtype_of(value)
    if dtype.kind == "f" and dtype.itemsize >= 4:
        return wrap(value), dtype
    return cast(value, "float32"), dtype


def normalize(x, axis=-1, order=2, epsilon=None):
    """`x` divided by its `order`-norm along `axis`: `x / max(norm(x), epsilon)`.

    Args:
        x: Tensor or array-like; a scalar is taken as a vector of one.
        axis: an int, or for `order=2` also a tuple of ints or None (all axes).
        order: an int >= 1, the norm's exponent.
        epsilon: the least norm divided by; `mk.config.epsilon()` if None.

    Returns:
        A floating Tensor of `x`'s shape (integers give floatx).

    Raises:
        ValueError: if `order` is not an int >= 1, or an axis is out of range.
        TypeError: if `order` is not 2 and `axis` is not one int (Keras would
            take a matrix norm over two axes; minikeras has none).

    Example:
        >>> mk.ops.normalize([[3.0, 4.0], [0.0, 0.0]]).numpy()
        array([[0.6, 0.8],
               [0. , 0. ]], dtype=float32)
        >>> mk.ops.normalize([1.0, -3.0], order=1).numpy()
        array([ 0.25, -0.75], dtype=float32)
    """
    if not isinstance(order, int) or isinstance(order, bool) or order < 1:
        raise ValueError(f"normalize: order must be an int >= 1, got {order!r}")
    value = wrap(as_float(array_of(x)))
    if np.ndim(value) == 0:
        value = expand_dims(value, 0)
    epsilon = config.epsilon() if epsilon is None else float(epsilon)
    ndim = len(shape_of(value))
    axes = tuple(range(ndim)) if axis is None else _axes("normalize", axis, ndim, value)
    if order == 2:
        # x * rsqrt(...), the sum of squares clamped first: a zero vector gets a finite gradient.
        squares = reduction.sum(square(value), axis=axes, keepdims=True)
        return value * rsqrt(maximum(squares, epsilon * epsilon))
    if len(axes) != 1:
        raise TypeError(f"normalize: order={order} takes one axis (an int), got axis={axis!r}")
    if order == 1:
        norm = reduction.sum(elementary.abs(value), axis=axes, keepdims=True)
    else:
        total = reduction.sum(power(elementary.abs(value), order), axis=axes, keepdims=True)
        norm = power(total, 1.0 / order)
    return value / maximum(norm, epsilon)


def moments(x, axes, keepdims=False, synchronized=False):
    """The mean and the (population) variance of `x` over `axes`.

    Args:
        x: Tensor or array-like.
        axes: an int or a list of ints, the axes reduced.
        keepdims: keep the reduced axes, with size one.
        synchronized: accepted for Keras's signature; minikeras runs on one
            device, whose statistics are then the global ones.

    Returns:
        A tuple `(mean, variance)` of Tensors. Integers give float32; float16
        is computed in float32 and given back as float16 (clipped to its
        range), as in Keras.

    Raises:
        ValueError: if an axis is out of range or repeats.

    Example:
        >>> mean, variance = mk.ops.moments([0.0, 1.0, 2.0, 3.0, 100.0], axes=[0])
        >>> float(mean), round(float(variance), 2)
        (21.2, 1553.36)
    """
    value, dtype = _compute_float(x)
    reduced = _axes("moments", axes, len(value.shape), value)
    average = reduction.mean(value, axis=reduced, keepdims=keepdims)
    variance = reduction.var(value, axis=reduced, keepdims=keepdims)
    if dtype.kind == "f" and dtype.itemsize < 4:
        average = cast(clip(average, -_FLOAT16_MAX, _FLOAT16_MAX), dtype)
        variance = cast(clip(variance, -_FLOAT16_MAX, _FLOAT16_MAX), dtype)
    return average, variance


def batch_normalization(x, mean, variance, axis, offset=None, scale=None, epsilon=1e-3):
    """`(x - mean) / sqrt(variance + epsilon) * scale + offset`, statistics along `axis`.

    Computed as Keras does: `x * inv + (offset - mean * inv)` with
    `inv = scale / sqrt(variance + epsilon)`.

    Args:
        x: Tensor or array-like.
        mean: a vector of `x.shape[axis]` values.
        variance: a vector of `x.shape[axis]` values.
        axis: an int, the axis the statistics run along (the channels).
        offset: None, or a vector of `x.shape[axis]` values added.
        scale: None, or a vector of `x.shape[axis]` values multiplied.
        epsilon: a small number added to the variance.

    Returns:
        A Tensor of `x`'s shape, in the dtype its operands promote to.

    Raises:
        ValueError: if `axis` is out of range, or a vector's shape is not
            `(x.shape[axis],)`.

    Example:
        >>> x = np.array([[1.0, 10.0], [3.0, 30.0]], "float32")
        >>> mk.ops.batch_normalization(x, [2.0, 20.0], [1.0, 100.0], axis=1, epsilon=0.0).numpy()
        array([[-1., -1.],
               [ 1.,  1.]], dtype=float32)
    """
    # (numpy float64 operands beside a Tensor take its precision: ops.operands)
    x, mean, variance, offset, scale = narrowed_operands(x, mean, variance, offset, scale)
    value = wrap(as_float(array_of(x)))
    ndim = len(shape_of(value))
    (axis,) = _axes("batch_normalization", axis, ndim, value)
    size = shape_of(value)[axis]
    shape = [1] * ndim
    shape[axis] = size
    vectors = {"mean": mean, "variance": variance, "offset": offset, "scale": scale}
    for name, vector in vectors.items():
        if vector is not None and shape_of(vector) != (size,):
            raise ValueError(
                f"batch_normalization: {name} must have shape ({size},) (x.shape[{axis}]) for x "
                f"of shape {shape_of(value)}, got shape {shape_of(vector)}"
            )
    # Arrays of x's dtype (a BatchNormalization's weights): one primitive, which a
    # compiled step records even when no tape watches the statistics.
    vectors = (mean, variance, offset, scale)
    if all(v is None or (isinstance(v, Tensor) and v.dtype == value.dtype) for v in vectors):
        values = [None if v is None else value_of(v) for v in vectors]
        return wrap(folded_normalization(value_of(value), *values, float(epsilon), tuple(shape)))
    inv = rsqrt(reshape(variance, shape) + float(epsilon))
    if scale is not None:
        inv = inv * reshape(scale, shape)
    shift = -reshape(mean, shape) * inv
    if offset is not None:
        shift = shift + reshape(offset, shape)
    return value * inv + shift


def layer_normalization(x, gamma=None, beta=None, axis=-1, epsilon=None, rms_scaling=False):
    """Layer normalization (Ba et al., 2016): each sample standardized over `axis`.

    `(x - mean) / sqrt(variance + epsilon) * gamma + beta`, the moments taken
    over `axis` for each sample on its own.

    Args:
        x: Tensor or array-like.
        gamma: None, or a scale broadcastable to the normalized axes (a
            vector of their sizes when `axis` is one axis).
        beta: None, or an offset, likewise.
        axis: an int or a list of ints, the axes normalized over.
        epsilon: added to the variance; `mk.config.epsilon()` if None.
        rms_scaling: Keras's deprecated option: divide by `sqrt(variance +
            epsilon)` and scale by `gamma`, without centering (it warns, as
            Keras does). Keras takes it through `**kwargs`; here it is named.

    Returns:
        A Tensor of `x`'s shape and dtype (float16 is computed in float32).

    Raises:
        ValueError: if an axis is out of range or repeats.

    Example:
        >>> np.round(mk.ops.layer_normalization(np.arange(5, dtype="float32")).numpy(), 4)
        array([-1.4142, -0.7071,  0.    ,  0.7071,  1.4142], dtype=float32)
    """
    # (numpy float64 operands beside a Tensor take its precision: ops.operands)
    x, gamma, beta = narrowed_operands(x, gamma, beta)
    value, dtype = _compute_float(x)
    ndim = len(value.shape)
    axes = _axes("layer_normalization", axis, ndim, value)
    epsilon = config.epsilon() if epsilon is None else float(epsilon)
    shape = tuple(value.shape[a] if a in axes else 1 for a in range(ndim))

    def broadcast(weight):
        weight = cast(weight, value.dtype)
        if len(weight.shape) != ndim and axes != (ndim - 1,):
            return reshape(weight, shape)
        return weight

    if rms_scaling:
        warnings.warn(
            "layer_normalization: rms_scaling=True is deprecated, as in Keras: it scales by "
            "the variance, not the root mean square; use ops.rms_normalization instead",
            stacklevel=2,
        )
        outputs = value * rsqrt(reduction.var(value, axis=axes, keepdims=True) + epsilon)
        if gamma is not None:
            outputs = outputs * broadcast(gamma)
        return cast(outputs, dtype)
    # Centered once and reused (Keras computes x * inv + (beta - mean * inv): the same
    # numbers to rounding, one full-size pass more).
    centered = value - reduction.mean(value, axis=axes, keepdims=True)
    variance = reduction.mean(square(centered), axis=axes, keepdims=True)
    outputs = centered * rsqrt(variance + epsilon)
    if gamma is not None:
        outputs = outputs * broadcast(gamma)
    if beta is not None:
        outputs = outputs + broadcast(beta)
    return cast(outputs, dtype)


def rms_normalization(x, scale=None, axis=-1, epsilon=None):
    """Root-mean-square normalization (Zhang & Sennrich, 2019): `x / rms(x) * scale`.

    `x * rsqrt(mean(x ** 2, axis) + epsilon) * scale`: no centering, unlike
    `layer_normalization`.

    Args:
        x: Tensor or array-like.
        scale: None, or a scale that broadcasts with `x`.
        axis: an int or a list of ints, the axes the mean runs over.
        epsilon: added to the mean square; `mk.config.epsilon()` if None.

    Returns:
        A Tensor of `x`'s shape and dtype (float16 is computed in float32).

    Raises:
        ValueError: if an axis is out of range or repeats.

    Example:
        >>> x = np.array([[3.0, 4.0]], "float32")
        >>> np.round(mk.ops.rms_normalization(x, scale=[1.0, 2.0], epsilon=0.0).numpy(), 4)
        array([[0.8485, 2.2627]], dtype=float32)
    """
    # (numpy float64 operands beside a Tensor take its precision: ops.operands)
    x, scale = narrowed_operands(x, scale)
    value, dtype = _compute_float(x)
    if not value.shape:
        value = expand_dims(value, 0)
    axes = _axes("rms_normalization", axis, len(value.shape), value)
    epsilon = config.epsilon() if epsilon is None else float(epsilon)
    outputs = value * rsqrt(reduction.mean(square(value), axis=axes, keepdims=True) + epsilon)
    if scale is not None:
        outputs = outputs * cast(scale, value.dtype)
    return cast(outputs, dtype)
