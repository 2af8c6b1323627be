"""Data one trailing axis of 1 away from an `Input` feeds it, as in Keras's models.

Keras's functional models (and a Sequential built on an `Input`) add a trailing
axis of 1 to data of shape `(batch,)` for an `Input((1,))`, and drop one from
`(batch, 3, 1)` for an `Input((3,))`; any other rank mismatch is refused.
"""

import numpy as np
import pytest

import minikeras as mk

RNG = np.random.default_rng(0)


def _dense(units, seed):
    return mk.layers.Dense(units, kernel_initializer=mk.initializers.GlorotUniform(seed))


def _functional(width, units=2):
    x = mk.Input((width,))
    return mk.Model(x, _dense(units, 1)(x))


def test_functional_takes_a_vector_for_an_input_of_width_one():
    model = _functional(1)
    data = RNG.normal(size=4).astype("float32")
    kernel, bias = model.get_weights()
    expected = data[:, None] @ kernel + bias
    np.testing.assert_allclose(model(data).numpy(), expected, rtol=1e-6)
    np.testing.assert_allclose(model.predict(data, verbose=0), expected, rtol=1e-6)


def test_functional_drops_a_trailing_axis_of_one():
    model = _functional(3)
    data = RNG.normal(size=(4, 3, 1)).astype("float32")
    np.testing.assert_allclose(model(data).numpy(), model(data[..., 0]).numpy())


def test_sequential_on_an_input_takes_a_vector():
    model = mk.Sequential([mk.Input((1,)), _dense(2, 1)])
    data = RNG.normal(size=5).astype("float32")
    kernel, bias = model.get_weights()
    np.testing.assert_allclose(model(data).numpy(), data[:, None] @ kernel + bias, rtol=1e-6)


def test_fit_on_vectors_equals_fit_on_columns():
    x, y = RNG.normal(size=40).astype("float32"), RNG.normal(size=(40, 1)).astype("float32")
    models = [mk.Sequential([mk.Input((1,)), _dense(1, 2)]) for _ in range(2)]
    histories = []
    for model, data in zip(models, (x, x[:, None])):
        model.compile(mk.optimizers.SGD(0.1), "mse")
        histories.append(
            model.fit(data, y, batch_size=8, epochs=2, shuffle=False, verbose=0).history["loss"]
        )
    np.testing.assert_allclose(histories[0], histories[1], rtol=1e-6)
    np.testing.assert_allclose(models[0].get_weights()[0], models[1].get_weights()[0])


def test_other_ranks_are_still_refused():
    model = _functional(3)
    with pytest.raises(ValueError, match="dense"):
        model(np.ones((4, 3, 2), "float32"))
    with pytest.raises(ValueError, match="dense"):
        model(np.ones(4, "float32"))  # (Input((3,)): its last axis is not 1)


def test_matches_keras():
    keras = pytest.importorskip("keras")
    data = RNG.normal(size=6).astype("float32")
    ours = mk.Sequential([mk.Input((1,)), mk.layers.Dense(2)])
    theirs = keras.Sequential([keras.Input((1,)), keras.layers.Dense(2)])
    theirs.set_weights(ours.get_weights())
    np.testing.assert_allclose(
        ours.predict(data, verbose=0), theirs.predict(data, verbose=0), rtol=1e-6
    )
    x = keras.Input((3,))
    theirs = keras.Model(x, keras.layers.Dense(2)(x))
    ours = _functional(3)
    theirs.set_weights(ours.get_weights())
    cube = RNG.normal(size=(4, 3, 1)).astype("float32")
    np.testing.assert_allclose(ours(cube).numpy(), np.asarray(theirs(cube)), rtol=1e-6)
