"""`LearningRateSchedule` and the schedules Keras 3 ships, with Keras's formulas."""

import bisect
import math

from minikeras.optimizers._checks import NON_NEGATIVE, POSITIVE, check_number

__all__ = [
    "CosineDecay",
    "ExponentialDecay",
    "InverseTimeDecay",
    "LearningRateSchedule",
    "PiecewiseConstantDecay",
    "PolynomialDecay",
]


class LearningRateSchedule:
    """Base class: a callable `schedule(step) -> learning rate`.

    Subclasses implement `__call__` and `get_config`.

    Example:
        >>> class Halving(mk.optimizers.schedules.LearningRateSchedule):
        ...     def __call__(self, step):
        ...         return 0.1 * 0.5 ** int(step)
        ...     def get_config(self):
        ...         return {}
        >>> Halving()(3)
        0.0125
    """

    def __call__(self, step):
        """Returns the learning rate at `step`.

        Args:
            step: the optimizer step (its `iterations`), 0 on the first update.

        Returns:
            A Python float.

        Raises:
            NotImplementedError: in the base class.

        Example:
            >>> mk.optimizers.schedules.ExponentialDecay(0.1, decay_steps=10, decay_rate=0.5)(10)
            0.05
        """
        raise NotImplementedError(f"{type(self).__name__} must implement __call__(step)")

    def get_config(self):
        """Returns the constructor arguments as a dict, for `from_config`.

        Returns:
            A dict of JSON-friendly values.

        Raises:
            NotImplementedError: in the base class.

        Example:
            >>> mk.optimizers.schedules.InverseTimeDecay(0.1, 10, 0.5).get_config()["decay_rate"]
            0.5
        """
        raise NotImplementedError(f"{type(self).__name__} must implement get_config()")

    @classmethod
    def from_config(cls, config):
        """Makes a schedule from the dict `get_config` returned.

        Args:
            config: a dict of constructor arguments.

        Returns:
            A schedule of this class.

        Example:
            >>> schedule = mk.optimizers.schedules.PolynomialDecay(0.1, decay_steps=100)
            >>> mk.optimizers.schedules.PolynomialDecay.from_config(schedule.get_config())(50)
            0.05005
        """
        return cls(**config)

    def __repr__(self):
        arguments = ", ".join(f"{key}={value!r}" for key, value in self.get_config().items())
        return f"{type(self).__name__}({arguments})"


class _StepDecay(LearningRateSchedule):
    """What ExponentialDecay and InverseTimeDecay share: their arguments and `p`."""

    def __init__(self, initial_learning_rate, decay_steps, decay_rate, staircase=False, name=None):
        owner = type(self).__name__
        self.initial_learning_rate = check_number(
            owner, "initial_learning_rate", initial_learning_rate
        )
        self.decay_steps = check_number(owner, "decay_steps", decay_steps, POSITIVE)
        self.decay_rate = check_number(owner, "decay_rate", decay_rate)
        self.staircase = bool(staircase)
        self.name = name or owner

    def _progress(self, step):
        """`p = step / decay_steps`, rounded down with `staircase`."""
        progress = float(step) / self.decay_steps
        return math.floor(progress) if self.staircase else progress

    def get_config(self):
        return {
            "initial_learning_rate": self.initial_learning_rate,
            "decay_steps": self.decay_steps,
            "decay_rate": self.decay_rate,
            "staircase": self.staircase,
            "name": self.name,
        }


class ExponentialDecay(_StepDecay):
    """Decays the learning rate by `decay_rate` every `decay_steps` steps.

        p = step / decay_steps            # floor(step / decay_steps) if staircase
        learning_rate = initial_learning_rate * decay_rate ** p

    Args:
        initial_learning_rate: the learning rate at step 0.
        decay_steps: positive number of steps per factor `decay_rate`.
        decay_rate: the factor.
        staircase: decay in whole steps of `decay_steps` rather than smoothly.
        name: a name (default: the class name, as Keras's).

    Raises:
        ValueError: for a non-positive `decay_steps` or non-numbers.

    Example:
        >>> schedule = mk.optimizers.schedules.ExponentialDecay(
        ...     0.1, decay_steps=2, decay_rate=0.5, staircase=True
        ... )
        >>> [schedule(step) for step in range(5)]
        [0.1, 0.1, 0.05, 0.05, 0.025]
    """

    def __init__(
        self,
        initial_learning_rate,
        decay_steps,
        decay_rate,
        staircase=False,
        name="ExponentialDecay",
    ):
        super().__init__(initial_learning_rate, decay_steps, decay_rate, staircase, name)

    def __call__(self, step):
        return self.initial_learning_rate * self.decay_rate ** self._progress(step)


