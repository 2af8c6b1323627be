"""Initializers: statistics, fans, orthogonality, dtypes, seeds, names and errors."""

import numpy as np
import pytest

import minikeras as mk
from minikeras import initializers, utils
from minikeras.initializers import (
    Constant,
    GlorotNormal,
    GlorotUniform,
    HeNormal,
    HeUniform,
    Identity,
    LecunNormal,
    LecunUniform,
    Ones,
    Orthogonal,
    RandomNormal,
    RandomUniform,
    TruncatedNormal,
    VarianceScaling,
    Zeros,
)

# Big enough that the sample mean and std are within 1% of the truth.
BIG = (400, 500)
TRUNCATED_STDDEV = 0.87962566103423978


def test_constant_initializers():
    np.testing.assert_array_equal(Zeros()((2, 3)), np.zeros((2, 3)))
    np.testing.assert_array_equal(Ones()(4), np.ones(4))
    np.testing.assert_array_equal(Constant(2.5)((2, 2)), np.full((2, 2), 2.5))
    np.testing.assert_array_equal(Constant([1.0, 2.0])((3, 2)), [[1.0, 2.0]] * 3)
    assert Constant(3)((2,), dtype="int32").dtype == np.int32


def test_random_normal_statistics():
    values = RandomNormal(mean=1.0, stddev=0.5, seed=0)(BIG)
    assert abs(values.mean() - 1.0) < 0.01
    assert abs(values.std() - 0.5) < 0.01 * 0.5


def test_random_uniform_statistics_and_bounds():
    values = RandomUniform(minval=-2.0, maxval=6.0, seed=0)(BIG)
    assert values.min() >= -2.0 and values.max() <= 6.0
    assert values.min() < -1.99 and values.max() > 5.99
    assert abs(values.mean() - 2.0) < 0.05
    assert abs(values.std() - 8.0 / np.sqrt(12)) < 0.01 * 8.0 / np.sqrt(12)


def test_truncated_normal_stays_within_two_stddev():
    values = TruncatedNormal(mean=3.0, stddev=2.0, seed=0)(BIG)
    assert values.min() >= 3.0 - 4.0 and values.max() <= 3.0 + 4.0
    assert abs(values.mean() - 3.0) < 0.02
    # The std of a normal truncated at 2 stddev: Keras's correction constant.
    assert abs(values.std() - 2.0 * TRUNCATED_STDDEV) < 0.01 * 2.0


def test_compute_fans():
    assert initializers.compute_fans(()) == (1, 1)
    assert initializers.compute_fans((7,)) == (7, 7)
    assert initializers.compute_fans((784, 128)) == (784, 128)
    # Conv kernels (*kernel_size, in_channels, out_channels): times the receptive field.
    assert initializers.compute_fans((3, 3, 16, 32)) == (3 * 3 * 16, 3 * 3 * 32)
    assert initializers.compute_fans((5, 4, 8)) == (5 * 4, 5 * 8)


# (initializer, scale, mode, distribution) as Keras defines them.
PRESETS = [
    (GlorotUniform, 1.0, "fan_avg", "uniform"),
    (GlorotNormal, 1.0, "fan_avg", "truncated_normal"),
    (HeNormal, 2.0, "fan_in", "truncated_normal"),
    (HeUniform, 2.0, "fan_in", "uniform"),
    (LecunNormal, 1.0, "fan_in", "truncated_normal"),
    (LecunUniform, 1.0, "fan_in", "uniform"),
]


def _expected_std(shape, scale, mode):
    fan_in, fan_out = initializers.compute_fans(shape)
    fan = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2}[mode]
    return np.sqrt(scale / fan)


@pytest.mark.parametrize("cls, scale, mode, distribution", PRESETS, ids=lambda p: str(p))
@pytest.mark.parametrize("shape", [(300, 200), (3, 3, 64, 128)])
def test_variance_scaling_presets_have_keras_statistics(cls, scale, mode, distribution, shape):
    values = cls(seed=0)(shape)
    std = _expected_std(shape, scale, mode)
    assert abs(values.mean()) < 0.01 * std
    assert abs(values.std() - std) < 0.015 * std
    if distribution == "uniform":
        limit = np.sqrt(3) * std  # Glorot uniform: sqrt(6 / (fan_in + fan_out))
        assert np.abs(values).max() <= limit
        assert np.abs(values).max() > 0.99 * limit
    else:
        assert np.abs(values).max() <= 2 * std / TRUNCATED_STDDEV * (1 + 1e-6)


