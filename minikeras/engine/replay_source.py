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
        d3 = seed
        q0, = _pull(p3, d3)
        d2 = _densified(q0)
        del q0, d3, p3
        q0, = _pull(p2, d2)
        d1 = _densified(q0)
        del q0, d2, p2
        if d1.dtype != s0:
            d1 = d1.astype(s0)
        return [v3], [d1]

Slots 0 and 1 are the input `x` and the Variable's value, 2 and 3 the
products of `multiply` (`f0`, autograd's primitive) and `sum` (`f1`), 4 to 6
the constants `sum` was given (its axis...); `a` is each op's argument
tuple, `p2` and `p3` their VJPs, `d3 = seed` the loss's gradient (ones).
"""

import functools

import numpy as np

from minikeras.engine.backward import add_gradient

__all__ = ["write_replay"]


def write_replay(steps, param_count, outputs, order, constants, source_dtypes, pull, seed):
    """Writes and compiles the replay function of a recorded step.

    Args:
        steps: the program's steps (`replay._Step`: forward, maker, fused,
            argnums, kwargs, guard, refs, pulls, slot, summed).
        param_count: how many slots are parameters (inputs, then sources).
        outputs: the output slots, the first being the loss.
        order: step numbers in the order the tape's backward pass visits them.
        constants: `{slot: value}` for the Python constants the ops received.
        source_dtypes: per source, the dtype its gradient must have.
        pull: `replay._pull`, which hands a gradient to a VJP.
        seed: the loss's gradient, ones (read-only).

    Returns:
        `(function, source, complete)`: `function(*inputs, *source_values)`
        returns `(output values, gradients)`, or None when a step's guard
        says no; `complete` says that no gradient is None.
    """
    namespace = {"_pull": pull, "add_gradient": add_gradient, "_densified": _densified}
    namespace["seed"] = seed
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
            lines += [f"    if not g{index}(a):", "        return None"]
        if step.fused:
            lines.append(f"    v{step.slot}, r = f{index}(*a)")
            made.add("r")
        else:
            lines.append(f"    v{step.slot} = f{index}(*a, **k{index})")
        if index in pulled:
            extra = "r" if step.fused else f"k{index}"
            lines.append(f"    p{step.slot} = m{index}(n{index}, v{step.slot}, a, {extra})")
    if made:
        lines.append(f"    del {', '.join(sorted(made))}")
    summed = {slot for index in pulled for slot, shared in steps[index].pulls if shared}
    lines += [f"    t{slot} = None" for slot in sorted(summed - {loss})]
    if loss in summed:
        lines.append(f"    t{loss} = (seed, False)")
    else:  # (a copy where the loss is a source: its gradient goes to the optimizer)
        lines.append(f"    d{loss} = seed" + (".copy()" if loss < param_count else ""))
    for index in order:
        if index not in pulled:
            continue
        step, slot = steps[index], steps[index].slot
        if slot in summed:
            lines += [f"    d{slot} = t{slot}[0]", f"    del t{slot}"]
        if step.fused and not any(shared for _, shared in step.pulls):
            targets = _tuple([f"d{parent}" for parent, _ in step.pulls], parentheses=False)
            lines += [f"    {targets} = _pull(p{slot}, d{slot})", f"    del d{slot}, p{slot}"]
        else:
            # (unpacked: autograd's VJPs give their gradients as a generator)
            pulled_names = [f"q{position}" for position in range(len(step.pulls))]
            lines.append(f"    {_tuple(pulled_names, parentheses=False)} = _pull(p{slot}, d{slot})")
            for q, (parent, shared) in zip(pulled_names, step.pulls):
                if shared:
                    lines.append(f"    t{parent} = add_gradient(t{parent}, {q})")
                elif step.fused:
                    lines.append(f"    d{parent} = {q}")
                else:  # autograd's own VJPs may give a sparse gradient (indexing)
                    lines.append(f"    d{parent} = _densified({q})")
            lines.append(f"    del {', '.join(pulled_names)}, d{slot}, p{slot}")
    gradients = []
    first_source = param_count - len(source_dtypes)
    for position, dtype in enumerate(source_dtypes):
        slot = first_source + position
        if slot not in reached:
            gradients.append("None")
            continue
        namespace[f"s{position}"] = dtype
        if slot in summed:
            lines.append(f"    d{slot} = t{slot}[0]")
        lines += [
            f"    if d{slot}.dtype != s{position}:",
            f"        d{slot} = d{slot}.astype(s{position})",
        ]
        gradients.append(f"d{slot}")
    lines.append(f"    return [{', '.join(map(name, outputs))}], [{', '.join(gradients)}]")
    source = "\n".join(lines)
    exec(_compiled(source), namespace)  # noqa: S102
    return namespace["replay"], source, "None" not in gradients


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
