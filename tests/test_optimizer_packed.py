"""A user's rule declared `elementwise_rule` runs once on its small variables packed.

It must give bit for bit what the one-by-one run gives (which follows float64
hand computations), keep every held read unchanged, and fall back to one by
one whenever packing could change the result: an update of some variables
only, state the base did not make per variable, no declaration.
"""

import re
from pathlib import Path

import numpy as np
import pytest
from test_optimizers import GRADS, TOLERANCE, W0
from test_optimizers_contract import UserAdagrad, UserLion, adagrad_by_hand

import minikeras as mk
from benchmarks.user_adam import KerasUserAdam as KerasAdam  # Keras 3 Adam as a user writes it
from minikeras import ops, optimizers
from minikeras.optimizers import _buffers


def packed(cls):
    """`cls` declaring its rule elementwise, and noting the shape of each `update_step` call."""

    class Packed(cls):
        elementwise_rule = True
        trace_update_step = False  # its noting of calls is a side effect a replay would skip

        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.calls = []

        def update_step(self, gradient, variable, learning_rate):
            self.calls.append(variable.shape)
            super().update_step(gradient, variable, learning_rate)

    return Packed


def make_variables():
    """Three small variables and one the monkeypatched size limit leaves out."""
    return [
        mk.Variable(W0, name="kernel"),
        mk.Variable(W0[1], name="bias"),
        mk.Variable(W0.T * 0.5, name="head"),
        mk.Variable(np.linspace(-1.0, 1.0, 16, dtype=np.float32).reshape(4, 4), name="big"),
    ]


def grads_for(step):
    g = GRADS[step]
    return [g, g[0] * 2.0, g.T * -1.5, np.tile(g[:, :2], (2, 2))]


@pytest.fixture(autouse=True)
def small_limit(monkeypatch):
    monkeypatch.setattr(_buffers, "FLAT_MAX_SIZE", 6)  # (2, 3) is small, (4, 4) is not


ALL_STEPS = range(len(GRADS))


def run(optimizer, steps=ALL_STEPS, variables=None):
    variables = variables or make_variables()
    for step in steps:
        optimizer.apply(grads_for(step), variables)
    return variables


def assert_same_state(variables, optimizer, expected, expected_optimizer):
    for got, want in zip(variables, expected):
        np.testing.assert_array_equal(got.numpy(), want.numpy(), err_msg=got.name)
    assert [v.name for v in optimizer.variables] == [v.name for v in expected_optimizer.variables]
    for got, want in zip(optimizer.variables, expected_optimizer.variables):
        np.testing.assert_array_equal(got.numpy(), want.numpy(), err_msg=got.name)


RULES = {
    "adagrad": (UserAdagrad, {"learning_rate": 0.1, "epsilon": 1e-3}),
    "lion": (UserLion, {"learning_rate": 0.01, "beta_1": 0.8, "beta_2": 0.95}),
    "keras adam": (KerasAdam, {"learning_rate": 0.05}),
}


@pytest.mark.parametrize("rule", list(RULES))
@pytest.mark.parametrize("extra", [{}, {"weight_decay": 0.3}, {"clipnorm": 0.2}, {"use_ema": True}])
def test_the_packed_run_equals_the_one_by_one_run_bit_for_bit(rule, extra):
    cls, arguments = RULES[rule]
    optimizer, expected_optimizer = packed(cls)(**arguments, **extra), cls(**arguments, **extra)
    if extra.get("weight_decay"):
        for each in (optimizer, expected_optimizer):
            each.exclude_from_weight_decay(var_names=["bias"])
    variables, expected = run(optimizer), run(expected_optimizer)
    assert optimizer._packed_rule.indices == (0, 1, 2)
    assert optimizer.calls == [(15,), (4, 4)] * len(GRADS)  # the packed three, then "big"
    assert_same_state(variables, optimizer, expected, expected_optimizer)


def test_the_packed_run_follows_adagrad_by_hand_in_float32():
    optimizer = packed(UserAdagrad)(0.1, 1e-3)
    variables = [mk.Variable(W0), mk.Variable(W0[0])]  # the second: the first's top row
    per_step = []
    for g in GRADS:
        optimizer.apply([g, g[0]], variables)
        per_step.append([v.numpy() for v in variables])
    assert optimizer.calls == [(9,)] * len(GRADS)
    for step, ((whole, row), want) in enumerate(zip(per_step, adagrad_by_hand(0.1, 1e-3)), 1):
        assert whole.dtype == row.dtype == np.float32
        np.testing.assert_allclose(whole, want, **TOLERANCE, err_msg=f"step {step}")
        np.testing.assert_allclose(row, want[0], **TOLERANCE, err_msg=f"row, step {step}")


