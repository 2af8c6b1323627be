"""Sampling arrays between their grid points: `keras.ops.image.map_coordinates`, and the
sampler the image transforms (affine, perspective, elastic) share.

A point is sampled by its nearest grid point (`order=0`, halves rounded away
from zero) or by linear interpolation between the `2 ** n` grid points
around it (`order=1`), as `scipy.ndimage.map_coordinates` and jax's (Keras's
jax backend) do. A grid point outside the array is read by `fill_mode`:

- `"constant"`: `fill_value` (each point outside counts alone, so a sample
  near the border mixes the edge with `fill_value`);
- `"nearest"` (a a a | a b c d | d d d), `"wrap"` (b c d | a b c d | a b c),
  `"reflect"` (c b a | a b c d | d c b), `"mirror"` (d c b | a b c d | c b a).

The result is linear in the sampled values, so its gradient with respect to
them is exact to any order: the gradient adds each output's weights back into
the grid points it read (a scatter), whose gradient is the gather again. The
coordinates get no gradient (they pick the grid points and weights).

    >>> mk.ops.image.map_coordinates(np.array([0.0, 10.0, 20.0]), [[0.5, 1.25]], 1).numpy()
    array([ 5. , 12.5])
"""

import functools
import itertools
import operator

import numpy as np
from autograd.extend import defvjp, primitive
from autograd.tracer import getval

from minikeras.engine.primitive import call_primitive
from minikeras.ops.core import array_of, value_of, wrap
from minikeras.ops.creation import cast, convert_to_tensor
from minikeras.ops.elementary import abs, floor, sign
from minikeras.ops.shape import reshape

__all__ = ["FILL_MODES", "check_choice", "host_values", "map_coordinates", "sample"]

FILL_MODES = ("constant", "nearest", "wrap", "mirror", "reflect")


@primitive
def _gather(flat, indices, weights):
    """`out[m] = sum_k weights[k, m] * flat[indices[k, m]]`, over `flat`'s first axis."""
    out = np.zeros(indices.shape[1:] + flat.shape[1:], dtype=flat.dtype)
    tail = (slice(None),) + (None,) * (flat.ndim - 1)
    for corner, weight in zip(indices, weights):
        out += weight[tail] * flat[corner]
    return out


@primitive
def _scatter(gradient, indices, weights, size):
    """The transpose of `_gather`: each `gradient[m]`, weighed, added into row `indices[k, m]`."""
    # (np.bincount per trailing column: several times faster than np.add.at)
    columns = gradient.reshape(len(gradient), -1)
    rows = indices.ravel()
    out = np.empty((size, columns.shape[1]), dtype=gradient.dtype)
    for k in range(columns.shape[1]):
        weighed = (weights * columns[:, k]).ravel()
        out[:, k] = np.bincount(rows, weights=weighed, minlength=size)
    return out.reshape((size,) + gradient.shape[1:])


defvjp(
    _gather, lambda ans, flat, indices, weights: lambda g: _scatter(g, indices, weights, len(flat))
)
defvjp(_scatter, lambda ans, g, indices, weights, size: lambda h: _gather(h, indices, weights))


def _fix_index(index, size, fill_mode):
    """Integer grid indices brought inside `[0, size)` by `fill_mode` (constant: clipped)."""
    if fill_mode == "wrap":
        return np.mod(index, size)
    if fill_mode == "reflect":
        index = np.mod(index, 2 * size)
        return np.where(index >= size, 2 * size - 1 - index, index)
    if fill_mode == "mirror" and size > 1:
        index = np.mod(index, 2 * size - 2)
        return np.where(index >= size, 2 * size - 2 - index, index)
    return np.clip(index, 0, size - 1)


def _nodes(coordinate, order):
    """The grid points `(index, weight)` one axis's coordinates read."""
    if order == 0:  # (halves away from zero, as jax's lax.round)
        nearest = np.sign(coordinate) * np.floor(np.abs(coordinate) + 0.5)
        return [(nearest.astype(np.int64), np.ones_like(coordinate))]
    low = np.floor(coordinate)
    upper = coordinate - low
    low = low.astype(np.int64)
    return [(low, 1.0 - upper), (low + 1, upper)]


