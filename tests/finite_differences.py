"""Gradient checks shared by the convolution and pooling tests (not collected by pytest).

`central_differences(f, x)` is the one finite-difference loop of the tests;
`check_gradients(fn, arrays)` compares the tape's gradient of
`sum(fn(*inputs) * weights)` with central differences in float64;
`check_second_order` does the same for the gradient of the gradient;
`float32_gradients` runs the case in float32 and reports any float64 value or
gradient that a traced primitive produced on the way.
"""

import contextlib

import numpy as np
from autograd.core import VJPNode

from minikeras import GradientTape, Tensor, ops
from minikeras.engine import primitive

EPS = 1e-6


def _loss(fn, arrays, weights):
    out = fn(*[Tensor(array) for array in arrays])
    return float(np.sum(np.asarray(out, dtype=np.float64) * weights))


def central_differences(f, x, eps=EPS):
    """The gradient of scalar `f` at array `x` by central differences: the one copy.

    Every gradient check in the tests comes down to this loop; `x` is left as
    it was.
    """
    x = np.array(x, dtype=np.float64)
    grad = np.zeros_like(x)
    for position in np.ndindex(x.shape):
        original = x[position]
        x[position] = original + eps
        plus = float(f(x))
        x[position] = original - eps
        minus = float(f(x))
        x[position] = original
        grad[position] = (plus - minus) / (2 * eps)
    return grad


def numeric_gradient(loss, arrays, index, eps=EPS):
    """Central differences of `loss(arrays)` with respect to `arrays[index]`."""
    arrays = list(arrays)

    def at(x):
        return loss(arrays[:index] + [x] + arrays[index + 1 :])

    return central_differences(at, arrays[index], eps)


def variable_gradient(loss, variable, eps=EPS):
    """Central differences of `loss()` with respect to `variable` (assigned, then restored)."""
    original = variable.numpy()

    def at(value):
        variable.assign(value)
        return loss()

    try:
        return central_differences(at, original, eps)
    finally:
        variable.assign(original)


def tape_gradients(fn, arrays, weights, tensors=None):
    """The output and the gradients of `sum(fn(*inputs) * weights)` by `GradientTape`."""
    tensors = tensors or [Tensor(array) for array in arrays]
    with GradientTape() as tape:
        tape.watch(tensors)
        out = fn(*tensors)
        loss = ops.sum(out * weights)
    return out, loss, tape.gradient(loss, tensors, unconnected_gradients="zero")


def check_gradients(fn, arrays, seed=0):
    """Asserts that every input's gradient matches central differences (float64)."""
    arrays = [np.asarray(array, dtype=np.float64) for array in arrays]
    weights = np.random.default_rng(seed).standard_normal(fn(*arrays).shape)
    out, _, grads = tape_gradients(fn, arrays, weights)
    assert out.dtype == np.float64
    for index, grad in enumerate(grads):
        expected = numeric_gradient(lambda xs: _loss(fn, xs, weights), arrays, index)
        assert grad.dtype == np.float64 and grad.shape == arrays[index].shape
        scale = np.max(np.abs(expected), initial=1.0)
        np.testing.assert_allclose(
            grad.numpy(), expected, rtol=1e-5, atol=1e-6 * scale, err_msg=f"input {index}"
        )


def check_second_order(fn, arrays, seed=0):
    """Asserts that gradients of `sum(grads * directions)` match central differences."""
    arrays = [np.asarray(array, dtype=np.float64) for array in arrays]
    rng = np.random.default_rng(seed)
    weights = rng.standard_normal(fn(*arrays).shape)
    directions = [rng.standard_normal(array.shape) for array in arrays]

    def projected(xs):
        grads = tape_gradients(lambda *t: fn(*t) ** 2, xs, weights)[2]
        return sum(float(np.sum(g.numpy() * d)) for g, d in zip(grads, directions))

    tensors = [Tensor(array) for array in arrays]
    with GradientTape() as outer:
        outer.watch(tensors)
        grads = tape_gradients(lambda *t: fn(*t) ** 2, arrays, weights, tensors)[2]
        total = ops.sum(ops.stack([ops.sum(g * d) for g, d in zip(grads, directions)]))
    second = outer.gradient(total, tensors, unconnected_gradients="zero")
    for index, grad in enumerate(second):
        expected = numeric_gradient(projected, arrays, index)
        scale = np.max(np.abs(expected), initial=1.0)
        np.testing.assert_allclose(
            grad.numpy(), expected, rtol=1e-4, atol=1e-5 * scale, err_msg=f"input {index}"
        )


def _checked_vjp(name, vjp, leaks):
    def checked_vjp(g):
        grads = tuple(vjp(g))
        leaks.extend(
            f"{name} gradient {i}"
            for i, grad in enumerate(grads)
            if getattr(grad, "dtype", None) == np.float64
        )
        return grads

    return checked_vjp


@contextlib.contextmanager
def float64_leaks():
    """Collects where a traced value or gradient came out float64, on every node.

    A leak in an intermediate gradient can hide: adding it into a float32
    gradient in place casts it back, and `tape.gradient` casts each result to
    its source's dtype. So every node is watched on its own: those autograd's
    wrapper makes (`VJPNode.__init__`) and those our engine makes for fused and
    hot ops (`minikeras.engine.primitive.record`, the one place that makes them).
    """
    leaks, original_init, original_record = [], VJPNode.__init__, primitive.record

    def checked_init(node, value, fun, args, kwargs, parent_argnums, parents):
        original_init(node, value, fun, args, kwargs, parent_argnums, parents)
        name = getattr(fun, "__name__", repr(fun))
        if getattr(value, "dtype", None) == np.float64:
            leaks.append(f"{name} forward")
        node.vjp = _checked_vjp(name, node.vjp, leaks)

    def checked_record(ans, trace, parents, vjp):
        name = getattr(vjp, "__qualname__", repr(vjp)).split(".")[0]
        if getattr(ans, "dtype", None) == np.float64:
            leaks.append(f"{name} forward")
        return original_record(ans, trace, parents, _checked_vjp(name, vjp, leaks))

    VJPNode.__init__ = checked_init
    primitive.record = checked_record
    try:
        yield leaks
    finally:
        VJPNode.__init__ = original_init
        primitive.record = original_record


def check_float32(fn, arrays, seed=0):
    """Asserts float32 inputs give float32 outputs and gradients, with no float64 inside."""
    arrays = [np.asarray(array, dtype=np.float32) for array in arrays]
    weights = np.random.default_rng(seed).standard_normal(fn(*arrays).shape).astype(np.float32)
    with float64_leaks() as leaks:
        out, loss, grads = tape_gradients(fn, arrays, weights)
    assert out.dtype == np.float32 and loss.dtype == np.float32
    assert [g.dtype for g in grads] == [np.float32] * len(arrays)
    assert not leaks, "float64 inside: " + ", ".join(sorted(set(leaks)))
