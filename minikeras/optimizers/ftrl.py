"""`Ftrl`: Follow The Regularized Leader, for wide sparse linear models.

Written only as `update_step` (no fused fast path).
"""

from minikeras import initializers, ops
from minikeras.optimizers._checks import NON_NEGATIVE, check_number
from minikeras.optimizers.base import Optimizer

__all__ = ["Ftrl"]

_NON_POSITIVE = (lambda value: value <= 0.0, "a number <= 0")


class Ftrl(Optimizer):
    """FTRL-Proximal (McMahan et al., 2013), with Keras 3's arguments.

        p = learning_rate_power; l2 = l2_regularization_strength + beta / (2 * learning_rate)
        g_shrunk = g + 2 * l2_shrinkage_regularization_strength * w
        new_accumulator = accumulator + g^2
        sigma = (new_accumulator^(-p) - accumulator^(-p)) / learning_rate
        linear = linear + g_shrunk - sigma * w
        quadratic = new_accumulator^(-p) / learning_rate + 2 * l2
        w = (clip(linear, -l1, l1) - linear) / quadratic      # l1 = l1_regularization_strength
        accumulator = new_accumulator

    Args:
        learning_rate: a float, a schedule, or a callable (of no argument, or of the step).
        learning_rate_power: a number <= 0; -0.5 is Adagrad-like decay.
        initial_accumulator_value: a number >= 0, the accumulators' start.
        l1_regularization_strength: a number >= 0.
        l2_regularization_strength: a number >= 0.
        l2_shrinkage_regularization_strength: a number >= 0, an L2 penalty
            on the weights added to the gradient.
        beta: a number, added to the L2 strength as `beta / (2 * learning_rate)`.
        **kwargs: `weight_decay`, `clipnorm`, `clipvalue`, `global_clipnorm`,
            `use_ema`, `ema_momentum`, `ema_overwrite_frequency`, `name`, as
            for `Optimizer`.

    Raises:
        ValueError: for an argument out of range, or as `Optimizer` does.

    Example:
        >>> w = mk.Variable([0.0])
        >>> optimizer = mk.optimizers.Ftrl(learning_rate=0.5, initial_accumulator_value=0.0)
        >>> optimizer.apply([np.array([4.0])], [w])
        >>> w.numpy()  # linear = 4, quadratic = sqrt(16) / 0.5: w = -4 / 8
        array([-0.5], dtype=float32)
    """

    def __init__(
        self,
        learning_rate=0.001,
        learning_rate_power=-0.5,
        initial_accumulator_value=0.1,
        l1_regularization_strength=0.0,
        l2_regularization_strength=0.0,
        l2_shrinkage_regularization_strength=0.0,
        beta=0.0,
        **kwargs,
    ):
        super().__init__(learning_rate, **kwargs)
        self.learning_rate_power = check_number(
            "Ftrl", "learning_rate_power", learning_rate_power, _NON_POSITIVE
        )
        for key, value in (
            ("initial_accumulator_value", initial_accumulator_value),
            ("l1_regularization_strength", l1_regularization_strength),
            ("l2_regularization_strength", l2_regularization_strength),
            ("l2_shrinkage_regularization_strength", l2_shrinkage_regularization_strength),
        ):
            setattr(self, key, check_number("Ftrl", key, value, NON_NEGATIVE))
        self.beta = check_number("Ftrl", "beta", beta)

    def build(self, variables):
        super().build(variables)
        initializer = initializers.Constant(self.initial_accumulator_value)
        self._accumulators = self.add_optimizer_variables(variables, "accumulator", initializer)
        self._linears = self.add_optimizer_variables(variables, "linear")

    def update_step(self, gradient, variable, learning_rate):
        index = self._get_variable_index(variable)
        accumulator, linear = self._accumulators[index], self._linears[index]
        power = -self.learning_rate_power
        l1 = self.l1_regularization_strength
        l2 = self.l2_regularization_strength + self.beta / (2.0 * learning_rate)
        shrunk = gradient + variable * (2.0 * self.l2_shrinkage_regularization_strength)
        new_accumulator = accumulator + gradient * gradient
        sigma = (ops.power(new_accumulator, power) - ops.power(accumulator, power)) / learning_rate
        self.assign_add(linear, shrunk - sigma * variable)
        quadratic = ops.power(new_accumulator, power) / learning_rate + 2.0 * l2
        self.assign(variable, (ops.clip(linear, -l1, l1) - linear) / quadratic)
        self.assign(accumulator, new_accumulator)

    def get_config(self):
        return {
            **super().get_config(),
            "learning_rate_power": self.learning_rate_power,
            "initial_accumulator_value": self.initial_accumulator_value,
            "l1_regularization_strength": self.l1_regularization_strength,
            "l2_regularization_strength": self.l2_regularization_strength,
            "l2_shrinkage_regularization_strength": self.l2_shrinkage_regularization_strength,
            "beta": self.beta,
        }
