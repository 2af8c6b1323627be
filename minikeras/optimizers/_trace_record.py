"""What a traced `update_step` records: `TracedValue`s and the `Trace` of their calls.

See `_traced.py` for the design. A `TracedValue` holds a real array; numpy
hands every call involving one to it, and it computes on the real arrays
and has the `Trace` write the call down. Whatever would take the data out of
numpy's protocols hands out the real value and spoils the trace.
"""

import operator

import numpy as np

from minikeras.engine.tensor import TRACED_TYPES, Tensor, value_of

__all__ = ["Trace", "TracedValue"]

# numpy functions that only read metadata: answered, not recorded, for a value whose
# shape the shapes of the step's arrays fix (see `TracedValue.fixed`).
_METADATA = {np.shape, np.ndim, np.size, np.result_type}
# numpy functions (besides ufuncs) whose result's shape the operands' shapes fix.
_SHAPED_BY_OPERANDS = frozenset(
    [np.clip, np.where, np.sum, np.mean, np.max, np.min, np.amax, np.amin, np.prod, np.any]
    + [np.all, np.std, np.var, np.dot, np.outer, np.zeros_like, np.ones_like, np.full_like]
    + [np.reshape, np.transpose, np.ravel, np.squeeze, np.expand_dims]
)  # fmt: skip


class TracedValue:
    """A step's value under tracing: the real array, and where it came from.

    Not an ndarray: numpy hands every call that involves one to
    `__array_ufunc__` / `__array_function__`, which compute on the real
    arrays and record the call. Anything that would take the data out
    (`__array__`, `float`, `bool`, an unknown attribute) hands out the real
    value and spoils the trace.

    Args:
        value: the real numpy array or numpy scalar.
        node: its index in the trace.
        trace: the `Trace` recording it.
        fixed: whether its shape follows from the shapes of the step's
            arrays alone (not from their values, as `np.flatnonzero`'s does);
            reading the shape of a value that is not fixed spoils the trace.
    """

    __slots__ = ("value", "node", "trace", "fixed")

    def __init__(self, value, node, trace, fixed=True):
        self.value, self.node, self.trace, self.fixed = value, node, trace, fixed

    def _operand(self):
        """What `value_of` gives an op: a float numpy scalar becomes a Python float there;
        once the trace is spoiled (or over), the array itself, as eagerly."""
        value = self.value
        if isinstance(value, np.generic) and value.dtype.kind in "fc":
            return self._leak("a numpy scalar taken as a Python number").item()
        trace = self.trace
        return value if not trace.live or trace.spoiled is not None else self

    def _in_tensor(self):
        """What `value_of` gives an op for a Tensor holding this value: itself, or for a
        numpy scalar, the same value seen as a 0-d array (as `value_of` makes of a
        Tensor's numpy scalar), so that an op passing it on does not take it for a
        Python number."""
        value = self.value
        if isinstance(value, np.generic):
            return TracedValue(np.asarray(value), self.node, self.trace, self.fixed)
        return self

    def _metadata(self, read):
        return read(self.value if self.fixed else self._leak("the shape of a data-shaped value"))

    @property
    def shape(self):
        return self._metadata(np.shape)

    @property
    def dtype(self):
        return self.value.dtype

    @property
    def ndim(self):
        return self._metadata(np.ndim)

    @property
    def size(self):
        return self._metadata(np.size)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        trace = self.trace
        if method != "__call__" or ufunc.nout != 1 or not trace.usable(inputs, kwargs):
            trace.spoil(f"{ufunc.__name__}.{method}")
            if "out" in kwargs:
                kwargs["out"] = tuple(_plain(item) for item in kwargs["out"])
            return getattr(ufunc, method)(*map(_plain, inputs), **kwargs)
        return trace.call(ufunc, inputs, kwargs)

    def __array_function__(self, func, types, args, kwargs):
        trace = self.trace
        if func in _METADATA and all(a.fixed for a in args if type(a) is TracedValue):
            return func(*map(_plain, args), **kwargs)
        if trace.usable(args, kwargs):
            return trace.call(func, args, kwargs, shaped=func in _SHAPED_BY_OPERANDS)
        trace.spoil(getattr(func, "__name__", repr(func)))
        return func(*map(_plain, args), **{key: _plain(v) for key, v in kwargs.items()})

    def astype(self, dtype, copy=True):
        return self.trace.call(_astype, (self,), {"dtype": np.dtype(dtype), "copy": copy})

    def _leak(self, what):
        self.trace.spoil(what)
        return self.value

    def __array__(self, dtype=None, copy=None):
        return np.asarray(self._leak("np.asarray"), dtype=dtype)

    def __getattr__(self, name):
        if name.startswith("__"):  # numpy's probes for protocols (then it calls `__array__`)
            raise AttributeError(name)
        return getattr(self._leak(f"attribute {name!r}"), name)

    def __float__(self):
        return float(self._leak("float()"))

    def __int__(self):
        return int(self._leak("int()"))

    def __complex__(self):
        return complex(self._leak("complex()"))

    def __index__(self):
        return operator.index(self._leak("an index"))

    def __bool__(self):
        return bool(self._leak("bool()"))

    def __len__(self):
        return len(self._leak("len()"))

    def __iter__(self):
        return iter(self._leak("iteration"))

    def __getitem__(self, key):
        return self._leak("indexing")[key]

    def __setitem__(self, key, value):
        self._leak("item assignment")[key] = _plain(value)

    def __format__(self, spec):
        return format(self._leak("format()"), spec)

    def __round__(self, digits=None):
        return round(self._leak("round()"), digits)

    def __divmod__(self, other):
        return divmod(self._leak("divmod()"), _plain(other))

    def __rdivmod__(self, other):
        return divmod(_plain(other), self._leak("divmod()"))

    def __repr__(self):
        return f"<TracedValue node={self.node} {self.value!r}>"

    __hash__ = object.__hash__


