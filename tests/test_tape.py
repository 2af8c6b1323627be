"""GradientTape as TensorFlow 2 users know it, checked against hand-computed values."""

import collections

import numpy as np
import pytest
from finite_differences import central_differences

from minikeras import GradientTape, Tensor, Variable, ops

# ---------------------------------------------------------------- what is watched


def test_trainable_variables_are_watched_automatically():
    w = Variable([1.0, -2.0, 3.0])
    with GradientTape() as tape:
        loss = ops.sum(w * w)
    grad = tape.gradient(loss, w)
    assert type(grad) is Tensor
    np.testing.assert_array_equal(grad.numpy(), [2.0, -4.0, 6.0])


def test_non_trainable_variables_are_not_watched_unless_asked():
    frozen = Variable([2.0], trainable=False)
    with GradientTape() as tape:
        loss = ops.sum(frozen * frozen)
    assert tape.gradient(loss, frozen) is None

    with GradientTape() as tape:
        tape.watch(frozen)
        loss = ops.sum(frozen * frozen)
    np.testing.assert_array_equal(tape.gradient(loss, frozen).numpy(), [4.0])


def test_tensors_are_watched_with_watch():
    x = Tensor([1.0, 2.0])
    with GradientTape() as tape:
        y = ops.sum(x**3)
    assert tape.gradient(y, x) is None

    with GradientTape() as tape:
        tape.watch(x)
        y = ops.sum(x**3)
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), [3.0, 12.0])
    assert type(x._value) is np.ndarray  # watching leaves no trace after the block


def test_watch_takes_a_structure():
    a, b = Tensor(1.0), Tensor(2.0)
    with GradientTape() as tape:
        tape.watch([a, {"b": b}])
        y = a * b
    grads = tape.gradient(y, (a, b))
    assert [float(g) for g in grads] == [2.0, 1.0]


def test_watch_rejects_non_tensors_and_use_outside_the_block():
    tape = GradientTape()
    with tape, pytest.raises(TypeError, match="ndarray"):
        tape.watch(np.ones(2))
    with pytest.raises(RuntimeError, match="with"):
        tape.watch(Tensor(1.0))


def test_watch_accessed_variables_false():
    w, b = Variable(3.0), Variable(1.0)
    with GradientTape(persistent=True, watch_accessed_variables=False) as tape:
        tape.watch(b)
        y = w * w + b * w
    assert tape.gradient(y, w) is None
    assert float(tape.gradient(y, b)) == 3.0


def test_a_variable_read_several_times_accumulates_gradient():
    w = Variable(2.0)
    with GradientTape() as tape:
        y = w * w + 3 * w + ops.square(w) + w.value
    # d/dw (2 w^2 + 4 w) = 4 w + 4
    assert float(tape.gradient(y, w)) == 12.0


def test_variables_read_before_the_tape_are_constants():
    w = Variable(2.0)
    before = w * 1.0
    with GradientTape() as tape:
        y = before * w
    assert float(tape.gradient(y, w)) == 2.0


# ---------------------------------------------------------------- gradient's arguments and result


def test_gradient_returns_the_structure_of_sources():
    a, b, c = Variable(1.0), Variable(2.0), Variable(3.0)
    with GradientTape(persistent=True) as tape:
        y = a * b * c
    Pair = collections.namedtuple("Pair", "first second")
    assert float(tape.gradient(y, a)) == 6.0
    assert [float(g) for g in tape.gradient(y, [a, b, c])] == [6.0, 3.0, 2.0]
    as_tuple = tape.gradient(y, (a, b))
    assert type(as_tuple) is tuple and [float(g) for g in as_tuple] == [6.0, 3.0]
    as_dict = tape.gradient(y, {"c": c, "a": a})
    assert list(as_dict) == ["c", "a"] and float(as_dict["c"]) == 2.0
    nested = tape.gradient(y, {"x": [a, (b,)], "y": {"z": c}})
    assert float(nested["x"][0]) == 6.0 and float(nested["x"][1][0]) == 3.0
    assert float(nested["y"]["z"]) == 2.0
    pair = tape.gradient(y, Pair(a, c))
    assert type(pair) is Pair and float(pair.second) == 2.0
    assert tape.gradient(y, []) == []


