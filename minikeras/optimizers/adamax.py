"""`Adamax`: Adam with the infinity norm in place of the second moment."""

import numpy as np

from minikeras import ops
from minikeras.optimizers._rules import _MomentEstimator, update_moment

__all__ = ["Adamax"]


class Adamax(_MomentEstimator):
    """Adamax: Adam with the infinity norm in place of the second moment.

        t = iterations + 1
        m = m + (g - m) * (1 - beta_1)
        u = max(beta_2 * u, |g|)
        w = w - learning_rate * m / ((1 - beta_1^t) * (u + epsilon))

    Args:
        learning_rate: a float, a schedule, or a callable (of no argument, or of the step).
        beta_1: decay of the first-moment estimate, in [0, 1).
        beta_2: decay of the infinity norm, in [0, 1).
        epsilon: a number >= 0 that keeps the division finite.
        **kwargs: `weight_decay`, `clipnorm`, `clipvalue`, `global_clipnorm`,
            `use_ema`, `ema_momentum`, `ema_overwrite_frequency`, `name`, as
            for `Optimizer`.

    Raises:
        ValueError: for an argument out of range, or as `Optimizer` does.

    Example:
        >>> w = mk.Variable([1.0, 2.0])
        >>> mk.optimizers.Adamax(learning_rate=0.1).apply([np.array([3.0, -0.5])], [w])
        >>> w.numpy()  # the first step is learning_rate * sign(g)
        array([0.9, 2.1], dtype=float32)
    """

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7, **kwargs):
        super().__init__(learning_rate, beta_1, beta_2, epsilon, **kwargs)

    def build(self, variables):
        super().build(variables)
        self._momentums = self.add_optimizer_variables(variables, "momentum")
        self._norms = self.add_optimizer_variables(variables, "norm")

    def update_step(self, gradient, variable, learning_rate):
        index = self._get_variable_index(variable)
        m, u = self._momentums[index], self._norms[index]
        _, bias_correction = self._step_constants(learning_rate, int(self.iterations.numpy()) + 1)
        self.assign_add(m, (gradient - m) * (1.0 - self.beta_1))
        self.assign(u, ops.maximum(u * self.beta_2, ops.abs(gradient)))
        self.assign_sub(variable, m / ((u + self.epsilon) * bias_correction) * learning_rate)

    def _step_constants(self, learning_rate, step):
        return learning_rate, 1.0 - self.beta_1**step

    def _fused_step(self, gradient, value, out, slots, scratch, constants):
        learning_rate, bias_correction = constants
        (momentum, norm), scratch = slots, scratch[0]
        update_moment(momentum, gradient, self.beta_1, scratch)
        np.multiply(norm, self.beta_2, out=norm)
        np.abs(gradient, out=scratch)
        np.maximum(norm, scratch, out=norm)
        np.add(norm, self.epsilon, out=scratch)
        scratch *= bias_correction
        # m / denominator * learning_rate, in the one buffer (see Adam).
        np.divide(momentum, scratch, out=scratch)
        scratch *= learning_rate
        np.subtract(value, scratch, out=out)