def _operator(function, reflected=False):
    """A Python operator of `TracedValue`, recorded as the operator on the real values.

    With a Tensor it declines, as an ndarray does, so that the Tensor's own
    operator runs (and hands the traced value to `mk.ops`).
    """
    if reflected:
        function = _REFLECTED.setdefault(function, lambda a, b, f=function: f(b, a))

    def method(self, other):
        if isinstance(other, Tensor):
            return NotImplemented
        return self.trace.call(function, (self, other), {})

    return method


def _in_place(function):
    """`x op= y`: in place on the real array, as an ndarray does; that spoils the trace."""

    def method(self, other):
        if isinstance(other, Tensor):
            return NotImplemented
        self.value = function(self._leak("an in-place operator"), _plain(other))
        return self

    return method


# An ndarray's operator is this ufunc (`**` is not: `a ** 2` is `np.square`); on an
# array result the trace records the ufunc, which a replay can call with `out=`.
_UFUNCS = {
    operator.add: np.add,
    operator.sub: np.subtract,
    operator.mul: np.multiply,
    operator.truediv: np.true_divide,
    operator.floordiv: np.floor_divide,
    operator.mod: np.remainder,
    operator.and_: np.bitwise_and,
    operator.or_: np.bitwise_or,
    operator.xor: np.bitwise_xor,
    operator.lshift: np.left_shift,
    operator.rshift: np.right_shift,
    operator.lt: np.less,
    operator.le: np.less_equal,
    operator.gt: np.greater,
    operator.ge: np.greater_equal,
    operator.eq: np.equal,
    operator.ne: np.not_equal,
    operator.neg: np.negative,
    operator.invert: np.invert,
    operator.abs: np.absolute,
}
_REFLECTED = {}
_SWAPPED = {}  # a reflected operator -> the ufunc it is, its operands swapped
_BINARY = ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul")
for _name in _BINARY + ("and", "or", "xor", "lshift", "rshift"):
    _function = getattr(operator, _name + "_" if _name in ("and", "or") else _name)
    setattr(TracedValue, f"__{_name}__", _operator(_function))
    setattr(TracedValue, f"__r{_name}__", _operator(_function, reflected=True))
    setattr(TracedValue, f"__i{_name}__", _in_place(getattr(operator, f"i{_name}")))
    if _function in _UFUNCS:
        _SWAPPED[_REFLECTED[_function]] = _UFUNCS[_function]
for _name in ("lt", "le", "gt", "ge", "eq", "ne"):
    setattr(TracedValue, f"__{_name}__", _operator(getattr(operator, _name)))


TRACED_TYPES.add(TracedValue)


def _reduction(name):
    """`x.sum(...)` and the like: recorded as `np.sum(x, ...)`, which calls the same."""
    function = getattr(np, name)

    def method(self, *args, **kwargs):
        return self.trace.call(function, (self, *args), kwargs)

    method.__name__ = name
    return method


for _name in ("sum", "mean", "max", "min", "prod", "std", "var", "any", "all"):
    setattr(TracedValue, _name, _reduction(_name))


def _unary(function):
    return lambda self: self.trace.call(function, (self,), {})


for _name in ("neg", "pos", "abs", "invert"):
    setattr(TracedValue, f"__{_name}__", _unary(getattr(operator, _name)))


def _astype(value, dtype, copy=True):
    return value.astype(dtype, copy=copy)


def _traced(value):
    return type(value) is TracedValue


def _plain(value):
    return value.value if type(value) is TracedValue else value


