"""`Tensor`, `Variable`, and the one place where a Variable's value is read.

A `Tensor` wraps a numpy array, or, inside a `GradientTape`, an autograd box
that carries the trace. A `Variable` is a Tensor whose value can change in
place; every read of it goes through `read_variable`, which is where tapes
start recording and where layers observe which Variables a forward pass used.
"""

import sys

import numpy as np
from autograd.numpy.numpy_boxes import ArrayBox
from autograd.tracer import getval, isbox

from minikeras import config

__all__ = [
    "Tensor",
    "Variable",
    "add_read_observer",
    "bind_operators",
    "drop_stale_boxes",
    "dtype_of",
    "read_variable",
    "remove_read_observer",
    "value_of",
    "wrap",
]

# Recording tapes, outermost first. Each has `_record_read(variable, value)`.
_active_tapes = []
# Their trace ids. Tapes take ids from FIRST_TAPE_TRACE up (lower ids belong to
# autograd's own `grad`); a box of a tape id not in this set is stale.
FIRST_TAPE_TRACE = 1_000_000
_recording_traces = set()
# Callables `observer(variable)`, told of every Variable read (layers use this
# to find Variables that a forward pass used but nobody tracked).
_read_observers = []
# The ops Tensor's operators call: `minikeras.ops`, which binds itself here on
# import (see `bind_operators`), so that imports flow one way, engine <- ops.
_ops = None


def bind_operators(ops):
    """Makes Tensor's operators (`+`, `@`, `[]`, `.T`, ...) call the functions of `ops`.

    `minikeras.ops` calls it once, on import: the engine cannot import ops,
    which are built on it.

    Args:
        ops: a module (or object) with `add`, `subtract`, `multiply`,
            `divide`, `floor_divide`, `mod`, `power`, `matmul`, `negative`,
            `abs`, the comparisons, `getitem`, `transpose`, `reshape` and
            `cast`.

    Returns:
        None.

    Example:
        >>> from minikeras import ops
        >>> bind_operators(ops)  # what importing minikeras.ops did already
        >>> (Tensor([1.0]) + 1).numpy()
        array([2.], dtype=float32)
    """
    global _ops
    _ops = ops


def read_variable(variable):
    """Returns the current value of `variable`, as every read must.

    Active tapes box the value so that gradients flow to it, and read
    observers are told that `variable` was used.

    Args:
        variable: a `Variable`.

    Returns:
        The value as a numpy array, or an autograd box inside a tape.

    Example:
        >>> v = Variable([1.0, 2.0])
        >>> read_variable(v)
        array([1., 2.], dtype=float32)
    """
    value = variable._value
    if _active_tapes:
        for tape in _active_tapes:
            value = tape._record_read(variable, value)
    if _read_observers:
        for observer in _read_observers:
            observer(variable)
    return value


def add_read_observer(observer):
    """Registers `observer(variable)` to be called on every Variable read.

    Args:
        observer: a callable taking one `Variable`.

    Returns:
        None. Remove it with `remove_read_observer`.

    Example:
        >>> seen = []
        >>> add_read_observer(seen.append)
        >>> _ = Variable([1.0]) * 2
        >>> remove_read_observer(seen.append)
        >>> len(seen)
        1
    """
    _read_observers.append(observer)


def remove_read_observer(observer):
    """Removes an observer added with `add_read_observer`.

    Args:
        observer: the callable that was added.

    Returns:
        None.

    Raises:
        ValueError: if `observer` was not registered.

    Example:
        >>> add_read_observer(print)
        >>> remove_read_observer(print)
    """
    _read_observers.remove(observer)


