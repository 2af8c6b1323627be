"""What every op shares: reading arguments, the float32 promotion rule, errors.

The promotion rule: numpy's, except that Python numbers, numpy scalars and
integer or boolean arrays never widen a floating computation. An integer array
meeting a float32 array is cast to float32 (numpy would make float64), and one
meeting a Python float becomes floatx. A lone Python float becomes floatx too.
"""

import numpy as np

from minikeras import config
from minikeras.engine.primitive import call_primitive
from minikeras.engine.tensor import (
    TRACED_TYPES,
    Tensor,
    dtype_of,
    getval,  # autograd's, through the engine
    value_of,
    wrap,
)
from minikeras.ops.operands import narrowed

__all__ = [
    "Tensor", "value_of", "wrap", "promote", "shape_of", "dtype_of", "op_error", "array_of",
    "as_float", "broadcastable", "normalize_axis", "same_float", "same_float_operands",
    "plain_kind", "promote_operands",
]  # fmt: skip


def shape_of(x):
    """The shape of a Tensor, array, box or Python number, as a tuple.

    Args:
        x: any array-like.

    Returns:
        A tuple of ints.

    Example:
        >>> mk.ops.core.shape_of([[1, 2, 3]])
        (1, 3)
    """
    if isinstance(x, Tensor):
        return x.shape
    value = getval(x)
    return value.shape if type(value) is np.ndarray else np.shape(value)


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
        >>> a, b = mk.ops.core.promote(np.ones(2, "float32"), np.arange(2))
        >>> b.dtype
        dtype('float32')
        >>> mk.ops.core.promote(np.arange(2), 0.5)[0].dtype
        dtype('float32')
    """
    x_dtype, y_dtype = dtype_of(x), dtype_of(y)
    if x_dtype is not None and x_dtype == y_dtype:
        return x, y
    if x_dtype is None and y_dtype is None:
        # Two Python numbers: nothing to adapt to, so they take the defaults.
        x, y = array_of(x), array_of(y)
        x_dtype, y_dtype = x.dtype, y.dtype
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


def promote_operands(x1, x2):
    """The values of two operands, adapted to each other as binary ops adapt them.

    `promote` of their values, after a numpy float64 array beside a Tensor
    took the Tensor's precision (`ops.operands`). Operands of one dtype
    return at once, as from `promote`.

    Args:
        x1: the first operand (Tensor, array, Python number or nested list).
        x2: the second operand.

    Returns:
        The pair of values.

    Example:
        >>> a, b = mk.ops.core.promote_operands(mk.ops.ones(2), np.ones(2))
        >>> a.dtype, b.dtype
        (dtype('float32'), dtype('float32'))
    """
    a, b = value_of(x1), value_of(x2)
    a_dtype = dtype_of(a)
    if a_dtype is not None and a_dtype == dtype_of(b):
        return a, b
    return promote(*narrowed(x1, x2, a, b))


def array_of(x):
    """The value behind `x`, with a Python number made an array.

    Ops of one operand use it: a Python number has no other operand to take
    its dtype from, so a float becomes floatx, as `Tensor(2.0)` does.

    Args:
        x: a Tensor, array, box, Python number or nested list.

    Returns:
        A numpy array, numpy scalar or autograd box.

    Example:
        >>> mk.ops.core.array_of(2.0).dtype, mk.ops.core.array_of(2).dtype
        (dtype('float32'), dtype('int64'))
    """
    value = value_of(x)
    if isinstance(value, (bool, int, float, complex)):
        return np.asarray(value, dtype=config.floatx() if isinstance(value, float) else None)
    return value


def as_float(x):
    """Casts an integer or boolean value (or a Python number) to floatx.

    Args:
        x: a value (array, box or Python number).

    Returns:
        `x` itself if it is a floating array, else a floatx copy.

    Example:
        >>> mk.ops.core.as_float(np.arange(2)).dtype
        dtype('float32')
        >>> mk.ops.core.as_float(0.5).dtype
        dtype('float32')
    """
    dtype = dtype_of(x)
    if dtype is not None and dtype.kind in "fc":
        return x
    if dtype is None and not isinstance(x, (bool, int, float)):
        return x
    return np.asarray(getval(x), dtype=config.floatx())


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
        >>> str(mk.ops.core.op_error("matmul", "inner dimensions differ", a, b))
        'matmul: inner dimensions differ; got shapes (32, 784) and (100, 10)'
    """
    shapes = " and ".join(str(shape_of(x)) for x in operands)
    return ValueError(f"{op}: {problem}; got shape{'s' if len(operands) > 1 else ''} {shapes}")