def test_unconnected_sources_give_none_or_zeros():
    used, unused = Variable([1.0, 2.0]), Variable(np.ones((2, 3)), dtype="float32")
    with GradientTape(persistent=True) as tape:
        y = ops.sum(used * 2.0)
    assert tape.gradient(y, [used, unused])[1] is None
    zeros = tape.gradient(y, [used, unused], unconnected_gradients="zero")[1]
    assert zeros.shape == (2, 3) and zeros.dtype == np.float32
    assert not zeros.numpy().any()
    with pytest.raises(ValueError, match="unconnected_gradients"):
        tape.gradient(y, used, unconnected_gradients="zeros")


def test_a_target_that_depends_on_nothing_gives_none():
    w = Variable(1.0)
    with GradientTape() as tape:
        y = Tensor(3.0) * 2.0
    assert tape.gradient(y, w) is None


def test_non_persistent_tape_allows_one_gradient_call():
    w = Variable(1.0)
    with GradientTape() as tape:
        y = w * w
    tape.gradient(y, w)
    with pytest.raises(RuntimeError, match="persistent"):
        tape.gradient(y, w)


def test_a_bad_call_does_not_use_up_a_non_persistent_tape():
    w = Variable(1.0)
    with GradientTape() as tape:
        y = w * w
    with pytest.raises(TypeError, match="sources"):
        tape.gradient(y, np.ones(1))
    assert float(tape.gradient(y, w)) == 2.0


def test_persistent_tape_allows_several_calls():
    w, b = Variable(2.0), Variable(1.0)
    with GradientTape(persistent=True) as tape:
        y = w * w * b
        z = w + b
    assert float(tape.gradient(y, w)) == 4.0
    assert float(tape.gradient(y, b)) == 4.0
    assert float(tape.gradient(z, w)) == 1.0
    assert float(tape.gradient(y, w)) == 4.0


def test_gradient_before_entering_raises():
    with pytest.raises(RuntimeError, match="with"):
        GradientTape().gradient(Tensor(1.0), Variable(1.0))


def test_a_tape_cannot_be_entered_twice():
    tape = GradientTape()
    with tape:
        pass
    with pytest.raises(RuntimeError, match="once"), tape:
        pass


def test_non_scalar_target_is_summed_first():
    w = Variable([[1.0, 2.0], [3.0, 4.0]])
    x = np.array([[0.5, -1.0], [2.0, 1.5]], dtype="float32")
    with GradientTape(persistent=True) as tape:
        y = ops.matmul(x, w) ** 2
        total = ops.sum(y)
    np.testing.assert_allclose(
        tape.gradient(y, w).numpy(), tape.gradient(total, w).numpy(), rtol=1e-6
    )
    # d/dw sum((x w)^2) = 2 x^T (x w)
    np.testing.assert_allclose(tape.gradient(y, w).numpy(), 2 * x.T @ (x @ w.numpy()), rtol=1e-6)


def test_output_gradients_weight_the_target():
    w = Variable([1.0, 2.0, 3.0])
    weights = np.array([1.0, 0.5, -2.0], dtype="float32")
    with GradientTape(persistent=True) as tape:
        y = w * w
        weighted = ops.sum(y * weights)
    expected = tape.gradient(weighted, w).numpy()
    np.testing.assert_allclose(expected, 2 * w.numpy() * weights)
    for given in [weights, Tensor(weights), weights.tolist()]:
        np.testing.assert_allclose(tape.gradient(y, w, output_gradients=given).numpy(), expected)
    with pytest.raises(ValueError, match=r"\(2,\).*\(3,\)"):
        tape.gradient(y, w, output_gradients=[1.0, 2.0])


def test_a_list_of_targets_means_their_sum():
    w = Variable([1.0, 2.0])
    with GradientTape(persistent=True) as tape:
        a = ops.sum(w * 3.0)
        b = w * w
    np.testing.assert_allclose(tape.gradient([a, b], w).numpy(), 3.0 + 2 * w.numpy())
    np.testing.assert_allclose(tape.gradient({"a": a, "again": a}, w).numpy(), [6.0, 6.0])
    np.testing.assert_allclose(
        tape.gradient([a, b], w, output_gradients=[2.0, [1.0, 0.0]]).numpy(), [8.0, 6.0]
    )


