"""Optimizers: first steps against the written rules in float64, state, errors, config, training.

Each reference below is the rule from the optimizer's docstring, written out
again in float64 numpy; the optimizer runs in float32 on a Variable.
"""

import json
import math
import warnings

import numpy as np
import pytest

import minikeras
from minikeras import GradientTape, TrackingWarning, Variable, ops, optimizers
from minikeras.optimizers import schedules

W0 = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]], dtype=np.float32)
# Three steps; the last gradients are small so that AMSGrad's maximum matters.
GRADS = [
    np.array([[0.3, -0.2, 0.1], [-0.5, 0.4, 0.05]], dtype=np.float32),
    np.array([[-0.1, 0.6, 0.2], [0.25, -0.3, 0.35]], dtype=np.float32),
    np.array([[0.01, -0.02, 0.005], [0.03, 0.01, -0.02]], dtype=np.float32),
]
TOLERANCE = {"rtol": 1e-5, "atol": 1e-6}


def run(optimizer, grads=GRADS, w0=W0):
    """Applies `grads` one by one to a Variable starting at `w0`; the values after each."""
    variable = Variable(w0, name="w")
    values = []
    for grad in grads:
        optimizer.apply([grad], [variable])
        values.append(variable.numpy())
    return values


def decayed(w, weight_decay, learning_rate):
    return w - w * weight_decay * learning_rate if weight_decay else w


# ------------------------------------------------------------ references (float64)


def sgd_reference(lr=0.01, momentum=0.0, nesterov=False, weight_decay=None):
    w, velocity, values = W0.astype(np.float64), 0.0, []
    for g in GRADS:
        g = g.astype(np.float64)
        w = decayed(w, weight_decay, lr)
        if momentum == 0:
            w = w - lr * g
        else:
            velocity = momentum * velocity - lr * g
            w = w + (momentum * velocity - lr * g if nesterov else velocity)
        values.append(w)
    return values


def adam_reference(
    lr=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7, amsgrad=False, weight_decay=None
):
    w, m, v, v_hat, values = W0.astype(np.float64), 0.0, 0.0, 0.0, []
    for t, g in enumerate(GRADS, start=1):
        g = g.astype(np.float64)
        w = decayed(w, weight_decay, lr)
        m = beta_1 * m + (1 - beta_1) * g
        v = beta_2 * v + (1 - beta_2) * g**2
        v_hat = np.maximum(v_hat, v)
        alpha = lr * math.sqrt(1 - beta_2**t) / (1 - beta_1**t)
        w = w - alpha * m / (np.sqrt(v_hat if amsgrad else v) + epsilon)
        values.append(w)
    return values


def rmsprop_reference(
    lr=0.001, rho=0.9, momentum=0.0, epsilon=1e-7, centered=False, weight_decay=None
):
    w, velocity, average, moment, values = W0.astype(np.float64), 0.0, 0.0, 0.0, []
    for g in GRADS:
        g = g.astype(np.float64)
        w = decayed(w, weight_decay, lr)
        velocity = rho * velocity + (1 - rho) * g**2
        average = rho * average + (1 - rho) * g
        denominator = velocity - average**2 + epsilon if centered else velocity + epsilon
        increment = lr * g / np.sqrt(denominator)
        moment = momentum * moment + increment
        w = w - (moment if momentum > 0 else increment)
        values.append(w)
    return values


def adagrad_reference(lr=0.001, initial_accumulator_value=0.1, epsilon=1e-7, weight_decay=None):
    w, accumulator, values = W0.astype(np.float64), initial_accumulator_value, []
    for g in GRADS:
        g = g.astype(np.float64)
        w = decayed(w, weight_decay, lr)
        accumulator = accumulator + g**2
        w = w - lr * g / np.sqrt(accumulator + epsilon)
        values.append(w)
    return values


def adamax_reference(lr=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7, weight_decay=None):
    w, m, u, values = W0.astype(np.float64), 0.0, 0.0, []
    for t, g in enumerate(GRADS, start=1):
        g = g.astype(np.float64)
        w = decayed(w, weight_decay, lr)
        m = beta_1 * m + (1 - beta_1) * g
        u = np.maximum(beta_2 * u, np.abs(g))
        w = w - lr * m / ((1 - beta_1**t) * (u + epsilon))
        values.append(w)
    return values


