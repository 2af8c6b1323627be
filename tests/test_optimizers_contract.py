"""The optimizer contract: a subclass writes `build` and `update_step`, the base does the rest.

User optimizers written as in Keras 3 (a user Adagrad, a user Lion) against
float64 hand computations, and one trained through `fit`; every built-in's
`update_step` against the same float64 references as its fast path; and the
guarantee that an update never writes into an array someone else holds.
"""

import math

import numpy as np
import pytest
from test_optimizers import CASES, GRADS, TOLERANCE, W0, run

import minikeras as mk
from minikeras import ops, optimizers


def rule_only(cls):
    """`cls` with its own `update_step` declared again: the fused fast path is off."""
    return type(f"{cls.__name__}ByUpdateStep", (cls,), {"update_step": cls.update_step})


class UserAdagrad(optimizers.Optimizer):
    """Adagrad as a user writes it: a rule, nothing about buffers."""

    def __init__(self, learning_rate=0.1, epsilon=1e-7, **kwargs):
        super().__init__(learning_rate, **kwargs)
        self.epsilon = epsilon

    def build(self, variables):
        super().build(variables)
        self.accumulators = [self.add_variable_from_reference(v, "accumulator") for v in variables]

    def update_step(self, gradient, variable, learning_rate):
        accumulator = self.accumulators[self._get_variable_index(variable)]
        self.assign_add(accumulator, gradient * gradient)
        self.assign_sub(variable, learning_rate * gradient / (ops.sqrt(accumulator) + self.epsilon))


class UserLion(optimizers.Optimizer):
    """Lion (Chen et al., 2023) as a user writes it."""

    def __init__(self, learning_rate=0.01, beta_1=0.9, beta_2=0.99, **kwargs):
        super().__init__(learning_rate, **kwargs)
        self.beta_1, self.beta_2 = beta_1, beta_2

    def build(self, variables):
        super().build(variables)
        self.momentums = [self.add_variable_from_reference(v, "momentum") for v in variables]

    def update_step(self, gradient, variable, learning_rate):
        m = self.momentums[self._get_variable_index(variable)]
        direction = ops.sign(m * self.beta_1 + gradient * (1 - self.beta_1))
        self.assign_sub(variable, learning_rate * direction)
        self.assign(m, m * self.beta_2 + gradient * (1 - self.beta_2))


def adagrad_by_hand(lr, epsilon, weight_decay=None):
    w, accumulator, values = W0.astype(np.float64), 0.0, []
    for g in GRADS:
        g = g.astype(np.float64)
        if weight_decay:
            w = w - w * weight_decay * lr
        accumulator = accumulator + g * g
        w = w - lr * g / (np.sqrt(accumulator) + epsilon)
        values.append(w)
    return values


def lion_by_hand(lr, beta_1, beta_2):
    w, m, values = W0.astype(np.float64), 0.0, []
    for g in GRADS:
        g = g.astype(np.float64)
        w = w - lr * np.sign(beta_1 * m + (1 - beta_1) * g)
        m = beta_2 * m + (1 - beta_2) * g
        values.append(w)
    return values


def assert_steps_close(values, expected, what):
    for step, (value, want) in enumerate(zip(values, expected), 1):
        assert value.dtype == np.float32
        np.testing.assert_allclose(value, want, **TOLERANCE, err_msg=f"{what}, step {step}")


# ------------------------------------------------------------ user optimizers


def test_a_user_adagrad_follows_its_rule_in_float32():
    assert_steps_close(run(UserAdagrad(0.1, 1e-3)), adagrad_by_hand(0.1, 1e-3), "user Adagrad")


def test_the_base_decays_and_clips_for_a_user_optimizer():
    values = run(UserAdagrad(0.1, 1e-3, weight_decay=0.3))
    assert_steps_close(values, adagrad_by_hand(0.1, 1e-3, weight_decay=0.3), "decayed")
    # clipvalue=0.1 clips GRADS[0]'s 0.3, -0.2, -0.5, 0.4: the result must differ.
    clipped = run(UserAdagrad(0.1, 1e-3, clipvalue=0.1))
    assert not np.allclose(clipped[0], run(UserAdagrad(0.1, 1e-3))[0])


@pytest.mark.parametrize("cls", [UserLion, optimizers.Lion], ids=["user", "built-in"])
def test_lion_follows_its_rule_in_float32(cls):
    expected = lion_by_hand(0.01, 0.8, 0.95)
    assert_steps_close(run(cls(learning_rate=0.01, beta_1=0.8, beta_2=0.95)), expected, "Lion")


