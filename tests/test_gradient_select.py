"""Piecewise float16 gradients select, as JAX: an inf gradient at a masked-out entry gives 0.

Under mixed precision a loss scale that overflows makes float16 gradients
infinite; relu's backward written `g * (out > 0)` turned the inf reaching a
dead unit into `inf * 0 = NaN`, which then reached every weight, and the
`LossScaleOptimizer` skipped steps and halved its scale more often than
Keras's. float32 and float64 gradients keep the cheaper product (see
`engine.gradient_select`). Checked by hand (the select is exact) and against
Keras on its JAX backend where it runs.
"""

import numpy as np
import pytest

import minikeras as mk
from minikeras.engine.gradient_select import select_gradient
from minikeras.ops import piecewise_activations as piecewise

# A point in each piece of every op below (and at no joint).
X = np.array([-7.0, -3.5, -1.5, -0.75, -0.25, 0.25, 0.75, 1.5, 3.5, 7.0], "float32")

# name -> (our op, Keras's op (given keras.ops), where the gradient passes through)
OPS = {
    "relu": (mk.ops.relu, lambda k: k.relu, X > 0),
    "relu6": (mk.ops.relu6, lambda k: k.relu6, (X > 0) & (X < 6)),
    "hard_sigmoid": (mk.ops.hard_sigmoid, lambda k: k.hard_sigmoid, abs(X) < 3),
    "hard_tanh": (mk.ops.hard_tanh, lambda k: k.hard_tanh, abs(X) <= 1),
    "hard_shrink": (mk.ops.hard_shrink, lambda k: k.hard_shrink, abs(X) > 0.5),
    "soft_shrink": (mk.ops.soft_shrink, lambda k: k.soft_shrink, abs(X) > 0.5),
    "sparse_plus": (mk.ops.sparse_plus, lambda k: k.sparse_plus, X > -1),
    "threshold": (
        lambda x: piecewise.threshold(x, 0.5, -2.0),
        lambda k: lambda x: k.threshold(x, 0.5, -2.0),
        X > 0.5,
    ),
    "where": (
        lambda x: mk.ops.where(x > 0, x, 0.0),
        lambda k: lambda x: k.where(x > 0, x, 0.0),
        X > 0,
    ),
}


def _grad_of_infinite_upstream(op, x, dtype="float32"):
    """d sum(op(x) * inf) / dx: the upstream gradient is inf at every entry."""
    x = mk.Variable(x.astype(dtype), dtype=dtype)
    with mk.GradientTape() as tape:
        total = mk.ops.sum(mk.ops.multiply(op(x), np.full(x.shape, np.inf, dtype)))
    return tape.gradient(total, x).numpy()


@pytest.mark.parametrize("name", sorted(OPS))
def test_an_infinite_float16_gradient_reaches_only_the_entries_the_op_passes(name):
    op, _, passes = OPS[name]
    with np.errstate(invalid="ignore"):  # (the forward product inf * 0 is NaN; not checked)
        grad = _grad_of_infinite_upstream(op, X, "float16")
    assert grad.dtype == "float16"
    np.testing.assert_array_equal(grad[~passes], 0.0)  # was NaN with a product
    assert np.all(np.isinf(grad[passes]))


@pytest.mark.parametrize("name", sorted(OPS))
def test_float32_gradients_keep_the_product(name):
    # (the cheaper one-ufunc form: an infinite gradient at a masked-out entry gives NaN)
    op, _, passes = OPS[name]
    with np.errstate(invalid="ignore"):
        grad = _grad_of_infinite_upstream(op, X, "float32")
    assert grad.dtype == "float32"
    assert np.all(np.isinf(grad[passes]))
    assert np.all(np.isnan(grad[~passes]))
    finite = mk.Variable(X)
    with mk.GradientTape() as tape:
        total = mk.ops.sum(op(finite) * 3.0)
    expected = np.where(passes, 3.0 * _slope(name), 0.0)
    np.testing.assert_allclose(tape.gradient(total, finite).numpy(), expected, rtol=1e-6)


def _slope(name):
    """Each op's derivative where its gradient passes, at the points of X."""
    if name == "hard_sigmoid":
        return 1.0 / 6.0
    if name == "sparse_plus":
        return np.where(X >= 1, 1.0, (X + 1) / 2.0)
    return 1.0


