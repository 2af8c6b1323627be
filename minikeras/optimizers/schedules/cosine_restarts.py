"""`CosineDecayRestarts`: cosine decay with warm restarts (SGDR), as Keras 3 computes it."""

import math

from minikeras.optimizers._checks import POSITIVE, check_number
from minikeras.optimizers.schedules.learning_rate_schedule import LearningRateSchedule

__all__ = ["CosineDecayRestarts"]


class CosineDecayRestarts(LearningRateSchedule):
    """Cosine decay with warm restarts (Loshchilov & Hutter's SGDR), period after period.

    The multiplier falls along half a cosine from 1 to `alpha` over
    `first_decay_steps`, then restarts; each period runs `t_mul` times as many
    steps as the one before and starts `m_mul` times as high:

        # i: the period the step is in; fraction: how far into it (0 to 1)
        fraction = step / first_decay_steps
        if t_mul == 1: i = floor(fraction); fraction -= i
        else: i = floor(log(1 - fraction * (1 - t_mul)) / log(t_mul))
              fraction = (fraction - (1 - t_mul**i) / (1 - t_mul)) / t_mul**i
        cosine = 0.5 * m_mul**i * (1 + cos(pi * fraction))
        learning_rate = initial_learning_rate * ((1 - alpha) * cosine + alpha)

    Args:
        initial_learning_rate: the learning rate at step 0.
        first_decay_steps: positive number of steps of the first period.
        t_mul: how many times longer each period is than the one before.
        m_mul: how many times higher each period starts than the one before.
        alpha: the floor, as a fraction of `initial_learning_rate`.
        name: a name (Keras's default, `"SGDRDecay"`).

    Raises:
        ValueError: for a non-positive `first_decay_steps` or non-numbers.

    Example:
        >>> schedule = mk.optimizers.schedules.CosineDecayRestarts(1.0, 2, t_mul=1.0, m_mul=0.5)
        >>> [round(schedule(step), 6) for step in range(6)]
        [1.0, 0.5, 0.5, 0.25, 0.25, 0.125]
    """

    def __init__(
        self,
        initial_learning_rate,
        first_decay_steps,
        t_mul=2.0,
        m_mul=1.0,
        alpha=0.0,
        name="SGDRDecay",
    ):
        owner = type(self).__name__
        self.initial_learning_rate = check_number(
            owner, "initial_learning_rate", initial_learning_rate
        )
        self.first_decay_steps = check_number(
            owner, "first_decay_steps", first_decay_steps, POSITIVE
        )
        self._t_mul = check_number(owner, "t_mul", t_mul)
        self._m_mul = check_number(owner, "m_mul", m_mul)
        self.alpha = check_number(owner, "alpha", alpha)
        self.name = name

    def __call__(self, step):
        fraction = float(step) / self.first_decay_steps
        t_mul = self._t_mul
        if t_mul == 1.0:
            restart = math.floor(fraction)
            fraction -= restart
        else:
            restart = math.floor(math.log(1.0 - fraction * (1.0 - t_mul)) / math.log(t_mul))
            done = (1.0 - t_mul**restart) / (1.0 - t_mul)  # the periods before this one
            fraction = (fraction - done) / t_mul**restart
        cosine = 0.5 * self._m_mul**restart * (1.0 + math.cos(math.pi * fraction))
        return self.initial_learning_rate * ((1.0 - self.alpha) * cosine + self.alpha)

    def get_config(self):
        return {
            "initial_learning_rate": self.initial_learning_rate,
            "first_decay_steps": self.first_decay_steps,
            "t_mul": self._t_mul,
            "m_mul": self._m_mul,
            "alpha": self.alpha,
            "name": self.name,
        }
