"""A Sequential or functional model's call, or a subclassed model's plain one, recorded once
and replayed.

Under a `GradientTape`, the replay is one recorded node (`tape_call`);
outside any tape (`predict`, `evaluate`, a plain `model(x)`), its forward
pass alone (`inference_call`, below).

A custom training loop calls its model inside a tape at every step:

    with mk.GradientTape() as tape:
        loss = loss_fn(y, model(x, training=True))
    grads = tape.gradient(loss, model.trainable_weights)

Eagerly, each layer's call converts its inputs, checks them, reads its
weights through the tape and records a node or two; on a small model that
Python costs as much as the arithmetic. Yet for a model made only of layers
whose `call` is plain math (`REPLAYABLE_LAYERS`, the layers `fit` compiles),
every call of a given kind of input does the same numpy calls in the same
order. So, as `fit` does with its whole step (`trainers.compiled_step`), the
model's call is recorded once per kind of input (`engine.replay.Program`,
without a loss: `seeded=False`) and replayed from then on as ONE node of the
user's tape, whose VJP runs the recorded backward pass:

- the first call runs eagerly, with the first call's checks;
- a later call of a new kind (input shape and dtype, `training`) runs
  eagerly too, under the user's tape, while a `Recorder` notes its ops;
- later calls of that kind replay the forward pass, read the weights
  through the tape (so the tape differentiates them, and read observers
  see them), and record one node whose parents are the weights' roots.

The numbers are those of the eager call, bit for bit: the same forwards and
VJPs run in the order the tape would run them. A weight the model reads
several times (a shared layer) gets each read's gradient from the node, which
the tape adds to the rest (a penalty on the weight) one by one, as eagerly.

What is replayed is fixed when it is recorded, so anything that could change
it records it again: what the model tracks (`TrackingGeneration`: a layer
added, a weight replaced, `trainable` switched) and any attribute set on a
built layer of the model (counted per layer by `Layer.__setattr__`: a
Dropout's `rate`, an activation; a layer of another model changes
nothing). A value changed in place is not an attribute set, and is not
seen (an item of a Softmax's `axis` list): set the attribute anew. A
model recorded `recorded_calls.MOST_RECORDINGS` times with no replay in between (new
kinds of input at every call, or a layer changed at every step) is
called eagerly from then on; kinds of input past the first
`recorded_calls.MOST_RECORDINGS` run eagerly, so that the recordings kept stay few.
The call is eager, as written, whenever the replay could differ from it or
could not serve the tape:

- the model was compiled with `run_eagerly=True` or `jit_compile=False`,
  which ask for eager steps (and so switch this off);
- the model is subclassed and its `call` does more than pass tensors
  between its layers and math ops in straight-line code
  (`models.plain_calls`: a branch, a loop, a `print`, a value read in
  Python, any other function or method), has layers outside
  `REPLAYABLE_LAYERS` (a Sequential, functional or plain subclassed model
  used as a layer counts as its own layers), several outputs, or a loss
  added from Python; it or a layer has a method replaced on the instance (`layer.call
  = hook`), or a layer's activation is not a function minikeras defines
  (a wrapper of one, even with `functools.wraps`, is the user's Python);
- the input is not one floating array or Tensor (an array of another float
  dtype is cast to the model's, as the eager call casts it), carries a mask,
  or is traced by another tape; or the call has arguments other than
  `training`. An input this tape traces (watched, or computed on the tape:
  a generator's output fed to a discriminator) is fine: the node gives its
  gradient too;
- the tape is persistent (a node's VJP may then run more than once), does
  not watch the Variables it reads, or is nested in another tape (a
  gradient of a gradient); the call is inside another layer's call; `fit`
  is recording its own step;
- the recording assigns a Variable a value its ops did not compute (a
  BatchNormalization's moving statistics, computed by them, are assigned
  again by each replay), or leaves a weight without a gradient.

A frozen layer's weights (which the tape does not watch) are data to the
recording, read afresh at each replay; a tape that watches one of them
(`tape.watch(kernel)`, for its gradient) gets the eager call.

Outside any tape, the same recordings serve the call, under the same
conditions, the tape's aside: `Program.infer` replays the forward pass
alone, reading the weights as they are. A kind of input not yet recorded is
recorded under a tape of the model's own, which the next call under a
user's tape replays too. Such a call is eager when inside another layer's
call, or when the recording assigns Variables (a BatchNormalization
called with `training=True` outside a tape). Integer or boolean inputs
(`uint8` images) are replayed too, cast to the model's dtype first, where
every layer that reads them first casts them so
(`models.replayability.casts_integer_inputs`). A frozen model (no
trainable weight) is replayed under a tape only for a traced input's gradient.
Ops whose forward does work only a backward pass needs (max pooling's
winners) register a forward for inference (`replay.replay_inference`).

A replayed call counts as a new outermost call of the model and of each of
its layers, as the eager one does (a loss given to `add_loss` before it no
longer counts in `losses`, and is let go); the layers' own bookkeeping for
`summary()` is left as the recording set it.
"""