def test_targets_that_depend_on_each_other():
    w = Variable([1.0, 2.0])
    with GradientTape() as tape:
        b = w * w
        a = ops.sum(b * 3.0)
    # d(a + sum(b))/dw = 3 * 2w + 2w
    np.testing.assert_allclose(tape.gradient([b, a], w).numpy(), 8 * w.numpy())


def test_a_target_that_another_target_uses_is_walked_once():
    # b is a target and a step of a; the walk from both must count b's own
    # inputs (the inner node h) once, or h never becomes ready and w loses
    # b's share.
    w = Variable([0.5, -1.0])
    with GradientTape() as tape:
        h = w * 2.0
        b = ops.tanh(h)
        a = ops.sum(b * 3.0)
    # d(sum(b) + a)/dw = (1 + 3) * 2 * (1 - tanh(2w)^2)
    expected = 4 * 2 * (1 - np.tanh(2 * w.numpy()) ** 2)
    np.testing.assert_allclose(tape.gradient([b, a], w).numpy(), expected, rtol=1e-6)


def test_gradient_of_a_variable_with_respect_to_itself():
    w = Variable([1.0, 2.0])
    with GradientTape() as tape:
        _ = w * 1.0
    np.testing.assert_array_equal(tape.gradient(w, w).numpy(), [1.0, 1.0])


# ---------------------------------------------------------------- intermediate tensors


def test_gradient_with_respect_to_an_intermediate_tensor():
    w = Variable([1.0, 2.0])
    with GradientTape(persistent=True) as tape:
        hidden = w * 3.0
        y = ops.sum(hidden**2)
    # dy/dhidden = 2 * hidden; dy/dw = 2 * hidden * 3
    np.testing.assert_allclose(tape.gradient(y, hidden).numpy(), [6.0, 12.0])
    grads = tape.gradient(y, [w, hidden])
    np.testing.assert_allclose(grads[0].numpy(), [18.0, 36.0])
    np.testing.assert_allclose(grads[1].numpy(), [6.0, 12.0])


def test_gradient_with_respect_to_a_watched_intermediate_of_constants():
    with GradientTape() as tape:
        hidden = Tensor([1.0, 2.0]) * 2.0
        tape.watch(hidden)
        y = ops.sum(hidden**2)
    np.testing.assert_allclose(tape.gradient(y, hidden).numpy(), [4.0, 8.0])


# ---------------------------------------------------------------- nesting and higher order


def test_nested_tapes_each_see_their_own_part():
    w = Variable(2.0)
    with GradientTape() as outer:
        a = w * w
        with GradientTape() as inner:
            b = w * 3.0
        c = a + b
    assert float(inner.gradient(b, w)) == 3.0
    assert float(outer.gradient(c, w)) == 7.0


def test_second_derivative_of_a_variable_through_nested_tapes():
    x = Variable(3.0)
    with GradientTape() as outer:
        with GradientTape() as inner:
            y = x**3
        dy_dx = inner.gradient(y, x)
    d2y_dx2 = outer.gradient(dy_dx, x)
    assert float(dy_dx) == 27.0  # 3 x^2
    assert float(d2y_dx2) == 18.0  # 6 x
    assert dy_dx.dtype == np.float32 and d2y_dx2.dtype == np.float32


@pytest.mark.parametrize("watch_order", ["outer_first", "inner_first"])
def test_second_derivative_of_a_watched_tensor_through_nested_tapes(watch_order):
    x = Tensor([3.0, -1.0])
    with GradientTape() as outer:
        if watch_order == "outer_first":
            outer.watch(x)
        with GradientTape() as inner:
            inner.watch(x)
            if watch_order == "inner_first":
                outer.watch(x)
            y = x**3
        dy_dx = inner.gradient(y, x)
    d2y_dx2 = outer.gradient(dy_dx, x)
    np.testing.assert_allclose(dy_dx.numpy(), [27.0, 3.0])
    np.testing.assert_allclose(d2y_dx2.numpy(), [18.0, -6.0])
    assert type(x._value) is np.ndarray


