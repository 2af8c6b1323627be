"""Random numbers, as `keras.random` gives them: seedable draws and `SeedGenerator`.

Everything random in minikeras (weight initialization, dropout, the noise and
augmentation layers, shuffling in `fit`) draws from one global numpy
generator unless given a seed, so `minikeras.utils.set_random_seed` makes a
run reproducible. Each function here takes `seed=`:

- `None`: draw from the global generator (its stream advances);
- an int: a fixed draw, the same values at every call (Keras's stateless seed);
- a `SeedGenerator`: draw from its own stream, which advances at each call.
"""

from minikeras.random.distributions import beta, binomial, gamma
from minikeras.random.generators import (
    SeedGenerator,
    generator,
    make_seed,
    rng_for,
    seed,
)
from minikeras.random.random import (
    categorical,
    dropout,
    normal,
    randint,
    shuffle,
    truncated_normal,
    uniform,
)

__all__ = [
    "SeedGenerator",
    "beta",
    "binomial",
    "categorical",
    "dropout",
    "gamma",
    "generator",
    "make_seed",
    "normal",
    "randint",
    "rng_for",
    "seed",
    "shuffle",
    "truncated_normal",
    "uniform",
]
