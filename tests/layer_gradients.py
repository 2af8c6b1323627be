"""Checks a layer's tape gradients against central finite differences, in float64.

Used by the layer tests: `assert_gradients_match(loss, inputs, weights)` takes
a function of input Tensors returning a scalar, differentiates it with a
GradientTape with respect to the inputs and the given Variables, and compares
every entry with `(loss(x + h) - loss(x - h)) / 2h`.
"""

import numpy as np
from finite_differences import numeric_gradient, variable_gradient

from minikeras import GradientTape, Tensor, ops


def projection_loss(outputs, seed=0):
    """`sum(outputs * r)` for fixed random `r`: every output entry matters, differently.

    Args:
        outputs: a Tensor, or a list/tuple of them.
        seed: seed of the random weights.

    Returns:
        A scalar Tensor.
    """
    rng = np.random.default_rng(seed)
    if not isinstance(outputs, (list, tuple)):
        outputs = [outputs]
    total = 0.0
    for output in outputs:
        total = total + ops.sum(output * rng.standard_normal(output.shape))
    return total


def assert_gradients_match(loss_fn, inputs, variables=(), step=1e-6, rtol=1e-5, atol=1e-8):
    """Asserts that tape gradients of `loss_fn(*inputs)` equal central differences.

    Args:
        loss_fn: a function of Tensors (one per input) returning a scalar Tensor.
        inputs: float64 numpy arrays (watched Tensors in the tape).
        variables: Variables read by `loss_fn` whose gradients are checked too.
        step: the finite-difference step.
        rtol: relative tolerance.
        atol: absolute tolerance.

    Returns:
        The analytic gradients, inputs first, as numpy arrays.
    """
    inputs = [np.array(x, dtype=np.float64) for x in inputs]
    tensors = [Tensor(x) for x in inputs]
    with GradientTape() as tape:
        tape.watch(tensors)
        loss = loss_fn(*tensors)
    analytic = tape.gradient(loss, [*tensors, *variables])
    results = []
    for position in range(len(inputs)):
        expected = numeric_gradient(
            lambda current: loss_fn(*[Tensor(v) for v in current]), inputs, position, step
        )
        got = analytic[position]
        assert got is not None, f"no gradient for input {position}"
        np.testing.assert_allclose(got.numpy(), expected, rtol=rtol, atol=atol)
        results.append(got.numpy())
    for variable, got in zip(variables, analytic[len(inputs) :]):
        assert got is not None, f"no gradient for {variable.name}"
        expected = variable_gradient(lambda: loss_fn(*[Tensor(x) for x in inputs]), variable, step)
        np.testing.assert_allclose(
            got.numpy(), expected, rtol=rtol, atol=atol, err_msg=variable.name
        )
        results.append(got.numpy())
    return results
