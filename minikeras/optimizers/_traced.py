"""A user's `update_step`, traced once and then replayed as straight-line numpy.

Design note. A rule written as Keras writes it (`update_step` in ops and
`self.assign_add`) costs ~1 µs of minikeras per op on top of numpy's own
work, a dozen or more ops per variable, at every step. Keras compiles the
rule (with the train step) and so runs only the arithmetic; this module
does the same in the only way that is safe in Python, by watching what the
rule does with the step's data rather than by reading its code:

- On its second update of a variable (the first may set things up in
  Python), the rule runs on `TracedValue`s: the gradient and the values of
  the variable, its slots and `iterations` are wrapped, each holding its
  real array. Every numpy call that touches one (through `mk.ops`, which
  hand such values to numpy unchanged, or directly) computes on the real
  arrays and is written down; so are the optimizer's `assign`,
  `assign_add` and `assign_sub`. The step itself is therefore the eager
  step, number for number.
- Anything else done with the data (a Python `float` or `bool` of it,
  `np.asarray`, an attribute numpy does not expose to protocols, a write
  with `out=`, a read of another Variable, a `Variable.assign` of its own)
  hands out the real value and marks the trace unusable: that variable's
  rule stays eager. So no value computed from the data can be frozen into
  the replay unnoticed; whatever the rule computes from Python constants
  (its hyperparameters) is frozen, as Keras's tracing freezes it.
- The replay is one generated Python function per variable: the numpy calls
  in order, the writes as the Variables' own `assign*` methods, each
  intermediate released after its last use (so writes stay in place).
- Guards, checked before a replay: no tape or read observer is active, the
  learning rate is the traced one, and the optimizer's attributes are bound
  to the objects they were bound to at tracing (a number set again, even to
  the same value, counts as a change). A change traces anew; after `_MOST_TRACES` such changes (a
  schedule's new rate at every step soon makes them) the optimizer runs its
  rule eagerly for good.

What a trace cannot see is Python state the rule keeps outside its
attributes and Variables (a global counter, a list it appends to, a numpy
array it changes in place): such a rule sets `trace_update_step = False` on
its class, as a Keras rule with side effects must avoid compilation.
"""

import math
import operator

import numpy as np

from minikeras.engine.context import state as _state
from minikeras.optimizers._buffers import FlatSlots
from minikeras.optimizers._trace_record import Trace, _astype

__all__ = ["RuleRunner"]

_MOST_TRACES = 8  # times programs may go stale within _RECENT updates before the rule stays eager
_RECENT = 16
_SIMPLE = (int, float, bool, str, bytes, complex, type(None), np.generic)
_IMMUTABLE = frozenset({int, float, bool, str, type(None)})
# Attributes the base sets as it goes, on which no rule depends.
_BOOKKEEPING = frozenset({"_packed_rule", "_packed_checked", "_rule_runner"})
# Functions (besides ufuncs) whose every element depends on the same element of each operand.
_ELEMENTWISE_FUNCTIONS = frozenset({_astype, np.clip, np.where})
_OUT_MIN_SIZE = 2048
_CODE = {}  # generated source -> its code object (variables of one rule share their code)
_MOST_CODE = 256  # ufunc results this large are written into a program's own buffers


