"""Layer.add_loss and Layer.losses: Keras's per-call losses, counted once per step."""

import numpy as np
import pytest

import minikeras as mk
from minikeras import GradientTape, Layer, Sequential, layers, ops, optimizers


@pytest.fixture(autouse=True)
def _seeded():
    mk.utils.set_random_seed(0)


class Scale(Layer):
    """`inputs * w`, adding `factor * sum(square(w))` as a loss at each call."""

    def __init__(self, factor=1.0, **kwargs):
        super().__init__(**kwargs)
        self.factor = factor

    def build(self, input_shape):
        self.w = self.add_weight(shape=(input_shape[-1],), initializer="ones")

    def call(self, inputs):
        self.add_loss(self.factor * ops.sum(ops.square(self.w)))
        return inputs * self.w


def test_losses_added_in_call_are_those_of_the_latest_call():
    layer = Scale(0.5)
    assert layer.losses == []
    for _ in range(3):
        layer(np.ones((2, 3), "float32"))
    assert [float(loss) for loss in layer.losses] == [1.5]


def test_a_sub_layers_losses_are_cleared_at_each_outermost_call():
    inner = Scale(1.0)
    model = Sequential([layers.Input((2,)), inner, layers.Dense(1)])
    inner(np.ones((1, 2), "float32"))  # a standalone call: forgotten by the model's call
    for _ in range(2):
        model(np.ones((4, 2), "float32"))
        assert [float(loss) for loss in model.losses] == [2.0]
        assert [float(loss) for loss in inner.losses] == [2.0]


def test_two_calls_inside_one_outer_call_count_twice():
    class Twice(Layer):
        def __init__(self):
            super().__init__()
            self.inner = Scale(1.0)

        def call(self, inputs):
            return self.inner(self.inner(inputs))

    layer = Twice()
    for _ in range(2):
        layer(np.ones((1, 2), "float32"))
        assert [float(loss) for loss in layer.losses] == [2.0, 2.0]


def test_fit_counts_an_added_loss_once_per_step_and_trains_it():
    learning_rate, factor = 0.1, 0.25
    scale = Scale(factor)
    model = Sequential([layers.Input((2,)), scale])
    model.compile(optimizers.SGD(learning_rate), "mse")
    x = np.array([[1.0, 2.0], [3.0, -1.0]], "float32")
    y = np.zeros((2, 2), "float32")
    for _ in range(3):
        w = scale.w.numpy()
        error = x * w - y
        data_loss = np.mean(np.square(error))
        grad_data = 2.0 * (error * x).sum(axis=0) / error.size
        loss = model.train_on_batch(x, y)
        np.testing.assert_allclose(loss, data_loss + factor * np.square(w).sum(), rtol=1e-5)
        expected = w - learning_rate * (grad_data + 2 * factor * w)
        np.testing.assert_allclose(scale.w.numpy(), expected, rtol=1e-5)
    w = scale.w.numpy()
    total = np.mean(np.square(x * w - y)) + factor * np.square(w).sum()
    np.testing.assert_allclose(model.evaluate(x, y, verbose=0), total, rtol=1e-5)
    history = model.fit(x, y, epochs=1, batch_size=2, verbose=0)  # one full-batch step
    np.testing.assert_allclose(history.history["loss"], [total], rtol=1e-5)


def test_a_callable_added_outside_call_persists_and_follows_the_weights():
    dense = layers.Dense(1, kernel_initializer="ones", use_bias=False)
    dense.build((None, 2))
    dense.add_loss(lambda: ops.mean(dense.kernel))
    assert [float(loss) for loss in dense.losses] == [1.0]
    dense(np.ones((1, 2), "float32"))
    dense.kernel.assign([[2.0], [4.0]])
    assert [float(loss) for loss in dense.losses] == [3.0]


def test_a_callable_loss_is_differentiable():
    dense = layers.Dense(1, use_bias=False)
    dense.build((None, 2))
    dense.add_loss(lambda: ops.sum(dense.kernel))
    with GradientTape() as tape:
        total = sum(dense.losses)
    np.testing.assert_array_equal(tape.gradient(total, [dense.kernel])[0], np.ones((2, 1)))


def test_add_loss_takes_numbers_and_refuses_other_things():
    layer = Layer()
    layer.add_loss(2.5)
    assert [float(loss) for loss in layer.losses] == [2.5]
    with pytest.raises(ValueError, match="add_loss: expected a Tensor"):
        layer.add_loss("big")


def test_added_losses_and_penalties_come_together():
    dense = layers.Dense(2, kernel_initializer="ones", kernel_regularizer="l1")
    model = Sequential([layers.Input((2,)), Scale(1.0), dense])
    model(np.ones((1, 2), "float32"))
    assert [round(float(loss), 6) for loss in model.losses] == [2.0, 0.04]
