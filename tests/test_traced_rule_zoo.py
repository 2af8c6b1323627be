"""More rules as users write them, each traced and replayed bit for bit.

Seven well-known update rules written as Keras 3 users write theirs
(`benchmarks/user_rules.py`: `ops` calls, Tensor operators on Variables, a
helper function inside the rule, the variable read inside an op, a norm of
the whole variable). Each runs traced and eagerly
(`traced_twins.run_twins`) and must agree bit for bit, be replayed for
every variable (nothing in them takes the data to Python), and run packed
exactly when it treats every element alike. Those with a
built-in counterpart follow it too (the order of operations differs, so to
float32 rounding), which shows the rules themselves are the real ones.
"""

import numpy as np
import pytest
from traced_twins import gradients, run_twins, variables

from benchmarks.user_rules import (
    Adadelta,
    Adamax,
    CenteredRMSprop,
    Ftrl,
    Lamb,
    NesterovSGD,
    Signum,
)
from minikeras import optimizers

RULES = {
    "adadelta": Adadelta,
    "adamax": Adamax,
    "ftrl": Ftrl,
    "lamb": Lamb,
    "centered rmsprop": CenteredRMSprop,
    "nesterov sgd": NesterovSGD,
    "signum": Signum,
}
NOT_ELEMENTWISE = {"lamb"}  # (its trust ratio reads the norm of the whole variable)


@pytest.mark.parametrize("options", [{}, {"weight_decay": 0.1}], ids=["plain", "decay"])
@pytest.mark.parametrize("name", list(RULES))
def test_each_rule_is_replayed_bit_for_bit(name, options):
    optimizer, weights = run_twins(RULES[name], **options)
    runner = optimizer._rule_runner
    assert all(runner.programs.get(id(weight)) for weight in weights), runner.spoiled


@pytest.mark.parametrize("name", list(RULES))
def test_the_small_variables_run_packed_unless_the_rule_reads_a_norm(name):
    optimizer, weights = run_twins(RULES[name])
    runner = optimizer._rule_runner
    if name in NOT_ELEMENTWISE:
        assert runner.flat_program is None and not runner.packing
    else:
        assert runner.flat_program is not None and runner.flat.indices == (0, 1, 2, 3, 4)


SHARED = {
    "adamax": {"learning_rate": 0.01},
    "centered rmsprop": {"learning_rate": 0.01, "rho": 0.9, "momentum": 0.5},
    "nesterov sgd": {"learning_rate": 0.01, "momentum": 0.9},
}
BUILT_INS = {
    "adamax": (optimizers.Adamax, {}),
    "centered rmsprop": (optimizers.RMSprop, {"centered": True}),
    "nesterov sgd": (optimizers.SGD, {"nesterov": True}),
}


@pytest.mark.parametrize("name", list(BUILT_INS))
def test_a_rule_with_a_built_in_counterpart_follows_it(name):
    cls, extra = BUILT_INS[name]
    ours, theirs = RULES[name](**SHARED[name]), cls(**SHARED[name], **extra)
    weights, reference = variables(), variables()
    for step in range(6):
        ours.apply(gradients(step), weights)
        theirs.apply(gradients(step), reference)
    assert ours._rule_runner.programs  # (replayed for the later steps)
    for got, want in zip(weights, reference):
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=2e-5, atol=1e-6)
