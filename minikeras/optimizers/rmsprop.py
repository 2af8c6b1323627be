"""`RMSprop`: steps divided by a running root mean square of the gradient."""

import numpy as np

from minikeras import ops
from minikeras.optimizers._checks import FRACTION, NON_NEGATIVE, UNIT_INTERVAL, check_number
from minikeras.optimizers.base import Optimizer

__all__ = ["RMSprop"]


class RMSprop(Optimizer):
    """RMSprop: steps divided by a running root mean square of the gradient.

        velocity = rho * velocity + (1 - rho) * g^2
        average = rho * average + (1 - rho) * g               # centered only
        denominator = velocity - average^2 + epsilon          # centered
        denominator = velocity + epsilon                      # otherwise
        increment = learning_rate * g / sqrt(denominator)
        moment = momentum * moment + increment                # momentum > 0
        w = w - moment                                        # momentum > 0
        w = w - increment                                     # otherwise

    Args:
        learning_rate: a float, a schedule, or a callable (of no argument, or of the step).
        rho: decay of the running mean square, in [0, 1).
        momentum: a number in [0, 1]; 0 keeps no moment.
        epsilon: a number >= 0, added under the square root.
        centered: divide by the variance estimate (mean square minus the
            square of the mean) instead of the mean square.
        **kwargs: `weight_decay`, `clipnorm`, `clipvalue`, `global_clipnorm`,
            `use_ema`, `ema_momentum`, `ema_overwrite_frequency`, `name`, as
            for `Optimizer`.

    Raises:
        ValueError: for an argument out of range, or as `Optimizer` does.

    Example:
        >>> w = mk.Variable([1.0])
        >>> mk.optimizers.RMSprop(learning_rate=0.01, rho=0.75).apply([np.array([2.0])], [w])
        >>> w.numpy()  # 1 - 0.01 * 2 / sqrt(0.25 * 4)
        array([0.98], dtype=float32)
    """

    def __init__(
        self, learning_rate=0.001, rho=0.9, momentum=0.0, epsilon=1e-7, centered=False, **kwargs
    ):
        super().__init__(learning_rate, **kwargs)
        self.rho = check_number("RMSprop", "rho", rho, FRACTION)
        self.momentum = check_number("RMSprop", "momentum", momentum, UNIT_INTERVAL)
        self.epsilon = check_number("RMSprop", "epsilon", epsilon, NON_NEGATIVE)
        self.centered = bool(centered)

    def build(self, variables):
        super().build(variables)
        self._velocities = self.add_optimizer_variables(variables, "velocity")
        self._momentums = []
        if self.momentum > 0:
            self._momentums = self.add_optimizer_variables(variables, "momentum")
        self._average_gradients = []
        if self.centered:
            self._average_gradients = self.add_optimizer_variables(variables, "average_gradient")

    def update_step(self, gradient, variable, learning_rate):
        index = self._get_variable_index(variable)
        velocity, rho = self._velocities[index], self.rho
        self.assign(velocity, velocity * rho + (1.0 - rho) * gradient * gradient)
        denominator = velocity + self.epsilon
        if self.centered:
            average = self._average_gradients[index]
            self.assign(average, average * rho + (1.0 - rho) * gradient)
            denominator = denominator - ops.square(average)
        increment = gradient / ops.sqrt(denominator) * learning_rate
        if self._momentums:
            moment = self._momentums[index]
            self.assign(moment, moment * self.momentum + increment)
            increment = moment
        self.assign_sub(variable, increment)

    def _fused_step(self, gradient, value, out, slots, scratch, constants):
        (learning_rate,) = constants
        velocity = slots[0]
        denominator = scratch[0]
        np.multiply(velocity, self.rho, out=velocity)
        np.square(gradient, out=denominator)
        denominator *= 1.0 - self.rho
        velocity += denominator
        if self.centered:
            average = slots[-1]
            np.multiply(average, self.rho, out=average)
            np.multiply(gradient, 1.0 - self.rho, out=denominator)
            average += denominator
            np.square(average, out=denominator)
            np.subtract(velocity, denominator, out=denominator)
            denominator += self.epsilon
        else:
            np.add(velocity, self.epsilon, out=denominator)
        np.sqrt(denominator, out=denominator)
        # g / denominator * learning_rate, in the one buffer (see Adam).
        increment = np.divide(gradient, denominator, out=denominator)
        increment *= learning_rate
        if self._momentums:
            moment = slots[1]
            np.multiply(moment, self.momentum, out=moment)
            moment += increment
            increment = moment
        np.subtract(value, increment, out=out)

    def get_config(self):
        return {
            **super().get_config(),
            "rho": self.rho,
            "momentum": self.momentum,
            "epsilon": self.epsilon,
            "centered": self.centered,
        }
