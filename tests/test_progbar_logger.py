"""`callbacks.ProgbarLogger`: driven by hand it draws Keras's bar; inside `fit`, `evaluate`
and `predict` the trainer's display is the only one. By hand and against Keras 3."""

import os
import re

import numpy as np
import pytest

import minikeras as mk

X = np.ones((8, 2), "float32")
Y = np.ones((8, 1), "float32")


def _drive_an_epoch(logger, verbose, epochs=2, steps=3):
    logger.set_params({"verbose": verbose, "epochs": epochs, "steps": steps})
    logger.on_train_begin()
    logger.on_epoch_begin(0)
    for batch in range(3):
        logger.on_train_batch_begin(batch)
        logger.on_train_batch_end(batch, {"loss": 1.0 / (batch + 1)})
    logger.on_epoch_end(0, {"loss": 0.5})
    logger.on_train_end()


def _drive_a_prediction(logger, verbose, steps):
    logger.set_params({"verbose": verbose, "epochs": 1, "steps": steps})
    logger.on_predict_begin()
    for batch in range(3):
        logger.on_predict_batch_end(batch, {"outputs": np.zeros((2, 1))})
    logger.on_predict_end()


def _lines(text):
    """The lines drawn, each redraw (after a carriage return) on its own, no ANSI colours."""
    text = re.sub(r"\x1b\[[0-9;]*m", "", text)
    return [line.strip() for line in re.split(r"[\r\n]+", text) if line.strip()]


def test_driven_by_hand_it_draws_the_epoch_and_a_bar(capsys):
    _drive_an_epoch(mk.callbacks.ProgbarLogger(), verbose=1)
    lines = _lines(capsys.readouterr().out)
    assert lines[0] == "Epoch 1/2"
    # The logs are shown as given (the trainer's running averages), not averaged again.
    assert lines[-1].startswith("3/3 [") and lines[-1].endswith("loss: 0.5000")


def test_one_line_at_the_end_with_verbose_2_and_nothing_with_0(capsys):
    _drive_an_epoch(mk.callbacks.ProgbarLogger(), verbose=2, epochs=1)
    lines = _lines(capsys.readouterr().out)
    assert len(lines) == 1 and lines[0].startswith("3/3 - ")
    assert lines[0].endswith("loss: 0.5000")
    _drive_an_epoch(mk.callbacks.ProgbarLogger(), verbose=0)
    assert capsys.readouterr().out == ""


def test_a_prediction_of_unknown_length_learns_its_count_at_the_end(capsys):
    _drive_a_prediction(mk.callbacks.ProgbarLogger(), verbose=2, steps=None)
    lines = _lines(capsys.readouterr().out)
    assert len(lines) == 1 and lines[0].startswith("3/3 - ") and "outputs" not in lines[0]


def test_evaluation_inside_training_is_not_drawn(capsys):
    logger = mk.callbacks.ProgbarLogger()
    logger.set_params({"verbose": 2, "epochs": 1, "steps": 1})
    logger.on_train_begin()
    logger.on_test_begin()
    logger.on_test_batch_end(0, {"loss": 1.0})
    logger.on_test_end({"loss": 1.0})
    assert capsys.readouterr().out == ""


def test_inside_fit_evaluate_and_predict_the_trainer_draws_alone(capsys):
    model = mk.Sequential([mk.Input((2,)), mk.layers.Dense(1)])
    model.compile("sgd", loss="mse")
    logger = mk.callbacks.ProgbarLogger()
    runs = [
        lambda callbacks: model.fit(X, Y, epochs=2, verbose=2, callbacks=callbacks),
        lambda callbacks: model.evaluate(X, Y, verbose=2, callbacks=callbacks),
        lambda callbacks: model.predict(X, batch_size=4, verbose=2, callbacks=callbacks),
        lambda callbacks: model.predict(X, batch_size=4, verbose=0, callbacks=callbacks),
    ]
    for run in runs:
        run([])
        alone = _lines(capsys.readouterr().out)
        run([logger])
        assert len(_lines(capsys.readouterr().out)) == len(alone)
    # The same logger, driven by hand afterwards, draws again.
    _drive_a_prediction(logger, verbose=2, steps=3)
    assert _lines(capsys.readouterr().out)[0].startswith("3/3 - ")


def test_the_same_lines_as_keras(capsys):
    os.environ.setdefault("KERAS_BACKEND", "jax")
    keras = pytest.importorskip("keras")
    for drive in (
        lambda logger: _drive_an_epoch(logger, verbose=1),
        lambda logger: _drive_an_epoch(logger, verbose=2),
        lambda logger: _drive_a_prediction(logger, verbose=2, steps=None),
        lambda logger: _drive_an_epoch(logger, verbose=0),
    ):
        drive(keras.callbacks.ProgbarLogger())
        theirs = _lines(capsys.readouterr().out)
        drive(mk.callbacks.ProgbarLogger())
        ours = _lines(capsys.readouterr().out)
        assert bool(ours) == bool(theirs)
        if theirs:  # the first and last draws: "Epoch 1/2" or a count, and the last logs
            assert ours[0].split()[:2] == theirs[0].split()[:2]
            assert ours[-1].split()[0] == theirs[-1].split()[0]
            tail = "loss: 0.5000"
            assert ours[-1].endswith(tail) == theirs[-1].endswith(tail)
            assert ("step" in ours[-1].split(" - ")[-1]) == ("step" in theirs[-1].split(" - ")[-1])


def test_evaluate_and_predict_give_callbacks_one_epoch_in_params():
    # As Keras's do (a ProgbarLogger reads `epochs`): {"verbose", "epochs": 1, "steps"}.
    seen = []

    class Spy(mk.callbacks.Callback):
        def on_test_begin(self, logs=None):
            seen.append(dict(self.params))

        def on_predict_begin(self, logs=None):
            seen.append(dict(self.params))

    model = mk.Sequential([mk.Input((2,)), mk.layers.Dense(1)])
    model.compile("sgd", loss="mse")
    model.evaluate(X, Y, batch_size=4, verbose=0, callbacks=[Spy()])
    model.predict(X, batch_size=4, verbose=0, callbacks=[Spy()])
    assert seen == [{"verbose": 0, "epochs": 1, "steps": 2}] * 2
