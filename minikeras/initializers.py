"""Weight initializers: how the first values of a Variable are drawn.

An initializer is a callable `initializer(shape, dtype=None)` that returns a
numpy array, of `config.floatx()` (float32) unless another dtype is asked for.
Names, arguments and defaults are Keras's, and each is also known by its
snake_case name (`"glorot_uniform"`).

Randomness: an initializer with `seed=None` draws from the global generator
of `minikeras.random` (reseeded by `minikeras.utils.set_random_seed`). One
with an int seed starts a fresh generator from that seed on every call, so,
as in Keras 3, it returns the same values each time.
"""

import inspect

import numpy as np

from minikeras import random as _random
from minikeras import serialization_lib
from minikeras.config import standardize_dtype

__all__ = [
    "Constant",
    "GlorotNormal",
    "GlorotUniform",
    "HeNormal",
    "HeUniform",
    "Identity",
    "Initializer",
    "LecunNormal",
    "LecunUniform",
    "Ones",
    "Orthogonal",
    "RandomNormal",
    "RandomUniform",
    "TruncatedNormal",
    "VarianceScaling",
    "Zeros",
    "compute_fans",
    "deserialize",
    "get",
    "serialize",
]

# The standard deviation of a standard normal truncated to [-2, 2]; dividing
# by it gives truncated draws the variance that was asked for.
_TRUNCATED_STDDEV = 0.87962566103423978


def compute_fans(shape):
    """Returns `(fan_in, fan_out)` of a weight of `shape`, as Keras computes them.

    For a 2-D kernel `(inputs, units)` they are the two axes. For a
    convolution kernel `(*kernel_size, in_channels, out_channels)` both are
    multiplied by the receptive field `prod(kernel_size)`. A 1-D shape has
    `fan_in = fan_out = shape[0]`; a scalar has 1 and 1.

    Args:
        shape: a tuple of ints.

    Returns:
        A pair of ints.

    Example:
        >>> compute_fans((784, 128)), compute_fans((3, 3, 16, 32))
        ((784, 128), (144, 288))
    """
    shape = tuple(shape)
    if not shape:
        return 1, 1
    if len(shape) == 1:
        return int(shape[0]), int(shape[0])
    receptive_field = int(np.prod(shape[:-2], dtype=np.int64))
    return int(shape[-2]) * receptive_field, int(shape[-1]) * receptive_field


def _check_shape(owner, shape):
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    if not all(isinstance(dim, (int, np.integer)) and dim >= 0 for dim in shape):
        raise ValueError(f"{owner}: shape must be non-negative ints, got {shape}")
    return tuple(int(dim) for dim in shape)


def _check_float_dtype(owner, dtype):
    name = standardize_dtype(dtype)
    if np.dtype(name).kind != "f":
        raise ValueError(f"{owner}: random values need a float dtype, got {name}")
    return name


def _check_seed(owner, seed):
    if seed is not None and (
        isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0
    ):
        raise ValueError(f"{owner}: seed must be None or a non-negative int, got {seed!r}")
    return None if seed is None else int(seed)


def _generator(seed):
    """A fresh generator for a seeded initializer, else the global one."""
    return _random.generator() if seed is None else np.random.default_rng(seed)


def _standard_normal(rng, shape, dtype):
    # numpy draws float32 natively: no float64 temporaries for float32 weights.
    draw_dtype = np.float64 if dtype == "float64" else np.float32
    return rng.standard_normal(shape, dtype=draw_dtype)


def _truncated_standard_normal(rng, shape, dtype):
    values = _standard_normal(rng, shape, dtype)
    outside = np.abs(values) > 2.0
    while outside.any():  # about 4.6% are redrawn per round
        values[outside] = rng.standard_normal(int(outside.sum()), dtype=values.dtype)
        outside = np.abs(values) > 2.0
    return values


def _uniform(rng, shape, dtype, minval, maxval):
    draw_dtype = np.float64 if dtype == "float64" else np.float32
    values = rng.random(shape, dtype=draw_dtype)
    values *= maxval - minval
    values += minval
    return values


