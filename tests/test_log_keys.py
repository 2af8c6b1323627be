"""The log keys of a model with several outputs, as Keras 3 names them.

Keras 3 (`CompileLoss.build`) adds a `<output>_loss` entry per output only
when two or more outputs have a loss: with `loss=[None, "mse"]` the logs
hold `loss` alone (it is that one output's loss). The last test runs Keras
itself, when it is importable, on the same compile arguments.
"""

import numpy as np
import pytest

import minikeras as mk

pytestmark = pytest.mark.filterwarnings("ignore::minikeras.TrackingWarning")  # heads with no loss

X = np.linspace(-1.0, 1.0, 24, dtype="float32").reshape(8, 3)
Y_A = np.ones((8, 1), "float32")
Y_B = np.full((8, 2), 0.5, "float32")

CASES = [
    ([None, "mse"], None, ["loss"]),
    ({"a": None, "b": "mse"}, None, ["loss"]),
    (["mse", None], [["mae"], None], ["a_mae", "loss"]),
    ([None, "mse"], {"a": "mae", "b": "mae"}, ["a_mae", "b_mae", "loss"]),
    (["mse", "mse"], None, ["a_loss", "b_loss", "loss"]),
    ("mse", None, ["a_loss", "b_loss", "loss"]),
]


def _two_heads(mk_module, seed=0):
    inputs = mk_module.Input((3,), name="x")
    a = mk_module.layers.Dense(1, name="a", kernel_initializer="ones")(inputs)
    b = mk_module.layers.Dense(2, name="b", kernel_initializer="zeros")(inputs)
    return mk_module.Model(inputs, [a, b])


@pytest.mark.parametrize(("loss", "metrics", "keys"), CASES)
def test_fit_evaluate_and_history_log_the_keras_keys(loss, metrics, keys):
    model = _two_heads(mk)
    model.compile("sgd", loss, metrics=metrics, report_unchanged=False)
    history = model.fit(X, [Y_A, Y_B], epochs=2, verbose=0)
    assert sorted(history.history) == keys
    assert all(len(values) == 2 for values in history.history.values())
    assert sorted(model.evaluate(X, [Y_A, Y_B], verbose=0, return_dict=True)) == keys
    assert sorted(model.test_on_batch(X, [Y_A, Y_B], return_dict=True)) == keys
    assert sorted(model.train_on_batch(X, [Y_A, Y_B], return_dict=True)) == keys


def test_one_output_with_a_loss_logs_that_loss_alone():
    model = _two_heads(mk)
    model.compile("sgd", [None, "mse"])
    # b's kernel is zeros: b predicts its bias (zeros), so its mse is 0.5 ** 2.
    assert model.evaluate(X, [Y_A, Y_B], verbose=0) == pytest.approx(0.25)
    assert model.metrics_names == ["loss"]


@pytest.mark.parametrize(("loss", "metrics", "keys"), CASES)
def test_log_keys_match_keras(loss, metrics, keys):
    keras = pytest.importorskip("keras")
    reference = _two_heads(keras)
    reference.compile("sgd", loss, metrics=metrics)
    history = reference.fit(X, [Y_A, Y_B], epochs=1, verbose=0)
    assert sorted(history.history) == keys
    assert sorted(reference.evaluate(X, [Y_A, Y_B], verbose=0, return_dict=True)) == keys
