"""A traced `update_step` as generated Python: `Program` (see `_traced.py`).

A program is the trace's steps written out as straight-line numpy calls, in
two functions: `scalars(iterations)`, the calls on `iterations` alone, and
`replay(gradient, variables, scalars)`, the rest and the writes. This module
also says which programs may run packed (`Program.key`, `elementwise`).
"""

import math

import numpy as np

from minikeras.engine.variable import as_written
from minikeras.optimizers._traced_value import _astype

__all__ = ["Program"]

_SIMPLE = (int, float, bool, str, complex, type(None), np.generic)
# Functions (besides ufuncs) whose every element depends on the same element of each operand.
_ELEMENTWISE_FUNCTIONS = frozenset({_astype, np.clip, np.where})
_OUT_MIN_SIZE = 2048  # ufunc results this large are written into a program's own buffers
_CODE = {}  # generated source -> its code object (variables of one rule share their code)
_MOST_CODE = 256
_GENERATED = frozenset({"source", "scalars", "function", "signature"})


class Program:
    """A traced rule as generated functions: `scalars(iterations)` and `replay(gradient, ...)`.

    Every call and write is kept (a call may raise or warn, as it would
    eagerly), and the reads something uses; each intermediate is deleted
    after its last use, so that a Variable's array is unshared again when it
    is written (and the write can be in place, as in the eager rule). The
    steps that depend on `iterations` alone (a bias correction) are split off
    into `scalars`: programs whose `scalars` are the same code on the same
    constants share one run of it per update (`signature`).
    """

    def __init__(self, steps, variables, buffered=True, in_place=False, size=None, shared=None):
        kept = _needed(steps)
        if size is not None:  # an elementwise program run on packed arrays of `size` values
            kept = [_resized(step, size) for step in kept]
        self.steps = kept
        # A rule that writes `iterations` shares no `scalars`, and those shared so far in
        # the update are stale once it ran (`run`).
        self.writes_iterations = any(step[0] == "write" and step[1] == 0 for step in kept)
        scalar = set() if self.writes_iterations else _scalar_nodes(kept)
        self.key, self.elementwise = _shape_free_key(kept, variables, scalar)
        self.last_use = _last_uses(kept)
        self.variables = tuple(variables)
        self._plan = (scalar, buffered, in_place, shared)

    def __getattr__(self, name):
        # The generated functions are made on first use: a variable whose rule runs
        # packed never runs its own program, which is then only analysed.
        if name in _GENERATED and "_plan" in self.__dict__:
            self._generate()
            return self.__dict__[name]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def _generate(self):
        """Writes `scalars` and `replay` out, compiles them, and sets `source`,
        `scalars`, `function` and `signature`."""
        scalar, buffered, in_place, shared = self.__dict__.pop("_plan")
        kept, last_use, variables = self.steps, self.last_use, self.variables
        namespace, lines, head, keys = {}, [], [], []
        buffers = _Buffers(kept, scalar, namespace, {} if shared is None else shared)

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
                if ref[0] == "c":  # (taken as the Variable takes it: 0.1 as a float64 array)
                    ref = ("c", as_written(ref[1]))
                value = expression(ref)
                if method == "assign":
                    line = f"_copyto(v{k}, {value}, casting='unsafe')"
                else:
                    ufunc = "_add" if method == "assign_add" else "_subtract"
                    line = f"{ufunc}(v{k}, {value}, out=v{k}, casting='unsafe')"
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
        self.signature = (tuple(keys), tuple(shared)) if shared else None

    def writes_in_place_safely(self):
        """Whether the rule may write its arrays in place: nothing that is or may be a
        view of a variable's value read before a write to it (a read, or what a call
        other than a ufunc made of one) is used after that write, and `iterations`
        is not written."""
        last_use = self.last_use
        views = {}  # node -> the variables whose value it is or may be a view of
        for index, step in enumerate(self.steps):
            if step[0] == "read":
                views[step[1]] = {step[2]}
            elif step[0] == "call" and not isinstance(step[2], np.ufunc):
                views[step[1]] = set().union(*(views.get(r[1], ()) for r in step[3] if r[0] == "n"))
            elif step[0] == "write":
                k = step[1]
                if k == 0 or any(
                    k in seen and last_use.get(node, -1) > index for node, seen in views.items()
                ):
                    return False
        return True

    def run(self, gradient, cache):
        """Replays the rule on `gradient`; `cache` holds this update's shared `scalars`."""
        if self.signature is None:
            self.function(gradient, self.variables, ())
            if self.writes_iterations:
                cache.clear()  # (the variables after it compute theirs from the new value)
            return
        scalars = cache.get(self.signature)
        if scalars is None:
            scalars = cache[self.signature] = self.scalars(self.variables[0])
        self.function(gradient, self.variables, scalars)


