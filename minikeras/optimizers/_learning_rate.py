"""An optimizer's learning rate: a float kept in a Variable, a schedule or a callable.

`Optimizer.learning_rate` reads and sets it here. A float goes into a
non-trainable Variable of `config.floatx()` named `"learning_rate"`, as in
Keras 3, listed in the optimizer's `variables` right after `iterations`;
setting a number again assigns that Variable. A
`schedules.LearningRateSchedule` or any callable replaces it (dropping the
Variable, as Keras does) and is called at each update: with the step when it
takes one (`takes_step`), else with nothing. `rate_to_config` is how
`get_config` writes it.
"""

import inspect
import math

import numpy as np

from minikeras import config
from minikeras.engine.tensor import Tensor
from minikeras.engine.variable import Variable
from minikeras.optimizers import schedules
from minikeras.optimizers._checks import check_number

__all__ = ["assign_learning_rate", "called_rate", "rate_to_config", "takes_step"]

_LEARNING_RATE = (
    lambda value: math.isfinite(value) and value >= 0,
    "a finite number >= 0, a LearningRateSchedule or a callable",
)


def assign_learning_rate(optimizer, learning_rate):
    """Sets the learning rate of `optimizer`: what setting `Optimizer.learning_rate` does.

    Args:
        optimizer: an `Optimizer`; in its `__init__`, before it has a rate.
        learning_rate: a number >= 0 (or a 0-d array or Tensor of one), a
            `schedules.LearningRateSchedule` or a callable.

    Raises:
        TypeError: for a number, when the learning rate is a schedule or callable.
        ValueError: for something that is neither a number >= 0, a schedule
            nor a callable.

    Example:
        >>> optimizer = mk.optimizers.SGD(0.5)
        >>> mk.optimizers._learning_rate.assign_learning_rate(optimizer, 0.25)
        >>> float(optimizer.learning_rate)
        0.25
    """
    current = optimizer._learning_rate
    if callable(learning_rate) and not isinstance(learning_rate, Tensor):
        if isinstance(current, Variable):  # (Keras untracks it too)
            optimizer._variables.remove(current)
            optimizer._leading -= 1
        optimizer._learning_rate = learning_rate
        optimizer._rate_takes_step = takes_step(learning_rate)
        return
    if current is not None and not isinstance(current, Variable):
        raise TypeError(
            f"Optimizer {optimizer.name!r} was created with a learning rate schedule "
            f"({current!r}), so its learning rate cannot be set to "
            f"{learning_rate!r}; create the optimizer with a float learning_rate "
            "to change it as training goes"
        )
    if isinstance(learning_rate, (np.ndarray, Tensor)) and np.ndim(learning_rate) == 0:
        learning_rate = float(learning_rate)
    learning_rate = check_number(
        type(optimizer).__name__, "learning_rate", learning_rate, _LEARNING_RATE
    )
    if current is None:  # (from __init__: the Variable goes right after `iterations`)
        variable = Variable(learning_rate, dtype=config.floatx(), trainable=False)
        variable.name, variable.path = "learning_rate", f"{optimizer.name}/learning_rate"
        optimizer._variables.insert(optimizer._leading, variable)
        optimizer._leading += 1
        optimizer._learning_rate = variable
    else:
        current.assign(learning_rate)


def called_rate(optimizer):
    """A schedule's or callable's rate now, as a Python float.

    Args:
        optimizer: an `Optimizer` whose learning rate is a schedule or callable.

    Returns:
        A Python float.

    Example:
        >>> optimizer = mk.optimizers.SGD(lambda step: 0.5 / (step + 1))
        >>> mk.optimizers._learning_rate.called_rate(optimizer)
        0.5
    """
    if optimizer._rate_takes_step:
        return float(optimizer._learning_rate(int(optimizer._iterations._value)))
    return float(optimizer._learning_rate())


def rate_to_config(learning_rate):
    """How `get_config` writes a learning rate (see `Optimizer.get_config`).

    Args:
        learning_rate: the optimizer's Variable, schedule or callable.

    Returns:
        The Python float of the Variable's float32 value, a schedule's
        `schedules.serialize`, or the callable itself.

    Example:
        >>> rate = mk.optimizers.SGD(0.1)._learning_rate
        >>> mk.optimizers._learning_rate.rate_to_config(rate)
        0.10000000149011612
    """
    if isinstance(learning_rate, Variable):  # (the float32 value, as Keras writes it)
        return float(learning_rate._value)
    if isinstance(learning_rate, schedules.LearningRateSchedule):
        return schedules.serialize(learning_rate)
    return learning_rate


def takes_step(learning_rate):
    """Whether a callable rate is given the step: a schedule, or a callable that needs one.

    Args:
        learning_rate: a `schedules.LearningRateSchedule` or a callable.

    Returns:
        A bool.

    Example:
        >>> takes_step = mk.optimizers._learning_rate.takes_step
        >>> takes_step(lambda: 0.1), takes_step(lambda step: 0.1 / (step + 1))
        (False, True)
    """
    if isinstance(learning_rate, schedules.LearningRateSchedule):
        return True
    try:
        inspect.signature(learning_rate).bind()
    except (TypeError, ValueError):  # (ValueError: a builtin, no signature to read)
        return True
    return False
