"""The Python function a `replay.Program` runs: its recorded calls, written out in order.

A recorded step is a short, fixed list of calls. Walking a list of step
records at every replay (fetching each step's forward, arguments and
parents, summing gradients in a list) costs more Python than the calls it
makes on a small model; so a `Program` writes the walk out once, as the
source of one function, and compiles it (as `collections.namedtuple` and
`dataclasses` do). Every value is a local named after its slot (`v7`), every
gradient too (`d7`, or `t7` while several ops' gradients are still being
summed into it); the ops, their VJP makers and constants are the function's
globals. `Program.source` shows the result:

    >>> w = mk.Variable([2.0, 3.0])
    >>> x = np.array([1.0, 10.0], np.float32)
    >>> with mk.GradientTape() as tape:
    ...     with mk.engine.replay.Recorder(tape._trace_id) as recorder:
    ...         loss = mk.ops.sum(w * x)
    >>> program, _ = mk.engine.replay.Program.build(recorder, tape, [x], [w], [loss])
    >>> print(program.source)
    def replay(v0, v1):
        a = (v1, v0)
        v2 = f0(*a, **k0)
        p2 = m0(n0, v2, a, k0)
        a = (v2, c4, c5, c6)
        v3 = f1(*a, **k1)
        p3 = m1(n1, v3, a, k1)
        del a
        try:
            d3 = seed
            q0, = p3(d3)
            d2 = _densified(q0)
            del q0, d3, p3
            _backward._overwritable = (
                d2 if type(d2) is _ndarray and d2.base is None and _refcount(d2) <= _SOLE else None
            )
            q0, = p2(d2)
            _backward._overwritable = None
            d1 = _densified(q0)
            del q0, d2, p2
            if d1.dtype != s0:
                d1 = d1.astype(s0)
            return [v3], [d1]
        finally:
            _backward._overwritable = None

Slots 0 and 1 are the input `x` and the Variable's value, 2 and 3 the
results of `multiply` (`f0`) and `sum` (`f1`), 4 to 6 the constants `sum`
was given (its axis...); `a` is each op's argument tuple, `p2` and `p3` their
VJPs, `d3 = seed` the loss's gradient (ones). A VJP may write into the
gradient it is handed when nothing else holds it, as in `GradientTape`'s
backward pass (`backward.may_overwrite`), hence `_overwritable`.
"""

import functools
import sys

import numpy as np

from minikeras.engine import backward
from minikeras.engine.backward import add_gradient

__all__ = ["write_forward", "write_replay"]


