"""What keeps a traced `update_step` eager, and what traces it again.

Every way data could leave a trace unseen must keep the rule eager: each has
a test here, and where freezing would change the numbers (a branch on the
data, a Variable changed between steps, an error caught at the traced step)
the comparison with the eager twin (`traced_twins.run_twins`) shows it. The
guards (learning rate, attributes, tapes, `trace_update_step`) trace again
or stay eager. `test_traced_rule.py` covers the replays themselves.
"""

import numpy as np
import pytest
from traced_twins import SHAPES, eager, gradients, rule, run_twins, variables

import minikeras as mk
from benchmarks.user_adam import KerasUserAdam as KerasAdam
from minikeras import ops, optimizers
from minikeras.optimizers import _traced

# ------------------------------------------------ data leaving the trace keeps it eager


class BranchOnData(optimizers.Optimizer):
    """Takes a Python float of the gradient: the branch depends on the step's data."""

    def update_step(self, gradient, variable, learning_rate):
        scale = 0.5 if float(ops.max(ops.abs(gradient))) > 2.0 else 1.0
        self.assign_sub(variable, ops.multiply(gradient, learning_rate * scale))


class AsArray(optimizers.Optimizer):
    """Takes the gradient out with `np.asarray`, then computes with it."""

    def update_step(self, gradient, variable, learning_rate):
        self.assign_sub(variable, np.asarray(gradient) * learning_rate)


class WritesDirectly(optimizers.Optimizer):
    """Writes its variable with `Variable.assign_sub`, not the optimizer's."""

    def update_step(self, gradient, variable, learning_rate):
        variable.assign_sub(ops.multiply(gradient, learning_rate))


class ReadsAScale(optimizers.Optimizer):
    """Reads a Variable of its own (not per variable), which changes between steps."""

    def build(self, variables):
        super().build(variables)
        self.scale = self.add_variable((), initializer="ones", name="scale")

    def update_step(self, gradient, variable, learning_rate):
        self.assign_sub(variable, ops.multiply(gradient, self.scale * learning_rate))


def grow_the_scale(step, optimizer):
    if optimizer.built:
        optimizer.scale.assign(1.0 + step)


@pytest.mark.parametrize(
    "cls, why, twin_arguments",
    [
        (BranchOnData, "float()", {"scales": [1.0, 1.0, 1.0, 5.0, 5.0, 1.0]}),
        (AsArray, "np.asarray", {}),
        (WritesDirectly, "np.asarray", {}),  # (Variable.assign takes the array)
        (ReadsAScale, "a read of Variable 'scale'", {"between": grow_the_scale}),
    ],
)
def test_data_that_leaves_the_trace_keeps_the_rule_eager(cls, why, twin_arguments):
    optimizer, _ = run_twins(cls, learning_rate=0.1, **twin_arguments)
    runner = optimizer._rule_runner
    assert set(runner.programs.values()) == {None}
    assert all(why in reason for reason in runner.spoiled.values()), runner.spoiled


def test_a_frozen_branch_would_give_other_numbers():
    """What the BranchOnData case above guards: a branch frozen at step 2 would differ."""
    scales = [1.0, 1.0, 1.0, 5.0, 5.0, 1.0]
    frozen, reference = variables(), variables()
    optimizer = eager(BranchOnData)(learning_rate=0.1)
    for step, scale in enumerate(scales):
        grads = gradients(step, scale)
        optimizer.apply(grads, reference)
        for weight, grad in zip(frozen, grads):
            weight.assign_sub(grad * np.float32(0.1 * 1.0))  # the branch of step 2
    assert not np.array_equal(frozen[0].numpy(), reference[0].numpy())


# ------------------------------------------------ what a trace depends on changes


