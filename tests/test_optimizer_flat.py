"""Small variables updated together (`optimizers._buffers.FlatSlots`).

The built-in rules run once over the packed slots of every small variable.
That must give bit for bit what the one-by-one update gives (whose rules
`test_optimizers` checks against float64 references), keep every held read
unchanged, and pack only when something broke the packing.
"""

import numpy as np
import pytest
from test_optimizers import CASES, GRADS, W0

import minikeras as mk
from minikeras.optimizers import _buffers

FUSED = [case for case, (cls, *_) in CASES.items() if cls._fused_step is not None]
SHAPES = [W0.shape, (3,), (3, 2)]


def grads_for(step):
    """Gradients for three variables of SHAPES, from GRADS[step]."""
    g = GRADS[step]
    return [g, g[0] * 2.0, g.T * -1.5]


def make_variables():
    return [
        mk.Variable(W0, name="kernel"),
        mk.Variable(W0[1], name="bias"),
        mk.Variable(W0.T * 0.5, name="head"),
    ]


def run(optimizer):
    variables = make_variables()
    for step in range(len(GRADS)):
        optimizer.apply(grads_for(step), variables)
    return variables, optimizer


def optimizer_for(case, **extra):
    cls, arguments, _, _ = CASES[case]
    extra = {key: value for key, value in extra.items() if value is not None}
    return cls(**{**arguments, **extra})


def one_by_one(case, monkeypatch, **extra):
    with monkeypatch.context() as patch:
        patch.setattr(_buffers, "FLAT_MAX_SIZE", 0)
        variables, optimizer = run(optimizer_for(case, **extra))
    assert optimizer._buffers.flat is None
    return [v.numpy() for v in variables]


@pytest.mark.parametrize("case", FUSED)
@pytest.mark.parametrize("weight_decay", [None, 0.3])
def test_the_packed_update_equals_the_one_by_one_update_bit_for_bit(
    case, weight_decay, monkeypatch
):
    optimizer = optimizer_for(case, weight_decay=weight_decay)
    if weight_decay:
        optimizer.exclude_from_weight_decay(var_names=["bias"])
    variables, _ = run(optimizer)
    assert optimizer._buffers.flat is not None
    assert optimizer._buffers.flat.indices == (0, 1, 2)
    expected_optimizer = optimizer_for(case, weight_decay=weight_decay)
    if weight_decay:
        expected_optimizer.exclude_from_weight_decay(var_names=["bias"])
    with monkeypatch.context() as patch:
        patch.setattr(_buffers, "FLAT_MAX_SIZE", 0)
        expected, _ = run(expected_optimizer)
    for variable, want in zip(variables, expected):
        np.testing.assert_array_equal(variable.numpy(), want.numpy(), err_msg=variable.name)
    for slot, want in zip(optimizer.variables, expected_optimizer.variables):
        np.testing.assert_array_equal(slot.numpy(), want.numpy(), err_msg=slot.name)


@pytest.mark.parametrize("case", ["adam", "sgd_momentum"])
def test_variables_in_another_order_take_the_one_by_one_path_with_the_same_result(
    case, monkeypatch
):
    shuffled = make_variables()
    optimizer = optimizer_for(case)
    optimizer.build(shuffled)
    for step in range(len(GRADS)):
        grads = grads_for(step)
        optimizer.apply([grads[2], grads[0], grads[1]], [shuffled[2], shuffled[0], shuffled[1]])
    for got, want in zip(shuffled, one_by_one(case, monkeypatch)):
        np.testing.assert_array_equal(got.numpy(), want)


def hold_reads_across_a_step(case):
    variables, optimizer = run(optimizer_for(case))
    slots = optimizer.variables[2:]
    held = [v.value for v in variables] + [variables[0][:, 1:]]
    held += [slot.value for slot in slots] + [slot[0] for slot in slots]
    seen = [read.numpy().copy() for read in held]
    optimizer.apply(grads_for(0), variables)
    for index, (read, before) in enumerate(zip(held, seen)):
        np.testing.assert_array_equal(read.numpy(), before, err_msg=f"held read {index}")
    return variables


@pytest.mark.parametrize("case", ["adam_amsgrad", "rmsprop_centered_momentum", "sgd_nesterov"])
def test_a_packed_update_never_writes_into_a_slot_read_someone_holds(case, monkeypatch):
    variables = hold_reads_across_a_step(case)
    with monkeypatch.context() as patch:
        patch.setattr(_buffers, "FLAT_MAX_SIZE", 0)
        expected = make_variables()
        optimizer = optimizer_for(case)
        for step in [*range(len(GRADS)), 0]:
            optimizer.apply(grads_for(step), expected)
    for got, want in zip(variables, expected):
        np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_the_held_slot_check_fires_when_the_packing_is_trusted_blindly(monkeypatch):
    monkeypatch.setattr(_buffers.FlatSlots, "intact", lambda self: True)
    with pytest.raises(AssertionError, match="held read"):
        hold_reads_across_a_step("adam")


