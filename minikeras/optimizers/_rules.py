"""What Adam, Adamax and Nadam share: their arguments and the in-place moment update."""

import numpy as np

from minikeras.optimizers._checks import FRACTION, NON_NEGATIVE, check_number
from minikeras.optimizers.base import Optimizer

__all__ = ["update_moment"]


def update_moment(moment, target, decay, scratch):
    """`moment = moment + (target - moment) * (1 - decay)`, in place (`target` may be `scratch`).

    Args:
        moment: the array to update.
        target: what it moves towards.
        decay: the moment's decay, a Python float.
        scratch: an array of the same shape for the difference.

    Example:
        >>> moment = np.zeros(2)
        >>> mk.optimizers._rules.update_moment(moment, np.array([1.0, 2.0]), 0.75, np.empty(2))
        >>> moment
        array([0.25, 0.5 ])
    """
    np.subtract(target, moment, out=scratch)
    scratch *= 1.0 - decay
    moment += scratch


class _MomentEstimator(Optimizer):
    """What Adam, Adamax and Nadam share: the arguments `beta_1`, `beta_2` and `epsilon`.

    Args:
        learning_rate: a float, a schedule, or a callable (of no argument, or of the step).
        beta_1: decay of the first-moment estimate, in [0, 1).
        beta_2: decay of the second-moment estimate, in [0, 1).
        epsilon: a number >= 0 that keeps the division finite.
        **kwargs: as for `Optimizer`.

    Example:
        >>> mk.optimizers.Adam(beta_1=0.5).beta_1
        0.5
    """

    def __init__(self, learning_rate, beta_1, beta_2, epsilon, **kwargs):
        super().__init__(learning_rate, **kwargs)
        owner = type(self).__name__
        self.beta_1 = check_number(owner, "beta_1", beta_1, FRACTION)
        self.beta_2 = check_number(owner, "beta_2", beta_2, FRACTION)
        self.epsilon = check_number(owner, "epsilon", epsilon, NON_NEGATIVE)

    def get_config(self):
        return {
            **super().get_config(),
            "beta_1": self.beta_1,
            "beta_2": self.beta_2,
            "epsilon": self.epsilon,
        }