class PiecewiseConstantDecay(LearningRateSchedule):
    """A constant learning rate on each interval between step boundaries.

        learning_rate = values[0]   if step <= boundaries[0]
                        values[i]   if boundaries[i - 1] < step <= boundaries[i]
                        values[-1]  if step > boundaries[-1]

    Args:
        boundaries: increasing step numbers.
        values: the learning rates, one more than `boundaries`.
        name: a name (default: `"PiecewiseConstant"`, as in Keras).

    Raises:
        ValueError: if `values` is not one longer than `boundaries`, or the
            boundaries decrease.

    Example:
        >>> schedule = mk.optimizers.schedules.PiecewiseConstantDecay(
        ...     boundaries=[2, 4], values=[1.0, 0.5, 0.1]
        ... )
        >>> [schedule(step) for step in range(6)]
        [1.0, 1.0, 1.0, 0.5, 0.5, 0.1]
    """

    def __init__(self, boundaries, values, name="PiecewiseConstant"):
        owner = type(self).__name__
        boundaries, values = list(boundaries), list(values)
        if len(boundaries) != len(values) - 1:
            raise ValueError(
                f"{owner}: `values` must have one more item than `boundaries`; got "
                f"{len(boundaries)} boundaries {boundaries} and {len(values)} values {values}"
            )
        self.boundaries = [check_number(owner, "boundaries", b) for b in boundaries]
        if self.boundaries != sorted(self.boundaries):
            raise ValueError(f"{owner}: `boundaries` must be increasing, got {boundaries}")
        self.values = [check_number(owner, "values", value) for value in values]
        self.name = name or "PiecewiseConstant"  # (Keras's default name)

    def __call__(self, step):
        # bisect_left puts a step equal to a boundary in the interval that ends there.
        return self.values[bisect.bisect_left(self.boundaries, float(step))]

    def get_config(self):
        return {"boundaries": self.boundaries, "values": self.values, "name": self.name}


class InverseTimeDecay(_StepDecay):
    """Divides the learning rate by `1 + decay_rate * step / decay_steps`.

        p = step / decay_steps            # floor(step / decay_steps) if staircase
        learning_rate = initial_learning_rate / (1 + decay_rate * p)

    Args:
        initial_learning_rate: the learning rate at step 0.
        decay_steps: positive number of steps.
        decay_rate: how fast the rate falls.
        staircase: decay in whole steps of `decay_steps` rather than smoothly.
        name: a name (default: the class name, as Keras's).

    Raises:
        ValueError: for a non-positive `decay_steps` or non-numbers.

    Example:
        >>> schedule = mk.optimizers.schedules.InverseTimeDecay(0.1, decay_steps=1, decay_rate=1.0)
        >>> [schedule(step) for step in (0, 1, 3)]
        [0.1, 0.05, 0.025]
    """

    def __init__(
        self,
        initial_learning_rate,
        decay_steps,
        decay_rate,
        staircase=False,
        name="InverseTimeDecay",
    ):
        super().__init__(initial_learning_rate, decay_steps, decay_rate, staircase, name)

    def __call__(self, step):
        return self.initial_learning_rate / (1.0 + self.decay_rate * self._progress(step))


