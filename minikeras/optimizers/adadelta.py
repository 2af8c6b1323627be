"""`Adadelta`: steps scaled by the ratio of running RMS of past steps and gradients.

Written only as `update_step` (no fused fast path).
"""

from minikeras import ops
from minikeras.optimizers._checks import FRACTION, NON_NEGATIVE, check_number
from minikeras.optimizers.base import Optimizer

__all__ = ["Adadelta"]


class Adadelta(Optimizer):
    """Adadelta (Zeiler, 2012): a per-weight step size from running averages.

        accumulated_grad = rho * accumulated_grad + (1 - rho) * g^2
        delta = -sqrt(accumulated_delta + epsilon) * g / sqrt(accumulated_grad + epsilon)
        accumulated_delta = rho * accumulated_delta + (1 - rho) * delta^2
        w = w + learning_rate * delta

    Args:
        learning_rate: a float, a schedule or a callable (see `Optimizer`; Keras's
            default 0.001; the paper's rule is learning_rate=1).
        rho: decay of both running averages, in [0, 1).
        epsilon: a number >= 0, added under both square roots.
        **kwargs: `weight_decay`, `clipnorm`, `clipvalue`, `global_clipnorm`,
            `use_ema`, `ema_momentum`, `ema_overwrite_frequency`, `name`, as
            for `Optimizer`.

    Raises:
        ValueError: for an argument out of range, or as `Optimizer` does.

    Example:
        >>> w = mk.Variable([1.0])
        >>> optimizer = mk.optimizers.Adadelta(learning_rate=1.0, rho=0.75, epsilon=0.01)
        >>> optimizer.apply([np.array([2.0])], [w])
        >>> np.round(w.numpy(), 4)  # 1 - sqrt(0.01) * 2 / sqrt(0.25 * 4 + 0.01)
        array([0.801], dtype=float32)
    """

    def __init__(self, learning_rate=0.001, rho=0.95, epsilon=1e-7, **kwargs):
        super().__init__(learning_rate, **kwargs)
        self.rho = check_number("Adadelta", "rho", rho, FRACTION)
        self.epsilon = check_number("Adadelta", "epsilon", epsilon, NON_NEGATIVE)

    def build(self, variables):
        super().build(variables)
        self._accumulated_grads = self.add_optimizer_variables(variables, "accumulated_grad")
        self._accumulated_delta_vars = self.add_optimizer_variables(
            variables, "accumulated_delta_var"
        )

    def update_step(self, gradient, variable, learning_rate):
        index = self._get_variable_index(variable)
        accumulated_grad = self._accumulated_grads[index]
        accumulated_delta = self._accumulated_delta_vars[index]
        rho, epsilon = self.rho, self.epsilon
        self.assign(accumulated_grad, accumulated_grad * rho + (1.0 - rho) * gradient * gradient)
        delta = (
            -ops.sqrt(accumulated_delta + epsilon) * gradient / ops.sqrt(accumulated_grad + epsilon)
        )
        self.assign(accumulated_delta, accumulated_delta * rho + ops.square(delta) * (1.0 - rho))
        self.assign_add(variable, delta * learning_rate)

    def get_config(self):
        return {**super().get_config(), "rho": self.rho, "epsilon": self.epsilon}
