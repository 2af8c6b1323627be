"""`Lion`: steps of the same size for every weight, in the sign of a momentum blend.

Written only as `update_step` (no fused fast path), the way a user writes an
optimizer.
"""

from minikeras import ops
from minikeras.optimizers._checks import FRACTION, check_number
from minikeras.optimizers.base import Optimizer

__all__ = ["Lion"]

_OPEN_UNIT = (lambda value: 0.0 < value <= 1.0, "a number in (0, 1]")


class Lion(Optimizer):
    """Lion (Chen et al., 2023): the sign of a blend of momentum and gradient.

        w = w - learning_rate * sign(beta_1 * m + (1 - beta_1) * g)
        m = beta_2 * m + (1 - beta_2) * g

    Its steps are larger than Adam's: Keras suggests a learning rate 3-10x
    smaller than AdamW's, and a weight decay 3-10x larger.

    Args:
        learning_rate: a float, a schedule, or a callable (of no argument, or of the step).
        beta_1: the blend of momentum and gradient in the step, in (0, 1]
            (0 would make it SignSGD).
        beta_2: decay of the momentum, in [0, 1).
        **kwargs: `weight_decay`, `clipnorm`, `clipvalue`, `global_clipnorm`,
            `use_ema`, `ema_momentum`, `ema_overwrite_frequency`, `name`, as
            for `Optimizer`.

    Raises:
        ValueError: for an argument out of range, or as `Optimizer` does.

    Example:
        >>> w = mk.Variable([1.0, 2.0])
        >>> mk.optimizers.Lion(learning_rate=0.1).apply([np.array([3.0, -0.5])], [w])
        >>> w.numpy()  # learning_rate * sign(g) on the first step
        array([0.9, 2.1], dtype=float32)
    """

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.99, **kwargs):
        super().__init__(learning_rate, **kwargs)
        self.beta_1 = check_number("Lion", "beta_1", beta_1, _OPEN_UNIT)
        self.beta_2 = check_number("Lion", "beta_2", beta_2, FRACTION)

    def build(self, variables):
        super().build(variables)
        self._momentums = self.add_optimizer_variables(variables, "momentum")

    def update_step(self, gradient, variable, learning_rate):
        m = self._momentums[self._get_variable_index(variable)]
        blend = m * self.beta_1 + gradient * (1.0 - self.beta_1)
        self.assign_sub(variable, ops.sign(blend) * learning_rate)
        self.assign(m, m * self.beta_2 + gradient * (1.0 - self.beta_2))

    def get_config(self):
        return {**super().get_config(), "beta_1": self.beta_1, "beta_2": self.beta_2}