def test_glorot_uniform_limit_formula():
    values = GlorotUniform(seed=1)((100, 50))
    limit = np.sqrt(6 / (100 + 50))
    assert limit * 0.98 < np.abs(values).max() <= limit


@pytest.mark.parametrize("mode", ["fan_in", "fan_out", "fan_avg"])
@pytest.mark.parametrize("distribution", ["truncated_normal", "untruncated_normal", "uniform"])
def test_variance_scaling_modes_and_distributions(mode, distribution):
    shape = (3, 3, 32, 64)
    values = VarianceScaling(scale=3.0, mode=mode, distribution=distribution, seed=0)(shape)
    std = _expected_std(shape, 3.0, mode)
    assert abs(values.std() - std) < 0.02 * std


def test_variance_scaling_normal_means_truncated_normal():
    assert VarianceScaling(distribution="Normal").distribution == "truncated_normal"


@pytest.mark.parametrize("shape", [(50, 50), (80, 30), (30, 80), (3, 3, 8, 16)])
def test_orthogonal_columns_or_rows_are_orthonormal(shape):
    q = Orthogonal(gain=1.0, seed=0)(shape, dtype="float64")
    assert q.shape == shape
    flat = q.reshape(-1, shape[-1])
    if flat.shape[0] >= flat.shape[1]:
        np.testing.assert_allclose(flat.T @ flat, np.eye(flat.shape[1]), atol=1e-12)
    else:
        np.testing.assert_allclose(flat @ flat.T, np.eye(flat.shape[0]), atol=1e-12)


def test_orthogonal_gain_and_float32():
    q = Orthogonal(gain=3.0, seed=0)((20, 20))
    assert q.dtype == np.float32
    np.testing.assert_allclose(q.T @ q, 9.0 * np.eye(20), atol=1e-4)


def test_identity():
    np.testing.assert_array_equal(Identity()((3, 3)), np.eye(3))
    np.testing.assert_array_equal(Identity(gain=0.5)((2, 3)), 0.5 * np.eye(2, 3))


ALL = [
    Zeros(),
    Ones(),
    Constant(1.5),
    RandomNormal(),
    RandomUniform(),
    TruncatedNormal(),
    VarianceScaling(),
    GlorotUniform(),
    GlorotNormal(),
    HeNormal(),
    HeUniform(),
    LecunNormal(),
    LecunUniform(),
    Orthogonal(),
    Identity(),
]


@pytest.mark.parametrize("initializer", ALL, ids=repr)
def test_float32_by_default_float64_when_asked(initializer):
    assert initializer((4, 4)).dtype == np.float32
    assert initializer((4, 4), dtype="float64").dtype == np.float64
    assert initializer((4, 4), dtype=np.float16).dtype == np.float16


@pytest.mark.parametrize("initializer", ALL, ids=repr)
def test_serialize_round_trip(initializer):
    config = initializers.serialize(initializer)
    restored = initializers.deserialize(config)
    assert type(restored) is type(initializer)
    assert restored.get_config() == initializer.get_config()
    assert initializers.get(config).get_config() == initializer.get_config()


def test_seeded_initializer_repeats_its_values_and_survives_serialization():
    init = HeNormal(seed=7)
    first = init((30, 20))
    np.testing.assert_array_equal(first, init((30, 20)))
    np.testing.assert_array_equal(first, HeNormal(seed=7)((30, 20)))
    restored = initializers.deserialize(initializers.serialize(init))
    np.testing.assert_array_equal(first, restored((30, 20)))
    assert not np.array_equal(first, HeNormal(seed=8)((30, 20)))


def test_set_random_seed_makes_unseeded_initializers_reproducible():
    init = GlorotUniform()
    utils.set_random_seed(123)
    first, second = init((10, 10)), init((10, 10))
    assert not np.array_equal(first, second)
    utils.set_random_seed(123)
    np.testing.assert_array_equal(first, init((10, 10)))
    np.testing.assert_array_equal(second, GlorotUniform()((10, 10)))