def test_a_user_optimizer_lists_iterations_then_its_slots_and_counts_steps():
    optimizer = UserLion()
    run(optimizer)
    assert [v.name for v in optimizer.variables] == ["iteration", "learning_rate", "w_momentum"]
    assert int(optimizer.iterations.numpy()) == len(GRADS)


def test_a_user_optimizer_trains_a_model_through_fit():
    mk.utils.set_random_seed(0)
    rng = np.random.default_rng(0)
    x = rng.normal(size=(64, 3)).astype("float32")
    y = x @ np.array([[1.0], [-2.0], [0.5]], "float32") + 0.3
    model = mk.Sequential([mk.layers.Input((3,)), mk.layers.Dense(1)])
    model.compile(UserAdagrad(learning_rate=0.5), "mse")
    history = model.fit(x, y, batch_size=16, epochs=30, verbose=0)
    losses = history.history["loss"]
    assert losses[-1] < 1e-2 * losses[0], losses
    np.testing.assert_allclose(model.layers[0].kernel.numpy().ravel(), [1.0, -2.0, 0.5], atol=0.05)


def test_a_subclass_of_a_built_in_that_rewrites_update_step_runs_its_own_rule():
    class HalfSGD(optimizers.SGD):
        def update_step(self, gradient, variable, learning_rate):
            self.assign_sub(variable, 0.5 * learning_rate * gradient)

    w = mk.Variable([1.0])
    HalfSGD(learning_rate=0.2).apply([np.array([1.0])], [w])
    np.testing.assert_allclose(w.numpy(), [0.9])


def test_the_base_update_step_is_abstract():
    with pytest.raises(NotImplementedError, match="MyOptimizer must implement update_step"):
        type("MyOptimizer", (optimizers.Optimizer,), {})(0.1).apply(
            [np.ones(1)], [mk.Variable([1.0])]
        )


# ---------------------------------------------- built-ins written as update_step


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("weight_decay", [None, 0.3])
def test_every_built_in_update_step_follows_the_written_rule(case, weight_decay):
    cls, arguments, reference, reference_arguments = CASES[case]
    if weight_decay:
        arguments = {**arguments, "weight_decay": weight_decay}
        reference_arguments = {**reference_arguments, "weight_decay": weight_decay}
    values = run(rule_only(cls)(**arguments))
    expected = reference(**reference_arguments)
    assert_steps_close(values, expected, f"{case} by update_step")


# --------------------------------------------- no write into an array someone holds


def assert_held_reads_keep_their_values(cls, arguments):
    """One step with a `.numpy()` copy, a Tensor read, a slice and a read of every slot held."""
    w = mk.Variable(W0, name="w")
    optimizer = cls(**arguments)
    optimizer.apply([GRADS[0]], [w])  # builds the slots and gives them values
    optimizer.apply([GRADS[1]], [w])  # spares exist from here on
    held = [w.value, w[0], w[:, 1:]] + [slot.value for slot in optimizer.variables]
    seen = [read.numpy().copy() for read in held]
    optimizer.apply([GRADS[2]], [w])
    for index, (read, before) in enumerate(zip(held, seen)):
        np.testing.assert_array_equal(read.numpy(), before, err_msg=f"held read {index}")
    return w


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("path", ["fused", "update_step"])
def test_an_update_never_writes_into_an_array_someone_holds(case, path):
    cls, arguments, reference, reference_arguments = CASES[case]
    cls = rule_only(cls) if path == "update_step" else cls
    w = assert_held_reads_keep_their_values(cls, arguments)
    np.testing.assert_allclose(w.numpy(), reference(**reference_arguments)[-1], **TOLERANCE)


@pytest.mark.parametrize("case", ["adam_amsgrad", "rmsprop_centered_momentum", "sgd_nesterov"])
@pytest.mark.parametrize("path", ["fused", "update_step"])
def test_the_held_read_check_fires_when_the_unshared_question_is_disabled(case, path, monkeypatch):
    from minikeras.engine import variable

    # Every array counts as unshared: the one calibration, switched off.
    monkeypatch.setattr(variable, "UNSHARED_REFS", 10**9)
    cls, arguments, _, _ = CASES[case]
    cls = rule_only(cls) if path == "update_step" else cls
    with pytest.raises(AssertionError, match="held read"):
        assert_held_reads_keep_their_values(cls, arguments)


def test_a_training_loop_updates_in_place():
    w = mk.Variable(W0)
    optimizer = optimizers.Adam()
    optimizer.apply([GRADS[0]], [w])
    arrays = [w._value] + [slot._value for slot in optimizer.variables[2:]]
    addresses = [array.__array_interface__["data"][0] for array in arrays]
    del arrays
    optimizer.apply([GRADS[1]], [w])
    now = [w._value] + [slot._value for slot in optimizer.variables[2:]]
    assert [array.__array_interface__["data"][0] for array in now] == addresses


