"""The tape at its edges, found by a review against TensorFlow's and JAX's gradients.

Integer Variables and Tensors have no gradient (TensorFlow does not watch
them, and ops on them run as usual); `ops.clip` takes gradients through
bounds that are Tensors and gives `x` its own shape's gradient when array
bounds broadcast it; `ops.einsum` gives an operand its own shape's gradient
when a summed letter broadcasts against it (in `test_ops_gradients.py`).
"""

import numpy as np
import pytest

import minikeras as mk
from minikeras import ops


@pytest.mark.parametrize(
    "op",
    [ops.sum, ops.max, ops.mean, lambda v: v * 2, lambda v: v * 0.5, lambda v: ops.sum(v, 0)],
    ids=["sum", "max", "mean", "times 2", "times 0.5", "sum axis 0"],
)
def test_an_integer_variable_is_not_watched_and_its_ops_run(op):
    step, w = mk.Variable([1, 2, 3]), mk.Variable([1.0, 2.0, 3.0])
    assert step.trainable and step.dtype == np.int64
    with mk.GradientTape() as tape:
        counted = op(step)
        loss = ops.sum(w * w)
    np.testing.assert_array_equal(np.asarray(counted), np.asarray(op(np.array([1, 2, 3]))))
    grads = tape.gradient([loss, ops.sum(ops.cast(counted, "float32"))], [step, w])
    assert grads[0] is None
    np.testing.assert_array_equal(grads[1].numpy(), [2.0, 4.0, 6.0])


def test_watching_an_integer_tensor_warns_and_watches_nothing():
    t = mk.Tensor([1, 2, 3])
    with mk.GradientTape() as tape:
        with pytest.warns(UserWarning, match="int32.*not watched"):
            tape.watch(t)
        top = ops.max(t)
    assert int(top) == 3
    assert tape.gradient(ops.cast(top, "float32"), t) is None


def test_clip_takes_gradients_through_tensor_bounds_as_jax_does():
    # JAX's jnp.clip (Keras's JAX backend), by hand: away from the bounds, x's gradient
    # is 1 inside, 0 outside, and each bound gets the gradient of the values it clips;
    # where x equals a bound, the two share it half and half.
    x, s = mk.Variable([-1.5, 0.5, 2.0]), mk.Variable(1.0)
    with mk.GradientTape() as tape:
        y = ops.sum(ops.clip(x, -s, s))
    gx, gs = tape.gradient(y, [x, s])
    np.testing.assert_array_equal(gx.numpy(), [0.0, 1.0, 0.0])
    assert gs.numpy() == 0.0  # (-1 from the lower bound, +1 from the upper)
    x.assign([-1.0, 0.5, 2.0])  # x[0] on the lower bound
    with mk.GradientTape() as tape:
        y = ops.sum(ops.clip(x, -s, s))
    gx, gs = tape.gradient(y, [x, s])
    np.testing.assert_array_equal(gx.numpy(), [0.5, 1.0, 0.0])
    assert gs.numpy() == 0.5


def test_clip_by_array_bounds_that_broadcast_x_gives_x_its_own_shape():
    x = mk.Variable([0.2, 0.5, 2.0])
    lower = np.array([[0.0, 0.0, 0.0], [0.3, 0.6, 0.0]], "float32")
    with mk.GradientTape() as tape:
        y = ops.clip(x, lower, 1.0)
        total = ops.sum(y)
    assert y.shape == (2, 3)
    grad = tape.gradient(total, x)
    np.testing.assert_array_equal(grad.numpy(), [1.0, 1.0, 0.0])  # (0.2 and 0.5 clipped once)


def test_clip_by_numbers_is_one_op_with_no_gradient_at_a_bound():
    x = mk.Variable([0.0, 0.5, 1.0, 2.0])
    with mk.GradientTape() as tape:
        y = ops.sum(ops.clip(x, 0.0, 1.0))
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [0.0, 1.0, 0.0, 0.0])
