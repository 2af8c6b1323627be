"""`ops.custom_gradient`: Keras's decorator, under GradientTape and in fit.

The gradients are checked against hand-computed values and against finite
differences where the custom gradient is the true one."""

import numpy as np
import pytest
from finite_differences import check_float32, check_gradients, check_second_order

import minikeras as mk
from minikeras import ops


@ops.custom_gradient
def log1pexp(x):
    """Keras's docstring example, in the form it calls portable."""
    e = ops.exp(x)

    def grad(*args, upstream=None):
        if upstream is None:
            (upstream,) = args
        return ops.multiply(upstream, 1.0 - 1.0 / ops.add(1, e))

    return ops.log(1 + e), grad


@ops.custom_gradient
def log1pexp_jax(x):
    e = ops.exp(x)

    def grad(upstream):
        return ops.multiply(upstream, 1.0 - 1.0 / ops.add(1, e))

    return ops.log(1 + e), grad


@ops.custom_gradient
def log1pexp_torch(x):
    e = ops.exp(x)

    def grad(*args, upstream):
        assert len(args) == 1 and np.array_equal(args[0].numpy(), x.numpy())
        return ops.multiply(upstream, 1.0 - 1.0 / ops.add(1, e))

    return ops.log(1 + e), grad


@ops.custom_gradient
def clip_gradient(x, bound):
    """Identity forward; the gradient clipped to [-bound, bound], none for bound."""

    def grad(upstream):
        return ops.clip(upstream, -bound, bound), None

    return x * 1.0, grad


@pytest.mark.parametrize("fn", [log1pexp, log1pexp_jax, log1pexp_torch])
def test_keras_docstring_example_in_each_backend_form(fn):
    x = mk.Variable([-3.0, 0.0, 2.0, 50.0])
    with mk.GradientTape() as tape:
        y = fn(x)
    grad = tape.gradient(y, x)
    # sigmoid(x), by hand; at 50 the naive gradient exp(x) / (1 + exp(x)) is fine,
    # the custom one too: the point is that both outputs and gradients are finite.
    expected = 1.0 / (1.0 + np.exp(-np.array([-3.0, 0.0, 2.0, 50.0])))
    np.testing.assert_allclose(grad.numpy(), expected, rtol=1e-6)
    assert y.dtype == grad.dtype == np.float32
    np.testing.assert_allclose(y.numpy()[:3], np.log1p(np.exp([-3.0, 0.0, 2.0])), rtol=1e-6)


def test_true_custom_gradient_matches_finite_differences_first_and_second_order():
    data = np.array([[-2.0, -0.5, 0.0], [0.3, 1.0, 4.0]], "float32")
    check_gradients(log1pexp, [data])
    check_second_order(log1pexp, [data])
    check_float32(log1pexp, [data])


def test_gradient_is_the_custom_one_not_the_forwards():
    x = mk.Variable([-5.0, 0.5, 5.0])
    with mk.GradientTape() as tape:
        y = ops.sum(clip_gradient(x, 1.0) * 10.0)
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [1.0, 1.0, 1.0])
    np.testing.assert_array_equal(clip_gradient(x, 1.0).numpy(), [-5.0, 0.5, 5.0])


def test_several_outputs_and_nested_arguments():
    @ops.custom_gradient
    def pair(inputs):
        a, b = inputs["a"], inputs["b"]

        def grad(upstream):
            da, db = upstream
            return [da * 10.0, db * 100.0]  # in the flattened order: a, b

        return (a * 2.0, b * 3.0), grad

    a, b = mk.Variable([1.0, 2.0]), mk.Variable([3.0])
    with mk.GradientTape(persistent=True) as tape:
        p, q = pair({"a": a, "b": b})
        only_q = ops.sum(q)
        both = ops.sum(p) + ops.sum(q)
    np.testing.assert_array_equal(p.numpy(), [2.0, 4.0])
    grads = tape.gradient(only_q, [a, b])
    np.testing.assert_array_equal(grads[0].numpy(), [0.0, 0.0])  # q's gradient reached no a
    np.testing.assert_array_equal(grads[1].numpy(), [100.0])
    grads = tape.gradient(both, [a, b])
    np.testing.assert_array_equal(grads[0].numpy(), [10.0, 10.0])
    np.testing.assert_array_equal(grads[1].numpy(), [100.0])