def test_the_held_value_check_fires_when_the_packing_is_trusted_blindly(monkeypatch):
    monkeypatch.setattr(_buffers.FlatSlots, "values_intact", lambda self: self.values is not None)
    with pytest.raises(AssertionError, match="held read"):
        hold_reads_across_a_step("adam")


def test_a_training_loop_packs_once_and_updates_in_place():
    variables, optimizer = run(optimizer_for("adam"))
    flat = optimizer._buffers.flat
    packed = [id(array) for array in flat.flats]
    values = [id(v._value) for v in variables]
    for step in range(len(GRADS)):
        optimizer.apply(grads_for(step), variables)
    assert [id(array) for array in flat.flats] == packed
    assert [id(v._value) for v in variables] == values
    for slot in optimizer.variables[2:]:
        assert any(slot._value.base is array for array in flat.flats), slot.name
    assert all(v._value.base is flat.values for v in variables)


@pytest.mark.parametrize("jit_compile", ["auto", False])
def test_fit_and_a_tape_loop_pack_the_values_once(jit_compile, monkeypatch):
    # What a step reads of the weights (a tape's records, a replay's arguments) is let
    # go of before the update: the packed values stay intact, step after step.
    packs = []
    real_pack = _buffers.FlatSlots.pack_values
    monkeypatch.setattr(
        _buffers.FlatSlots, "pack_values", lambda self: packs.append(1) or real_pack(self)
    )
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(64, 5)).astype(np.float32), rng.integers(0, 3, 64)
    model = mk.Sequential(
        [mk.Input((5,)), mk.layers.Dense(4, activation="relu"), mk.layers.Dense(3)]
    )
    loss = mk.losses.SparseCategoricalCrossentropy(from_logits=True)
    model.compile("adam", loss, jit_compile=jit_compile)
    model.fit(x, y, batch_size=16, epochs=2, verbose=0)
    assert len(packs) == 1
    optimizer, weights = mk.optimizers.Adam(), model.trainable_weights
    for start in range(0, 64, 16):
        with mk.GradientTape() as tape:
            value = loss(y[start : start + 16], model(x[start : start + 16], training=True))
        optimizer.apply(tape.gradient(value, weights), weights)
    assert len(packs) == 2


def test_a_slot_assigned_from_outside_is_packed_again_with_its_new_value(monkeypatch):
    variables, optimizer = run(optimizer_for("adam"))
    momentum = optimizer.variables[2]
    momentum.assign(np.full(momentum.shape, 0.25, np.float32))
    momentum._value = momentum._value.copy()  # as a load that replaces the array would
    optimizer.apply(grads_for(1), variables)
    with monkeypatch.context() as patch:
        patch.setattr(_buffers, "FLAT_MAX_SIZE", 0)
        expected, reference = run(optimizer_for("adam"))
        reference.variables[2].assign(np.full(momentum.shape, 0.25, np.float32))
        reference.apply(grads_for(1), expected)
    for got, want in zip(variables, expected):
        np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_only_small_variables_of_one_dtype_are_packed():
    big = mk.Variable(np.zeros(_buffers.FLAT_MAX_SIZE + 1, np.float32))
    small = [mk.Variable(np.zeros(3, np.float32)), mk.Variable(np.zeros(2, np.float32))]
    half = mk.Variable(np.zeros(2), dtype="float16")
    optimizer = mk.optimizers.Adam()
    variables = [big, small[0], half, small[1]]
    optimizer.apply([np.ones(v.shape, v.dtype) for v in variables], variables)
    assert optimizer._buffers.flat.indices == (1, 3)
    lone = mk.optimizers.Adam()
    lone.apply([np.ones(3, np.float32)], [mk.Variable(np.zeros(3, np.float32))])
    assert lone._buffers.flat is None


def test_a_slice_of_a_packed_slot_keeps_its_value_through_any_later_write():
    # A slice of a slot's view refers to the packed array, not to the view: the
    # one-by-one path (a subset of the variables) and assign must still see it held.
    variables, optimizer = run(optimizer_for("adam"))
    assert optimizer._buffers.flat is not None
    momentum = optimizer.variables[2]
    held = momentum.value[:2]
    before = held.numpy().copy()
    optimizer.apply(grads_for(0)[:2], variables[:2])
    np.testing.assert_array_equal(held.numpy(), before)
    momentum.assign_add(np.ones(momentum.shape, np.float32))
    np.testing.assert_array_equal(held.numpy(), before)