class PolynomialDecay(LearningRateSchedule):
    """Goes from `initial_learning_rate` to `end_learning_rate` along a power curve.

        step = min(step, decay_steps)     # without cycle
        decay_steps = decay_steps * ceil(step / decay_steps)   # with cycle (1 at step 0)
        learning_rate = ((initial_learning_rate - end_learning_rate)
                         * (1 - step / decay_steps) ** power) + end_learning_rate

    Args:
        initial_learning_rate: the learning rate at step 0.
        decay_steps: positive number of steps to reach `end_learning_rate`.
        end_learning_rate: the final learning rate.
        power: the power of the polynomial (1.0 is linear).
        cycle: restart the decay (from a lower height) after `decay_steps`.
        name: a name (default: the class name, as Keras's).

    Raises:
        ValueError: for a non-positive `decay_steps` or non-numbers.

    Example:
        >>> schedule = mk.optimizers.schedules.PolynomialDecay(
        ...     1.0, decay_steps=4, end_learning_rate=0.0
        ... )
        >>> [schedule(step) for step in (0, 1, 4, 10)]
        [1.0, 0.75, 0.0, 0.0]
    """

    def __init__(
        self,
        initial_learning_rate,
        decay_steps,
        end_learning_rate=0.0001,
        power=1.0,
        cycle=False,
        name="PolynomialDecay",
    ):
        owner = type(self).__name__
        self.initial_learning_rate = check_number(
            owner, "initial_learning_rate", initial_learning_rate
        )
        self.decay_steps = check_number(owner, "decay_steps", decay_steps, POSITIVE)
        self.end_learning_rate = check_number(owner, "end_learning_rate", end_learning_rate)
        self.power = check_number(owner, "power", power)
        self.cycle = bool(cycle)
        self.name = name or owner

    def __call__(self, step):
        step = float(step)
        decay_steps = self.decay_steps
        if self.cycle:
            decay_steps *= 1.0 if step == 0 else math.ceil(step / decay_steps)
        else:
            step = min(step, decay_steps)
        fraction_left = 1.0 - step / decay_steps
        height = self.initial_learning_rate - self.end_learning_rate
        return height * fraction_left**self.power + self.end_learning_rate

    def get_config(self):
        return {
            "initial_learning_rate": self.initial_learning_rate,
            "decay_steps": self.decay_steps,
            "end_learning_rate": self.end_learning_rate,
            "power": self.power,
            "cycle": self.cycle,
            "name": self.name,
        }


class CosineDecay(LearningRateSchedule):
    """Half a cosine from the start rate down to `alpha` times it, after an optional warmup.

        # warmup (only with a warmup_target), for step < warmup_steps:
        learning_rate = initial_learning_rate
                        + (warmup_target - initial_learning_rate) * step / warmup_steps
        # then, from start = warmup_target (or initial_learning_rate without warmup):
        step = min(step - warmup_steps, decay_steps)
        cosine = 0.5 * (1 + cos(pi * step / decay_steps))
        learning_rate = start * ((1 - alpha) * cosine + alpha)

    Args:
        initial_learning_rate: the learning rate at step 0.
        decay_steps: positive number of steps of the cosine part.
        alpha: the final rate as a fraction of the start rate.
        name: a name (default: the class name, as Keras's).
        warmup_target: the rate reached by linear warmup; None means no warmup.
        warmup_steps: non-negative number of warmup steps.

    Raises:
        ValueError: for a non-positive `decay_steps`, a negative
            `warmup_steps` or non-numbers.

    Example:
        >>> schedule = mk.optimizers.schedules.CosineDecay(
        ...     0.0, decay_steps=2, warmup_target=1.0, warmup_steps=2
        ... )
        >>> [round(schedule(step), 6) for step in range(6)]
        [0.0, 0.5, 1.0, 0.5, 0.0, 0.0]
    """

    def __init__(
        self,
        initial_learning_rate,
        decay_steps,
        alpha=0.0,
        name="CosineDecay",
        warmup_target=None,
        warmup_steps=0,
    ):
        owner = type(self).__name__
        self.initial_learning_rate = check_number(
            owner, "initial_learning_rate", initial_learning_rate
        )
        self.decay_steps = check_number(owner, "decay_steps", decay_steps, POSITIVE)
        self.alpha = check_number(owner, "alpha", alpha)
        self.name = name or owner
        self.warmup_target = (
            None if warmup_target is None else check_number(owner, "warmup_target", warmup_target)
        )
        self.warmup_steps = check_number(owner, "warmup_steps", warmup_steps, NON_NEGATIVE)

    def __call__(self, step):
        step = float(step)
        start = self.initial_learning_rate
        if self.warmup_target is not None:
            if step < self.warmup_steps:
                fraction_done = step / self.warmup_steps
                return start + (self.warmup_target - start) * fraction_done
            start, step = self.warmup_target, step - self.warmup_steps
        step = min(step, self.decay_steps)
        cosine = 0.5 * (1.0 + math.cos(math.pi * step / self.decay_steps))
        return start * ((1.0 - self.alpha) * cosine + self.alpha)

    def get_config(self):
        return {
            "initial_learning_rate": self.initial_learning_rate,
            "decay_steps": self.decay_steps,
            "alpha": self.alpha,
            "name": self.name,
            "warmup_target": self.warmup_target,
            "warmup_steps": self.warmup_steps,
        }
