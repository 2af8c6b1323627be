"""Integer functions, element-wise: the bitwise family (and, or, xor, not, shifts), gcd and lcm.

As in Keras, they take integers and booleans only (a float operand is a
`TypeError`), broadcast as numpy does, keep numpy's integer result dtypes (a
Python int adapts to the other operand), and have no gradient. Booleans
meeting a Python int, and shifted booleans, give int32, as in Keras.
`bitwise_invert`, `left_shift` and `right_shift` are Keras's other names,
each recording its own Keras node.
"""

import numpy as np

from minikeras.engine.tensor import getval
from minikeras.ops.core import op_error, value_of, wrap

__all__ = [
    "booleans_as_int32",
    "bitwise_and",
    "bitwise_invert",
    "bitwise_left_shift",
    "bitwise_not",
    "bitwise_or",
    "bitwise_right_shift",
    "bitwise_xor",
    "gcd",
    "lcm",
    "left_shift",
    "right_shift",
]


def _integers(op, operand, name, booleans=True):
    """The operand's value, untraced, refused unless integers (or booleans, if allowed)."""
    value = getval(value_of(operand))
    if type(value) is int or (booleans and type(value) is bool):
        return value  # (a Python int adapts to the other operand's dtype)
    value = np.asarray(value)
    kinds = "iub" if booleans else "iu"
    if value.dtype.kind not in kinds:
        allowed = "integers or booleans" if booleans else "integers"
        raise TypeError(f"{op}: {name} must be {allowed}, got {value.dtype}")
    return value


def _apply(op, function, x, y, booleans=True, shift=False):
    a, b = _integers(op, x, "x", booleans), _integers(op, y, "y", booleans)
    a, b = booleans_as_int32(a, b, with_booleans=shift)
    try:
        return wrap(np.asarray(function(a, b)))
    except ValueError:
        raise op_error(op, "shapes cannot be broadcast together", a, b) from None


def booleans_as_int32(a, b, with_booleans=False):
    """Booleans meeting a Python int (or booleans, if `with_booleans`) as int32, as in Keras.

    numpy would make int64 of booleans and a Python int, and int8 of two
    booleans in arithmetic; Keras gives int32 (its Python ints are int32).

    Args:
        a: a value (array, numpy or Python scalar).
        b: a value.
        with_booleans: whether booleans meeting booleans become int32 too.

    Returns:
        The pair `(a, b)`, booleans among them possibly cast.

    Example:
        >>> a, b = mk.ops.bitwise.booleans_as_int32(np.array([True]), 2)
        >>> a.dtype, b
        (dtype('int32'), 2)
    """

    def adapted(value, other):
        if _is_bool(value) and (type(other) is int or (with_booleans and _is_bool(other))):
            return np.asarray(value, np.int32)
        return value

    return adapted(a, b), adapted(b, a)


def _is_bool(value):
    return type(value) is bool or getattr(value, "dtype", None) == np.bool_


def bitwise_and(x, y):
    """Element-wise bitwise AND of integers (logical AND of booleans).

    Args:
        x: integer or boolean Tensor or array-like.
        y: integer or boolean Tensor or array-like, broadcastable with `x`.

    Returns:
        A Tensor.

    Raises:
        TypeError: if an operand is not of an integer or boolean dtype.
        ValueError: if the shapes do not broadcast.

    Example:
        >>> mk.ops.bitwise_and(np.array([12, 10], "int32"), 6).numpy()
        array([4, 2], dtype=int32)
    """
    return _apply("bitwise_and", np.bitwise_and, x, y)


def bitwise_or(x, y):
    """Element-wise bitwise OR of integers (logical OR of booleans).

    Args:
        x: integer or boolean Tensor or array-like.
        y: integer or boolean Tensor or array-like, broadcastable with `x`.

    Returns:
        A Tensor.

    Raises:
        TypeError: if an operand is not of an integer or boolean dtype.
        ValueError: if the shapes do not broadcast.

    Example:
        >>> mk.ops.bitwise_or(np.array([12, 10], "int32"), 6).numpy()
        array([14, 14], dtype=int32)
    """
    return _apply("bitwise_or", np.bitwise_or, x, y)


def bitwise_xor(x, y):
    """Element-wise bitwise exclusive OR of integers (logical XOR of booleans).

    Args:
        x: integer or boolean Tensor or array-like.
        y: integer or boolean Tensor or array-like, broadcastable with `x`.

    Returns:
        A Tensor.

    Raises:
        TypeError: if an operand is not of an integer or boolean dtype.
        ValueError: if the shapes do not broadcast.

    Example:
        >>> mk.ops.bitwise_xor(np.array([12, 10], "int32"), 6).numpy()
        array([10, 12], dtype=int32)
    """
    return _apply("bitwise_xor", np.bitwise_xor, x, y)


def _invert(op, x):
    return wrap(np.asarray(np.invert(_integers(op, x, "x"))))


