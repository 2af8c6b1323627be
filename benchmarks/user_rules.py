"""Update rules as Keras 3 users write them, for the benchmarks and the traced-rule tests.

Seven well-known rules as `build` + `update_step` in `mk.ops`: `ops` calls,
Tensor operators on Variables, a helper function inside the rule, the
variable read inside an op, a norm of the whole variable. The tests check
that each is traced and replayed bit for bit (`tests/test_traced_rule_zoo.py`);
`bench_user_optimizer.py` times those with a built-in counterpart against
it. Importing this module pins no threads.
"""

from minikeras import initializers, ops, optimizers

__all__ = [
    "Adadelta",
    "Adamax",
    "CenteredRMSprop",
    "Ftrl",
    "Lamb",
    "NesterovSGD",
    "Signum",
    "Slots",
]


class Slots(optimizers.Optimizer):
    """A rule with one zero-initialised slot per variable for each name in `SLOTS`."""

    SLOTS = ()

    def build(self, variables):
        super().build(variables)
        for name in self.SLOTS:
            setattr(self, name, self.add_optimizer_variables(variables, name))

    def slots_of(self, variable):
        index = self._get_variable_index(variable)
        return [getattr(self, name)[index] for name in self.SLOTS]


class Adadelta(Slots):
    """Zeiler's Adadelta: running averages of squared gradients and of squared steps."""

    SLOTS = ("grad_average", "step_average")

    def __init__(self, learning_rate=1.0, rho=0.95, epsilon=1e-6, **kwargs):
        super().__init__(learning_rate, **kwargs)
        self.rho, self.epsilon = rho, epsilon

    def update_step(self, gradient, variable, learning_rate):
        grad_average, step_average = self.slots_of(variable)

        def root_mean(square):
            return ops.sqrt(ops.add(square, self.epsilon))

        self.assign(grad_average, self.rho * grad_average + (1 - self.rho) * ops.square(gradient))
        step = ops.negative(root_mean(step_average) * gradient / root_mean(grad_average))
        self.assign(step_average, self.rho * step_average + (1 - self.rho) * ops.square(step))
        self.assign_add(variable, ops.multiply(learning_rate, step))


class Adamax(Slots):
    """Adam's infinity-norm variant: the second moment is a decaying maximum."""

    SLOTS = ("momentum", "norm")

    def __init__(self, learning_rate=0.01, beta_1=0.9, beta_2=0.999, epsilon=1e-7, **kwargs):
        super().__init__(learning_rate, **kwargs)
        self.beta_1, self.beta_2, self.epsilon = beta_1, beta_2, epsilon

    def update_step(self, gradient, variable, learning_rate):
        momentum, norm = self.slots_of(variable)
        step = ops.cast(self.iterations + 1, variable.dtype)
        correction = 1 - ops.power(ops.cast(self.beta_1, variable.dtype), step)
        self.assign_add(momentum, (gradient - momentum) * (1 - self.beta_1))
        self.assign(norm, ops.maximum(self.beta_2 * norm, ops.abs(gradient)))
        self.assign_sub(variable, learning_rate * momentum / (correction * (norm + self.epsilon)))


class Ftrl(Slots):
    """Follow-the-regularised-leader, with l1, l2 and l2-shrinkage terms."""

    SLOTS = ("linear",)

    def __init__(self, learning_rate=0.05, power=-0.5, l1=0.01, l2=0.01, shrinkage=0.01, **kwargs):
        super().__init__(learning_rate, **kwargs)
        self.power, self.l1, self.l2, self.shrinkage = power, l1, l2, shrinkage

    def build(self, variables):
        super().build(variables)
        self.accumulators = [
            self.add_variable_from_reference(v, "accumulator", initializers.Constant(0.1))
            for v in variables
        ]

    def update_step(self, gradient, variable, learning_rate):
        (linear,) = self.slots_of(variable)
        accumulator = self.accumulators[self._get_variable_index(variable)]
        shrunk = gradient + ops.multiply(2 * self.shrinkage, variable)
        new_accumulator = accumulator + ops.square(gradient)
        sigma = (ops.power(new_accumulator, -self.power) - ops.power(accumulator, -self.power)) / (
            learning_rate
        )
        self.assign_add(linear, shrunk - sigma * variable)
        quadratic = ops.power(new_accumulator, -self.power) / learning_rate + 2 * self.l2
        clipped = ops.clip(linear, -self.l1, self.l1)
        self.assign(variable, (clipped - linear) / quadratic)
        self.assign(accumulator, new_accumulator)


