"""The state minikeras keeps between calls, one copy per thread (Keras 3's global state).

Everything that changes as a program runs and that two threads must not
share lives in `state`, a `threading.local`: the recording tapes, the layers
being called and the Variables they read, the counters behind default layer
names, and the default random generator. Each thread starts with an empty
state of its own, so two threads can each train a model, or call one shared
model, without seeing each other's tapes, calls or random draws.

`minikeras.utils.clear_session()` starts the calling thread's session
afresh: names count from the start again and the default generator draws
fresh entropy (Keras 3 forgets its global seed the same way).

What stays process-wide, on purpose: registries and caches that every thread
fills with the same answers (signatures, registered objects, fused ops),
`config.floatx()` (a setting, as in Keras), the ids tapes take (unique across
threads), and `variable.TrackingGeneration` (a change to a layer shared
between threads must invalidate every thread's cached weight lists).
"""

import threading

import numpy as np

__all__ = ["TRACING", "SessionState", "clear_session", "state", "tracing"]


class SessionState(threading.local):
    """One thread's state (see the module); read it through `state`.

    Attributes:
        active_tapes: the recording `GradientTape`s, outermost first.
        recording_traces: their trace ids (a box of any other tape id is stale).
        read_observers: callables told of every Variable read.
        read_interceptors: callables `intercept(variable, value) -> value` that
            see every Variable read and may hand out something else (an
            optimizer tracing its rule, `optimizers/_trace_record.py`).
        effect_observers: callables `observer(what)` told of what
            `read_interceptors` cannot see: a Variable's array taken out
            directly (`numpy()`, `np.asarray`), a Variable written, a random
            draw, a `GradientTape` entered, an optimizer's update.
        call_stack: a frame per layer being called, outermost first.
        autocast: None, or the compute dtype (a name) that floating Variables
            are read in: set during the call of a mixed-precision layer
            (Keras's autocast scope, see `Layer`).
        reads: `(variable, frame)` pairs read during the outermost call.
        name_counts: how often each default layer name was handed out.
        generator: the default numpy `Generator` (initializers, dropout, shuffling).

    Example:
        >>> mk.engine.context.state.active_tapes
        []
    """

    def __init__(self):
        self.active_tapes = []
        self.recording_traces = set()
        self.read_observers = []
        self.read_interceptors = []
        self.effect_observers = []
        self.call_stack = []
        self.autocast = None
        self.reads = []
        self.new_session()

    def new_session(self):
        """Resets what `clear_session` resets: name counters and the default generator.

        The generator object is kept and given a fresh stream, so code that
        holds on to it draws from the new one.

        Returns:
            None.

        Example:
            >>> mk.engine.context.state.new_session()
            >>> mk.engine.context.state.name_counts
            {}
        """
        self.name_counts = {}
        fresh = np.random.default_rng()
        if "generator" in self.__dict__:
            self.generator.bit_generator.state = fresh.bit_generator.state
        else:
            self.generator = fresh


state = SessionState()

# How many optimizer rules are being traced now, in any thread: the hooks above are
# asked only while this is not zero (one global look-up instead of a thread-local one).
# Change it with `tracing(+1)` / `tracing(-1)`, which hold a lock (`+=` is not atomic).
TRACING = [0]
_TRACING_LOCK = threading.Lock()


def tracing(change):
    """Adds `change` (+1 or -1) to `TRACING`, under a lock.

    Args:
        change: +1 when a trace starts, -1 when it ends.

    Returns:
        None.

    Example:
        >>> mk.engine.context.tracing(+1); mk.engine.context.tracing(-1)
        >>> mk.engine.context.TRACING
        [0]
    """
    with _TRACING_LOCK:
        TRACING[0] += change


def clear_session():
    """Starts the calling thread's session afresh (see `minikeras.utils.clear_session`).

    Returns:
        None.

    Example:
        >>> mk.engine.context.clear_session()
        >>> mk.engine.context.state.name_counts
        {}
    """
    state.new_session()
