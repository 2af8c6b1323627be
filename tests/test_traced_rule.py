"""A user's `update_step` is traced on a variable's second update and replayed after.

Each replayed rule must give bit for bit what the same rule run eagerly every
step gives (`trace_update_step = False`), and every way data could leave the
trace unseen must keep the rule eager: each has a test, and where freezing
would change the numbers (a branch on the data, a Variable changed between
steps) the eager twin shows it.
"""

import numpy as np
import pytest
from test_optimizer_packed import KerasAdam
from test_optimizers_contract import UserAdagrad, UserLion

import minikeras as mk
from minikeras import ops, optimizers
from minikeras.optimizers import _buffers, _traced

SHAPES = [(5, 4), (4,), (4, 3), (3,), (64, 48)]  # the last large enough for `out=` buffers


def gradients(step, scale=1.0):
    rng = np.random.default_rng(100 + step)
    return [(rng.standard_normal(shape) * scale).astype(np.float32) for shape in SHAPES]


def variables():
    rng = np.random.default_rng(7)
    return [mk.Variable(rng.standard_normal(shape).astype(np.float32)) for shape in SHAPES]


def eager(cls):
    """`cls`, running its rule eagerly every step: the reference."""
    return type(f"Eager{cls.__name__}", (cls,), {"trace_update_step": False})


def run_twins(cls, steps=6, scales=None, between=None, **arguments):
    """Runs `cls` traced and eagerly on the same gradients; asserts the same state at each step."""
    traced, reference = cls(**arguments), eager(cls)(**arguments)
    weights, reference_weights = variables(), variables()
    for step in range(steps):
        grads = gradients(step, scales[step] if scales else 1.0)
        if between is not None:
            between(step, traced)
            between(step, reference)
        copies = [grad.copy() for grad in grads]  # (a rule may write into its gradient)
        traced.apply(grads, weights)
        reference.apply(copies, reference_weights)
        for got, want in zip(weights + traced.variables, reference_weights + reference.variables):
            np.testing.assert_array_equal(got.numpy(), want.numpy(), err_msg=f"step {step}")
            assert got.dtype == want.dtype
    return traced, weights


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
    momentum = optimizer.variables[5]  # weights[4]'s
    assert momentum.shape == (64, 48)
    held, held_momentum = weights[4].value, momentum.value
    before, momentum_before = held.numpy(), held_momentum.numpy()
    optimizer.apply(gradients(5), weights)
    np.testing.assert_array_equal(held.numpy(), before)
    np.testing.assert_array_equal(held_momentum.numpy(), momentum_before)
    assert not np.array_equal(weights[4].numpy(), before)
    assert not np.array_equal(momentum.numpy(), momentum_before)


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


# ------------------------------------------------ rules found by review to need care


def rule(step_of):
    """An optimizer class whose update is `variable -= step_of(self, gradient, variable) * lr`."""

    class Rule(optimizers.Optimizer):
        def update_step(self, gradient, variable, learning_rate):
            self.assign_sub(
                variable, ops.multiply(step_of(self, gradient, variable), learning_rate)
            )

    return Rule


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
def test_keras_adam_on_other_float_dtypes_stays_eager_and_equal(dtype, monkeypatch):
    module = __import__(__name__)
    float32_variables, float32_gradients = variables, gradients
    monkeypatch.setattr(
        module,
        "variables",
        lambda: [mk.Variable(v.numpy().astype(dtype), dtype=dtype) for v in float32_variables()],
    )
    monkeypatch.setattr(
        module,
        "gradients",
        lambda step, scale=1.0: [g.astype(dtype) for g in float32_gradients(step)],
    )
    optimizer, _ = run_twins(KerasAdam, learning_rate=0.05)
    # (its bias correction is a numpy scalar that ops take as a Python float there)
    assert set(optimizer._rule_runner.spoiled.values()) == {
        "a numpy scalar taken as a Python number"
    }


def test_a_generalized_ufunc_is_not_packed():
    def normalized(self, g, v):
        return g / np.sqrt(np.vecdot(g.reshape(-1), g.reshape(-1)) + 1e-6)

    optimizer, _ = run_twins(rule(normalized), learning_rate=0.1)
    assert optimizer._rule_runner.flat is None and optimizer._packed_rule is None


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


# ------------------------------------------------ found by a second review


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
    module = __import__(__name__)
    with pytest.MonkeyPatch.context() as patch:
        float32_variables, float32_gradients = variables, gradients
        patch.setattr(
            module,
            "variables",
            lambda: [
                mk.Variable(v.numpy().astype(dtype), dtype=dtype) for v in float32_variables()
            ],
        )
        patch.setattr(
            module,
            "gradients",
            lambda step, scale=1.0: [g.astype(dtype) for g in float32_gradients(step)],
        )
        optimizer, _ = run_twins(cls, learning_rate=0.05, weight_decay=decay)
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


DELTA = np.array([0.5, -0.25], "float32")


class AddsDelta(optimizers.Optimizer):
    """Adds a constant array of the variables' shape: not a scalar, so not packed."""

    def update_step(self, gradient, variable, learning_rate):
        self.assign_sub(variable, ops.multiply(gradient, learning_rate))
        self.assign_add(variable, DELTA)


def test_an_array_written_as_a_constant_is_not_packed(monkeypatch):
    module = __import__(__name__)
    monkeypatch.setattr(module, "SHAPES", [(2,)] * 3)
    optimizer, _ = run_twins(AddsDelta, learning_rate=0.1)
    assert optimizer._rule_runner.flat is None and all(optimizer._rule_runner.programs.values())


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