def test_dense_and_conv_with_a_fused_relu_give_a_dead_unit_zero_not_nan():
    # A dead unit (pre-activation < 0) with an infinite upstream gradient passes 0 back;
    # its kernel column gets 0 and the live one inf, none NaN.
    x = np.array([[1.0, 2.0]], "float16")
    dense = mk.layers.Dense(2, activation="relu", kernel_initializer="ones", dtype="float16")
    conv = mk.layers.Conv1D(2, 1, activation="relu", kernel_initializer="ones", dtype="float16")
    for layer, inputs in ((dense, x), (conv, x[:, :, None].repeat(2, axis=2))):
        layer.build(inputs.shape)
        layer.bias.assign(np.array([0.0, -10.0], "float32"))  # unit 1 is dead
        with mk.GradientTape() as tape, np.errstate(invalid="ignore"):
            # (ignored: the forward inf * 0, and OpenBLAS's padding of a product with inf,
            # which raises the invalid flag while every entry it returns is right)
            total = mk.ops.sum(mk.ops.multiply(layer(inputs), np.inf))
        with np.errstate(invalid="ignore"):
            kernel_grad, bias_grad = tape.gradient(total, [layer.kernel, layer.bias])
        assert np.isinf(bias_grad.numpy()[0]) and bias_grad.numpy()[1] == 0.0, layer.name
        assert not np.isnan(kernel_grad.numpy()).any(), layer.name


def test_select_gradient_keeps_nan_where_kept_and_the_dtype():
    keep = np.array([True, False, True, False])
    g = np.array([np.nan, np.nan, -2.5, np.inf], "float16")
    out = select_gradient(keep, g)
    assert out.dtype == "float16"
    np.testing.assert_array_equal(out, np.array([np.nan, 0.0, -2.5, 0.0], "float16"))
    for dtype in ("float32", "float64"):  # (the product)
        g = np.array([np.nan, 1.5, -2.5, 4.0], dtype)
        out = select_gradient(keep, g)
        assert out.dtype == dtype
        np.testing.assert_array_equal(out, np.array([np.nan, 0.0, -2.5, 0.0], dtype))
    for dtype in ("float16", "float32"):
        g = np.array([[1.0, -np.inf]], dtype)
        assert select_gradient(np.array([False, True]), g, out=g) is g  # broadcast, in place
        np.testing.assert_array_equal(g, [[0.0, -np.inf]])


@pytest.mark.parametrize("name", sorted(OPS))
def test_infinite_gradients_match_keras_on_jax(name):
    keras = pytest.importorskip("keras")
    if keras.backend.backend() != "jax":
        pytest.skip("the gradient is taken with jax.grad")
    import jax
    import jax.numpy as jnp

    op, keras_op, _ = OPS[name]
    keras_op = keras_op(keras.ops)
    half = X.astype("float16")
    expected = jax.grad(lambda x: jnp.sum(keras_op(x) * jnp.inf))(jnp.asarray(half))
    with np.errstate(invalid="ignore"):
        ours = _grad_of_infinite_upstream(op, X, "float16")
    np.testing.assert_array_equal(ours, np.asarray(expected))


def test_float16_dropout_selects_too_an_inf_in_a_dropped_entry_gives_zero():
    # (JAX's dropout selects; a product with the 0/scale mask gave NaN there)
    x = mk.Variable(np.full((4, 6), np.inf, "float16"), dtype="float16")
    rng = np.random.default_rng(3)
    with mk.GradientTape() as tape:
        out = mk.ops.dropout_mask.dropout_mask(x, 0.5, (4, 6), rng)
    kept = np.isinf(out.numpy())
    assert 0 < kept.sum() < kept.size
    np.testing.assert_array_equal(out.numpy()[~kept], 0.0)  # not NaN
    grad = tape.gradient(out, x, output_gradients=mk.ops.ones((4, 6), "float16")).numpy()
    np.testing.assert_array_equal(grad[kept], 2.0)  # the scale 1 / (1 - rate)
    np.testing.assert_array_equal(grad[~kept], 0.0)
    # An infinite upstream gradient: the dropped entries still get 0.
    with mk.GradientTape() as tape:
        out = mk.ops.dropout_mask.dropout_mask(
            x, 0.5, (1, 6), np.random.default_rng(3)
        )  # (one mask row, broadcast over the batch)
    upstream = mk.ops.full((4, 6), np.inf, "float16")
    grad = tape.gradient(out, x, output_gradients=upstream).numpy()
    kept = np.isinf(out.numpy())
    assert np.all(kept == kept[:1])  # the mask broadcast
    np.testing.assert_array_equal(grad[~kept], 0.0)
    assert np.all(np.isposinf(grad[kept]))


def test_dropout_with_finite_inputs_is_the_scaled_product():
    x = np.random.default_rng(0).normal(size=(5, 7)).astype("float32")
    out = mk.ops.dropout_mask.dropout_mask(
        mk.ops.convert_to_tensor(x), 0.25, (5, 7), np.random.default_rng(1)
    )
    keep = np.random.default_rng(1).random((5, 7), dtype=np.float32) >= 0.25
    np.testing.assert_array_equal(out.numpy(), x * keep.astype("float32") * np.float32(1 / 0.75))
    assert out.dtype == "float32"
