"""Gradient clipping as Keras does it: `clipnorm`, `global_clipnorm`, `clipvalue`.

Gradients are never changed in place (the caller may hold them): a clipped
gradient is a new array of the gradient's shape and dtype (a 0-d gradient
stays an array, not a numpy scalar, which ops would take as a Python
number), an unchanged one is returned as it is.
"""

import math

import numpy as np

from minikeras.optimizers._checks import POSITIVE, check_number

__all__ = ["check_arguments", "clip_gradients"]


def check_arguments(owner, clipnorm, clipvalue, global_clipnorm):
    """`(clipnorm, clipvalue, global_clipnorm)` checked, as the optimizer keeps them.

    Args:
        owner: the optimizer's class name, for messages.
        clipnorm: None, or a number > 0.
        clipvalue: None, or a number > 0.
        global_clipnorm: None, or a number > 0.

    Returns:
        A tuple of three: None, or the float.

    Raises:
        ValueError: if more than one is set, or one is not a number > 0.

    Example:
        >>> mk.optimizers._clipping.check_arguments("SGD", 1, None, None)
        (1, None, None)
    """
    clips = {"clipnorm": clipnorm, "clipvalue": clipvalue, "global_clipnorm": global_clipnorm}
    given = [f"{key}={value!r}" for key, value in clips.items() if value is not None]
    if len(given) > 1:
        raise ValueError(
            f"{owner}: only one of `clipnorm`, `clipvalue` and `global_clipnorm` can be "
            f"set, got {', '.join(given)}"
        )
    return tuple(
        None if value is None else check_number(owner, key, value, POSITIVE)
        for key, value in clips.items()
    )


def _squared_norm(gradient):
    flat = gradient.ravel()
    return float(np.dot(flat, flat))


def _scale_to_norm(gradient, norm, clip_norm):
    """`gradient * clip_norm / max(norm, clip_norm)`: a new array, or `gradient` itself."""
    if norm <= clip_norm:
        return gradient
    # A non-finite norm makes every value NaN, as in Keras, rather than hiding the problem.
    scale = clip_norm / norm if math.isfinite(norm) else math.nan
    return np.multiply(gradient, scale, out=np.empty_like(gradient))


def clip_gradients(grads, clipnorm=None, clipvalue=None, global_clipnorm=None):
    """The gradients clipped as the (at most one) clipping argument says.

    Args:
        grads: a list of numpy arrays.
        clipnorm: None, or the L2 norm each gradient is scaled down to.
        clipvalue: None, or the bound of each value (`[-clipvalue, clipvalue]`).
        global_clipnorm: None, or the joint L2 norm of all gradients.

    Returns:
        A list of numpy arrays: new ones where clipping changed something.

    Example:
        >>> mk.optimizers._clipping.clip_gradients([np.array([3.0, 4.0])], clipnorm=1.0)
        [array([0.6, 0.8])]
    """
    if clipnorm:
        return [_scale_to_norm(g, math.sqrt(_squared_norm(g)), clipnorm) for g in grads]
    if global_clipnorm:
        norm = math.sqrt(sum(_squared_norm(g) for g in grads))
        return [_scale_to_norm(g, norm, global_clipnorm) for g in grads]
    if clipvalue:
        return [np.clip(g, -clipvalue, clipvalue, out=np.empty_like(g)) for g in grads]
    return grads