class CountingRule(optimizers.Optimizer):
    """Keeps a Python counter on itself and uses it: every step's attributes differ."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.count = 0

    def update_step(self, gradient, variable, learning_rate):
        self.count += 1
        self.assign_sub(variable, ops.multiply(gradient, learning_rate / self.count))


def test_a_changed_attribute_traces_again_and_endless_changes_end_tracing():
    def new_beta(step, optimizer):
        if step == 3:
            optimizer.beta_1 = 0.5

    optimizer, _ = run_twins(KerasAdam, between=new_beta, learning_rate=0.05)
    assert optimizer._rule_runner.invalidations == 1 and all(
        optimizer._rule_runner.programs.values()
    )

    optimizer, _ = run_twins(CountingRule, steps=_traced._MOST_TRACES + 5, learning_rate=0.1)
    assert optimizer._rule_runner.invalidations == _traced._MOST_TRACES
    assert not optimizer._rule_runner.ready


def test_a_schedule_traces_at_each_new_rate_until_it_stays_eager():
    schedule = optimizers.schedules.ExponentialDecay(0.1, decay_steps=1, decay_rate=0.9)
    optimizer, _ = run_twins(KerasAdam, steps=_traced._MOST_TRACES + 4, learning_rate=schedule)
    assert optimizer._rule_runner.invalidations == _traced._MOST_TRACES
    assert not optimizer._rule_runner.ready


def test_a_constant_rate_changed_once_traces_again():
    def halve(step, optimizer):
        if step == 3:
            optimizer.learning_rate = 0.025

    optimizer, _ = run_twins(KerasAdam, between=halve, learning_rate=0.05)
    assert optimizer._rule_runner.invalidations == 1


def test_no_trace_or_replay_inside_a_tape():
    optimizer, weights = run_twins(KerasAdam, steps=3, learning_rate=0.05)
    reference = eager(KerasAdam)(learning_rate=0.05)
    reference_weights = variables()
    for step in range(3):
        reference.apply(gradients(step), reference_weights)
    with mk.GradientTape():
        optimizer.apply(gradients(3), weights)
        reference.apply(gradients(3), reference_weights)
    assert not optimizer._rule_runner.ready
    for got, want in zip(weights, reference_weights):
        np.testing.assert_array_equal(got.numpy(), want.numpy())


class FailsOnItsSecondUpdate(optimizers.Optimizer):
    def update_step(self, gradient, variable, learning_rate):
        if self.iterations.numpy() == 1:
            raise RuntimeError("second update")
        self.assign_sub(variable, ops.multiply(gradient, learning_rate))


def test_a_rule_that_raises_while_traced_leaves_plain_arrays_behind():
    optimizer, weights = FailsOnItsSecondUpdate(learning_rate=0.1), variables()
    optimizer.apply(gradients(0), weights)
    with pytest.raises(RuntimeError, match="second update"):
        optimizer.apply(gradients(1), weights)
    for variable in weights + optimizer.variables:
        assert type(variable._value) is np.ndarray
    assert optimizer._rule_trace is None


def test_trace_update_step_false_never_traces():
    optimizer, _ = run_twins(eager(KerasAdam), steps=3, learning_rate=0.05)
    assert not optimizer._rule_runner.ready and not optimizer._rule_runner.programs


# ------------------------------------------------ ways out found by reviews


LEAVING = {  # each takes the step's data out of numpy: eager from the trace on
    "round": (lambda self, g, v: g / round(float(np.max(np.abs(g))) + 1.0, 3), "float()"),
    "round of a value": (lambda self, g, v: g / (round(np.max(np.abs(g)), 3) + 1.0), "round()"),
    "divmod": (lambda self, g, v: g - divmod(g, 0.5)[1], "divmod()"),
    "format": (lambda self, g, v: g * (len(f"{np.max(g):.3f}") > 0), "format()"),
    "data-shaped": (lambda self, g, v: g * np.flatnonzero(g > 0).size, "data-shaped"),
    "numpy scalar": (lambda self, g, v: ops.multiply(g, np.mean(g > 0)), "a numpy scalar"),
    "in place": (lambda self, g, v: g.__imul__(0.5), "an in-place operator"),
    "random draw": (
        lambda self, g, v: g + mk.random.normal(g.shape, seed=self.seeds),
        "a random draw",
    ),
    "numpy() of a Variable": (lambda self, g, v: g * self.scale.numpy(), "numpy() of Variable"),
    "error state": (lambda self, g, v: _with_errstate(lambda: g / 2.0), "error state"),
}


def _with_errstate(compute):
    with np.errstate(divide="raise"):
        return compute()


def with_state(cls):
    """`cls` with a seed generator and a plain Variable (not the optimizer's) to read."""

    class WithState(cls):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.seeds = mk.random.SeedGenerator(3)
            self.scale = mk.Variable(2.0, name="scale")

    return WithState


@pytest.mark.parametrize("name", list(LEAVING))
def test_what_takes_the_data_out_keeps_the_rule_eager(name):
    step_of, why = LEAVING[name]
    optimizer, _ = run_twins(with_state(rule(step_of)), learning_rate=0.1)
    runner = optimizer._rule_runner
    assert set(runner.programs.values()) == {None}
    assert all(why in reason for reason in runner.spoiled.values()), runner.spoiled


def test_a_changing_variable_read_with_numpy_is_not_frozen():
    def grow(step, optimizer):
        if hasattr(optimizer, "scale"):
            optimizer.scale.assign(1.0 + step)

    step_of = LEAVING["numpy() of a Variable"][0]
    run_twins(with_state(rule(step_of)), between=grow, learning_rate=0.1)


@pytest.mark.parametrize("dtype", ["float64", "float16"])
def test_keras_adam_on_other_float_dtypes_is_traced_and_equal(dtype):
    optimizer, _ = run_twins(KerasAdam, learning_rate=0.05, dtype=dtype)
    # (its bias correction, a numpy scalar of the dtype, is a 0-d array to the ops)
    assert not optimizer._rule_runner.spoiled


class CatchingRule(optimizers.Optimizer):
    """Inverts a 2x2 gradient, falling back to the gradient when it is singular."""

    def update_step(self, gradient, variable, learning_rate):
        try:
            direction = np.linalg.inv(gradient)
        except np.linalg.LinAlgError:
            direction = gradient
        self.assign_sub(variable, ops.multiply(direction, learning_rate))


def test_a_replay_that_raises_hands_the_error_on_and_the_rule_turns_eager():
    optimizer, weight = CatchingRule(learning_rate=0.1), mk.Variable(np.zeros((2, 2), "float32"))
    invertible = np.array([[2.0, 0.0], [0.0, 4.0]], "float32")
    for _ in range(3):
        optimizer.apply([invertible], [weight])
    assert optimizer._rule_runner.programs[id(weight)]
    with pytest.raises(np.linalg.LinAlgError):  # the eager rule would have caught it
        optimizer.apply([np.zeros((2, 2), "float32")], [weight])
    assert optimizer._rule_runner.programs[id(weight)] is None
    before = weight.numpy()
    optimizer.apply([np.ones((2, 2), "float32")], [weight])  # eager: caught, falls back
    np.testing.assert_allclose(weight.numpy(), before - 0.1)


def test_another_thread_sees_arrays_while_a_rule_is_traced():
    import threading

    seen, tracing, read = [], threading.Event(), threading.Event()

    class Waiting(optimizers.Optimizer):
        def update_step(self, gradient, variable, learning_rate):
            if self._rule_trace is not None:
                tracing.set()
                read.wait(5)
            self.assign_sub(variable, ops.multiply(gradient, learning_rate))

    optimizer, weight = Waiting(learning_rate=0.1), mk.Variable([1.0, 2.0])

    def reader():
        tracing.wait(5)
        seen.append(type(mk.engine.tensor.value_of(weight)))
        read.set()

    thread = threading.Thread(target=reader)
    thread.start()
    for _ in range(2):
        optimizer.apply([np.ones(2, "float32")], [weight])
    thread.join(5)
    assert seen == [np.ndarray] and optimizer._rule_runner.programs[id(weight)]


def test_a_rate_set_again_to_its_value_does_not_trace_again():
    def set_rate(step, optimizer):
        optimizer.learning_rate = float("0.05")  # a new float object each time

    optimizer, _ = run_twins(KerasAdam, between=set_rate, learning_rate=0.05)
    assert optimizer._rule_runner.invalidations == 0


def test_a_class_attribute_changed_traces_again():
    class ClassBeta(optimizers.Optimizer):
        beta = 0.5

        def update_step(self, gradient, variable, learning_rate):
            self.assign_sub(variable, ops.multiply(gradient, learning_rate * self.beta))

    def change(step, optimizer):
        if step == 3:
            type(optimizer).beta = 0.25  # (both twins' classes derive from ClassBeta)

    optimizer, _ = run_twins(ClassBeta, between=change, learning_rate=0.1)
    assert optimizer._rule_runner.invalidations == 1


def test_trace_update_step_false_on_the_instance_never_traces():
    optimizer, weight = KerasAdam(learning_rate=0.05), variables()
    optimizer.trace_update_step = False
    for step in range(3):
        optimizer.apply(gradients(step), weight)
    assert not optimizer._rule_runner.programs


class WritesOthers(optimizers.Optimizer):
    """Counts its calls in a Variable of its own and resets a slot with Variable.assign."""

    def build(self, variables):
        super().build(variables)
        self.calls = self.add_variable((), name="calls")
        self.m = self.add_optimizer_variables(variables, "m")

    def update_step(self, gradient, variable, learning_rate):
        self.calls.assign_add(1.0)
        self.m[self._get_variable_index(variable)].assign(np.zeros(variable.shape))
        self.assign_sub(variable, ops.multiply(gradient, learning_rate))


class TapeInside(optimizers.Optimizer):
    """Takes a gradient of its own inside the rule."""

    def update_step(self, gradient, variable, learning_rate):
        x = ops.convert_to_tensor(variable)
        with mk.GradientTape() as tape:
            tape.watch(x)
            y = ops.sum(ops.square(x))
        self.assign_sub(variable, (gradient + 0.01 * tape.gradient(y, x)) * learning_rate)


class InnerOptimizer(optimizers.Optimizer):
    """Moves a Variable of its own with a built-in optimizer at each update."""

    def build(self, variables):
        super().build(variables)
        self.aux, self.inner = mk.Variable(np.zeros(3, "float32")), optimizers.SGD(1.0)

    def update_step(self, gradient, variable, learning_rate):
        self.inner.apply([np.ones(3, "float32")], [self.aux])
        self.assign_sub(variable, ops.multiply(gradient, learning_rate))


@pytest.mark.parametrize(
    "cls, why",
    [
        (WritesOthers, "a write to Variable"),
        (TapeInside, "a GradientTape"),
        (InnerOptimizer, "an update"),
    ],
)
def test_writes_tapes_and_updates_not_seen_by_the_trace_keep_the_rule_eager(cls, why):
    optimizer, _ = run_twins(cls, learning_rate=0.1)
    runner = optimizer._rule_runner
    assert set(runner.programs.values()) == {None}
    assert all(why in reason for reason in runner.spoiled.values()), runner.spoiled
    if cls is WritesOthers:
        assert float(optimizer.calls.numpy()) == 6 * len(SHAPES)


def test_a_base_class_change_traces_again():
    class Base(optimizers.Optimizer):
        scale = 0.5

        def update_step(self, gradient, variable, learning_rate):
            self.assign_sub(variable, ops.multiply(gradient, learning_rate * self.scale))

    class Mine(Base):
        pass

    def change(step, optimizer):
        if step == 3:
            Base.scale = 0.25

    optimizer, _ = run_twins(Mine, between=change, learning_rate=0.1)
    assert optimizer._rule_runner.invalidations == 1


# ------------------------------------------------ found by a third review


class CatchesOnItsTrace(optimizers.Optimizer):
    """Preconditions by the inverse, falling back to the gradient when it is singular."""

    def update_step(self, gradient, variable, learning_rate):
        try:
            direction = np.linalg.inv(gradient) @ gradient
        except np.linalg.LinAlgError:
            direction = gradient
        self.assign_sub(variable, ops.multiply(direction, learning_rate))


def test_an_error_caught_while_tracing_keeps_the_rule_eager():
    """Singular only on the traced step: a replay would keep the fallback for good."""
    singular, regular = np.ones((2, 2), "float32"), np.array([[2, 0], [0, 4]], "float32")
    traced, reference = (
        CatchesOnItsTrace(learning_rate=0.1),
        eager(CatchesOnItsTrace)(learning_rate=0.1),
    )
    weights = [mk.Variable(np.zeros((2, 2), "float32")) for _ in range(2)]
    for gradient in (regular, singular, regular, regular):
        traced.apply([gradient], weights[:1])
        reference.apply([gradient.copy()], weights[1:])
        np.testing.assert_array_equal(weights[0].numpy(), weights[1].numpy())
    assert set(traced._rule_runner.spoiled.values()) == {"inv raising"}


class AppliesItself(optimizers.Optimizer):
    """Applies itself to a Variable of its own from inside its rule."""

    def build(self, variables):
        super().build(variables)
        self.aux = mk.Variable(np.zeros(3, "float32"))

    def update_step(self, gradient, variable, learning_rate):
        if variable is not self.aux and len(self._trainable_variables) > 1:
            self.apply([np.ones(3, "float32")], [self.aux])
        self.assign_sub(variable, ops.multiply(gradient, learning_rate))


def test_a_rule_that_applies_its_own_optimizer_leaves_no_hook_behind():
    optimizer = AppliesItself(learning_rate=0.1)
    weights = [mk.Variable(np.ones(3, "float32"))]
    optimizer.build(weights + [mk.Variable(np.zeros(3, "float32"))])
    optimizer.aux = optimizer._trainable_variables[1]
    for _ in range(4):
        optimizer.apply(
            [np.ones(3, "float32"), np.ones(3, "float32")], optimizer._trainable_variables
        )
    state = mk.engine.context.state
    assert mk.engine.context.TRACING == [0]
    assert not state.read_interceptors and not state.effect_observers
    assert optimizer._rule_trace is None
