"""Recording a tape's primitive calls once, and replaying them on new data.

Keras compiles a model's training step (with XLA under `jit_compile`); a
numpy framework has no compiler, but the same trade is open to it: most of
a small model's step is the Python around the numpy calls (Layer calls,
Tensor wrapping, the tape's bookkeeping), and that is the same at every step.

`Recorder` (in `engine.replay_recorder`, re-exported here), active while a
tape records one step, notes every primitive call the tape records: the op,
its arguments, and the node it made. `Program.build` then checks that the
recording is the whole computation, refusing it otherwise: every array an
op received must be the output of an earlier recorded op, the value of a
Variable the tape read, or one of the step's inputs, found by identity. An
array computed outside the recorded ops (a dropout mask drawn in Python,
labels reshaped, inputs cast) would be frozen into a replay, so its
presence refuses the recording. Python numbers and strings the ops were
given (an activation's name, an axis, `1 / batch size`) are kept as they
were: the caller allows only layers and losses whose constants depend on
shapes, never on values (`trainers.compiled_step`).

`Program.run` calls the same forwards on the new inputs and the Variables'
current values, makes the same VJPs, and pulls the gradient back through
them in the order `GradientTape.gradient` visits them (found once, from the
recorded graph: where a value has several users, the order in which their
gradients are summed decides the last bits), without Tensors, layers or a
tape. An op whose Python front checks values (the cross-entropy's labels)
registers a `replay_guard`, which a replay runs on the op's arguments: when
it says no, the replay gives up, and the caller runs the step eagerly,
which raises the op's own error.

A step may assign a Variable the value of a recorded op (a
BatchNormalization's moving statistics, `ops.normalization.moving_average`
of the batch's): the recorder notes it, and a replay assigns the replayed
value to the same Variable once every op has run (so a guard that says no
leaves it alone). Refused: an assign of any other value (the caller counts
`Variable.writes`), of a Variable the step differentiates, or a read of the
Variable after its assign (the replay reads its value as the step began).
"""

import operator

import numpy as np
from autograd.core import primitive_vjps as _primitive_vjps
from autograd.numpy.numpy_boxes import ArrayBox

from minikeras.engine import primitive
from minikeras.engine.backward import _reverse_topological
from minikeras.engine.context import state as _context
from minikeras.engine.replay_recorder import Recorder, RecordingsHolder
from minikeras.engine.replay_registry import (
    _drawing,
    _guards,
    _inference,
    replay_draws,
    replay_guard,
    replay_inference,
)
from minikeras.engine.replay_source import write_forward, write_replay

__all__ = [
    "Program",
    "Recorder",
    "RecordingsHolder",
    "replay_draws",
    "replay_guard",
    "replay_inference",
]

_CONSTANTS = (type(None), bool, int, float, str, type(Ellipsis))
_value_of = operator.attrgetter("_value")


class _Step:
    __slots__ = ("forward", "maker", "fused", "argnums", "kwargs", "refs", "pulls", "slot",
                 "guard", "inference")  # fmt: skip


