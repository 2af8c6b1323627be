"""The lowercase functional forms of the merge layers: `concatenate([a, b])` and the rest.

Keras code often writes `layers.concatenate([x, y])`: each helper makes the
layer (keyword arguments such as `name` go to it) and calls it on `inputs`,
eager arrays or symbolic tensors alike.
"""

from minikeras.layers.dot import Dot
from minikeras.layers.merging import Add, Average, Concatenate, Maximum, Minimum, Multiply, Subtract

__all__ = ["add", "average", "concatenate", "dot", "maximum", "minimum", "multiply", "subtract"]


def add(inputs, **kwargs):
    """The element-wise sum of `inputs`: `Add(**kwargs)(inputs)`.

    Args:
        inputs: a list of tensors of one shape (or broadcastable).
        **kwargs: arguments of the `Add` layer (`name`, ...).

    Returns:
        A tensor (symbolic if the inputs are).

    Example:
        >>> mk.layers.add([np.ones((1, 2)), np.ones((1, 2))]).numpy()
        array([[2., 2.]], dtype=float32)
    """
    return Add(**kwargs)(inputs)


def subtract(inputs, **kwargs):
    """The difference of two inputs: `Subtract(**kwargs)(inputs)`.

    Args:
        inputs: a list of exactly two tensors.
        **kwargs: arguments of the `Subtract` layer.

    Returns:
        `inputs[0] - inputs[1]`, as a tensor.

    Example:
        >>> mk.layers.subtract([np.full((1, 2), 3.0), np.ones((1, 2))]).numpy()
        array([[2., 2.]], dtype=float32)
    """
    return Subtract(**kwargs)(inputs)


def multiply(inputs, **kwargs):
    """The element-wise product of `inputs`: `Multiply(**kwargs)(inputs)`.

    Args:
        inputs: a list of tensors.
        **kwargs: arguments of the `Multiply` layer.

    Returns:
        A tensor.

    Example:
        >>> mk.layers.multiply([np.full((1, 2), 3.0), np.full((1, 2), 2.0)]).numpy()
        array([[6., 6.]], dtype=float32)
    """
    return Multiply(**kwargs)(inputs)


def average(inputs, **kwargs):
    """The element-wise mean of `inputs`: `Average(**kwargs)(inputs)`.

    Args:
        inputs: a list of tensors.
        **kwargs: arguments of the `Average` layer.

    Returns:
        A tensor.

    Example:
        >>> mk.layers.average([np.zeros((1, 2)), np.full((1, 2), 4.0)]).numpy()
        array([[2., 2.]], dtype=float32)
    """
    return Average(**kwargs)(inputs)


def maximum(inputs, **kwargs):
    """The element-wise maximum of `inputs`: `Maximum(**kwargs)(inputs)`.

    Args:
        inputs: a list of tensors.
        **kwargs: arguments of the `Maximum` layer.

    Returns:
        A tensor.

    Example:
        >>> mk.layers.maximum([np.array([[1.0, 5.0]]), np.array([[3.0, 2.0]])]).numpy()
        array([[3., 5.]], dtype=float32)
    """
    return Maximum(**kwargs)(inputs)


def minimum(inputs, **kwargs):
    """The element-wise minimum of `inputs`: `Minimum(**kwargs)(inputs)`.

    Args:
        inputs: a list of tensors.
        **kwargs: arguments of the `Minimum` layer.

    Returns:
        A tensor.

    Example:
        >>> mk.layers.minimum([np.array([[1.0, 5.0]]), np.array([[3.0, 2.0]])]).numpy()
        array([[1., 2.]], dtype=float32)
    """
    return Minimum(**kwargs)(inputs)


def concatenate(inputs, axis=-1, **kwargs):
    """Joins `inputs` along `axis`: `Concatenate(axis=axis, **kwargs)(inputs)`.

    Args:
        inputs: a list of tensors whose other axes match.
        axis: the axis to join along.
        **kwargs: arguments of the `Concatenate` layer.

    Returns:
        A tensor.

    Example:
        >>> a, b = mk.Input((3,)), mk.Input((4,))
        >>> mk.layers.concatenate([a, b]).shape
        (None, 7)
    """
    return Concatenate(axis=axis, **kwargs)(inputs)


def dot(inputs, axes=-1, **kwargs):
    """The sample-wise dot product of two inputs: `Dot(axes=axes, **kwargs)(inputs)`.

    Args:
        inputs: a list of two tensors.
        axes: the contracted axis of each (an int or a pair).
        **kwargs: arguments of the `Dot` layer (`normalize`, `name`, ...).

    Returns:
        A tensor (see `Dot`).

    Example:
        >>> mk.layers.dot([np.array([[1.0, 2.0]]), np.array([[3.0, 4.0]])], axes=1).numpy()
        array([[11.]], dtype=float32)
    """
    return Dot(axes=axes, **kwargs)(inputs)
