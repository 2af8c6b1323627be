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
  inputs, one of targets, optionally one of sample weights (`class_weight`
  folded in, as `fit` gives them), one output tensor (not a list, tuple or
  dict of them, even of one). The sample weights are a third input of the
  program, watched like floating inputs so that the ops that shape them
  are recorded; a loss with the reduction `"mean_with_sample_weight"`
  (whose Python checks their sum for 0) runs weighted batches eagerly;
- inputs of the model's dtype, or of another float dtype, cast to it before
  the step as the model's first layer would; integer or boolean inputs too,
  when every layer that reads them first is one whose op casts them to the
  model's dtype (`Dense`, `Conv1D`, `Conv2D`, through `Flatten` or
  `Reshape`) and the `Input` is not of an integer dtype: not when a layer
  computes on the integers themselves (an `Add` that wraps around);
- a `Sequential` or functional model, or a subclassed one whose own `call`
  only passes tensors between its layers and math ops in straight-line
  code (`models.plain_calls`, which reads its bytecode), of layers whose
  `call` is plain math
  (`REPLAYABLE_LAYERS`: no random numbers drawn in Python, no states, no
  value checks in Python; a BatchNormalization's moving statistics are the
  values of ops, which a replay assigns again), with the activations
  minikeras defines (the functions, not wrappers of them), no method
  replaced on an instance, no activity regularizer and one dtype (no
  mixed-precision policy, and no `LossScaleOptimizer`); no loss
  added from Python (`model.add_loss` of a callable, a regularizer
  minikeras does not define), whose numbers a recording would fix;
