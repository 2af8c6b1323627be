"""The `Initializer` base class, `compute_fans`, and the checks and draws initializers share."""

import numpy as np

from minikeras import random as _random
from minikeras.config import standardize_dtype

__all__ = ["Initializer", "compute_fans"]

# The standard deviation of a standard normal truncated to [-2, 2]; dividing
# by it gives truncated draws the variance that was asked for.
_TRUNCATED_STDDEV = 0.87962566103423978


def compute_fans(shape, input_axes=None, output_axes=None):
    """Returns `(fan_in, fan_out)` of a weight of `shape`, as Keras computes them.

    Given `input_axes` and `output_axes` (as Keras 3.15's `EinsumDense` and
    `MultiHeadAttention` pass for their kernels), each fan is the product of
    the sizes of its axes. Otherwise: for a 2-D kernel `(inputs, units)` they
    are the two axes; for a convolution kernel `(*kernel_size, in_channels,
    out_channels)` both are multiplied by the receptive field
    `prod(kernel_size)`; a 1-D shape has `fan_in = fan_out = shape[0]`; a
    scalar has 1 and 1.

    Args:
        shape: a tuple of ints.
        input_axes: None, or the axes (ints) whose sizes multiply to `fan_in`.
        output_axes: None, or the axes whose sizes multiply to `fan_out`;
            used only together with `input_axes`.

    Returns:
        A pair of ints.

    Example:
        >>> mk.initializers.compute_fans((784, 128)), mk.initializers.compute_fans((3, 3, 16, 32))
        ((784, 128), (144, 288))
        >>> mk.initializers.compute_fans((32, 4, 16), input_axes=[0], output_axes=[1, 2])
        (32, 64)
    """
    shape = tuple(shape)
    if input_axes is not None and output_axes is not None:
        fan_in = int(np.prod([shape[axis] for axis in input_axes], dtype=np.int64))
        fan_out = int(np.prod([shape[axis] for axis in output_axes], dtype=np.int64))
        return fan_in, fan_out
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
        >>> class Twos(mk.initializers.Initializer):
        ...     def __call__(self, shape, dtype=None):
        ...         return np.full(shape, 2.0, dtype=mk.config.standardize_dtype(dtype))
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
            >>> mk.initializers.Zeros()((2,), dtype="float64")
            array([0., 0.])
        """
        raise NotImplementedError(f"{type(self).__name__} must implement __call__(shape, dtype)")

    def get_config(self):
        """Returns the constructor arguments as a dict, for `from_config`.

        Returns:
            A dict of JSON-friendly values.

        Example:
            >>> mk.initializers.RandomNormal(stddev=0.1).get_config()
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
            >>> mk.initializers.RandomUniform.from_config({"minval": 0.0, "maxval": 1.0, "seed": 3})
            RandomUniform(minval=0.0, maxval=1.0, seed=3)
        """
        return cls(**config)

    def __repr__(self):
        arguments = ", ".join(f"{key}={value!r}" for key, value in self.get_config().items())
        return f"{type(self).__name__}({arguments})"
