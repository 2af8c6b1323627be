"""Reductions: how per-sample losses, their weights and their mask become one number."""

import numpy as np

from minikeras import ops
from minikeras.losses.pairs import squeeze_or_expand_to_same_rank

__all__ = ["apply_mask", "reduce_weighted_values", "standardize_reduction"]

_REDUCTIONS = ("sum_over_batch_size", "sum", "mean", "mean_with_sample_weight", "none", None)


def standardize_reduction(reduction, name="loss"):
    """Checks a reduction name and returns it.

    Args:
        reduction: one of `"sum_over_batch_size"`, `"sum"`, `"mean"`,
            `"mean_with_sample_weight"`, `"none"` or None.
        name: the loss's name, for the error message.

    Returns:
        `reduction`, unchanged.

    Raises:
        ValueError: for any other value.

    Example:
        >>> mk.losses.standardize_reduction("sum")
        'sum'
    """
    if reduction not in _REDUCTIONS:
        raise ValueError(
            f"Loss {name!r}: invalid reduction {reduction!r}; expected one of "
            f"{', '.join(repr(r) for r in _REDUCTIONS)}"
        )
    return reduction


def reduce_weighted_values(
    values, sample_weight=None, reduction="sum_over_batch_size", name="loss"
):
    """Weights per-sample losses and reduces them as `reduction` says.

        weighted = values * sample_weight
        "sum":                     sum(weighted)
        "sum_over_batch_size":     sum(weighted) / number of elements of values
        "mean":                    the same as "sum_over_batch_size"
        "mean_with_sample_weight": sum(weighted) / sum(sample_weight broadcast to values)
        "none" or None:            weighted, unreduced

    A zero divisor gives 0. A 0-d `values` is returned as it is.

    Where Keras 3 differs, on purpose: without a mask, Keras divides
    `"mean_with_sample_weight"` by the sum of the weights as given, before
    broadcasting. Weights of shape (batch, 1) on losses of shape
    (batch, steps) then give `steps` times the weighted mean, and a scalar
    weight gives the plain sum. Keras's result with an all-True mask, and
    its metrics with the same weights, are the weighted mean computed here,
    which is what the reduction was added for (keras-team/keras#19740).
    Also, (batch,) weights on (batch, steps) losses are an error in Keras;
    here each weight covers its sample's steps. With weights of the losses'
    shape, and for the other reductions, the two agree.

    Args:
        values: Tensor of per-sample losses.
        sample_weight: None, or weights of shape (batch,) or anything that
            broadcasts to `values` once trailing axes are added (a weight per
            sample, per time step, ...).
        reduction: see above.
        name: the loss's name, for error messages.

    Returns:
        A scalar Tensor, or a Tensor of `values`' shape for `"none"` / None.

    Raises:
        ValueError: for an unknown reduction, or weights that do not fit.

    Example:
        >>> float(
        ...     mk.losses.reduce_weighted_values(mk.ops.convert_to_tensor([1.0, 3.0]), [1.0, 0.0])
        ... )
        0.5
    """
    reduction = standardize_reduction(reduction, name)
    values = ops.convert_to_tensor(values)
    if sample_weight is not None:
        weights = ops.cast(sample_weight, values.dtype)
        weight_shape = weights.shape
        if values.ndim == 0 and weights.ndim:  # one loss for the batch (Dice's), as Keras:
            values = ops.broadcast_to(values, weights.shape)  # weighted sample by sample
        values, weights = squeeze_or_expand_to_same_rank(values, weights)
        while weights.ndim < values.ndim:  # a weight per sample covers its trailing axes
            weights = ops.expand_dims(weights, -1)
        if not _broadcasts_to(weights.shape, values.shape):
            raise ValueError(
                f"Loss {name!r}: sample_weight of shape {weight_shape} does not fit "
                f"losses of shape {values.shape}; expected shape "
                f"{values.shape[:1]} or one that broadcasts"
            )
        values = values * weights
    if reduction in ("none", None) or values.ndim == 0:
        return values
    if reduction == "sum":
        return ops.sum(values)
    if reduction == "mean_with_sample_weight" and sample_weight is not None:
        divisor = ops.sum(weights * ops.ones_like(values))
        # Dividing the losses, not their sum: ops.divide of two 0-d float64
        # Tensors gives float32 (see the report on ops.divide).
        return ops.sum(values / divisor) if float(divisor) else ops.sum(values) * 0.0
    if values.size:
        # The sum times 1 / count, weighted or not: `ops.mean` computes just that, in
        # one recorded op (which a compiled step replays; see trainers.compiled_step).
        return ops.mean(values)
    return ops.sum(values) * 0.0


def _broadcasts_to(shape, target):
    if len(shape) > len(target):
        return False
    return all(a in (1, b) for a, b in zip(shape[::-1], target[::-1]))


def apply_mask(sample_weight, mask, dtype, reduction="sum_over_batch_size", name="loss"):
    """Folds a mask over the losses into their sample weights, as Keras does.

    Masked entries get weight 0. For the mean reductions
    (`"sum_over_batch_size"`, `"mean"`) the kept entries get
    `mask.size / kept`, so that the reduced loss is the mean over the kept
    entries only (and 0 if none is kept); other reductions keep weight 1.
    `sample_weight`, if given, multiplies in: a weight per sample covers
    that sample's steps.

    Args:
        sample_weight: None, or weights of shape (batch,) or broadcastable
            to the mask.
        mask: None, or booleans shaped like the per-sample losses (for a
            sequence model, (batch, steps)): False marks what to ignore.
        dtype: the losses' dtype.
        reduction: the loss's reduction.
        name: the loss's name, for error messages.

    Returns:
        A Tensor of the weights to reduce the losses with (`sample_weight`
        itself if `mask` is None).

    Raises:
        ValueError: if `sample_weight` does not fit the mask.

    Example:
        >>> mk.losses.apply_mask(None, [[True, True, False, False]], "float32").numpy()
        array([[2., 2., 0., 0.]], dtype=float32)
        >>> mk.losses.apply_mask([3.0], [[True, False]], "float32", reduction="sum").numpy()
        array([[3., 0.]], dtype=float32)
    """
    if mask is None:
        return sample_weight
    kept = np.asarray(mask).astype(bool)
    if reduction in ("sum_over_batch_size", "mean"):
        count = int(kept.sum())
        scale = kept.size / count if count else 0.0
        weights = np.where(kept, scale, 0.0).astype(dtype)
    else:
        weights = kept.astype(dtype)
    if sample_weight is None:
        return ops.convert_to_tensor(weights)
    given = ops.cast(sample_weight, dtype)
    mask_weights, sample_weights = squeeze_or_expand_to_same_rank(weights, given)
    while sample_weights.ndim < mask_weights.ndim:  # a weight per sample covers its steps
        sample_weights = ops.expand_dims(sample_weights, -1)
    if not _broadcasts_to(sample_weights.shape, mask_weights.shape):
        raise ValueError(
            f"Loss {name!r}: sample_weight of shape {given.shape} does not fit the mask of "
            f"shape {kept.shape}; expected shape {kept.shape[:1]} or one that broadcasts"
        )
    return mask_weights * sample_weights
