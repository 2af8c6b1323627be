"""Array helpers as `keras.utils` has them: `to_categorical` and `normalize`."""

import numpy as np

from minikeras import config, ops
from minikeras.argument_checks import check_int
from minikeras.engine.tensor import Tensor

__all__ = ["normalize", "to_categorical"]


def to_categorical(x, num_classes=None):
    """One-hot encodes integer class labels: the class axis is added last.

    A trailing axis of size 1 is dropped first, so labels of shape (n, 1)
    give (n, num_classes), as in Keras. The result is floatx (float32);
    Keras returns float64 for numpy input. Keras wraps a label of -1 round
    to the last class and reads `num_classes=0` as None; both are errors here.

    Args:
        x: array-like of integer labels in `[0, num_classes)` (floats are
            truncated to ints, as in Keras).
        num_classes: the number of classes, an int >= 1; None means `max(x) + 1`.

    Returns:
        An array of shape `x.shape + (num_classes,)` (without the trailing
        1) of zeros and ones: a Tensor if `x` is a Tensor (as Keras returns
        a tensor for a tensor), a numpy array otherwise.

    Raises:
        TypeError: if `num_classes` is not an int or None.
        ValueError: if `num_classes` < 1, a label lies outside
            `[0, num_classes)`, or `x` is empty and `num_classes` is None.

    Example:
        >>> mk.utils.to_categorical([0, 2, 1], num_classes=3)
        array([[1., 0., 0.],
               [0., 0., 1.],
               [0., 1., 0.]], dtype=float32)
        >>> mk.utils.to_categorical([[1], [0]]).shape
        (2, 2)
    """
    check_int("to_categorical", "num_classes", num_classes, 1, allow_none=True)
    labels = np.array(x.numpy() if isinstance(x, Tensor) else x, dtype="int64")
    shape = labels.shape
    if len(shape) > 1 and shape[-1] == 1:
        shape = shape[:-1]
    labels = labels.reshape(-1)
    if num_classes is None:
        if not labels.size:
            raise ValueError("to_categorical: x is empty; pass num_classes")
        num_classes = int(labels.max()) + 1
    num_classes = int(num_classes)
    outside = (labels < 0) | (labels >= num_classes)
    if np.any(outside):
        raise ValueError(
            f"to_categorical: labels must lie in [0, {num_classes}) for num_classes="
            f"{num_classes}; got {labels[outside][:5].tolist()}"
        )
    categorical = np.zeros((labels.size, num_classes), dtype=config.floatx())
    categorical[np.arange(labels.size), labels] = 1
    categorical = categorical.reshape(shape + (num_classes,))
    return Tensor(categorical) if isinstance(x, Tensor) else categorical


def normalize(x, axis=-1, order=2):
    """Divides `x` by its `order`-norm along `axis`; zero vectors stay zero.

    A numpy array (or a list) is normalized in numpy: `x / norm`, with a norm
    of 0 replaced by 1. The result has `x`'s shape (Keras returns shape
    (1, n) for a 1-D array). A minikeras Tensor is normalized with `minikeras.ops`
    (so tapes differentiate it), the norm floored at `epsilon` as in
    `keras.ops.normalize`.

    Args:
        x: numpy array, array-like or Tensor.
        axis: the axis to normalize along.
        order: the norm's order (2 for Euclidean); for a Tensor, an int >= 1.

    Returns:
        A normalized copy, a numpy array or a Tensor like `x`.

    Raises:
        ValueError: if `order` is not an int >= 1 for a Tensor.

    Example:
        >>> mk.utils.normalize(np.array([[3.0, 4.0], [0.0, 0.0]]))
        array([[0.6, 0.8],
               [0. , 0. ]])
        >>> mk.utils.normalize(np.array([[1.0, 3.0]]), order=1)
        array([[0.25, 0.75]])
    """
    if isinstance(x, Tensor):
        return _normalize_tensor(x, axis, order)
    x = np.asarray(x)
    norm = np.array(np.linalg.norm(x, order, axis, keepdims=True))
    norm[norm == 0] = 1
    return x / norm


def _normalize_tensor(x, axis, order):
    # One implementation: ops.normalize (x / max(norm, epsilon), as Keras's utils.normalize).
    if isinstance(order, bool) or not isinstance(order, int) or order < 1:
        raise ValueError(f"normalize: order must be an int >= 1 for a Tensor, got {order!r}")
    return ops.normalize(x, axis=axis, order=order)
