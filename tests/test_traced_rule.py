"""A user's `update_step`, traced on a variable's second update, replays bit for bit.

Each rule runs traced and, as the reference, with `trace_update_step = False`
(`traced_twins.run_twins`): after every step the weights and the optimizer's
state must be equal bit for bit. These tests cover what a replay does: one
by one, packed (automatically or declared), in place, with `out=` buffers,
with shared bias corrections. `test_traced_rule_guards.py` covers what keeps
a rule eager.
"""

import numpy as np
import pytest
from test_optimizers_contract import UserAdagrad, UserLion
from traced_twins import eager, gradients, rule, run_twins

import minikeras as mk
from benchmarks.user_adam import KerasUserAdam as KerasAdam
from minikeras import ops, optimizers
from minikeras.optimizers import _buffers, _traced


class MomentumRule(optimizers.Optimizer):
    """SGD with momentum on a clipped gradient: `ops.where` on a comparison, and `np.clip`."""

    def build(self, variables):
        super().build(variables)
        self.velocities = self.add_optimizer_variables(variables, "velocity")

    def update_step(self, gradient, variable, learning_rate):
        velocity = self.velocities[self._get_variable_index(variable)]
        clipped = ops.where(ops.greater(gradient, 1.0), 1.0, np.clip(gradient, -1.5, None))
        self.assign(velocity, ops.subtract(velocity * 0.9, ops.multiply(clipped, learning_rate)))
        self.assign_add(variable, velocity)


RULES = {
    "keras adam": (KerasAdam, {"learning_rate": 0.05}),
    "adagrad": (UserAdagrad, {"learning_rate": 0.1, "epsilon": 1e-3}),
    "lion": (UserLion, {"learning_rate": 0.01, "beta_1": 0.8, "beta_2": 0.95}),
    "momentum, clipped": (MomentumRule, {"learning_rate": 0.1}),
}


OPTIONS = [{}, {"weight_decay": 0.3}, {"clipnorm": 0.5}, {"use_ema": True}]


@pytest.mark.parametrize("options", OPTIONS, ids=["plain", "decay", "clipnorm", "ema"])
@pytest.mark.parametrize("rule", list(RULES))
def test_a_replayed_rule_equals_the_eager_rule_bit_for_bit(rule, options):
    cls, arguments = RULES[rule]
    optimizer, weights = run_twins(cls, **arguments, **options)
    runner = optimizer._rule_runner
    assert all(runner.programs.get(id(weight)) for weight in weights), runner.spoiled


@pytest.mark.parametrize("rule", ["keras adam", "lion"])
def test_a_packed_elementwise_rule_is_replayed_too(rule):
    cls, arguments = RULES[rule]
    packed = type(f"Packed{cls.__name__}", (cls,), {"elementwise_rule": True})
    optimizer, _ = run_twins(packed, **arguments)
    assert optimizer._packed_rule is not None
    runner = optimizer._rule_runner
    assert id(optimizer._packed_rule.variable) in runner.programs and all(runner.programs.values())
    # then its stand-in's program runs in place on the packed arrays
    assert runner.flat is optimizer._packed_rule.slots and runner.flat_program is not None


def test_the_programs_of_packed_variables_are_never_written_out():
    # Each variable's rule is traced and analysed (to decide the packing), but
    # only the packed program runs: the members' own are never generated.
    optimizer, weights = run_twins(KerasAdam, learning_rate=0.05)
    runner = optimizer._rule_runner
    members = [runner.programs[id(weights[index])] for index in runner.flat.indices]
    assert members and not any("function" in vars(program) for program in members)
    assert "function" in vars(runner.flat_program)
    program = members[0]  # generated on demand, the same code as a traced variable's
    assert "def replay" in program.source and callable(program.function)
    assert program.signature is not None and "function" in vars(program)


@pytest.mark.parametrize("rule", list(RULES))
def test_the_small_variables_of_one_elementwise_program_run_packed(rule):
    cls, arguments = RULES[rule]
    optimizer, _ = run_twins(cls, **arguments)  # in place on the packed arrays
    runner = optimizer._rule_runner
    assert runner.flat.indices == (0, 1, 2, 3, 4) and runner.flat_program is not None
    assert "out=v1" in runner.flat_program.source
    optimizer, _ = run_twins(cls, weight_decay=0.3, **arguments)  # (with decay: the stand-in's)
    packed = optimizer._packed_rule
    assert packed is not None and packed.indices == (0, 1, 2, 3, 4)
    assert optimizer._rule_runner.programs[id(packed.variable)]