class Initializer:
    """Base class: a callable `initializer(shape, dtype=None) -> numpy array`.

    Subclasses override `__call__`, and `get_config` when they take arguments.

    Example:
        >>> class Twos(Initializer):
        ...     def __call__(self, shape, dtype=None):
        ...         return np.full(shape, 2.0, dtype=standardize_dtype(dtype))
        >>> Twos()((2,))
        array([2., 2.], dtype=float32)
    """

    def __call__(self, shape, dtype=None):
        """Returns a new array of `shape` and `dtype` (None means `config.floatx()`).

        Args:
            shape: a tuple of ints (or one int).
            dtype: the dtype; None means float32 (`config.floatx()`).

        Returns:
            A numpy array.

        Raises:
            NotImplementedError: in the base class.

        Example:
            >>> Zeros()((2,), dtype="float64")
            array([0., 0.])
        """
        raise NotImplementedError(f"{type(self).__name__} must implement __call__(shape, dtype)")

    def get_config(self):
        """Returns the constructor arguments as a dict, for `from_config`.

        Returns:
            A dict of JSON-friendly values.

        Example:
            >>> RandomNormal(stddev=0.1).get_config()
            {'mean': 0.0, 'stddev': 0.1, 'seed': None}
        """
        return {}

    @classmethod
    def from_config(cls, config):
        """Makes an initializer from the dict `get_config` returned.

        Args:
            config: a dict of constructor arguments.

        Returns:
            An initializer of this class.

        Example:
            >>> RandomUniform.from_config({"minval": 0.0, "maxval": 1.0, "seed": 3})
            RandomUniform(minval=0.0, maxval=1.0, seed=3)
        """
        return cls(**config)

    def __repr__(self):
        arguments = ", ".join(f"{key}={value!r}" for key, value in self.get_config().items())
        return f"{type(self).__name__}({arguments})"


class Zeros(Initializer):
    """Fills with 0.

    Example:
        >>> Zeros()((2, 2))
        array([[0., 0.],
               [0., 0.]], dtype=float32)
    """

    def __call__(self, shape, dtype=None):
        return np.zeros(_check_shape("Zeros", shape), dtype=standardize_dtype(dtype))


class Ones(Initializer):
    """Fills with 1.

    Example:
        >>> Ones()(3)
        array([1., 1., 1.], dtype=float32)
    """

    def __call__(self, shape, dtype=None):
        return np.ones(_check_shape("Ones", shape), dtype=standardize_dtype(dtype))


class Constant(Initializer):
    """Fills with `value`.

    Args:
        value: a Python number (or an array that broadcasts to the shape).

    Raises:
        ValueError: at call time, if `value` does not broadcast to the shape.

    Example:
        >>> Constant(0.5)((2,))
        array([0.5, 0.5], dtype=float32)
    """

    def __init__(self, value=0.0):
        self.value = value

    def __call__(self, shape, dtype=None):
        shape = _check_shape("Constant", shape)
        try:
            return np.full(shape, self.value, dtype=standardize_dtype(dtype))
        except ValueError:
            raise ValueError(
                f"Constant: value of shape {np.shape(self.value)} does not broadcast "
                f"to shape {shape}"
            ) from None

    def get_config(self):
        value = self.value
        return {"value": value.tolist() if isinstance(value, np.ndarray) else value}


class RandomNormal(Initializer):
    """Draws from a normal distribution: `mean + stddev * N(0, 1)`.

    Args:
        mean: the mean.
        stddev: the standard deviation, non-negative.
        seed: None (draw from `minikeras.random`) or an int (same values
            on every call).

    Raises:
        ValueError: for a negative `stddev` or a bad `seed`.

    Example:
        >>> values = RandomNormal(stddev=1.0, seed=0)((1000,))
        >>> values.dtype, bool(abs(values.std() - 1.0) < 0.1)
        (dtype('float32'), True)
    """

    def __init__(self, mean=0.0, stddev=0.05, seed=None):
        if stddev < 0:
            raise ValueError(f"RandomNormal: stddev must be non-negative, got {stddev}")
        self.mean, self.stddev = mean, stddev
        self.seed = _check_seed("RandomNormal", seed)

    def __call__(self, shape, dtype=None):
        shape = _check_shape("RandomNormal", shape)
        dtype = _check_float_dtype("RandomNormal", dtype)
        values = _standard_normal(_generator(self.seed), shape, dtype)
        values *= self.stddev
        values += self.mean
        return values.astype(dtype, copy=False)

    def get_config(self):
        return {"mean": self.mean, "stddev": self.stddev, "seed": self.seed}


