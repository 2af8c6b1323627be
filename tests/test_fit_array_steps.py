"""`steps_per_epoch`, `validation_steps` and `steps` with arrays, as Keras 3 takes them.

Keras 3 (its `ArrayDataAdapter` and `EpochIterator`): without `batch_size`,
a batch is `ceil(samples / steps)` samples; `fit`'s epochs carry on through
one (shuffled) pass over the arrays; a pass that ends inside an epoch ends
that epoch early with a warning, and the next epoch starts a new pass;
`evaluate` and `predict` take the first `steps` batches. The last test runs
Keras itself, when it is importable, on the same cases.
"""

import warnings

import numpy as np
import pytest

import minikeras as mk
from minikeras import Model, Sequential, callbacks, layers, optimizers


class Recorder(Model):
    """A linear model that records the inputs of its training calls."""

    def __init__(self):
        super().__init__()
        self.dense = layers.Dense(1, kernel_initializer="ones")
        self.seen = []

    def call(self, inputs, training=None):
        if training:
            self.seen.append(np.asarray(inputs)[:, 0].tolist())
        return self.dense(inputs)


class EpochSteps(callbacks.Callback):
    """The number of training steps of each epoch, and the `steps` fit announced."""

    def on_train_begin(self, logs=None):
        self.announced, self.per_epoch = self.params["steps"], []

    def on_epoch_begin(self, epoch, logs=None):
        self.per_epoch.append(0)

    def on_train_batch_end(self, batch, logs=None):
        self.per_epoch[-1] += 1


def _data(n=10):
    x = np.arange(n, dtype="float32")[:, None]
    return x, 2.0 * x


def _recorder():
    model = Recorder()
    model.compile(optimizers.SGD(0.001), "mse")
    return model


def _fit_counting(model, x, y, **kwargs):
    counter = EpochSteps()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        history = model.fit(x, y, callbacks=[counter], verbose=0, **kwargs)
    messages = [str(w.message) for w in caught if issubclass(w.category, UserWarning)]
    return history, counter, messages


def test_steps_per_epoch_carries_on_through_the_arrays_and_starts_a_new_pass():
    x, y = _data()
    model = _recorder()
    history, counter, messages = _fit_counting(
        model, x, y, batch_size=2, steps_per_epoch=3, epochs=3, shuffle=False
    )
    # 5 batches: epoch 1 takes 3, epoch 2 the last 2 (the pass ends: a warning), epoch 3 anew.
    assert counter.announced == 3 and counter.per_epoch == [3, 2, 3]
    assert model.seen == [[0, 1], [2, 3], [4, 5], [6, 7], [8, 9], [0, 1], [2, 3], [4, 5]]
    assert len(messages) == 1 and messages[0].startswith(
        "fit: epoch 2 ended after 2 of steps_per_epoch=3 steps: the data ran out"
    )
    assert len(history.history["loss"]) == 3
    # The same SGD steps as a list of those batches, one epoch.
    reference = _recorder()
    reference.fit([(x[i : i + 2], y[i : i + 2]) for i in (0, 2, 4, 6, 8, 0, 2, 4)], verbose=0)
    for a, b in zip(model.get_weights(), reference.get_weights()):
        np.testing.assert_array_equal(a, b)


def test_a_shuffled_pass_is_carried_on_across_epochs():
    x, y = _data()
    model = _recorder()
    _fit_counting(model, x, y, batch_size=2, steps_per_epoch=3, epochs=4, shuffle=True)
    first_pass = sorted(sum(model.seen[:5], []))
    second_pass = sorted(sum(model.seen[5:], []))
    assert first_pass == list(range(10))  # epochs 1 and 2: one permutation, each sample once
    assert len(second_pass) == 10 and len(set(second_pass)) == 10  # epochs 3 and 4: another


@pytest.mark.parametrize(
    ("steps", "batch", "per_epoch", "warned"),
    [(4, 3, [4, 4], 0), (5, 2, [5, 5], 0), (6, 2, [5, 5], 2), (20, 1, [10, 10], 2)],
)
def test_without_batch_size_a_batch_is_samples_over_steps(steps, batch, per_epoch, warned):
    x, y = _data()
    model = _recorder()
    _, counter, messages = _fit_counting(model, x, y, steps_per_epoch=steps, epochs=2)
    assert counter.per_epoch == per_epoch and len(messages) == warned
    one_pass = model.seen[: per_epoch[0]]
    assert max(len(b) for b in one_pass) == batch and sum(len(b) for b in one_pass) == 10


def test_steps_longer_than_the_arrays_end_every_epoch_early_and_training_goes_on():
    x, y = _data()
    history, counter, messages = _fit_counting(
        _recorder(), x, y, batch_size=2, steps_per_epoch=7, epochs=3
    )
    assert counter.per_epoch == [5, 5, 5] and len(history.history["loss"]) == 3
    assert [m[:45] for m in messages] == [
        f"fit: epoch {e} ended after 5 of steps_per_epoch=7 steps"[:45] for e in (1, 2, 3)
    ]


def _linear():
    model = Sequential([layers.Input((1,)), layers.Dense(1, kernel_initializer="ones")])
    model.compile("sgd", "mse", metrics=["mae"])
    return model


def test_evaluate_with_steps_takes_the_first_batches():
    x, y = _data()
    model = _linear()
    # prediction x, target 2x: mse = mean(x ** 2), mae = mean(x)
    assert model.evaluate(x, y, batch_size=2, steps=2, verbose=0) == pytest.approx([3.5, 1.5])
    everything = [np.mean(x**2), np.mean(x)]
    assert model.evaluate(x, y, steps=3, verbose=0) == pytest.approx(everything)  # batches of 4
    with pytest.warns(UserWarning, match=r"evaluate: the data ran out before steps=7 batches"):
        assert model.evaluate(x, y, batch_size=2, steps=7, verbose=0) == pytest.approx(everything)


