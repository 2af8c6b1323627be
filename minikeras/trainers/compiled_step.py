"""The default training step, compiled: recorded once per kind of batch, then replayed.

Keras compiles `train_step` unless told not to (`jit_compile="auto"`, and
`run_eagerly=False`); so does minikeras, in its own way. The first batch of a
given shape and dtype runs eagerly while `engine.replay.Recorder` notes the
primitive calls of its forward pass and loss; `engine.replay.Program` checks
that they are the whole computation and keeps them. Later batches of that
kind replay them: the same numpy calls and VJPs, in the same order, on the
new data and the weights' current values, giving the same numbers as the
eager step, without the Python of Layer calls, Tensors and the tape around
them. The optimizer update, the loss tracker and the metrics run as usual.

A replay sees only numbers, so the step is compiled only where numbers are
all there is:

- the default `train_step` (an override runs as written), one array of
  inputs, one of targets, one output tensor (not a list, tuple or dict of
  them, even of one), no sample or class weights;
- a `Sequential` or functional model of layers whose `call` is plain math
  (`REPLAYABLE_LAYERS`: no random numbers drawn in Python, no moving
  statistics, no states, no value checks in Python), with the activations
  minikeras defines (the functions, not wrappers of them), no method
  replaced on an instance, no activity regularizer and one dtype (no
  mixed-precision policy, and no `LossScaleOptimizer`); no loss
  added from Python (`model.add_loss` of a callable, a regularizer
  minikeras does not define), whose numbers a recording would fix;
- a single compiled loss of `REPLAYABLE_LOSSES`, or one of the loss functions
  minikeras defines (`compile(loss="mse")`), computing with its own function
  (not one set on the instance, nor a wrapper of a minikeras function, even
  with `functools.wraps`); value checks (the sparse cross-entropy's labels)
  run at every replay (`replay_guard`).

Anything else, or a recording that `Program.build` refuses (noise drawn in
Python, a Variable assigned during the step), runs eagerly, as with
`jit_compile=False`. As with a compiled Keras step, what `call` reads from
Python attributes is fixed when the step is recorded: a change to what a
model tracks (a layer added, a weight replaced, `trainable` switched, a loss
given to `add_loss`, a weight's `regularizer` set) or a new `compile`
records it again.
"""

from operator import is_not

from minikeras.engine.replay import Program, Recorder, RecordingsHolder
from minikeras.engine.tensor import Tensor
from minikeras.engine.variable import TrackingGeneration, Variable
from minikeras.losses import (
    BinaryCrossentropy,
    CategoricalCrossentropy,
    LossFunctionWrapper,
    MeanAbsoluteError,
    MeanSquaredError,
    SparseCategoricalCrossentropy,
    functions,
)
from minikeras.models.replayability import (
    REPLAYABLE_LAYERS,
    defined_in,
    not_replayable,
    overridden_method,
)
from minikeras.optimizers.loss_scale_optimizer import LossScaleOptimizer

__all__ = ["REPLAYABLE_LAYERS", "REPLAYABLE_LOSSES", "CompiledStep", "compiled_step"]

REPLAYABLE_LOSSES = frozenset({
    BinaryCrossentropy, CategoricalCrossentropy, MeanAbsoluteError, MeanSquaredError,
    SparseCategoricalCrossentropy,
})  # fmt: skip