class RandomUniform(Initializer):
    """Draws uniformly from `[minval, maxval)`.

    Args:
        minval: the lower bound.
        maxval: the upper bound, greater than `minval`.
        seed: None (draw from `minikeras.random`) or an int (same values
            on every call).

    Raises:
        ValueError: if `minval >= maxval`, or for a bad `seed`.

    Example:
        >>> values = RandomUniform(-1.0, 1.0, seed=0)((1000,))
        >>> bool(values.min() >= -1.0 and values.max() < 1.0)
        True
    """

    def __init__(self, minval=-0.05, maxval=0.05, seed=None):
        if not minval < maxval:
            raise ValueError(
                f"RandomUniform: minval must be less than maxval, got minval={minval}, "
                f"maxval={maxval}"
            )
        self.minval, self.maxval = minval, maxval
        self.seed = _check_seed("RandomUniform", seed)

    def __call__(self, shape, dtype=None):
        shape = _check_shape("RandomUniform", shape)
        dtype = _check_float_dtype("RandomUniform", dtype)
        values = _uniform(_generator(self.seed), shape, dtype, self.minval, self.maxval)
        return values.astype(dtype, copy=False)

    def get_config(self):
        return {"minval": self.minval, "maxval": self.maxval, "seed": self.seed}


class TruncatedNormal(Initializer):
    """Draws from a normal distribution, redrawing values beyond 2 stddev of the mean.

    The result lies in `[mean - 2 * stddev, mean + 2 * stddev]`; its standard
    deviation is about `0.88 * stddev`.

    Args:
        mean: the mean.
        stddev: the standard deviation before truncation, non-negative.
        seed: None (draw from `minikeras.random`) or an int (same values
            on every call).

    Raises:
        ValueError: for a negative `stddev` or a bad `seed`.

    Example:
        >>> values = TruncatedNormal(stddev=1.0, seed=0)((1000,))
        >>> bool(np.abs(values).max() <= 2.0)
        True
    """

    def __init__(self, mean=0.0, stddev=0.05, seed=None):
        if stddev < 0:
            raise ValueError(f"TruncatedNormal: stddev must be non-negative, got {stddev}")
        self.mean, self.stddev = mean, stddev
        self.seed = _check_seed("TruncatedNormal", seed)

    def __call__(self, shape, dtype=None):
        shape = _check_shape("TruncatedNormal", shape)
        dtype = _check_float_dtype("TruncatedNormal", dtype)
        values = _truncated_standard_normal(_generator(self.seed), shape, dtype)
        values *= self.stddev
        values += self.mean
        return values.astype(dtype, copy=False)

    def get_config(self):
        return {"mean": self.mean, "stddev": self.stddev, "seed": self.seed}


_MODES = ("fan_in", "fan_out", "fan_avg")
_DISTRIBUTIONS = ("truncated_normal", "untruncated_normal", "uniform")