def test_an_update_of_some_variables_runs_them_one_by_one():
    optimizer, expected_optimizer = packed(UserAdagrad)(), UserAdagrad()
    variables, expected = run(optimizer, [0]), run(expected_optimizer, [0])
    optimizer.calls.clear()
    for each, each_variables in ((optimizer, variables), (expected_optimizer, expected)):
        grads = grads_for(1)
        each.apply([grads[2], grads[0]], [each_variables[2], each_variables[0]])  # a subset
        order = [3, 2, 0, 1]
        each.apply([grads[i] for i in order], [each_variables[i] for i in order])  # all, reordered
    assert optimizer.calls == [(3, 2), (2, 3), (4, 4), (3, 2), (2, 3), (3,)]
    run(optimizer, [2], variables)
    run(expected_optimizer, [2], expected)
    assert_same_state(variables, optimizer, expected, expected_optimizer)


def test_an_optimizer_with_state_of_its_own_is_never_packed():
    class CountingAdagrad(UserAdagrad):
        def build(self, variables):
            super().build(variables)
            self.seen = self.add_variable((), name="seen")

        def update_step(self, gradient, variable, learning_rate):
            self.assign_add(self.seen, 1.0)
            super().update_step(gradient, variable, learning_rate)

    optimizer = packed(CountingAdagrad)()
    run(optimizer)
    assert optimizer._packed_rule is None
    assert len(optimizer.calls) == 4 * len(GRADS)
    assert float(optimizer.seen.numpy()) == 4 * len(GRADS)


def test_without_the_declaration_a_rule_that_reads_a_norm_runs_per_variable():
    class NormalizedSGD(optimizers.Optimizer):
        """w -= learning_rate * g / |g|: each variable's own norm, not elementwise."""

        def update_step(self, gradient, variable, learning_rate):
            norm = ops.sqrt(ops.sum(ops.square(gradient)))
            self.assign_sub(variable, learning_rate * gradient / norm)

    variables = run(NormalizedSGD(0.1), [0])
    for variable, g, start in zip(variables, grads_for(0), make_variables()):
        want = start.numpy().astype(np.float64) - 0.1 * g / np.linalg.norm(g.astype(np.float64))
        np.testing.assert_allclose(variable.numpy(), want, **TOLERANCE, err_msg=variable.name)
    # Declared elementwise, which it is not, it would divide by the norm of all three.
    wrongly = run(packed(NormalizedSGD)(0.1), [0])
    assert not np.allclose(wrongly[1].numpy(), variables[1].numpy())


def test_held_reads_keep_their_values_through_a_packed_update():
    optimizer, expected_optimizer = packed(KerasAdam)(0.01), KerasAdam(0.01)
    variables, expected = run(optimizer, [0, 1]), run(expected_optimizer, [0, 1])
    slots = optimizer.variables[2:]
    held = [v.value for v in variables] + [variables[1][1:]]
    held += [slot.value for slot in slots] + [slot[0] for slot in slots]
    seen = [read.numpy().copy() for read in held]
    run(optimizer, [2], variables)
    run(expected_optimizer, [2], expected)
    for index, (read, before) in enumerate(zip(held, seen)):
        np.testing.assert_array_equal(read.numpy(), before, err_msg=f"held read {index}")
    assert_same_state(variables, optimizer, expected, expected_optimizer)


def test_a_rule_that_keeps_what_it_was_given_sees_it_unchanged():
    class Keeping(UserAdagrad):
        kept = ()

        def update_step(self, gradient, variable, learning_rate):
            accumulator = self.accumulators[self._get_variable_index(variable)].value
            before = variable.value
            super().update_step(gradient, variable, learning_rate)
            self.kept = (*self.kept, (gradient, before, variable.value, accumulator))
            self.seen = (*self.seen, tuple(np.array(read) for read in self.kept[-1]))

    for weight_decay in (None, 0.1):  # values packed as the variables' own; gathered and decayed
        optimizer = packed(Keeping)(weight_decay=weight_decay)
        expected_optimizer = UserAdagrad(weight_decay=weight_decay)
        check_kept_reads(optimizer, expected_optimizer)


