"""Keras's debugging caps on training: at most so many epochs, so many steps an epoch.

`keras.config.set_max_epochs(n)` makes every `fit` stop after epoch `n`, and
`keras.config.set_max_steps_per_epoch(n)` makes every epoch of `fit`, and
every `evaluate` and `predict`, take at most `n` batches: a quick run of a
long script without editing it. The environment variables `KERAS_MAX_EPOCHS`
and `KERAS_MAX_STEPS_PER_EPOCH`, read when minikeras is imported, set them
too. As in Keras, a capped call warns `"Limiting epochs to n"` or
`"Limiting steps_per_epoch to n"`, and the cap stands in for the argument
the call was given, so an array whose `batch_size` is None is cut into
`ceil(samples / n)`-sample batches, as `steps_per_epoch=n` would cut it.
"""

import os
import warnings

__all__ = ["max_epochs", "max_steps_per_epoch", "set_max_epochs", "set_max_steps_per_epoch"]

_LIMITS = {"epochs": None, "steps_per_epoch": None}


def _checked_limit(value, name):
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) and not hasattr(value, "__index__"):
        raise TypeError(f"set_{name}: expected None or a non-negative int, got {value!r}")
    value = int(value)
    if value < 0:
        raise ValueError(f"set_{name}: expected None or a non-negative int, got {value}")
    return value


def set_max_epochs(max_epochs):
    """Caps the epochs of every later `fit`, for quick debugging runs.

    `fit(epochs=e)` trains to epoch `min(e, max_epochs)` (the cap is on the
    epoch `fit` stops at, which `initial_epoch` counts from, as in Keras),
    warning `"Limiting epochs to max_epochs"` when it cuts. The environment
    variable `KERAS_MAX_EPOCHS` sets it when minikeras is imported.

    Args:
        max_epochs: an int, or None for no cap. 0 also means no cap (as
            Keras reads it); Keras takes any value, minikeras refuses
            negative numbers and non-integers.

    Returns:
        None.

    Raises:
        TypeError: if `max_epochs` is not None or an int.
        ValueError: if it is negative.

    Example:
        >>> mk.config.set_max_epochs(2)
        >>> model = mk.Sequential([mk.layers.Dense(1)])
        >>> model.compile("sgd", "mse")
        >>> import warnings
        >>> with warnings.catch_warnings(record=True) as caught:
        ...     warnings.simplefilter("always")
        ...     history = model.fit(np.ones((4, 2)), np.ones((4, 1)), epochs=10, verbose=0)
        >>> history.epoch, str(caught[0].message)
        ([0, 1], 'Limiting epochs to 2')
        >>> mk.config.set_max_epochs(None)
    """
    _LIMITS["epochs"] = _checked_limit(max_epochs, "max_epochs")


def max_epochs():
    """The cap `set_max_epochs` (or `KERAS_MAX_EPOCHS`) put on `fit`'s epochs.

    Returns:
        An int, or None when there is no cap (the default).

    Example:
        >>> mk.config.max_epochs() is None
        True
    """
    return _LIMITS["epochs"]


def set_max_steps_per_epoch(max_steps_per_epoch):
    """Caps the batches of every later epoch of `fit`, and of `evaluate` and `predict`.

    The cap stands in for `steps_per_epoch` (`fit`, and its validation's
    `validation_steps`) and `steps` (`evaluate`, `predict`) when they are None
    or larger, warning `"Limiting steps_per_epoch to n"`, as Keras's epoch
    iterator does. So arrays given without `batch_size` are cut into `n`
    batches of `ceil(samples / n)` samples, all of them seen, as in Keras.
    The environment variable `KERAS_MAX_STEPS_PER_EPOCH` sets it when
    minikeras is imported.

    Args:
        max_steps_per_epoch: an int, or None for no cap. 0 also means no cap
            (as Keras reads it); Keras takes any value, minikeras refuses
            negative numbers and non-integers.

    Returns:
        None.

    Raises:
        TypeError: if `max_steps_per_epoch` is not None or an int.
        ValueError: if it is negative.

    Example:
        >>> mk.config.set_max_steps_per_epoch(3)
        >>> model = mk.Sequential([mk.layers.Dense(1)])
        >>> import warnings
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")
        ...     rows = model.predict(np.ones((100, 2)), batch_size=10).shape[0]
        >>> rows  # 3 batches of 10
        30
        >>> mk.config.set_max_steps_per_epoch(None)
    """
    _LIMITS["steps_per_epoch"] = _checked_limit(max_steps_per_epoch, "max_steps_per_epoch")


def max_steps_per_epoch():
    """The cap `set_max_steps_per_epoch` (or `KERAS_MAX_STEPS_PER_EPOCH`) put on an epoch's batches.

    Returns:
        An int, or None when there is no cap (the default).

    Example:
        >>> mk.config.max_steps_per_epoch() is None
        True
    """
    return _LIMITS["steps_per_epoch"]


def _capped_epochs(epochs, stacklevel):
    """`epochs`, or the `max_epochs` cap when it is smaller (with Keras's warning).

    `stacklevel()` gives the warning's stack level (called only to warn: it walks the stack).
    """
    cap = _LIMITS["epochs"]
    if cap and cap < epochs:
        warnings.warn(f"Limiting epochs to {cap}", stacklevel=stacklevel())
        return cap
    return epochs


def _capped_steps(steps, stacklevel):
    """`steps`, or the `max_steps_per_epoch` cap when `steps` is None or larger."""
    cap = _LIMITS["steps_per_epoch"]
    if cap and (not steps or cap < steps):
        warnings.warn(f"Limiting steps_per_epoch to {cap}", stacklevel=stacklevel())
        return cap
    return steps


def _from_environment(variable, name):
    text = os.environ.get(variable)
    if text is None:
        return None
    try:
        return _checked_limit(int(text), name)
    except ValueError:
        raise ValueError(f"{variable}: expected a non-negative int, got {text!r}") from None


_LIMITS["epochs"] = _from_environment("KERAS_MAX_EPOCHS", "max_epochs")
_LIMITS["steps_per_epoch"] = _from_environment("KERAS_MAX_STEPS_PER_EPOCH", "max_steps_per_epoch")
