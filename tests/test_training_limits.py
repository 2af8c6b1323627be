"""config.set_max_epochs, set_max_steps_per_epoch: the debugging caps on fit, evaluate, predict."""

import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

import minikeras as mk


@pytest.fixture(autouse=True)
def no_limits():
    mk.config.set_max_epochs(None)
    mk.config.set_max_steps_per_epoch(None)
    yield
    mk.config.set_max_epochs(None)
    mk.config.set_max_steps_per_epoch(None)


class Batches(mk.callbacks.Callback):
    """Records the size of each training and test batch, and fit's params."""

    def __init__(self):
        super().__init__()
        self.train, self.test, self.predict = [], [], []

    def on_train_begin(self, logs=None):
        self.seen_params = dict(self.params)

    def on_train_batch_begin(self, batch, logs=None):
        self.train.append(batch)

    def on_test_batch_begin(self, batch, logs=None):
        self.test.append(batch)

    def on_predict_batch_begin(self, batch, logs=None):
        self.predict.append(batch)


def model():
    net = mk.Sequential([mk.Input((2,)), mk.layers.Dense(1)])
    net.compile("sgd", "mse")
    return net


def messages(caught):
    return [str(w.message) for w in caught if str(w.message).startswith("Limiting")]


def test_defaults_and_setters():
    assert mk.config.max_epochs() is None and mk.config.max_steps_per_epoch() is None
    mk.config.set_max_epochs(3)
    mk.config.set_max_steps_per_epoch(np.int64(5))
    assert mk.config.max_epochs() == 3 and mk.config.max_steps_per_epoch() == 5
    assert type(mk.config.max_steps_per_epoch()) is int


@pytest.mark.parametrize("bad", [-1, 2.5, "3", True])
def test_bad_limits_raise_and_keep_the_old_value(bad):
    mk.config.set_max_epochs(4)
    with pytest.raises((TypeError, ValueError), match="set_max_epochs"):
        mk.config.set_max_epochs(bad)
    with pytest.raises((TypeError, ValueError), match="set_max_steps_per_epoch"):
        mk.config.set_max_steps_per_epoch(bad)
    assert mk.config.max_epochs() == 4 and mk.config.max_steps_per_epoch() is None


def test_fit_is_capped_as_keras_caps_it():
    # Keras 3.15.1 (jax), same call: params {'epochs': 2, 'steps': 3}, 3 train and 3
    # validation batches an epoch, warnings 'Limiting epochs to 2' and twice
    # 'Limiting steps_per_epoch to 3' (training, validation), history.epoch [0, 1].
    mk.config.set_max_epochs(2)
    mk.config.set_max_steps_per_epoch(3)
    seen = Batches()
    x, y = np.ones((100, 2), "float32"), np.ones((100, 1), "float32")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        history = model().fit(x, y, epochs=5, verbose=0, callbacks=[seen], validation_data=(x, y))
    assert history.epoch == [0, 1]
    assert seen.seen_params["epochs"] == 2 and seen.seen_params["steps"] == 3
    assert seen.train == [0, 1, 2, 0, 1, 2] and seen.test == [0, 1, 2, 0, 1, 2]
    assert messages(caught) == [
        "Limiting epochs to 2",
        "Limiting steps_per_epoch to 3",
        "Limiting steps_per_epoch to 3",
    ]
    assert all(w.filename == __file__ for w in caught if str(w.message).startswith("Limiting"))


def test_no_warning_when_the_call_is_within_the_caps():
    mk.config.set_max_epochs(5)
    mk.config.set_max_steps_per_epoch(4)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        history = model().fit(
            np.ones((8, 2)), np.ones((8, 1)), batch_size=4, epochs=3, steps_per_epoch=2, verbose=0
        )
    assert history.epoch == [0, 1, 2] and messages(caught) == []


def test_zero_means_no_cap_as_in_keras():
    mk.config.set_max_epochs(0)
    mk.config.set_max_steps_per_epoch(0)
    seen = Batches()
    model().fit(
        np.ones((8, 2)), np.ones((8, 1)), batch_size=2, epochs=2, verbose=0, callbacks=[seen]
    )
    assert seen.train == [0, 1, 2, 3] * 2


def test_the_cap_on_epochs_is_the_epoch_fit_stops_at():
    mk.config.set_max_epochs(3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        history = model().fit(
            np.ones((4, 2)), np.ones((4, 1)), epochs=6, initial_epoch=1, verbose=0
        )
    assert history.epoch == [1, 2]


def test_steps_cap_cuts_arrays_without_batch_size_into_that_many_batches():
    # Keras: predict(100 rows) with the cap 3 gives 100 rows (3 batches of 34);
    # with batch_size=10 it gives 30 rows.
    mk.config.set_max_steps_per_epoch(3)
    net = model()
    seen = Batches()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert net.predict(np.ones((100, 2)), verbose=0, callbacks=[seen]).shape == (100, 1)
        assert net.predict(np.ones((100, 2)), verbose=0, batch_size=10).shape == (30, 1)
    assert seen.predict == [0, 1, 2]


def test_evaluate_reads_only_the_capped_batches():
    mk.config.set_max_steps_per_epoch(1)
    net = model()
    x = np.zeros((4, 2), "float32")
    y = np.array([[0.0], [0.0], [2.0], [2.0]], "float32")  # the first batch of 2 has loss 0
    net.layers[0].build((None, 2))
    net.layers[0].kernel.assign(np.zeros((2, 1), "float32"))
    with pytest.warns(UserWarning, match="Limiting steps_per_epoch to 1"):
        loss = net.evaluate(x, y, batch_size=2, verbose=0)
    assert loss == 0.0


def test_environment_variables_set_the_caps():
    code = "import minikeras as mk; print(mk.config.max_epochs(), mk.config.max_steps_per_epoch())"
    env = dict(os.environ, KERAS_MAX_EPOCHS="7", KERAS_MAX_STEPS_PER_EPOCH="9")
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True,
        cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
    )  # fmt: skip
    assert out.stdout.split() == ["7", "9"]


def test_same_caps_as_keras():
    keras = pytest.importorskip("keras")
    for lib in (keras, mk):
        lib.config.set_max_epochs(2)
        lib.config.set_max_steps_per_epoch(3)
    try:
        net = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
        net.compile("sgd", "mse")
        with warnings.catch_warnings(record=True) as keras_caught:
            warnings.simplefilter("always")
            keras_history = net.fit(np.ones((50, 2)), np.ones((50, 1)), epochs=4, verbose=0)
        with warnings.catch_warnings(record=True) as ours_caught:
            warnings.simplefilter("always")
            ours = model().fit(np.ones((50, 2)), np.ones((50, 1)), epochs=4, verbose=0)
        assert ours.epoch == keras_history.epoch
        assert messages(ours_caught) == messages(keras_caught)
    finally:
        keras.config.set_max_epochs(None)
        keras.config.set_max_steps_per_epoch(None)
