"""The draws of `minikeras.random`: normal, uniform, integers, dropout, shuffles, categories.

Each returns a Tensor and takes `seed=` as None, an int or a `SeedGenerator`
(see `minikeras.random`). Float draws are `config.floatx()` (float32) unless
`dtype` says otherwise.
"""

import numpy as np

from minikeras import config, ops
from minikeras.engine.tensor import Tensor
from minikeras.ops.dropout_mask import dropout_mask
from minikeras.random.generators import rng_for

__all__ = [
    "categorical",
    "dropout",
    "normal",
    "randint",
    "shuffle",
    "truncated_normal",
    "uniform",
]


def _shape(shape, where):
    shape = (shape,) if isinstance(shape, (int, np.integer)) else shape
    try:
        shape = tuple(int(s) for s in shape)
    except (TypeError, ValueError):
        raise TypeError(f"{where}: `shape` must be a tuple of ints, got {shape!r:.80}") from None
    if any(s < 0 for s in shape):
        raise ValueError(f"{where}: `shape` must not have negative sizes, got {shape}")
    return shape


def _float_dtype(dtype, where):
    dtype = config.standardize_dtype(dtype)
    if np.dtype(dtype).kind != "f":
        raise ValueError(f"{where}: `dtype` must be a float dtype, got {dtype}")
    return dtype


def _bounds(where, minval, maxval, shape):
    """`(minval, maxval)` as arrays that broadcast to `shape`, or a ValueError naming them."""
    arrays = []
    for name, value in (("minval", minval), ("maxval", maxval)):
        array = np.asarray(value.numpy() if isinstance(value, Tensor) else value)
        try:
            fits = np.broadcast_shapes(array.shape, shape) == shape
        except ValueError:
            fits = False
        if not fits:
            raise ValueError(
                f"{where}: `{name}` of shape {array.shape} does not broadcast to `shape` {shape}"
            )
        if array.dtype.kind not in "biuf":
            raise ValueError(f"{where}: `{name}` must be numbers, got {value!r:.80}")
        arrays.append(array)
    return arrays


def normal(shape, mean=0.0, stddev=1.0, dtype=None, seed=None):
    """Draws from a normal distribution.

    Args:
        shape: the shape of the result.
        mean: the mean.
        stddev: the standard deviation.
        dtype: a float dtype; `config.floatx()` by default.
        seed: None, an int or a `SeedGenerator` (see `minikeras.random`).

    Returns:
        A Tensor of `shape`.

    Raises:
        TypeError: for a bad `shape` or `seed`.
        ValueError: for a negative size or a non-float `dtype`.

    Example:
        >>> x = mk.random.normal((2, 3), mean=1.0, stddev=0.5, seed=0)
        >>> x.shape, x.dtype
        ((2, 3), dtype('float32'))
        >>> bool(np.array_equal(x.numpy(), mk.random.normal((2, 3), 1.0, 0.5, seed=0).numpy()))
        True
    """
    shape, dtype = _shape(shape, "normal"), _float_dtype(dtype, "normal")
    values = rng_for(seed, "normal").standard_normal(shape) * stddev + mean
    return Tensor(values.astype(dtype))


def uniform(shape, minval=0.0, maxval=1.0, dtype=None, seed=None):
    """Draws uniformly from `[minval, maxval)`.

    Args:
        shape: the shape of the result.
        minval: the lower bound (included): a float, or an array broadcast
            against `shape`.
        maxval: the upper bound (excluded), likewise.
        dtype: a float dtype; `config.floatx()` by default.
        seed: None, an int or a `SeedGenerator` (see `minikeras.random`).

    Returns:
        A Tensor of `shape`.

    Raises:
        TypeError: for a bad `shape` or `seed`.
        ValueError: for a negative size, a non-float `dtype`, bounds that are
            not finite or do not broadcast to `shape`, or `maxval < minval`
            anywhere (Keras draws nonsense there without a word).

    Example:
        >>> x = mk.random.uniform((1000,), minval=-1.0, maxval=1.0, seed=1).numpy()
        >>> bool(x.min() >= -1.0 and x.max() < 1.0)
        True
    """
    shape, dtype = _shape(shape, "uniform"), _float_dtype(dtype, "uniform")
    low, high = _bounds("uniform", minval, maxval, shape)
    if not (np.all(np.isfinite(low)) and np.all(np.isfinite(high))):
        raise ValueError(f"uniform: `minval` ({minval}) and `maxval` ({maxval}) must be finite")
    if np.any(high < low):
        raise ValueError(f"uniform: `maxval` ({maxval}) must not be below `minval` ({minval})")
    values = rng_for(seed, "uniform").uniform(low, high, shape)
    return Tensor(values.astype(dtype))