def test_float64_gradient_is_cast_to_the_float32_argument():
    @ops.custom_gradient
    def f(x):
        return x * 2.0, lambda upstream: np.full(x.shape, 2.0)  # float64 by numpy

    x = mk.Variable([1.0, 2.0])
    with mk.GradientTape() as tape:
        y = f(x)
    grad = tape.gradient(y, x)
    assert grad.dtype == np.float32
    np.testing.assert_array_equal(grad.numpy(), [2.0, 2.0])


def test_outside_a_tape_it_is_the_function():
    np.testing.assert_allclose(log1pexp(np.float32(0.0)).numpy(), np.log(2.0), rtol=1e-6)
    assert log1pexp.__name__ == "log1pexp" and "docstring example" in log1pexp.__doc__


class ScaledMatmul(mk.layers.Layer):
    """x @ kernel, whose kernel's gradient is twice the true one."""

    def build(self, input_shape):
        self.kernel = self.add_weight(shape=(input_shape[-1], 1), initializer="ones")

    def call(self, x):
        return _scaled_matmul(x, self.kernel)


@ops.custom_gradient
def _scaled_matmul(x, kernel):
    def grad(upstream):
        return (
            ops.matmul(upstream, ops.transpose(kernel)),
            2.0 * ops.matmul(ops.transpose(x), upstream),
        )

    return ops.matmul(x, kernel), grad


@pytest.mark.parametrize("jit_compile", [False, "auto"])
def test_fit_trains_a_layer_by_its_custom_gradient(jit_compile):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(8, 3)).astype("float32")
    y = rng.normal(size=(8, 1)).astype("float32")
    model = mk.Sequential([mk.Input((3,)), ScaledMatmul()])
    model.compile(optimizer=mk.optimizers.SGD(0.1), loss="mse", jit_compile=jit_compile)
    model.fit(x, y, epochs=3, batch_size=4, verbose=0, shuffle=False)
    kernel = np.ones((3, 1))
    for _ in range(3):
        for start in (0, 4):
            xb, yb = x[start : start + 4], y[start : start + 4]
            kernel -= 0.1 * 2.0 * xb.T @ (2.0 / 4 * (xb @ kernel - yb))
    assert model.layers[0].kernel.dtype == np.float32
    np.testing.assert_allclose(model.layers[0].kernel.numpy(), kernel, rtol=1e-5, atol=1e-6)


def test_refusals():
    @ops.custom_gradient
    def no_pair(x):
        return x

    @ops.custom_gradient
    def wrong_count(x, y):
        return x + y, lambda upstream: upstream

    @ops.custom_gradient
    def wrong_shape(x):
        return ops.sum(x), lambda upstream: upstream

    outside = mk.Variable([2.0])

    @ops.custom_gradient
    def closes_over(x):
        return x * outside, lambda upstream: upstream

    x = mk.Variable([1.0, 2.0])
    with pytest.raises(TypeError, match="no_pair must return a pair"):
        no_pair(x)
    for fn, match in [
        (wrong_count, "returned 1 gradient\\(s\\) for 2 argument"),
        (wrong_shape, "gave argument 0 a gradient of shape \\(\\), but the argument has shape"),
    ]:
        with mk.GradientTape() as tape:
            y = fn(x, x) if fn is wrong_count else fn(x)
        with pytest.raises(ValueError, match=match):
            tape.gradient(y, x)
    with pytest.raises(TypeError, match="closes_over read a Variable"), mk.GradientTape():
        closes_over(mk.Variable([1.0]))
    with pytest.raises(TypeError, match="inside a Layer's call"):
        log1pexp(mk.Input((3,)))


def test_same_gradient_as_keras():
    keras = pytest.importorskip("keras")

    @keras.ops.custom_gradient
    def keras_log1pexp(x):
        e = keras.ops.exp(x)

        def grad(*args, upstream=None):
            if upstream is None:
                (upstream,) = args
            return keras.ops.multiply(upstream, 1.0 - 1.0 / keras.ops.add(1, e))

        return keras.ops.log(1 + e), grad

    import jax

    data = np.array([-3.0, 0.0, 2.0, 30.0], "float32")
    expected = jax.grad(lambda v: keras_log1pexp(v).sum())(data)
    x = mk.Variable(data)
    with mk.GradientTape() as tape:
        y = ops.sum(log1pexp(x))
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), np.asarray(expected), rtol=1e-6)