class ShapeScaled(optimizers.Optimizer):
    """Scales each variable's step by its first dimension: a constant per variable."""

    def update_step(self, gradient, variable, learning_rate):
        self.assign_sub(variable, ops.multiply(gradient, learning_rate / variable.shape[0]))


class CentredGradient(optimizers.Optimizer):
    """Subtracts the gradient's mean: not elementwise."""

    def update_step(self, gradient, variable, learning_rate):
        centred = ops.subtract(gradient, np.mean(gradient, keepdims=True))
        self.assign_sub(variable, ops.multiply(centred, learning_rate))


@pytest.mark.parametrize("cls", [ShapeScaled, CentredGradient])
def test_programs_that_differ_or_read_other_elements_do_not_pack(cls):
    optimizer, _ = run_twins(cls, learning_rate=0.1)
    assert optimizer._packed_rule is None and optimizer._rule_runner.flat is None
    assert all(optimizer._rule_runner.programs.values())  # each replayed on its own


def test_packing_those_would_change_the_result(monkeypatch):
    """The test above can fail: packed anyway, both rules give other numbers."""

    def may_pack(self, optimizer):  # whenever every variable has its program
        if self.members is None:
            self.members = _buffers.FlatSlots.members(
                optimizer._trainable_variables, optimizer._slots
            )
        return self.ready and all(self.programs.get(id(v)) for v in optimizer._trainable_variables)

    monkeypatch.setattr(_traced.RuleRunner, "may_pack", may_pack)
    for cls in (ShapeScaled, CentredGradient):
        with pytest.raises(AssertionError, match="step"):
            run_twins(cls, learning_rate=0.1)


@pytest.mark.parametrize("packed", [True, False], ids=["packed", "one by one"])
def test_the_replay_writes_in_place_and_held_reads_keep_their_values(packed, monkeypatch):
    if not packed:
        monkeypatch.setattr(_traced.RuleRunner, "may_pack", lambda self, optimizer: False)
    optimizer, weights = run_twins(KerasAdam, steps=4, learning_rate=0.05)
    address = weights[4]._value.ctypes.data
    optimizer.apply(gradients(4), weights)
    assert weights[4]._value.ctypes.data == address  # nothing held it: written in place
    momentum = optimizer.variables[6]  # weights[4]'s
    assert momentum.shape == (64, 48)
    held, held_momentum = weights[4].value, momentum.value
    before, momentum_before = held.numpy(), held_momentum.numpy()
    optimizer.apply(gradients(5), weights)
    np.testing.assert_array_equal(held.numpy(), before)
    np.testing.assert_array_equal(held_momentum.numpy(), momentum_before)
    assert not np.array_equal(weights[4].numpy(), before)
    assert not np.array_equal(momentum.numpy(), momentum_before)


def test_the_bias_correction_runs_once_per_update_for_all_variables():
    optimizer, _ = run_twins(KerasAdam, steps=4, learning_rate=0.05)
    signatures = {program.signature for program in optimizer._rule_runner.programs.values()}
    assert len(signatures) == 1 and None not in signatures  # one shared `scalars`, run once
    assert len(optimizer._rule_runner.scalars) == 1


def test_a_large_variable_is_replayed_into_buffers_and_a_small_one_not():
    optimizer, _ = run_twins(KerasAdam, steps=3, learning_rate=0.05)
    large = [
        p for p in optimizer._rule_runner.programs.values() if p.variables[1].shape == (64, 48)
    ]
    assert "out=B" in large[0].source
    small = [p for p in optimizer._rule_runner.programs.values() if p.variables[1].shape == (4,)]
    assert "out=" not in small[0].source


MASKS = {
    "&": lambda self, g, v: g * ((g > 0) & (g < 1)),
    "|": lambda self, g, v: g * ((g > 1) | (g < -1)),
    "^": lambda self, g, v: g * ((g > 0) ^ (g > 1)),
    "~": lambda self, g, v: g * ~(g > 0),
}


