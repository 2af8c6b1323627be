"""Global settings, as `keras.config` has them.

The default float type (`floatx`), the global dtype policy
(`dtype_policy`, `set_dtype_policy`: `minikeras.dtype_policies`'), the fuzz
factor `epsilon`, the image layout, dtype names, and which backend computes
(`backend()`: minikeras has one, numpy with autograd). The switches Keras users flip
(`enable_unsafe_deserialization`, the interactive-logging and
traceback-filtering ones) are `minikeras.switches`', and the debugging caps
on training (`set_max_epochs`, `set_max_steps_per_epoch`) are
`minikeras.training_limits`', re-exported here.
"""

import numpy as np

from minikeras.dtype_policies.policy import dtype_policy, set_dtype_policy
from minikeras.switches import (
    disable_interactive_logging,
    disable_traceback_filtering,
    enable_interactive_logging,
    enable_traceback_filtering,
    enable_unsafe_deserialization,
    is_interactive_logging_enabled,
    is_traceback_filtering_enabled,
)
from minikeras.training_limits import (
    max_epochs,
    max_steps_per_epoch,
    set_max_epochs,
    set_max_steps_per_epoch,
)

__all__ = [
    "backend",
    "disable_interactive_logging",
    "disable_traceback_filtering",
    "dtype_policy",
    "enable_interactive_logging",
    "enable_traceback_filtering",
    "enable_unsafe_deserialization",
    "epsilon",
    "floatx",
    "image_data_format",
    "is_interactive_logging_enabled",
    "is_traceback_filtering_enabled",
    "max_epochs",
    "max_steps_per_epoch",
    "set_backend",
    "set_dtype_policy",
    "set_epsilon",
    "set_floatx",
    "set_image_data_format",
    "set_max_epochs",
    "set_max_steps_per_epoch",
    "standardize_data_format",
    "standardize_dtype",
]

_FLOATX = "float32"
_EPSILON = 1e-7
_BACKEND = "numpy"
_IMAGE_DATA_FORMAT = "channels_last"


def floatx():
    """Returns the default float dtype name, `"float32"` unless changed.

    Returns:
        A dtype name string.

    Example:
        >>> mk.config.floatx()
        'float32'
    """
    return _FLOATX


