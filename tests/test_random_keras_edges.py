"""minikeras.random where a Keras user meets edges: gamma/beta/binomial, array bounds,
dropout at rate 0 and 1, dtypes; against the distributions' moments and, where
Keras is installed, against Keras's own draws (statistics, not numbers)."""

import numpy as np
import pytest

import minikeras as mk
from minikeras import random as mk_random
from minikeras import utils

# ------------------------------------------------------------- gamma, beta, binomial

NEW_DRAWS = {
    "gamma": lambda seed: mk_random.gamma((3, 4), 2.0, seed=seed),
    "beta": lambda seed: mk_random.beta((3, 4), 2.0, 3.0, seed=seed),
    "binomial": lambda seed: mk_random.binomial((3, 4), 20, 0.5, seed=seed),
}


@pytest.mark.parametrize("name", sorted(NEW_DRAWS))
def test_new_draws_follow_the_seed_rules(name):
    draw = NEW_DRAWS[name]
    np.testing.assert_array_equal(draw(7).numpy(), draw(7).numpy())
    assert not np.array_equal(draw(7).numpy(), draw(8).numpy())
    a, b = mk_random.SeedGenerator(3), mk_random.SeedGenerator(3)
    first = draw(a).numpy()
    assert not np.array_equal(draw(a).numpy(), first)
    np.testing.assert_array_equal(draw(b).numpy(), first)
    utils.set_random_seed(5)
    first = draw(None).numpy()
    utils.set_random_seed(5)
    np.testing.assert_array_equal(draw(None).numpy(), first)
    assert first.dtype == np.float32 and first.shape == (3, 4)


def test_gamma_has_mean_and_variance_alpha():
    x = mk_random.gamma((200_000,), 3.0, seed=0).numpy()
    assert abs(x.mean() - 3.0) < 0.03 and abs(x.var() - 3.0) < 0.06
    per_column = mk_random.gamma((50_000, 2), np.array([0.5, 5.0]), seed=1).numpy()
    np.testing.assert_allclose(per_column.mean(axis=0), [0.5, 5.0], rtol=0.03)
    np.testing.assert_array_equal(mk_random.gamma((3,), 0.0, seed=0).numpy(), 0)
    assert mk_random.gamma((2,), 1.0, dtype="float64", seed=0).dtype == np.float64


def test_beta_has_its_mean_and_variance():
    a, b = 2.0, 5.0
    x = mk_random.beta((200_000,), a, b, seed=0).numpy()
    assert x.min() >= 0 and x.max() <= 1
    assert abs(x.mean() - a / (a + b)) < 0.003
    assert abs(x.var() - a * b / ((a + b) ** 2 * (a + b + 1))) < 0.001


def test_binomial_counts_whole_successes_with_mean_np():
    x = mk_random.binomial((100_000, 3), np.array([1, 10, 100]), 0.3, seed=0).numpy()
    assert x.dtype == np.float32 and np.all(x == np.round(x))
    assert np.all((x >= 0) & (x <= [1, 10, 100]))
    np.testing.assert_allclose(x.mean(axis=0), [0.3, 3.0, 30.0], rtol=0.02)
    np.testing.assert_allclose(x.var(axis=0), [0.21, 2.1, 21.0], rtol=0.03)
    edges = mk_random.binomial((4,), 7, np.array([0.0, 1.0, 0.0, 1.0]), seed=0).numpy()
    np.testing.assert_array_equal(edges, [0, 7, 0, 7])


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: mk_random.gamma((2,), -1.0), "gamma: `alpha` must be >= 0, got -1.0"),
        (lambda: mk_random.gamma((2,), np.nan), "gamma: `alpha` must be >= 0"),
        (lambda: mk_random.gamma((2,), 1.0, dtype="int32"), "gamma: `dtype` must be a float"),
        (lambda: mk_random.gamma((2,), np.ones(3)), r"`alpha` of shape \(3,\) does not broad"),
        (lambda: mk_random.beta((2,), 0.0, 1.0), "beta: `alpha` must be > 0, got 0.0"),
        (lambda: mk_random.beta((2,), 1.0, -2.0), "beta: `beta` must be > 0"),
        (lambda: mk_random.binomial((2,), -1, 0.5), "binomial: `counts` must be >= 0"),
        (lambda: mk_random.binomial((2,), 2.5, 0.5), "`counts` must be whole numbers"),
        (lambda: mk_random.binomial((2,), 3, 1.5), "`probabilities` must be <= 1, got 1.5"),
        (lambda: mk_random.binomial((2,), 3, -0.1), "`probabilities` must be >= 0"),
    ],
)
def test_bad_parameters_are_named(call, message):
    with pytest.raises(ValueError, match=message):
        call()