- a single compiled loss of `REPLAYABLE_LOSSES`, or one of their functions
  given alone (`compile(loss="mse")`), computing with its own function
  (not one set on the instance, nor a wrapper of a minikeras function, even
  with `functools.wraps`): losses whose Python reads shapes and their own
  numbers (`label_smoothing`, `from_logits`), never the targets' values.
  Value checks in ops (the sparse cross-entropy's labels) run at every
  replay (`replay_guard`). A loss that computes on the targets alone (label
  smoothing, `1 - y_true` on probabilities, clipping) has its floating
  targets watched while the step is recorded, so that those ops are
  recorded too. `ignore_class` is replayed from logits without sample
  weights (one fused op finds which labels count), else refused by
  `Program.build` (its Python finds them). The hinge losses turn labels
  that are all 0 or 1 into -1/1 inside one op (`ops.hinge_labels`), which
  each replay runs on its own batch's labels. The focal losses raise to
  their `gamma`, a Python number `ops.power` keeps as one (a constant of
  the recording); a categorical focal loss with one `alpha` per class (an
  array from Python) is refused by `Program.build`.

Anything else, or a recording that `Program.build` refuses (noise drawn in
Python, a Variable assigned a value no recorded op computed), runs eagerly, as with
`jit_compile=False`. What `call` reads from Python attributes is recorded
with the step; unlike a compiled Keras step (which keeps what it traced),
anything that could change it records the step again at the next batch: an
attribute set on the model, one of its layers or a regularizer (a callback
annealing a Dropout's `rate` or an `L2`'s `l2`, a subclassed model's
`self.temperature`), a change to
what the model tracks (a layer added, a weight replaced, `trainable`
switched, a loss given to `add_loss`, a weight's `regularizer` set), a
subclassed model's `call`, its defaults or a name it reads rebound
(`models.plain_call_guards`), or a new `compile`. A value changed in
place (an item of a list attribute), or set past `__setattr__`
(`model.__dict__[name] = v`), is not seen: set the attribute anew.
"""

from operator import is_not
from types import FunctionType

from minikeras.engine.replay import Program, Recorder, RecordingsHolder
from minikeras.engine.tensor import Tensor
from minikeras.engine.variable import TrackingGeneration, Variable
from minikeras.layers.attribute_sets import AttributeSets
from minikeras.losses import (
    BinaryCrossentropy,
    BinaryFocalCrossentropy,
    CategoricalCrossentropy,
    CategoricalFocalCrossentropy,
    CategoricalHinge,
    CosineSimilarity,
    Hinge,
    Huber,
    KLDivergence,
    LogCosh,
    LossFunctionWrapper,
    MeanAbsoluteError,
    MeanAbsolutePercentageError,
    MeanSquaredError,
    MeanSquaredLogarithmicError,
    Poisson,
    SparseCategoricalCrossentropy,
    SquaredHinge,
    focal,
    functions,
    hinge_losses,
    regression,
)
from minikeras.models.model_steps import ModelSteps
from minikeras.models.recorded_calls import stale, watch
from minikeras.models.replayability import (
    REPLAYABLE_LAYERS,
    casts_integer_inputs,
    not_replayable,
    overridden_method,
)
from minikeras.optimizers.loss_scale_optimizer import LossScaleOptimizer

__all__ = ["REPLAYABLE_LAYERS", "REPLAYABLE_LOSSES", "CompiledStep", "compiled_step"]

# Losses whose Python reads no target values: shapes and their constructor's numbers only
# (the hinge losses find whether the labels are 0/1 inside an op, which a replay repeats; a
# categorical focal loss's per-class `alpha`, an array from Python, is refused by
# `Program.build`, and that step stays eager).
REPLAYABLE_LOSSES = frozenset({
    BinaryCrossentropy, BinaryFocalCrossentropy, CategoricalCrossentropy,
    CategoricalFocalCrossentropy, CategoricalHinge, CosineSimilarity, Hinge, Huber,
    KLDivergence, LogCosh, MeanAbsoluteError, MeanAbsolutePercentageError, MeanSquaredError,
    MeanSquaredLogarithmicError, Poisson, SparseCategoricalCrossentropy, SquaredHinge,
})  # fmt: skip

# The functions of those losses, which `compile(loss="name")` may give wrapped alone.
_REPLAYABLE_FUNCTIONS = frozenset({
    functions.binary_crossentropy, functions.categorical_crossentropy, functions.huber,
    functions.kl_divergence, functions.mean_absolute_error, functions.mean_squared_error,
    functions.sparse_categorical_crossentropy, hinge_losses.categorical_hinge, hinge_losses.hinge,
    hinge_losses.squared_hinge, regression.cosine_similarity, regression.log_cosh,
    regression.mean_absolute_percentage_error, regression.mean_squared_logarithmic_error,
    regression.poisson, focal.binary_focal_crossentropy, focal.categorical_focal_crossentropy,
})  # fmt: skip

# Loss functions whose ops take the targets as they come, beside the predictions: a
# replay feeds the new targets in their place. The others (label smoothing, clipping,
# BCE's `1 - y_true` on probabilities) compute on the targets alone first, which the
# tape records only if it watches them.
_TARGETS_AS_GIVEN = frozenset({
    functions.mean_squared_error, functions.mean_absolute_error, functions.huber,
    functions.categorical_crossentropy, functions.sparse_categorical_crossentropy,
    regression.log_cosh, regression.poisson,
})  # fmt: skip


class CompiledStep(RecordingsHolder):
    """The recorded programs of one compiled model, per kind of batch (see the module).

    Attributes:
        reason: why the model's step is not compiled, or None.
        programs: `{(x shape, x dtype, y shape, y dtype[, sample_weight shape,
            sample_weight dtype]): Program or a refusal reason}`.
        watch_targets: whether a recording watches floating targets (a loss
            that computes on them alone: label smoothing, clipping).
        casts_integers: whether integer inputs are cast to the model's dtype
            before the step, as its first layers' ops cast them.
        weighs: whether a batch with sample weights is replayed (not for the
            reduction `"mean_with_sample_weight"`, whose Python checks the
            weights' sum for 0, nor with an `ignore_class`).
    """

    def __init__(self, key, reason, watch_targets=False, casts_integers=False, weighs=False):
        self.key, self.reason = key, reason
        self.watch_targets, self.casts_integers, self.weighs = (
            watch_targets,
            casts_integers,
            weighs,
        )
        self.programs = {}
        self._verified = {}  # per signature, the list of weights last found to be its sources

    def forget_refusals(self):
        """Drops the refused kinds of batch, which the next batch of each records again.

        `fit` calls it when it starts: a recording refused under the weights
        list a former `fit` trained (a layer frozen by a callback mid-fit,
        whose weights that list still held) may succeed now.

        Returns:
            None.
        """
        refused = [key for key, program in self.programs.items() if type(program) is not Program]
        for key in refused:
            del self.programs[key]

    def run(self, model, x, y, weights, sample_weight=None):
        """Replays the step for this batch: `(y_pred, loss, grads, complete)`, or None.

        Args:
            model: the model.
            x: the inputs (already as the model's dtype, see `compiled_step`).
            y: the targets.
            weights: the Variables to differentiate.
            sample_weight: the batch's sample weights (an array), or None.

        Returns:
            `(y_pred array, loss array, gradients, complete)`, `complete` saying
            that no gradient is None; or None to run the step eagerly.
        """
        signature = _signature(x, y, sample_weight)
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
        if sample_weight is None:
            replayed = program.run([x, y], weights)
        else:
            replayed = program.run([x, y, sample_weight], weights)
        if replayed is None:
            return None
        (loss, y_pred), grads = replayed
        return y_pred, loss, grads, program.complete

    def recorder(self, tape, x, y, sample_weight=None):
        """A `Recorder` for the eager step of a batch of a new kind, else None.

        Its `inputs`, `targets` and `sample_weight` are what to call the model
        and the loss on: floating inputs and sample weights (and floating
        targets, with `watch_targets`) are watched by the tape, so that the
        ops on them (a `Flatten` first, the weights' `expand_dims`, a label
        smoothing) are recorded too.
        """
        if _signature(x, y, sample_weight) in self.programs:
            return None
        recorder = Recorder(tape._trace_id)
        recorder.writes = Variable.writes
        recorder.inputs, recorder.targets, recorder.sample_weight = x, y, sample_weight
        if x.dtype.kind == "f":
            recorder.inputs = Tensor(x)
            tape.watch(recorder.inputs)
        if self.watch_targets and y.dtype.kind == "f":
            recorder.targets = Tensor(y)
            tape.watch(recorder.targets)
        if sample_weight is not None and sample_weight.dtype.kind == "f":
            recorder.sample_weight = Tensor(sample_weight)
            tape.watch(recorder.sample_weight)
        return recorder

    def keep(self, recorder, tape, x, y, weights, loss, y_pred, sample_weight=None):
        """Builds the program from an eager step's recording; call it before `tape.gradient`."""
        # (an assign of a value the ops computed is replayed: a moving statistic's update)
        if Variable.writes != recorder.writes + len(recorder.assigns):
            program, reason = None, "a Variable was assigned during the step"
        else:
            inputs = [x, y] if sample_weight is None else [x, y, sample_weight]
            watched = [
                tape._nodes.get(id(given)) if type(given) is Tensor else None
                for given in (recorder.inputs, recorder.targets, recorder.sample_weight)
            ][: len(inputs)]
            program, reason = Program.build(
                recorder, tape, inputs, weights, [loss, y_pred], input_nodes=watched
            )
        signature = _signature(x, y, sample_weight)
        self.programs[signature] = program if program is not None else reason
        self._verified.pop(signature, None)  # (a list verified for an earlier program)
        # What the ops received (activations, the weights' arrays) is the tape's to let go
        # of during `gradient`, and the weights' then to update in place.
        recorder.entries.clear()


def _signature(x, y, sample_weight=None):
    if sample_weight is None:
        return x.shape, x.dtype, y.shape, y.dtype
    return x.shape, x.dtype, y.shape, y.dtype, sample_weight.shape, sample_weight.dtype


def compiled_step(model, x, y, sample_weight):
    """The model's `CompiledStep` and the inputs as it replays them, or `(None, x)`.

    Args:
        model: a compiled model running its default `train_step`.
        x: the batch's inputs.
        y: its targets.
        sample_weight: its sample weights (class weights folded in), or None.

    Returns:
        `(CompiledStep or None, x)`; `x` cast to the model's dtype when it is
        a floating array of another (as the model's first layer would), or an
        integer or boolean one that the model's first layers cast so
        (`CompiledStep.casts_integers`).
    """
    if model.run_eagerly or model.jit_compile is False:
        return None, x
    if type(x).__name__ != "ndarray" or type(y).__name__ != "ndarray":
        return None, x
    if sample_weight is not None and type(sample_weight).__name__ != "ndarray":
        return None, x
    key = (TrackingGeneration.value, id(model.optimizer), id(model._compile_loss))
    state = model.__dict__.get("_compiled_step")
    if (
        state is not None
        and state.reason is None  # (a refusal stands until the key moves)
        and (state.all_sets != AttributeSets.value or state.guards is not None)
        and stale(state, model)
    ):
        state = None  # an attribute set, or a subclassed call changed: what call reads may differ
    if state is None or state.key != key:
        reason = _not_compilable(model)
        if reason is not None:
            state = CompiledStep(key, reason)
        else:
            loss = model._compile_loss.single
            # (`ignore_class` is one fused op only unweighted: weighted, its Python finds
            # which labels count, which a recording would fix)
            weighs = loss.reduction in ("sum_over_batch_size", "mean", "sum") and (
                getattr(loss, "ignore_class", None) is None
            )
            state = CompiledStep(
                key, None, _transforms_targets(loss), casts_integer_inputs(model), weighs
            )
        watch(state, model)
        object.__setattr__(model, "_compiled_step", state)
    if state.reason is not None or (sample_weight is not None and not state.weighs):
        return None, x
    if x.dtype != model.dtype:
        kind = x.dtype.kind
        if kind == "f" or (kind in "biu" and state.casts_integers):
            x = x.astype(model.dtype)
    return state, x


def _not_compilable(model):
    """Why `model`'s default step cannot be replayed, or None if it can."""
    if type(model).train_step is not ModelSteps.train_step:
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
    fn = getattr(loss, "fn", None)
    built_in = type(fn) is FunctionType and fn in _REPLAYABLE_FUNCTIONS
    if type(loss) not in REPLAYABLE_LOSSES and not (type(loss) is LossFunctionWrapper and built_in):
        return f"loss {_loss_name(loss)} is not replayable"
    if not built_in or overridden_method(loss):
        return f"loss {_loss_name(loss)} computes with a function of its own"
    return None


def _loss_name(loss):
    if type(loss) is LossFunctionWrapper:  # (`compile(loss="hinge")`: the function's name)
        return f"{type(loss).__name__}({getattr(loss.fn, '__name__', '?')})"
    return type(loss).__name__


def _transforms_targets(loss):
    """Whether `loss` computes on the targets alone (see `_TARGETS_AS_GIVEN`)."""
    arguments = loss._fn_kwargs
    if arguments.get("label_smoothing"):
        return True
    if loss.fn is functions.binary_crossentropy:
        return not arguments.get("from_logits")  # (on probabilities: `1 - y_true`)
    return loss.fn not in _TARGETS_AS_GIVEN
