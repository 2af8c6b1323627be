"""`TracedValue`: a value of a traced `update_step`, the real array and where it came from.

See `_traced.py` for the design. A `TracedValue` holds a real array; numpy
hands every call involving one to it, and it computes on the real arrays
and has its `Trace` (`_trace_record.py`) write the call down. Whatever would
take the data out of numpy's protocols hands out the real value and spoils
the trace. Python's operators on one are recorded as the ufuncs an ndarray's
are (`_UFUNCS`), so that a replay can call them with `out=`.
"""

import operator

import numpy as np

from minikeras.engine.tensor import TRACED_TYPES, Tensor

__all__ = ["TracedValue"]

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


def _plain(value):
    return value.value if type(value) is TracedValue else value