def write_replay(steps, param_count, outputs, order, constants, source_dtypes, seed, assigns=()):
    """Writes and compiles the replay function of a recorded step.

    Args:
        steps: the program's steps (`replay._Step`: forward, maker, fused,
            argnums, kwargs, guard, refs, pulls, slot).
        param_count: how many slots are parameters (inputs, then sources).
        outputs: the output slots, the first being the loss.
        order: step numbers in the order the tape's backward pass visits them.
        constants: `{slot: value}` for the Python constants the ops received.
        source_dtypes: per source, the dtype its gradient must have (a
            generator leaves the cast to the tape, which sums first).
        seed: the loss's gradient, ones (read-only); or None for a generator.
        assigns: `(variable, slot)` per Variable the step assigns a value its ops
            computed, in order: done once every step ran (every guard said yes).

    Returns:
        `(function, source, complete, counts)`: `function(*inputs,
        *source_values)` returns `(output values, gradients)`, or None when a
        step's guard says no; `complete` says that no gradient is None.
        Without a `seed` the function is a generator, the forward pass and the
        backward pass of a node that a tape records (`models.replayed_call`):
        it first yields the output values (or None, a guard having said no),
        is then sent the first output's gradient, and yields the gradients,
        `counts[i]` of them for source `i`: a source several ops read gets
        each op's gradient, in the tape's order, for the tape to add to what
        the rest of its graph gives that source, as it adds them eagerly.
    """
    seeded = seed is not None
    namespace = {"add_gradient": add_gradient, "_densified": _densified, "seed": seed}
    namespace.update(_backward=backward, _ndarray=np.ndarray, _refcount=sys.getrefcount)
    namespace["_SOLE"] = _SOLE_REFS
    namespace.update((f"c{slot}", value) for slot, value in constants.items())

    def name(slot):
        return f"c{slot}" if slot in constants else f"v{slot}"

    loss = outputs[0]
    reached, pulled = {loss}, set()
    for index in order:
        step = steps[index]
        if step.slot in reached and step.argnums:
            pulled.add(index)
            reached.update(slot for slot, _ in step.pulls)
    lines = [f"def replay({', '.join(f'v{slot}' for slot in range(param_count))}):"]
    made = set()
    for index, step in enumerate(steps):
        namespace[f"f{index}"], namespace[f"m{index}"] = step.forward, step.maker
        namespace[f"n{index}"], namespace[f"k{index}"] = step.argnums, step.kwargs
        lines.append(f"    a = {_tuple([name(ref) for ref in step.refs])}")
        made.add("a")
        if step.guard is not None:
            namespace[f"g{index}"] = step.guard
            lines += [f"    if not g{index}(a):"]
            lines += ["        return None"] if seeded else ["        yield None", "        return"]
        if step.fused:
            lines.append(f"    v{step.slot}, r = f{index}(*a)")
            made.add("r")
        else:
            lines.append(f"    v{step.slot} = f{index}(*a, **k{index})")
        if index in pulled:
            extra = "r" if step.fused else f"k{index}"
            lines.append(f"    p{step.slot} = m{index}(n{index}, v{step.slot}, a, {extra})")
    for index, (variable, slot) in enumerate(assigns):
        namespace[f"w{index}"] = variable
        lines.append(f"    w{index}.assign({name(slot)})")
    if made:
        lines.append(f"    del {', '.join(sorted(made))}")
    if not seeded:  # the gradient a tape pulls back to the node, in the place of ones
        lines.append(f"    seed = yield [{', '.join(map(name, outputs))}]")
    summed = {slot for index in pulled for slot, shared in steps[index].pulls if shared}
    first_source = param_count - len(source_dtypes)
    # A generator hands over each gradient of a source read several times (see Returns).
    handed = {} if seeded else {s: [] for s in summed if first_source <= s < param_count}
    back = [f"t{slot} = None" for slot in sorted(summed - {loss} - set(handed))]
    if loss in summed:
        back.append(f"t{loss} = (seed, False)")
    else:  # (a copy where the loss is a source: its gradient goes to the optimizer)
        back.append(f"d{loss} = seed" + (".copy()" if loss < param_count else ""))
    for index in order:
        if index not in pulled:
            continue
        step, slot = steps[index], steps[index].slot
        if slot in summed:
            back += [f"d{slot} = t{slot}[0]", f"del t{slot}"]
        if step.fused and not any(shared for _, shared in step.pulls):
            targets = _tuple([f"d{parent}" for parent, _ in step.pulls], parentheses=False)
            direct = True
        else:
            # (unpacked: autograd's VJPs give their gradients as a generator)
            pulled_names = [f"q{position}" for position in range(len(step.pulls))]
            targets = _tuple(pulled_names, parentheses=False)
            direct = False
        if slot != loss or loss in summed:  # (the seed is never written into)
            # As `backward._pull_back`: the VJP may write into a gradient nothing else holds.
            back += [
                "_backward._overwritable = (",
                f"    d{slot} if type(d{slot}) is _ndarray and d{slot}.base is None "
                f"and _refcount(d{slot}) <= _SOLE else None",
                ")",
                f"{targets} = p{slot}(d{slot})",
                "_backward._overwritable = None",
            ]
        else:
            back.append(f"{targets} = p{slot}(d{slot})")
        if direct:
            back.append(f"del d{slot}, p{slot}")
        else:
            for q, (parent, shared) in zip(pulled_names, step.pulls):
                if parent in handed:
                    given = f"e{parent}_{len(handed[parent])}"
                    handed[parent].append(given)
                    back.append(f"{given} = {q}")
                elif shared:
                    back.append(f"t{parent} = add_gradient(t{parent}, {q})")
                elif step.fused:
                    back.append(f"d{parent} = {q}")
                else:  # autograd's own VJPs may give a sparse gradient (indexing)
                    back.append(f"d{parent} = _densified({q})")
            back.append(f"del {', '.join(pulled_names)}, d{slot}, p{slot}")
    gradients, counts = [], []
    for position, dtype in enumerate(source_dtypes):
        slot = first_source + position
        if slot not in reached:
            gradients.append("None")
            counts.append(1)
            continue
        if slot in handed:
            gradients += handed[slot]
            counts.append(len(handed[slot]))
            continue
        counts.append(1)
        if slot in summed:
            back.append(f"d{slot} = t{slot}[0]")
        if seeded:  # (a tape casts its roots' gradients once it has summed them, as eagerly)
            namespace[f"s{position}"] = dtype
            back += [
                f"if d{slot}.dtype != s{position}:",
                f"    d{slot} = d{slot}.astype(s{position})",
            ]
        gradients.append(f"d{slot}")
    if seeded:
        back.append(f"return [{', '.join(map(name, outputs))}], [{', '.join(gradients)}]")
    else:
        back.append(f"gradients = [{', '.join(gradients)}]")
    lines += ["    try:", *[f"        {line}" for line in back]]
    lines += ["    finally:", "        _backward._overwritable = None"]
    if not seeded:
        lines.append("    yield gradients")
    source = "\n".join(lines)
    exec(_compiled(source), namespace)  # noqa: S102
    return namespace["replay"], source, "None" not in gradients, counts


