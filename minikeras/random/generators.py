"""The global random generator, `SeedGenerator`, and how a `seed=` argument picks a stream.

Everything random in minikeras draws from `generator()` unless it is given a
seed, so one call to `seed` (or `minikeras.utils.set_random_seed`) makes a
run reproducible.
"""

import numpy as np

from minikeras.engine.context import TRACING
from minikeras.engine.context import state as _state
from minikeras.engine.tensor import note_effect

__all__ = ["SeedGenerator", "generator", "make_seed", "rng_for", "seed"]


def generator():
    """Returns the default numpy `Generator` that initializers and dropout draw from.

    Each thread has its own (see `minikeras.engine.context`): a new thread
    starts unseeded, as in Keras 3, until it calls `seed` or
    `minikeras.utils.set_random_seed`.

    Returns:
        A `numpy.random.Generator`; the same object for the thread's whole
        session (`minikeras.utils.clear_session()` gives it a fresh stream).

    Example:
        >>> mk.random.generator().random(3).shape
        (3,)
    """
    return _state.generator


def seed(value=None):
    """Reseeds the global generator: it restarts the stream of `np.random.default_rng(value)`.

    The generator object itself is kept, so code that holds on to
    `generator()` sees the new stream too.

    Args:
        value: an int (or anything `np.random.default_rng` accepts); None
            draws fresh entropy from the operating system.

    Returns:
        None.

    Example:
        >>> mk.random.seed(42)
        >>> first = mk.random.generator().random()
        >>> mk.random.seed(42)
        >>> mk.random.generator().random() == first == np.random.default_rng(42).random()
        True
    """
    _state.generator.bit_generator.state = np.random.default_rng(value).bit_generator.state


def make_seed():
    """Draws a fresh int seed from the global generator (for a per-layer stream).

    Returns:
        An int in `[0, 2**31 - 1)`.

    Example:
        >>> 0 <= mk.random.make_seed() < 2**31 - 1
        True
    """
    return int(_state.generator.integers(0, 2**31 - 1))


class SeedGenerator:
    """A stateful source of seeds, owned by a layer or by user code (Keras's `SeedGenerator`).

    Each draw that is given this object as `seed=` takes values from its own
    stream, which then advances: two calls give different values, and two
    generators made with the same int seed give the same sequence of draws.
    A layer that holds one in an attribute has its stream saved and restored
    with the model's training state, so resumed training draws the same values.

    Args:
        seed: an int, or None to take a seed from the global generator (so
            `minikeras.utils.set_random_seed` makes it reproducible too).
        name: an optional name, for messages.

    Raises:
        TypeError: if `seed` is not an int or None (Keras raises ValueError).
        ValueError: if `seed` is negative.

    Example:
        >>> a, b = mk.random.SeedGenerator(7), mk.random.SeedGenerator(7)
        >>> first = mk.random.uniform((3,), seed=a).numpy()
        >>> bool(np.array_equal(first, mk.random.uniform((3,), seed=b).numpy()))
        True
        >>> bool(np.array_equal(first, mk.random.uniform((3,), seed=a).numpy()))
        False
    """

    def __init__(self, seed=None, name=None):
        if seed is not None:
            _check_int_seed(seed, "SeedGenerator")
            seed = int(seed)
        self.seed = seed
        self.name = name or "seed_generator"
        self.generator = np.random.default_rng(make_seed() if seed is None else seed)

    def next(self):
        """Draws a fresh int seed from this generator's stream (the stream advances).

        Returns:
            An int in `[0, 2**31 - 1)`.

        Example:
            >>> sg = mk.random.SeedGenerator(3)
            >>> sg.next() != sg.next()
            True
        """
        return int(self.generator.integers(0, 2**31 - 1))

    def get_config(self):
        """The arguments that rebuild this generator (its seed, not its position).

        Returns:
            A dict with `seed` and `name`.

        Example:
            >>> mk.random.SeedGenerator(5, name="aug").get_config()
            {'seed': 5, 'name': 'aug'}
        """
        return {"seed": self.seed, "name": self.name}

    @classmethod
    def from_config(cls, config):
        """A new generator from `get_config()`'s dict (its stream starts afresh).

        Args:
            config: a dict with `seed` and optionally `name`.

        Returns:
            A `SeedGenerator`.

        Example:
            >>> sg = mk.random.SeedGenerator.from_config({"seed": 5, "name": "aug"})
            >>> sg.next() == mk.random.SeedGenerator(5).next()
            True
        """
        return cls(**config)

    def __repr__(self):
        return f"<SeedGenerator name={self.name!r} seed={self.seed!r}>"


def _check_int_seed(value, where):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(
            f"{where}: `seed` must be an int, a SeedGenerator or None, got {value!r:.80} "
            f"of type {type(value).__name__}"
        )
    if value < 0:
        raise ValueError(f"{where}: `seed` must be a non-negative int, got {value}")


def rng_for(seed, where="random"):
    """The numpy generator a `seed=` argument names (see the module).

    Args:
        seed: None (the global generator), an int (a new generator seeded
            with it, so the draw is the same every time) or a `SeedGenerator`
            (its own stream).
        where: the caller's name, for the error message.

    Returns:
        A `numpy.random.Generator`.

    Raises:
        TypeError: for any other kind of seed (Keras raises ValueError).
        ValueError: for a negative int seed.

    Example:
        >>> a = mk.random.rng_for(4).random()
        >>> a == mk.random.rng_for(4).random()
        True
    """
    if TRACING[0] and _state.effect_observers:
        note_effect("a random draw")
    if seed is None:
        return _state.generator
    if isinstance(seed, SeedGenerator):
        return seed.generator
    _check_int_seed(seed, where)
    return np.random.default_rng(int(seed))
