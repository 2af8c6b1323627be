"""Labels that are all 0 or 1 as the -1/1 the hinge losses take, decided inside one op.

`hinge` and `squared_hinge` take labels -1 or 1; labels that are all 0 or 1
become `2 * y - 1` first, as in Keras. Which case holds depends on the
labels' values. Found in Python, it would be fixed in a step `fit` compiles
(`trainers.compiled_step`) by the batch it was recorded on; found inside
this primitive, each replay answers for its own batch's labels.
"""

import numpy as np
from autograd.extend import defvjp, primitive
from autograd.tracer import getval

from minikeras.engine.primitive import call_primitive
from minikeras.ops.core import value_of, wrap

__all__ = ["signed_binary_labels"]


def _all_binary(labels):
    return bool(np.all((labels == 0) | (labels == 1)))


@primitive
def _signed(labels):
    if _all_binary(labels):
        return 2.0 * labels - 1.0  # (a Python float: float32 labels stay float32)
    return np.array(labels, copy=True)  # (a new array, as the other case gives)


defvjp(_signed, lambda ans, labels: lambda g: g * 2.0 if _all_binary(getval(labels)) else g)


def signed_binary_labels(labels):
    """`2 * labels - 1` if every label is 0 or 1, else the labels unchanged.

    Args:
        labels: floating Tensor or array of labels.

    Returns:
        A Tensor of the labels' shape and dtype: -1/1 labels where the input
        was all 0/1, a copy of the input otherwise.

    Example:
        >>> from minikeras.ops.hinge_labels import signed_binary_labels
        >>> signed_binary_labels(np.array([0.0, 1.0, 1.0], np.float32)).numpy()
        array([-1.,  1.,  1.], dtype=float32)
        >>> signed_binary_labels(np.array([-1.0, 1.0, 0.0], np.float32)).numpy()
        array([-1.,  1.,  0.], dtype=float32)
    """
    return wrap(call_primitive(_signed, value_of(labels)))