def write_forward(steps, param_count, outputs, constants):
    """Writes and compiles the forward pass alone of a recorded step (an inference call).

    The same forwards on the same arguments as `write_replay`'s function,
    without VJPs, except where an op registered one for inference
    (`replay.replay_inference`: max pooling without the winners a backward
    pass needs); a fused op's residuals are dropped at once, and every value
    once its last reader ran, as an eager call outside a tape lets them go.

    Args:
        steps: the program's steps (as `write_replay`'s).
        param_count: how many slots are parameters (inputs, then sources).
        outputs: the output slots.
        constants: `{slot: value}` for the Python constants the ops received.

    Returns:
        `(function, source)`: `function(*inputs, *source_values)` returns the
        output values (a list), or None when a step's guard says no.
    """
    namespace = {f"c{slot}": value for slot, value in constants.items()}

    def name(slot):
        return f"c{slot}" if slot in constants else f"v{slot}"

    first_constant = param_count + len(steps)  # (values are locals, constants globals)
    last_use = {}  # slot -> the last step reading it: freed right after, as eagerly
    for index, step in enumerate(steps):
        last_use.update((ref, index) for ref in step.refs)
    lines = [f"def forward({', '.join(f'v{slot}' for slot in range(param_count))}):"]
    for index, step in enumerate(steps):
        forward = step.forward if step.inference is None else step.inference
        namespace[f"f{index}"], namespace[f"k{index}"] = forward, step.kwargs
        arguments = ", ".join(name(ref) for ref in step.refs)
        if step.guard is not None:
            namespace[f"g{index}"] = step.guard
            listed = _tuple([name(ref) for ref in step.refs])
            lines += [f"    if not g{index}({listed}):", "        return None"]
        if step.fused:
            lines.append(f"    v{step.slot} = f{index}({arguments})[0]")
        else:
            lines.append(f"    v{step.slot} = f{index}({arguments}, **k{index})")
        done = [
            f"v{slot}"
            for slot in sorted({*step.refs, step.slot})
            if param_count <= slot < first_constant
            and last_use.get(slot, index) == index
            and slot not in outputs
        ]
        if done:
            lines.append(f"    del {', '.join(done)}")
    lines.append(f"    return [{', '.join(map(name, outputs))}]")
    source = "\n".join(lines)
    exec(_compiled(source), namespace)  # noqa: S102
    return namespace["forward"], source


@functools.lru_cache(maxsize=256)
def _compiled(source):
    """`source` compiled once: models of one architecture share it (~0.2 ms for an MLP)."""
    return compile(source, "<minikeras replay>", "exec")


def _tuple(names, parentheses=True):
    text = ", ".join(names) + ("," if len(names) == 1 else "")
    return f"({text})" if parentheses else text


def _densified(grad):
    """A gradient as `add_gradient` keeps the first one: autograd's sparse ones made dense."""
    return grad if type(grad) is np.ndarray else add_gradient(None, grad)[0]


def _sole_refs():
    """What `sys.getrefcount` counts for a local of a replay function that nothing else holds.

    Measured (the count differs between Python versions) on a local of a plain
    function, which a generated one is too.
    """

    def probe():
        d = np.empty(1)
        return sys.getrefcount(d)

    return probe()


_SOLE_REFS = _sole_refs()
