"""`clear_session`: start afresh, as `keras.utils.clear_session` does."""

import gc

from minikeras.engine import context

__all__ = ["clear_session"]


def clear_session(free_memory=True):
    """Resets the state minikeras keeps for the calling thread.

    Default layer names count from the start again (the next `Dense` is
    `dense`, not `dense_7`), and the default random generator forgets its
    seed and draws fresh entropy, as Keras 3 forgets its global seed; call
    `set_random_seed` afterwards for a reproducible run. Each thread has its
    own names and generator (see `minikeras.engine.context`): unlike Keras,
    which resets every thread, this resets only the calling thread's. Models
    and layers that exist keep working.

    Args:
        free_memory: run Python's garbage collector afterwards (as Keras
            does; set False in a short loop, where it costs time).

    Returns:
        None.

    Example:
        >>> _ = mk.layers.Dense(2)
        >>> mk.utils.clear_session()
        >>> mk.layers.Dense(2).name
        'dense'
    """
    context.clear_session()
    if free_memory:
        gc.collect()