class Lamb(Slots):
    """Adam's step scaled per variable by the ratio of the weight's norm to the step's."""

    SLOTS = ("momentum", "velocity")

    def __init__(self, learning_rate=0.01, beta_1=0.9, beta_2=0.999, epsilon=1e-6, **kwargs):
        super().__init__(learning_rate, **kwargs)
        self.beta_1, self.beta_2, self.epsilon = beta_1, beta_2, epsilon

    def update_step(self, gradient, variable, learning_rate):
        momentum, velocity = self.slots_of(variable)
        step = ops.cast(self.iterations + 1, variable.dtype)
        self.assign_add(momentum, (gradient - momentum) * (1 - self.beta_1))
        self.assign_add(velocity, (ops.square(gradient) - velocity) * (1 - self.beta_2))
        m_hat = momentum / (1 - ops.power(ops.cast(self.beta_1, variable.dtype), step))
        v_hat = velocity / (1 - ops.power(ops.cast(self.beta_2, variable.dtype), step))
        update = m_hat / (ops.sqrt(v_hat) + self.epsilon)
        weight_norm = ops.sqrt(ops.sum(ops.square(variable)))
        update_norm = ops.sqrt(ops.sum(ops.square(update)))
        trust = ops.where(
            ops.greater(weight_norm, 0),
            ops.where(ops.greater(update_norm, 0), weight_norm / update_norm, 1.0),
            1.0,
        )
        self.assign_sub(variable, trust * learning_rate * update)


class CenteredRMSprop(Slots):
    """RMSprop, centred (the gradient's variance) and with momentum."""

    SLOTS = ("velocity", "average", "momentum_slot")

    def __init__(self, learning_rate=0.01, rho=0.9, momentum=0.5, epsilon=1e-7, **kwargs):
        super().__init__(learning_rate, **kwargs)
        self.rho, self.momentum, self.epsilon = rho, momentum, epsilon

    def update_step(self, gradient, variable, learning_rate):
        velocity, average, momentum = self.slots_of(variable)
        self.assign(velocity, self.rho * velocity + (1 - self.rho) * ops.square(gradient))
        self.assign(average, self.rho * average + (1 - self.rho) * gradient)
        denominator = velocity - ops.square(average) + self.epsilon
        increment = learning_rate * gradient / ops.sqrt(denominator)
        self.assign(momentum, self.momentum * momentum + increment)
        self.assign_sub(variable, momentum)


class NesterovSGD(Slots):
    """SGD with Nesterov momentum, the momentum cast to the variable's dtype."""

    SLOTS = ("velocity",)

    def __init__(self, learning_rate=0.01, momentum=0.9, **kwargs):
        super().__init__(learning_rate, **kwargs)
        self.momentum = momentum

    def update_step(self, gradient, variable, learning_rate):
        (velocity,) = self.slots_of(variable)
        momentum = ops.cast(self.momentum, variable.dtype)
        scaled = ops.multiply(gradient, ops.cast(learning_rate, variable.dtype))
        self.assign(velocity, ops.subtract(velocity * momentum, scaled))
        self.assign_add(variable, ops.subtract(velocity * momentum, scaled))


class Signum(Slots):
    """signSGD with momentum: the sign of a running average of the gradients."""

    SLOTS = ("average",)

    def __init__(self, learning_rate=0.01, beta=0.9, **kwargs):
        super().__init__(learning_rate, **kwargs)
        self.beta = beta

    def update_step(self, gradient, variable, learning_rate):
        (average,) = self.slots_of(variable)
        self.assign(average, ops.add(self.beta * average, (1 - self.beta) * gradient))
        self.assign_sub(variable, learning_rate * ops.sign(average))
