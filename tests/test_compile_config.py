"""Compile's loss weights and the optimizer's `iterations` dtype: by hand and against Keras 3."""

import os

import numpy as np
import pytest

import minikeras as mk

RNG = np.random.default_rng(0)
X = RNG.standard_normal((8, 2)).astype("float32")
Y = (X[:, :1] > 0).astype("float32")


def _keras():
    os.environ.setdefault("KERAS_BACKEND", "jax")
    return pytest.importorskip("keras")


def test_iterations_dtype_is_keras_s():
    keras = _keras()
    for name in ("Adam", "SGD", "RMSprop"):
        theirs = getattr(keras.optimizers, name)().iterations.dtype
        assert str(getattr(mk.optimizers, name)().iterations.dtype) == theirs


@pytest.mark.parametrize("loss_weights", [[2.0], (2.0,), 2.0, {"out": 2.0}])
def test_one_output_s_loss_weight_scales_its_loss(loss_weights):
    # mse of outputs 2 against targets 0 is 4; the weight makes it 8 (a list of one
    # weight is that output's weight, as in Keras, not an array to multiply by).
    dense = mk.layers.Dense(1, kernel_initializer="ones", name="out")
    model = mk.Sequential([mk.Input((2,)), dense])
    model.compile("sgd", "mse", loss_weights=loss_weights)
    x, y = np.ones((4, 2), "float32"), np.zeros((4, 1), "float32")
    assert model.evaluate(x, y, verbose=0) == pytest.approx(8.0)
    assert model.fit(x, y, verbose=0).history["loss"] == [pytest.approx(8.0)]


def test_one_output_s_loss_weight_as_keras():
    keras = _keras()
    x, y = np.ones((4, 2), "float32"), np.zeros((4, 1), "float32")
    for loss_weights in ([2.0], 2.0):
        results = []
        for api in (mk, keras):
            model = api.Sequential(
                [api.Input((2,)), api.layers.Dense(1, kernel_initializer="ones")]
            )
            model.compile("sgd", "mse", loss_weights=loss_weights)
            results.append(model.evaluate(x, y, verbose=0))
        assert results[0] == pytest.approx(results[1], rel=1e-6)