# ------------------------------------------------------------- the Keras edges of the old draws


def test_uniform_takes_array_bounds_that_broadcast():
    low, high = np.array([0.0, 10.0, 100.0]), np.array([1.0, 11.0, 101.0])
    x = mk_random.uniform((5000, 3), low, high, seed=0).numpy()
    assert np.all(x >= low) and np.all(x < high)
    np.testing.assert_allclose(x.mean(axis=0), low + 0.5, atol=0.02)
    with pytest.raises(ValueError, match="must not be below"):
        mk_random.uniform((2, 3), low, np.array([1.0, 9.0, 101.0]))


def test_randint_takes_array_bounds_that_broadcast():
    x = mk_random.randint((3000, 2), np.array([0, 10]), np.array([2, 13]), seed=0).numpy()
    assert sorted(set(x[:, 0].tolist())) == [0, 1] and sorted(set(x[:, 1].tolist())) == [10, 11, 12]
    with pytest.raises(ValueError, match="must be above"):
        mk_random.randint((2,), np.array([0, 5]), np.array([1, 5]))


@pytest.mark.parametrize(
    "call, message",
    [
        # numpy drew (3,) here, reading bounds of shape (2, 3) without a word
        (lambda: mk_random.randint((3,), np.zeros((2, 3), int), 5), r"randint.*minval.*\(2, 3\)"),
        (lambda: mk_random.uniform((3,), np.zeros(4)), r"uniform.*minval.*\(4,\).*\(3,\)"),
        # 2**40 wrapped round to negative int32 values
        (lambda: mk_random.randint((2,), 0, 2**40), r"randint.*maxval.*int32"),
        (lambda: mk_random.randint((2,), -(2**40), 0, dtype="int64"), None),
        (lambda: mk_random.randint((2,), -1, 3, dtype="uint8"), r"randint.*minval.*uint8"),
        # 0.5 was floored: values below minval
        (lambda: mk_random.randint((2,), 0.5, 3), r"randint.*whole"),
        (lambda: mk_random.uniform((2,), np.nan, 1.0), r"uniform.*finite"),
        (lambda: mk_random.uniform((2,), 0.0, np.inf), r"uniform.*finite"),
    ],
)
def test_bounds_that_do_not_fit_are_named(call, message):
    if message is None:  # in range for int64
        assert call().dtype == "int64"
        return
    with pytest.raises(ValueError, match=message):
        call()


def test_randint_and_categorical_dtype_none_as_keras():
    assert mk_random.randint((3,), 0, 5, dtype=None, seed=0).dtype == np.int32
    draws = mk_random.categorical(np.zeros((2, 3)), 4, dtype=None, seed=0)
    assert draws.dtype == np.float32 and draws.shape == (2, 4)
    with pytest.raises(TypeError, match="categorical: `num_samples` must be an int, got 2.5"):
        mk_random.categorical(np.zeros((2, 3)), 2.5)


def test_dropout_rate_zero_is_identity_and_rate_one_is_zeros_with_zero_gradient():
    x = np.array([[1.0, -2.0, np.inf]], "float32")
    np.testing.assert_array_equal(mk_random.dropout(x, 0.0, seed=0).numpy(), x)
    zeros = mk_random.dropout(x, 1.0, seed=0)
    assert zeros.dtype == np.float32
    np.testing.assert_array_equal(zeros.numpy(), [[0.0, 0.0, 0.0]])  # not nan for inf
    variable = mk.Variable(np.ones((2, 3), "float32"))
    with mk.GradientTape() as tape:
        total = mk.ops.sum(mk_random.dropout(variable, 1.0))
    np.testing.assert_array_equal(tape.gradient(total, variable).numpy(), np.zeros((2, 3)))


def test_dropout_rejects_integer_inputs_and_a_mask_that_does_not_broadcast():
    # An int input scaled by 1/0.7 would be truncated to 1: no silent wrong answer.
    with pytest.raises(TypeError, match="dropout: `inputs` must be floats, got dtype int32"):
        mk_random.dropout(np.ones((2, 3), "int32"), 0.3)
    with pytest.raises(ValueError, match=r"noise_shape` \(2, 2\) does not broadcast"):
        mk_random.dropout(np.ones((2, 3), "float32"), 0.5, noise_shape=(2, 2))
    for rate in (-0.1, 1.5, True):
        with pytest.raises(ValueError, match=r"`rate` must be in \[0, 1\]"):
            mk_random.dropout(np.ones(2, "float32"), rate)


