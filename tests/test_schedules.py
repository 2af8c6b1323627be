"""Learning rate schedules: values against Keras's formulas, argument errors, config."""

import json
import math

import numpy as np
import pytest

from minikeras import Tensor, Variable
from minikeras.optimizers import schedules

STEPS = [0, 1, 2, 5, 9, 10, 11, 25, 100]


def assert_values(schedule, formula, steps=STEPS):
    for step in steps:
        value = schedule(step)
        assert type(value) is float, type(value)
        assert value == pytest.approx(formula(step), rel=1e-12, abs=1e-15), f"step {step}"


def test_exponential_decay():
    schedule = schedules.ExponentialDecay(0.1, decay_steps=10, decay_rate=0.3)
    assert_values(schedule, lambda step: 0.1 * 0.3 ** (step / 10))


def test_exponential_decay_staircase():
    schedule = schedules.ExponentialDecay(0.1, decay_steps=10, decay_rate=0.3, staircase=True)
    assert_values(schedule, lambda step: 0.1 * 0.3 ** (step // 10))
    assert schedule(9) == 0.1 and schedule(10) == pytest.approx(0.03)


def test_piecewise_constant_decay_puts_each_boundary_in_the_interval_it_ends():
    schedule = schedules.PiecewiseConstantDecay(boundaries=[2, 10], values=[1.0, 0.5, 0.1])
    expected = {0: 1.0, 1: 1.0, 2: 1.0, 3: 0.5, 10: 0.5, 11: 0.1, 100: 0.1}
    assert {step: schedule(step) for step in expected} == expected
    assert schedule(2.5) == 0.5


def test_inverse_time_decay():
    schedule = schedules.InverseTimeDecay(0.2, decay_steps=5, decay_rate=0.5)
    assert_values(schedule, lambda step: 0.2 / (1 + 0.5 * step / 5))
    stairs = schedules.InverseTimeDecay(0.2, decay_steps=5, decay_rate=0.5, staircase=True)
    assert_values(stairs, lambda step: 0.2 / (1 + 0.5 * (step // 5)))


def test_polynomial_decay_stops_at_the_end_rate():
    schedule = schedules.PolynomialDecay(0.1, decay_steps=10, end_learning_rate=0.01, power=2.0)
    assert_values(schedule, lambda step: 0.09 * (1 - min(step, 10) / 10) ** 2 + 0.01)
    assert schedule(10) == pytest.approx(0.01) and schedule(1000) == pytest.approx(0.01)


def test_polynomial_decay_defaults_are_keras():
    schedule = schedules.PolynomialDecay(0.1, decay_steps=10)
    assert schedule.end_learning_rate == 0.0001 and schedule.power == 1.0
    assert schedule(5) == pytest.approx((0.1 - 0.0001) * 0.5 + 0.0001)


def test_polynomial_decay_cycle_restarts_over_longer_periods():
    schedule = schedules.PolynomialDecay(0.1, decay_steps=10, end_learning_rate=0.0, cycle=True)

    def formula(step):
        period = 10 * (1 if step == 0 else math.ceil(step / 10))
        return 0.1 * (1 - step / period)

    assert_values(schedule, formula)
    assert schedule(10) == pytest.approx(0.0) and schedule(11) == pytest.approx(0.1 * 9 / 20)


def test_cosine_decay():
    schedule = schedules.CosineDecay(0.1, decay_steps=10, alpha=0.2)

    def formula(step):
        cosine = 0.5 * (1 + math.cos(math.pi * min(step, 10) / 10))
        return 0.1 * (0.8 * cosine + 0.2)

    assert_values(schedule, formula)
    assert schedule(100) == pytest.approx(0.02)


def test_cosine_decay_with_warmup():
    schedule = schedules.CosineDecay(
        0.0, decay_steps=10, alpha=0.1, warmup_target=0.2, warmup_steps=4
    )

    def formula(step):
        if step < 4:
            return 0.2 * step / 4
        cosine = 0.5 * (1 + math.cos(math.pi * min(step - 4, 10) / 10))
        return 0.2 * (0.9 * cosine + 0.1)

    assert_values(schedule, formula, STEPS + [3, 4, 14, 15])
    assert schedule(4) == pytest.approx(0.2)


def test_cosine_decay_without_warmup_target_ignores_warmup_steps():
    plain = schedules.CosineDecay(0.1, decay_steps=10)
    with_steps = schedules.CosineDecay(0.1, decay_steps=10, warmup_steps=5)
    assert [plain(s) for s in STEPS] == [with_steps(s) for s in STEPS]


def test_steps_may_be_numpy_scalars_tensors_and_variables():
    schedule = schedules.ExponentialDecay(1.0, decay_steps=1, decay_rate=0.5)
    for step in (3, np.int64(3), Tensor(3), Variable(3, dtype="int64"), np.array(3.0)):
        assert schedule(step) == 0.125


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda: schedules.ExponentialDecay(0.1, 0, 0.5), r"`decay_steps` must be a number > 0"),
        (lambda: schedules.InverseTimeDecay(0.1, -1, 0.5), r"`decay_steps` must be a number > 0"),
        (lambda: schedules.PolynomialDecay(0.1, 0), r"`decay_steps` must be a number > 0"),
        (lambda: schedules.CosineDecay(0.1, 0), r"`decay_steps` must be a number > 0"),
        (
            lambda: schedules.CosineDecay(0.1, 10, warmup_target=0.2, warmup_steps=-1),
            r"`warmup_steps` must be a number >= 0",
        ),
        (
            lambda: schedules.ExponentialDecay("0.1", 10, 0.5),
            r"ExponentialDecay: `initial_learning_rate` must be a number, got '0.1'",
        ),
        (lambda: schedules.CosineDecay(0.1, 10, alpha=None), r"`alpha` must be a number"),
        (
            lambda: schedules.PiecewiseConstantDecay([1, 2], [0.1, 0.2]),
            r"one more item than `boundaries`; got 2 boundaries \[1, 2\] and 2 values",
        ),
        (
            lambda: schedules.PiecewiseConstantDecay([5, 2], [0.1, 0.2, 0.3]),
            r"`boundaries` must be increasing, got \[5, 2\]",
        ),
    ],
)
def test_bad_arguments_are_clear_errors(make, message):
    with pytest.raises(ValueError, match=message):
        make()


SCHEDULES = [
    schedules.ExponentialDecay(0.1, 10, 0.3, staircase=True, name="decay"),
    schedules.PiecewiseConstantDecay([2, 10], [1.0, 0.5, 0.1]),
    schedules.InverseTimeDecay(0.2, 5, 0.5),
    schedules.PolynomialDecay(0.1, 10, 0.01, power=2.0, cycle=True),
    schedules.CosineDecay(0.0, 10, alpha=0.1, warmup_target=0.2, warmup_steps=4),
]


@pytest.mark.parametrize("schedule", SCHEDULES, ids=lambda schedule: type(schedule).__name__)
def test_config_round_trips(schedule):
    config = schedules.serialize(schedule)
    json.dumps(config)
    clone = schedules.deserialize(config)
    assert type(clone) is type(schedule) and clone.get_config() == schedule.get_config()
    assert [clone(step) for step in STEPS] == [schedule(step) for step in STEPS]
    assert type(schedule).from_config(schedule.get_config()).get_config() == schedule.get_config()


def test_names_default_to_the_class_name():
    assert schedules.CosineDecay(0.1, 10).name == "CosineDecay"
    assert SCHEDULES[0].name == "decay"


def test_deserialize_errors_and_custom_objects():
    with pytest.raises(ValueError, match="Unknown learning rate schedule 'Nope'"):
        schedules.deserialize({"class_name": "Nope", "config": {}})
    with pytest.raises(ValueError, match="expected a dict with 'class_name'"):
        schedules.deserialize("ExponentialDecay")
    with pytest.raises(ValueError, match="expected a LearningRateSchedule"):
        schedules.serialize(lambda step: 0.1)

    class Constant(schedules.LearningRateSchedule):
        def __init__(self, rate):
            self.rate = rate

        def __call__(self, step):
            return self.rate

        def get_config(self):
            return {"rate": self.rate}

    config = {"class_name": "Constant", "config": {"rate": 0.3}}
    assert schedules.deserialize(config, {"Constant": Constant})(7) == 0.3


def test_base_class_methods_must_be_implemented():
    with pytest.raises(NotImplementedError, match="__call__"):
        schedules.LearningRateSchedule()(0)
    with pytest.raises(NotImplementedError, match="get_config"):
        schedules.LearningRateSchedule().get_config()
