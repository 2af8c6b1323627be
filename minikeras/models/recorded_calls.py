"""When a model's call is recorded, replayed or left eager: the recordings a model keeps.

`models.replayed_call` replays a Sequential or functional model's call
(under a tape, or outside any); this module keeps the model's recordings
(`Calls`, one `Program` or refusal per kind of input) and decides, at each
call, whether a recording can serve it (`program_for`): none while the
model is compiled for eager steps or not yet called once, a new set of
recordings when what the model tracks or an attribute of its layers
changed, and no more once it was recorded `MOST_RECORDINGS` times with no
replay in between.
"""

from minikeras import config
from minikeras.engine.replay import Program, RecordingsHolder
from minikeras.engine.variable import TrackingGeneration
from minikeras.layers import call_checks, tracking
from minikeras.layers.attribute_sets import AttributeSets
from minikeras.models.plain_call_guards import call_guards, guards_hold
from minikeras.models.replayability import casts_integer_inputs, not_replayable

__all__ = [
    "MOST_RECORDINGS",
    "REFUSED",
    "Calls",
    "call_training",
    "new_outermost_call",
    "program_for",
    "stale",
    "watch",
]

TRAINING = (bool, type(None))
REFUSED = object()  # (`call_training`: a call with other arguments than `training`)
MOST_RECORDINGS = 16  # recordings of one model after which it is called eagerly for good


class Calls(RecordingsHolder):
    """A model's recorded calls while what they read stands still (see the module)."""

    __slots__ = ("generation", "sets", "all_sets", "reason", "programs", "layers", "guards",
                 "_casts_integers")  # fmt: skip

    def __init__(self, generation, reason):
        self.generation, self.reason = generation, reason
        self.programs = {}  # (shape, dtype, training, traced) -> Program, or why refused
        self._casts_integers = None

    def casts_integers(self, model):
        """Whether the model's first ops cast integer inputs (`casts_integer_inputs`), found once.

        Args:
            model: the model these are the recordings of.

        Returns:
            A bool.
        """
        found = self._casts_integers  # (floatx, the answer): convolutions cast to floatx
        floatx = config.floatx()
        if found is None or found[0] != floatx:
            found = self._casts_integers = (floatx, casts_integer_inputs(model))
        return found[1]


def new_calls(model, generation):
    """The model's `Calls` made afresh (nothing recorded yet), kept on the model.

    Args:
        model: a Sequential or functional model, called once.
        generation: `TrackingGeneration.value` now.

    Returns:
        The new `Calls`, whose `reason` says why nothing can be replayed (or None).
    """
    recordings = model.__dict__.get("_replayed_recordings", 0)
    reason = not_replayable(model) if recordings < MOST_RECORDINGS else "recorded too often"
    calls = Calls(generation, reason)
    watch(calls, model)  # (its `layers`, not the model itself: the model holds the Calls)
    object.__setattr__(model, "_replayed_calls", calls)
    return calls


def watch(holder, model):
    """Notes on `holder` what its recordings of `model` read, for `stale` to compare later.

    `holder.layers` (the model's tracked layers), `holder.sets` (their and
    the model's attribute sets), `holder.all_sets` (the process's count,
    read before the sum: a set meanwhile is seen next time) and
    `holder.guards` (`plain_call_guards.call_guards`, if `holder.reason` is None).

    Args:
        holder: a `Calls` or `trainers.compiled_step.CompiledStep`.
        model: the model recorded.

    Returns:
        None.

    Example:
        >>> from minikeras.models import recorded_calls
        >>> model = mk.Sequential([mk.Input((3,)), mk.layers.Dropout(0.5)])
        >>> calls = recorded_calls.Calls(0, None)
        >>> recorded_calls.watch(calls, model)
        >>> calls.layers == tuple(model.layers), calls.guards
        (True, None)
    """
    holder.all_sets = AttributeSets.value
    holder.layers = tuple(tracking.tracked_layers(model))
    holder.sets = attribute_sets(model, holder.layers)
    holder.guards = call_guards(model) if holder.reason is None else None