def _as_array(value, dtype=None):
    """Converts Python data to a numpy array; Python floats become floatx."""
    if dtype is not None:
        return np.asarray(value, dtype=config.standardize_dtype(dtype))
    array = np.asarray(value)
    if array.dtype == np.float64 and not isinstance(value, (np.ndarray, np.generic)):
        # Python floats and lists of them take the default float type, as in Keras.
        array = array.astype(config.floatx())
    return array


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
        >>> x = Tensor(2.0)
        >>> with GradientTape() as tape:
        ...     tape.watch(x)
        ...     y = x * x
        >>> isinstance(y._value, ArrayBox), isinstance(drop_stale_boxes(y._value), ArrayBox)
        (True, False)
    """
    while (
        type(value) is ArrayBox
        and value._trace >= FIRST_TAPE_TRACE
        and value._trace not in _recording_traces
    ):
        value = value._value
    return value


def value_of(x):
    """The value behind `x`: a Tensor's array or box, or `x` made an array.

    Boxes of tapes that have stopped recording are dropped (see
    `drop_stale_boxes`), so every op sees a stale Tensor as a constant.

    Args:
        x: a Tensor, Variable, numpy array, Python scalar or nested list.

    Returns:
        A numpy array, numpy scalar, Python scalar or autograd box.

    Example:
        >>> value_of(Tensor([1.0]))
        array([1.], dtype=float32)
    """
    kind = type(x)
    if kind is Tensor:
        value = x._value
        if type(value) is ArrayBox and value._trace not in _recording_traces:
            return drop_stale_boxes(value)
        return value
    if kind is Variable:
        return read_variable(x)
    if kind is np.ndarray or kind is float or kind is int:
        return x
    if kind is ArrayBox:
        return x if x._trace in _recording_traces else drop_stale_boxes(x)
    if isinstance(x, Variable):
        return read_variable(x)
    if isinstance(x, Tensor):
        return drop_stale_boxes(x._value)
    if isinstance(x, np.generic):
        # A numpy float64 scalar is not "weak" under numpy 2 promotion and would
        # turn float32 work into float64; treat it like the Python number it is.
        return x.item() if x.dtype.kind in "fc" else x
    return _as_array(x)


def dtype_of(x):
    """The dtype of an array or box, or None for a Python number.

    Reads a boxed value's dtype directly: `box.dtype` costs an autograd call.

    Args:
        x: a numpy array or scalar, an autograd box or a Python number.

    Returns:
        A numpy dtype, or None for a Python number.

    Example:
        >>> dtype_of(np.ones(2, "float32")), dtype_of(2.0)
        (dtype('float32'), None)
    """
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
        >>> wrap(np.zeros(2)).shape
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


class Tensor:
    """An n-dimensional array whose operations can be differentiated.

    Tensors behave like numpy arrays with `+ - * / // ** @`, comparisons,
    indexing and `.T`; they mix freely with numpy arrays and Python numbers.
    Inside a `GradientTape` they carry the trace that gradients flow back through.

    Args:
        value: array-like data. Python floats become float32 (`config.floatx()`);
            numpy arrays keep their dtype.
        dtype: optional dtype to convert to.

    Example:
        >>> t = Tensor([[1.0, 2.0], [3.0, 4.0]])
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

    # Layers and ops ask these on every call, mostly of an array or of one
    # level of box (inside a tape): `_plain_array` answers those without the
    # generic numpy functions.

    @property
    def shape(self):
        """The shape, a tuple of ints."""
        array = _plain_array(self._value)
        return np.shape(getval(self._value)) if array is None else array.shape

    @property
    def ndim(self):
        """The number of axes."""
        array = _plain_array(self._value)
        return np.ndim(getval(self._value)) if array is None else array.ndim

    @property
    def dtype(self):
        """The numpy dtype of the elements."""
        array = _plain_array(self._value)
        return np.result_type(getval(self._value)) if array is None else array.dtype

    @property
    def size(self):
        """The number of elements."""
        array = _plain_array(self._value)
        return np.size(getval(self._value)) if array is None else array.size

    def numpy(self):
        """Returns the value as a numpy array (without any trace).

        Returns:
            A numpy array; do not modify it in place.

        Example:
            >>> Tensor([1, 2]).numpy()
            array([1, 2])
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

    # Operators delegate to minikeras.ops (see `bind_operators`).
    def __add__(self, other):
        return _ops.add(self, other)

    def __radd__(self, other):
        return _ops.add(other, self)

    def __sub__(self, other):
        return _ops.subtract(self, other)

    def __rsub__(self, other):
        return _ops.subtract(other, self)

    def __mul__(self, other):
        return _ops.multiply(self, other)

    def __rmul__(self, other):
        return _ops.multiply(other, self)

    def __truediv__(self, other):
        return _ops.divide(self, other)

    def __rtruediv__(self, other):
        return _ops.divide(other, self)

    def __floordiv__(self, other):
        return _ops.floor_divide(self, other)

    def __rfloordiv__(self, other):
        return _ops.floor_divide(other, self)

    def __mod__(self, other):
        return _ops.mod(self, other)

    def __rmod__(self, other):
        return _ops.mod(other, self)

    def __pow__(self, other):
        return _ops.power(self, other)

    def __rpow__(self, other):
        return _ops.power(other, self)

    def __matmul__(self, other):
        return _ops.matmul(self, other)

    def __rmatmul__(self, other):
        return _ops.matmul(other, self)

    def __neg__(self):
        return _ops.negative(self)

    def __pos__(self):
        # A new Tensor: `+variable` is a read, not the Variable itself.
        return wrap(value_of(self))

    def __abs__(self):
        return _ops.abs(self)

    def __eq__(self, other):
        return _ops.equal(self, other)

    def __ne__(self, other):
        return _ops.not_equal(self, other)

    def __lt__(self, other):
        return _ops.less(self, other)

    def __le__(self, other):
        return _ops.less_equal(self, other)

    def __gt__(self, other):
        return _ops.greater(self, other)

    def __ge__(self, other):
        return _ops.greater_equal(self, other)

    def __getitem__(self, index):
        return _ops.getitem(self, index)

    @property
    def T(self):  # noqa: N802 (numpy's name)
        """The transpose (axes reversed)."""
        return _ops.transpose(self)

    def reshape(self, *shape):
        """Same as `ops.reshape(self, shape)`.

        Args:
            *shape: the new shape, as one tuple or as separate ints; one entry
                may be -1.

        Returns:
            A Tensor with the same values in the new shape.

        Example:
            >>> t = Tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
            >>> t.reshape(3, 2).shape, t.reshape((-1,)).shape
            ((3, 2), (6,))
        """
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = shape[0]
        return _ops.reshape(self, shape)

    def astype(self, dtype):
        """Same as `ops.cast(self, dtype)`.

        Args:
            dtype: the new dtype, such as `"int32"` or `np.float64`.

        Returns:
            A Tensor of the values cast to `dtype`.

        Example:
            >>> Tensor([1.5, 2.5]).astype("int32").numpy()
            array([1, 2], dtype=int32)
        """
        return _ops.cast(self, dtype)


def _untraced_array(value):
    """`value` as a plain numpy array, for a Variable to store.

    Python floats stay float64 here (the Variable casts to its own dtype), so
    that a float64 Variable gets all the digits of `[0.1, 0.2]`.
    """
    if isinstance(value, Tensor):
        value = value_of(value)
    return np.asarray(getval(value))


def _shape_str(shape):
    return str(tuple(shape))


class Variable(Tensor):
    """A Tensor whose value can change: the weights of a model.

    Reading a Variable inside a `GradientTape` records it (if `trainable`);
    `assign`, `assign_add` and `assign_sub` change the Variable in place. Reads
    are snapshots: a Tensor computed from the Variable, and what a tape
    recorded, keep the value they saw.
    Layers create Variables with `add_weight`, which also tracks them.

    Args:
        initializer: the initial value (array-like), or a callable
            `initializer(shape, dtype)` together with `shape`.
        shape: the shape, needed when `initializer` is a callable.
        dtype: the dtype; floating values default to float32 (`config.floatx()`).
        trainable: whether optimizers and tapes should train it.
        name: a name for messages and reports.

    Raises:
        ValueError: if a callable initializer comes without a shape, or the
            initial value does not have the given shape.

    Example:
        >>> v = Variable([1.0, 2.0], name="w")
        >>> v.assign_add([0.5, 0.5]).numpy()
        array([1.5, 2.5], dtype=float32)
    """

    __slots__ = ("name", "trainable", "path", "regularizer", "constraint", "_index", "__weakref__")
    _uid = 0

    def __init__(self, initializer, shape=None, dtype=None, trainable=True, name=None):
        if callable(initializer):
            if shape is None:
                raise ValueError(
                    f"Variable {name!r}: a callable initializer needs `shape=`, got shape=None"
                )
            dtype = config.standardize_dtype(dtype or config.floatx())
            value = np.asarray(getval(value_of(initializer(tuple(shape), dtype=dtype))))
        else:
            value = _untraced_array(initializer)
            if dtype is None and value.dtype.kind == "f":
                dtype = config.floatx()
        if shape is not None and tuple(shape) != value.shape:
            raise ValueError(
                f"Variable {name!r}: initial value has shape {value.shape}, "
                f"but shape={_shape_str(shape)} was given"
            )
        if dtype is not None:
            value = value.astype(config.standardize_dtype(dtype), copy=False)
        # The Variable owns its buffer (see `_buffer_for_update`), C-ordered whatever
        # the initial value's layout: updates mix it with C-ordered gradients and
        # optimizer state, and a transposed operand makes each ufunc pass ~10x slower.
        self._value = np.array(value, copy=True, order="C")
        Variable._uid += 1
        # Creation order: layers list weights in it, and use it to spot creation inside call().
        self._index = Variable._uid
        self.name = name if name is not None else f"variable_{Variable._uid}"
        self.trainable = bool(trainable)
        # Set by `Layer.add_weight`: "layer_name/weight_name", and the Keras extras.
        self.path = None
        self.regularizer = None
        self.constraint = None

    @property
    def value(self):
        """The current value, read through `read_variable` (so tapes see it)."""
        return wrap(read_variable(self))

    @property
    def shape(self):
        return self._value.shape

    @property
    def dtype(self):
        return self._value.dtype

    @property
    def ndim(self):
        return self._value.ndim

    def numpy(self):
        """Returns a copy of the current value as a numpy array.

        Returns:
            A numpy array that later updates do not change.

        Example:
            >>> Variable([1.0]).numpy()
            array([1.], dtype=float32)
        """
        return self._value.copy()

    def __array__(self, dtype=None, copy=None):
        if dtype is not None and np.dtype(dtype) != self._value.dtype:
            return self._value.astype(dtype)
        # A copy unless told otherwise: writing into it must not change the Variable.
        return self._value.copy() if copy is not False else self._value

    def __repr__(self):
        return (
            f"<Variable {self.name!r} shape={self.shape} dtype={self.dtype} "
            f"trainable={self.trainable}\n{_format_values(self._value)}>"
        )

    def _checked(self, value, what):
        if type(value) is not np.ndarray:
            value = _untraced_array(value)
        # Only a scalar broadcasts: a (3,) row silently filling a (2, 3) weight is a bug.
        if value.shape != self._value.shape and value.ndim:
            raise ValueError(
                f"Variable {self.name!r}: cannot {what} a value of shape "
                f"{value.shape} to a variable of shape {self._value.shape}"
            )
        return value

    def _buffer_for_update(self):
        """Where an update may write: the buffer itself if nothing else holds it.

        Reads hand out the buffer without copying; a slice of it, a Tensor made
        from it or a tape's record of it must keep the value it saw, so while
        anything holds the buffer an update writes into a new one.
        """
        if _buffer_refs(self) <= _UNSHARED_REFS:
            return self._value
        return np.empty_like(self._value)

    def _update(self, ufunc, value, what):
        value = self._checked(value, what)
        new_value = self._buffer_for_update()
        ufunc(self._value, value, out=new_value, casting="unsafe")
        self._value = new_value
        return self

    def assign(self, value):
        """Sets the value (the Variable changes; earlier reads do not).

        Args:
            value: array-like of the variable's shape (a scalar broadcasts);
                it is cast to the variable's dtype.

        Returns:
            The Variable itself.

        Raises:
            ValueError: if the shape does not match, naming the variable and
                both shapes.

        Example:
            >>> Variable([0.0, 0.0]).assign([1.0, 2.0]).numpy()
            array([1., 2.], dtype=float32)
        """
        value = self._checked(value, "assign")
        new_value = self._buffer_for_update()
        np.copyto(new_value, value, casting="unsafe")
        self._value = new_value
        return self

    def assign_add(self, delta):
        """Adds `delta` to the value.

        Args:
            delta: array-like of the variable's shape (a scalar broadcasts).

        Returns:
            The Variable itself.

        Raises:
            ValueError: if the shape does not match.

        Example:
            >>> Variable([1.0]).assign_add([2.0]).numpy()
            array([3.], dtype=float32)
        """
        return self._update(np.add, delta, "assign_add")

    def assign_sub(self, delta):
        """Subtracts `delta` from the value.

        Args:
            delta: array-like of the variable's shape (a scalar broadcasts).

        Returns:
            The Variable itself.

        Raises:
            ValueError: if the shape does not match.

        Example:
            >>> Variable([1.0]).assign_sub([2.0]).numpy()
            array([-1.], dtype=float32)
        """
        return self._update(np.subtract, delta, "assign_sub")


def _buffer_refs(holder):
    return sys.getrefcount(holder._value)


class _BufferHolder:
    __slots__ = ("_value",)


def _unshared_refs():
    """How many references `_buffer_refs` counts for a buffer held only by its owner."""
    holder = _BufferHolder()
    holder._value = np.empty(1)
    return _buffer_refs(holder)


# Measured rather than assumed: the count differs between Python versions.
_UNSHARED_REFS = _unshared_refs()
