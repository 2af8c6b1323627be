"""`pack_x_y_sample_weight` / `unpack_x_y_sample_weight`: the batch tuples `fit` reads.

A batch is `x`, `(x,)`, `(x, y)` or `(x, y, sample_weight)`; a custom
`train_step` unpacks whichever it is given with `unpack_x_y_sample_weight`,
and a `PyDataset` or generator builds one with `pack_x_y_sample_weight`.
"""

__all__ = ["pack_x_y_sample_weight", "unpack_x_y_sample_weight"]


def unpack_x_y_sample_weight(data):
    """Splits a batch into `(x, y, sample_weight)`, with None for the parts it lacks.

    Args:
        data: `x` (anything that is not a tuple or list, such as an array or
            a dict of inputs), or a tuple or list `(x,)`, `(x, y)` or
            `(x, y, sample_weight)`.

    Returns:
        A tuple `(x, y, sample_weight)`.

    Raises:
        ValueError: for a tuple or list of more than 3 items (or none).

    Example:
        >>> x, y = np.ones((4, 2)), np.zeros((4, 1))
        >>> _, labels, weights = mk.utils.unpack_x_y_sample_weight((x, y))
        >>> labels.shape, weights
        ((4, 1), None)
    """
    if isinstance(data, list):
        data = tuple(data)
    if not isinstance(data, tuple):
        return (data, None, None)
    if not 1 <= len(data) <= 3:
        raise ValueError(
            "unpack_x_y_sample_weight: expected x, (x,), (x, y) or (x, y, sample_weight), "
            f"got a tuple of {len(data)} items"
        )
    return data + (None,) * (3 - len(data))


def pack_x_y_sample_weight(x, y=None, sample_weight=None):
    """Packs `x`, `y` and `sample_weight` into the tuple `fit` reads, leaving out the Nones.

    With `y` None the result is `x` itself, or `(x,)` if `x` is a tuple or
    list (so a list of several inputs is not read as `(x, y)`), as in Keras.

    Args:
        x: the inputs.
        y: the targets, or None.
        sample_weight: the weights of the samples, or None (left out when
            `y` is None, as Keras does).

    Returns:
        `x`, `(x,)`, `(x, y)` or `(x, y, sample_weight)`.

    Example:
        >>> x, y = np.ones((4, 2)), np.zeros((4, 1))
        >>> len(mk.utils.pack_x_y_sample_weight(x, y))
        2
        >>> mk.utils.pack_x_y_sample_weight([x, x])[0][1].shape
        (4, 2)
    """
    if y is None:
        return (x,) if isinstance(x, (tuple, list)) else x
    if sample_weight is None:
        return (x, y)
    return (x, y, sample_weight)