def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=None, seed=None):
    """Draws from a normal distribution, redrawing values more than 2 stddev from the mean.

    Args:
        shape: the shape of the result.
        mean: the mean of the untruncated distribution.
        stddev: its standard deviation.
        dtype: a float dtype; `config.floatx()` by default.
        seed: None, an int or a `SeedGenerator` (see `minikeras.random`).

    Returns:
        A Tensor of `shape`, every value within `mean +- 2 * stddev`.

    Raises:
        TypeError: for a bad `shape` or `seed`.
        ValueError: for a negative size or a non-float `dtype`.

    Example:
        >>> x = mk.random.truncated_normal((10000,), stddev=2.0, seed=0).numpy()
        >>> bool(np.abs(x).max() <= 4.0)
        True
    """
    shape = _shape(shape, "truncated_normal")
    dtype = _float_dtype(dtype, "truncated_normal")
    rng = rng_for(seed, "truncated_normal")
    values = rng.standard_normal(shape)
    outside = np.abs(values) > 2
    while outside.any():  # each pass keeps ~95% of what it redraws
        values[outside] = rng.standard_normal(int(outside.sum()))
        outside = np.abs(values) > 2
    return Tensor((values * stddev + mean).astype(dtype))


def randint(shape, minval, maxval, dtype="int32", seed=None):
    """Draws integers uniformly from `[minval, maxval)`.

    Args:
        shape: the shape of the result.
        minval: the lowest value (included): an int, or an array broadcast
            against `shape`.
        maxval: the bound (excluded), likewise.
        dtype: an integer dtype; `"int32"` by default (also for None).
        seed: None, an int or a `SeedGenerator` (see `minikeras.random`).

    Returns:
        A Tensor of `shape` and `dtype`.

    Raises:
        TypeError: for a bad `shape` or `seed`.
        ValueError: for a non-integer `dtype`, `maxval <= minval` (an empty
            range: Keras's JAX backend returns `minval` there, torch raises),
            bounds that are not whole numbers, do not broadcast to `shape`, or
            give draws outside `dtype`'s range.

    Example:
        >>> x = mk.random.randint((1000,), 3, 6, seed=0).numpy()
        >>> sorted(set(x.tolist())), x.dtype
        ([3, 4, 5], dtype('int32'))
    """
    shape = _shape(shape, "randint")
    dtype = "int32" if dtype is None else dtype
    if np.dtype(dtype).kind not in "iu":
        raise ValueError(f"randint: `dtype` must be an integer dtype, got {dtype}")
    low, high = _bounds("randint", minval, maxval, shape)
    if np.any(low != np.round(low)) or np.any(high != np.round(high)):
        raise ValueError(f"randint: `minval` ({minval}) and `maxval` ({maxval}) must be whole")
    if np.any(high <= low):
        raise ValueError(f"randint: `maxval` ({maxval}) must be above `minval` ({minval})")
    limits = np.iinfo(dtype)  # the draws lie in [minval, maxval - 1]
    if np.any(low < limits.min) or np.any(high - 1 > limits.max):
        name = "minval" if np.any(low < limits.min) else "maxval"
        raise ValueError(
            f"randint: `{name}` ({minval if name == 'minval' else maxval}) does not fit "
            f"dtype {np.dtype(dtype).name}: draws must lie in [{limits.min}, {limits.max}]"
        )
    values = rng_for(seed, "randint").integers(low.astype(np.int64), high.astype(np.int64), shape)
    return Tensor(values.astype(dtype))


