"""A user's `update_step`, traced once and then replayed as straight-line numpy.

Design note. A rule written as Keras writes it (`update_step` in ops and
`self.assign_add`) costs ~1 µs of minikeras per op on top of numpy's own
work, a dozen or more ops per variable, at every step. Keras compiles the
rule (with the train step) and so runs only the arithmetic; this module
does the same in the only way that is safe in Python, by watching what the
rule does with the step's data rather than by reading its code:

- On a variable's second update (the first may set things up in Python),
  the rule runs on `TracedValue`s (`_traced_value.py`): the gradient, and
  every read of the variable, its slots and `iterations` in this thread
  (`engine.context`'s `read_interceptors`), each holding its real array.
  Every numpy call that touches one (through `mk.ops`, which dispatch on
  the type a traced value holds, or directly) computes on the real arrays
  and is written down; so are the optimizer's `assign`, `assign_add` and
  `assign_sub`. The step itself is therefore the eager step, number for
  number.
- Anything else done with the data hands out the real value and marks the
  trace unusable, and that variable's rule stays eager: a Python `float`,
  `bool`, `round` or format of it, `np.asarray`, an attribute numpy does
  not expose to protocols, an in-place operator or a write with `out=`, a
  numpy scalar an op takes as a Python number, the shape of a value whose
  shape the data decide (`np.flatnonzero`), a read of another Variable (or
  any Variable's `numpy()`), a write to a Variable other than the trace's
  own, a random draw, a `GradientTape`, another optimizer's update, a
  change of numpy's error state, a numpy call that raises (the rule may
  catch it). So no value computed from the data is frozen into the replay
  unnoticed; what the rule computes from Python constants (its
  hyperparameters) is frozen, as Keras's tracing freezes it.
- The replay is one generated Python function per variable: every recorded
  call in order (one may raise, as it would eagerly), the writes as the
  Variables' own `assign*`, large ufunc results written into buffers made
  once and shared by the optimizer's programs, each intermediate released
  after its last use (so writes stay in place). The calls on `iterations`
  alone (a bias correction) run once per update for all variables whose
  programs share them. The code is written and compiled on a program's
  first run.
- When the small variables' programs are one program (the same code on the
  same scalar constants) whose every call treats each element alike, it
  runs once on them packed, in place, as the built-ins' packed path runs
  (`RuleRunner.run_packed`); so does a rule declared `elementwise_rule`.
  Their own programs are then analysed but never written out.
- Guards, checked before every replay, packed or not: no tape or read
  observer is active, `trace_update_step` holds, the learning rate is the
  traced one, and the attributes of the optimizer and of its classes
  (minikeras's own aside) are bound to the objects they were bound to at
  tracing (a number, string or None set again to an equal value counts as
  the same). A change traces anew; after `_MOST_TRACES` changes in a row,
  each within `_RECENT` updates of the last (a schedule's new rate at every
  step makes them), the optimizer runs its rule eagerly for good. A replay that raises turns
  that rule eager (the eager rule might have caught the error; the writes
  before it are done).

What a trace cannot see is Python state the rule keeps outside its
attributes and Variables (a global counter, a list or dict it changes in
place, numpy's own random generator, warnings it records, reads in other
threads, a Variable's private `_value`): such
a rule sets `trace_update_step = False`, as a Keras rule with side effects
must avoid compilation.
"""

import math
import operator

import numpy as np

from minikeras.engine.context import state as _state
from minikeras.engine.context import tracing
from minikeras.engine.replay import RecordingsHolder
from minikeras.engine.variable import Variable
from minikeras.optimizers._buffers import FlatSlots, unpacked
from minikeras.optimizers._program import Program
from minikeras.optimizers._trace_record import Trace

__all__ = ["RuleRunner"]

_MOST_TRACES = 8  # times in a row programs may go stale within _RECENT updates of the last
_RECENT = 16
_IMMUTABLE = frozenset({int, float, bool, str, type(None)})
# Attributes the base sets as it goes, on which no rule depends.
_BOOKKEEPING = frozenset({"_packed_rule", "_packed_checked", "_rule_runner"})