class VarianceScaling(Initializer):
    """Draws values whose variance is `scale / n`, with `n` the fan of the weight.

    `n` is `fan_in`, `fan_out` or `(fan_in + fan_out) / 2` (`mode`), from
    `compute_fans`. Then, by `distribution`:

        truncated_normal:   TruncatedNormal(0, sqrt(scale / n) / .87962566103423978)
        untruncated_normal: RandomNormal(0, sqrt(scale / n))
        uniform:            RandomUniform(-limit, limit), limit = sqrt(3 * scale / n)

    Args:
        scale: positive float.
        mode: `"fan_in"`, `"fan_out"` or `"fan_avg"`.
        distribution: `"truncated_normal"` (`"normal"` is the same),
            `"untruncated_normal"` or `"uniform"`.
        seed: None (draw from `minikeras.random`) or an int (same values
            on every call).

    Raises:
        ValueError: for a non-positive `scale`, an unknown `mode` or
            `distribution`, or a bad `seed`.

    Example:
        >>> init = VarianceScaling(scale=2.0, mode="fan_in", distribution="uniform", seed=0)
        >>> values = init((200, 100))
        >>> bool(np.abs(values).max() <= np.sqrt(3 * 2.0 / 200))
        True
    """

    def __init__(self, scale=1.0, mode="fan_in", distribution="truncated_normal", seed=None):
        name = type(self).__name__
        if not scale > 0:
            raise ValueError(f"{name}: scale must be positive, got {scale}")
        if mode not in _MODES:
            raise ValueError(f"{name}: mode must be one of {', '.join(_MODES)}, got {mode!r}")
        distribution = distribution.lower() if isinstance(distribution, str) else distribution
        if distribution == "normal":
            distribution = "truncated_normal"
        if distribution not in _DISTRIBUTIONS:
            raise ValueError(
                f"{name}: distribution must be one of {', '.join(_DISTRIBUTIONS)}, "
                f"got {distribution!r}"
            )
        self.scale, self.mode, self.distribution = scale, mode, distribution
        self.seed = _check_seed(name, seed)

    def __call__(self, shape, dtype=None):
        name = type(self).__name__
        shape = _check_shape(name, shape)
        dtype = _check_float_dtype(name, dtype)
        fan_in, fan_out = compute_fans(shape)
        fan = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2}[self.mode]
        variance = self.scale / max(1.0, fan)
        rng = _generator(self.seed)
        if self.distribution == "uniform":
            limit = np.sqrt(3.0 * variance)
            values = _uniform(rng, shape, dtype, -limit, limit)
        elif self.distribution == "truncated_normal":
            values = _truncated_standard_normal(rng, shape, dtype)
            values *= np.sqrt(variance) / _TRUNCATED_STDDEV
        else:
            values = _standard_normal(rng, shape, dtype)
            values *= np.sqrt(variance)
        return values.astype(dtype, copy=False)

    def get_config(self):
        return {
            "scale": self.scale,
            "mode": self.mode,
            "distribution": self.distribution,
            "seed": self.seed,
        }


class _PresetVarianceScaling(VarianceScaling):
    """A VarianceScaling whose scale, mode and distribution are fixed by its class."""

    _preset = {}

    def __init__(self, seed=None):
        super().__init__(seed=seed, **self._preset)

    def get_config(self):
        return {"seed": self.seed}


class GlorotUniform(_PresetVarianceScaling):
    """Glorot (Xavier) uniform: `U(-limit, limit)`, `limit = sqrt(6 / (fan_in + fan_out))`.

    Args:
        seed: None (draw from `minikeras.random`) or an int (same values
            on every call).

    Example:
        >>> values = GlorotUniform(seed=0)((100, 50))
        >>> bool(np.abs(values).max() <= np.sqrt(6 / 150))
        True
    """

    _preset = {"scale": 1.0, "mode": "fan_avg", "distribution": "uniform"}


class GlorotNormal(_PresetVarianceScaling):
    """Glorot (Xavier) normal: truncated normal with `stddev = sqrt(2 / (fan_in + fan_out))`.

    The draw is truncated at 2 stddev and rescaled by 1 / .87962566103423978
    so that the values keep that standard deviation.

    Args:
        seed: None (draw from `minikeras.random`) or an int (same values
            on every call).

    Example:
        >>> GlorotNormal(seed=0)((3, 4)).shape
        (3, 4)
    """

    _preset = {"scale": 1.0, "mode": "fan_avg", "distribution": "truncated_normal"}


class HeNormal(_PresetVarianceScaling):
    """He normal: truncated normal with `stddev = sqrt(2 / fan_in)`, for relu layers.

    Args:
        seed: None (draw from `minikeras.random`) or an int (same values
            on every call).

    Example:
        >>> HeNormal(seed=0)((3, 3, 8, 16)).dtype
        dtype('float32')
    """

    _preset = {"scale": 2.0, "mode": "fan_in", "distribution": "truncated_normal"}


