"""A Keras mixed_float16 functional model's `.keras` file loads, its LossScaleOptimizer restored.

Keras wraps a mixed_float16 model's optimizer in a `LossScaleOptimizer` when
it compiles and writes the wrapper's four variables before the inner
optimizer's. A functional model's own policy is the global one where it is
loaded, so its compile does not wrap there (Keras then warns and drops the
optimizer's state); minikeras sees the four extra variables and restores the
wrapper. Saved with Keras, loaded with minikeras.
"""

import numpy as np
import pytest

import minikeras as mk
from minikeras.mixed_precision import LossScaleOptimizer

RNG = np.random.default_rng(0)
X = RNG.random((32, 3)).astype("float32")
Y = RNG.random((32, 1)).astype("float32")


def _keras_mixed_functional(path, epochs):
    keras = pytest.importorskip("keras")
    keras.config.set_dtype_policy("mixed_float16")
    try:
        inputs = keras.Input((3,))
        hidden = keras.layers.Dense(4, activation="relu")(inputs)
        theirs = keras.Model(inputs, keras.layers.Dense(1)(hidden))
        theirs.compile(keras.optimizers.Adam(0.01), "mse")
        if epochs:
            theirs.fit(X, Y, epochs=epochs, batch_size=8, verbose=0)
    finally:
        keras.config.set_dtype_policy("float32")
    theirs.save(path)
    return keras, theirs


@pytest.mark.parametrize("epochs", [2, 0])
def test_a_keras_mixed_functional_file_loads_with_its_loss_scale_optimizer(tmp_path, epochs):
    path = str(tmp_path / "mixed_functional.keras")
    keras, theirs = _keras_mixed_functional(path, epochs)
    ours = mk.saving.load_model(path)  # (was a LoadError: 4 optimizer variables too many)
    assert isinstance(ours.optimizer, LossScaleOptimizer)
    assert type(ours.optimizer.inner_optimizer).__name__ == "Adam"
    assert [layer.dtype_policy.name for layer in ours.layers[1:]] == ["mixed_float16"] * 2
    if not epochs:  # (Keras's optimizer is not built: its file holds the wrapper's four)
        assert (ours.optimizer.dynamic_scale.numpy(), ours.optimizer.iterations.numpy()) == (
            theirs.optimizer.initial_scale,
            0,
        )
    for name in ("iterations", "dynamic_scale", "step_counter") if epochs else ():
        mine, expected = getattr(ours.optimizer, name), getattr(theirs.optimizer, name)
        assert mine.numpy() == keras.ops.convert_to_numpy(expected), name
    if epochs:  # the Adam moments, in the order Keras keeps them
        mine = [np.asarray(v.numpy()) for v in ours.optimizer.inner_optimizer.variables[2:]]
        expected = [keras.ops.convert_to_numpy(v) for v in theirs.optimizer.variables[6:]]
        assert sorted(m.tobytes() for m in mine) == sorted(e.tobytes() for e in expected)
    prediction = ours(X).numpy()
    assert prediction.dtype == np.float16
    np.testing.assert_allclose(prediction, keras.ops.convert_to_numpy(theirs(X)), atol=2e-3)
    ours.fit(X, Y, epochs=1, batch_size=8, verbose=0)
    assert int(ours.optimizer.iterations.numpy()) == 4 * epochs + 4


def test_keras_itself_drops_that_optimizer_state_with_a_warning(tmp_path):
    # The reference behaviour minikeras improves on: a mismatch warning, the state dropped.
    path = str(tmp_path / "mixed_functional.keras")
    keras, _ = _keras_mixed_functional(path, 1)
    with pytest.warns(UserWarning, match="Skipping variable loading for optimizer"):
        again = keras.saving.load_model(path)
    assert type(again.optimizer).__name__ == "Adam"