class _Program:
    """A traced rule as generated functions: `scalars(iterations)` and `replay(gradient, ...)`.

    Only the steps a write depends on are kept; each intermediate is deleted
    after its last use, so that a Variable's array is unshared again when it
    is written (and the write can be in place, as in the eager rule). The
    steps that depend on `iterations` alone (a bias correction) are split off
    into `scalars`: programs whose `scalars` are the same code on the same
    constants share one run of it per update (`signature`).
    """

    def __init__(self, steps, variables, buffered=True, in_place=False, size=None):
        kept = _needed(steps)
        if size is not None:  # an elementwise program run on packed arrays of `size` values
            kept = [_resized(step, size) for step in kept]
        self.steps = kept
        self.key, self.elementwise = _shape_free_key(kept, variables)
        scalar = _scalar_nodes(kept)
        last_use = {}
        for index, step in enumerate(kept):
            for ref in _refs(step):
                if ref[0] == "n":
                    last_use[ref[1]] = index
        namespace, lines, head, keys = {}, [], [], []
        buffers = _Buffers(kept, scalar, namespace)

        def expression(ref):
            if ref[0] == "n":
                return f"t{ref[1]}"
            name = f"C{len(namespace)}"
            namespace[name] = ref[1]
            return name

        for index, step in enumerate(kept):
            if step[0] == "read":
                _, node, k = step
                line = f"t{node} = v{k}" if in_place and k else f"t{node} = v{k}._value"
            elif step[0] == "call":
                _, node, function, refs, kwargs, _ = step
                name = f"F{len(namespace)}"
                namespace[name] = function
                args = [expression(ref) for ref in refs]
                if kwargs:
                    keywords = f"K{len(namespace)}"
                    namespace[keywords] = kwargs
                    args.append(f"**{keywords}")
                out = (
                    buffers.take(step, index, last_use) if buffered and node not in scalar else None
                )
                if out is not None:
                    args.append(f"out={out}")
                line = f"{name}({', '.join(args)})"
                if node in last_use:  # (a result nothing uses is not kept)
                    line = f"t{node} = {line}"
            elif in_place:  # into the array itself, as `Variable.assign*` computes it
                _, k, method, ref = step
                if method == "assign":
                    line = f"_copyto(v{k}, {expression(ref)}, casting='unsafe')"
                else:
                    ufunc = "_add" if method == "assign_add" else "_subtract"
                    line = f"{ufunc}(v{k}, {expression(ref)}, out=v{k}, casting='unsafe')"
            else:
                _, k, method, ref = step
                line = f"v{k}.{method}({expression(ref)})"
            if step[0] != "write" and step[1] in scalar:
                head.append(line)
                keys.append(_key(step))
                continue
            lines.append(line)
            dead = sorted(n for n, last in last_use.items() if last == index and n not in scalar)
            if dead:
                lines.append("del " + ", ".join(f"t{n}" for n in dead))
                buffers.give_back(dead)
        outside = _used_outside(kept, scalar)
        shared = [n for n in sorted(scalar) if n in outside]
        names = "".join(f"t{n}, " for n in shared)
        unpack = ", ".join(f"v{k}" for k in range(len(variables)))
        source = "def scalars(v0):\n" + "".join(f"    {line}\n" for line in head)
        source += f"    return ({names})\n"
        source += f"def replay(t0, V, S):\n    {unpack}, = V\n"
        source += f"    {names}= S\n" if shared else ""
        source += "".join(f"    {line}\n" for line in lines)
        namespace.update(_copyto=np.copyto, _add=np.add, _subtract=np.subtract)
        code = _CODE.get(source)
        if code is None:
            if len(_CODE) >= _MOST_CODE:
                _CODE.clear()
            code = _CODE[source] = compile(source, "<minikeras update_step>", "exec")
        exec(code, namespace)
        self.source = source
        self.scalars, self.function = namespace["scalars"], namespace["replay"]
        self.signature = tuple(keys) if shared else None
        self.variables = tuple(variables)

    def writes_in_place_safely(self):
        """Whether the rule may write its arrays in place: no read of a variable made
        before a write to it is used after that write (it would see the new value),
        and `iterations` is not written."""
        last_use = {}
        for index, step in enumerate(self.steps):
            for ref in _refs(step):
                if ref[0] == "n":
                    last_use[ref[1]] = index
        reads = {}  # variable -> its read nodes so far
        for index, step in enumerate(self.steps):
            if step[0] == "read":
                reads.setdefault(step[2], []).append(step[1])
            elif step[0] == "write":
                k = step[1]
                if k == 0 or any(last_use.get(node, -1) > index for node in reads.get(k, ())):
                    return False
        return True

    def run(self, gradient, cache):
        """Replays the rule on `gradient`; `cache` holds this update's shared `scalars`."""
        if self.signature is None:
            self.function(gradient, self.variables, ())
            return
        scalars = cache.get(self.signature)
        if scalars is None:
            scalars = cache[self.signature] = self.scalars(self.variables[0])
        self.function(gradient, self.variables, scalars)