def test_categorical_with_many_classes_and_samples_and_logits_that_are_no_distribution():
    # 8 x 50,000 classes x 2,000 samples: a Gumbel-max draw would need 6 GB.
    logits = np.zeros((8, 50_000))
    logits[:, :2] = np.log([3.0, 1.0]) + 20  # almost all mass on classes 0 and 1, 3 to 1
    draws = mk_random.categorical(logits, 2_000, seed=0).numpy()
    assert draws.shape == (8, 2_000) and draws.dtype == np.int32
    assert abs((draws == 0).mean() - 0.75) < 0.02 and (draws < 2).mean() > 0.99
    impossible = mk_random.categorical(np.array([[-np.inf, 0.0, -np.inf]]), 50, seed=0)
    np.testing.assert_array_equal(impossible.numpy(), 1)
    assert mk_random.categorical(np.zeros((0, 3)), 4, seed=0).shape == (0, 4)
    for bad in ([[np.nan, 0.0]], [[0.0, np.inf]], [[-np.inf, -np.inf]]):
        with pytest.raises(ValueError, match="categorical: each row of `logits` must hold"):
            mk_random.categorical(np.array(bad), 2)
    with pytest.raises(ValueError, match="at least one class"):
        mk_random.categorical(np.zeros((2, 0)), 2)


def test_categorical_draws_are_the_row_by_row_inverse_cdf_of_the_seeded_stream():
    # The draws of a seed are those of searching each row's cumulative
    # probabilities with one uniform per sample, in row-major order: the
    # stream minikeras has always drawn.
    logits = np.random.default_rng(3).standard_normal((500, 7))
    logits[::3, 2] = -np.inf  # an impossible class leaves a flat step in the CDF
    logits[::5, 0] = -np.inf
    for samples in (1, 6):
        draws = mk_random.categorical(logits, samples, dtype="int64", seed=11).numpy()
        cumulative = np.cumsum(np.exp(logits - logits.max(axis=1, keepdims=True)), axis=1)
        uniforms = np.random.default_rng(11).random((500, samples)) * cumulative[:, -1:]
        expected = [np.searchsorted(c, u, side="right") for c, u in zip(cumulative, uniforms)]
        np.testing.assert_array_equal(draws, np.minimum(expected, 6))
        assert not (draws[::3] == 2).any() and not (draws[::5] == 0).any()


def test_shuffle_of_a_scalar_is_a_clear_error():
    with pytest.raises(ValueError, match="shuffle: `x` must have at least one axis"):
        mk_random.shuffle(np.array(3.0))


def test_seed_generator_from_config_round_trip():
    sg = mk_random.SeedGenerator(11, name="noise")
    again = mk_random.SeedGenerator.from_config(sg.get_config())
    assert again.get_config() == {"seed": 11, "name": "noise"}
    assert again.next() == mk_random.SeedGenerator(11).next()


# ------------------------------------------------------------- against Keras's draws

STATISTICS = {
    "normal": lambda r: r.normal((40_000,), mean=1.0, stddev=2.0, seed=1),
    "uniform": lambda r: r.uniform((40_000,), minval=-1.0, maxval=3.0, seed=1),
    "truncated_normal": lambda r: r.truncated_normal((40_000,), mean=1.0, stddev=2.0, seed=1),
    "gamma": lambda r: r.gamma((40_000,), 2.5, seed=1),
    "beta": lambda r: r.beta((40_000,), 0.5, 2.0, seed=1),
    "binomial": lambda r: r.binomial((40_000,), 12, 0.25, seed=1),
    "randint": lambda r: r.randint((40_000,), -3, 4, seed=1),
    "categorical": lambda r: r.categorical(np.log([[0.2, 0.5, 0.3]]), 40_000, seed=1),
    "dropout": lambda r: r.dropout(np.ones((40_000,), "float32"), 0.3, seed=1),
}


@pytest.mark.parametrize("name", sorted(STATISTICS))
def test_draws_match_keras_in_dtype_shape_and_moments(name):
    keras = pytest.importorskip("keras")
    theirs = np.asarray(STATISTICS[name](keras.random))
    ours = STATISTICS[name](mk_random).numpy()
    assert ours.shape == theirs.shape and ours.dtype == theirs.dtype
    bounded = name not in ("normal", "gamma")  # extremes of unbounded draws are noise
    for moment in (np.mean, np.std, np.min, np.max) if bounded else (np.mean, np.std):
        tolerance = 0.05 * max(1.0, abs(float(moment(theirs))))
        assert abs(float(moment(ours)) - float(moment(theirs))) < tolerance, moment.__name__
