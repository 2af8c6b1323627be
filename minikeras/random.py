"""The one global random generator behind weight initialization and dropout.

Everything random in minikeras draws from `generator()`, so one call to
`seed` (or `minikeras.utils.set_random_seed`) makes a run reproducible.
"""

import numpy as np

_generator = np.random.default_rng()


def generator():
    """Returns the global numpy `Generator` that initializers and dropout draw from.

    Returns:
        A `numpy.random.Generator`; the same object for the whole session.

    Example:
        >>> generator().random(3).shape
        (3,)
    """
    return _generator


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
        >>> seed(42)
        >>> first = generator().random()
        >>> seed(42)
        >>> generator().random() == first == np.random.default_rng(42).random()
        True
    """
    _generator.bit_generator.state = np.random.default_rng(value).bit_generator.state


def make_seed():
    """Draws a fresh int seed from the global generator (for a per-layer stream).

    Returns:
        An int in `[0, 2**31 - 1)`.

    Example:
        >>> 0 <= make_seed() < 2**31 - 1
        True
    """
    return int(_generator.integers(0, 2**31 - 1))
