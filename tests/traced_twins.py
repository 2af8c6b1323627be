"""Helpers for the traced-rule tests: a rule run traced against the same rule run eagerly."""

import numpy as np

import minikeras as mk
from minikeras import ops, optimizers

__all__ = ["SHAPES", "eager", "gradients", "rule", "run_twins", "variables"]

SHAPES = [(5, 4), (4,), (4, 3), (3,), (64, 48)]  # the last large enough for `out=` buffers


def gradients(step, scale=1.0, shapes=SHAPES, dtype="float32"):
    """The gradients of `step` (random, seeded by the step), for `shapes`."""
    rng = np.random.default_rng(100 + step)
    return [
        (rng.standard_normal(shape) * scale).astype(np.float32).astype(dtype) for shape in shapes
    ]


def variables(shapes=SHAPES, dtype="float32"):
    """New Variables of `shapes` and `dtype`, with the same random values each time."""
    rng = np.random.default_rng(7)
    values = [rng.standard_normal(shape).astype(np.float32).astype(dtype) for shape in shapes]
    return [mk.Variable(value, dtype=dtype) for value in values]


def eager(cls):
    """`cls`, running its rule eagerly every step: the reference."""
    return type(f"Eager{cls.__name__}", (cls,), {"trace_update_step": False})


def run_twins(cls, steps=6, scales=None, between=None, shapes=SHAPES, dtype="float32", **arguments):
    """Runs `cls` traced and eagerly on the same gradients; asserts the same state at each step.

    Returns:
        The traced optimizer and its variables.
    """
    traced, reference = cls(**arguments), eager(cls)(**arguments)
    weights, reference_weights = variables(shapes, dtype), variables(shapes, dtype)
    for step in range(steps):
        grads = gradients(step, scales[step] if scales else 1.0, shapes, dtype)
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


def rule(step_of):
    """An optimizer class whose update is `variable -= step_of(self, gradient, variable) * lr`."""

    class Rule(optimizers.Optimizer):
        def update_step(self, gradient, variable, learning_rate):
            self.assign_sub(
                variable, ops.multiply(step_of(self, gradient, variable), learning_rate)
            )

    return Rule