class _Buffers:
    """The arrays a program's ufuncs write into (`out=`), made once and reused.

    A large array result of a ufunc gets a buffer of its shape and dtype,
    which goes back to the pool after the result's last use, for a later
    result; within a replay nothing outlives its last use (a write copies).
    The arrays themselves belong to the optimizer (`shared`, by layout), and
    its programs, which run one after another, use the same ones: a model's
    large variables of one shape cost one set. A result that a call other
    than a ufunc reads (which might return a view of it) keeps its buffer to
    itself.
    """

    def __init__(self, kept, scalar, namespace, shared):
        self.namespace, self.pool, self.owners = namespace, {}, {}
        self.shared, self.made = shared, {}
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
        else:  # the program's next array of this layout, shared with the optimizer's others
            arrays = self.shared.setdefault(layout, [])
            made = self.made[layout] = self.made.get(layout, 0) + 1
            if made > len(arrays):
                arrays.append(np.empty(layout[0], layout[1]))
            name = f"B{len(self.namespace)}"
            self.namespace[name] = arrays[made - 1]
        if node not in self.pinned:
            self.owners[node] = (layout, name)
        return name

    def give_back(self, nodes):
        for node in nodes:
            if node in self.owners:
                layout, name = self.owners.pop(node)
                self.pool[layout].append(name)


def _shape_free_key(kept, variables, from_iterations):
    """The program's steps as a key equal for the same code on the same constants, and
    whether every step treats each element alike (so that it may run on variables packed).

    Elementwise: each call is a ufunc that is not generalized (`np.matmul` and
    `np.vecdot` are), or a cast, `np.clip` or `np.where`, whose array operands
    and result have the variable's shape or none (a scalar), or a call on
    values of `iterations` alone (`from_iterations`, as `_scalar_nodes` gives
    them); and each constant, keyword arguments included, is a scalar.
    Scalar constants are keyed by `_constant_key`, others by identity.
    """
    shape = variables[1]._value.shape
    shapes = {0: shape}
    elementwise, key = True, [len(variables)]

    def constant(value):
        return _constant_key(value) if _small(value) else ("id", id(value))

    def operands(refs):
        return tuple(ref if ref[0] == "n" else ("c", constant(ref[1])) for ref in refs)

    for step in kept:
        if step[0] == "read":
            _, node, k = step
            shapes[node] = variables[k]._value.shape
            elementwise = elementwise and (shapes[node] == shape or k == 0)  # (0: iterations)
            key.append(step)
        elif step[0] == "write":
            key.append(("write", step[1], step[2], operands(step[3:])))
            ref = step[3]
            elementwise = elementwise and (ref[0] == "n" or _small(ref[1]))
        else:
            _, node, function, refs, kwargs, layout = step
            keywords = tuple((name, constant(value)) for name, value in sorted(kwargs.items()))
            key.append(("call", node, id(function), operands(refs), keywords))
            if layout is False:  # (an array whose shape the data decide)
                elementwise = False
            shapes[node] = layout[0] if layout else ()
            arrays = [shapes[r[1]] for r in refs if r[0] == "n"] + [shapes[node]]
            elementwise = (
                elementwise
                and all(ref[0] == "n" or _small(ref[1]) for ref in refs)
                and all(_small(value) or isinstance(value, np.dtype) for value in kwargs.values())
                and all(each in (shape, ()) for each in arrays)
                and (
                    (isinstance(function, np.ufunc) and function.signature is None)
                    or function in _ELEMENTWISE_FUNCTIONS
                    # (a call on values of `iterations` alone reads no element)
                    or all(r[1] in from_iterations for r in refs if r[0] == "n")
                )
            )
    return tuple(key), elementwise


def _last_uses(kept):
    """Node -> the index of the last step that reads it."""
    last_use = {}
    for index, step in enumerate(kept):
        for ref in _refs(step):
            if ref[0] == "n":
                last_use[ref[1]] = index
    return last_use


def _scalar_nodes(kept):
    """Nodes computed from `iterations` (variable 0) alone (for a rule that does not write it)."""
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
    """A constant as a key: a numpy value's dtype and bytes, a Python scalar's type and
    `repr` (exact for numbers), anything else its identity."""
    if isinstance(constant, (np.ndarray, np.generic)) and constant.size <= 1:
        return (constant.dtype.str, constant.shape, constant.tobytes())
    if isinstance(constant, (int, float, bool, str, complex, type(None), np.dtype)):
        return (type(constant).__name__, repr(constant))
    return ("id", id(constant))


def _key(step):
    """What makes a scalar step the same computation in another program."""
    if step[0] == "read":
        return ("read", step[1])
    _, node, function, refs, kwargs, _ = step
    return (
        node,
        id(function),
        tuple(ref if ref[0] == "n" else _constant_key(ref[1]) for ref in refs),
        tuple((name, _constant_key(value)) for name, value in sorted(kwargs.items())),
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
