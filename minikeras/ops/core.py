"""What every op shares: reading arguments, the float32 promotion rule, errors.

The promotion rule: numpy's, except that Python numbers, numpy scalars and
integer or boolean arrays never widen a floating computation. An integer array
meeting a float32 array is cast to float32 (numpy would make float64).
"""

import numpy as np
from autograd.tracer import getval

from minikeras.engine.tensor import Tensor, value_of, wrap

__all__ = [
    "Tensor", "value_of", "wrap", "promote", "shape_of", "op_error", "as_float", "broadcastable",
]  # fmt: skip


def shape_of(x):
    """The shape of a Tensor, array, box or Python number, as a tuple.

    Args:
        x: any array-like.

    Returns:
        A tuple of ints.

    Example:
        >>> shape_of([[1, 2, 3]])
        (1, 3)
    """
    if isinstance(x, Tensor):
        return x.shape
    return np.shape(getval(x))


def promote(x, y):
    """Casts integer/bool operands to the other operand's float dtype.

    An integer array meeting a Python float becomes floatx (numpy would make
    float64 of it).

    Args:
        x: a value (array, box or Python number).
        y: a value.

    Returns:
        The pair `(x, y)`, one of them possibly cast.

    Example:
        >>> a, b = promote(np.ones(2, "float32"), np.arange(2))
        >>> b.dtype
        dtype('float32')
        >>> promote(np.arange(2), 0.5)[0].dtype
        dtype('float32')
    """
    x_dtype = getattr(x, "dtype", None)
    y_dtype = getattr(y, "dtype", None)
    if x_dtype is None and isinstance(x, (float, complex)):
        return x, as_float(y)
    if y_dtype is None and isinstance(y, (float, complex)):
        return as_float(x), y
    if x_dtype is None or y_dtype is None or x_dtype == y_dtype:
        return x, y
    if x_dtype.kind in "fc" and y_dtype.kind in "iub":
        return x, getval(y).astype(x_dtype)
    if y_dtype.kind in "fc" and x_dtype.kind in "iub":
        return getval(x).astype(y_dtype), y
    return x, y


def as_float(x):
    """Casts an integer or boolean value to the default float type.

    Args:
        x: a value (array or box).

    Returns:
        `x` itself if it is floating, else a float32 copy.

    Example:
        >>> as_float(np.arange(2)).dtype
        dtype('float32')
    """
    from minikeras import config

    dtype = getattr(x, "dtype", None)
    if dtype is None or dtype.kind in "fc":
        return x
    return getval(x).astype(config.floatx())


def op_error(op, problem, *operands):
    """Builds the ValueError an op raises: op name, problem and operand shapes.

    Args:
        op: the op's name.
        problem: what went wrong, in a few words.
        *operands: the operands whose shapes to show.

    Returns:
        A `ValueError` to raise (`raise op_error(...) from None`).

    Example:
        >>> a, b = np.ones((32, 784)), np.ones((100, 10))
        >>> str(op_error("matmul", "inner dimensions differ", a, b))
        'matmul: inner dimensions differ; got shapes (32, 784) and (100, 10)'
    """
    shapes = " and ".join(str(shape_of(x)) for x in operands)
    return ValueError(f"{op}: {problem}; got shape{'s' if len(operands) > 1 else ''} {shapes}")


def apply_binary(op, fn, x1, x2):
    """Runs a broadcasting binary function on two operands with our rules.

    Args:
        op: the op's name, for errors.
        fn: an autograd-aware numpy function of two arrays.
        x1: the first operand (Tensor or array-like).
        x2: the second operand.

    Returns:
        A Tensor.

    Raises:
        ValueError: if the shapes do not broadcast.

    Example:
        >>> apply_binary("add", np.add, [1.0], [2.0]).numpy()
        array([3.], dtype=float32)
    """
    a, b = promote(value_of(x1), value_of(x2))
    try:
        return wrap(fn(a, b))
    except ValueError as error:
        problem = "shapes cannot be broadcast together" if not broadcastable(a, b) else error
        raise op_error(op, problem, a, b) from None


def broadcastable(*values):
    """Whether the shapes of `values` broadcast together.

    Args:
        *values: arrays, boxes or Python numbers.

    Returns:
        A bool.

    Example:
        >>> broadcastable(np.ones((3, 1)), np.ones(4)), broadcastable(np.ones(3), np.ones(4))
        (True, False)
    """
    try:
        np.broadcast_shapes(*(shape_of(value) for value in values))
    except ValueError:
        return False
    return True


def apply_unary(op, fn, x, *args, **kwargs):
    """Runs a function of one array, turning numpy's errors into ours.

    Args:
        op: the op's name, for errors.
        fn: an autograd-aware numpy function.
        x: the operand.
        *args: further positional arguments for `fn`.
        **kwargs: keyword arguments for `fn`.

    Returns:
        A Tensor.

    Raises:
        ValueError: if `fn` rejects the arguments (a bad axis, for example).

    Example:
        >>> apply_unary("sum", np.sum, [[1, 2]], axis=1).numpy()
        array([3])
    """
    value = value_of(x)
    try:
        return wrap(fn(value, *args, **kwargs))
    except (ValueError, IndexError) as error:
        detail = ", ".join(f"{k}={v!r}" for k, v in kwargs.items())
        raise op_error(op, f"invalid arguments ({detail or args}): {error}", value) from None
