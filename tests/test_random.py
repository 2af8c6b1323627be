"""The global generator and `set_random_seed`: reproducibility and clear errors."""

import random

import numpy as np
import pytest

import minikeras as mk
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


# ------------------------------------------------------------- keras.random-style draws

DRAWS = {
    "normal": lambda seed: mk_random.normal((3, 4), seed=seed),
    "uniform": lambda seed: mk_random.uniform((3, 4), seed=seed),
    "truncated_normal": lambda seed: mk_random.truncated_normal((3, 4), seed=seed),
    "randint": lambda seed: mk_random.randint((3, 4), 0, 100, seed=seed),
    "dropout": lambda seed: mk_random.dropout(np.ones((3, 4), "float32"), 0.5, seed=seed),
    "shuffle": lambda seed: mk_random.shuffle(np.arange(12).reshape(12, 1), seed=seed),
    "categorical": lambda seed: mk_random.categorical(np.zeros((3, 5)), 4, seed=seed),
}


@pytest.mark.parametrize("name", sorted(DRAWS))
def test_an_int_seed_gives_the_same_draw_every_call(name):
    draw = DRAWS[name]
    first = draw(7).numpy()
    np.testing.assert_array_equal(draw(7).numpy(), first)
    assert not np.array_equal(draw(8).numpy(), first)


@pytest.mark.parametrize("name", sorted(DRAWS))
def test_a_seed_generator_advances_and_replays(name):
    draw = DRAWS[name]
    a, b = mk_random.SeedGenerator(3), mk_random.SeedGenerator(3)
    first, second = draw(a).numpy(), draw(a).numpy()
    assert not np.array_equal(first, second)
    np.testing.assert_array_equal(draw(b).numpy(), first)
    np.testing.assert_array_equal(draw(b).numpy(), second)


@pytest.mark.parametrize("name", sorted(DRAWS))
def test_no_seed_draws_from_the_global_stream(name):
    draw = DRAWS[name]
    utils.set_random_seed(5)
    first = draw(None).numpy()
    assert not np.array_equal(draw(None).numpy(), first)  # the stream advanced
    utils.set_random_seed(5)
    np.testing.assert_array_equal(draw(None).numpy(), first)


def test_an_unseeded_seed_generator_follows_set_random_seed():
    utils.set_random_seed(9)
    first = mk_random.uniform((4,), seed=mk_random.SeedGenerator()).numpy()
    utils.set_random_seed(9)
    np.testing.assert_array_equal(
        mk_random.uniform((4,), seed=mk_random.SeedGenerator()).numpy(), first
    )


def test_float_draws_are_float32_with_the_asked_moments():
    x = mk_random.normal((200_000,), mean=2.0, stddev=3.0, seed=0).numpy()
    assert x.dtype == np.float32
    assert abs(x.mean() - 2.0) < 0.03 and abs(x.std() - 3.0) < 0.03
    u = mk_random.uniform((200_000,), minval=-2.0, maxval=4.0, seed=0).numpy()
    assert u.dtype == np.float32 and u.min() >= -2.0 and u.max() < 4.0
    assert abs(u.mean() - 1.0) < 0.03
    assert mk_random.normal((2,), dtype="float64", seed=0).dtype == np.float64


def test_truncated_normal_stays_within_two_stddev_with_its_variance():
    x = mk_random.truncated_normal((200_000,), mean=1.0, stddev=0.5, seed=0).numpy()
    assert np.abs(x - 1.0).max() <= 1.0
    # Variance of a standard normal truncated at +-2: 1 - 4 phi(2) / (Phi(2) - Phi(-2)).
    phi2 = np.exp(-2.0) / np.sqrt(2 * np.pi)
    variance = 1 - 4 * phi2 / 0.9544997361036416
    assert abs(x.std() - 0.5 * np.sqrt(variance)) < 0.005


def test_randint_covers_its_half_open_range():
    x = mk_random.randint((10_000,), -2, 3, dtype="int64", seed=0).numpy()
    assert x.dtype == np.int64 and sorted(set(x.tolist())) == [-2, -1, 0, 1, 2]