def nadam_reference(lr=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7, weight_decay=None):
    w, m, v, u_product, values = W0.astype(np.float64), 0.0, 0.0, 1.0, []
    for t, g in enumerate(GRADS, start=1):
        g = g.astype(np.float64)
        w = decayed(w, weight_decay, lr)
        u_t = beta_1 * (1 - 0.5 * 0.96**t)
        u_next = beta_1 * (1 - 0.5 * 0.96 ** (t + 1))
        u_product = u_product * u_t
        m = beta_1 * m + (1 - beta_1) * g
        v = beta_2 * v + (1 - beta_2) * g**2
        m_hat = u_next * m / (1 - u_product * u_next) + (1 - u_t) * g / (1 - u_product)
        v_hat = v / (1 - beta_2**t)
        w = w - lr * m_hat / (np.sqrt(v_hat) + epsilon)
        values.append(w)
    return values


def lion_reference(lr=0.001, beta_1=0.9, beta_2=0.99, weight_decay=None):
    w, m, values = W0.astype(np.float64), 0.0, []
    for g in GRADS:
        g = g.astype(np.float64)
        w = decayed(w, weight_decay, lr)
        w = w - lr * np.sign(beta_1 * m + (1 - beta_1) * g)
        m = beta_2 * m + (1 - beta_2) * g
        values.append(w)
    return values


def adadelta_reference(lr=0.001, rho=0.95, epsilon=1e-7, weight_decay=None):
    w, accumulated_grad, accumulated_delta, values = W0.astype(np.float64), 0.0, 0.0, []
    for g in GRADS:
        g = g.astype(np.float64)
        w = decayed(w, weight_decay, lr)
        accumulated_grad = rho * accumulated_grad + (1 - rho) * g**2
        delta = -np.sqrt(accumulated_delta + epsilon) * g / np.sqrt(accumulated_grad + epsilon)
        accumulated_delta = rho * accumulated_delta + (1 - rho) * delta**2
        w = w + lr * delta
        values.append(w)
    return values


def lamb_reference(lr=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7, weight_decay=None):
    w, m, v, values = W0.astype(np.float64), 0.0, 0.0, []
    for t, g in enumerate(GRADS, start=1):
        g = g.astype(np.float64)
        w = decayed(w, weight_decay, lr)
        m = beta_1 * m + (1 - beta_1) * g
        v = beta_2 * v + (1 - beta_2) * g**2
        update = (m / (1 - beta_1**t)) / (np.sqrt(v / (1 - beta_2**t)) + epsilon)
        w_norm, u_norm = np.linalg.norm(w), np.linalg.norm(update)
        ratio = w_norm / u_norm if w_norm > 0 and u_norm > 0 else 1.0
        w = w - lr * ratio * update
        values.append(w)
    return values


def ftrl_reference(
    lr=0.001, power=-0.5, initial=0.1, l1=0.0, l2=0.0, shrinkage=0.0, beta=0.0, weight_decay=None
):
    w, accumulator, linear, values = W0.astype(np.float64), initial, 0.0, []
    for g in GRADS:
        g = g.astype(np.float64)
        w = decayed(w, weight_decay, lr)
        l2_total = l2 + beta / (2 * lr)
        shrunk = g + 2 * shrinkage * w
        new_accumulator = accumulator + g**2
        sigma = (new_accumulator**-power - accumulator**-power) / lr
        linear = linear + shrunk - sigma * w
        quadratic = new_accumulator**-power / lr + 2 * l2_total
        w = (np.clip(linear, -l1, l1) - linear) / quadratic
        accumulator = new_accumulator
        values.append(w)
    return values