def test_third_derivative_through_three_tapes():
    x = Variable(2.0)
    with GradientTape() as t1:
        with GradientTape() as t2:
            with GradientTape() as t3:
                y = x**4
            g1 = t3.gradient(y, x)
        g2 = t2.gradient(g1, x)
    g3 = t1.gradient(g2, x)
    assert [float(g) for g in (g1, g2, g3)] == [32.0, 48.0, 48.0]  # 4x^3, 12x^2, 24x


def test_hessian_vector_product_with_output_gradients():
    w = Variable([1.0, 2.0])
    vector = Tensor([1.0, -1.0])
    with GradientTape() as outer:
        with GradientTape() as inner:
            y = ops.sum(w**3)
        grad = inner.gradient(y, w)  # 3 w^2
        product = ops.sum(grad * vector)
    # Hessian is diag(6 w); times vector
    np.testing.assert_allclose(outer.gradient(product, w).numpy(), [6.0, -12.0])


def test_nested_gradient_matches_finite_differences():
    def first_derivative(value):
        x = Variable(value, dtype="float64")
        with GradientTape() as tape:
            y = ops.sum(ops.tanh(x) * x**2)
        return tape.gradient(y, x).numpy()

    x = Variable(np.array([0.3, -0.8]), dtype="float64")
    with GradientTape() as outer:
        with GradientTape() as inner:
            y = ops.sum(ops.tanh(x) * x**2)
        grad = inner.gradient(y, x)
        grad_sum = ops.sum(grad)
    expected = central_differences(lambda v: first_derivative(v).sum(), x.numpy())
    np.testing.assert_allclose(outer.gradient(grad_sum, x).numpy(), expected, rtol=1e-6)


# ---------------------------------------------------------------- after the block, stale tensors


def test_gradient_after_the_block_exits():
    w = Variable(3.0)
    with GradientTape() as tape:
        y = w * w
    assert float(tape.gradient(y, w)) == 6.0


def test_work_after_the_block_is_not_recorded():
    w = Variable(3.0)
    with GradientTape(persistent=True) as tape:
        y = w * w
    z = y * 2.0 + w
    assert tape.gradient(z, w) is None
    assert float(tape.gradient(y, w)) == 6.0


def test_stale_tensors_in_a_new_tape_are_constants():
    w = Variable(3.0)
    with GradientTape(persistent=True) as old:
        y = w * w
    with GradientTape() as new:
        z = y * w
    assert float(new.gradient(z, w)) == 9.0  # y is the constant 9
    assert old.gradient(z, w) is None  # the old tape did not record z
    assert float(old.gradient(y, w)) == 6.0  # and is intact


def test_a_running_total_across_steps_stays_plain():
    w = Variable(1.0)
    total = 0.0
    for _ in range(3):
        with GradientTape() as tape:
            loss = w * 2.0
        tape.gradient(loss, w)
        total = total + loss
    assert float(total) == 6.0
    assert isinstance(total._value, (np.ndarray, np.generic))  # no chain of old graphs


def test_stale_tensor_watched_in_a_new_tape():
    x = Tensor(2.0)
    with GradientTape() as old:
        old.watch(x)
        y = x * x
    with GradientTape() as new:
        new.watch(y)
        z = y**3
    assert float(new.gradient(z, y)) == 48.0  # 3 y^2
    assert float(old.gradient(y, x)) == 4.0


def test_exceptions_inside_the_block_still_end_recording():
    x = Tensor(1.0)
    tape = GradientTape()
    with pytest.raises(KeyError), tape:
        tape.watch(x)
        raise KeyError("in the block")
    assert type(x._value) is np.ndarray
    with GradientTape() as fresh:
        y = x * Variable(2.0)
    assert fresh.gradient(y, x) is None


def test_recorded_values_survive_later_assignment():
    w = Variable([1.0, 2.0])
    with GradientTape() as tape:
        loss = ops.sum(w * w)
    w.assign([10.0, 10.0])
    np.testing.assert_array_equal(tape.gradient(loss, w).numpy(), [2.0, 4.0])


# ---------------------------------------------------------------- dtypes and references


