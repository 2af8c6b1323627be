"""A traced rule under changes of the optimizer's state, and of the values it is handed.

Each case runs the rule traced and eagerly (`traced_twins.run_twins`, or the
same steps by hand) and must agree bit for bit: the optimizer built again
(the same variables, other ones, fewer), a variable twice in one `apply`, a
rule that writes `iterations` for some variables, a learning rate going to
-0.0, float64 scalars an op takes as Python numbers, and 0-d gradients that
clipping scales.
"""

import numpy as np
import pytest
from traced_twins import eager, gradients, run_twins, variables

import minikeras as mk
from minikeras import ops, optimizers


class Momentum(optimizers.Optimizer):
    """Heavy-ball momentum: one slot, small variables packed."""

    def build(self, variables):
        super().build(variables)
        self.velocities = self.add_optimizer_variables(variables, "velocity")

    def update_step(self, gradient, variable, learning_rate):
        velocity = self.velocities[self._get_variable_index(variable)]
        self.assign(velocity, ops.add(ops.multiply(velocity, 0.9), gradient))
        self.assign_sub(variable, ops.multiply(velocity, learning_rate))


def run_pair(cls, steps, **arguments):
    """`steps(optimizer, step)` for `cls` traced and eagerly; returns both optimizers.

    `steps` returns the variables to compare after each step.
    """
    traced, reference = cls(**arguments), eager(cls)(**arguments)
    for step in range(8):
        got, want = steps(traced, step), steps(reference, step)
        for a, b in zip(got + traced.variables, want + reference.variables):
            np.testing.assert_array_equal(a.numpy(), b.numpy(), err_msg=f"step {step}")
            np.testing.assert_array_equal(np.signbit(a.numpy()), np.signbit(b.numpy()))
    return traced


def test_building_again_for_the_same_variables_starts_the_state_afresh():
    def rebuild(step, optimizer):
        if step == 4:
            optimizer.build(optimizer._trainable_variables)

    optimizer, _ = run_twins(Momentum, steps=8, between=rebuild, learning_rate=0.1)
    assert optimizer._rule_runner.flat_program is not None  # (packed again after the build)


@pytest.mark.parametrize("count", [5, 2], ids=["other variables", "fewer variables"])
def test_building_for_other_variables_updates_those(count):
    def make():
        return [mk.Variable(np.zeros((3,)), name=f"w{i}") for i in range(5)]

    pairs = {}

    def steps(optimizer, step):
        first, second = pairs.setdefault(id(optimizer), (make(), make()[:count]))
        weights = first if step < 4 else second
        if step == 4:
            optimizer.build(second)
        optimizer.apply(gradients(step, shapes=[(3,)] * len(weights)), weights)
        return first + second

    run_pair(Momentum, steps, learning_rate=0.1)


def test_a_variable_twice_in_one_apply_is_updated_twice():
    weights = {}

    def steps(optimizer, step):
        a, b = weights.setdefault(
            id(optimizer), (mk.Variable(np.zeros(3), name="a"), mk.Variable(np.zeros(2), name="b"))
        )
        if not optimizer.built:
            optimizer.build([a, b])
        optimizer.apply(gradients(step, shapes=[(3,), (2,), (3,)]), [a, b, a])
        return [a, b]

    traced = run_pair(Momentum, steps, learning_rate=0.1)
    assert traced._rule_runner.flat_program is not None  # (the first two ran packed)


def test_the_same_steps_on_a_built_in_match_its_rule_one_by_one():
    # The built-in's packed path against its rule run variable by variable.
    def run(cls):
        a, b = mk.Variable(np.zeros(3), name="a"), mk.Variable(np.zeros(2), name="b")
        optimizer = cls(learning_rate=0.1, momentum=0.9)
        optimizer.build([a, b])
        for step in range(5):
            optimizer.apply(gradients(step, shapes=[(3,), (2,), (3,)]), [a, b, a])
        return a.numpy(), b.numpy()

    one_by_one = eager(
        type("SGDByRule", (optimizers.SGD,), {"update_step": optimizers.SGD.update_step})
    )
    for got, want in zip(run(optimizers.SGD), run(one_by_one)):
        np.testing.assert_allclose(got, want, rtol=1e-6)