class HeUniform(_PresetVarianceScaling):
    """He uniform: `U(-limit, limit)` with `limit = sqrt(6 / fan_in)`.

    Args:
        seed: None (draw from `minikeras.random`) or an int (same values
            on every call).

    Example:
        >>> bool(np.abs(HeUniform(seed=0)((24, 8))).max() <= 0.5)
        True
    """

    _preset = {"scale": 2.0, "mode": "fan_in", "distribution": "uniform"}


class LecunNormal(_PresetVarianceScaling):
    """LeCun normal: truncated normal with `stddev = sqrt(1 / fan_in)`, for selu layers.

    Args:
        seed: None (draw from `minikeras.random`) or an int (same values
            on every call).

    Example:
        >>> LecunNormal(seed=0)((4,)).shape
        (4,)
    """

    _preset = {"scale": 1.0, "mode": "fan_in", "distribution": "truncated_normal"}


class LecunUniform(_PresetVarianceScaling):
    """LeCun uniform: `U(-limit, limit)` with `limit = sqrt(3 / fan_in)`.

    Args:
        seed: None (draw from `minikeras.random`) or an int (same values
            on every call).

    Example:
        >>> bool(np.abs(LecunUniform(seed=0)((12, 8))).max() <= 0.5)
        True
    """

    _preset = {"scale": 1.0, "mode": "fan_in", "distribution": "uniform"}


class Orthogonal(Initializer):
    """A (semi-)orthogonal matrix times `gain`, from the QR decomposition of a normal draw.

    The shape is flattened to `(prod(shape[:-1]), shape[-1])`. For a normal
    matrix `A = QR`, `Q * sign(diag(R))` is uniformly distributed over
    orthogonal matrices; its rows (or columns, whichever are fewer) are
    orthonormal: `Q^T Q = I`.

    Args:
        gain: the factor applied to the orthogonal matrix.
        seed: None (draw from `minikeras.random`) or an int (same values
            on every call).

    Raises:
        ValueError: at call time, for a shape with fewer than two axes.

    Example:
        >>> q = Orthogonal(seed=0)((4, 4))
        >>> np.allclose(q.T @ q, np.eye(4), atol=1e-6)
        True
    """

    def __init__(self, gain=1.0, seed=None):
        self.gain = gain
        self.seed = _check_seed("Orthogonal", seed)

    def __call__(self, shape, dtype=None):
        shape = _check_shape("Orthogonal", shape)
        dtype = _check_float_dtype("Orthogonal", dtype)
        if len(shape) < 2:
            raise ValueError(
                f"Orthogonal: needs a shape with at least two axes, got {shape} with {len(shape)}"
            )
        rows, columns = int(np.prod(shape[:-1])), shape[-1]
        flat_shape = (max(rows, columns), min(rows, columns))
        matrix = _standard_normal(_generator(self.seed), flat_shape, dtype)
        q, r = np.linalg.qr(matrix)
        q *= np.sign(np.diag(r))
        if rows < columns:
            q = q.T
        return (self.gain * q).reshape(shape).astype(dtype, copy=False)

    def get_config(self):
        return {"gain": self.gain, "seed": self.seed}


class Identity(Initializer):
    """`gain` times the identity matrix (ones on the main diagonal); 2-D shapes only.

    Args:
        gain: the value on the diagonal.

    Raises:
        ValueError: at call time, for a shape that is not 2-D.

    Example:
        >>> Identity(gain=2.0)((2, 3))
        array([[2., 0., 0.],
               [0., 2., 0.]], dtype=float32)
    """

    def __init__(self, gain=1.0):
        self.gain = gain

    def __call__(self, shape, dtype=None):
        shape = _check_shape("Identity", shape)
        if len(shape) != 2:
            raise ValueError(
                f"Identity: can only initialize 2-D matrices, got shape {shape} "
                f"with {len(shape)} axes"
            )
        return (self.gain * np.eye(*shape)).astype(standardize_dtype(dtype))

    def get_config(self):
        return {"gain": self.gain}