def test_gradients_of_float32_variables_are_float32():
    w = Variable(np.array([[0.5, -1.0], [1.5, 2.0]]))  # float64 data, float32 variable
    x = np.array([[1.0, 2.0]])  # float64 data
    with GradientTape() as tape:
        y = ops.mean(ops.tanh(x @ w) ** 2) + ops.sum(ops.sqrt(abs(w))) / 3
    grad = tape.gradient(y, w)
    assert w.dtype == np.float32 and grad.dtype == np.float32


def test_a_list_of_variables_takes_the_general_path_where_it_must():
    # A list of Variables alone is answered without the general structure walk;
    # a Tensor among them, a float64 gradient for a float32 weight, or a
    # float64 weight must come out exactly as the general path gives them.
    w32 = Variable(np.array([0.5, -1.0]))  # float32
    w64 = Variable(np.array([2.0, 3.0]), dtype="float64")
    x = Tensor(np.array([1.0, 4.0]))  # float64
    data = np.array([3.0, -2.0])  # float64: y's part in w32 is computed in float64
    with GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = ops.sum(w32 * data) + ops.sum(w64 * x)
    g32, g64 = tape.gradient(y, [w32, w64])
    assert g32.dtype == np.float32 and g64.dtype == np.float64
    np.testing.assert_array_equal(g32.numpy(), [3.0, -2.0])
    np.testing.assert_array_equal(g64.numpy(), [1.0, 4.0])
    mixed = tape.gradient(y, (w64, x))
    assert type(mixed) is tuple and mixed[1].dtype == np.float64
    np.testing.assert_array_equal(mixed[1].numpy(), [2.0, 3.0])


def test_gradients_match_finite_differences():
    x = np.array([[1.0, -0.5, 2.0], [0.3, 0.8, -1.2]], dtype="float64")
    kernel = np.array([[0.2, -0.4], [0.7, 0.1], [-0.3, 0.5]])

    def loss(k):
        return ops.sum(ops.softmax(ops.tanh(x @ k) * 2.0) ** 2)

    w = Variable(kernel, dtype="float64")
    with GradientTape() as tape:
        y = loss(w)
    expected = central_differences(lambda k: float(loss(Tensor(k))), kernel)
    np.testing.assert_allclose(tape.gradient(y, w).numpy(), expected, rtol=1e-6, atol=1e-9)


def test_gradients_match_hand_computed_dense_layer():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 3)).astype("float32")
    target = rng.standard_normal((4, 2)).astype("float32")
    kernel = Variable(rng.standard_normal((3, 2)))
    bias = Variable(np.zeros(2))
    with GradientTape() as tape:
        error = x @ kernel + bias - target
        loss = ops.mean(error**2)
    grad_kernel, grad_bias = tape.gradient(loss, [kernel, bias])
    residual = x @ kernel.numpy() + bias.numpy() - target
    np.testing.assert_allclose(grad_kernel.numpy(), 2 * x.T @ residual / 8, rtol=1e-5)
    np.testing.assert_allclose(grad_bias.numpy(), 2 * residual.sum(0) / 8, rtol=1e-5)


# ---------------------------------------------------------------- gradients written in place


def test_a_vjp_may_overwrite_only_a_gradient_nobody_else_holds():
    from autograd.extend import defvjp_argnums, primitive

    from minikeras.engine.primitive import call_primitive
    from minikeras.engine.tape import may_overwrite

    seen = []

    @primitive
    def probe(x):
        return x * 1.0

    def probe_vjp(argnums, ans, args, kwargs):
        def vjp(g):
            seen.append(may_overwrite(g))
            return [g * 1.0]

        return vjp

    defvjp_argnums(probe, probe_vjp)

    def probed(tensor):
        return Tensor(call_primitive(probe, tensor._value))

    w = Variable([1.0, 2.0])
    with GradientTape() as tape:
        y = probed(w * 2.0)  # its gradient comes fresh from sum's VJP
        loss = ops.sum(y)
    tape.gradient(loss, w)
    assert seen == [True]

    seen.clear()
    with GradientTape() as tape:
        y = probed(w * 2.0)
        loss = ops.sum(y)
    tape.gradient(loss, [w, y])  # the gradient of y is a result: not to be written
    assert seen == [False]

    seen.clear()
    assert not may_overwrite(np.ones(2))  # outside a tape's backward pass