# ------------------------------------------------------------------------ EMA


def test_ema_keeps_the_average_of_the_weights_as_keras_does():
    w = mk.Variable([0.0], name="w")
    optimizer = optimizers.SGD(learning_rate=1.0, use_ema=True, ema_momentum=0.9)
    weights, average = [], None
    for _ in range(3):
        optimizer.apply([np.array([-1.0])], [w])
        weights.append(float(w.numpy()[0]))
        # The first step copies the weight; later ones move 10% towards it.
        average = weights[0] if average is None else 0.9 * average + 0.1 * weights[-1]
    assert weights == [1.0, 2.0, 3.0]
    assert [v.name for v in optimizer.variables] == ["iteration", "learning_rate", "w_average"]
    np.testing.assert_allclose(optimizer.variables[2].numpy(), [average], rtol=1e-6)
    optimizer.finalize_variable_values([w])
    np.testing.assert_allclose(w.numpy(), [average], rtol=1e-6)


def test_ema_averages_come_before_the_slots_and_overwrite_on_their_frequency():
    w = mk.Variable([0.0], name="w")
    optimizer = optimizers.SGD(1.0, momentum=0.5, use_ema=True, ema_overwrite_frequency=2)
    optimizer.apply([np.array([-1.0])], [w])
    assert [v.name for v in optimizer.variables] == [
        "iteration",
        "learning_rate",
        "w_average",
        "w_momentum",
    ]
    assert float(w.numpy()[0]) == 1.0
    optimizer.apply([np.array([-1.0])], [w])  # step 2: w = its average
    np.testing.assert_allclose(w.numpy(), optimizer.variables[2].numpy())
    assert not math.isclose(float(w.numpy()[0]), 2.5)


def test_ema_arguments_are_checked_and_round_trip():
    with pytest.raises(ValueError, match=r"`ema_momentum` must be a number in \[0, 1\]"):
        optimizers.Adam(use_ema=True, ema_momentum=1.5)
    with pytest.raises(ValueError, match="`ema_overwrite_frequency` must be None or an int >= 1"):
        optimizers.Adam(use_ema=True, ema_overwrite_frequency=0)
    optimizer = optimizers.Adam(use_ema=True, ema_momentum=0.5, ema_overwrite_frequency=3)
    clone = optimizers.deserialize(optimizers.serialize(optimizer))
    assert (clone.use_ema, clone.ema_momentum, clone.ema_overwrite_frequency) == (True, 0.5, 3)
    with pytest.raises(ValueError, match="averages of 1 variables, but 2 variables"):
        w = mk.Variable([1.0])
        optimizer.apply([np.ones(1)], [w])
        optimizer.finalize_variable_values([w, w])


def test_finalize_without_ema_changes_nothing():
    w = mk.Variable([1.0])
    optimizer = optimizers.SGD(0.1)
    optimizer.apply([np.ones(1)], [w])
    optimizer.finalize_variable_values([w])
    np.testing.assert_allclose(w.numpy(), [0.9])


# --------------------------------------------------------------- weight decay


@pytest.mark.parametrize("path", ["fused", "update_step"])
def test_exclude_from_weight_decay_by_variable_and_by_name(path):
    cls = rule_only(optimizers.SGD) if path == "update_step" else optimizers.SGD
    kernel, bias, scale = (mk.Variable([1.0], name=name) for name in ("kernel", "bias", "scale"))
    optimizer = cls(learning_rate=0.1, weight_decay=0.5)
    optimizer.exclude_from_weight_decay(var_list=[scale], var_names=["bi.s"])
    optimizer.apply([np.ones(1)] * 3, [kernel, bias, scale])
    np.testing.assert_allclose(kernel.numpy(), [1.0 - 0.05 - 0.1])
    np.testing.assert_allclose(bias.numpy(), [0.9])
    np.testing.assert_allclose(scale.numpy(), [0.9])
    with pytest.raises(ValueError, match="before the optimizer is built"):
        optimizer.exclude_from_weight_decay(var_names=["kernel"])


def test_the_schedules_older_path_is_there_after_a_bare_import():
    # `mk.schedules` (the path before schedules moved under optimizers) must not
    # depend on some other module having imported it first.
    import subprocess
    import sys

    code = (
        "import minikeras as mk; "
        "print(mk.schedules.ExponentialDecay is mk.optimizers.schedules.ExponentialDecay)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "True"