def sample(values, coordinates, order=1, fill_mode="constant", fill_value=0.0, batched=False):
    """Samples `values` at points given by one coordinate array per sampled axis.

    The axes after the sampled ones are carried along (an image's channels);
    with `batched`, the first axis is a batch and point `p` of
    `coordinates[d][b, ...]` reads item `b`.

    Args:
        values: a Tensor or array; float, or integer (then the samples are
            rounded half away from zero and cast back, as jax does).
        coordinates: a list of float numpy arrays of one shape, one per
            sampled axis (first axes of `values`, after the batch axis).
        order: 0 (nearest) or 1 (linear).
        fill_mode: one of `FILL_MODES` (see the module docstring).
        fill_value: the value outside the array with `"constant"`.
        batched: whether `values`' first axis is a batch (the coordinates'
            first axis indexes it).

    Returns:
        A Tensor `coordinates[0].shape + values.shape[batched + len(coordinates):]`
        of `values`' dtype.

    Example:
        >>> image = np.arange(4.0).reshape(1, 2, 2, 1)  # one 2 x 2 image
        >>> rows, cols = np.full((1, 1, 1), 0.5), np.full((1, 1, 1), 0.5)
        >>> mk.ops.image_sampling.sample(image, [rows, cols], batched=True).numpy()
        array([[[[1.5]]]])
    """
    values = convert_to_tensor(values)
    shape = tuple(values.shape)
    lead = 1 if batched else 0
    spatial = shape[lead : lead + len(coordinates)]
    points = np.shape(coordinates[0])
    dtype = np.dtype(values.dtype)
    weight_dtype = dtype if dtype.kind == "f" else np.float64
    # Per axis, the grid points read: flat offsets (the fill mode applied) and weights,
    # zero for a point outside with "constant" (its share goes to fill_value).
    strides = np.cumprod((1, *spatial[::-1]))[-2::-1]
    axes = []
    for coordinate, size, stride in zip(coordinates, spatial, strides):
        nodes = []
        for index, weight in _nodes(np.asarray(coordinate, np.float64), order):
            if fill_mode == "constant":
                weight = np.where((index >= 0) & (index < size), weight, 0.0)
            nodes.append((_fix_index(index, size, fill_mode) * stride, weight))
        axes.append(nodes)
    base = 0
    if batched:  # (item b's pixels start at b * strides[0] * spatial[0])
        base = np.arange(shape[0]).reshape((-1,) + (1,) * (len(points) - 1)) * int(np.prod(spatial))
    indices, weights = [], []
    for corner in itertools.product(*axes):
        offsets, parts = zip(*corner)
        indices.append(np.broadcast_to(base + sum(offsets), points).ravel())
        weights.append(functools.reduce(operator.mul, parts).ravel())
    outside = (1.0 - np.sum(weights, axis=0)).reshape(points)
    tail = shape[lead + len(coordinates) :]
    floats = values if dtype.kind == "f" else cast(values, weight_dtype)
    flat = array_of(reshape(floats, (-1, *tail)))
    gathered = call_primitive(_gather, flat, np.asarray(indices), np.asarray(weights, weight_dtype))
    out = reshape(wrap(gathered), (*points, *tail))
    if fill_mode == "constant" and fill_value != 0 and outside.any():
        filled = (outside * fill_value).astype(weight_dtype).reshape(points + (1,) * len(tail))
        out = out + filled
    if dtype.kind != "f":  # (as jax: halves away from zero, then the integer dtype)
        out = cast(sign(out) * floor(abs(out) + 0.5), dtype)
    return out


def host_values(op, name, value):
    """The plain float64 numpy values of a Tensor or array-like (not differentiated).

    Args:
        op: the op's name, for errors.
        name: the argument's name, for errors.
        value: a Tensor, array, box or nested list of numbers.

    Returns:
        A float64 numpy array.

    Raises:
        TypeError: if `value` holds no numbers.

    Example:
        >>> mk.ops.image_sampling.host_values("map_coordinates", "coordinates", [[1, 2]])
        array([[1., 2.]])
    """
    try:
        return np.asarray(getval(value_of(value)), dtype=np.float64)
    except (TypeError, ValueError) as error:
        raise TypeError(f"{op}: {name} must be numbers, got {value!r:.80}") from error


def check_choice(op, name, value, allowed):
    """Raises a ValueError naming `op` and `name` unless `value` is one of `allowed`.

    Args:
        op: the op's name.
        name: the argument's name.
        value: the value given.
        allowed: the values accepted.

    Returns:
        `value`.

    Raises:
        ValueError: if `value` is not in `allowed`.

    Example:
        >>> mk.ops.image_sampling.check_choice("map_coordinates", "order", 1, (0, 1))
        1
    """
    if isinstance(value, bool) or value not in allowed:
        raise ValueError(f"{op}: {name} must be one of {list(allowed)}, got {value!r}")
    return value


def map_coordinates(inputs, coordinates, order, fill_mode="constant", fill_value=0):
    """Samples an array at given coordinates, as `keras.ops.image.map_coordinates`.

    Output point `p` reads `inputs` at `(coordinates[0][p], coordinates[1][p],
    ...)`, by its nearest grid point or by linear interpolation (see the
    module docstring), with `fill_mode` past the edges. Differentiable with
    respect to `inputs` (not `coordinates`).

    Args:
        inputs: the array to sample, of any rank `n >= 1`.
        coordinates: `n` arrays of one shape, at least 1-D (or one array
            whose first axis has `n` entries): the point each output reads,
            one axis each.
        order: 0 (nearest grid point) or 1 (linear).
        fill_mode: `"constant"` (default), `"nearest"`, `"wrap"`, `"mirror"`
            or `"reflect"`.
        fill_value: the value outside `inputs` with `"constant"` (default 0).

    Returns:
        A Tensor of the coordinates' shape (without their first axis) and
        the inputs' dtype (integer inputs rounded half away from zero).

    Raises:
        ValueError: if the coordinates do not have one entry per axis of
            `inputs`, or `order` or `fill_mode` is not valid.

    Example:
        >>> grid = np.arange(12.0).reshape(3, 4)
        >>> mk.ops.image.map_coordinates(grid, [[0.5, 2.0], [1.0, 2.5]], order=1).numpy()
        array([ 3. , 10.5])
    """
    op = "map_coordinates"
    check_choice(op, "order", order, (0, 1))
    check_choice(op, "fill_mode", fill_mode, FILL_MODES)
    inputs = convert_to_tensor(inputs)
    points = host_values(op, "coordinates", coordinates)
    if points.ndim < 2 or len(points) != len(inputs.shape) or len(inputs.shape) < 1:
        raise ValueError(
            f"{op}: coordinates must have one entry per axis of inputs ({len(inputs.shape)}), "
            f"got coordinates of shape {points.shape} for inputs of shape {tuple(inputs.shape)}"
        )
    return sample(inputs, list(points), order, fill_mode, float(fill_value))