class _Buffers:
    """The arrays a program's ufuncs write into (`out=`), made once and reused.

    A large array result of a ufunc gets a buffer of its shape and dtype,
    which goes back to the pool after the result's last use, for a later
    result; within a replay nothing outlives its last use (a write copies),
    and across replays the program is the buffers' only user. A result that a
    call other than a ufunc reads (which might return a view of it) keeps its
    buffer to itself.
    """

    def __init__(self, kept, scalar, namespace):
        self.namespace, self.pool, self.owners = namespace, {}, {}
        self.pinned = {
            ref[1]
            for step in kept
            if step[0] == "call" and not isinstance(step[2], np.ufunc)
            for ref in step[3]
            if ref[0] == "n"
        }

    def take(self, step, index, last_use):
        """The name of the buffer `step` (a call) writes into, or None for a plain call.

        An operand whose last use is this step hands its buffer on (a ufunc
        writing over its own operand, element for element, is exact), which
        keeps fewer arrays in cache.
        """
        _, node, function, refs, kwargs, layout = step
        if (
            not layout
            or not isinstance(function, np.ufunc)
            or function.nout != 1
            or "out" in kwargs
            or math.prod(layout[0]) < _OUT_MIN_SIZE
        ):
            return None
        inherited = [
            ref[1]
            for ref in refs
            if ref[0] == "n" and last_use.get(ref[1]) == index and ref[1] in self.owners
        ]
        inherited = [n for n in inherited if self.owners[n][0] == layout]
        free = self.pool.setdefault(layout, [])
        if inherited:
            name = self.owners.pop(inherited[0])[1]
        elif free:
            name = free.pop()
        else:
            name = f"B{len(self.namespace)}"
            self.namespace[name] = np.empty(layout[0], layout[1])
        if node not in self.pinned:
            self.owners[node] = (layout, name)
        return name

    def give_back(self, nodes):
        for node in nodes:
            if node in self.owners:
                layout, name = self.owners.pop(node)
                self.pool[layout].append(name)


def _shape_free_key(kept, variables):
    """The program's steps as a key equal for the same code on the same constants, and
    whether every step treats each element alike (so that it may run on variables packed).

    Elementwise: each call is a ufunc that is not generalized (`np.matmul` and
    `np.vecdot` are), or a cast, `np.clip` or `np.where`, whose
    array operands and result have the variable's shape or none (a scalar), or
    a call on scalars alone, and each constant is a scalar.
    Constants are keyed by their `repr` when they are scalars, else by identity.
    """
    shape = variables[1]._value.shape
    shapes = {0: shape}
    elementwise, key = True, [len(variables)]

    def operands(refs):
        return tuple(
            ref if ref[0] == "n" else ("c", _constant_key(ref[1]) if _small(ref[1]) else id(ref[1]))
            for ref in refs
        )

    for step in kept:
        if step[0] == "read":
            _, node, k = step
            shapes[node] = variables[k]._value.shape
            elementwise = elementwise and shapes[node] in (shape, ())
            key.append(step)
        elif step[0] == "write":
            key.append(("write", step[1], step[2], operands(step[3:])))
        else:
            _, node, function, refs, kwargs, layout = step
            key.append(("call", node, id(function), operands(refs), repr(sorted(kwargs.items()))))
            if layout is False:  # (an array whose shape the data decide)
                elementwise = False
            shapes[node] = layout[0] if layout else ()
            arrays = [shapes[r[1]] for r in refs if r[0] == "n"] + [shapes[node]]
            elementwise = (
                elementwise
                and all(ref[0] == "n" or _small(ref[1]) for ref in refs)
                and all(each in (shape, ()) for each in arrays)
                # (a call on scalars alone reads no element: any function will do)
                and (
                    (isinstance(function, np.ufunc) and function.signature is None)
                    or function in _ELEMENTWISE_FUNCTIONS
                    or not any(arrays)
                )
            )
    return tuple(key), elementwise


