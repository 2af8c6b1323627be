"""`split_dataset`: arrays (or a tuple, list or dict of them) cut into a left and a right part."""

import numbers

import numpy as np

from minikeras.random import rng_for

__all__ = ["split_dataset"]


def _check_size(name, size, total):
    """`size` as a sample count, from an int count or a float fraction (None stays None)."""
    if size is None:
        return None
    if isinstance(size, bool) or not isinstance(size, numbers.Real):
        raise TypeError(
            f"split_dataset: {name} must be an int, a float or None, got {size!r} of type "
            f"{type(size).__name__}"
        )
    if isinstance(size, numbers.Integral):
        if not 0 < size < total:
            raise ValueError(
                f"split_dataset: {name} must be a positive int smaller than {total} (the "
                f"number of samples) or a float in (0, 1), got {name}={size}"
            )
        return int(size)
    if not 0 < size < 1:
        raise ValueError(
            f"split_dataset: {name} must be a positive int smaller than {total} (the "
            f"number of samples) or a float in (0, 1), got {name}={size}"
        )
    return round(size * total)


def _arrays(dataset):
    """The arrays of `dataset` and a function that rebuilds its structure from new ones."""
    if isinstance(dataset, dict):
        keys = list(dataset)
        return [np.asarray(dataset[key]) for key in keys], lambda parts: dict(zip(keys, parts))
    if isinstance(dataset, (tuple, list)) and dataset and not np.isscalar(dataset[0]):
        kind = type(dataset)
        return [np.asarray(array) for array in dataset], lambda parts: kind(parts)
    return [np.asarray(dataset)], lambda parts: parts[0]


def split_dataset(
    dataset, left_size=None, right_size=None, shuffle=False, seed=None, preferred_backend=None
):
    """Splits arrays along their first axis into a left part and a right part (train/test).

    The left part takes the first `left_size` samples and the right part the
    last `right_size` (after a shuffle, if asked); samples in neither are
    dropped. Sizes are counts (ints) or fractions of the samples (floats,
    rounded); a missing size is the complement of the other.

    Keras returns `tf.data` or torch datasets; minikeras returns numpy
    arrays in the structure it was given, ready for `fit`. Keras also
    accepts only Python ints and floats for the sizes; numpy numbers work here.

    Args:
        dataset: an array, or a tuple, list or dict of arrays with one
            number of samples (such as `(x, y)`).
        left_size: int count or float fraction of the left part, or None.
        right_size: int count or float fraction of the right part, or None.
        shuffle: whether to shuffle the samples (the same way in every array)
            before splitting.
        seed: int seed for the shuffle; None draws from the global generator,
            so `minikeras.utils.set_random_seed` makes the split reproducible
            (as in Keras).
        preferred_backend: Keras's choice of returned datasets
            (`"tensorflow"`, `"torch"` or None); taken for Keras code, the
            parts are numpy arrays whatever it says.

    Returns:
        A tuple `(left, right)`, each structured like `dataset`.

    Raises:
        TypeError: if a size is not an int, float or None.
        ValueError: if both sizes are None, a size is out of range, the sizes
            add up to more than the samples or leave a part empty, or the
            arrays have different numbers of samples.

    Example:
        >>> x, y = np.arange(10).reshape(5, 2), np.arange(5)
        >>> (x_train, y_train), (x_test, y_test) = mk.utils.split_dataset((x, y), left_size=0.8)
        >>> x_train.shape, y_test
        ((4, 2), array([4]))
    """
    if left_size is None and right_size is None:
        raise ValueError("split_dataset: give left_size or right_size (or both); got None for both")
    arrays, rebuild = _arrays(dataset)
    if any(array.ndim == 0 for array in arrays):
        raise ValueError("split_dataset: dataset must hold arrays with a sample axis, got a scalar")
    total = len(arrays[0])
    lengths = [len(array) for array in arrays]
    if any(length != total for length in lengths):
        raise ValueError(
            f"split_dataset: the arrays must have the same number of samples; got {lengths}"
        )
    if (
        isinstance(left_size, float)
        and isinstance(right_size, float)
        and left_size + right_size > 1
    ):
        raise ValueError(
            f"split_dataset: left_size + right_size must be at most 1, got {left_size + right_size}"
        )
    left = _check_size("left_size", left_size, total)
    right = _check_size("right_size", right_size, total)
    left = total - right if left is None else left
    right = total - left if right is None else right
    if left + right > total:
        raise ValueError(
            f"split_dataset: left_size + right_size is {left + right} samples, more than "
            f"the {total} in the dataset"
        )
    if not left or not right:
        side = "left" if not left else "right"
        raise ValueError(
            f"split_dataset: with {total} samples, left_size={left_size} and "
            f"right_size={right_size} leave the {side} part empty"
        )
    order = np.arange(total)
    if shuffle:
        order = rng_for(seed, "split_dataset").permutation(total)
    left_order, right_order = order[:left], order[total - right :]
    return (
        rebuild([array[left_order] for array in arrays]),
        rebuild([array[right_order] for array in arrays]),
    )
