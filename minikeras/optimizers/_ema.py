"""The exponential moving average of the weights (`use_ema`), as Keras 3 keeps it.

After each update, before `iterations` moves on:

    momentum = 0 on the first step, else ema_momentum
    average = momentum * average + (1 - momentum) * w

and every `ema_overwrite_frequency` steps, `w = average`.
"""

import numbers

from minikeras.optimizers._checks import UNIT_INTERVAL, check_number

__all__ = ["check_arguments", "overwrite", "update"]


def check_arguments(owner, use_ema, ema_momentum, ema_overwrite_frequency):
    """`(use_ema, ema_momentum, ema_overwrite_frequency)` checked, as the optimizer keeps them.

    Args:
        owner: the optimizer's class name, for messages.
        use_ema: whether to keep averages.
        ema_momentum: a number in [0, 1].
        ema_overwrite_frequency: None, or an int >= 1.

    Returns:
        A tuple `(bool, float, int or None)`.

    Raises:
        ValueError: for a momentum outside [0, 1] or a frequency that is not
            an int >= 1.

    Example:
        >>> mk.optimizers._ema.check_arguments("SGD", True, 0.9, 10)
        (True, 0.9, 10)
    """
    ema_momentum = check_number(owner, "ema_momentum", ema_momentum, UNIT_INTERVAL)
    frequency = ema_overwrite_frequency
    if frequency is not None and (
        isinstance(frequency, bool) or not isinstance(frequency, numbers.Integral) or frequency < 1
    ):
        raise ValueError(
            f"{owner}: `ema_overwrite_frequency` must be None or an int >= 1, got {frequency!r}"
        )
    return bool(use_ema), ema_momentum, None if frequency is None else int(frequency)


def update(averages, variables, momentum, step):
    """Moves each average towards its variable; `step` is `iterations` before this update.

    Args:
        averages: the average Variables, one per variable.
        variables: the Variables just updated.
        momentum: `ema_momentum`.
        step: the number of updates before this one (0 on the first).

    Example:
        >>> w, average = mk.Variable([2.0]), mk.Variable([0.0])
        >>> mk.optimizers._ema.update([average], [w], 0.9, step=0)  # the first step copies
        >>> average.numpy()
        array([2.], dtype=float32)
    """
    momentum = momentum if step else 0.0
    for average, variable in zip(averages, variables):
        average.assign(average._value * momentum + variable._value * (1.0 - momentum))


def overwrite(variables, averages, name):
    """Sets each variable to its average.

    Args:
        variables: the Variables, in the order the optimizer was built for.
        averages: their averages.
        name: the optimizer's name, for the message.

    Raises:
        ValueError: if the two lists differ in length.

    Example:
        >>> w, average = mk.Variable([2.0]), mk.Variable([1.0])
        >>> mk.optimizers._ema.overwrite([w], [average], "sgd")
        >>> w.numpy()
        array([1.], dtype=float32)
    """
    variables = list(variables)
    if len(variables) != len(averages):
        raise ValueError(
            f"Optimizer {name!r} keeps averages of {len(averages)} variables, but "
            f"{len(variables)} variables were given to overwrite; pass the variables it "
            "was built for"
        )
    for variable, average in zip(variables, averages):
        variable.assign(average._value)
