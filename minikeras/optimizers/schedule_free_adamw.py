"""`ScheduleFreeAdamW`: AdamW without a learning rate schedule, by interpolation and averaging.

Written only as `update_step` (no fused fast path), the way a user writes an
optimizer.
"""

from minikeras import ops
from minikeras.optimizers._checks import FRACTION, NON_NEGATIVE, check_number
from minikeras.optimizers.base import Optimizer

__all__ = ["ScheduleFreeAdamW"]

_OPEN_UNIT = (lambda value: 0.0 < value < 1.0, "a number in (0, 1)")


class ScheduleFreeAdamW(Optimizer):
    """Schedule-Free AdamW (Defazio et al., 2024): no schedule, no stopping time to choose.

    The weights `y` the gradients are taken at are a blend of `z` (the slot
    `momentum`, which starts as a copy of the weights and takes Adam-scaled
    steps) and `x`, the running average of the `z`s, recovered from `y`:

        t = iterations + 1
        lr = learning_rate * min(t / warmup_steps, 1)        # with warmup_steps > 0
        v = v + (g^2 - v) * (1 - beta_2)
        x = (y - (1 - beta_1) * z) / beta_1                  # with the old z
        z = z - lr * g / (sqrt(v / (1 - beta_2^t)) + epsilon)
        x = (1 - 1/t) * x + (1/t) * z
        y = (1 - beta_1) * z + beta_1 * x

    As in Keras, the model keeps the training blend `y` (Keras's optimizer
    does not swap in the average `x` for evaluation either); decoupled
    `weight_decay` (off by default) shrinks `y` before the step.

    Args:
        learning_rate: a float, a schedule, or a callable (of no argument, or of the step).
        beta_1: the blend of `z` and `x`, in (0, 1) (the rule divides by it).
        beta_2: decay of the second-moment estimate, in [0, 1).
        epsilon: a number >= 0 that keeps the division finite.
        warmup_steps: an int >= 0: the learning rate grows linearly over
            this many steps (0: no warmup).
        **kwargs: `weight_decay`, `clipnorm`, `clipvalue`, `global_clipnorm`,
            `use_ema`, `ema_momentum`, `ema_overwrite_frequency`, `name`, as
            for `Optimizer`.

    Raises:
        ValueError: for an argument out of range, or as `Optimizer` does.

    Example:
        >>> w = mk.Variable([1.0, 2.0])
        >>> mk.optimizers.ScheduleFreeAdamW(learning_rate=0.1).apply([np.array([3.0, -0.5])], [w])
        >>> np.round(w.numpy(), 6)  # the first step, as Adam's, is learning_rate * sign(g)
        array([0.9, 2.1], dtype=float32)
    """

    def __init__(
        self, learning_rate=0.0025, beta_1=0.9, beta_2=0.999, epsilon=1e-8, warmup_steps=0, **kwargs
    ):
        super().__init__(learning_rate, **kwargs)
        self.beta_1 = check_number("ScheduleFreeAdamW", "beta_1", beta_1, _OPEN_UNIT)
        self.beta_2 = check_number("ScheduleFreeAdamW", "beta_2", beta_2, FRACTION)
        self.epsilon = check_number("ScheduleFreeAdamW", "epsilon", epsilon, NON_NEGATIVE)
        if isinstance(warmup_steps, bool) or not isinstance(warmup_steps, int) or warmup_steps < 0:
            raise ValueError(
                f"ScheduleFreeAdamW: `warmup_steps` must be an int >= 0, got {warmup_steps!r}"
            )
        self.warmup_steps = warmup_steps

    def build(self, variables):
        super().build(variables)
        self._momentums = self.add_optimizer_variables(variables, "momentum")
        self._velocities = self.add_optimizer_variables(variables, "velocity")
        for momentum, variable in zip(self._momentums, variables):
            momentum.assign(variable.numpy())  # z starts at the weights

    def update_step(self, gradient, variable, learning_rate):
        index = self._get_variable_index(variable)
        z, v = self._momentums[index], self._velocities[index]
        t = int(self.iterations.numpy()) + 1
        if self.warmup_steps > 0:
            learning_rate = learning_rate * min(t / self.warmup_steps, 1.0)
        self.assign_add(v, (gradient * gradient - v) * (1.0 - self.beta_2))
        x = (variable - z * (1.0 - self.beta_1)) / self.beta_1
        denominator = ops.sqrt(v / (1.0 - self.beta_2**t)) + self.epsilon
        self.assign_sub(z, gradient * learning_rate / denominator)
        x = x * (1.0 - 1.0 / t) + z * (1.0 / t)
        self.assign(variable, z * (1.0 - self.beta_1) + x * self.beta_1)

    def get_config(self):
        return {
            **super().get_config(),
            "beta_1": self.beta_1,
            "beta_2": self.beta_2,
            "epsilon": self.epsilon,
            "warmup_steps": self.warmup_steps,
        }
