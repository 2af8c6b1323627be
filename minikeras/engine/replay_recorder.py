"""`Recorder`: notes the primitive calls one tape records, for `engine.replay.Program`.

While a recorder is active, `engine.primitive` tells it of every node it
makes (`note`), and autograd's own primitives (`anp.sum`, `anp.reshape`...)
do too through a patched `VJPNode.__init__` (`note_autograd`), put back when
the last recorder leaves. A call of another tape, or of nested traces, marks
the recording as one a replay could not repeat (`valid` False).

`Variable.assign` tells it of a value an op of its tape computed (`note_assign`:
a BatchNormalization's moving statistics), which a replay assigns again;
the caller counts the other writes (`Variable.writes`), which refuse the recording.

`RecordingsHolder` is the base of what keeps the programs made from
recordings (a model's, an optimizer's): copies leave them behind.
"""

import threading

import numpy as np
from autograd.core import VJPNode
from autograd.numpy.numpy_boxes import ArrayBox

from minikeras.engine import primitive
from minikeras.engine.context import state as _state

__all__ = ["Recorder", "RecordingsHolder"]


class Recorder:
    """Notes the primitive calls one tape records in this thread (see the module).

    Use it as a context manager around the tape's `with` block.

    Args:
        trace: the trace id of the tape to watch (`GradientTape._trace_id`).

    Attributes:
        entries: `(op, argnums, parents, values, box)` per recorded call.
        reads: `{id(array): Variable}` of the Variables read meanwhile.
        assigns: `(variable, node, previous)` per `assign` of a value an op of
            the tape computed (`node` made it; `previous` is the array the
            Variable held before).
        valid: False once a call was seen that a replay could not repeat
            (one of another tape, or of several nested traces).

    Example:
        >>> w = mk.Variable([2.0])
        >>> with mk.GradientTape() as tape:
        ...     with mk.engine.replay.Recorder(tape._trace_id) as recorder:
        ...         y = w * w
        >>> len(recorder.entries), recorder.valid
        (1, True)
    """

    def __init__(self, trace):
        self.trace = trace
        self.thread = threading.get_ident()
        self.entries = []
        self.valid = True
        self.reads = {}  # id(array) -> the Variable it was read from (frozen ones among them)
        self.assigns = []

    def __enter__(self):
        with _patch_lock:
            if not primitive.recorders:
                VJPNode.__init__ = _noting_init
            primitive.recorders.append(self)
        _state.read_observers.append(self._note_read)
        return self

    def __exit__(self, *exc_info):
        _state.read_observers.remove(self._note_read)
        with _patch_lock:
            primitive.recorders.remove(self)
            if not primitive.recorders:
                VJPNode.__init__ = _autograd_init

    def _note_read(self, variable):
        # Which Variable an array came from: a weight the tape does not watch (a frozen
        # layer's) reaches the ops as its own array, which a replay then reads afresh.
        self.reads[id(variable._value)] = variable

    def note(self, op, trace, argnums, parents, values, box):
        """Called by `engine.primitive` for each node it records in this thread."""
        if trace != self.trace:
            self.valid = False
        else:
            self.entries.append((op, argnums, parents, values, None, box._node))

    def note_assign(self, variable, value):
        """Called by `Variable.assign` (in any thread): notes a value of this tape's ops."""
        box = getattr(value, "_value", value)  # (a Tensor's box, or the box itself)
        if (
            self.thread == threading.get_ident()
            and type(box) is ArrayBox
            and box._trace == self.trace
        ):
            self.assigns.append((variable, box._node, variable._value))

    def unwatched_reads(self, inputs, sources):
        """The Variables whose own arrays ops received as plain data (no tape watched them).

        A frozen layer's weights, or a moving statistic: a replay passes their
        current arrays, as an eager step reads them. An array another way (a
        cast, a slice, a Variable's value read after the step assigned it) is
        still "computed outside the recorded ops", and refused.

        Returns:
            `(variables, arrays)`: the Variables, and the arrays the ops received.
        """
        held = {id(variable): previous for variable, _, previous in reversed(self.assigns)}
        found, arrays = [], []
        for _, argnums, _, values, _, _ in self.entries:
            for position, value in enumerate(values):
                if position in argnums or type(value) is not np.ndarray:
                    continue
                variable = self.reads.get(id(value))
                if (
                    variable is not None
                    and held.get(id(variable), variable._value) is value  # (as the step began)
                    and all(value is not item for item in inputs)
                    and all(variable is not other for other in (*sources, *found))
                ):
                    found.append(variable)
                    arrays.append(value)
        return tuple(found), arrays

    def note_autograd(self, fun, argnums, parents, args, kwargs, node):
        """Called for each node autograd's own primitive wrapper makes in this thread."""
        if any(isinstance(arg, ArrayBox) for arg in args):
            self.valid = False  # nested traces
        else:
            self.entries.append((fun, argnums, parents, args, kwargs, node))


# autograd's primitives (`anp.sum`, `anp.reshape`...) make their nodes with
# `VJPNode(value, fun, args, kwargs, parent_argnums, parents)`; while a recorder
# is active, that constructor also tells it (an autograd internal, see docs/engine.md).
_autograd_init = VJPNode.__init__
_patch_lock = threading.Lock()


def _noting_init(node, value, fun, args, kwargs, parent_argnums, parents):
    _autograd_init(node, value, fun, args, kwargs, parent_argnums, parents)
    thread = threading.get_ident()
    for recorder in primitive.recorders:
        if recorder.thread == thread:
            recorder.note_autograd(fun, parent_argnums, parents, args, kwargs, node)


class RecordingsHolder:
    """Base of the objects that keep recorded programs: copies leave them behind.

    A program's replay is generated code, which pickle cannot name, and which
    reads the arrays and Variables it was recorded with. So a pickled or
    deep-copied holder comes back as None, which its owner (a model, an
    optimizer) takes as "nothing recorded yet": the copy records its own.

    Example:
        >>> import copy
        >>> class Recordings(mk.engine.replay.RecordingsHolder):
        ...     pass
        >>> copy.deepcopy([Recordings()])
        [None]
    """

    __slots__ = ()

    def __reduce__(self):
        return (_nothing_recorded, ())


def _nothing_recorded():
    """What a pickled or copied `RecordingsHolder` comes back as."""
    return None