def _snapshot(optimizer, classes):
    """What a replay depends on in Python: the optimizer's attributes (names and objects)
    and those of `classes` (objects)."""
    attributes = vars(optimizer)
    members = tuple(value for each in classes for value in vars(each).values())
    return tuple(attributes), tuple(attributes.values()), members


def _user_classes(cls):
    """The classes of `cls`'s MRO that are not minikeras's own."""
    return tuple(
        each
        for each in cls.__mro__
        if not each.__module__.startswith("minikeras.") and each is not object
    )


def _same(snapshot, other):
    """Whether two snapshots name the same attributes, bound to the same objects.

    A number, string, bool or None bound anew to an equal value counts as the
    same (a callback setting the rate each epoch), and the base's own
    bookkeeping (`_BOOKKEEPING`) may differ.
    """
    if other is None or len(snapshot[2]) != len(other[2]):
        return False
    if not all(map(operator.is_, snapshot[2], other[2])):
        return False
    if snapshot[0] == other[0] and all(map(operator.is_, snapshot[1], other[1])):
        return True
    ours, theirs = (
        {name: value for name, value in zip(*each[:2]) if name not in _BOOKKEEPING}
        for each in (snapshot, other)
    )
    return ours.keys() == theirs.keys() and all(_equal(ours[name], theirs[name]) for name in ours)


def _same_rate(rate, other):
    """Whether a learning rate is the traced one: equal, and -0.0 is not 0.0 (a rule
    multiplying by it writes -0.0 where 0.0 would write 0.0)."""
    return rate == other and (rate != 0 or math.copysign(1.0, rate) == math.copysign(1.0, other))


def _equal(value, other):
    """Whether two attribute values are the same: one object, or equal numbers (-0.0 and
    0.0 are not equal here, a NaN is itself), strings, bools or None."""
    if value is other:
        return True
    kind = type(value)
    if kind is not type(other) or kind not in _IMMUTABLE:
        return False
    return value.hex() == other.hex() if kind is float else value == other


def _trace(optimizer, gradient, variable, learning_rate):
    """Runs `update_step` once, traced; returns its `Program`, or why it cannot be replayed.

    The trace sees this thread's Variable reads (`read_interceptors`), so
    other threads keep seeing the Variables' arrays.
    """
    index = optimizer._get_variable_index(variable)
    variables = []
    for candidate in (optimizer._iterations, variable, *optimizer._slots[index]):
        if all(candidate is not seen for seen in variables):
            variables.append(candidate)
    rate = optimizer._learning_rate  # (a float rate's Variable: read as a constant)
    trace = Trace(variables, (rate,) if isinstance(rate, Variable) else ())
    outer = vars(optimizer).get("_rule_trace")  # (a rule that applies its own optimizer)
    _state.read_interceptors.append(trace.intercept)
    _state.effect_observers.append(trace.effect)
    tracing(+1)
    try:
        optimizer._rule_trace = trace
        optimizer.update_step(trace.gradient(gradient), variable, learning_rate)
    finally:
        trace.live = False
        tracing(-1)
        _state.read_interceptors.remove(trace.intercept)
        _state.effect_observers.remove(trace.effect)
        if outer is None:
            vars(optimizer).pop("_rule_trace", None)
        else:
            optimizer._rule_trace = outer
    if trace.spoiled is not None:
        return trace.spoiled
    if not any(step[0] == "write" for step in trace.steps):
        return "it writes nothing"
    return Program(trace.steps, variables, shared=optimizer._rule_runner.buffers)