def stale(holder, model):
    """Whether an attribute set or a changed subclassed call made `holder`'s recordings stale.

    Call it while `holder.all_sets` differs from `AttributeSets.value` or
    `holder.guards` is not None (the caller checks, inline); when the
    attribute sets were another model's, `holder.all_sets` is brought up to date.

    Args:
        holder: what `watch` noted on.
        model: the model recorded.

    Returns:
        A bool: True when the model must be recorded again.

    Example:
        >>> from minikeras.models import recorded_calls
        >>> model = mk.Sequential([mk.Input((3,)), mk.layers.Dropout(0.5)])
        >>> calls = recorded_calls.Calls(0, None)
        >>> recorded_calls.watch(calls, model)
        >>> recorded_calls.stale(calls, model)
        False
        >>> model.layers[0].rate = 0.25  # what its call reads
        >>> recorded_calls.stale(calls, model)
        True
    """
    everywhere = AttributeSets.value  # (read before the sum: a set meanwhile is seen next time)
    if holder.all_sets != everywhere:  # an attribute set somewhere: of this model?
        if holder.sets != attribute_sets(model, holder.layers):
            return True
        holder.all_sets = everywhere
    return holder.guards is not None and not guards_hold(holder.guards)


def attribute_sets(model, layers):
    """How many times attributes of the model and its layers were set once built.

    Args:
        model: a model.
        layers: the layers it tracks.

    Returns:
        An int, which grows at each set (`Layer.__setattr__` counts them).
    """
    sets = model.__dict__.get("_attribute_sets", 0)
    for layer in layers:
        sets += layer.__dict__.get("_attribute_sets", 0)
    return sets


def call_training(kwargs):
    """The call's `training` argument, or `REFUSED` when it has other arguments.

    Args:
        kwargs: the call's keyword arguments.

    Returns:
        `training` (a bool or None), or `REFUSED`.

    Example:
        >>> from minikeras.models import recorded_calls
        >>> recorded_calls.call_training({"training": True})
        True
        >>> recorded_calls.call_training({"mask": None}) is recorded_calls.REFUSED
        True
    """
    if not kwargs:
        return None
    training = kwargs.get("training")
    if len(kwargs) != 1 or "training" not in kwargs or type(training) not in TRAINING:
        return REFUSED
    return training


def program_for(model, signature):
    """The model's recordings and the program for a kind of call, or None to run it eagerly.

    Args:
        model: the model being called.
        signature: the kind of call: `(input shape, input dtype, training, traced input)`.

    Returns:
        `(calls, program)`, `program` None when the call is to be recorded
        (into `calls.programs[signature]`); or None when it must run eagerly.
    """
    attributes = model.__dict__
    if attributes.get("run_eagerly") or attributes.get("jit_compile") is False:
        return None  # compiled so: every step eager, as Keras runs it
    calls = attributes.get("_replayed_calls")
    generation = TrackingGeneration.value
    if calls is None or calls.generation != generation:
        if not attributes.get("_first_call_done"):
            return None  # the first call runs eagerly, with its checks
        calls = new_calls(model, generation)
    if calls.reason is not None:
        return None
    if (calls.all_sets != AttributeSets.value or calls.guards is not None) and stale(calls, model):
        calls = new_calls(model, generation)  # (an attribute set, or a subclassed call changed)
        if calls.reason is not None:
            return None
    program = calls.programs.get(signature)
    if program is None:
        if attributes.get("_replayed_recordings", 0) >= MOST_RECORDINGS:
            # (inputs of ever new shapes, as well as changed layers, end the recordings)
            calls.reason, calls.programs = "recorded too often", {}
            return None
        if len(calls.programs) >= MOST_RECORDINGS:
            return None  # kinds of input past the first ones run eagerly (memory)
        return calls, None
    if type(program) is not Program:
        return None
    if attributes.get("_replayed_recordings"):  # a replay: the recordings paid off
        attributes["_replayed_recordings"] = 0
    return calls, program


def new_outermost_call(model, calls):
    """Counts a replay as a new outermost call, as the eager one counts: earlier losses are past.

    Args:
        model: the model replayed.
        calls: its `Calls`.

    Returns:
        None.
    """
    counter = call_checks.counter
    counter.outermost_calls += 1
    number = counter.outermost_calls
    for layer in (model, *calls.layers):
        layer.__dict__["_latest_call"] = number
        losses = layer._losses
        if losses and losses[0][0] < number:
            losses[:] = [entry for entry in losses if entry[0] >= number]
