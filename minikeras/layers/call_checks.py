"""What `Layer.__call__` watches while a layer runs: registration you can see.

The thread's `call_stack` holds a `Frame` for each layer being called (in `build` or in
`call`). While the outermost call runs, every Variable read is recorded
(through `read_variable`'s observers) with the frame that read it; when the
call ends, `check_reads` names the Variables the called model does not track,
or that were created inside `call()`. The other checks run once: layers
created inside `call()`, float arrays that `build()` stored where a weight was
probably meant, and layers or Variables held where tracking cannot look.
"""

import inspect

import numpy as np

from minikeras.engine.context import state as _state
from minikeras.engine.tensor import Tensor
from minikeras.engine.variable import Variable
from minikeras.layers import tracking
from minikeras.layers.tracking import warn

__all__ = [
    "Frame",
    "accepts",
    "check_build_attributes",
    "check_reads",
    "names_argument",
    "observe_read",
    "warn_if_created_in_call",
    "warn_untrackable",
]


class Frame:
    """One layer's `__call__` in progress: in `build` or in `call`."""

    __slots__ = ("layer", "phase", "watermark", "training")

    def __init__(self, layer, phase, training):
        self.layer, self.phase, self.training = layer, phase, training
        self.watermark = Variable._uid


class _Counter:
    """Numbers the outermost calls (see `Layer.__call__` and `LayerLosses.add_loss`).

    A layer keeps the number of its latest call, and each loss given to
    add_loss() the number current when it came; `losses` counts those added
    during or after the latest call. That is Keras's "added losses are cleared
    at the start of each outermost call", without walking every sub-layer.
    """

    __slots__ = ("outermost_calls",)

    def __init__(self):
        self.outermost_calls = 0


counter = _Counter()
# The frames of the layers being called (outermost first) and the (variable,
# frame) pairs read during the outermost call are the thread's: `_state.call_stack`
# and `_state.reads` (engine.context).


def observe_read(variable):
    """Records that `variable` was read by the layer whose call is innermost."""
    _state.reads.append((variable, _state.call_stack[-1]))


accepts_cache = {}


def accepts(function, argument):
    """Whether `function` takes `argument` (cached: __call__ asks on every call)."""
    key = (getattr(function, "__func__", function), argument)
    answer = accepts_cache.get(key)
    if answer is None:
        try:
            parameters = inspect.signature(function).parameters
        except (TypeError, ValueError):
            answer = False
        else:
            answer = argument in parameters or any(
                p.kind is p.VAR_KEYWORD for p in parameters.values()
            )
        accepts_cache[key] = answer
    return answer


def names_argument(function, argument):
    """Whether `function` names `argument` itself (`**kwargs` does not count); cached."""
    key = (getattr(function, "__func__", function), argument, "named")
    answer = accepts_cache.get(key)
    if answer is None:
        try:
            answer = argument in inspect.signature(function).parameters
        except (TypeError, ValueError):
            answer = False
        accepts_cache[key] = answer
    return answer


def warn_if_created_in_call(layer):
    """Flags a layer made inside another layer's call(): it would be new at every call."""
    if _state.call_stack and _state.call_stack[-1].phase == "call":
        enclosing = _state.call_stack[-1].layer
        object.__setattr__(layer, "_created_in_call", True)
        if type(layer)._never_has_weights:  # `layers.add([x, y])` in a call is fine (Keras code)
            return
        key = ("layer-in-call", type(layer).__name__)
        if key not in enclosing._warned:
            enclosing._warned.add(key)
            warn(
                f"Layer '{layer.name}' ({type(layer).__name__}) was created inside call() "
                f"of '{enclosing.name}': it gets fresh, untrained weights on every call "
                "and will not be trained or saved. Create it in __init__() or build() "
                "and assign it to an attribute."
            )


def warn_untrackable(layer):
    """Flags layers and Variables held where tracking cannot look (after the first call)."""
    for path, _owner, value, kind in tracking.find_untrackable(layer):
        what = "Variable" if isinstance(value, Variable) else "Layer"
        warn(
            f"{what} '{value.name}' held at '{layer.name}.{path}' (in a {kind}) is not "
            "tracked: it will not be trained or saved. Keep layers and weights in "
            "attributes, lists, dicts or tuples."
        )


def check_build_attributes(layer, before):
    """Flags float arrays that build() stored where a weight was probably meant.

    Constant arrays and masks of zeros and ones are taken as meant.
    """
    for name, value in vars(layer).items():
        if name in layer._constants or before.get(name) is value:
            continue
        if isinstance(value, Variable) or not isinstance(value, (np.ndarray, Tensor)):
            continue
        array = np.asarray(value)
        if array.dtype.kind != "f" or array.size < 2 or np.all(array == array.flat[0]):
            continue
        if np.all((array == 0) | (array == 1)):  # a mask of zeros and ones (PixelCNN's kernel)
            continue
        warn(
            f"'{layer.name}.{name}' is a plain {array.dtype} array of shape {array.shape} "
            "made in build(), not a weight: it will not be trained or saved. If it should "
            f"learn, create it with self.add_weight(); if it is a constant on purpose, "
            f"store it with self.add_constant({name!r}, value)."
        )


def check_reads(layer):
    """Names the Variables read in this call that this layer does not track."""
    tracked = layer._tracked_ids
    if tracked is not None:
        # The usual call: every Variable read is tracked and older than the call reading it.
        for variable, frame in _state.reads:
            if id(variable) not in tracked or variable._index > frame.watermark:
                break
        else:
            _state.reads.clear()
            return
    seen = {}
    for variable, frame in _state.reads:
        seen.setdefault(id(variable), (variable, frame))
    _state.reads.clear()
    if layer._tracked_ids is None or any(key not in layer._tracked_ids for key in seen):
        object.__setattr__(layer, "_tracked_ids", {id(w) for w in layer.weights})
    for key, (variable, frame) in seen.items():
        user = frame.layer
        if frame.phase == "call" and variable._index > frame.watermark:
            warn_key = ("variable-in-call", id(user), variable.name)
            message = (
                f"Variable '{variable.name}' was created inside call() of '{user.name}': "
                "it is new on every call, so it will not be trained or saved. "
                "Create it with self.add_weight() in build() or __init__()."
            )
        elif key not in layer._tracked_ids and not getattr(user, "_created_in_call", False):
            layer._untracked_seen[key] = (variable, user.name)
            warn_key = ("untracked", key)
            where = "" if user is layer else f" of layer '{user.name}'"
            message = (
                f"Variable '{variable.name}' (shape {variable.shape}) is used in call()"
                f"{where} but is not tracked by '{layer.name}': it will not be trained "
                "or saved. Create it with self.add_weight() (or assign it to an "
                "attribute) of a layer that the model holds in an attribute, list, "
                "dict or tuple, not in a set, a plain object, a closure or a global."
            )
        else:
            continue
        if warn_key not in layer._warned:
            layer._warned.add(warn_key)
            warn(message)
