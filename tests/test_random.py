"""The global generator and `set_random_seed`: reproducibility and clear errors."""

import random

import numpy as np
import pytest

from minikeras import random as mk_random
from minikeras import utils


def test_seed_restarts_the_stream_of_default_rng():
    mk_random.seed(5)
    drawn = mk_random.generator().random(4)
    np.testing.assert_array_equal(drawn, np.random.default_rng(5).random(4))


def test_seed_keeps_the_generator_object():
    # Code that held on to the generator must see the new stream too.
    held = mk_random.generator()
    mk_random.seed(11)
    assert mk_random.generator() is held
    np.testing.assert_array_equal(held.random(3), np.random.default_rng(11).random(3))


def test_make_seed_is_an_int_from_the_global_stream():
    mk_random.seed(3)
    seeds = [mk_random.make_seed() for _ in range(3)]
    assert all(isinstance(seed, int) and 0 <= seed < 2**31 - 1 for seed in seeds)
    mk_random.seed(3)
    assert [mk_random.make_seed() for _ in range(3)] == seeds


def test_set_random_seed_seeds_all_three_sources():
    utils.set_random_seed(2024)
    first = (mk_random.generator().random(), np.random.rand(), random.random())
    utils.set_random_seed(np.int64(2024))
    assert (mk_random.generator().random(), np.random.rand(), random.random()) == first


@pytest.mark.parametrize(
    "seed, message",
    [
        (-1, r"\[0, 2\*\*32\), got -1"),
        (2**32, r"\[0, 2\*\*32\)"),
        (1.0, "expected an int seed, got 1.0 of type float"),
        ("42", "expected an int seed, got '42' of type str"),
        (True, "of type bool"),
        (None, "of type NoneType"),
    ],
)
def test_set_random_seed_rejects_bad_seeds(seed, message):
    with pytest.raises(ValueError, match="set_random_seed: .*" + message):
        utils.set_random_seed(seed)