import numpy as np

from minikeras.engine import primitive
from minikeras.engine.context import TRACING
from minikeras.engine.context import state as _state
from minikeras.engine.replay import Program, Recorder
from minikeras.engine.tape import GradientTape
from minikeras.engine.tape_nodes import read_roots, recorded_tensor
from minikeras.engine.tensor import Tensor, read_variable, wrap
from minikeras.engine.variable import Variable
from minikeras.layers.layer_call import LayerCall
from minikeras.models.recorded_calls import (
    REFUSED,
    call_training,
    new_outermost_call,
    program_for,
)
from minikeras.models.replayability import (
    REPLAYABLE_LAYERS,
    defined_in,
    not_replayable,
    overridden_method,
)

__all__ = [
    "REPLAYABLE_LAYERS",
    "defined_in",
    "inference_call",
    "not_replayable",
    "overridden_method",
    "tape_call",
]


def tape_call(model, inputs, kwargs):
    """Calls `model` on `inputs` as one node of the recording tape, or returns None.

    Args:
        model: the model being called.
        inputs: its one positional argument.
        kwargs: its keyword arguments.

    Returns:
        The output Tensor, or None when the call must run eagerly (see the module).

    Example:
        >>> model = mk.Sequential([mk.Input((3,)), mk.layers.Dense(2)])
        >>> x = np.ones((4, 3), np.float32)
        >>> for _ in range(3):  # eager, eager and recorded, then replayed
        ...     with mk.GradientTape() as tape:
        ...         loss = mk.ops.sum(model(x))
        >>> [g.shape for g in tape.gradient(loss, model.trainable_weights)]
        [(3, 2), (2,)]
    """
    state = _state
    tapes = state.active_tapes
    if len(tapes) != 1 or state.call_stack or primitive.recorders:
        return None
    tape = tapes[0]
    if tape.persistent or not tape.watch_accessed_variables:
        return None
    if not kwargs:
        training = None
    elif len(kwargs) == 1 and type(kwargs.get("training")) is bool:  # (the usual call, inline)
        training = kwargs["training"]
    else:
        training = call_training(kwargs)
        if training is REFUSED:
            return None
    value = _unmasked(inputs) if type(inputs) is Tensor else inputs
    if value is None:
        return None
    node = None
    if type(value) is not np.ndarray:
        # A Tensor this tape computed or watches: the node gives its gradient too.
        if getattr(value, "_trace", None) != tape._trace_id:
            return None  # a scalar or list (converted eagerly), or another tape's
        node, value = value._node, value._value
        if type(value) is not np.ndarray or value.dtype != model.dtype:
            return None
    elif value.dtype != model.dtype:
        if value.dtype.kind != "f":
            return None
        value = value.astype(model.dtype)  # as the eager call casts it
    signature = (value.shape, value.dtype, training, node is not None)
    found = program_for(model, signature)
    if found is None:
        return None
    calls, program = found
    if program is None:
        return _record(model, calls, signature, tape, value, training, inputs, node)
    if not program.sources:
        return None  # a frozen model's (for inference): nothing a node of the tape stands for
    return _replay(model, calls, program, tape, value, node)


def inference_call(model, inputs, kwargs):
    """Calls `model` outside any tape by replaying its recorded forward pass, or returns None.

    `predict`, `evaluate` and a plain `model(x)` call a model with no tape
    around it: the same recordings serve them (`Program.infer`, the forward
    pass alone), under the same conditions as `tape_call`'s, the tape aside.
    A kind of input not yet recorded is recorded under a tape of its own.

    Args:
        model: the model being called.
        inputs: its one positional argument.
        kwargs: its keyword arguments.

    Returns:
        The output Tensor, or None when the call must run eagerly.

    Example:
        >>> model = mk.Sequential([mk.Input((3,)), mk.layers.Dense(2)])
        >>> x = np.ones((4, 3), np.float32)
        >>> [model(x).shape for _ in range(3)]  # eager, eager and recorded, then replayed
        [(4, 2), (4, 2), (4, 2)]
    """
    state = _state
    if state.active_tapes or state.call_stack or primitive.recorders:
        return None
    training = call_training(kwargs) if kwargs else None
    if training is REFUSED:
        return None
    value = _unmasked(inputs) if type(inputs) is Tensor else inputs
    if type(value) is not np.ndarray:
        return None  # (a symbolic tensor, a list, a scalar: the eager call converts it)
    integers = False
    if value.dtype != model.dtype:
        kind = value.dtype.kind
        if kind != "f" and kind not in "biu":
            return None
        integers = kind != "f"
        value = value.astype(model.dtype)  # as the eager call (its first ops) casts it
    signature = (value.shape, value.dtype, training, False)
    found = program_for(model, signature)
    if found is None:
        return None
    calls, program = found
    if integers and not calls.casts_integers(model):
        return None  # (a layer reads the integers as they are: an Embedding, an Add)
    if program is None:
        with GradientTape() as tape:
            output = _record(model, calls, signature, tape, value, training, inputs, None)
        return wrap(output.numpy())  # (without the tape's box, as an eager call's)
    outputs = program.infer([value], program.sources)
    if outputs is None:
        return None  # a guard said no: the eager call raises the op's own error
    new_outermost_call(model, calls)
    return wrap(outputs[0])


