"""`Tensor`, the values ops compute with, and how ops get at the arrays they hold.

A `Tensor` wraps a numpy array, or, inside a `GradientTape`, an autograd box
that carries the trace. A `Variable` (in `engine.variable`) is a Tensor whose
value can change in place; every read of it goes through `read_variable` (in
`engine.variable_reads`, re-exported here), which is where tapes start
recording and where layers observe which Variables a forward pass used.
"""

import numpy as np
from autograd.numpy.numpy_boxes import ArrayBox
from autograd.tracer import getval, isbox

from minikeras import config
from minikeras.engine.context import state as _state
from minikeras.engine.operators import Operators
from minikeras.engine.variable_reads import (
    add_read_observer,
    note_effect,
    read_variable,
    remove_read_observer,
)

__all__ = [
    "TRACED_TYPES",
    "Tensor",
    "add_read_observer",
    "drop_stale_boxes",
    "dtype_of",
    "note_effect",
    "read_variable",
    "remove_read_observer",
    "value_of",
    "wrap",
]

# The thread's state (engine.context): `active_tapes`, the recording tapes,
# outermost first, each with `_record_read(variable, value)`; `recording_traces`,
# their trace ids (tapes take ids from FIRST_TAPE_TRACE up, lower ids belong
# to autograd's own `grad`; a box of a tape id not in the set is stale); and
# `read_observers`, callables `observer(variable)` told of every Variable read
# (layers use this to find Variables that a forward pass used but nobody tracked).
FIRST_TAPE_TRACE = 1_000_000


# The types of values an optimizer traces its rule with (`optimizers/_traced_value.py`
# registers `TracedValue`): `value_of` hands them to ops, which compute on what they hold.
TRACED_TYPES = set()


def _as_array(value, dtype=None):
    """Converts Python data to a numpy array; Python floats become floatx, Python ints int32."""
    if type(value) in TRACED_TYPES:
        value = np.asarray(value)  # (it spoils its trace) as the array it holds, dtype and all
    if dtype is not None:
        return np.asarray(value, dtype=config.standardize_dtype(dtype))
    array = np.asarray(value)
    if isinstance(value, (np.ndarray, np.generic)):
        return array
    if array.dtype == np.float64:
        # Python floats and lists of them take the default float type, as in Keras.
        return array.astype(config.floatx())
    if array.dtype == np.int64:
        # Python ints take int32, as in Keras (numpy would give int64).
        return _as_int32(array)
    return array


_INT32 = np.iinfo(np.int32)


def _as_int32(array):
    """A Python-int array as int32; OverflowError, as Keras raises, for a value out of range."""
    if array.size and (array.min() < _INT32.min or array.max() > _INT32.max):
        outside = array.flat[np.argmax((array < _INT32.min) | (array > _INT32.max))]
        raise OverflowError(
            f"Python integer {outside} is out of bounds for int32, the dtype Python "
            "integers take (as in Keras); pass dtype='int64' or a numpy int64 array"
        )
    return array.astype(np.int32)


def drop_stale_boxes(value):
    """Unwraps the boxes of tapes that have stopped recording.

    A Tensor computed inside a tape keeps that tape's box after the `with`
    block ends; used later, it must count as a constant, or work done after the
    tape ended would join the tape's graph (and keep it alive).

    Args:
        value: a numpy array, number or autograd box.

    Returns:
        `value` without its outer boxes of finished tapes.

    Example:
        >>> x = mk.Tensor(2.0)
        >>> with mk.GradientTape() as tape:
        ...     tape.watch(x)
        ...     y = x * x
        >>> from autograd.numpy.numpy_boxes import ArrayBox
        >>> isinstance(y._value, ArrayBox)
        True
        >>> isinstance(mk.engine.tensor.drop_stale_boxes(y._value), ArrayBox)
        False
    """
    while (
        type(value) is ArrayBox
        and value._trace >= FIRST_TAPE_TRACE
        and value._trace not in _state.recording_traces
    ):
        value = value._value
    return value


_NDARRAY = np.ndarray  # (one global look-up on the hottest path, not two)


def value_of(x):
    """The value behind `x`: a Tensor's array or box, or `x` made an array.

    Boxes of tapes that have stopped recording are dropped (see
    `drop_stale_boxes`), so every op sees a stale Tensor as a constant.

    Args:
        x: a Tensor, Variable, numpy array, Python scalar or nested list.

    Returns:
        A numpy array, numpy scalar, Python scalar or autograd box.

    Example:
        >>> mk.engine.tensor.value_of(mk.Tensor([1.0]))
        array([1.], dtype=float32)
    """
    kind = type(x)
    if kind is Tensor:
        value = x._value
        held = type(value)
        if held is _NDARRAY:
            return value
        if held is ArrayBox:
            return value if value._trace in _state.recording_traces else drop_stale_boxes(value)
        if held in TRACED_TYPES:
            return value._in_tensor()  # (optimizers/_traced_value.py) what an op sees of it
        if isinstance(value, np.generic):
            # A reduction's numpy scalar, made a 0-d array: an op that passes it on
            # to another (`divide` to `apply_binary`) must not see it as the weak
            # Python number a bare numpy scalar is taken for below, which would
            # turn a float64 result into float32.
            return np.asarray(value)
        return value
    if kind is np.ndarray or kind is float or kind is int:
        return x
    if kind is ArrayBox:
        return x if x._trace in _state.recording_traces else drop_stale_boxes(x)
    if isinstance(x, Tensor):
        return x._read()  # a Variable reads through `read_variable`
    if isinstance(x, np.generic):
        # A numpy float64 scalar is not "weak" under numpy 2 promotion and would
        # turn float32 work into float64; treat it like the Python number it is.
        return x.item() if x.dtype.kind in "fc" else x
    if kind in TRACED_TYPES:
        return x._operand()  # (optimizers/_traced_value.py) what an op takes it as
    return _as_array(x)