@pytest.mark.parametrize("name", list(MASKS))
def test_bitwise_operators_on_masks_are_replayed(name):
    optimizer, _ = run_twins(rule(MASKS[name]), learning_rate=0.1)
    assert all(optimizer._rule_runner.programs.values())


def test_a_generalized_ufunc_is_not_packed():
    def normalized(self, g, v):
        return g / np.sqrt(np.vecdot(g.reshape(-1), g.reshape(-1)) + 1e-6)

    optimizer, _ = run_twins(rule(normalized), learning_rate=0.1)
    assert optimizer._rule_runner.flat is None and optimizer._packed_rule is None


class TwoCorrections(optimizers.Optimizer):
    """Kernels divide by one bias correction, vectors by another: one shared head, two uses."""

    def build(self, variables):
        super().build(variables)
        self.m = self.add_optimizer_variables(variables, "m")

    def update_step(self, gradient, variable, learning_rate):
        m = self.m[self._get_variable_index(variable)]
        t = ops.cast(self.iterations + 1, variable.dtype)
        first = 1 - ops.power(ops.cast(0.9, variable.dtype), t)
        second = 1 - ops.power(ops.cast(0.999, variable.dtype), t)
        self.assign(m, 0.9 * m + 0.1 * gradient)
        self.assign_sub(
            variable, learning_rate * m / (first if len(variable.shape) > 1 else second)
        )


class ConstantWrites(optimizers.Optimizer):
    """Adds a Python float to a slot: written as a Variable takes it (a float64 array)."""

    def build(self, variables):
        super().build(variables)
        self.sums = self.add_optimizer_variables(variables, "sum")

    def update_step(self, gradient, variable, learning_rate):
        total = self.sums[self._get_variable_index(variable)]
        self.assign_add(total, 0.1)
        self.assign_sub(variable, ops.multiply(gradient, learning_rate) * total)


class KeepsPrevious(optimizers.Optimizer):
    """Keeps the weights before the step through a cast that may be the read itself."""

    def build(self, variables):
        super().build(variables)
        self.previous = self.add_optimizer_variables(variables, "previous")

    def update_step(self, gradient, variable, learning_rate):
        previous = self.previous[self._get_variable_index(variable)]
        old = mk.engine.tensor.value_of(variable).astype(variable.dtype, copy=False)
        self.assign_sub(variable, learning_rate * gradient)
        self.assign(previous, old)


@pytest.mark.parametrize("decay", [None, 0.1], ids=["in place", "decay"])
@pytest.mark.parametrize("dtype", ["float32", "float16", "float64"])
@pytest.mark.parametrize("cls", [TwoCorrections, ConstantWrites, KeepsPrevious])
def test_rules_with_shared_heads_constant_writes_and_aliases_equal_the_eager_rule(
    cls, dtype, decay
):
    optimizer, _ = run_twins(cls, learning_rate=0.05, weight_decay=decay, dtype=dtype)
    if dtype == "float32":  # (in float64 a bias correction is a numpy scalar taken as a float)
        assert all(optimizer._rule_runner.programs.values()), optimizer._rule_runner.spoiled


class ArrayBounds(optimizers.Optimizer):
    """Clips with array bounds given as keywords, one per variable, close but not equal."""

    def build(self, variables):
        super().build(variables)
        self.bounds = [np.array([0.5 + 1e-10 * i]) for i in range(len(variables))]

    def update_step(self, gradient, variable, learning_rate):
        bound = self.bounds[self._get_variable_index(variable)]
        self.assign_sub(variable, np.clip(gradient, a_min=-bound, a_max=bound) * learning_rate)


def test_array_keyword_constants_do_not_pack():
    optimizer, _ = run_twins(ArrayBounds, learning_rate=1.0)
    assert optimizer._rule_runner.flat is None and all(optimizer._rule_runner.programs.values())


def test_large_variables_of_one_shape_share_their_buffers():
    optimizer = KerasAdam(learning_rate=0.05)
    weights = [mk.Variable(np.zeros((200, 100), "float32")) for _ in range(6)]  # (not packed)
    for step in range(3):
        optimizer.apply([np.full((200, 100), 0.1 * (step + 1), "float32")] * 6, weights)
    arrays = {
        id(value)
        for program in optimizer._rule_runner.programs.values()
        if program is not None
        for name, value in program.function.__globals__.items()
        if name.startswith("B")
    }
    assert len(arrays) == sum(len(each) for each in optimizer._rule_runner.buffers.values()) <= 3