def _scalar_nodes(kept):
    """Nodes computed from `iterations` (variable 0) alone, when the rule does not write it."""
    if any(step[0] == "write" and step[1] == 0 for step in kept):
        return set()
    scalar = set()
    for step in kept:
        if step[0] == "read":
            from_iterations = step[2] == 0
        elif step[0] == "call":
            refs = step[3]
            from_iterations = all(
                ref[1] in scalar if ref[0] == "n" else _small(ref[1]) for ref in refs
            )
        else:
            from_iterations = False
        if from_iterations:
            scalar.add(step[1])
    return scalar


def _used_outside(kept, scalar):
    """The nodes read by the steps that are not scalar steps."""
    return {
        ref[1]
        for step in kept
        if step[0] == "write" or step[1] not in scalar
        for ref in _refs(step)
        if ref[0] == "n"
    }


def _small(constant):
    return isinstance(constant, _SIMPLE) or (
        isinstance(constant, np.ndarray) and constant.ndim == 0
    )


def _constant_key(constant):
    """A scalar constant as a key: its type and its bytes (exact, and cheaper than `repr`)."""
    if isinstance(constant, (np.ndarray, np.generic)):
        return (constant.dtype.str, constant.tobytes())
    return (type(constant).__name__, repr(constant))


def _key(step):
    """What makes a scalar step the same computation in another program."""
    if step[0] == "read":
        return ("read", step[1])
    _, node, function, refs, kwargs, _ = step
    return (
        node,
        id(function),
        tuple(ref if ref[0] == "n" else _constant_key(ref[1]) for ref in refs),
        repr(sorted(kwargs.items())),
    )


def _resized(step, size):
    """A step of an elementwise program, its array result made `size` values long."""
    if step[0] != "call" or not step[5]:
        return step
    return (*step[:5], ((size,), step[5][1]))


def _refs(step):
    if step[0] == "call":
        return step[3]
    if step[0] == "write":
        return (step[3],)
    return ()


def _needed(steps):
    """The steps to replay: every call and write (a call may raise or warn, as it would
    eagerly), and the reads something uses."""
    used = {ref[1] for step in steps for ref in _refs(step) if ref[0] == "n"}
    return [step for step in steps if step[0] != "read" or step[1] in used]


def _snapshot(optimizer):
    """What a replay depends on in Python: the optimizer's attributes (names and objects)
    and its class's own attributes (objects)."""
    attributes = vars(optimizer)
    return tuple(attributes), tuple(attributes.values()), tuple(vars(type(optimizer)).values())


def _same(snapshot, other):
    """Whether two snapshots name the same attributes, bound to the same objects.

    A number, string, bool or None bound anew to an equal value counts as the
    same (a callback setting the rate each epoch), and the base's own
    bookkeeping (`_BOOKKEEPING`) may differ.
    """
    if other is None or not all(map(operator.is_, snapshot[2], other[2])):
        return False
    if snapshot[0] == other[0] and all(map(operator.is_, snapshot[1], other[1])):
        return True
    ours, theirs = (
        {name: value for name, value in zip(*each[:2]) if name not in _BOOKKEEPING}
        for each in (snapshot, other)
    )
    return ours.keys() == theirs.keys() and all(_equal(ours[name], theirs[name]) for name in ours)


def _equal(value, other):
    if value is other:
        return True
    kind = type(value)
    return kind is type(other) and kind in _IMMUTABLE and value == other


