"""`fit` with an optimizer's `use_ema`: the model ends with the averaged weights, as in Keras 3.

Keras 3's `fit` calls `optimizer.finalize_variable_values(trainable weights)`
when training ends, before `on_train_end` (with JAX, in a `finally`: also when
a callback raises); with `use_ema` and no
`ema_overwrite_frequency` that sets each weight to its moving average. The
average starts as the weight after the first step, then
`average = momentum * average + (1 - momentum) * weight` after each step.
"""

import numpy as np
import pytest

import minikeras as mk

X = np.linspace(-1.0, 1.0, 16, dtype="float32").reshape(8, 2)
Y = (X @ np.array([[1.5], [-0.5]], "float32") + 0.25).astype("float32")
KERNEL0 = np.array([[0.2], [0.1]], "float32")
LEARNING_RATE, MOMENTUM = 0.1, 0.8


def _hand_computed(steps_of_batches):
    """Plain SGD on the mean squared error, and the moving average of its weights."""
    kernel, bias = KERNEL0.astype("float64"), np.zeros(1)
    average = None
    for x, y in steps_of_batches:
        error = x @ kernel + bias - y
        kernel = kernel - LEARNING_RATE * 2.0 * x.T @ error / len(x)
        bias = bias - LEARNING_RATE * 2.0 * error.mean(axis=0)
        if average is None:
            average = [kernel, bias]
        else:
            average = [MOMENTUM * a + (1 - MOMENTUM) * w for a, w in zip(average, [kernel, bias])]
    return [kernel, bias], average


class AtTrainEnd(mk.callbacks.Callback):
    def on_train_end(self, logs=None):
        self.weights = self.model.get_weights()


def _model(module):
    initializer = module.initializers.Constant(KERNEL0)
    model = module.Sequential(
        [module.Input((2,)), module.layers.Dense(1, kernel_initializer=initializer)]
    )
    sgd = module.optimizers.SGD(LEARNING_RATE, use_ema=True, ema_momentum=MOMENTUM)
    model.compile(sgd, "mse")
    return model


def test_fit_ends_with_the_moving_averages_of_the_weights():
    model = _model(mk)
    seen = AtTrainEnd()
    model.fit(X, Y, batch_size=4, epochs=3, shuffle=False, verbose=0, callbacks=[seen])
    batches = [(X[:4], Y[:4]), (X[4:], Y[4:])] * 3
    last, average = _hand_computed(batches)
    for weight, expected in zip(model.get_weights(), average, strict=True):
        np.testing.assert_allclose(weight, expected, rtol=1e-5)
    assert not np.allclose(model.get_weights()[0], last[0], rtol=1e-3)  # the average differs
    for a, b in zip(seen.weights, model.get_weights(), strict=True):  # before on_train_end
        np.testing.assert_array_equal(a, b)


def test_without_ema_fit_ends_with_the_last_weights():
    model = _model(mk)
    model.compile(mk.optimizers.SGD(LEARNING_RATE), "mse")
    model.fit(X, Y, batch_size=4, epochs=3, shuffle=False, verbose=0)
    last, _ = _hand_computed([(X[:4], Y[:4]), (X[4:], Y[4:])] * 3)
    for weight, expected in zip(model.get_weights(), last, strict=True):
        np.testing.assert_allclose(weight, expected, rtol=1e-5)


def test_fit_with_ema_matches_keras():
    keras = pytest.importorskip("keras")
    reference, model = _model(keras), _model(mk)
    reference.fit(X, Y, batch_size=4, epochs=3, shuffle=False, verbose=0)
    model.fit(X, Y, batch_size=4, epochs=3, shuffle=False, verbose=0)
    for ours, theirs in zip(model.get_weights(), reference.get_weights(), strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-5)


class RaiseAtEpochEnd(mk.callbacks.Callback):
    def on_epoch_end(self, epoch, logs=None):
        if epoch == 1:
            raise RuntimeError("stopped by a callback")


def test_a_fit_that_raises_still_ends_with_the_moving_averages():
    # Keras 3's JAX fit finalizes in a `finally`: an error leaves the averages too.
    model = _model(mk)
    with pytest.raises(RuntimeError, match="stopped by a callback"):
        model.fit(X, Y, batch_size=4, epochs=3, shuffle=False, verbose=0,
                  callbacks=[RaiseAtEpochEnd()])  # fmt: skip
    _, average = _hand_computed([(X[:4], Y[:4]), (X[4:], Y[4:])] * 2)  # two epochs ran
    for weight, expected in zip(model.get_weights(), average, strict=True):
        np.testing.assert_allclose(weight, expected, rtol=1e-5)


def test_a_fit_that_raises_with_ema_matches_keras_with_jax():
    keras = pytest.importorskip("keras")
    if keras.backend.backend() != "jax":  # Keras's torch and TensorFlow fits skip it
        pytest.skip("Keras finalizes the averages on an error with its JAX backend only")
    reference, model = _model(keras), _model(mk)
    raising = type(
        "Raise", (keras.callbacks.Callback,), {"on_epoch_end": RaiseAtEpochEnd.on_epoch_end}
    )
    for trained, callback in ((reference, raising()), (model, RaiseAtEpochEnd())):
        with pytest.raises(RuntimeError, match="stopped by a callback"):
            trained.fit(X, Y, batch_size=4, epochs=3, shuffle=False, verbose=0,
                        callbacks=[callback])  # fmt: skip
    for ours, theirs in zip(model.get_weights(), reference.get_weights(), strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-5)
