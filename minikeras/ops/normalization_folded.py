"""`folded_normalization`: batch normalization with given statistics, as one primitive.

`ops.batch_normalization` folds the statistics into one scale and one shift,

    inv = scale / sqrt(variance + epsilon)
    output = x * inv + (offset - mean * inv)

Written with ops, the folding runs on the statistics alone: under a tape
that watches none of them (a frozen BatchNormalization's moving mean and
variance, gamma and beta), no node records it, and a compiled training
step (`engine.replay`) cannot repeat what its ops did not see. As one
primitive of `x` and the statistics, the folding is recorded with `x`, and
a replay reads the statistics afresh. The gradients are written with
autograd's numpy, so that they are differentiable again:

    d x        = g * inv
    d offset   = sum(g)
    d mean     = -sum(g) * inv
    d scale    = sum(g * (x - mean)) / sqrt(variance + epsilon)
    d variance = sum(g * (x - mean)) * scale * -0.5 / sqrt(variance + epsilon) ** 3

each sum over every axis but the channels'.
"""

import autograd.numpy as anp
import numpy as np
from autograd.extend import defvjp, primitive

__all__ = ["folded_normalization"]


@primitive
def folded_normalization(x, mean, variance, offset, scale, epsilon, shape):
    """`x * inv + (offset - mean * inv)`, `inv = scale / sqrt(variance + epsilon)`.

    The forward pass is that of `ops.batch_normalization` on arrays, in the
    same order of operations (the same numbers).

    Args:
        x: an array (or box) of floats.
        mean: a vector of `x`'s channels, of `x`'s dtype.
        variance: likewise.
        offset: likewise, or None.
        scale: likewise, or None.
        epsilon: a float added to the variance.
        shape: the shape the vectors broadcast against `x` with: ones, but the
            channel axis.

    Returns:
        An array of `x`'s shape.

    Example:
        >>> from minikeras.ops.normalization_folded import folded_normalization
        >>> x = np.array([[1.0, 10.0], [3.0, 30.0]], "float32")
        >>> stats = [np.array(v, "float32") for v in ([2.0, 20.0], [1.0, 100.0])]
        >>> folded_normalization(x, *stats, None, None, 0.0, (1, 2))
        array([[-1., -1.],
               [ 1.,  1.]], dtype=float32)
    """
    inv = 1 / np.sqrt(variance.reshape(shape) + epsilon)
    if scale is not None:
        inv = inv * scale.reshape(shape)
    shift = -mean.reshape(shape) * inv
    if offset is not None:
        shift = shift + offset.reshape(shape)
    return x * inv + shift


def _channel_sum(t, shape):
    """`t` summed over every axis but the channels', as a vector."""
    axes = tuple(axis for axis, size in enumerate(shape) if size == 1)
    return anp.reshape(anp.sum(t, axis=axes), (-1,))


def _root(variance, epsilon, shape):
    return 1 / anp.sqrt(anp.reshape(variance, shape) + epsilon)


def _inv(variance, scale, epsilon, shape):
    root = _root(variance, epsilon, shape)
    return root if scale is None else root * anp.reshape(scale, shape)


def _centered_sum(g, x, mean, shape):
    return _channel_sum(g * (x - anp.reshape(mean, shape)), shape)


def _x_vjp(ans, x, mean, variance, offset, scale, epsilon, shape):
    return lambda g: g * _inv(variance, scale, epsilon, shape)


def _mean_vjp(ans, x, mean, variance, offset, scale, epsilon, shape):
    inv = anp.reshape(_inv(variance, scale, epsilon, shape), (-1,))
    return lambda g: -_channel_sum(g, shape) * inv


def _variance_vjp(ans, x, mean, variance, offset, scale, epsilon, shape):
    root = anp.reshape(_root(variance, epsilon, shape), (-1,))
    factor = -0.5 * root * root * root
    if scale is not None:
        factor = factor * scale
    return lambda g: _centered_sum(g, x, mean, shape) * factor


def _offset_vjp(ans, x, mean, variance, offset, scale, epsilon, shape):
    return lambda g: _channel_sum(g, shape)


def _scale_vjp(ans, x, mean, variance, offset, scale, epsilon, shape):
    root = anp.reshape(_root(variance, epsilon, shape), (-1,))
    return lambda g: _centered_sum(g, x, mean, shape) * root


defvjp(folded_normalization, _x_vjp, _mean_vjp, _variance_vjp, _offset_vjp, _scale_vjp)