def test_predict_with_steps_takes_the_first_batches():
    x, _ = _data()
    model = _linear()
    np.testing.assert_array_equal(model.predict(x, batch_size=2, steps=2), x[:4])
    np.testing.assert_array_equal(model.predict(x, steps=3), x)  # batches of 4: all of x
    with pytest.warns(UserWarning, match=r"predict: the data ran out before steps=7 batches"):
        np.testing.assert_array_equal(model.predict(x, batch_size=2, steps=7), x)
    # A generator that ends first: the outputs for what it gave, and a warning (as Keras).
    with pytest.warns(UserWarning, match=r"predict: the data ran out before steps=5 .*gave 3"):
        out = model.predict((x[i : i + 2] for i in range(0, 6, 2)), steps=5)
    np.testing.assert_array_equal(out, x[:6])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # exactly as many batches as asked: no warning
        model.predict((x[i : i + 2] for i in range(0, 6, 2)), steps=3)


def test_validation_steps_score_the_same_first_batches_every_epoch():
    x, y = _data()
    x_val, y_val = x[::-1].copy(), np.zeros_like(y)
    model = _linear()
    model.compile(optimizers.SGD(0.0), "mse", report_unchanged=False)  # every epoch alike
    history = model.fit(
        x, y, epochs=2, validation_data=(x_val, y_val), validation_steps=2,
        validation_batch_size=2, verbose=0,
    )  # fmt: skip
    assert history.history["val_loss"] == pytest.approx([np.mean(x_val[:4] ** 2)] * 2)
    history = model.fit(x, y, epochs=1, validation_data=(x_val, y_val), validation_steps=3,
                        verbose=0)  # fmt: skip
    assert history.history["val_loss"] == pytest.approx([np.mean(x_val**2)])  # batches of 4
    with pytest.warns(UserWarning, match=r"validation data ran out before validation_steps=6"):
        model.fit(x, y, validation_data=(x_val, y_val), validation_steps=6, verbose=0)


@pytest.mark.parametrize(("batch_size", "steps"), [(2, 3), (2, 7), (None, 6), (None, 4), (2, 5)])
def test_steps_per_epoch_with_arrays_matches_keras(batch_size, steps):
    keras = pytest.importorskip("keras")

    class KerasSteps(keras.callbacks.Callback):
        def on_train_begin(self, logs=None):
            self.announced, self.per_epoch = self.params["steps"], []

        def on_epoch_begin(self, epoch, logs=None):
            self.per_epoch.append(0)

        def on_train_batch_end(self, batch, logs=None):
            self.per_epoch[-1] += 1

    x, y = _data()
    reference = keras.Sequential([keras.Input((1,)), keras.layers.Dense(1)])
    reference.compile("sgd", "mse")
    counter = KerasSteps()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        reference.fit(x, y, batch_size=batch_size, steps_per_epoch=steps, epochs=3,
                      callbacks=[counter], verbose=0)  # fmt: skip
    keras_warnings = [w for w in caught if "ran out of data" in str(w.message)]
    _, ours, messages = _fit_counting(
        _recorder(), x, y, batch_size=batch_size, steps_per_epoch=steps, epochs=3
    )
    assert (ours.announced, ours.per_epoch) == (counter.announced, counter.per_epoch)
    assert len(messages) == len(keras_warnings)


def predict_announces(library, model, x, **kwargs):
    """The `steps` that predict's callbacks see in `params`, and the batches they see."""

    class Announced(library.callbacks.Callback):
        def on_predict_begin(self, logs=None):
            self.steps, self.batches = self.params["steps"], 0

        def on_predict_batch_end(self, batch, logs=None):
            self.batches += 1

    seen = Announced()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.predict(x, verbose=0, callbacks=[seen], **kwargs)
    return seen.steps, seen.batches


CALLBACK_STEPS = [
    (dict(steps=3), (3, 3)),
    (dict(steps=20), (20, 10)),  # as Keras: the steps asked, then the batches there are
    (dict(batch_size=4, steps=7), (7, 3)),
    (dict(batch_size=4), (3, 3)),
]


@pytest.mark.parametrize(("kwargs", "expected"), CALLBACK_STEPS)
def test_predict_callbacks_see_the_steps_asked(kwargs, expected):
    x, _ = _data()
    assert predict_announces(mk, _linear(), x, **kwargs) == expected


@pytest.mark.parametrize(("kwargs", "expected"), CALLBACK_STEPS)
def test_predict_callbacks_steps_match_keras(kwargs, expected):
    keras = pytest.importorskip("keras")
    x, _ = _data()
    reference = keras.Sequential([keras.Input((1,)), keras.layers.Dense(1)])
    assert predict_announces(keras, reference, x, **kwargs) == expected


def test_shuffle_batch_shuffles_inside_batches_kept_in_order():
    mk.utils.set_random_seed(0)
    x, y = _data(10)
    model = _recorder()
    model.fit(x, y, batch_size=4, epochs=2, shuffle="batch", verbose=0)
    batches = [sorted(seen) for seen in model.seen]
    assert batches == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]] * 2  # as Keras: batches in order
    assert any(seen != sorted(seen) for seen in model.seen)  # samples shuffled within them
    model = _recorder()  # and with steps_per_epoch, carried on across epochs
    with pytest.warns(UserWarning, match="epoch 2 ended after 1 of steps_per_epoch=2"):
        model.fit(x, y, batch_size=4, epochs=3, steps_per_epoch=2, shuffle="batch", verbose=0)
    assert [sorted(seen) for seen in model.seen] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]] + [
        [0, 1, 2, 3], [4, 5, 6, 7]
    ]  # fmt: skip