class Program:
    """A recorded step, replayable on new inputs (see the module).

    Build it with `Program.build`; `run` replays it.

    Attributes:
        sources: the Variables given to `build`, which `run` must be given again.
        frozen: Variables whose arrays the ops read as data (weights no tape
            watched: a frozen layer's); `run` passes their current arrays.
        assigned: the Variables a replay assigns, in order (see the module).
        source: the Python function a replay runs, as text (`engine.replay_source`).
        complete: whether every source gets a gradient (none is None).
        counts: per source, how many gradients `start`'s generator gives it
            (one per op reading it, for a source read several times; else
            1), or None when every source gets one.

    Example:
        >>> w = mk.Variable([2.0, 3.0])
        >>> x = np.array([1.0, 10.0], np.float32)
        >>> with mk.GradientTape() as tape:
        ...     with mk.engine.replay.Recorder(tape._trace_id) as recorder:
        ...         loss = mk.ops.sum(w * x)
        >>> program, reason = mk.engine.replay.Program.build(recorder, tape, [x], [w], [loss])
        >>> (total,), (grad,) = program.run([np.array([1.0, 1.0], np.float32)], [w])
        >>> float(total), grad
        (5.0, array([1., 1.], dtype=float32))
    """

    def __init__(self, steps, input_count, sources, outputs, backward_order, constants=(),
                 seed=None, generators=None, assigns=()):  # fmt: skip
        # Slots: the inputs, the sources, one per step (its output), then the constants.
        self._input_count = input_count
        self.sources = tuple(sources)  # the Variables `run` must be given, in this order
        # The Generators a replay that may give up must rewind (see replay_draws), or None.
        self._generators = generators
        first_constant = input_count + len(sources) + len(steps)
        constants = {first_constant + index: value for index, value in enumerate(constants)}
        self._replay, self.source, self.complete, counts = write_replay(
            steps,
            input_count + len(sources),
            outputs,
            backward_order,
            constants,
            [source._value.dtype for source in sources],
            seed,
            assigns,
        )
        self._written = (steps, input_count + len(sources), outputs, constants)  # (for `infer`)
        self._forward = None
        self.assigned = tuple(variable for variable, _ in assigns)
        self.counts = counts if any(count != 1 for count in counts) else None
        self.frozen = ()  # Variables read as data, after the inputs (see `build`)

    @classmethod
    def build(cls, recorder, tape, inputs, sources, outputs, input_nodes=None, seeded=True,
              source_nodes=None):  # fmt: skip
        """Checks a recording and makes its program; call it before `tape.gradient`.

        Args:
            recorder: the `Recorder` that watched the tape.
            tape: the `GradientTape` (still holding its reads).
            inputs: the step's input arrays, as the ops received them.
            sources: the Variables whose gradients `run` returns.
            outputs: Tensors the step computed; `run` returns their new
                values, and the gradient is that of the first (a scalar).
            input_nodes: per input, the tape's root node if the input was
                watched (its ops are then recorded too), else None.
            seeded: whether the gradient is that of a loss (ones); if False,
                it is sent to the replay by `start`'s caller.
            source_nodes: per source, its node, where it is not the tape's
                root of it (a differentiated input computed on the tape is a
                source too: anything with a `_value`); None to look each up.

        Returns:
            `(program, None)`, or `(None, reason)` when the recording cannot
            be replayed, `reason` saying why.
        """
        if not recorder.valid:
            return None, "an op ran under another tape, or under nested tapes"
        # Weights the tape does not watch (a frozen layer's): data the replay reads afresh.
        frozen, arrays = recorder.unwatched_reads(inputs, sources)
        inputs = [*inputs, *arrays]
        input_count = len(inputs)
        slot_of = {}
        for index, source in enumerate(sources):
            node = source_nodes[index] if source_nodes is not None else None
            if node is None:
                node = tape._nodes.get(id(source))
            if node is not None:
                slot_of[id(node)] = input_count + index
        next_slot = input_count + len(sources)
        for index, node in enumerate(input_nodes or ()):
            if node is not None:
                slot_of[id(node)] = index  # a watched input: data, never differentiated
        steps, generators, draws = [], {}, False
        constants, counts = [], {}  # constants by position; gradients each slot receives
        for op, argnums, parents, values, kwargs, node in recorder.entries:
            if op in _drawing:
                draws = True
                generators.update((id(v), v) for v in values if isinstance(v, np.random.Generator))
            step = _Step()
            fused = primitive._fused.get(op)
            step.fused = fused is not None
            step.forward, step.maker = fused if fused is not None else (op.fun, _primitive_vjps[op])
            step.kwargs, step.guard = kwargs or {}, _guards.get(op)
            step.inference = _inference.get(op)
            if not all(_is_constant(value) for value in step.kwargs.values()):
                return None, f"{_name(op)} was given an array or object by keyword"
            refs, parent_slots = [], []
            for position, value in enumerate(values):
                if position in argnums:
                    slot = slot_of.get(id(parents[argnums.index(position)]))
                    if slot is None:
                        return None, f"{_name(op)} used a value from outside the recorded ops"
                    if slot >= input_count:
                        parent_slots.append(slot)
                elif isinstance(value, (np.ndarray, np.generic, ArrayBox)):
                    found = [i for i, item in enumerate(inputs) if item is value]
                    if not found:
                        return None, f"{_name(op)} used an array computed outside the recorded ops"
                    if len(found) > 1:  # `fit(x, x)`: a replay could not tell which one it was
                        return None, f"{_name(op)} used an array given as several inputs"
                    slot = found[0]
                elif _is_constant(value):
                    slot = -1 - len(constants)  # numbered once the steps are counted
                    constants.append(value)
                else:
                    return None, f"{_name(op)} was given a {type(value).__name__}"
                refs.append(slot)
            step.refs = refs
            step.argnums = tuple(
                position for position, slot in enumerate(refs)
                if position in argnums and slot >= input_count
            )  # fmt: skip
            for slot in parent_slots:
                counts[slot] = counts.get(slot, 0) + 1
            step.pulls = parent_slots
            step.slot = next_slot
            slot_of[id(node)] = next_slot
            next_slot += 1
            steps.append(step)
        first_constant = next_slot
        for step in steps:
            step.refs = tuple(first_constant - 1 - r if r < 0 else r for r in step.refs)
            step.pulls = tuple((slot, counts[slot] > 1) for slot in step.pulls)
        output_slots = []
        for output in outputs:
            value = getattr(output, "_value", None)  # (a list or dict of outputs has none)
            slot = slot_of.get(id(value._node)) if type(value) is ArrayBox else None
            if slot is None:
                return None, "an output was not computed by the recorded ops"
            output_slots.append(slot)
        assigns = []  # (a moving statistic's update: the Variable, the slot of its new value)
        for variable, node, _ in recorder.assigns:
            if any(variable is source for source in sources):
                return None, f"Variable {variable.name!r} is assigned, and differentiated"
            assigns.append((variable, slot_of.get(id(node))))
            if assigns[-1][1] is None:
                return None, f"Variable {variable.name!r} is assigned a value of no recorded op"
        if counts.get(output_slots[0]):  # the loss feeds another op: its gradient is a sum
            for step in steps:
                step.pulls = tuple((s, shared or s == output_slots[0]) for s, shared in step.pulls)
        first_step = input_count + len(sources)
        # (A source computed on the tape has inner nodes above it too: not the steps'.)
        order = [
            slot - first_step
            for slot in (
                slot_of.get(id(node), -1)
                for node in _reverse_topological([outputs[0]._value._node])
            )
            if slot >= first_step
        ]
        seed = None
        if seeded:
            loss = outputs[0]._value._value
            seed = np.ones(np.shape(loss), np.result_type(loss))
            seed.flags.writeable = False
        may_give_up = any(step.guard is not None for step in steps)
        rewound = list(generators.values()) if draws and may_give_up else None
        program = cls(
            steps, input_count, sources, output_slots, order, constants, seed, rewound, assigns
        )
        program.frozen = frozen
        return program, None

    def start(self, inputs, sources):
        """Replays the forward pass of a program built with `seeded=False`.

        Args:
            inputs: arrays in the places of the recorded ones (same shapes and dtypes).
            sources: the Variables given to `build`, in the same order.

        Returns:
            `(outputs, backward)`: the outputs' values, and a generator that,
            sent the first output's gradient, yields the gradients of the
            sources (`counts[i]` for source `i`; None where the output does
            not depend on it) in the dtype the VJPs give them, which a tape
            adds up and casts as it does eagerly; or None when a
            `replay_guard` refused the new inputs.

        Example:
            >>> w = mk.Variable([2.0, 3.0])
            >>> x = np.array([1.0, 10.0], np.float32)
            >>> with mk.GradientTape() as tape:
            ...     with mk.engine.replay.Recorder(tape._trace_id) as recorder:
            ...         y = w * x
            >>> program, _ = mk.engine.replay.Program.build(
            ...     recorder, tape, [x], [w], [y], seeded=False
            ... )
            >>> (y,), backward = program.start([np.array([1.0, 2.0], np.float32)], [w])
            >>> y, backward.send(np.array([1.0, 0.5], np.float32))
            (array([2., 6.], dtype=float32), [array([1., 1.], dtype=float32)])
        """
        values = map(_value_of, sources)  # (no comprehension's call)
        if self.frozen:
            inputs = [*inputs, *(variable._value for variable in self.frozen)]
        replay = self._replay(*inputs, *values)
        if self._generators is None:
            outputs = next(replay)
        else:
            outputs = self._rewinding(lambda: next(replay))
        return None if outputs is None else (outputs, replay)

    def run(self, inputs, sources):
        """Replays the step on `inputs` and the Variables' current values.

        Args:
            inputs: arrays in the places of the recorded ones (same shapes and dtypes).
            sources: the Variables given to `build`, in the same order.

        Returns:
            `(outputs, gradients)`: the outputs' values, and per source its
            gradient (None if the first output does not depend on it); or
            None when a `replay_guard` refused the new inputs.
        """
        # (inline, not through `_called`: `fit` runs this at every step)
        values = [source._value for source in sources]
        if self.frozen:
            inputs = [*inputs, *(variable._value for variable in self.frozen)]
        if self._generators is None:
            return self._replay(*inputs, *values)
        return self._rewinding(lambda: self._replay(*inputs, *values))

    def infer(self, inputs, sources):
        """Replays the forward pass alone: the outputs of `run`, without a backward pass.

        Args:
            inputs: arrays in the places of the recorded ones (same shapes and dtypes).
            sources: the Variables given to `build`, in the same order.

        Returns:
            The outputs' values (a list), or None when a `replay_guard` refused the new inputs
            or the program assigns Variables (their new values are a training step's).
        """
        if self.assigned:  # (a training step's program: its assigns belong with a backward pass)
            return None
        if self._forward is None:
            self._forward = write_forward(*self._written)[0]
        return self._called(self._forward, inputs, sources)

    def _called(self, function, inputs, sources):
        """`function` (a written replay) on the inputs, the frozen and the sources' values."""
        values = [source._value for source in sources]
        if self.frozen:
            inputs = [*inputs, *(variable._value for variable in self.frozen)]
        if self._generators is None:
            return function(*inputs, *values)
        return self._rewinding(lambda: function(*inputs, *values))

    def _rewinding(self, replay):
        """`replay()`; when it gives None (a guard said no), the generators are put back."""
        drawn = [_context.generator, *self._generators]  # the thread's, read now, and the ops'
        states = [generator.bit_generator.state for generator in drawn]
        replayed = replay()
        if replayed is None:
            for generator, state in zip(drawn, states):
                generator.bit_generator.state = state
        return replayed


def _is_constant(value):
    """Python numbers, strings, None, dtypes, slices and Ellipsis (a crop's index), and
    tuples of them (a NamedTuple of geometry).

    A numpy `Generator` counts too: an op that draws from it (a dropout mask)
    draws again at each replay, moving its state on as the eager step would.
    """
    if type(value) in _CONSTANTS or isinstance(value, (np.dtype, np.random.Generator)):
        return True
    if type(value) is slice:  # (of Python ints: an array in a slice is data)
        bounds = (value.start, value.stop, value.step)
        return all(type(bound) in (type(None), int) for bound in bounds)
    return isinstance(value, tuple) and all(_is_constant(item) for item in value)


def _name(op):
    return getattr(op, "__name__", repr(op))
