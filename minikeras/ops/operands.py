"""The values ops compute with, where a numpy float64 array meets a Tensor.

The rule: a numpy float64 array that is not a Tensor, given to an op
together with a Tensor, is a constant of the Tensor's precision, as a Python
float is. It takes the Tensor's float dtype (float16, float32), or floatx when
the Tensor holds integers or booleans. So `x @ np.ones((3, 2))` in a layer's
`call` keeps a float32 model float32, as Keras 3 on JAX keeps it (an op on
symbolic tensors narrows such constants too, `layers.operation_node`).

What stays float64: a float64 Tensor (`convert_to_tensor(a, dtype="float64")`,
a float64 model's values), which the user asked for; and an op given only
numpy values and Python numbers, with no Tensor to take a precision from:
minikeras then follows numpy, and `ops.add(np.ones(2), np.ones(2))` is
float64 as `ops.exp(np.ones(2))` is (Keras on JAX makes every float64 value
float32, having no float64 at all unless told). numpy float64 scalars are
taken as Python floats already (`engine.tensor.value_of`).

Cost: two Tensors, the usual operands, pass `operand_values` with two type
checks. `core.apply_binary` and `core.promote_operands` look only once the
operands turned out not to share a dtype (of one dtype, there is nothing to
narrow), so Tensors of one dtype pay nothing there.
"""

import numpy as np

from minikeras import config
from minikeras.engine.tensor import (
    TRACED_TYPES,
    ArrayBox,  # autograd's, through the engine
    Tensor,
    dtype_of,
    value_of,
)

__all__ = ["narrowed", "narrowed_operands", "operand_values", "operand_values_list"]

_NDARRAY = np.ndarray
_FLOAT64 = np.float64


def operand_values(x1, x2):
    """The values of a binary op's operands, a numpy float64 array meeting a Tensor narrowed.

    Args:
        x1: the first operand (Tensor, array, Python number or nested list).
        x2: the second operand.

    Returns:
        The pair `(value_of(x1), value_of(x2))`, a numpy float64 array among
        them cast to the float dtype of the other operand if that is a Tensor
        (floatx for an integer or boolean Tensor).

    Example:
        >>> a, b = mk.ops.operands.operand_values(mk.ops.ones(2), np.ones(2))
        >>> a.dtype, b.dtype
        (dtype('float32'), dtype('float32'))
        >>> mk.ops.operands.operand_values(np.ones(2, "float32"), np.ones(2))[1].dtype
        dtype('float64')
    """
    kind1, kind2 = type(x1), type(x2)
    if (kind1 is not Tensor or kind2 is not Tensor) and (
        kind1 is _NDARRAY or kind2 is _NDARRAY or kind1 in TRACED_TYPES or kind2 in TRACED_TYPES
    ):
        return narrowed(x1, x2, value_of(x1), value_of(x2))
    return value_of(x1), value_of(x2)


def narrowed(x1, x2, a, b):
    """`operand_values` for a hot op that has the values already.

    Only where `x1` or `x2` is a numpy array (or a traced value, which stands
    for one) can there be anything to narrow: a hot op checks that first.

    Args:
        x1: the first operand, as the op was given it.
        x2: the second operand.
        a: `value_of(x1)`.
        b: `value_of(x2)`.

    Returns:
        The pair `(a, b)`, narrowed as `operand_values` narrows.

    Example:
        >>> t, constant = mk.ops.ones(2, dtype="float16"), np.ones(2)
        >>> mk.ops.operands.narrowed(t, constant, t.numpy(), constant)[1].dtype
        dtype('float16')
    """
    if _float64_array(x1, a):
        if _is_tensor(x2):
            return a.astype(_constant_dtype([b])), b
    elif _float64_array(x2, b) and _is_tensor(x1):
        return a, b.astype(_constant_dtype([a]))
    return a, b