def spy_on_packed_runs(optimizer):
    """Counts the calls of the optimizer's packed program from now on."""
    runner, calls = optimizer._rule_runner, []
    function = runner.flat_program.function
    runner.flat_program.function = lambda *args: (calls.append(1), function(*args))[1]
    return calls


def test_no_packed_replay_inside_a_tape_or_after_opting_out():
    optimizer, weights = run_twins(KerasAdam, steps=4, learning_rate=0.05)
    calls = spy_on_packed_runs(optimizer)
    optimizer.apply(gradients(4), weights)
    assert calls == [1]
    with mk.GradientTape():
        optimizer.apply(gradients(5), weights)
    optimizer.trace_update_step = False
    optimizer.apply(gradients(6), weights)
    assert calls == [1]


class SummedRule(optimizers.Optimizer):
    """Scales by the gradient's own sum, taken as a method (`x.sum(keepdims=True)`)."""

    def update_step(self, gradient, variable, learning_rate):
        total = gradient.sum(keepdims=True)
        self.assign_sub(variable, ops.multiply(gradient, learning_rate) / (1.0 + np.abs(total)))


class NoWrite(optimizers.Optimizer):
    """Writes nothing (a rule that has not started yet)."""

    def update_step(self, gradient, variable, learning_rate):
        ops.multiply(gradient, learning_rate)


def test_a_method_reduction_is_replayed_and_a_rule_that_writes_nothing_is_not():
    optimizer, _ = run_twins(SummedRule, learning_rate=0.1)
    assert all(optimizer._rule_runner.programs.values())
    optimizer, _ = run_twins(NoWrite, learning_rate=0.1)
    assert set(optimizer._rule_runner.spoiled.values()) == {"it writes nothing"}


def test_a_packed_replay_that_raises_hands_the_error_on_and_unpacks():
    optimizer, weights = run_twins(KerasAdam, steps=4, learning_rate=0.05)
    runner = optimizer._rule_runner

    def fails(*args):
        raise FloatingPointError("packed")

    runner.flat_program.function = fails
    with pytest.raises(FloatingPointError):
        optimizer.apply(gradients(4), weights)
    assert runner.unpackable and "packed" in runner.spoiled
    assert all(runner.programs[id(weight)] is None for weight in weights)  # eager now
    optimizer.apply(gradients(5), weights)
    assert runner.flat_program is None


def test_two_threads_tracing_at_once_each_see_their_reads():
    import threading

    barrier = threading.Barrier(2, timeout=5)

    class Meeting(KerasAdam):
        def update_step(self, gradient, variable, learning_rate):
            if self._rule_trace is not None:
                barrier.wait()  # both threads are tracing now
            super().update_step(gradient, variable, learning_rate)

    results = {}

    def train(name):
        optimizer, weight = Meeting(learning_rate=0.05), [mk.Variable(np.ones(3, "float32"))]
        for step in range(4):
            optimizer.apply([np.full(3, 0.1 * (step + 1), "float32")], weight)
        results[name] = (weight[0].numpy(), all(optimizer._rule_runner.programs.values()))

    threads = [threading.Thread(target=train, args=(name,)) for name in "ab"]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    reference, weight = eager(KerasAdam)(learning_rate=0.05), [mk.Variable(np.ones(3, "float32"))]
    for step in range(4):
        reference.apply([np.full(3, 0.1 * (step + 1), "float32")], weight)
    for name in "ab":
        np.testing.assert_array_equal(results[name][0], weight[0].numpy())
        assert results[name][1]
    assert mk.engine.context.TRACING == [0]


DELTA = np.array([0.5, -0.25], "float32")


class AddsDelta(optimizers.Optimizer):
    """Adds a constant array of the variables' shape: not a scalar, so not packed."""

    def update_step(self, gradient, variable, learning_rate):
        self.assign_sub(variable, ops.multiply(gradient, learning_rate))
        self.assign_add(variable, DELTA)


def test_an_array_written_as_a_constant_is_not_packed():
    optimizer, _ = run_twins(AddsDelta, learning_rate=0.1, shapes=[(2,)] * 3)
    assert optimizer._rule_runner.flat is None and all(optimizer._rule_runner.programs.values())
