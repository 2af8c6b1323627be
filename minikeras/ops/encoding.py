"""Multi-hot encoding: `multi_hot`, the many-labels sibling of `one_hot`."""

import numpy as np

from minikeras import config
from minikeras.ops.core import getval, normalize_axis, op_error, value_of, wrap

__all__ = ["multi_hot"]


def multi_hot(inputs, num_classes=None, axis=-1, dtype=None, sparse=False, **kwargs):
    """Encodes lists of integer labels as multi-hot vectors: 1 for each label present.

    As Keras does it: `one_hot(inputs, num_classes, axis)`, then the largest
    value over axis 1 (axis 0 for a vector of labels), so a batch `(B, L)` of
    label lists gives `(B, num_classes)`. Labels outside `[0, num_classes)`
    (a padding -1, say) set nothing, as in Keras (`mk.ops.one_hot` refuses
    them). Not differentiable.

    Args:
        inputs: integer Tensor or array-like of labels.
        num_classes: the number of classes (Keras's older name `num_tokens`
            is taken too).
        axis: where `one_hot` puts the class axis.
        dtype: the result's dtype, floatx if None.
        sparse: must be False (minikeras has no sparse tensors).

    Returns:
        A Tensor of 0s and 1s.

    Raises:
        ValueError: if `num_classes` is missing, `sparse` is True, `axis`
            is out of range, or the labels are not integers.
        TypeError: for a keyword argument other than `num_tokens`.

    Example:
        >>> mk.ops.multi_hot([[0, 2], [1, 1]], num_classes=4).numpy()
        array([[1., 0., 1., 0.],
               [0., 1., 0., 0.]], dtype=float32)
    """
    if num_classes is None:
        num_classes = kwargs.pop("num_tokens", None)
    if kwargs:
        raise TypeError(f"multi_hot: unexpected keyword arguments {sorted(kwargs)}")
    if num_classes is None:
        raise ValueError("multi_hot: num_classes must be given")
    if sparse:
        raise ValueError("multi_hot: sparse=True is not supported (no sparse tensors)")
    labels = np.asarray(getval(value_of(inputs)))
    if labels.dtype.kind not in "iub":
        if labels.size and not np.all(np.mod(labels, 1) == 0):
            raise op_error(
                "multi_hot", f"labels must be integers, got dtype {labels.dtype}", labels
            )
        labels = labels.astype(np.int64)
    axis = normalize_axis("multi_hot", axis, labels.ndim + 1, labels)
    hot = labels[..., None] == np.arange(int(num_classes))
    hot = np.moveaxis(hot, -1, axis)
    dtype = config.standardize_dtype(dtype) if dtype is not None else config.floatx()
    return wrap(np.any(hot, axis=1 if labels.ndim > 1 else 0).astype(dtype))