def apply_binary(op, fn, x1, x2):
    """Runs a broadcasting binary function on two operands with our rules.

    Args:
        op: the op's name, for errors.
        fn: an autograd primitive of two arrays (one of autograd's numpy
            functions, or one of ours with its VJP).
        x1: the first operand (Tensor or array-like).
        x2: the second operand.

    Returns:
        A Tensor.

    Raises:
        ValueError: if the shapes do not broadcast.

    Example:
        >>> mk.ops.core.apply_binary("add", mk.ops.math._add, [1.0], [2.0]).numpy()
        array([3.], dtype=float32)
    """
    a, b = value_of(x1), value_of(x2)
    if _plain_pair(a, b):
        # Outside a tape, with nothing to promote: what `call_primitive` would run.
        try:
            return wrap(fn.fun(a, b))
        except ValueError as error:
            problem = "shapes cannot be broadcast together" if not broadcastable(a, b) else error
            raise op_error(op, problem, a, b) from None
    # A numpy float64 array beside a Tensor (`ops.operands`): never a plain pair, whose
    # dtypes are one, so Tensors of one dtype pay nothing for the check.
    kind1, kind2 = type(x1), type(x2)
    if (kind1 is not Tensor or kind2 is not Tensor) and (
        kind1 is _NDARRAY or kind2 is _NDARRAY or kind1 in TRACED_TYPES or kind2 in TRACED_TYPES
    ):
        a, b = narrowed(x1, x2, a, b)
    a, b = promote(a, b)
    try:
        return wrap(call_primitive(fn, a, b))
    except ValueError as error:
        problem = "shapes cannot be broadcast together" if not broadcastable(a, b) else error
        raise op_error(op, problem, a, b) from None


_NDARRAY = np.ndarray


def _plain_pair(a, b):
    """Whether `promote` leaves `(a, b)` as they are and neither is taped.

    Two arrays (or numpy scalars) of one dtype, an array and a Python int, or
    a floating array and a Python float: the usual operands outside a tape.
    """
    kind_a, kind_b = type(a), type(b)
    if kind_a in _PLAIN:
        if kind_b in _PLAIN:
            return a.dtype == b.dtype
        if kind_b is int or (kind_b is float and a.dtype.kind in "fc"):
            return True
    elif kind_b in _PLAIN and (kind_a is int or (kind_a is float and b.dtype.kind in "fc")):
        return True
    if kind_a in TRACED_TYPES or kind_b in TRACED_TYPES:  # (ops dispatch on what they hold)
        return _plain_pair(
            a.value if kind_a in TRACED_TYPES else a, b.value if kind_b in TRACED_TYPES else b
        )
    return False


def plain_kind(value):
    """The type an op dispatches on: a traced value's is that of the array it holds.

    An optimizer tracing its rule (`optimizers/_traced_value.py`) hands ops values
    that stand for numpy arrays and scalars; the ops must take the path they
    take for those, so that the trace records what an eager run computes.

    Args:
        value: an op's operand, as `value_of` gives it.

    Returns:
        A type.

    Example:
        >>> mk.ops.core.plain_kind(np.float32(1.0))
        <class 'numpy.float32'>
    """
    kind = type(value)
    return type(value.value) if kind in TRACED_TYPES else kind


