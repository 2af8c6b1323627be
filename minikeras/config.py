"""Global settings: the default float type and the fuzz factor `epsilon`."""

import numpy as np

__all__ = ["epsilon", "floatx", "set_floatx", "standardize_dtype"]

_FLOATX = "float32"
_EPSILON = 1e-7


def floatx():
    """Returns the default float dtype name, `"float32"` unless changed.

    Returns:
        A dtype name string.

    Example:
        >>> mk.config.floatx()
        'float32'
    """
    return _FLOATX


def set_floatx(dtype):
    """Sets the default float dtype used for new tensors, weights and data.

    Args:
        dtype: `"float16"`, `"float32"` or `"float64"`.

    Returns:
        None.

    Raises:
        ValueError: for any other dtype.

    Example:
        >>> mk.config.set_floatx("float64"); mk.config.floatx()
        'float64'
        >>> mk.config.set_floatx("float32")
    """
    global _FLOATX
    name = standardize_dtype(dtype)
    if name not in ("float16", "float32", "float64"):
        raise ValueError(f"set_floatx: expected float16, float32 or float64, got {dtype!r}")
    _FLOATX = name


def epsilon():
    """Returns the small constant that keeps logs and divisions finite.

    Returns:
        A Python float, 1e-7 by default.

    Example:
        >>> mk.config.epsilon()
        1e-07
    """
    return _EPSILON


def standardize_dtype(dtype):
    """Returns the canonical name of a dtype (`np.float32` -> `"float32"`).

    Also `minikeras.utils.standardize_dtype`. Where it differs from Keras 3
    (which reads Python `int` and `"int"` as `"int32"` except on TensorFlow,
    refuses numpy's short names and `object`, and gives `"string"` for
    `str`): names are numpy's, so `int` is `"int64"`, `"f4"` is `"float32"`,
    `"float"` is `"float64"` (Keras refuses it) and `str` is `"str"`; only
    Python `float` and None are floatx.

    Args:
        dtype: a dtype name, numpy dtype or Python type; None means floatx.

    Returns:
        A dtype name string.

    Raises:
        TypeError: if `dtype` is not a dtype.

    Example:
        >>> mk.config.standardize_dtype(np.float32), mk.config.standardize_dtype(None)
        ('float32', 'float32')
    """
    if dtype is None:
        return _FLOATX
    if dtype is float:
        return _FLOATX
    try:
        return _NAMES[dtype]  # numpy's `dtype.name` is Python code, ~4 us a call
    except KeyError:
        remember = len(_NAMES) < _NAMES_KEPT
    except TypeError:  # an unhashable `dtype`, such as a list of fields
        remember = False
    try:
        name = np.dtype(dtype).name
    except TypeError:
        raise TypeError(f"{dtype!r} is not a dtype") from None
    if remember:
        _NAMES[dtype] = name
    return name


# dtype (a name, numpy dtype or type, as given) -> its canonical name; a dtype equal
# to a key has that key's name, so a lookup can never give another dtype's name.
_NAMES = {}
_NAMES_KEPT = 256
