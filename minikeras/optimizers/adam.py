"""`Adam`: steps scaled by running estimates of the gradient's first two moments."""

import math

import numpy as np

from minikeras import ops
from minikeras.optimizers._rules import _MomentEstimator, update_moment

__all__ = ["Adam"]


class Adam(_MomentEstimator):
    """Adam: steps scaled by running estimates of the gradient's first two moments.

        t = iterations + 1
        m = m + (g - m) * (1 - beta_1)
        v = v + (g^2 - v) * (1 - beta_2)
        v_hat = max(v_hat, v); v = v_hat                      # amsgrad only
        alpha = learning_rate * sqrt(1 - beta_2^t) / (1 - beta_1^t)
        w = w - alpha * m / (sqrt(v) + epsilon)

    Args:
        learning_rate: a float, a schedule, or a callable (of no argument, or of the step).
        beta_1: decay of the first-moment estimate, in [0, 1).
        beta_2: decay of the second-moment estimate, in [0, 1).
        epsilon: a number >= 0 that keeps the division finite.
        amsgrad: use the maximum of past second moments (AMSGrad).
        **kwargs: `weight_decay`, `clipnorm`, `clipvalue`, `global_clipnorm`,
            `use_ema`, `ema_momentum`, `ema_overwrite_frequency`, `name`, as
            for `Optimizer`.

    Raises:
        ValueError: for an argument out of range, or as `Optimizer` does.

    Example:
        >>> w = mk.Variable([1.0, 2.0])
        >>> mk.optimizers.Adam(learning_rate=0.1).apply([np.array([3.0, -0.5])], [w])
        >>> w.numpy()  # the first step is learning_rate * sign(g)
        array([0.9, 2.1], dtype=float32)
    """

    def __init__(
        self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7, amsgrad=False, **kwargs
    ):
        super().__init__(learning_rate, beta_1, beta_2, epsilon, **kwargs)
        self.amsgrad = bool(amsgrad)

    def build(self, variables):
        super().build(variables)
        self._momentums = self.add_optimizer_variables(variables, "momentum")
        self._velocities = self.add_optimizer_variables(variables, "velocity")
        self._velocity_hats = []
        if self.amsgrad:
            self._velocity_hats = self.add_optimizer_variables(variables, "velocity_hat")

    def update_step(self, gradient, variable, learning_rate):
        index = self._get_variable_index(variable)
        m, v = self._momentums[index], self._velocities[index]
        (alpha,) = self._step_constants(learning_rate, int(self.iterations.numpy()) + 1)
        self.assign_add(m, (gradient - m) * (1.0 - self.beta_1))
        self.assign_add(v, (gradient * gradient - v) * (1.0 - self.beta_2))
        if self.amsgrad:
            v_hat = self._velocity_hats[index]
            self.assign(v_hat, ops.maximum(v_hat, v))
            v = v_hat
        self.assign_sub(variable, m / (ops.sqrt(v) + self.epsilon) * alpha)

    def _step_constants(self, learning_rate, step):
        return (learning_rate * math.sqrt(1.0 - self.beta_2**step) / (1.0 - self.beta_1**step),)

    def _fused_step(self, gradient, value, out, slots, scratch, constants):
        (alpha,) = constants
        momentum, velocity = slots[0], slots[1]
        scratch = scratch[0]
        update_moment(momentum, gradient, self.beta_1, scratch)
        np.square(gradient, out=scratch)
        update_moment(velocity, scratch, self.beta_2, scratch)
        if self.amsgrad:
            velocity_hat = slots[2]
            np.maximum(velocity_hat, velocity, out=velocity_hat)
            velocity = velocity_hat
        # The step m / (sqrt(v) + epsilon) * alpha, built in the one scratch buffer,
        # which stays in cache (a second buffer for alpha * m costs ~13% of Adam).
        np.sqrt(velocity, out=scratch)
        scratch += self.epsilon
        np.divide(momentum, scratch, out=scratch)
        scratch *= alpha
        np.subtract(value, scratch, out=out)

    def get_config(self):
        return {**super().get_config(), "amsgrad": self.amsgrad}