def dtype_of(x):
    """The dtype of an array or box, or None for a Python number.

    Reads a boxed value's dtype directly: `box.dtype` costs an autograd call.

    Args:
        x: a numpy array or scalar, an autograd box or a Python number.

    Returns:
        A numpy dtype, or None for a Python number.

    Example:
        >>> mk.engine.tensor.dtype_of(np.ones(2, "float32")), mk.engine.tensor.dtype_of(2.0)
        (dtype('float32'), None)
    """
    kind = type(x)
    if kind is np.ndarray:
        return x.dtype
    if kind is ArrayBox and type(x._value) is np.ndarray:
        return x._value.dtype  # the usual box: one tape over an array
    value = getval(x)
    dtype = getattr(value, "dtype", None)
    if dtype is None and value is not x:
        return np.result_type(value)  # a boxed Python number is an array to autograd
    return dtype


def wrap(value):
    """Makes a Tensor around `value` without checks (for ops' results).

    Args:
        value: a numpy array, numpy scalar or autograd box.

    Returns:
        A `Tensor`.

    Example:
        >>> mk.engine.tensor.wrap(np.zeros(2)).shape
        (2,)
    """
    tensor = Tensor.__new__(Tensor)
    tensor._value = value
    return tensor


def _plain_array(value):
    """The numpy array that `value` is or that one level of box holds, else None."""
    if type(value) is ArrayBox:
        value = value._value
    return value if type(value) is np.ndarray else None


def _format_values(value):
    return np.array2string(np.asarray(getval(value)), separator=", ", threshold=20, edgeitems=2)


class Tensor(Operators):
    """An n-dimensional array whose operations can be differentiated.

    Tensors behave like numpy arrays with `+ - * / // ** @`, comparisons,
    indexing and `.T`; they mix freely with numpy arrays and Python numbers.
    Inside a `GradientTape` they carry the trace that gradients flow back through.

    Args:
        value: array-like data. Python floats become float32 (`config.floatx()`);
            numpy arrays keep their dtype.
        dtype: optional dtype to convert to.

    Example:
        >>> t = mk.Tensor([[1.0, 2.0], [3.0, 4.0]])
        >>> t.shape, t.dtype
        ((2, 2), dtype('float32'))
        >>> (t * 2 + 1).numpy()
        array([[3., 5.],
               [7., 9.]], dtype=float32)
    """

    # `_keras_mask`: the mask a layer attached to its output (unset for most tensors).
    __slots__ = ("_value", "_keras_mask")
    # numpy defers to our reflected operators: `array + tensor` is a Tensor.
    __array_ufunc__ = None

    def __init__(self, value, dtype=None):
        if isinstance(value, Tensor):
            value = value_of(value)
            if dtype is not None:
                value = value.astype(config.standardize_dtype(dtype))
        elif isbox(value):
            if dtype is not None:
                value = value.astype(config.standardize_dtype(dtype))
        else:
            value = _as_array(value, dtype)
        self._value = value

    def _read(self):
        """The value for an op: a Variable overrides this with `read_variable`."""
        return drop_stale_boxes(self._value)

    # Layers and ops ask these on every call, mostly of an array or of one
    # level of box (inside a tape): answered inline (as `_plain_array` would), without
    # the generic numpy functions.

    @property
    def shape(self):
        """The shape, a tuple of ints."""
        value = self._value
        if type(value) is ArrayBox:
            value = value._value
        if type(value) is np.ndarray:
            return value.shape
        return np.shape(getval(self._value))

    @property
    def ndim(self):
        """The number of axes."""
        value = self._value
        if type(value) is ArrayBox:
            value = value._value
        if type(value) is np.ndarray:
            return value.ndim
        return np.ndim(getval(self._value))

    @property
    def dtype(self):
        """The numpy dtype of the elements."""
        value = self._value
        if type(value) is ArrayBox:
            value = value._value
        if type(value) is np.ndarray:
            return value.dtype
        return np.result_type(getval(self._value))

    @property
    def size(self):
        """The number of elements."""
        value = self._value
        if type(value) is ArrayBox:
            value = value._value
        if type(value) is np.ndarray:
            return value.size
        return np.size(getval(self._value))

    def numpy(self):
        """Returns the value as a numpy array (without any trace).

        Returns:
            A numpy array; do not modify it in place.

        Example:
            >>> mk.Tensor([1, 2]).numpy()
            array([1, 2], dtype=int32)
        """
        value = self._value
        if type(value) is np.ndarray:
            return value  # the usual case, without further calls
        return np.asarray(getval(value_of(self)))

    def __array__(self, dtype=None, copy=None):
        array = np.asarray(getval(value_of(self)))
        if dtype is not None:
            array = array.astype(dtype, copy=False)
        return array.copy() if copy else array

    def __repr__(self):
        return f"<Tensor shape={self.shape} dtype={self.dtype}\n{_format_values(self._value)}>"

    def __len__(self):
        shape = self.shape
        if not shape:
            raise TypeError("len() of a 0-d Tensor")
        return shape[0]

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    def __bool__(self):
        return bool(getval(value_of(self)))

    def __float__(self):
        return float(getval(value_of(self)))

    def __int__(self):
        return int(getval(value_of(self)))

    def __index__(self):
        return int(np.asarray(getval(value_of(self))).__index__())

    # Identity hashing, so Tensors can be dict keys although `==` is element-wise.
    __hash__ = object.__hash__

    def __pos__(self):
        # A new Tensor: `+variable` is a read, not the Variable itself.
        return wrap(value_of(self))