def dropout(inputs, rate, noise_shape=None, seed=None):
    """Zeroes each entry with probability `rate` and scales the rest by `1 / (1 - rate)`.

    Gradients flow to `inputs` through the kept entries. As in Keras,
    `rate=0` returns the inputs unchanged and `rate=1` returns zeros (whose
    gradient is zero).

    Args:
        inputs: a float Tensor or array.
        rate: the fraction to drop, in `[0, 1]`.
        noise_shape: the shape of the keep mask, of the inputs' rank, each
            size 1 (one decision shared along that axis) or the inputs' size;
            `None` entries take the inputs' size. By default the inputs' shape.
        seed: None, an int or a `SeedGenerator` (see `minikeras.random`).

    Returns:
        A Tensor of the inputs' shape and dtype.

    Raises:
        TypeError: if `inputs` are not floats (a scaled integer would be
            truncated).
        ValueError: if `rate` is not in `[0, 1]`, or `noise_shape` does not
            have the inputs' rank or does not broadcast to their shape.

    Example:
        >>> out = mk.random.dropout(np.ones((2, 4), "float32"), 0.5, seed=0).numpy()
        >>> sorted(set(out.ravel().tolist()))
        [0.0, 2.0]
    """
    if isinstance(rate, bool) or not 0 <= rate <= 1:
        raise ValueError(f"dropout: `rate` must be in [0, 1], got {rate!r}")
    inputs = ops.convert_to_tensor(inputs)
    if np.dtype(inputs.dtype).kind != "f":
        raise TypeError(f"dropout: `inputs` must be floats, got dtype {inputs.dtype}")
    shape = inputs.shape
    if noise_shape is not None:
        noise_shape = tuple(noise_shape)
        if len(noise_shape) != len(shape):
            raise ValueError(
                f"dropout: `noise_shape` {noise_shape} must have the rank of the inputs' "
                f"shape {shape}"
            )
        noise_shape = tuple(s if n is None else int(n) for n, s in zip(noise_shape, shape))
        if any(n not in (1, s) for n, s in zip(noise_shape, shape)):
            raise ValueError(
                f"dropout: `noise_shape` {noise_shape} does not broadcast to the inputs' "
                f"shape {shape}: each size must be 1 or the inputs' size"
            )
        shape = noise_shape
    rng = rng_for(seed, "dropout")
    if rate == 0:
        return inputs
    if rate == 1:  # `where`, not `inputs * 0`, so infinite inputs give 0, not nan
        return ops.where(np.zeros(inputs.shape, bool), inputs, np.zeros((), inputs.dtype))
    return dropout_mask(inputs, rate, shape, rng)


def shuffle(x, axis=0, seed=None):
    """Shuffles `x` along one axis.

    Args:
        x: a Tensor or array.
        axis: the axis to shuffle.
        seed: None, an int or a `SeedGenerator` (see `minikeras.random`).

    Returns:
        A Tensor with the slices along `axis` in a random order.

    Raises:
        ValueError: if `x` is a scalar (0-D) or `axis` is out of range.

    Example:
        >>> x = mk.random.shuffle(np.arange(6).reshape(3, 2), seed=0).numpy()
        >>> sorted(x[:, 0].tolist()), bool(np.all(x[:, 1] == x[:, 0] + 1))
        ([0, 2, 4], True)
    """
    x = ops.convert_to_tensor(x)
    if x.ndim == 0:
        raise ValueError(f"shuffle: `x` must have at least one axis, got a scalar {x.numpy()!r}")
    if not -x.ndim <= axis < x.ndim:
        raise ValueError(f"shuffle: `axis` {axis} is out of range for shape {x.shape}")
    order = rng_for(seed, "shuffle").permutation(x.shape[axis])
    return ops.take(x, order, axis=axis)