def set_floatx(value):
    """Sets the default float dtype used for new tensors, weights and data.

    Args:
        value: `"float16"`, `"float32"` or `"float64"` (Keras's argument name).

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
    name = standardize_dtype(value)
    if name not in ("float16", "float32", "float64"):
        raise ValueError(f"set_floatx: expected float16, float32 or float64, got {value!r}")
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


def set_epsilon(value):
    """Sets the small constant that keeps logs and divisions finite.

    Losses, metrics and constraints read it each time they run, so the new
    value holds from the next call on.

    Args:
        value: a positive float.

    Returns:
        None.

    Raises:
        ValueError: if `value` is not a positive number (Keras takes any; 0 would
            let a log or a division give inf or nan).

    Example:
        >>> mk.config.set_epsilon(1e-5); mk.config.epsilon()
        1e-05
        >>> mk.config.set_epsilon(1e-7)
    """
    global _EPSILON
    try:
        number = float(value)
    except (TypeError, ValueError):
        number = float("nan")
    if isinstance(value, bool) or not number > 0 or number == float("inf"):
        raise ValueError(f"set_epsilon: expected a positive float, got {value!r}")
    _EPSILON = number


def image_data_format():
    """Returns the default image layout, `"channels_last"` unless changed.

    `"channels_last"` is `(batch, height, width, channels)`, `"channels_first"`
    `(batch, channels, height, width)`. Layers and ops whose `data_format` is
    None read it (layers when made, ops when called). minikeras computes
    channels last; channels first is computed by transposing around it.

    Returns:
        `"channels_last"` or `"channels_first"`.

    Example:
        >>> mk.config.image_data_format()
        'channels_last'
    """
    return _IMAGE_DATA_FORMAT


def set_image_data_format(data_format):
    """Sets the default image layout, read by layers made and ops called with `data_format=None`.

    As in Keras, the setting is one for the process (not per thread), a layer
    reads it once when made and keeps the layout in its config, and
    `clear_session` leaves it as it is.

    Args:
        data_format: `"channels_last"` or `"channels_first"` (in any case, as Keras).

    Returns:
        None.

    Raises:
        ValueError: for any other value.

    Example:
        >>> mk.config.set_image_data_format("channels_first")
        >>> layer = mk.layers.Conv2D(4, 3)  # data_format=None: the setting, now
        >>> layer.data_format, layer(np.ones((2, 1, 8, 8), "float32")).shape
        ('channels_first', (2, 4, 6, 6))
        >>> mk.config.set_image_data_format("channels_last")
        >>> mk.config.image_data_format()
        'channels_last'
    """
    global _IMAGE_DATA_FORMAT
    _IMAGE_DATA_FORMAT = _layout_name(data_format, "set_image_data_format")


def standardize_data_format(data_format, caller="data_format"):
    """The layout a `data_format` argument names: None means `image_data_format()`.

    What Keras's layers and ops do with their `data_format` argument (Keras's
    internal `backend.standardize_data_format`).

    Args:
        data_format: None, `"channels_last"` or `"channels_first"` (in any case).
        caller: the layer or op name, for errors.

    Returns:
        `"channels_last"` or `"channels_first"`.

    Raises:
        ValueError: for any other value.

    Example:
        >>> mk.config.standardize_data_format(None)
        'channels_last'
        >>> mk.config.standardize_data_format("Channels_First")
        'channels_first'
    """
    if data_format is None:
        return _IMAGE_DATA_FORMAT
    return _layout_name(data_format, caller)


def _layout_name(data_format, caller):
    if data_format in _DATA_FORMATS:  # the common case, without lower()
        return data_format
    name = data_format.lower() if isinstance(data_format, str) else data_format
    if name not in _DATA_FORMATS:
        raise ValueError(
            f"{caller}: `data_format` must be 'channels_last' or 'channels_first', "
            f"got {data_format!r}"
        )
    return name


_DATA_FORMATS = ("channels_last", "channels_first")


def backend():
    """Returns the name of the backend that computes: `"numpy"`.

    Keras 3 answers `"jax"`, `"tensorflow"`, `"torch"` or `"numpy"`.
    minikeras has one backend, numpy with autograd for the gradients, and
    says `"numpy"` (unlike Keras's numpy backend, it trains).

    Returns:
        `"numpy"`.

    Example:
        >>> mk.config.backend()
        'numpy'
    """
    return _BACKEND


def set_backend(backend):
    """Switches backends in Keras; minikeras has one, so only `"numpy"` is accepted.

    Args:
        backend: `"numpy"` (nothing changes).

    Returns:
        None.

    Raises:
        ValueError: for any other backend: minikeras computes with numpy only.

    Example:
        >>> mk.config.set_backend("numpy")
        >>> mk.config.backend()
        'numpy'
    """
    if backend != _BACKEND:
        raise ValueError(
            f"set_backend: minikeras has one backend, numpy (with autograd); got {backend!r}. "
            "For jax, tensorflow or torch, use Keras 3 itself"
        )


def standardize_dtype(dtype):
    """Returns the canonical name of a dtype (`np.float32` -> `"float32"`).

    Also `minikeras.utils.standardize_dtype`. Where it differs from Keras 3
    (which reads Python `int` and `"int"` as `"int32"` except on TensorFlow,
    refuses numpy's short names and `object`, and gives `"string"` for
    `str`): names are numpy's, so `int` is `"int64"`, `"f4"` is `"float32"`,
    `"float"` is `"float64"` (Keras refuses it) and `str` (or Keras's
    `"string"`) is `"str"`; only Python `float` and None are floatx.

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
    if dtype == "string":  # (Keras's name for strings: `Input((1,), dtype="string")`)
        return "str"
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
