"""The one place where a Variable's value is read, and who is told of reads and effects.

`read_variable` hands out a Variable's value: each recording tape
(`state.active_tapes`, engine.context) boxes it so that gradients flow to
it, each read observer (`state.read_observers`) is told which Variable was
used, while a rule is traced the read interceptors stand in for it, and
inside the call of a mixed-precision layer (`state.autocast`, Keras's
autocast scope) a floating value is cast to the layer's compute dtype.
`note_effect` tells `state.effect_observers` of a read or draw that no tape
sees.
"""

from minikeras.engine.context import TRACING
from minikeras.engine.context import state as _state

__all__ = ["add_read_observer", "note_effect", "read_variable", "remove_read_observer"]


def read_variable(variable):
    """Returns the current value of `variable`, as every read must.

    Active tapes box the value so that gradients flow to it, and read
    observers are told that `variable` was used.

    Args:
        variable: a `Variable`.

    Returns:
        The value as a numpy array, or an autograd box inside a tape.

    Example:
        >>> v = mk.Variable([1.0, 2.0])
        >>> mk.engine.variable_reads.read_variable(v)
        array([1., 2.], dtype=float32)
    """
    value = variable._value
    state = _state
    if state.active_tapes:
        for tape in state.active_tapes:
            value = tape._record_read(variable, value)
    if state.read_observers:
        for observer in state.read_observers:
            observer(variable)
    if TRACING[0] and state.read_interceptors:
        for intercept in state.read_interceptors:
            value = intercept(variable, value)
    autocast = state.autocast
    if autocast is not None and variable._autocast:
        held = variable._value.dtype
        if held.kind == "f" and held != autocast:
            # (after the tapes: the gradient flows back through the cast, in the
            # Variable's own dtype)
            value = value.astype(autocast)
    return value


def note_effect(what):
    """Tells `effect_observers` (engine.context) of a read or draw that no tape sees.

    Args:
        what: a short description, e.g. "a random draw".

    Returns:
        None.

    Example:
        >>> mk.engine.variable_reads.note_effect("a random draw")  # (nobody listens)
    """
    for observer in _state.effect_observers:
        observer(what)


def add_read_observer(observer):
    """Registers `observer(variable)` to be called on every Variable read.

    Args:
        observer: a callable taking one `Variable`.

    Returns:
        None. Remove it with `remove_read_observer`.

    Example:
        >>> seen = []
        >>> mk.engine.variable_reads.add_read_observer(seen.append)
        >>> _ = mk.Variable([1.0]) * 2
        >>> mk.engine.variable_reads.remove_read_observer(seen.append)
        >>> len(seen)
        1
    """
    _state.read_observers.append(observer)


def remove_read_observer(observer):
    """Removes an observer added with `add_read_observer`.

    Args:
        observer: the callable that was added.

    Returns:
        None.

    Raises:
        ValueError: if `observer` was not registered.

    Example:
        >>> mk.engine.variable_reads.add_read_observer(print)
        >>> mk.engine.variable_reads.remove_read_observer(print)
    """
    _state.read_observers.remove(observer)