def categorical(logits, num_samples, dtype="int32", seed=None):
    """Draws class indices from the categorical distributions that `logits` give.

    Each draw is the inverse CDF of one uniform number taken from the seed's
    stream in row-major order of the result, all rows searched at once; a
    seed gives the draws it always gave. Keras samples differently
    (Gumbel-max on JAX, `torch.multinomial`): the same distribution, other
    numbers.

    Args:
        logits: a 2D array `(batch, num_classes)` of unnormalized log-probabilities.
        num_samples: the number of draws per row.
        dtype: the result's dtype, `"int32"` by default; None gives
            `config.floatx()`, as Keras's JAX backend does.
        seed: None, an int or a `SeedGenerator` (see `minikeras.random`).

    Returns:
        A Tensor `(batch, num_samples)` of class indices.

    Raises:
        TypeError: if `num_samples` is not an int.
        ValueError: if `logits` is not 2D, a row has nan, +inf or only -inf
            (not a distribution: Keras's JAX backend draws class 0 or the +inf
            class, torch raises), or `num_samples` is negative.

    Example:
        >>> logits = np.log(np.array([[0.0, 1.0], [1.0, 0.0]]) + 1e-30)
        >>> mk.random.categorical(logits, 3, seed=0).numpy().tolist()
        [[1, 1, 1], [0, 0, 0]]
    """
    logits = np.asarray(ops.convert_to_tensor(logits).numpy(), dtype=np.float64)
    if logits.ndim != 2:
        raise ValueError(
            f"categorical: `logits` must be 2D (batch, num_classes), got shape {logits.shape}"
        )
    if isinstance(num_samples, bool) or not isinstance(num_samples, (int, np.integer)):
        raise TypeError(f"categorical: `num_samples` must be an int, got {num_samples!r}")
    if num_samples < 0:
        raise ValueError(f"categorical: `num_samples` must be >= 0, got {num_samples}")
    dtype = config.floatx() if dtype is None else dtype
    if logits.shape[1] == 0:
        raise ValueError(
            f"categorical: `logits` must have at least one class, got shape {logits.shape}"
        )
    peak = logits.max(axis=1, keepdims=True)
    if np.isnan(logits).any() or np.isposinf(peak).any() or np.isneginf(peak).any():
        raise ValueError(
            "categorical: each row of `logits` must hold finite values (-inf for an "
            "impossible class, not every class), with no nan or +inf"
        )
    # Inverse CDF: memory batch * (classes + samples), where the Gumbel-max
    # trick needs batch * classes * samples.
    rng = rng_for(seed, "categorical")
    cumulative = np.cumsum(np.exp(logits - peak), axis=1)
    targets = rng.random((len(logits), int(num_samples))) * cumulative[:, -1:]
    draws = _count_at_or_below(cumulative, targets)
    return Tensor(np.minimum(draws, logits.shape[1] - 1).astype(dtype))


def _count_at_or_below(cumulative, targets):
    """How many entries of its row of `cumulative` are <= each target.

    `np.searchsorted(row, target, side="right")` for every row at once: one
    binary search over all draws together, log2(classes) numpy passes, where
    a Python loop over rows costs a call per row.
    """
    classes = cumulative.shape[1]
    flat = cumulative.ravel()
    row_starts = np.arange(0, flat.size, classes)[:, None]
    low = np.zeros(targets.shape, dtype=np.intp)
    high = np.full(targets.shape, classes, dtype=np.intp)
    for _ in range(classes.bit_length()):  # the answer is one of classes + 1
        middle = (low + high) // 2
        open_ = low < high
        at_or_below = flat.take(row_starts + np.minimum(middle, classes - 1)) <= targets
        low = np.where(open_ & at_or_below, middle + 1, low)
        high = np.where(open_ & ~at_or_below, middle, high)
    return low