def test_dropout_scales_kept_entries_and_broadcasts_its_noise_shape():
    x = np.arange(1, 13, dtype="float32").reshape(3, 4)
    out = mk_random.dropout(x, 0.25, noise_shape=(None, 1), seed=2).numpy()
    for row, source in zip(out, x):
        # One keep decision per row: all kept (scaled by 4/3) or all dropped.
        assert np.allclose(row, 0) or np.allclose(row, source / 0.75)
    with pytest.raises(ValueError, match=r"`rate` must be in \[0, 1\], got 1.5"):
        mk_random.dropout(x, 1.5)


def test_dropout_gradient_is_the_kept_scale():
    x = mk.Variable(np.ones((4, 5), "float32"))
    with mk.GradientTape() as tape:
        y = mk.ops.sum(mk_random.dropout(x, 0.5, seed=1))
    grad = tape.gradient(y, x).numpy()
    kept = mk_random.dropout(np.ones((4, 5), "float32"), 0.5, seed=1).numpy()
    np.testing.assert_array_equal(grad, kept)
    assert grad.dtype == np.float32


def test_shuffle_permutes_along_the_axis_only():
    x = np.arange(20).reshape(4, 5)
    out = mk_random.shuffle(x, axis=1, seed=3).numpy()
    np.testing.assert_array_equal(np.sort(out, axis=1), x)
    offsets = out - out[:, :1]
    np.testing.assert_array_equal(offsets, np.repeat(offsets[:1], 4, axis=0))  # one column order
    assert not np.array_equal(out, x)


def test_categorical_follows_the_softmax_of_the_logits():
    probabilities = np.array([[0.1, 0.6, 0.3]])
    draws = mk_random.categorical(np.log(probabilities), 60_000, seed=0).numpy()
    assert draws.shape == (1, 60_000) and draws.dtype == np.int32
    frequencies = np.bincount(draws[0], minlength=3) / 60_000
    np.testing.assert_allclose(frequencies, probabilities[0], atol=0.01)


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda: mk_random.normal((2,), seed="1"), TypeError, "normal: `seed` must be an int"),
        (lambda: mk_random.uniform((2,), seed=-3), ValueError, "non-negative int, got -3"),
        (lambda: mk_random.uniform((2,), 1.0, 0.0), ValueError, "must not be below"),
        (lambda: mk_random.randint((2,), 3, 3), ValueError, r"`maxval` \(3\) must be above"),
        (lambda: mk_random.randint((2,), 0, 3, dtype="float32"), ValueError, "integer dtype"),
        (lambda: mk_random.normal((2,), dtype="int32"), ValueError, "float dtype"),
        (lambda: mk_random.normal((2, -1)), ValueError, "negative sizes"),
        (lambda: mk_random.normal("ab"), TypeError, "`shape` must be a tuple of ints"),
        (lambda: mk_random.categorical(np.zeros(3), 2), ValueError, "must be 2D"),
        (lambda: mk_random.shuffle(np.zeros((2, 2)), axis=2), ValueError, "out of range"),
        (lambda: mk_random.SeedGenerator(1.5), TypeError, "SeedGenerator: `seed` must be"),
    ],
)
def test_bad_arguments_are_named(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_a_layer_seed_generator_is_restored_by_load_model(tmp_path):
    @mk.saving.register_serializable(package="test_random")
    class Noisy(mk.layers.Layer):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.seed_generator = mk_random.SeedGenerator(4)

        def call(self, inputs, training=None):
            if training:
                return inputs + mk_random.normal(inputs.shape, seed=self.seed_generator)
            return inputs

    model = mk.Sequential([mk.Input((3,)), Noisy(name="noisy"), mk.layers.Dense(1)])
    model.compile("sgd", "mse")
    x, y = np.ones((8, 3), "float32"), np.zeros((8, 1), "float32")
    model.fit(x, y, epochs=1, verbose=0)
    model.save(tmp_path / "m.minikeras")
    expected = model.layers[0].seed_generator.next()
    loaded = mk.saving.load_model(tmp_path / "m.minikeras")
    # A fresh Noisy's stream starts at seed 4; the loaded one continues where the saved one was.
    assert loaded.layers[0].seed_generator.next() == expected
    assert mk_random.SeedGenerator(4).next() != expected
