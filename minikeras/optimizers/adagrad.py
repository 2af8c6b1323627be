"""`Adagrad`: steps divided by the root of the sum of all past squared gradients."""

import numpy as np

from minikeras import initializers, ops
from minikeras.optimizers._checks import NON_NEGATIVE, check_number
from minikeras.optimizers.base import Optimizer

__all__ = ["Adagrad"]


class Adagrad(Optimizer):
    """Adagrad: steps divided by the root of the sum of all past squared gradients.

        accumulator = accumulator + g^2           # starts at initial_accumulator_value
        w = w - learning_rate * g / sqrt(accumulator + epsilon)

    Args:
        learning_rate: a float, a schedule, or a callable (of no argument, or of the step).
        initial_accumulator_value: a number >= 0, the accumulators' start.
        epsilon: a number >= 0, added under the square root.
        **kwargs: `weight_decay`, `clipnorm`, `clipvalue`, `global_clipnorm`,
            `use_ema`, `ema_momentum`, `ema_overwrite_frequency`, `name`, as
            for `Optimizer`.

    Raises:
        ValueError: for an argument out of range, or as `Optimizer` does.

    Example:
        >>> w = mk.Variable([1.0])
        >>> optimizer = mk.optimizers.Adagrad(learning_rate=0.1, initial_accumulator_value=0.0)
        >>> optimizer.apply([np.array([3.0])], [w])
        >>> w.numpy()  # 1 - 0.1 * 3 / sqrt(9)
        array([0.9], dtype=float32)
    """

    def __init__(self, learning_rate=0.001, initial_accumulator_value=0.1, epsilon=1e-7, **kwargs):
        super().__init__(learning_rate, **kwargs)
        self.initial_accumulator_value = check_number(
            "Adagrad", "initial_accumulator_value", initial_accumulator_value, NON_NEGATIVE
        )
        self.epsilon = check_number("Adagrad", "epsilon", epsilon, NON_NEGATIVE)

    def build(self, variables):
        super().build(variables)
        initializer = initializers.Constant(self.initial_accumulator_value)
        self._accumulators = self.add_optimizer_variables(variables, "accumulator", initializer)

    def update_step(self, gradient, variable, learning_rate):
        accumulator = self._accumulators[self._get_variable_index(variable)]
        self.assign_add(accumulator, gradient * gradient)
        self.assign_sub(variable, gradient / ops.sqrt(accumulator + self.epsilon) * learning_rate)

    def _fused_step(self, gradient, value, out, slots, scratch, constants):
        (learning_rate,) = constants
        (accumulator,), scratch = slots, scratch[0]
        np.square(gradient, out=scratch)
        accumulator += scratch
        np.add(accumulator, self.epsilon, out=scratch)
        np.sqrt(scratch, out=scratch)
        # g / sqrt(accumulator + epsilon) * learning_rate, in the one buffer (see Adam).
        np.divide(gradient, scratch, out=scratch)
        scratch *= learning_rate
        np.subtract(value, scratch, out=out)

    def get_config(self):
        return {
            **super().get_config(),
            "initial_accumulator_value": self.initial_accumulator_value,
            "epsilon": self.epsilon,
        }