@pytest.mark.parametrize(
    "name, cls",
    [
        ("zeros", Zeros),
        ("ones", Ones),
        ("constant", Constant),
        ("random_normal", RandomNormal),
        ("random_uniform", RandomUniform),
        ("truncated_normal", TruncatedNormal),
        ("variance_scaling", VarianceScaling),
        ("glorot_uniform", GlorotUniform),
        ("glorot_normal", GlorotNormal),
        ("he_normal", HeNormal),
        ("he_uniform", HeUniform),
        ("lecun_normal", LecunNormal),
        ("lecun_uniform", LecunUniform),
        ("orthogonal", Orthogonal),
        ("identity", Identity),
        ("GlorotUniform", GlorotUniform),
        ("normal", RandomNormal),
    ],
)
def test_get_by_name(name, cls):
    assert type(initializers.get(name)) is cls


def test_get_other_identifiers():
    assert initializers.get(None) is None
    init = RandomNormal(stddev=1.0)
    assert initializers.get(init) is init
    assert type(initializers.get(HeUniform)) is HeUniform

    def custom(shape, dtype=None):
        return np.zeros(shape, dtype)

    assert initializers.get(custom) is custom


def test_deserialize_custom_objects():
    class Twos(initializers.Initializer):
        def __call__(self, shape, dtype=None):
            return np.full(shape, 2.0, dtype=dtype or "float32")

    config = initializers.serialize(Twos())  # (named as Keras names a class of the user's)
    assert config == {
        "module": "test_initializers", "class_name": "Twos", "config": {},
        "registered_name": "Twos",
    }  # fmt: skip
    restored = initializers.deserialize(config, custom_objects={"Twos": Twos})
    np.testing.assert_array_equal(restored((2,)), [2.0, 2.0])
    with pytest.raises(ValueError, match="Unknown initializer 'Twos'.*custom_objects="):
        initializers.deserialize(config)


def test_a_custom_class_named_like_a_built_in_is_never_the_built_in():
    class Ones(initializers.Initializer):
        def __call__(self, shape, dtype=None):
            return np.full(shape, 7.0, dtype=dtype or "float32")

    config = initializers.serialize(Ones())
    with pytest.raises(ValueError, match="Unknown initializer 'Ones' \\(a class of your own"):
        initializers.deserialize(config)
    restored = initializers.deserialize(config, custom_objects={"Ones": Ones})
    np.testing.assert_array_equal(restored((2,)), [7.0, 7.0])
    # An entry without a module (older files) still names the built-in.
    assert type(initializers.deserialize({"class_name": "Ones", "config": {}})) is (
        initializers.Ones
    )


def test_unknown_identifiers_are_clear_errors():
    with pytest.raises(ValueError, match="'glorot_unifrom'.*glorot_uniform.*he_normal"):
        initializers.get("glorot_unifrom")
    with pytest.raises(ValueError, match="Unknown initializer 'Nope'"):
        initializers.deserialize({"class_name": "Nope", "config": {}})
    with pytest.raises(ValueError, match="class_name"):
        initializers.deserialize({"config": {}})
    with pytest.raises(ValueError, match="initializers.get.*int"):
        initializers.get(3)
    with pytest.raises(ValueError, match="expected an Initializer"):
        initializers.serialize(lambda shape, dtype=None: np.zeros(shape))


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda: RandomNormal(stddev=-1.0), "RandomNormal: stddev"),
        (lambda: TruncatedNormal(stddev=-0.1), "TruncatedNormal: stddev"),
        (lambda: RandomUniform(minval=1.0, maxval=1.0), "RandomUniform: minval"),
        (lambda: VarianceScaling(scale=0.0), "VarianceScaling: scale"),
        (lambda: VarianceScaling(scale=-2.0), "VarianceScaling: scale"),
        (lambda: VarianceScaling(mode="fan_sum"), "VarianceScaling: mode.*'fan_sum'"),
        (lambda: VarianceScaling(distribution="cauchy"), "VarianceScaling: distribution"),
        (lambda: GlorotUniform(seed=-1), "GlorotUniform: seed"),
        (lambda: RandomNormal(seed=1.5), "RandomNormal: seed"),
        (lambda: Identity()((2, 2, 2)), "Identity: .*2-D.*\\(2, 2, 2\\)"),
        (lambda: Orthogonal()((5,)), "Orthogonal: .*two axes"),
        (lambda: HeNormal()((2, 2), dtype="int32"), "HeNormal: .*float dtype.*int32"),
        (lambda: Zeros()((2, -1)), "Zeros: shape"),
        (lambda: Constant([1.0, 2.0])((3,)), "Constant: value of shape \\(2,\\)"),
    ],
)
def test_invalid_arguments_name_the_initializer_and_argument(make, message):
    with pytest.raises(ValueError, match=message):
        make()