def test_relu_masks_applied_in_place_leave_shared_gradients_intact():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 4))
    k1, k2 = rng.standard_normal((4, 5)), rng.standard_normal((4, 5))

    def loss_of(a, b):
        # add's VJP hands the same gradient array to both dense layers.
        return ops.sum(
            (ops.dense(x, a, activation="relu") + ops.dense(x, b, activation="relu")) ** 2
        )

    a, b = Variable(k1, dtype="float64"), Variable(k2, dtype="float64")
    with GradientTape() as tape:
        loss = loss_of(a, b)
    grads = tape.gradient(loss, [a, b])
    expected_a = central_differences(lambda v: float(loss_of(v, k2)), k1)
    expected_b = central_differences(lambda v: float(loss_of(k1, v)), k2)
    np.testing.assert_allclose(grads[0].numpy(), expected_a, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(grads[1].numpy(), expected_b, rtol=1e-5, atol=1e-6)


def test_gradient_with_respect_to_a_relu_output_is_not_masked():
    x = Tensor([[1.0, -2.0]])
    kernel = Variable([[1.0, 0.0], [0.0, 1.0]])
    kernel2 = Variable([[1.0, 1.0], [0.0, 1.0]])
    with GradientTape() as tape:
        hidden = ops.dense(x, kernel, activation="relu")  # [[1, 0]]
        out = ops.dense(hidden, kernel2, activation="relu")  # [[1, 1]]
        loss = ops.sum(out * Tensor([[3.0, 5.0]]))
    grad_hidden, grad_kernel = tape.gradient(loss, [hidden, kernel])
    # [3, 5] @ kernel2.T; hidden's own relu mask must not touch it.
    np.testing.assert_allclose(grad_hidden.numpy(), [[8.0, 5.0]])
    np.testing.assert_allclose(grad_kernel.numpy(), [[8.0, 0.0], [-16.0, 0.0]])


# ------------------------------------------------------------ the fused-op contract


def _make_cube(log):
    """x ** 3 as a fused primitive whose VJP logs the residuals it was given."""
    from autograd.tracer import getval

    from minikeras.engine.primitive import defvjp_fused, fused_primitive

    @fused_primitive
    def cube(x):
        square = x * x
        return square * x, square

    def cube_vjp(argnums, ans, args, square):
        log.append(square is not None)
        if square is None:
            square = getval(args[0]) * getval(args[0])
        return lambda g: [3.0 * g * square]

    defvjp_fused(cube, cube_vjp)
    return cube


def test_a_fused_primitive_hands_its_residuals_to_its_vjp_inside_a_tape():
    from minikeras.engine.primitive import call_primitive
    from minikeras.engine.tensor import value_of, wrap

    log = []
    cube = _make_cube(log)
    x = Variable([1.0, -2.0])
    with GradientTape() as tape:
        y = wrap(call_primitive(cube, value_of(x)))
    np.testing.assert_allclose(y.numpy(), [1.0, -8.0])
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), [3.0, 12.0])
    assert log == [True]


def test_a_fused_primitive_called_through_autograds_wrapper_gets_no_residuals():
    from autograd import grad

    from minikeras.engine.primitive import call_primitive

    log = []
    cube = _make_cube(log)
    assert grad(lambda x: call_primitive(cube, x))(2.0) == 12.0  # our path: residuals
    assert grad(cube)(2.0) == 12.0  # autograd's own wrapper: none
    assert log == [True, False]


def test_defvjp_fused_rejects_a_plain_primitive():
    from minikeras.engine.primitive import defvjp_fused
    from minikeras.ops.activation_functions import _relu

    with pytest.raises(TypeError, match="fused_primitive"):
        defvjp_fused(_relu, lambda *args: None)


def test_a_watched_tensor_is_its_own_target_with_gradient_one():
    # As TensorFlow's tape: d x / d x is ones, also once the `with` block has ended
    # (which gives the watched Tensor its plain array back).
    x = Tensor(np.array([3.0, 4.0], np.float32))
    with GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * 2.0
    np.testing.assert_array_equal(tape.gradient(x, [x])[0].numpy(), [1.0, 1.0])
    np.testing.assert_array_equal(tape.gradient([x, y], x).numpy(), [3.0, 3.0])
    assert tape.gradient(Tensor(np.array([1.0], np.float32)), x) is None  # (not watched)
