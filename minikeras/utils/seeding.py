"""Reproducible runs: `set_random_seed` seeds every random source minikeras uses."""

import random

import numpy as np

from minikeras import random as _random

__all__ = ["set_random_seed"]


def set_random_seed(seed):
    """Seeds every random source minikeras uses, so runs are reproducible.

    Reseeds the global generator of `minikeras.random` (weight initialization,
    dropout), numpy's legacy `np.random.seed` and Python's `random.seed`.

    Args:
        seed: an int in `[0, 2**32)` (numpy's legacy seeding range).

    Returns:
        None.

    Raises:
        ValueError: if `seed` is not an int or lies outside `[0, 2**32)`.

    Example:
        >>> mk.utils.set_random_seed(1234)
        >>> first = mk.initializers.GlorotUniform()((3, 4))
        >>> mk.utils.set_random_seed(1234)
        >>> bool(np.array_equal(first, mk.initializers.GlorotUniform()((3, 4))))
        True
    """
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise ValueError(
            f"set_random_seed: expected an int seed, got {seed!r} of type {type(seed).__name__}"
        )
    if not 0 <= seed < 2**32:
        raise ValueError(f"set_random_seed: expected a seed in [0, 2**32), got {seed}")
    seed = int(seed)
    _random.seed(seed)
    np.random.seed(seed)
    random.seed(seed)