class WritesIterations(optimizers.Optimizer):
    """Moves `iterations` on while updating the third variable; all read it after."""

    def update_step(self, gradient, variable, learning_rate):
        if self._get_variable_index(variable) == 2:
            self.assign_add(self.iterations, 3)
        step = ops.cast(self.iterations + 1, variable.dtype)
        self.assign_sub(variable, gradient * learning_rate / step)


def test_variables_after_a_write_to_iterations_see_its_new_value():
    optimizer, weights = run_twins(WritesIterations, learning_rate=0.1)
    assert all(optimizer._rule_runner.programs.get(id(w)) for w in weights)


class ScaledGradient(optimizers.Optimizer):
    """Sets each variable to its gradient times the rate: a zero rate's sign shows."""

    def update_step(self, gradient, variable, learning_rate):
        self.assign(variable, ops.multiply(gradient, learning_rate))


def test_a_learning_rate_going_to_negative_zero_traces_again():
    def rate(step):
        return 0.1 if step < 2 else 0.0 if step < 5 else -0.0

    weights = {}

    def steps(optimizer, step):
        w = weights.setdefault(id(optimizer), [mk.Variable(np.zeros(4))])
        optimizer.apply(gradients(step, shapes=[(4,)]), w)
        return w

    run_pair(ScaledGradient, steps, learning_rate=rate)


class Float64Warmup(optimizers.Optimizer):
    """Squares a float64 scalar computed from `iterations`: ops take it as a Python float."""

    def update_step(self, gradient, variable, learning_rate):
        warmup = ops.square(ops.cast(self.iterations + 1, variable.dtype) * 0.1)
        self.assign_sub(variable, gradient * learning_rate * warmup)


def test_a_float64_scalar_in_a_tensor_is_traced_and_stays_float64():
    # The scalar is a 0-d float64 array to the ops, eagerly and traced alike (it
    # was taken for a Python number, which spoiled the trace); so the rule traces.
    optimizer, weights = run_twins(Float64Warmup, learning_rate=0.1, dtype="float64")
    assert not optimizer._rule_runner.spoiled
    assert all(optimizer._rule_runner.programs.get(id(w)) for w in weights)
    expected = [value.numpy().copy() for value in variables(dtype="float64")]
    rate = float(np.float32(0.1))  # (the rate is held as float32, as Keras holds it)
    for step in range(6):
        warmup = ((step + 1) * 0.1) ** 2
        for value, grad in zip(expected, gradients(step, dtype="float64")):
            value -= grad * rate * warmup
    for weight, want in zip(weights, expected):
        np.testing.assert_allclose(weight.numpy(), want, rtol=1e-15)


@pytest.mark.parametrize("clipping", ["clipnorm", "global_clipnorm", "clipvalue"])
def test_a_clipped_0d_gradient_stays_a_float64_array(clipping):
    class PlainSGD(optimizers.Optimizer):
        def update_step(self, gradient, variable, learning_rate):
            self.assign_sub(variable, ops.multiply(gradient, learning_rate))

    # Within the bound at the traced step, clipped after: the gradient's type must not change.
    scales = [0.1, 0.1, 10.0, 10.0, 0.1, 10.0]
    run_twins(PlainSGD, scales=scales, shapes=[()], dtype="float64", learning_rate=0.1,
              **{clipping: 1.0})  # fmt: skip
    # And the clipped update itself is float64 arithmetic (not a float32 one).
    w = mk.Variable(np.array(0.0), dtype="float64")
    PlainSGD(learning_rate=0.1, **{clipping: 1.0}).apply([np.array(3.0)], [w])
    assert w.numpy() == -float(np.float32(0.1)) * 1.0  # (the float32 rate, as in Keras)
