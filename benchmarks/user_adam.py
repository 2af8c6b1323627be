"""Adam as a Keras 3 user writes it: Keras's own `update_step`, in `mk.ops`.

One definition for `bench_user_optimizer.py` (a user's optimizer against the
built-in) and the tests of traced and packed rules. Importing it pins no
threads, unlike the benchmark scripts.
"""

from minikeras import ops, optimizers

__all__ = ["KerasUserAdam"]


class KerasUserAdam(optimizers.Optimizer):
    """Adam as a Keras 3 user writes it: Keras's own `update_step`, in `mk.ops`."""

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7, **kwargs):
        super().__init__(learning_rate, **kwargs)
        self.beta_1, self.beta_2, self.epsilon = beta_1, beta_2, epsilon

    def build(self, var_list):
        super().build(var_list)
        self._momentums = self.add_optimizer_variables(var_list, "momentum")
        self._velocities = self.add_optimizer_variables(var_list, "velocity")

    def update_step(self, gradient, variable, learning_rate):
        lr = ops.cast(learning_rate, variable.dtype)
        gradient = ops.cast(gradient, variable.dtype)
        local_step = ops.cast(self.iterations + 1, variable.dtype)
        beta_1_power = ops.power(ops.cast(self.beta_1, variable.dtype), local_step)
        beta_2_power = ops.power(ops.cast(self.beta_2, variable.dtype), local_step)
        m = self._momentums[self._get_variable_index(variable)]
        v = self._velocities[self._get_variable_index(variable)]
        alpha = lr * ops.sqrt(1 - beta_2_power) / (1 - beta_1_power)
        self.assign_add(m, ops.multiply(ops.subtract(gradient, m), 1 - self.beta_1))
        self.assign_add(v, ops.multiply(ops.subtract(ops.square(gradient), v), 1 - self.beta_2))
        self.assign_sub(
            variable, ops.divide(ops.multiply(m, alpha), ops.add(ops.sqrt(v), self.epsilon))
        )