class RuleRunner(RecordingsHolder):
    """Runs an optimizer's `update_step` for each variable: eagerly, traced, or replayed.

    `begin` is called once per update, before any `run`.

    Example:
        >>> class MySGD(mk.optimizers.Optimizer):
        ...     def update_step(self, gradient, variable, learning_rate):
        ...         self.assign_sub(variable, mk.ops.multiply(gradient, learning_rate))
        >>> w = mk.Variable([1.0, 2.0])
        >>> optimizer = MySGD(learning_rate=0.5)
        >>> for _ in range(3):  # eager, traced, replayed
        ...     optimizer.apply([np.ones(2)], [w])
        >>> w.numpy(), len(optimizer._rule_runner.programs)
        (array([-0.5,  0.5], dtype=float32), 1)
    """

    def __init__(self):
        self.programs = {}  # id(variable) -> Program, or None where it cannot be replayed
        self.seen = set()  # ids of variables updated once (eagerly)
        self.spoiled = {}  # id(variable) -> why its last trace cannot be replayed
        self.scalars = {}  # this update's shared `Program.scalars` results, by signature
        self.buffers = {}  # (shape, dtype) -> the arrays programs write into, shared by them
        self.snapshot = None
        self.cls = self.classes = None  # the optimizer's class, and those of its MRO guarded
        self.learning_rate = None
        self.invalidations = 0  # times programs went stale soon after the last time
        self.updates = self.invalidated = 0  # updates begun; the one that last found them stale
        self.members = None  # the indices of the variables small enough to pack
        self.packing = None  # whether they run packed (None: not decided since programs changed)
        self.flat = None  # their `FlatSlots`, for `run_packed`
        self.flat_program = None  # the program `run_packed` runs, writing in place
        self.unpackable = False  # (its replay raised: one by one until programs go stale)
        self.ready = False

    def begin(self, optimizer, learning_rate):
        """Decides whether this update may trace or replay; drops programs gone stale."""
        self.ready = False
        self.scalars.clear()
        if (
            self.invalidations >= _MOST_TRACES
            or not optimizer.trace_update_step
            or "update_step" in vars(optimizer)
            or _state.active_tapes
            or _state.read_observers
        ):
            return
        self.updates += 1
        if type(optimizer) is not self.cls:
            self.cls, self.classes = type(optimizer), _user_classes(type(optimizer))
        snapshot = _snapshot(optimizer, self.classes)
        if not _same_rate(learning_rate, self.learning_rate) or not _same(snapshot, self.snapshot):
            if self.snapshot is not None:  # (changes farther apart than that cost little)
                recent = self.updates - self.invalidated < _RECENT
                self.invalidations = self.invalidations + 1 if recent else 0
            self.invalidated = self.updates
            self.programs.clear()
            self.packing = self.flat_program = None
            self.unpackable = False
            self.learning_rate = learning_rate
        self.snapshot = snapshot
        self.ready = self.invalidations < _MOST_TRACES

    def may_pack(self, optimizer):
        """Whether the small variables' programs are one elementwise program, to run packed.

        The same program (the same code on the same constants) that treats
        each element alike gives, run once on the small variables packed
        together, what it gives run on each: so the base packs them, as for
        a rule declared `elementwise_rule`, without the declaration.
        """
        if not self.ready or self.unpackable:
            return False
        if self.packing is None:
            if self.members is None:
                self.members = FlatSlots.members(optimizer._trainable_variables, optimizer._slots)
            programs = [
                self.programs.get(id(optimizer._trainable_variables[i])) for i in self.members
            ]
            self.packing = (
                len(programs) > 1
                and all(program and program.elementwise for program in programs)
                and len({program.key for program in programs}) == 1
            )
        return self.packing

    def run_packed(self, optimizer, updates, grads):
        """Runs the small variables' one program once, in place on their packed arrays.

        As the built-ins' packed path does (`_apply._flat_update`): the
        gradients are copied into one array, the values and slots are views
        of packed arrays that nobody else holds (`FlatSlots.intact`), and the
        program writes those arrays in place, as `Variable.assign*` computes.

        Returns:
            The `(update, gradient)` pairs of the other variables, or None
            when the updates do not cover the packed ones in order or the
            rule reads a value after overwriting it (then nothing ran).
        """
        program = self.flat_program
        if not self.ready or self.unpackable:
            return None
        if program is None:
            source = self._packed_source(optimizer)
            if source is None:
                return None
            if not source.writes_in_place_safely():
                self.unpackable = True  # (until programs go stale; the stand-in's path runs)
                return None
            size = None  # (a declared rule's stand-in was traced on the packed arrays)
            if source.variables[1] is not getattr(optimizer._packed_rule, "variable", None):
                size = sum(optimizer._trainable_variables[i]._value.size for i in self.members)
            program = Program(
                source.steps, source.variables, in_place=True, size=size, shared=self.buffers
            )
            self.flat_program = program
        indices = self.members
        if any(index >= len(updates) or updates[index][0] != index for index in indices):
            return None
        flat = self.flat
        if flat is None:
            packed = optimizer._packed_rule  # (one packing of the slots, not two)
            flat = packed.slots if packed is not None else None
            if flat is None:
                flat = FlatSlots(indices, optimizer._trainable_variables, optimizer._slots)
            self.flat = flat
        if not flat.intact():
            flat.pack()
        if not flat.values_intact():
            flat.pack_values()
        np.concatenate([grads[index].reshape(-1) for index in indices], out=flat.gradient)
        scalars = ()
        try:
            if program.signature is not None:
                scalars = self.scalars.get(program.signature)
                if scalars is None:
                    scalars = program.scalars(optimizer._iterations)
                    self.scalars[program.signature] = scalars
            program.function(
                flat.gradient, (optimizer._iterations, flat.values, *flat.flats), scalars
            )
        except Exception as error:
            self.spoiled["packed"] = f"its packed replay raised {type(error).__name__}"
            self.packing, self.flat_program, self.unpackable = False, None, True
            for index in indices:  # (their programs are the same: eager, as for one)
                self._drop(id(optimizer._trainable_variables[index]), error)
            raise
        return unpacked(updates, grads, indices)

    def _drop(self, key, error):
        """A replay raised: that rule runs eagerly from now on (the error goes on up).

        The eager rule might have caught the error (a `try` around a numpy
        call), which a replay cannot; the writes before the error are done.
        """
        self.programs[key] = None
        self.spoiled[key] = f"its replay raised {type(error).__name__}"

    def _packed_source(self, optimizer):
        """The program to run packed: the small variables' one elementwise program, or
        the stand-in's of a rule declared `elementwise_rule`; None if there is none yet."""
        if self.may_pack(optimizer):
            return self.programs[id(optimizer._trainable_variables[self.members[0]])]
        packed = optimizer._packed_rule
        if not (optimizer.elementwise_rule and packed is not None):
            return None
        source = self.programs.get(id(packed.variable))
        if source is not None:
            self.members = packed.indices  # (the declared rule packs these)
        return source

    def adopt(self, optimizer, packed):
        """Gives `packed`'s stand-in the program of its first member, written for any shape."""
        stand_in = packed.variable
        if id(stand_in) not in self.programs:
            first = self.programs[id(optimizer._trainable_variables[packed.indices[0]])]
            variables = (first.variables[0], stand_in, *first.variables[2:])
            self.programs[id(stand_in)] = Program(first.steps, variables, buffered=False)
            self.seen.add(id(stand_in))

    def run(self, optimizer, gradient, variable, learning_rate):
        """One variable's update: replayed if it can be, traced on its second update."""
        if self.ready:
            key = id(variable)
            program = self.programs.get(key, False)
            if program:
                try:
                    program.run(gradient, self.scalars)
                except Exception as error:
                    self._drop(key, error)
                    raise
                return
            if program is False and key in self.seen:
                program = _trace(optimizer, gradient, variable, learning_rate)
                if type(program) is str:
                    self.spoiled[key], program = program, None
                self.programs[key] = program
                self.packing = None
                return
            self.seen.add(key)
        optimizer.update_step(gradient, variable, learning_rate)