# ------------------------------------------------------- fans from given axes


def test_compute_fans_from_axes_multiplies_their_sizes():
    assert initializers.compute_fans((32, 4, 16), input_axes=[0], output_axes=[1, 2]) == (32, 64)
    assert initializers.compute_fans((4, 16, 8), input_axes=[0, 1], output_axes=[2]) == (64, 8)
    # Without both axes a rank-3 kernel is a convolution kernel: receptive field 32.
    assert initializers.compute_fans((32, 4, 16), input_axes=[0]) == (128, 512)


@pytest.mark.parametrize("name", ["glorot_uniform", "he_uniform", "lecun_uniform"])
def test_variance_scaling_takes_its_fans_from_axes(name):
    init = initializers.get(name).with_fan_axes([0], [1, 2])
    values = init((32, 4, 16))
    scale, fan = {"glorot_uniform": (1, 48), "he_uniform": (2, 32), "lecun_uniform": (1, 32)}[name]
    limit = np.sqrt(3 * scale / fan)
    assert np.abs(values).max() <= limit and np.abs(values).max() > 0.95 * limit
    assert init.get_config()["input_axes"] == [0] and init.get_config()["output_axes"] == [1, 2]
    # Given axes are kept; with_fan_axes replaces only missing ones.
    assert init.with_fan_axes([0, 1], [2]) is init


class _Gained(initializers.GlorotUniform):  # a user subclass whose __init__ takes no axes
    def __init__(self, gain=1.0, seed=None):
        super().__init__(seed=seed)
        self.gain = gain

    def __call__(self, shape, dtype=None):
        return super().__call__(shape, dtype) * self.gain

    def get_config(self):
        return {"gain": self.gain, "seed": self.seed}


def test_with_fan_axes_keeps_a_subclass_whose_init_takes_no_axes():
    # Rebuilding it from its config with the axes was a TypeError (Keras fails so too),
    # so EinsumDense and MultiHeadAttention could not build with it.
    init = _Gained(gain=3.0, seed=0).with_fan_axes([0], [1, 2])
    assert type(init) is _Gained and init.gain == 3.0 and init.input_axes == [0]
    limit = 3.0 * np.sqrt(6 / (32 + 64))
    values = init((32, 4, 16))
    assert limit >= np.abs(values).max() > 0.95 * limit
    x = np.ones((2, 5, 16), "float32")
    mk.layers.EinsumDense("abc,cd->abd", (None, 8), kernel_initializer=_Gained(2.0))(x)
    attention = mk.layers.MultiHeadAttention(2, 4, kernel_initializer=_Gained(2.0))
    assert attention(x, x).shape == (2, 5, 16)


def test_axes_are_in_the_config_only_when_set_and_keras_configs_load():
    assert "input_axes" not in initializers.GlorotUniform().get_config()
    assert "output_axes" not in initializers.VarianceScaling().get_config()
    keras_entry = {  # what Keras 3.15 writes for a default kernel initializer
        "module": "keras.initializers",
        "class_name": "GlorotUniform",
        "config": {"seed": None, "input_axes": None, "output_axes": None},
        "registered_name": None,
    }
    assert isinstance(initializers.get(keras_entry), initializers.GlorotUniform)
    init = initializers.VarianceScaling(2.0, "fan_out", "uniform", 3, [1], [0])
    back = initializers.deserialize(initializers.serialize(init))
    assert back.get_config() == init.get_config()
    np.testing.assert_array_equal(back((6, 5)), init((6, 5)))


@pytest.mark.parametrize("axes", [0, [0.5], ["a"], [True]])
def test_bad_fan_axes_are_refused(axes):
    with pytest.raises(ValueError, match="input_axes"):
        initializers.GlorotUniform(input_axes=axes)
