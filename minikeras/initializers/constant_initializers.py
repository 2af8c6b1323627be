"""Initializers that draw nothing: `Zeros`, `Ones`, `Constant` and `Identity`."""

import numpy as np

from minikeras.config import standardize_dtype
from minikeras.initializers.initializer import Initializer, _check_shape

__all__ = ["Constant", "Identity", "Ones", "Zeros"]


class Zeros(Initializer):
    """Fills with 0.

    Example:
        >>> mk.initializers.Zeros()((2, 2))
        array([[0., 0.],
               [0., 0.]], dtype=float32)
    """

    def __call__(self, shape, dtype=None):
        return np.zeros(_check_shape("Zeros", shape), dtype=standardize_dtype(dtype))


class Ones(Initializer):
    """Fills with 1.

    Example:
        >>> mk.initializers.Ones()(3)
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
        >>> mk.initializers.Constant(0.5)((2,))
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


class Identity(Initializer):
    """`gain` times the identity matrix (ones on the main diagonal); 2-D shapes only.

    Args:
        gain: the value on the diagonal.

    Raises:
        ValueError: at call time, for a shape that is not 2-D.

    Example:
        >>> mk.initializers.Identity(gain=2.0)((2, 3))
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