def bitwise_not(x):
    """Element-wise bitwise NOT: `-x - 1` for signed integers, logical NOT of booleans.

    Args:
        x: integer or boolean Tensor or array-like.

    Returns:
        A Tensor.

    Raises:
        TypeError: if `x` is not of an integer or boolean dtype.

    Example:
        >>> mk.ops.bitwise_not(np.array([0, 5], "int8")).numpy()
        array([-1, -6], dtype=int8)
    """
    return _invert("bitwise_not", x)


def bitwise_invert(x):
    """Element-wise bitwise NOT: Keras's other name of `bitwise_not`.

    Args:
        x: integer or boolean Tensor or array-like.

    Returns:
        A Tensor.

    Raises:
        TypeError: if `x` is not of an integer or boolean dtype.

    Example:
        >>> mk.ops.bitwise_invert(np.array([True, False])).numpy()
        array([False,  True])
    """
    return _invert("bitwise_invert", x)


def bitwise_left_shift(x, y):
    """Element-wise `x << y`: the bits of `x` shifted left by `y` places.

    Booleans are shifted as int32.

    Args:
        x: integer or boolean Tensor or array-like.
        y: integer or boolean Tensor or array-like, the shifts, broadcastable with `x`.

    Returns:
        A Tensor.

    Raises:
        TypeError: if an operand is not of an integer or boolean dtype.
        ValueError: if the shapes do not broadcast.

    Example:
        >>> mk.ops.bitwise_left_shift(np.array([1, 3], "int32"), 2).numpy()
        array([ 4, 12], dtype=int32)
    """
    return _apply("bitwise_left_shift", np.left_shift, x, y, shift=True)


def left_shift(x, y):
    """Element-wise `x << y`: Keras's other name of `bitwise_left_shift`.

    Args:
        x: integer or boolean Tensor or array-like.
        y: integer or boolean Tensor or array-like, the shifts, broadcastable with `x`.

    Returns:
        A Tensor.

    Raises:
        TypeError: if an operand is not of an integer or boolean dtype.
        ValueError: if the shapes do not broadcast.

    Example:
        >>> mk.ops.left_shift(np.array([True]), np.array([True])).numpy()
        array([2], dtype=int32)
    """
    return _apply("left_shift", np.left_shift, x, y, shift=True)


def bitwise_right_shift(x, y):
    """Element-wise `x >> y`: the bits of `x` shifted right by `y` places (sign kept).

    Booleans are shifted as int32.

    Args:
        x: integer or boolean Tensor or array-like.
        y: integer or boolean Tensor or array-like, the shifts, broadcastable with `x`.

    Returns:
        A Tensor.

    Raises:
        TypeError: if an operand is not of an integer or boolean dtype.
        ValueError: if the shapes do not broadcast.

    Example:
        >>> mk.ops.bitwise_right_shift(np.array([16, -16], "int32"), 2).numpy()
        array([ 4, -4], dtype=int32)
    """
    return _apply("bitwise_right_shift", np.right_shift, x, y, shift=True)


def right_shift(x, y):
    """Element-wise `x >> y`: Keras's other name of `bitwise_right_shift`.

    Args:
        x: integer or boolean Tensor or array-like.
        y: integer or boolean Tensor or array-like, the shifts, broadcastable with `x`.

    Returns:
        A Tensor.

    Raises:
        TypeError: if an operand is not of an integer or boolean dtype.
        ValueError: if the shapes do not broadcast.

    Example:
        >>> mk.ops.right_shift(np.array([7], "int8"), 1).numpy()
        array([3], dtype=int8)
    """
    return _apply("right_shift", np.right_shift, x, y, shift=True)


def _no_two_booleans(op, x1, x2):
    a, b = _integers(op, x1, "x1"), _integers(op, x2, "x2")
    if np.result_type(a, b) == np.bool_:
        raise TypeError(f"{op}: x1 and x2 must not both be booleans (give integers)")
    return a, b


def gcd(x1, x2):
    """Element-wise greatest common divisor of integers (non-negative; `gcd(0, 0)` is 0).

    A boolean operand counts as 0 or 1 when the other is an integer.

    Args:
        x1: integer Tensor or array-like.
        x2: integer Tensor or array-like, broadcastable with `x1`.

    Returns:
        A Tensor.

    Raises:
        TypeError: if an operand is a float, or both are booleans.
        ValueError: if the shapes do not broadcast.

    Example:
        >>> mk.ops.gcd(np.array([12, -18, 0], "int32"), 8).numpy()
        array([4, 2, 8], dtype=int32)
    """
    return _apply("gcd", np.gcd, *_no_two_booleans("gcd", x1, x2))


def lcm(x1, x2):
    """Element-wise least common multiple of integers (non-negative; 0 if either is 0).

    A boolean operand counts as 0 or 1 when the other is an integer.

    Args:
        x1: integer Tensor or array-like.
        x2: integer Tensor or array-like, broadcastable with `x1`.

    Returns:
        A Tensor.

    Raises:
        TypeError: if an operand is a float, or both are booleans.
        ValueError: if the shapes do not broadcast.

    Example:
        >>> mk.ops.lcm(np.array([4, -6, 0], "int32"), 6).numpy()
        array([12,  6,  0], dtype=int32)
    """
    return _apply("lcm", np.lcm, *_no_two_booleans("lcm", x1, x2))
