"""What a traced `update_step` records: the `Trace` of its reads, numpy calls and writes.

See `_traced.py` for the design. The rule runs on `TracedValue`s
(`_traced_value.py`, re-exported here), each holding a real array; numpy
hands every call involving one to it, and it computes on the real arrays
and has the `Trace` write the call down, or, for a call that would take the
data out of numpy's protocols, spoil the trace.
"""

import numpy as np

from minikeras.engine.tensor import Tensor, value_of
from minikeras.optimizers._traced_value import _SWAPPED, _UFUNCS, TracedValue, _plain

__all__ = ["Trace", "TracedValue"]


def _traced(value):
    return type(value) is TracedValue


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