def operand_values_list(operands, convert=value_of):
    """The values of an op's operands (`concatenate`'s, `einsum`'s), narrowed as a pair's are.

    Args:
        operands: a list or tuple of Tensors, arrays, Python numbers or lists.
        convert: what makes a value of one operand (`value_of`, or
            `core.array_of` to make Python numbers arrays).

    Returns:
        A list of values; numpy float64 arrays among them cast to the float
        dtype the Tensors among them promote to (floatx if those hold
        integers or booleans only), when there is a Tensor among them.

    Example:
        >>> values = mk.ops.operands.operand_values_list([mk.ops.ones(2), np.ones(2)])
        >>> [value.dtype for value in values]
        [dtype('float32'), dtype('float32')]
    """
    values = [convert(x) for x in operands]
    constants = [i for i, x in enumerate(operands) if _float64_array(x, values[i])]
    if not constants:
        return values
    tensors = [value for x, value in zip(operands, values) if _is_tensor(x)]
    return _cast_at(values, constants, tensors)


def narrowed_operands(*operands):
    """An op's operands as given, numpy float64 arrays among them narrowed.

    For ops of several tensor operands that go on to convert each on its own
    (`reshape`, `cast`, `convert_to_tensor`), which would lose which operand
    was a Tensor: they read their operands through this first. Only numpy
    float64 arrays change (to the dtype `operand_values_list` gives them);
    Tensors, lists, Python numbers and None come back as they were.

    Args:
        *operands: Tensors, arrays, Python numbers, lists or None.

    Returns:
        A tuple of the operands, one for each.

    Example:
        >>> x, gamma = mk.ops.operands.narrowed_operands(np.ones(2), mk.ops.ones(2))
        >>> x.dtype, gamma is not None
        (dtype('float32'), True)
    """
    constants = [
        i for i, x in enumerate(operands) if type(x) is _NDARRAY and x.dtype.type is _FLOAT64
    ]
    if not constants:
        return operands
    tensors = [value_of(x) for x in operands if _is_tensor(x)]
    return tuple(_cast_at(list(operands), constants, tensors))


def _cast_at(items, constants, tensors):
    """`items` (a list, changed in place) with those at `constants` cast to the dtype
    `tensors` give constants (unchanged if there is no Tensor among the operands)."""
    if tensors:
        dtype = _constant_dtype(tensors)
        for i in constants:
            items[i] = items[i].astype(dtype)
    return items


def _float64_array(x, value):
    """Whether operand `x`, of value `value`, is a numpy float64 array (not a Tensor's)."""
    kind = type(x)
    if kind is _NDARRAY:
        return value.dtype.type is _FLOAT64
    return kind in TRACED_TYPES and _traced_float64(value)


def _traced_float64(value):
    """Whether a traced value, as `value_of` gives it, stands for a float64 array.

    An optimizer's traced rule (`optimizers/_traced_value.py`) holds arrays in
    `TracedValue`s; one is narrowed as the array it stands for is, so the
    trace records what the eager rule computes. (Once the trace is spoiled,
    `value_of` gives the array itself.)
    """
    kind = type(value)
    array_kind = type(value.value) if kind in TRACED_TYPES else kind
    return array_kind is _NDARRAY and value.dtype.type is _FLOAT64


def _is_tensor(x):
    """A Tensor (Variables too) or autograd's box of a traced array: a value with a precision."""
    return isinstance(x, Tensor) or type(x) is ArrayBox


def _constant_dtype(tensors):
    """The dtype float64 constants take beside these Tensor values.

    float64 itself where a Tensor is float64; numpy's float64 (unchanged)
    beside complex Tensors, where a float dtype is not the whole story.
    """
    dtypes = [dtype_of(value) for value in tensors]
    floats = [dtype for dtype in dtypes if dtype is not None and dtype.kind == "f"]
    if floats:
        return np.result_type(*floats)
    if all(dtype is not None and dtype.kind in "iub" for dtype in dtypes):
        return np.dtype(config.floatx())
    return np.dtype(np.float64)