def _trace(optimizer, gradient, variable, learning_rate):
    """Runs `update_step` once, traced; returns its `_Program`, or why it cannot be replayed.

    The trace sees this thread's Variable reads (`read_interceptors`), so
    other threads keep seeing the Variables' arrays.
    """
    index = optimizer._get_variable_index(variable)
    variables = []
    for candidate in (optimizer._iterations, variable, *optimizer._slots[index]):
        if all(candidate is not seen for seen in variables):
            variables.append(candidate)
    trace = Trace(variables)
    _state.read_interceptors.append(trace.intercept)
    _state.effect_observers.append(trace.effect)
    optimizer._rule_trace = trace
    try:
        optimizer.update_step(trace.gradient(gradient), variable, learning_rate)
    finally:
        del optimizer._rule_trace
        _state.read_interceptors.remove(trace.intercept)
        _state.effect_observers.remove(trace.effect)
        trace.live = False
    if trace.spoiled is not None:
        return trace.spoiled
    if not any(step[0] == "write" for step in trace.steps):
        return "it writes nothing"
    return _Program(trace.steps, variables)


class RuleRunner:
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
        self.programs = {}  # id(variable) -> _Program, or None where it cannot be replayed
        self.seen = set()  # ids of variables updated once (eagerly)
        self.spoiled = {}  # id(variable) -> why its last trace cannot be replayed
        self.scalars = {}  # this update's shared `_Program.scalars` results, by signature
        self.snapshot = None
        self.learning_rate = None
        self.invalidations = 0  # times programs went stale soon after the last time
        self.updates = self.invalidated = 0  # updates begun; the one that last found them stale
        self.members = None  # the indices of the variables small enough to pack
        self.packing = None  # whether they run packed (None: not decided since programs changed)
        self.flat = None  # their `FlatSlots`, for `run_packed`
        self.flat_program = None  # the program `run_packed` runs, writing in place
        self.ready = False

    def begin(self, optimizer, learning_rate):
        """Decides whether this update may trace or replay; drops programs gone stale."""
        self.ready = False
        self.scalars.clear()
        if (
            self.invalidations > _MOST_TRACES
            or not optimizer.trace_update_step
            or "update_step" in vars(optimizer)
            or _state.active_tapes
            or _state.read_observers
        ):
            return
        self.updates += 1
        snapshot = _snapshot(optimizer)
        if learning_rate != self.learning_rate or not _same(snapshot, self.snapshot):
            if self.snapshot is not None and self.updates - self.invalidated < _RECENT:
                self.invalidations += 1  # (changes farther apart than that cost little)
            self.invalidated = self.updates
            self.programs.clear()
            self.packing = self.flat_program = None
            self.learning_rate = learning_rate
        self.snapshot = snapshot
        self.ready = self.invalidations <= _MOST_TRACES

    def may_pack(self, optimizer):
        """Whether the small variables' programs are one elementwise program, to run packed.

        The same program (the same code on the same constants) that treats
        each element alike gives, run once on the small variables packed
        together, what it gives run on each: so the base packs them, as for
        a rule declared `elementwise_rule`, without the declaration.
        """
        if not self.ready:
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
        if program is None:
            source = self._packed_source(optimizer)
            if source is None or not source.writes_in_place_safely():
                return None
            size = None  # (a declared rule's stand-in was traced on the packed arrays)
            if source.variables[1] is not getattr(optimizer._packed_rule, "variable", None):
                size = sum(optimizer._trainable_variables[i]._value.size for i in self.members)
            program = _Program(source.steps, source.variables, in_place=True, size=size)
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
            self._drop(id(flat), error)
            self.packing, self.flat_program = False, None
            raise
        members = set(indices)
        return [(update, grad) for update, grad in zip(updates, grads) if update[0] not in members]

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
        if not (self.ready and optimizer.elementwise_rule and packed is not None):
            return None
        self.members = packed.indices
        return self.programs.get(id(packed.variable))

    def adopt(self, optimizer, packed):
        """Gives `packed`'s stand-in the program of its first member, written for any shape."""
        stand_in = packed.variable
        if id(stand_in) not in self.programs:
            first = self.programs[id(optimizer._trainable_variables[packed.indices[0]])]
            variables = (first.variables[0], stand_in, *first.variables[2:])
            self.programs[id(stand_in)] = _Program(first.steps, variables, buffered=False)
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