class Trace:
    """The record of one traced `update_step`: reads, numpy calls and writes, in order.

    Steps are `("read", node, k)` (the value of variable `k` now), `("call",
    node, function, refs, kwargs, layout)` (`layout` the shape and dtype of an
    array result, None for a scalar, False for an array whose shape the data
    decide) and `("write", k, method, ref)`; a ref is
    `("n", node)` or `("c", constant)`. Node 0 is the gradient.

    Args:
        variables: the Variables the rule may read and write: `iterations`,
            the variable, its slots. Reading any other spoils the trace.
    """

    def __init__(self, variables, constants=()):
        self.slots = {id(variable): k for k, variable in enumerate(variables)}
        # Variables read as constants of the trace: the optimizer's learning rate, whose
        # change drops the programs (`_traced.RuleRunner.begin`), as a float rate's did.
        self.constants = {id(variable) for variable in constants}
        self.current = {}  # k -> the TracedValue of variable k's value now
        self.steps = []
        self.nodes = 1
        self.live = True  # recording (until the rule returns)
        self.spoiled = None  # why the trace cannot be replayed, once it cannot
        self.errors = np.geterr()  # (a rule that sets numpy's error state cannot be replayed)
        self.writing = False  # (while `write` does the write it records)

    def spoil(self, why):
        if self.live and self.spoiled is None:
            self.spoiled = why

    def effect(self, what):
        """Told of a Variable's array taken out or written directly, a random draw, a tape,
        an optimizer's update (the trace's own writes aside)."""
        if not self.writing:
            self.spoil(what)

    def usable(self, args, kwargs):
        """Whether a call on `args` / `kwargs` can be recorded (else it spoils the trace)."""
        if not self.live or self.spoiled is not None:
            return False
        for arg in args:
            kind = type(arg)
            if kind is TracedValue:
                if arg.trace is not self:
                    return False
            elif (kind is list or kind is tuple) and any(type(a) is TracedValue for a in arg):
                return False  # (nested values: not recorded)
        for key, value in kwargs.items():
            if key == "out" or key == "where" or type(value) is TracedValue:
                return False
        return True

    def _node(self, value, fixed=True):
        node = self.nodes
        self.nodes += 1
        return TracedValue(value, node, self, fixed)

    def gradient(self, array):
        """The gradient, node 0."""
        return TracedValue(array, 0, self)

    def intercept(self, variable, value):
        """Every Variable read (`engine.tensor.read_variable`): its traced value, or a spoil."""
        k = self.slots.get(id(variable))
        if k is None and id(variable) in self.constants:
            return value
        if k is None or not self.live or self.spoiled is not None:
            self.spoil(f"a read of Variable {getattr(variable, 'name', '?')!r}")
            return value  # (once spoiled, values are plain, as eagerly)
        current = self.current.get(k)
        if current is None:
            current = self.current[k] = self._node(value)
            self.steps.append(("read", current.node, k))
        return current

    def call(self, function, args, kwargs, shaped=True):
        """Computes `function(*args, **kwargs)` on the real values, recording it if it can.

        `shaped`: whether the result's shape follows from the operands' shapes.
        """
        plain = [_plain(arg) for arg in args]
        name = getattr(function, "__name__", "a call")
        if not self.usable(args, kwargs):
            self.spoil(name)
            return function(*plain, **kwargs)
        if np.geterr() != self.errors:
            self.spoil("numpy's error state, set by the rule")
            return function(*plain, **kwargs)
        try:
            result = function(*plain, **kwargs)
        except BaseException:
            # (the rule may catch it: a replay, where it may not be raised, would not)
            self.spoil(f"{name} raising")
            raise
        if not isinstance(result, (np.ndarray, np.generic)):
            self.spoil(f"{name} returning {type(result).__name__}")
            return result
        traced = [arg for arg in args if type(arg) is TracedValue]
        refs = tuple(("n", a.node) if type(a) is TracedValue else ("c", a) for a in args)
        if type(result) is np.ndarray:
            if function in _UFUNCS:
                function = _UFUNCS[function]
            elif function in _SWAPPED:
                function, refs = _SWAPPED[function], refs[::-1]
        value = self._node(result, shaped and all(arg.fixed for arg in traced))
        layout = (result.shape, result.dtype) if type(result) is np.ndarray else None
        if not value.fixed:
            layout = False  # (an array whose shape the data decide)
        self.steps.append(("call", value.node, function, refs, dict(kwargs), layout))
        return value

    def write(self, variable, value, method):
        """The optimizer's `assign*` during the trace: done for real, and recorded.

        The value is handed on as given (the Variable converts it, as it
        does eagerly), a traced one as the array it holds.
        """
        if isinstance(value, Tensor) and (type(value) is not Tensor or _traced(value._value)):
            value = value_of(value)  # (a Variable's read: its traced value, or a spoil)
        k = self.slots.get(id(variable))
        if k is None or not self.usable((value,), {}):
            self.spoil(f"a write to {getattr(variable, 'name', 'a variable')!r}")
        else:
            ref = ("n", value.node) if type(value) is TracedValue else ("c", value)
            self.steps.append(("write", k, method, ref))
        self.current.pop(k, None)  # (the next read is of the new value)
        self.writing = True
        try:
            getattr(variable, method)(_plain(value))
        finally:
            self.writing = False
