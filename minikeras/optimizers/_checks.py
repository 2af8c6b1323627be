"""Argument checks shared by the optimizers and the schedules: `check_number` and its rules."""

import numbers

__all__ = ["ANY", "FRACTION", "NON_NEGATIVE", "POSITIVE", "UNIT_INTERVAL", "check_number"]

# Rules for `check_number`: (test of the float value, what the message says was expected).
ANY = (lambda value: True, "a number")
POSITIVE = (lambda value: value > 0.0, "a number > 0")
NON_NEGATIVE = (lambda value: value >= 0.0, "a number >= 0")
FRACTION = (lambda value: 0.0 <= value < 1.0, "a number in [0, 1)")
UNIT_INTERVAL = (lambda value: 0.0 <= value <= 1.0, "a number in [0, 1]")


def check_number(owner, name, value, rule=ANY):
    """Returns `value` checked against `rule`: a Python int or float as given, else a float.

    An int stays an int (`decay_steps=10`), so that configs keep what was
    given, as Keras's do.

    Args:
        owner: who is asking, for the message (a class name).
        name: the argument's name.
        value: the argument (a Python or numpy number; not a bool).
        rule: a pair `(test, expected)` such as `POSITIVE`.

    Returns:
        A Python int or float.

    Raises:
        ValueError: naming the owner, the argument, what was expected and what came.

    Example:
        >>> checks = mk.optimizers._checks
        >>> checks.check_number("ExponentialDecay", "decay_steps", np.int64(10), checks.POSITIVE)
        10.0
        >>> checks.check_number("ExponentialDecay", "decay_steps", 10, checks.POSITIVE)
        10
    """
    test, expected = rule
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not test(float(value)):
        raise ValueError(f"{owner}: `{name}` must be {expected}, got {value!r}")
    return value if type(value) in (int, float) else float(value)