def _unmasked(inputs):
    """A Tensor input's value (boxed or not), or None when it carries a mask."""
    return inputs._value if getattr(inputs, "_keras_mask", None) is None else None


def _record(model, calls, signature, tape, value, training, inputs, node):
    """Calls the model eagerly under `tape` while a `Recorder` notes its ops; keeps the program.

    An input the tape traces (`node`) is recorded as a first source, whose
    gradient the replayed node gives too; a plain one is watched, so that
    the ops on it (a Flatten first, say) are recorded, as data.
    """
    if node is None:
        x = Tensor(value)
        tape.watch(x)
    else:
        x = inputs if type(inputs) is Tensor else wrap(inputs)
    writes = Variable.writes
    with Recorder(tape._trace_id) as recorder:
        output = LayerCall.__call__(model, x, training=training)
    # (counted once the call ran: one that raised recorded nothing)
    count = model.__dict__.get("_replayed_recordings", 0) + 1
    object.__setattr__(model, "_replayed_recordings", count)
    weights = model.trainable_weights
    if Variable.writes != writes + len(recorder.assigns):  # (BatchNormalization's are replayed)
        program, reason = None, "a Variable was assigned during the call"
    elif type(output) is not Tensor:
        program, reason = None, "the model's output is not one tensor"
    elif node is None:
        program, reason = Program.build(
            recorder, tape, [value], weights, [output], [tape._nodes.get(id(x))], seeded=False
        )
    else:
        given = _Input(value)
        program, reason = Program.build(
            recorder, tape, [], [given, *weights], [output], seeded=False,
            source_nodes=[node] + [None] * len(weights),
        )  # fmt: skip
        given._value = None  # (each replay gives its own)
    if program is not None and not program.complete:
        program, reason = None, "the output does not depend on its input and every trainable weight"
    recorder.entries.clear()
    calls.programs[signature] = program if program is not None else reason
    return output


def _replay(model, calls, program, tape, value, node):
    """The model's output as one node of `tape`, from the recorded forward and backward."""
    sources = program.sources
    if node is None:
        parents, positions, weights, first = [], [], sources, 0
    else:  # the traced input is the first source (see `_record`)
        parents, positions, weights, first = [node], [0], sources[1:], 1
    state = _state
    if state.read_observers or TRACING[0] or state.autocast is not None:
        for position, variable in enumerate(weights, first):
            read = read_variable(variable)  # (the tape's root for it; read observers told)
            if type(read) is not np.ndarray:  # boxed by the tape
                parents.append(read._node)
                positions.append(position)
        for variable in program.frozen:  # read as data when recorded (a frozen layer's weight)
            if type(read_variable(variable)) is not np.ndarray:
                return None  # this tape watches it (`tape.watch`): the eager call differentiates it
    else:  # (the usual step: the nodes those reads give, without their boxes)
        read_roots(tape, weights, first, parents, positions)
        if program.frozen and read_roots(tape, program.frozen, 0, [], []):
            return None
    given = len(sources)
    if program.counts is not None:  # a source read several times: a gradient per read
        parents, positions, given = _per_read(parents, positions, program.counts)
    if node is None:
        started = program.start([value], sources)
    else:
        started = program.start([], (_Input(value), *weights))
    if started is None:
        return None  # a guard said no: the eager call raises the op's own error
    (output,), backward = started
    new_outermost_call(model, calls)
    # Each VJP runs the generator to its end once it has the gradients: a generator
    # dropped while suspended has a GeneratorExit thrown into it, an exception per step.
    if len(positions) == given:

        def vjp(g):
            gradients = backward.send(g)
            next(backward, None)
            return gradients

    else:

        def vjp(g):
            gradients = backward.send(g)
            next(backward, None)
            return [gradients[position] for position in positions]

    return recorded_tensor(output, tape._trace_id, tuple(parents), vjp)


def _per_read(parents, positions, counts):
    """`parents` and `positions` with each source repeated `counts[source]` times."""
    starts = [0]
    for count in counts:
        starts.append(starts[-1] + count)
    repeated, places = [], []
    for parent, position in zip(parents, positions):
        count = counts[position]
        repeated += [parent] * count
        places += range(starts[position], starts[position] + count)
    return repeated, places, starts[-1]


class _Input:
    """A traced input in the place of a source: what `Program` reads of one, its `_value`."""

    __slots__ = ("_value",)

    def __init__(self, value):
        self._value = value