class CompiledStep(RecordingsHolder):
    """The recorded programs of one compiled model, per kind of batch (see the module).

    Attributes:
        reason: why the model's step is not compiled, or None.
        programs: `{(x shape, x dtype, y shape, y dtype): Program or a refusal reason}`.
    """

    def __init__(self, key, reason):
        self.key, self.reason = key, reason
        self.programs = {}
        self._verified = {}  # per signature, the list of weights last found to be its sources

    def run(self, model, x, y, weights):
        """Replays the step for this batch: `(y_pred, loss, grads, complete)`, or None.

        Args:
            model: the model.
            x: the inputs (already as the model's dtype, see `compiled_step`).
            y: the targets.
            weights: the Variables to differentiate.

        Returns:
            `(y_pred array, loss array, gradients, complete)`, `complete` saying
            that no gradient is None; or None to run the step eagerly.
        """
        signature = _signature(x, y)
        program = self.programs.get(signature)
        if type(program) is not Program:
            return None
        if weights is not self._verified.get(signature):
            sources = program.sources
            if len(weights) != len(sources) or any(map(is_not, weights, sources)):
                # Another list of weights at the same TrackingGeneration (a layer removed
                # from a list attribute in place): its slots would be misread; record again.
                del self.programs[signature]
                return None
            self._verified[signature] = weights  # (fit's list, or the model's cached one)
        replayed = program.run([x, y], weights)
        if replayed is None:
            return None
        (loss, y_pred), grads = replayed
        return y_pred, loss, grads, program.complete

    def recorder(self, tape, x, y):
        """A `Recorder` for the eager step of a batch of a new kind, else None.

        Its `inputs` is what to call the model on: floating inputs are
        watched by the tape, so that the ops on them (a `Flatten` first, say)
        are recorded too.
        """
        if _signature(x, y) in self.programs:
            return None
        recorder = Recorder(tape._trace_id)
        recorder.writes = Variable.writes
        recorder.inputs = x
        if x.dtype.kind == "f":
            recorder.inputs = Tensor(x)
            tape.watch(recorder.inputs)
        return recorder

    def keep(self, recorder, tape, x, y, weights, loss, y_pred):
        """Builds the program from an eager step's recording; call it before `tape.gradient`."""
        if Variable.writes != recorder.writes:
            program, reason = None, "a Variable was assigned during the step"
        else:
            watched = tape._nodes.get(id(recorder.inputs))
            program, reason = Program.build(
                recorder, tape, [x, y], weights, [loss, y_pred], input_nodes=[watched, None]
            )
        signature = _signature(x, y)
        self.programs[signature] = program if program is not None else reason
        self._verified.pop(signature, None)  # (a list verified for an earlier program)
        # What the ops received (activations, the weights' arrays) is the tape's to let go
        # of during `gradient`, and the weights' then to update in place.
        recorder.entries.clear()


def _signature(x, y):
    return x.shape, x.dtype, y.shape, y.dtype


def compiled_step(model, x, y, sample_weight):
    """The model's `CompiledStep` and the inputs as it replays them, or `(None, x)`.

    Args:
        model: a compiled model running its default `train_step`.
        x: the batch's inputs.
        y: its targets.
        sample_weight: its sample weights.

    Returns:
        `(CompiledStep or None, x)`; `x` cast to the model's dtype when it is
        a floating array of another (as the model's first layer would).
    """
    if model.run_eagerly or model.jit_compile is False:
        return None, x
    if type(x).__name__ != "ndarray" or type(y).__name__ != "ndarray" or sample_weight is not None:
        return None, x
    key = (TrackingGeneration.value, id(model.optimizer), id(model._compile_loss))
    state = model.__dict__.get("_compiled_step")
    if state is None or state.key != key:
        state = CompiledStep(key, _not_compilable(model))
        object.__setattr__(model, "_compiled_step", state)
    if state.reason is not None:
        return None, x
    if x.dtype.kind == "f" and x.dtype != model.dtype:
        x = x.astype(model.dtype)
    return state, x


def _not_compilable(model):
    """Why `model`'s default step cannot be replayed, or None if it can."""
    from minikeras.trainers.steps import Steps

    if type(model).train_step is not Steps.train_step:
        return "train_step is overridden"
    if isinstance(model.optimizer, LossScaleOptimizer):  # (its step scales the loss first)
        return "the optimizer is a LossScaleOptimizer (mixed precision)"
    reason = not_replayable(model, REPLAYABLE_LAYERS)
    if reason is not None:
        return reason
    for weight in model.weights:
        regularizer = weight.regularizer
        if regularizer is not None and type(regularizer).__module__ != "minikeras.regularizers":
            return f"weight {weight.path!r} has a regularizer minikeras does not define"
    compiled = model._compile_loss
    if compiled is None or compiled.single is None or compiled.loss_weights is not None:
        return "the compiled loss is not a single loss"
    loss = compiled.single
    built_in_function = type(loss) is LossFunctionWrapper and defined_in(loss.fn, functions)
    if type(loss) not in REPLAYABLE_LOSSES and not built_in_function:
        return f"loss {type(loss).__name__} is not replayable"
    if not defined_in(getattr(loss, "fn", None), functions) or overridden_method(loss):
        return f"loss {type(loss).__name__} computes with a function of its own"
    return None
