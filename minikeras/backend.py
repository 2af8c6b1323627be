"""`keras.backend`'s names: the session, the global settings, and dtype questions.

Keras 3 keeps these for code written against `keras.backend`:
`clear_session`, `floatx` / `set_floatx`, `epsilon` / `set_epsilon`,
`image_data_format` / `set_image_data_format`, `standardize_dtype` and
`backend` are `minikeras.config`'s and `minikeras.utils`' functions,
re-exported, as is `minikeras.utils.is_keras_tensor`. This module adds the
dtype predicates, `result_type` and `get_uid`.
"""

import numpy as np

from minikeras.config import (
    backend,
    epsilon,
    floatx,
    image_data_format,
    set_epsilon,
    set_floatx,
    set_image_data_format,
    standardize_dtype,
)
from minikeras.engine import context
from minikeras.utils.session import clear_session
from minikeras.utils.symbolic import is_keras_tensor

__all__ = [
    "backend",
    "clear_session",
    "epsilon",
    "floatx",
    "get_uid",
    "image_data_format",
    "is_float_dtype",
    "is_int_dtype",
    "is_keras_tensor",
    "result_type",
    "set_epsilon",
    "set_floatx",
    "set_image_data_format",
    "standardize_dtype",
]


def is_float_dtype(dtype):
    """Returns whether `dtype` is a floating-point type (`float16`, `float32`, `float64`).

    Args:
        dtype: a dtype name, numpy dtype or Python type (see `standardize_dtype`).

    Returns:
        A bool.

    Raises:
        TypeError: if `dtype` is not a dtype.

    Example:
        >>> mk.backend.is_float_dtype("float16"), mk.backend.is_float_dtype(np.int32)
        (True, False)
    """
    return standardize_dtype(dtype).startswith(("float", "bfloat"))


def is_int_dtype(dtype):
    """Returns whether `dtype` is a signed or unsigned integer type (not `bool`).

    Args:
        dtype: a dtype name, numpy dtype or Python type (see `standardize_dtype`).

    Returns:
        A bool.

    Raises:
        TypeError: if `dtype` is not a dtype.

    Example:
        >>> mk.backend.is_int_dtype("uint8"), mk.backend.is_int_dtype("bool")
        (True, False)
    """
    return standardize_dtype(dtype).startswith(("int", "uint"))


def result_type(*dtypes):
    """Returns the dtype minikeras's operations give for operands of `dtypes`.

    The rules of `minikeras.ops`: an integer or bool meeting a float takes
    the float's dtype; floats promote among themselves, and integers among
    themselves, as numpy does (`int8` and `uint8` give `int16`). The Python
    types are "weak": `float` among integers gives floatx and among floats
    changes nothing; `int` and `bool` change nothing, except that `int`
    makes bools `int64`. Where Keras differs:
    on JAX without 64-bit types it narrows `int64` and `float64` to 32 bits,
    and it gives `int32` for Python `int` alone or with bools (minikeras:
    `int64`) and `float32` for `uint64` with `int64` (minikeras: numpy's
    `float64`).

    Args:
        *dtypes: dtype names, numpy dtypes, or the Python types `bool`,
            `int` and `float`. None of them gives floatx.

    Returns:
        A dtype name string.

    Raises:
        TypeError: if one of `dtypes` is not a dtype.

    Example:
        >>> mk.backend.result_type("int32", "float16"), mk.backend.result_type("int64", float)
        ('float16', 'float32')
        >>> mk.backend.result_type("uint8", "int8"), mk.backend.result_type()
        ('int16', 'float32')
    """
    strong = [standardize_dtype(d) for d in dtypes if d not in (bool, int, float)]
    floats = [d for d in strong if is_float_dtype(d)]
    if floats:
        return np.result_type(*floats).name
    if float in dtypes:
        return floatx()
    if strong and (int not in dtypes or any(d != "bool" for d in strong)):
        return np.result_type(*strong).name
    if int in dtypes:
        return "int64"  # numpy's integer, also for bools meeting an int
    return "bool" if bool in dtypes else floatx()


def get_uid(prefix=""):
    """Returns how many times `prefix` has been numbered in this session, counting this one.

    The counter is the one default layer names come from, as in Keras:
    after `get_uid("dense")` returns 1, the next default-named `Dense` is
    `dense_1`. `clear_session()` starts every counter again.

    Args:
        prefix: the name to count.

    Returns:
        An int, 1 the first time.

    Example:
        >>> mk.backend.clear_session()
        >>> mk.backend.get_uid("my_block"), mk.backend.get_uid("my_block")
        (1, 2)
    """
    counts = context.state.name_counts
    counts[prefix] = counts.get(prefix, 0) + 1
    return counts[prefix]
