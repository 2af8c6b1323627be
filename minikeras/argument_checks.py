"""Checks of `fit` / `evaluate` / `predict` arguments: each named, with what was expected.

A wrong type or range is an error before anything runs (no step taken, no
state changed), naming the method, the argument, what it takes and what came:
`fit: epochs must be an int >= 0, got 1.5 (float)`.
"""

import numbers

__all__ = ["check_arguments", "check_int"]


def _describe(value):
    return f"{value!r:.60} ({type(value).__name__})"


def check_int(method, name, value, minimum, allow_none=False):
    """Checks that an argument is an int of at least `minimum` (or None, if allowed).

    Args:
        method: the function or method taking the argument, for the message.
        name: the argument's name, for the message.
        value: the value given.
        minimum: the smallest value allowed.
        allow_none: whether None is allowed too.

    Returns:
        None.

    Raises:
        TypeError: if `value` is not an int (a bool is not one).
        ValueError: if it is an int below `minimum`.

    Example:
        >>> mk.argument_checks.check_int("pad_sequences", "maxlen", None, 0, allow_none=True)
        >>> mk.argument_checks.check_int("fit", "epochs", -1, 0)
        Traceback (most recent call last):
        ...
        ValueError: fit: epochs must be an int >= 0, got -1 (int)
    """
    if value is None and allow_none:
        return
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        none = " or None" if allow_none else ""
        raise (
            TypeError
            if not isinstance(value, numbers.Integral) or isinstance(value, bool)
            else ValueError
        )(  # fmt: skip
            f"{method}: {name} must be an int >= {minimum}{none}, got {_describe(value)}"
        )


def _fraction(method, name, value):
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{method}: {name} must be a number in [0, 1), got {_describe(value)}")
    if not 0 <= value < 1:
        raise ValueError(f"{method}: {name} must be in [0, 1), got {value}")


def _verbose(method, value):
    if value == "auto" and isinstance(value, str):
        return
    if isinstance(value, bool) or value not in (0, 1, 2):
        raise ValueError(f"{method}: verbose must be 'auto', 0, 1 or 2, got {_describe(value)}")


def check_arguments(method, **arguments):
    """Checks the named arguments of a training method (see the module).

    Args:
        method: `"fit"`, `"evaluate"` or `"predict"`, for messages.
        **arguments: the arguments to check, by Keras's names: `epochs`,
            `initial_epoch`, `batch_size`, `validation_batch_size`, `steps_per_epoch`,
            `validation_steps`, `steps`, `validation_split`, `verbose`,
            `shuffle`, `validation_freq`.

    Returns:
        None.

    Raises:
        TypeError: for a value of the wrong type, naming the argument.
        ValueError: for a value out of range, naming the argument.

    Example:
        >>> mk.argument_checks.check_arguments("fit", epochs=0, batch_size=32)
        >>> mk.argument_checks.check_arguments("fit", epochs=1.5)
        Traceback (most recent call last):
        ...
        TypeError: fit: epochs must be an int >= 0, got 1.5 (float)
    """
    for name, value in arguments.items():
        if name in ("epochs", "initial_epoch"):
            check_int(method, name, value, 0)
        elif name == "validation_freq":
            check_int(method, name, value, 1)
        elif name in (
            "batch_size",
            "validation_batch_size",
            "steps_per_epoch",
            "validation_steps",
            "steps",
        ):
            check_int(method, name, value, 1, allow_none=True)
        elif name == "validation_split":
            _fraction(method, name, value)
        elif name == "verbose":
            _verbose(method, value)
        elif name == "shuffle":
            if not isinstance(value, bool) and value != "batch":
                raise TypeError(
                    f"{method}: shuffle must be True, False or 'batch', got {_describe(value)}"
                )
        else:
            raise ValueError(f"check_arguments: no rule for {name!r}")
