"""`SGD`: stochastic gradient descent, with optional (Nesterov) momentum."""

import numpy as np

from minikeras.optimizers._blas import add_scaled, scale_and_add
from minikeras.optimizers._checks import UNIT_INTERVAL, check_number
from minikeras.optimizers.base import Optimizer

__all__ = ["SGD"]


class SGD(Optimizer):
    """Stochastic gradient descent, with optional (Nesterov) momentum.

        w = w - learning_rate * g                             # momentum 0

        velocity = momentum * velocity - learning_rate * g    # momentum > 0
        w = w + velocity

        velocity = momentum * velocity - learning_rate * g    # nesterov=True
        w = w + momentum * velocity - learning_rate * g

    Args:
        learning_rate: a float, a schedule, or a callable (of no argument, or of the step).
        momentum: a number in [0, 1]; 0 keeps no velocity.
        nesterov: use Nesterov momentum.
        **kwargs: `weight_decay`, `clipnorm`, `clipvalue`, `global_clipnorm`,
            `use_ema`, `ema_momentum`, `ema_overwrite_frequency`, `name`, as
            for `Optimizer`.

    Raises:
        ValueError: for `momentum` outside [0, 1], or as `Optimizer` does.

    Example:
        >>> w = mk.Variable([1.0])
        >>> optimizer = mk.optimizers.SGD(learning_rate=0.1, momentum=0.5)
        >>> for _ in range(2):
        ...     optimizer.apply([np.array([1.0])], [w])
        >>> w.numpy()  # 1 - 0.1, then - (0.5 * 0.1 + 0.1)
        array([0.75], dtype=float32)
    """

    def __init__(self, learning_rate=0.01, momentum=0.0, nesterov=False, **kwargs):
        super().__init__(learning_rate, **kwargs)
        self.momentum = check_number("SGD", "momentum", momentum, UNIT_INTERVAL)
        self.nesterov = bool(nesterov)

    def build(self, variables):
        super().build(variables)
        self.momentums = []
        if self.momentum != 0:
            self.momentums = self.add_optimizer_variables(variables, "momentum")

    def update_step(self, gradient, variable, learning_rate):
        if not self.momentums:
            self.assign_sub(variable, learning_rate * gradient)
            return
        velocity = self.momentums[self._get_variable_index(variable)]
        self.assign(velocity, velocity * self.momentum - learning_rate * gradient)
        if self.nesterov:
            self.assign_add(variable, velocity * self.momentum - learning_rate * gradient)
        else:
            self.assign_add(variable, velocity)

    @property
    def _descent_lane(self):
        # (`OptimizerState._descent_lane`: without momentum, and without velocities, which
        # the rule still updates when `momentum` is set to 0 after they were made)
        return not self.momentum and not getattr(self, "momentums", None)

    def _fused_step(self, gradient, value, out, slots, scratch, constants):
        # (`_blas`: a big array's `y += a * x` in one pass, where numpy takes two)
        (learning_rate,) = constants
        scaled_gradient, step = scratch
        if not slots:
            if out is not value:
                np.copyto(out, value)
            add_scaled(out, -learning_rate, gradient, scaled_gradient)
            return
        (velocity,) = slots
        if self.nesterov:
            np.multiply(gradient, learning_rate, out=scaled_gradient)
            np.multiply(velocity, self.momentum, out=velocity)
            np.subtract(velocity, scaled_gradient, out=velocity)
            np.multiply(velocity, self.momentum, out=step)
            np.subtract(step, scaled_gradient, out=step)
            np.add(value, step, out=out)
            return
        scale_and_add(velocity, self.momentum, -learning_rate, gradient, scaled_gradient)
        if out is not value:
            np.copyto(out, value)
        add_scaled(out, 1.0, velocity, step)

    def get_config(self):
        return {**super().get_config(), "momentum": self.momentum, "nesterov": self.nesterov}