def check_kept_reads(optimizer, expected_optimizer):
    optimizer.seen = ()
    variables, expected = run(optimizer), run(expected_optimizer)
    assert len(optimizer.kept) == 2 * len(GRADS)
    for kept, seen in zip(optimizer.kept, optimizer.seen):
        for read, then in zip(kept, seen):
            np.testing.assert_array_equal(np.array(read), then)
    assert_same_state(variables, optimizer, expected, expected_optimizer)


def test_a_model_trains_through_fit_with_a_packed_rule():
    mk.utils.set_random_seed(0)
    rng = np.random.default_rng(0)
    x = rng.normal(size=(64, 3)).astype("float32")
    y = x @ np.array([[1.0], [-2.0], [0.5]], "float32") + 0.3
    model = mk.Sequential([mk.layers.Input((3,)), mk.layers.Dense(1)])
    optimizer = packed(UserAdagrad)(learning_rate=0.5)
    model.compile(optimizer, "mse")
    history = model.fit(x, y, batch_size=16, epochs=30, verbose=0)
    assert optimizer.calls[0] == (4,)  # kernel (3, 1) and bias (1,), packed
    assert history.history["loss"][-1] < 1e-2 * history.history["loss"][0]
    np.testing.assert_allclose(model.layers[0].kernel.numpy().ravel(), [1.0, -2.0, 0.5], atol=0.05)


def test_a_subclass_with_a_rule_of_its_own_does_not_inherit_the_declaration():
    declared = packed(UserAdagrad)

    class SameRule(declared):
        pass

    class OwnRule(declared):
        def update_step(self, gradient, variable, learning_rate):
            self.calls.append(variable.shape)
            self.assign_sub(variable, learning_rate * gradient)

    assert SameRule.elementwise_rule and not OwnRule.elementwise_rule
    same, own = SameRule(), OwnRule()
    run(same, [0])
    run(own, [0])
    assert same.calls == [(15,), (4, 4)]
    assert own.calls == [(2, 3), (3,), (3, 2), (4, 4)]


def test_the_example_of_the_optimizers_page_runs_packed():
    page = Path(__file__).resolve().parent.parent / "docs" / "api" / "optimizers.md"
    (block,) = re.findall(r"^```python\n(.*?)^```", page.read_text(), re.MULTILINE | re.DOTALL)
    namespace = {}
    exec(compile(block, "optimizers.md", "exec"), namespace)  # noqa: S102 (our own page)
    assert namespace["optimizer"]._packed_rule.indices == (0, 1)
    np.testing.assert_allclose(namespace["kernel"].numpy(), np.full((3, 2), 0.9), rtol=1e-6)
    np.testing.assert_allclose(namespace["bias"].numpy(), [-0.1, -0.1], rtol=1e-6)


@pytest.mark.parametrize("rule", list(RULES))
def test_a_training_loop_packs_the_slots_once(rule):
    cls, arguments = RULES[rule]
    optimizer = packed(cls)(**arguments)
    variables = run(optimizer, [0])
    group = optimizer._packed_rule.slots  # (no local holds a packed array: that would be a read)
    packed_ids = [id(array) for array in [*group.flats, group.values]]
    run(optimizer, ALL_STEPS, variables)
    assert [id(array) for array in [*group.flats, group.values]] == packed_ids
    for index in optimizer._packed_rule.indices:
        assert variables[index]._value.base is group.values, variables[index].name
        for slot in optimizer._slots[index]:
            assert any(slot._value.base is array for array in group.flats), slot.name


def test_a_slot_assigned_from_outside_is_packed_again_with_its_new_value():
    optimizer, expected_optimizer = packed(KerasAdam)(0.01), KerasAdam(0.01)
    variables, expected = run(optimizer, [0]), run(expected_optimizer, [0])
    for each in (optimizer, expected_optimizer):  # as loading saved state does, between steps
        for slot in each.variables[2:]:
            slot.assign(np.full(slot.shape, 0.125, np.float32))
    run(optimizer, [1, 2], variables)
    run(expected_optimizer, [1, 2], expected)
    assert_same_state(variables, optimizer, expected, expected_optimizer)
