"""A custom training loop with `GradientTape` trains exactly as `fit` does.

`train_with_gradient_tape` below is the loop a TensorFlow 2 user writes: one
forward pass under a tape, the gradients of the loss for
`model.trainable_weights`, and `optimizer.apply_gradients`. With the same seed,
model, optimizer and batches (`shuffle=False` in `fit`), it ends on the same
weights as `fit`, and both reach over 95% test accuracy on the bundled digits.
"""

import numpy as np
import pytest

import minikeras as mk
from minikeras import GradientTape, layers, losses, optimizers

EPOCHS = 10
BATCH_SIZE = 32


@pytest.fixture(scope="module")
def digits():
    (x_train, y_train), (x_test, y_test) = mk.datasets.digits.load_data()
    return (x_train.astype("float32") / 16.0, y_train), (x_test.astype("float32") / 16.0, y_test)


def seeded_setup():
    """The same model, loss and optimizer each time: the seed fixes the initial weights."""
    mk.utils.set_random_seed(0)
    model = mk.Sequential(
        [
            mk.Input((8, 8)),
            layers.Flatten(),
            layers.Dense(32, activation="relu"),
            layers.Dense(10),
        ]
    )
    loss_fn = losses.SparseCategoricalCrossentropy(from_logits=True)
    return model, loss_fn, optimizers.Adam(learning_rate=0.01)


def train_with_gradient_tape(model, loss_fn, optimizer, x, y, epochs, batch_size):
    """Trains `model` on `(x, y)` in order, batch by batch; returns each epoch's mean loss."""
    epoch_losses = []
    for _ in range(epochs):
        total = 0.0
        for start in range(0, len(x), batch_size):
            x_batch, y_batch = x[start : start + batch_size], y[start : start + batch_size]
            with GradientTape() as tape:
                predictions = model(x_batch, training=True)
                loss = loss_fn(y_batch, predictions)
            grads = tape.gradient(loss, model.trainable_weights)
            optimizer.apply_gradients(zip(grads, model.trainable_weights))
            total += float(loss) * len(x_batch)
        epoch_losses.append(total / len(x))
    return epoch_losses


def accuracy(model, x, y):
    return float(np.mean(np.argmax(model.predict(x), axis=-1) == y))


def test_a_gradient_tape_loop_matches_fit_on_the_digits(digits):
    (x_train, y_train), (x_test, y_test) = digits

    fitted, loss_fn, optimizer = seeded_setup()
    fitted.compile(optimizer, loss_fn, metrics=["accuracy"])
    history = fitted.fit(
        x_train, y_train, batch_size=BATCH_SIZE, epochs=EPOCHS, shuffle=False, verbose=0
    )

    looped, loss_fn, optimizer = seeded_setup()
    epoch_losses = train_with_gradient_tape(
        looped, loss_fn, optimizer, x_train, y_train, EPOCHS, BATCH_SIZE
    )

    assert int(optimizer.iterations.numpy()) == EPOCHS * -(-len(x_train) // BATCH_SIZE)
    for from_loop, from_fit in zip(looped.get_weights(), fitted.get_weights()):
        np.testing.assert_allclose(from_loop, from_fit, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(epoch_losses, history.history["loss"], rtol=1e-5)
    loop_accuracy = accuracy(looped, x_test, y_test)
    assert loop_accuracy >= 0.95
    assert loop_accuracy == pytest.approx(fitted.evaluate(x_test, y_test, verbose=0)[1])


def test_the_loop_trains_only_what_it_is_given(digits):
    """Freezing a layer in a custom loop works as in fit: its weights are not in the list."""
    (x_train, y_train), _ = digits
    model, loss_fn, optimizer = seeded_setup()
    model.layers[-1].trainable = False
    frozen = [w.numpy() for w in model.layers[-1].weights]
    train_with_gradient_tape(model, loss_fn, optimizer, x_train[:256], y_train[:256], 1, 64)
    for before, after in zip(frozen, model.layers[-1].weights):
        np.testing.assert_array_equal(before, after.numpy())
    assert len(model.trainable_weights) == 2