_INITIALIZERS = {
    "zeros": Zeros,
    "ones": Ones,
    "constant": Constant,
    "random_normal": RandomNormal,
    "random_uniform": RandomUniform,
    "truncated_normal": TruncatedNormal,
    "variance_scaling": VarianceScaling,
    "glorot_uniform": GlorotUniform,
    "glorot_normal": GlorotNormal,
    "he_normal": HeNormal,
    "he_uniform": HeUniform,
    "lecun_normal": LecunNormal,
    "lecun_uniform": LecunUniform,
    "orthogonal": Orthogonal,
    "identity": Identity,
    # Keras's short aliases.
    "zero": Zeros,
    "one": Ones,
    "normal": RandomNormal,
    "uniform": RandomUniform,
}
# Class names work too, as in Keras: get("GlorotUniform").
_INITIALIZERS.update({cls.__name__: cls for cls in list(_INITIALIZERS.values())})


def _lookup(name, custom_objects):
    # Custom objects, open scopes and the one registry first (see minikeras.serialization_lib).
    found = serialization_lib.get_registered_object(name, custom_objects)
    if found is not None:
        return found
    if name in _INITIALIZERS:
        return _INITIALIZERS[name]
    known = ", ".join(name for name in _INITIALIZERS if name.islower())
    raise ValueError(f"Unknown initializer {name!r}; known initializers: {known}")


def serialize(initializer):
    """Returns `{"class_name": ..., "config": ...}`, which `deserialize` turns back.

    Args:
        initializer: an `Initializer`.

    Returns:
        A dict of JSON-friendly values.

    Raises:
        ValueError: for anything that is not an `Initializer`.

    Example:
        >>> serialize(HeNormal(seed=1))
        {'class_name': 'HeNormal', 'config': {'seed': 1}}
    """
    if not isinstance(initializer, Initializer):
        raise ValueError(
            "initializers.serialize: expected an Initializer, got "
            f"{initializer!r} of type {type(initializer).__name__}"
        )
    entry = {"class_name": type(initializer).__name__, "config": initializer.get_config()}
    if serialization_lib.is_registered(type(initializer)):  # found again by its registered name
        entry["registered_name"] = serialization_lib.get_registered_name(type(initializer))
    return entry


def deserialize(config, custom_objects=None):
    """Makes an initializer from `serialize`'s dict, or from a name.

    Args:
        config: a dict `{"class_name": ..., "config": {...}}` (other keys are
            ignored) or a name such as `"glorot_uniform"`.
        custom_objects: optional dict of name -> Initializer class, searched first.

    Returns:
        An initializer.

    Raises:
        ValueError: for an unknown name or a dict without `"class_name"`.

    Example:
        >>> deserialize({"class_name": "RandomNormal", "config": {"stddev": 1.0}})
        RandomNormal(mean=0.0, stddev=1.0, seed=None)
    """
    if isinstance(config, str):
        return _lookup(config, custom_objects)()
    if not isinstance(config, dict) or "class_name" not in config:
        raise ValueError(
            "initializers.deserialize: expected a name or a dict with 'class_name' and "
            f"'config', got {config!r}"
        )
    cls = _lookup(config.get("registered_name") or config["class_name"], custom_objects)
    return cls.from_config(config.get("config") or {})


def get(identifier):
    """Returns the initializer `identifier` stands for.

    Args:
        identifier: None (returned as None, as in Keras), a name such as
            `"he_normal"`, a dict from `serialize`, an `Initializer` class
            (instantiated with defaults) or a callable (returned as it is).

    Returns:
        A callable `initializer(shape, dtype=None)`, or None.

    Raises:
        ValueError: for an unknown name or anything else.

    Example:
        >>> get("glorot_uniform")
        GlorotUniform(seed=None)
        >>> get("zeros")((2,))
        array([0., 0.], dtype=float32)
    """
    if identifier is None:
        return None
    if isinstance(identifier, (str, dict)):
        return deserialize(identifier)
    if inspect.isclass(identifier):
        return identifier()
    if callable(identifier):
        return identifier
    raise ValueError(
        "initializers.get: expected a name, a config dict or a callable, "
        f"got {identifier!r} of type {type(identifier).__name__}"
    )