# (optimizer class, its arguments, the reference, the reference's arguments)
CASES = {
    "sgd": (optimizers.SGD, {"learning_rate": 0.1}, sgd_reference, {"lr": 0.1}),
    "sgd_momentum": (
        optimizers.SGD,
        {"learning_rate": 0.1, "momentum": 0.9},
        sgd_reference,
        {"lr": 0.1, "momentum": 0.9},
    ),
    "sgd_nesterov": (
        optimizers.SGD,
        {"learning_rate": 0.1, "momentum": 0.8, "nesterov": True},
        sgd_reference,
        {"lr": 0.1, "momentum": 0.8, "nesterov": True},
    ),
    "adam": (
        optimizers.Adam,
        {"learning_rate": 0.05, "beta_1": 0.8, "beta_2": 0.9, "epsilon": 1e-3},
        adam_reference,
        {"lr": 0.05, "beta_1": 0.8, "beta_2": 0.9, "epsilon": 1e-3},
    ),
    "adam_amsgrad": (
        optimizers.Adam,
        {"learning_rate": 0.05, "beta_2": 0.5, "amsgrad": True},
        adam_reference,
        {"lr": 0.05, "beta_2": 0.5, "amsgrad": True},
    ),
    "adamw": (
        optimizers.AdamW,
        {"learning_rate": 0.05, "weight_decay": 0.5},
        adam_reference,
        {"lr": 0.05, "weight_decay": 0.5},
    ),
    "rmsprop": (
        optimizers.RMSprop,
        {"learning_rate": 0.01, "rho": 0.8},
        rmsprop_reference,
        {"lr": 0.01, "rho": 0.8},
    ),
    "rmsprop_centered": (
        optimizers.RMSprop,
        {"learning_rate": 0.01, "centered": True},
        rmsprop_reference,
        {"lr": 0.01, "centered": True},
    ),
    "rmsprop_momentum": (
        optimizers.RMSprop,
        {"learning_rate": 0.01, "momentum": 0.7},
        rmsprop_reference,
        {"lr": 0.01, "momentum": 0.7},
    ),
    "rmsprop_centered_momentum": (
        optimizers.RMSprop,
        {"learning_rate": 0.01, "momentum": 0.7, "centered": True, "epsilon": 1e-4},
        rmsprop_reference,
        {"lr": 0.01, "momentum": 0.7, "centered": True, "epsilon": 1e-4},
    ),
    "adagrad": (
        optimizers.Adagrad,
        {"learning_rate": 0.1, "initial_accumulator_value": 0.05},
        adagrad_reference,
        {"lr": 0.1, "initial_accumulator_value": 0.05},
    ),
    "adamax": (
        optimizers.Adamax,
        {"learning_rate": 0.05, "beta_1": 0.7, "beta_2": 0.8},
        adamax_reference,
        {"lr": 0.05, "beta_1": 0.7, "beta_2": 0.8},
    ),
    "nadam": (
        optimizers.Nadam,
        {"learning_rate": 0.05, "beta_2": 0.9},
        nadam_reference,
        {"lr": 0.05, "beta_2": 0.9},
    ),
    "lion": (
        optimizers.Lion,
        {"learning_rate": 0.01, "beta_1": 0.8, "beta_2": 0.95},
        lion_reference,
        {"lr": 0.01, "beta_1": 0.8, "beta_2": 0.95},
    ),
    "adadelta": (
        optimizers.Adadelta,
        {"learning_rate": 1.0, "rho": 0.8, "epsilon": 1e-3},
        adadelta_reference,
        {"lr": 1.0, "rho": 0.8, "epsilon": 1e-3},
    ),
    "lamb": (
        optimizers.Lamb,
        {"learning_rate": 0.05, "beta_2": 0.9},
        lamb_reference,
        {"lr": 0.05, "beta_2": 0.9},
    ),
    "ftrl": (
        optimizers.Ftrl,
        {
            "learning_rate": 0.1,
            "learning_rate_power": -0.6,
            "initial_accumulator_value": 0.2,
            "l1_regularization_strength": 0.01,
            "l2_regularization_strength": 0.1,
            "l2_shrinkage_regularization_strength": 0.05,
            "beta": 0.3,
        },
        ftrl_reference,
        {
            "lr": 0.1,
            "power": -0.6,
            "initial": 0.2,
            "l1": 0.01,
            "l2": 0.1,
            "shrinkage": 0.05,
            "beta": 0.3,
        },
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_first_three_steps_follow_the_written_rule(case):
    cls, arguments, reference, reference_arguments = CASES[case]
    values = run(cls(**arguments))
    for step, (value, expected) in enumerate(zip(values, reference(**reference_arguments)), 1):
        assert value.dtype == np.float32
        np.testing.assert_allclose(value, expected, **TOLERANCE, err_msg=f"{case}, step {step}")


@pytest.mark.parametrize("case", list(CASES))
def test_weight_decay_shrinks_weights_before_every_rule(case):
    cls, arguments, reference, reference_arguments = CASES[case]
    values = run(cls(**{**arguments, "weight_decay": 0.3}))
    expected = reference(**{**reference_arguments, "weight_decay": 0.3})
    for step, (value, want) in enumerate(zip(values, expected), 1):
        np.testing.assert_allclose(value, want, **TOLERANCE, err_msg=f"{case}, step {step}")
    without_decay = reference(**reference_arguments)
    assert not np.allclose(expected[-1], without_decay[-1], rtol=1e-4)


def test_amsgrad_differs_from_adam_on_these_gradients():
    plain = adam_reference(lr=0.05, beta_2=0.5)
    amsgrad = adam_reference(lr=0.05, beta_2=0.5, amsgrad=True)
    assert not np.allclose(plain[-1], amsgrad[-1], rtol=1e-4)


def test_adamw_defaults_to_weight_decay_0_004_and_rejects_none():
    assert optimizers.AdamW().weight_decay == 0.004
    with pytest.raises(ValueError, match="weight_decay"):
        optimizers.AdamW(weight_decay=None)


# ------------------------------------------------------------------- clipping


def clipped_sgd_values(**clip):
    kernel, bias = Variable(W0, name="kernel"), Variable([1.0, 2.0], name="bias")
    grads = [GRADS[0] * 10, np.array([3.0, -4.0], dtype=np.float32)]
    optimizers.SGD(learning_rate=0.1, **clip).apply(grads, [kernel, bias])
    return kernel.numpy(), bias.numpy(), [g.astype(np.float64) for g in grads]


def test_clipnorm_scales_each_gradient_to_its_own_norm():
    kernel, bias, (g_kernel, g_bias) = clipped_sgd_values(clipnorm=1.0)
    expected_kernel = W0 - 0.1 * g_kernel / max(np.linalg.norm(g_kernel), 1.0)
    expected_bias = np.array([1.0, 2.0]) - 0.1 * g_bias / 5.0
    np.testing.assert_allclose(kernel, expected_kernel, **TOLERANCE)
    np.testing.assert_allclose(bias, expected_bias, **TOLERANCE)


def test_clipnorm_leaves_small_gradients_alone():
    kernel, bias, (g_kernel, g_bias) = clipped_sgd_values(clipnorm=100.0)
    np.testing.assert_allclose(kernel, W0 - 0.1 * g_kernel, **TOLERANCE)
    np.testing.assert_allclose(bias, np.array([1.0, 2.0]) - 0.1 * g_bias, **TOLERANCE)


def test_global_clipnorm_scales_all_gradients_together():
    kernel, bias, (g_kernel, g_bias) = clipped_sgd_values(global_clipnorm=2.0)
    norm = math.sqrt(np.sum(g_kernel**2) + np.sum(g_bias**2))
    assert norm > 2.0
    np.testing.assert_allclose(kernel, W0 - 0.1 * g_kernel * 2.0 / norm, **TOLERANCE)
    np.testing.assert_allclose(bias, np.array([1.0, 2.0]) - 0.1 * g_bias * 2.0 / norm, **TOLERANCE)


def test_clipvalue_clips_each_value():
    kernel, bias, (g_kernel, g_bias) = clipped_sgd_values(clipvalue=2.5)
    np.testing.assert_allclose(kernel, W0 - 0.1 * np.clip(g_kernel, -2.5, 2.5), **TOLERANCE)
    np.testing.assert_allclose(bias, np.array([1.0, 2.0]) - 0.1 * np.array([2.5, -2.5]))


def test_more_than_one_clipping_argument_is_an_error():
    with pytest.raises(
        ValueError, match="only one of `clipnorm`, `clipvalue` and `global_clipnorm`"
    ):
        optimizers.Adam(clipnorm=1.0, global_clipnorm=1.0)
    with pytest.raises(ValueError, match="clipnorm=1.0, clipvalue=0.5"):
        optimizers.SGD(clipnorm=1.0, clipvalue=0.5)


@pytest.mark.parametrize(
    "clip", [{}, {"clipnorm": 0.1}, {"global_clipnorm": 0.1}, {"clipvalue": 0.1}]
)
@pytest.mark.parametrize("case", ["sgd_nesterov", "adam_amsgrad", "rmsprop_centered_momentum"])
def test_gradients_are_not_modified(case, clip):
    cls, arguments, _, _ = CASES[case]
    grads = [g.copy() for g in GRADS]
    run(cls(**arguments, **clip), grads)
    for grad, original in zip(grads, GRADS):
        np.testing.assert_array_equal(grad, original)


# ---------------------------------------------------------------------- state


@pytest.mark.parametrize("case", list(CASES))
def test_variables_and_state_stay_float32(case):
    cls, arguments, _, _ = CASES[case]
    optimizer = cls(**arguments)
    # float64 gradients (numpy's default) must not turn anything into float64.
    values = run(optimizer, [g.astype(np.float64) for g in GRADS])
    assert all(value.dtype == np.float32 for value in values)
    iterations, learning_rate, *state = optimizer.variables
    assert iterations is optimizer.iterations and iterations.name == "iteration"
    assert iterations.dtype == np.int32 and int(iterations.numpy()) == 3  # as Keras (not on TF)
    assert learning_rate is optimizer.learning_rate and learning_rate.name == "learning_rate"
    assert learning_rate.dtype == np.float32 and not learning_rate.trainable
    assert bool(state) == (case != "sgd")  # plain SGD keeps no state
    assert all(v.dtype == np.float32 and not v.trainable for v in state)


def test_state_order_is_iterations_then_each_kind_of_state_by_variable():
    a, b = Variable([1.0], name="a"), Variable([1.0, 2.0], name="b")
    b.path = "dense/b"
    optimizer = optimizers.Adam(amsgrad=True)
    optimizer.apply([np.ones(1), np.ones(2)], [a, b])
    assert [v.name for v in optimizer.variables] == [
        "iteration",
        "learning_rate",
        "a_momentum",
        "dense_b_momentum",
        "a_velocity",
        "dense_b_velocity",
        "a_velocity_hat",
        "dense_b_velocity_hat",
    ]
    nadam = optimizers.Nadam()
    nadam.apply([np.ones(1)], [a])
    assert [v.name for v in nadam.variables] == [
        "iteration",
        "learning_rate",
        "a_momentum",
        "a_velocity",
        "u_product",
    ]


def test_sgd_and_rmsprop_keep_only_the_state_their_options_need():
    w = Variable([1.0], name="w")

    def names(optimizer):
        optimizer.build([w])
        return [v.name for v in optimizer.variables[2:]]

    assert names(optimizers.SGD()) == []
    assert names(optimizers.SGD(momentum=0.5)) == ["w_momentum"]
    assert names(optimizers.RMSprop()) == ["w_velocity"]
    assert names(optimizers.RMSprop(momentum=0.5, centered=True)) == [
        "w_velocity",
        "w_momentum",
        "w_average_gradient",
    ]
    assert names(optimizers.Adagrad()) == ["w_accumulator"]
    assert names(optimizers.Adamax()) == ["w_momentum", "w_norm"]


def test_iterations_count_apply_calls_and_apply_gradients_returns_them():
    w = Variable([1.0, 2.0])
    optimizer = optimizers.SGD()
    optimizer.apply([np.ones(2)], [w])
    result = optimizer.apply_gradients(zip([np.ones(2)], [w]))
    assert result is optimizer.iterations and int(result.numpy()) == 2
    optimizer.apply([np.ones(2)])  # the variables it was built for
    assert int(optimizer.iterations.numpy()) == 3
    held, read = optimizer.iterations.numpy(), optimizer.iterations.value
    optimizer.apply([np.ones(2)])  # counted in a new array: earlier reads keep 3
    assert int(held) == int(read.numpy()) == 3 and int(optimizer.iterations.numpy()) == 4
    optimizer.apply([np.ones(2)])
    assert int(optimizer.iterations.numpy()) == 5


def test_earlier_reads_of_a_variable_keep_their_value():
    w = Variable(W0)
    before, first_row = w.value, w[0]
    optimizer = optimizers.Adam(learning_rate=0.1)
    for grad in GRADS:
        optimizer.apply([grad], [w])
    np.testing.assert_array_equal(before.numpy(), W0)
    np.testing.assert_array_equal(first_row.numpy(), W0[0])
    assert not np.allclose(w.numpy(), W0)


def test_a_read_each_step_keeps_its_value_while_the_optimizer_alternates_arrays():
    # Each step the current array is held by a read, so the update goes to the
    # array from two steps ago, which nothing holds any more.
    w = Variable(W0)
    optimizer = optimizers.SGD(learning_rate=0.1, momentum=0.9)
    for grad, expected in zip(GRADS, sgd_reference(lr=0.1, momentum=0.9)):
        snapshot = w.value
        seen = snapshot.numpy()
        optimizer.apply([grad], [w])
        np.testing.assert_array_equal(snapshot.numpy(), seen)
        np.testing.assert_allclose(w.numpy(), expected, **TOLERANCE)


def test_state_read_before_an_update_keeps_its_value():
    w = Variable(W0)
    optimizer = optimizers.Adam()
    optimizer.apply([GRADS[0]], [w])
    momentum = optimizer.variables[2]
    seen = momentum.value
    saved = momentum.numpy()
    optimizer.apply([GRADS[1]], [w])
    np.testing.assert_array_equal(seen.numpy(), saved)
    assert not np.allclose(momentum.numpy(), saved)


def test_constraint_is_applied_after_the_update():
    w = Variable([0.5, -0.5])
    w.constraint = lambda variable: ops.maximum(variable, 0.0)
    optimizers.SGD(learning_rate=1.0).apply([np.array([-1.0, 1.0])], [w])
    np.testing.assert_array_equal(w.numpy(), [1.5, 0.0])


# ---------------------------------------------------------- None and errors


def test_none_gradient_warns_with_the_variable_path_and_skips_it():
    kernel, bias = Variable(W0, name="kernel"), Variable([1.0, 2.0], name="bias")
    kernel.path = "dense/kernel"
    optimizer = optimizers.Adam()
    with pytest.warns(TrackingWarning, match="'dense/kernel' received no gradient") as caught:
        optimizer.apply([None, np.ones(2)], [kernel, bias])
    assert "was not updated" in str(caught[0].message)
    assert caught[0].filename == __file__  # points at the caller
    np.testing.assert_array_equal(kernel.numpy(), W0)
    assert not np.allclose(bias.numpy(), [1.0, 2.0])
    assert int(optimizer.iterations.numpy()) == 1
    # The skipped variable was built for, and can be updated later.
    with pytest.warns(TrackingWarning, match="'bias'"):
        optimizer.apply([GRADS[0], None], [kernel, bias])
    assert not np.allclose(kernel.numpy(), W0)


def test_only_none_gradients_change_nothing():
    w = Variable([1.0], name="w")
    optimizer = optimizers.SGD()
    with pytest.warns(TrackingWarning, match="'w'"):
        optimizer.apply([None], [w])
    assert int(optimizer.iterations.numpy()) == 0 and w.numpy()[0] == 1.0


def test_unseen_variable_after_build_is_an_error_and_nothing_changes():
    a, b = Variable([1.0], name="a"), Variable([1.0], name="b")
    b.path = "dense_1/kernel"
    optimizer = optimizers.Adam()
    optimizer.apply([np.ones(1)], [a])
    a_value = a.numpy()
    with pytest.raises(ValueError, match="'dense_1/kernel'.*new optimizer"):
        optimizer.apply([np.ones(1), np.ones(1)], [a, b])
    np.testing.assert_array_equal(a.numpy(), a_value)
    assert int(optimizer.iterations.numpy()) == 1


def test_gradient_shape_mismatch_names_both_shapes_and_nothing_changes():
    a, b = Variable([1.0, 2.0], name="a"), Variable(W0, name="b")
    optimizer = optimizers.SGD()
    with pytest.raises(ValueError, match=r"'b' has shape \(3, 2\).*shape \(2, 3\)"):
        optimizer.apply([np.ones(2), np.ones((3, 2))], [a, b])
    np.testing.assert_array_equal(a.numpy(), [1.0, 2.0])
    assert int(optimizer.iterations.numpy()) == 0


def test_other_argument_errors():
    w = Variable([1.0])
    with pytest.raises(ValueError, match="2 gradients for 1 variables"):
        optimizers.SGD().apply([np.ones(1), np.ones(1)], [w])
    with pytest.raises(ValueError, match="pass the variables to the first apply"):
        optimizers.SGD().apply([np.ones(1)])
    with pytest.raises(ValueError, match="only floating-point Variables"):
        optimizers.SGD().apply([np.ones(1)], [Variable([1])])
    with pytest.raises(ValueError, match="appears twice"):
        optimizers.SGD().apply([np.ones(1), np.ones(1)], [w, w])
    with pytest.raises(ValueError, match=r"SGD: `momentum` must be a number in \[0, 1\], got 1.5"):
        optimizers.SGD(momentum=1.5)
    with pytest.raises(ValueError, match=r"`beta_1` must be a number in \[0, 1\)"):
        optimizers.Adam(beta_1=1.0)
    with pytest.raises(ValueError, match="`clipnorm` must be a number > 0"):
        optimizers.Adam(clipnorm=0.0)
    with pytest.raises(ValueError, match="`learning_rate` must be a finite number"):
        optimizers.Adam(learning_rate="0.1")


# -------------------------------------------------------------- learning rate


def test_schedule_sets_the_learning_rate_from_iterations():
    schedule = schedules.ExponentialDecay(0.1, decay_steps=1, decay_rate=0.5)
    optimizer = optimizers.SGD(learning_rate=schedule)
    w = Variable([1.0])
    seen = []
    for _ in range(3):
        seen.append(optimizer.learning_rate)
        optimizer.apply([np.ones(1)], [w])
    assert seen == [0.1, 0.05, 0.025] and all(type(rate) is float for rate in seen)
    np.testing.assert_allclose(w.numpy(), [1.0 - 0.175], rtol=1e-6)
    assert optimizer.learning_rate == 0.0125


def test_callable_learning_rate_gets_the_step():
    optimizer = optimizers.SGD(learning_rate=lambda step: 1.0 / (step + 1))
    w = Variable([0.0])
    optimizer.apply([np.ones(1)], [w])
    optimizer.apply([np.ones(1)], [w])
    np.testing.assert_allclose(w.numpy(), [-1.5])


def test_learning_rate_is_settable_unless_a_schedule_is_used():
    optimizer = optimizers.SGD(learning_rate=0.1)
    optimizer.learning_rate = np.float64(0.5)
    assert isinstance(optimizer.learning_rate, Variable)
    assert optimizer.learning_rate.dtype == np.float32 and float(optimizer.learning_rate) == 0.5
    w = Variable([0.0])
    optimizer.apply([np.ones(1)], [w])
    np.testing.assert_allclose(w.numpy(), [-0.5])
    scheduled = optimizers.Adam(learning_rate=schedules.CosineDecay(0.1, 10))
    with pytest.raises(TypeError, match="schedule.*float learning_rate"):
        scheduled.learning_rate = 0.01
    scheduled.learning_rate = schedules.InverseTimeDecay(0.2, 1, 1.0)  # a schedule replaces it
    assert scheduled.learning_rate == 0.2


# ---------------------------------------------------------------- config


@pytest.mark.parametrize("case", list(CASES))
def test_config_round_trips(case):
    cls, arguments, _, _ = CASES[case]
    optimizer = cls(**arguments, clipnorm=2.0, name="mine")
    config = optimizer.get_config()
    json.dumps(config)
    assert cls.from_config(config).get_config() == config
    again = optimizers.get(optimizers.serialize(optimizer))
    assert type(again) is cls and again.get_config() == config
    assert config["name"] == "mine" and config["clipnorm"] == 2.0


def test_config_round_trips_a_schedule():
    schedule = schedules.PiecewiseConstantDecay([1, 2], [0.3, 0.2, 0.1])
    config = optimizers.serialize(optimizers.Adam(learning_rate=schedule))
    json.dumps(config)
    clone = optimizers.deserialize(config)
    assert isinstance(clone._learning_rate, schedules.PiecewiseConstantDecay)
    assert [clone._learning_rate(step) for step in range(4)] == [0.3, 0.3, 0.2, 0.1]


def test_get_accepts_names_configs_classes_and_instances():
    assert type(optimizers.get("adam")) is optimizers.Adam
    assert type(optimizers.get("RMSprop")) is optimizers.RMSprop
    assert type(optimizers.get("sgd")) is optimizers.SGD
    assert type(optimizers.get(optimizers.Nadam)) is optimizers.Nadam
    for name in ("adamw", "adagrad", "adamax", "nadam", "lion", "adadelta", "lamb", "ftrl"):
        assert optimizers.get(name).name == name
    instance = optimizers.Adamax()
    assert optimizers.get(instance) is instance
    assert optimizers.get(None) is None
    assert optimizers.get({"class_name": "SGD", "config": {"momentum": 0.5}}).momentum == 0.5
    with pytest.raises(ValueError, match="Unknown optimizer 'adamm'"):
        optimizers.get("adamm")
    with pytest.raises(ValueError, match="expected a name, a config dict or an Optimizer"):
        optimizers.get(3)


def test_schedules_live_in_optimizers_and_the_older_path_gives_the_same_classes():
    from minikeras import schedules as older_path

    assert optimizers.schedules.__name__ == "minikeras.optimizers.schedules"
    for name in older_path.__all__:
        assert getattr(older_path, name) is getattr(optimizers.schedules, name), name


# -------------------------------------------------------------- training


TRAINING = {
    "sgd": optimizers.SGD(learning_rate=0.1),
    "sgd_nesterov": optimizers.SGD(learning_rate=0.05, momentum=0.9, nesterov=True),
    "adam": optimizers.Adam(learning_rate=0.05),
    "adamw": optimizers.AdamW(learning_rate=0.05, weight_decay=1e-4),
    "rmsprop": optimizers.RMSprop(learning_rate=0.01, momentum=0.5, centered=True),
    "adagrad": optimizers.Adagrad(learning_rate=0.5),
    "adamax": optimizers.Adamax(learning_rate=0.1),
    "nadam": optimizers.Nadam(learning_rate=0.05),
    # Lion's and Lamb's steps do not shrink with the gradient: a decaying rate lets them settle.
    "lion": optimizers.Lion(learning_rate=schedules.ExponentialDecay(0.1, 30, 0.6)),
    "adadelta": optimizers.Adadelta(learning_rate=1.0, rho=0.9, epsilon=1e-5),
    "lamb": optimizers.Lamb(learning_rate=schedules.ExponentialDecay(0.1, 30, 0.8)),
}


@pytest.mark.parametrize("case", list(TRAINING))
def test_least_squares_converges(case):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((32, 3)).astype(np.float32)
    y = x @ np.array([[1.5], [-2.0], [0.5]], dtype=np.float32) + 0.25
    kernel, bias = Variable(np.zeros((3, 1)), name="kernel"), Variable(np.zeros(1), name="bias")
    optimizer = optimizers.get(optimizers.serialize(TRAINING[case]))  # a fresh copy

    def loss():
        return ops.mean(ops.square(ops.matmul(x, kernel) + bias - y))

    initial = float(loss())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(300):
            with GradientTape() as tape:
                value = loss()
            optimizer.apply(tape.gradient(value, [kernel, bias]), [kernel, bias])
    assert float(loss()) < 1e-3 * initial, f"{case}: loss {float(loss())} from {initial}"
    np.testing.assert_allclose(kernel.numpy().ravel(), [1.5, -2.0, 0.5], atol=0.05)


def test_a_float64_tensor_gradient_is_cast_to_the_float32_variables_dtype_first():
    from minikeras import Tensor

    variable = Variable(np.zeros(2, np.float32))
    # Values whose float32 step differs from the float64 step rounded to float32.
    gradient = np.array([0.1257302210933933, -0.1321048632913019])
    optimizers.SGD(learning_rate=0.1).apply([Tensor(gradient)], [variable])
    assert variable.dtype == np.float32
    np.testing.assert_array_equal(variable.numpy(), -(gradient.astype(np.float32) * 0.1))
    assert not np.array_equal(variable.numpy(), -(gradient * 0.1).astype(np.float32))


@pytest.mark.parametrize("rate", [-0.1, float("nan"), float("inf")])
def test_a_negative_or_non_finite_learning_rate_is_refused(rate):
    with pytest.raises(ValueError, match=r"Adam: `learning_rate` must be a finite number >= 0"):
        minikeras.optimizers.Adam(learning_rate=rate)
    optimizer = minikeras.optimizers.SGD(0.1)
    with pytest.raises(ValueError, match="SGD: `learning_rate` must be"):
        optimizer.learning_rate = rate
    assert optimizer.learning_rate == 0.1