def same_float_operands(a, b):
    """Whether `a` and `b` are untraced floats of one dtype that `promote` would keep.

    Arrays or numpy scalars of one floating dtype, at least one an array or
    the dtype floatx: `divide` and `power` then compute directly what their
    general paths compute (those make a numpy scalar a Python float first).

    Args:
        a: a value (array, numpy scalar, box or Python number).
        b: a value.

    Returns:
        A bool.

    Example:
        >>> mk.ops.core.same_float_operands(np.ones(2, "float32"), np.float32(2.0))
        True
        >>> mk.ops.core.same_float_operands(np.ones(2, "float32"), 2.0)
        False
    """
    kind_a, kind_b = type(a), type(b)
    if kind_a in TRACED_TYPES or kind_b in TRACED_TYPES:
        kind_a, kind_b = plain_kind(a), plain_kind(b)
    if kind_a not in _PLAIN or kind_b not in _PLAIN or a.dtype != b.dtype or a.dtype.kind != "f":
        return False
    return kind_a is np.ndarray or kind_b is np.ndarray or a.dtype == config.floatx()


# Untraced values with a dtype: arrays, and the numpy scalars an op on 0-d arrays gives.
_PLAIN = frozenset(
    [np.ndarray, np.bool_, np.float16, np.float32, np.float64, np.complex64, np.complex128]
    + [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]
)


def broadcastable(*values):
    """Whether the shapes of `values` broadcast together.

    Args:
        *values: arrays, boxes or Python numbers.

    Returns:
        A bool.

    Example:
        >>> (
        ...     mk.ops.core.broadcastable(np.ones((3, 1)), np.ones(4)),
        ...     mk.ops.core.broadcastable(np.ones(3), np.ones(4)),
        ... )
        (True, False)
    """
    try:
        np.broadcast_shapes(*(shape_of(value) for value in values))
    except ValueError:
        return False
    return True


def normalize_axis(op, axis, ndim, *operands):
    """Checks an axis against a rank and makes it non-negative.

    Args:
        op: the op's name, for errors.
        axis: an int, possibly negative.
        ndim: the rank the axis indexes.
        *operands: the operands whose shapes an error shows.

    Returns:
        The axis as an int in `[0, ndim)`.

    Raises:
        ValueError: if `axis` is out of range, naming the op and the shapes.

    Example:
        >>> mk.ops.core.normalize_axis("softmax", -1, 2)
        1
    """
    if not isinstance(axis, (int, np.integer)) or isinstance(axis, bool):
        raise TypeError(f"{op}: axis must be an int, got {axis!r}")
    if not -ndim <= axis < ndim:
        raise op_error(op, f"axis {axis} is out of range for {ndim} axes", *operands)
    return int(axis) % ndim


def same_float(values):
    """Casts integer operands to the float dtype of the others, as binary ops do.

    Args:
        values: a list of arrays, boxes or Python numbers.

    Returns:
        A list of the same length.

    Example:
        >>> [v.dtype for v in mk.ops.core.same_float([np.ones(2, "float32"), np.arange(2)])]
        [dtype('float32'), dtype('float32')]
    """
    floats = [v.dtype for v in values if getattr(v, "dtype", np.dtype("i")).kind in "fc"]
    if not floats:
        return values
    dtype = np.result_type(*floats)
    return [v if getattr(v, "dtype", dtype).kind in "fc" else np.asarray(v, dtype) for v in values]


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
        >>> mk.ops.core.apply_unary("sum", np.sum, [[1, 2]], axis=1).numpy()
        array([3])
    """
    value = array_of(x)
    try:
        return wrap(fn(value, *args, **kwargs))
    except (ValueError, IndexError) as error:
        detail = ", ".join([*map(repr, args), *(f"{k}={v!r}" for k, v in kwargs.items())])
        raise op_error(op, f"invalid arguments ({detail}): {error}", value) from None
