"""`Variable`: a Tensor whose value changes in place, the weights of a model.

Every read goes through `engine.variable_reads.read_variable` (where tapes
box the value). Updates write into the Variable's own buffer when nothing
else holds it, and into a new one otherwise, so that earlier reads keep what
they saw.
"""

import sys

import numpy as np
from autograd.tracer import getval

from minikeras import config
from minikeras.engine import primitive
from minikeras.engine.context import TRACING
from minikeras.engine.context import state as _state
from minikeras.engine.tensor import Tensor, _format_values, value_of, wrap
from minikeras.engine.variable_reads import note_effect, read_variable

__all__ = ["TrackingGeneration", "Variable", "as_written", "is_unshared", "UNSHARED_REFS"]


def _untraced_array(value):
    """`value` as a plain numpy array, for a Variable to store.

    Python floats stay float64 here (the Variable casts to its own dtype), so
    that a float64 Variable gets all the digits of `[0.1, 0.2]`.
    """
    if isinstance(value, Tensor):
        value = value_of(value)
    return np.asarray(getval(value))


def as_written(value):
    """The array a Variable's write takes `value` as (before casting it to its dtype).

    Args:
        value: what `assign`, `assign_add` or `assign_sub` was given.

    Returns:
        A numpy array (a Python float becomes a float64 0-d array, as numpy
        makes it).

    Example:
        >>> mk.engine.variable.as_written(0.5).dtype
        dtype('float64')
    """
    if type(value) is np.ndarray:
        return value
    plain = value._value if type(value) is Tensor else None
    return plain if type(plain) is np.ndarray else _untraced_array(value)


def _shape_str(shape):
    return str(tuple(shape))


class TrackingGeneration:
    """A counter that moves whenever what any layer tracks may have changed.

    Layers cache their weight lists and keep them while the counter stands
    still; anything that can change what a layer tracks (an attribute set or
    deleted, `add_weight`, a trainable flag) calls `bump`. It is one counter
    for the process, not per thread: layers are shared between threads, and
    a change made in one must invalidate the caches every thread reads.

    Example:
        >>> generation = mk.engine.variable.TrackingGeneration
        >>> before = generation.value
        >>> generation.bump()
        >>> generation.value != before
        True
    """

    value = 0

    @classmethod
    def bump(cls):
        """Moves the counter on.

        Returns:
            None.

        Example:
            >>> mk.engine.variable.TrackingGeneration.bump()
        """
        cls.value += 1


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
        >>> v = mk.Variable([1.0, 2.0], name="w")
        >>> v.assign_add([0.5, 0.5]).numpy()
        array([1.5, 2.5], dtype=float32)
    """

    __slots__ = (
        "name", "_trainable", "path", "_regularizer", "constraint", "_index", "_autocast",
        "_made_trainable", "__weakref__",
    )  # fmt: skip
    _uid = 0
    writes = 0  # assignments so far, by any thread (engine.replay checks a step made none)

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
        # (not the setter: a new Variable is in no layer's lists yet, so nothing cached
        # changes; a layer taking it moves TrackingGeneration on, an optimizer's slot
        # does not invalidate a compiled step)
        self._trainable = bool(trainable)
        # Keras lists a layer's own weights made trainable before those made non-trainable,
        # whatever their flags say later (freezing a layer does not reorder its weights).
        self._made_trainable = self._trainable
        # Set by `Layer.add_weight`: "layer_name/weight_name", and the Keras extras.
        self.path = None
        self._regularizer = None
        self.constraint = None
        # Whether a mixed-precision layer's call reads it in its compute dtype (see
        # `read_variable`); `add_weight(autocast=False)` clears it.
        self._autocast = True

    def __setstate__(self, state):
        # Unpickled (or copied): the attributes as they were. A Variable pickled in another
        # process keeps its creation index, which may be past this process's count; the
        # count moves past it, so that the order of weights holds and no call takes the
        # Variable for one it made (`call_checks.check_reads` compares the two).
        attributes, slots = state if isinstance(state, tuple) else (state, None)
        for mapping in (attributes, slots):
            for name, value in (mapping or {}).items():
                object.__setattr__(self, name, value)
        if self._index > Variable._uid:
            Variable._uid = self._index

    @property
    def regularizer(self):
        """`regularizer(variable)` adds a penalty to the training loss, or None.

        Changing it invalidates what training found once (the weights with a
        penalty, a compiled step), as a `trainable` change does.
        """
        return self._regularizer

    @regularizer.setter
    def regularizer(self, value):
        self._regularizer = value
        TrackingGeneration.bump()

    @property
    def trainable(self):
        """Whether optimizers and tapes train it; changing it invalidates layers' weight lists."""
        return self._trainable

    @trainable.setter
    def trainable(self, value):
        self._trainable = bool(value)
        TrackingGeneration.bump()

    def _read(self):
        return read_variable(self)

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
            >>> mk.Variable([1.0]).numpy()
            array([1.], dtype=float32)
        """
        if TRACING[0] and _state.effect_observers:
            note_effect(f"a numpy() of Variable {self.name!r}")
        return self._value.copy()

    def __array__(self, dtype=None, copy=None):
        if TRACING[0] and _state.effect_observers:
            note_effect(f"an array of Variable {self.name!r}")
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
            plain = value._value if type(value) is Tensor else None
            value = plain if type(plain) is np.ndarray else as_written(value)
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
        Variable.writes += 1  # (every assign goes through here: a replay checks for none)
        if TRACING[0] and _state.effect_observers:
            note_effect(f"a write to Variable {self.name!r}")
        if is_unshared(self):
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
            >>> mk.Variable([0.0, 0.0]).assign([1.0, 2.0]).numpy()
            array([1., 2.], dtype=float32)
        """
        if primitive.recorders:  # (a recorded step's assign of its ops' value is replayed)
            for recorder in primitive.recorders:
                recorder.note_assign(self, value)
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
            >>> mk.Variable([1.0]).assign_add([2.0]).numpy()
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
            >>> mk.Variable([1.0]).assign_sub([2.0]).numpy()
            array([-1.], dtype=float32)
        """
        return self._update(np.subtract, delta, "assign_sub")


def is_unshared(holder):
    """Whether `holder._value` is referenced by `holder` alone, so writing into it is safe.

    The one question behind every in-place update: `Variable.assign` and the
    optimizers (which also ask it of their spare arrays) write into an array
    only when it answers yes. A Tensor read, a slice or view, or a tape's
    record of the array each add a reference, and make it no. An array that
    is itself a view (an optimizer's packed slots) is never unshared: a slice
    of it refers to its base, not to it, so no count of it can tell.

    Args:
        holder: any object whose `_value` attribute holds a numpy array.

    Returns:
        A bool.

    Example:
        >>> v = mk.Variable([1.0, 2.0])
        >>> mk.engine.variable.is_unshared(v)
        True
        >>> read = v.value
        >>> mk.engine.variable.is_unshared(v)
        False
    """
    return holder._value.base is None and sys.getrefcount(holder._value) <= UNSHARED_REFS


class _BufferHolder:
    __slots__ = ("_value",)


def _unshared_refs():
    """How many references `sys.getrefcount(holder._value)` counts for an unshared array.

    Measured rather than assumed, through the expression `is_unshared` uses
    (the attribute and getrefcount's own argument): the count differs between
    Python versions.
    """
    holder = _BufferHolder()
    holder._value = np.empty(1)
    return sys.getrefcount(holder._value)


# The calibration: the only place the count is fixed. Public for the optimizers, whose
# packed slots check their views with the same expression, written out for speed.
UNSHARED_REFS = _unshared_refs()
