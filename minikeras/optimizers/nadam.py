"""`Nadam`: Adam with Nesterov momentum (Dozat's momentum schedule)."""

import numpy as np

from minikeras import ops
from minikeras.optimizers._rules import _MomentEstimator, update_moment

__all__ = ["Nadam"]


class Nadam(_MomentEstimator):
    """Nadam: Adam with Nesterov momentum (Dozat's momentum schedule).

        t = iterations + 1
        u_t = beta_1 * (1 - 0.5 * 0.96^t)
        u_next = beta_1 * (1 - 0.5 * 0.96^(t + 1))
        u_product = u_product * u_t                   # state: the product of all u_t
        m = m + (g - m) * (1 - beta_1)
        v = v + (g^2 - v) * (1 - beta_2)
        m_hat = u_next * m / (1 - u_product * u_next) + (1 - u_t) * g / (1 - u_product)
        v_hat = v / (1 - beta_2^t)
        w = w - learning_rate * m_hat / (sqrt(v_hat) + epsilon)

    `u_product` moves once per step, before any variable's update, as in Keras.

    Args:
        learning_rate: a float, a schedule, or a callable (of no argument, or of the step).
        beta_1: decay of the first-moment estimate, in [0, 1).
        beta_2: decay of the second-moment estimate, in [0, 1).
        epsilon: a number >= 0 that keeps the division finite.
        **kwargs: `weight_decay`, `clipnorm`, `clipvalue`, `global_clipnorm`,
            `use_ema`, `ema_momentum`, `ema_overwrite_frequency`, `name`, as
            for `Optimizer`.

    Raises:
        ValueError: for an argument out of range, or as `Optimizer` does.

    Example:
        >>> w = mk.Variable([1.0, 2.0])
        >>> mk.optimizers.Nadam(learning_rate=0.1).apply([np.array([3.0, -0.5])], [w])
        >>> w.numpy()  # the first step is about learning_rate * sign(g)
        array([0.9, 2.1], dtype=float32)
    """

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7, **kwargs):
        super().__init__(learning_rate, beta_1, beta_2, epsilon, **kwargs)

    def build(self, variables):
        super().build(variables)
        self._momentums = self.add_optimizer_variables(variables, "momentum")
        self._velocities = self.add_optimizer_variables(variables, "velocity")
        dtype = variables[0].dtype if variables else None
        self._u_product = self.add_variable((), "ones", dtype, "u_product")
        self._constants_at = None  # (step, constants): u_product moves once per step

    def update_step(self, gradient, variable, learning_rate):
        index = self._get_variable_index(variable)
        m, v = self._momentums[index], self._velocities[index]
        step = int(self.iterations.numpy()) + 1
        if self._constants_at is None or self._constants_at[0] != step:
            self._constants_at = (step, self._step_constants(learning_rate, step))
        _, momentum_factor, gradient_factor, velocity_correction = self._constants_at[1]
        self.assign_add(m, (gradient - m) * (1.0 - self.beta_1))
        self.assign_add(v, (gradient * gradient - v) * (1.0 - self.beta_2))
        m_hat = m * momentum_factor + gradient * gradient_factor
        denominator = ops.sqrt(v / velocity_correction) + self.epsilon
        self.assign_sub(variable, m_hat * learning_rate / denominator)

    def _step_constants(self, learning_rate, step):
        u_t = self.beta_1 * (1.0 - 0.5 * 0.96**step)
        u_next = self.beta_1 * (1.0 - 0.5 * 0.96 ** (step + 1))
        self._u_product.assign(float(self._u_product._value) * u_t)
        u_product = float(self._u_product._value)
        momentum_factor = u_next / (1.0 - u_product * u_next)
        gradient_factor = (1.0 - u_t) / (1.0 - u_product)
        return learning_rate, momentum_factor, gradient_factor, 1.0 - self.beta_2**step

    def _fused_step(self, gradient, value, out, slots, scratch, constants):
        learning_rate, momentum_factor, gradient_factor, velocity_correction = constants
        (momentum, velocity), (scratch, step) = slots, scratch
        update_moment(momentum, gradient, self.beta_1, scratch)
        np.square(gradient, out=scratch)
        update_moment(velocity, scratch, self.beta_2, scratch)
        np.multiply(momentum, momentum_factor, out=step)  # m_hat
        np.multiply(gradient, gradient_factor, out=scratch)
        step += scratch
        np.divide(velocity, velocity_correction, out=scratch)  # sqrt(v_hat) + epsilon
        np.sqrt(scratch, out=scratch)
        scratch += self.epsilon
        step *= learning_rate
        step /= scratch
        np.subtract(value, step, out=out)
