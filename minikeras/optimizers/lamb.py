"""`Lamb`: Adam's step rescaled per variable by the ratio of weight norm to step norm.

Written only as `update_step` (no fused fast path).
"""

import math

from minikeras import ops
from minikeras.optimizers._rules import _MomentEstimator

__all__ = ["Lamb"]


class Lamb(_MomentEstimator):
    """LAMB (You et al., 2019): layer-wise adaptive moments, for large batches.

        t = iterations + 1
        m = m + (g - m) * (1 - beta_1)
        v = v + (g^2 - v) * (1 - beta_2)
        update = (m / (1 - beta_1^t)) / (sqrt(v / (1 - beta_2^t)) + epsilon)
        ratio = ||w|| / ||update|| if both norms are > 0, else 1
        w = w - learning_rate * ratio * update

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
        >>> w = mk.Variable([3.0, 4.0])
        >>> mk.optimizers.Lamb(learning_rate=0.1).apply([np.array([1.0, -1.0])], [w])
        >>> w.numpy()  # the update is about sign(g), of norm sqrt(2); ||w|| = 5
        array([2.6464467, 4.3535533], dtype=float32)
    """

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7, **kwargs):
        super().__init__(learning_rate, beta_1, beta_2, epsilon, **kwargs)

    def build(self, variables):
        super().build(variables)
        self._momentums = self.add_optimizer_variables(variables, "momentum")
        self._velocities = self.add_optimizer_variables(variables, "velocity")

    def update_step(self, gradient, variable, learning_rate):
        index = self._get_variable_index(variable)
        m, v = self._momentums[index], self._velocities[index]
        t = int(self.iterations.numpy()) + 1
        self.assign_add(m, (gradient - m) * (1.0 - self.beta_1))
        self.assign_add(v, (gradient * gradient - v) * (1.0 - self.beta_2))
        m_hat = m / (1.0 - self.beta_1**t)
        update = m_hat / (ops.sqrt(v / (1.0 - self.beta_2**t)) + self.epsilon)
        weight_norm = math.sqrt(float(ops.sum(ops.square(variable))))
        update_norm = math.sqrt(float(ops.sum(ops.square(update))))
        ratio = weight_norm / update_norm if weight_norm > 0 and update_norm > 0 else 1.0
        self.assign_sub(variable, update * (learning_rate * ratio))
