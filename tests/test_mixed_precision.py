"""Mixed precision ("mixed_float16"): float32 weights, float16 computation, loss scaling.

Checked by hand (the same float16 numpy computation), and against Keras 3
where it is installed. The root conftest restores the global policy after
each test.
"""

import warnings

import numpy as np
import pytest

import minikeras as mk
from minikeras.mixed_precision import LossScaleOptimizer
from minikeras.trainers import compiled_step

RNG = np.random.default_rng(0)


def test_a_mixed_dense_computes_in_float16_from_float32_weights():
    dense = mk.layers.Dense(3, dtype="mixed_float16")
    x = RNG.standard_normal((4, 5)).astype("float32")
    y = dense(x)
    assert dense.kernel.dtype == np.float32 and dense.bias.dtype == np.float32
    assert y.dtype == np.float16
    half = x.astype("float16") @ dense.kernel.numpy().astype("float16")
    np.testing.assert_allclose(y.numpy(), half + dense.bias.numpy().astype("float16"), rtol=1e-3)


def test_gradients_reach_the_float32_weights_in_float32():
    dense = mk.layers.Dense(2, dtype="mixed_float16")
    x = RNG.standard_normal((3, 4)).astype("float32")
    with mk.GradientTape() as tape:
        total = mk.ops.sum(dense(x))
    kernel_grad, bias_grad = tape.gradient(total, [dense.kernel, dense.bias])
    assert kernel_grad.dtype == np.float32 and bias_grad.dtype == np.float32
    # d sum(x @ k + b) / dk = x^T @ ones, computed in float16 then cast back
    expected = x.astype("float16").T @ np.ones((3, 2), "float16")
    np.testing.assert_allclose(kernel_grad.numpy(), expected, rtol=1e-3)
    np.testing.assert_array_equal(bias_grad.numpy(), np.full(2, 3.0, "float32"))


class _Reads(mk.layers.Layer):
    """Records the dtypes `call` sees: its inputs, a weight, and one made with autocast=False."""

    def build(self, input_shape):
        self.scale = self.add_weight(shape=(input_shape[-1],), initializer="ones")
        self.exact = self.add_weight(shape=(input_shape[-1],), initializer="ones", autocast=False)

    def call(self, inputs):
        self.seen = (inputs.dtype, self.scale.value.dtype, self.exact.value.dtype)
        return inputs * self.scale


def test_inside_call_weights_are_read_in_the_compute_dtype_unless_autocast_is_off():
    layer = _Reads(dtype="mixed_float16")
    assert layer(np.ones((1, 2), "float64")).dtype == np.float16
    assert layer.seen == (np.float16, np.float16, np.float32)
    layer(np.ones((1, 2), "int32"))  # integer inputs are not cast (as Keras)
    assert layer.seen == (np.int32, np.float16, np.float32)
    assert layer.scale.value.dtype == np.float32  # (outside a call: as it is held)
    # autocast=False, as in Keras: floating inputs are not cast; the call of a mixed layer
    # still reads its weights in float16 (the flag matters for a layer called inside one).
    off = _Reads(dtype="mixed_float16", autocast=False)
    off(np.ones((1, 2), "float32"))
    assert off.seen == (np.float32, np.float16, np.float32)


class _Outer(mk.layers.Layer):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.inner = mk.layers.Dense(2, dtype="float32")

    def call(self, inputs):
        return self.inner(inputs)


def test_a_float32_layer_inside_a_mixed_one_computes_in_float32():
    assert _Outer(dtype="mixed_float16")(np.ones((1, 2))).dtype == np.float32


def test_a_layer_with_autocast_off_inside_a_mixed_one_reads_its_weights_as_held():
    class Holder(mk.layers.Layer):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.inner = _Reads(dtype="mixed_float16", autocast=False)

        def call(self, inputs):
            return self.inner(inputs)

    holder = Holder(dtype="mixed_float16")
    holder(np.ones((1, 2), "float32"))
    assert holder.inner.seen[1:] == (np.float32, np.float32)


def test_an_embedding_under_the_global_mixed_policy_outputs_float16():
    mk.mixed_precision.set_global_policy("mixed_float16")
    embedding = mk.layers.Embedding(5, 2)
    assert embedding(np.array([[1, 2]])).dtype == np.float16
    assert embedding.embeddings.dtype == np.float32


def _regression_data():
    x = np.random.default_rng(1).standard_normal((64, 3)).astype("float32")
    return x, x @ np.array([[1.0], [-2.0], [0.5]], "float32")


def test_fit_under_mixed_float16_trains_float32_weights_and_outputs_float16():
    mk.utils.set_random_seed(0)
    mk.mixed_precision.set_global_policy("mixed_float16")
    model = mk.Sequential(
        [mk.Input((3,)), mk.layers.Dense(8, activation="relu"), mk.layers.Dense(1)]
    )
    model.compile(mk.optimizers.SGD(0.05), "mse")
    assert isinstance(model.optimizer, LossScaleOptimizer)
    assert model.optimizer.name == "loss_scale_optimizer"
    x, y = _regression_data()
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # (float16 overflow stays quiet)
        history = model.fit(x, y, epochs=8, batch_size=16, verbose=0)
    losses = history.history["loss"]
    assert losses[-1] < 0.5 * losses[0]
    assert all(w.dtype == np.float32 for w in model.weights)
    assert model(x).dtype == np.float16 and model.predict(x, verbose=0).dtype == np.float16
    # 32 steps, no growth (2000 steps): each skipped step (an overflow) halved the scale.
    skipped = 32 - int(model.optimizer.iterations.numpy())
    assert float(model.optimizer.dynamic_scale.numpy()) == 2.0**15 / 2.0**skipped


def test_a_fit_whose_every_step_the_loss_scale_skipped_says_so_not_that_weights_are_dead():
    mk.mixed_precision.set_global_policy("mixed_float16")
    inputs = mk.Input((5,))
    hidden = mk.layers.BatchNormalization()(mk.layers.Dense(8, activation="relu")(inputs))
    model = mk.Model(inputs, mk.layers.Dense(2, dtype="float32")(hidden))
    model.compile("adam", "mse")
    x = np.random.default_rng(1).normal(size=(8, 5)).astype("float32")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model.fit(x, np.ones((8, 2)), epochs=1, verbose=0)  # (one step: it overflows at 2**15)
    said = [str(w.message) for w in caught if issubclass(w.category, mk.TrackingWarning)]
    assert int(model.optimizer.iterations.numpy()) == 0
    assert len(said) == 1 and "applied no update in this fit" in said[0], said
    assert "dynamic_scale is now 16384" in said[0] and "never changed" not in said[0]
    # Once it applies updates, a weight that still does not move is named as before.
    model.optimizer.dynamic_scale.assign(1.0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model.fit(x, np.ones((8, 2)), epochs=1, verbose=0)
    assert int(model.optimizer.iterations.numpy()) == 1
    assert not [w for w in caught if "applied no update" in str(w.message)]


def test_compile_wraps_only_for_mixed_float16_and_auto_scale_loss():
    model = mk.Sequential([mk.Input((3,)), mk.layers.Dense(1, dtype="mixed_float16")])
    model.compile("sgd", "mse")  # the model's own policy is float32: not wrapped, as Keras
    assert type(model.optimizer).__name__ == "SGD"
    mk.mixed_precision.set_global_policy("mixed_float16")
    mixed = mk.Sequential([mk.Input((3,)), mk.layers.Dense(1)])
    mixed.compile("sgd", "mse", auto_scale_loss=False)
    assert type(mixed.optimizer).__name__ == "SGD"
    wrapped = LossScaleOptimizer(mk.optimizers.Adam())
    mixed.compile(wrapped, "mse")
    assert mixed.optimizer is wrapped


def test_the_compiled_step_leaves_mixed_models_eager_and_says_why():
    mk.mixed_precision.set_global_policy("mixed_float16")
    model = mk.Sequential([mk.Input((3,)), mk.layers.Dense(1)])
    model.compile("sgd", "mse")
    assert "LossScaleOptimizer" in compiled_step._not_compilable(model)
    model.compile("sgd", "mse", auto_scale_loss=False)
    assert "mixed-precision policy 'mixed_float16'" in compiled_step._not_compilable(model)


def test_a_loss_of_float16_predictions_is_computed_in_float32():
    loss = mk.losses.MeanSquaredError()(np.ones((2, 1)), np.full((2, 1), 3.0, "float16"))
    assert loss.dtype == np.float32 and float(loss) == 4.0
    wide = mk.losses.MeanSquaredError()(np.ones((2, 1)), np.full((2, 1), 3.0, "float64"))
    assert wide.dtype == np.float64  # (a float64 model keeps its losses in float64)


# ---------------------------------------------------------------- LossScaleOptimizer


def _scaled_sgd(initial_scale=8.0, dynamic_growth_steps=2):
    return LossScaleOptimizer(mk.optimizers.SGD(0.5), initial_scale, dynamic_growth_steps)


def test_finite_gradients_are_unscaled_and_applied_and_the_scale_grows_after_n_steps():
    w = mk.Variable([1.0, 2.0], name="w")
    optimizer = _scaled_sgd()
    optimizer.apply([np.array([8.0, -16.0], "float32")], [w])  # gradient [1, -2] times 8
    np.testing.assert_array_equal(w.numpy(), [0.5, 3.0])  # w - 0.5 * [1, -2]
    assert (
        float(optimizer.dynamic_scale.numpy()) == 8.0 and int(optimizer.step_counter.numpy()) == 1
    )
    optimizer.apply([np.array([8.0, 8.0], "float32")], [w])  # the second good step in a row
    np.testing.assert_array_equal(w.numpy(), [0.0, 2.5])
    assert (
        float(optimizer.dynamic_scale.numpy()) == 16.0 and int(optimizer.step_counter.numpy()) == 0
    )
    assert int(optimizer.iterations.numpy()) == 2


def test_a_non_finite_gradient_skips_the_step_and_halves_the_scale():
    w, v = mk.Variable([1.0], name="w"), mk.Variable([1.0], name="v")
    optimizer = _scaled_sgd(dynamic_growth_steps=3)
    optimizer.apply([np.array([8.0]), np.array([8.0])], [w, v])
    for bad in (np.inf, np.nan):
        optimizer.apply([np.array([8.0]), np.array([bad])], [w, v])
    np.testing.assert_array_equal([w.numpy(), v.numpy()], [[0.5], [0.5]])  # the first step only
    assert float(optimizer.dynamic_scale.numpy()) == 2.0  # 8 / 2 / 2
    assert int(optimizer.step_counter.numpy()) == 0 and int(optimizer.iterations.numpy()) == 1


def test_scale_loss_learning_rate_variables_and_config():
    optimizer = _scaled_sgd()
    assert float(optimizer.scale_loss(mk.ops.convert_to_tensor(0.25))) == 2.0
    assert optimizer.learning_rate is optimizer.inner_optimizer.learning_rate
    optimizer.learning_rate = 0.125
    assert float(optimizer.inner_optimizer.learning_rate.numpy()) == 0.125
    optimizer.build([mk.Variable([1.0], name="w")])
    names = [v.name for v in optimizer.variables]
    assert names == ["step_counter", "dynamic_scale", "iteration", "learning_rate"]
    config = optimizer.get_config()
    assert config["initial_scale"] == 8.0 and config["dynamic_growth_steps"] == 2
    again = mk.optimizers.deserialize(mk.optimizers.serialize(optimizer))
    assert isinstance(again, LossScaleOptimizer) and again.get_config() == config


def test_bad_arguments_are_refused_by_name():
    sgd = mk.optimizers.SGD()
    with pytest.raises(ValueError, match="does not support `clipnorm`; set it on the inner"):
        LossScaleOptimizer(sgd, clipnorm=1.0)
    with pytest.raises(ValueError, match="`dynamic=False` is not supported"):
        LossScaleOptimizer(sgd, dynamic=False)
    with pytest.raises(ValueError, match="`dynamic_growth_steps` must be an int >= 1, got 0"):
        LossScaleOptimizer(sgd, dynamic_growth_steps=0)
    with pytest.raises(ValueError, match="`initial_scale` must be"):
        LossScaleOptimizer(sgd, initial_scale=-1.0)
    with pytest.raises(TypeError, match="must be an Optimizer, got str"):
        LossScaleOptimizer("sgd")


# ------------------------------------------------------------------------ Keras


def test_a_mixed_model_matches_keras_dtypes_and_its_optimizer_config():
    keras = pytest.importorskip("keras")
    keras.config.set_dtype_policy("mixed_float16")
    try:
        theirs = keras.Sequential([keras.Input((3,)), keras.layers.Dense(4), keras.layers.Dense(1)])
        theirs.compile(keras.optimizers.SGD(0.01), "mse")
    finally:
        keras.config.set_dtype_policy("float32")
    mk.mixed_precision.set_global_policy("mixed_float16")
    ours = mk.Sequential([mk.Input((3,)), mk.layers.Dense(4), mk.layers.Dense(1)])
    ours.compile(mk.optimizers.SGD(0.01), "mse")
    ours.set_weights([np.asarray(w) for w in theirs.get_weights()])
    x, _ = _regression_data()
    expected = keras.ops.convert_to_numpy(theirs(x))
    assert ours(x).dtype == expected.dtype == np.float16
    np.testing.assert_allclose(ours(x).numpy(), expected, rtol=1e-2, atol=1e-2)
    assert [w.dtype.name for w in ours.weights] == [w.dtype for w in theirs.weights]
    their_config, our_config = theirs.optimizer.get_config(), ours.optimizer.get_config()
    assert type(theirs.optimizer).__name__ == type(ours.optimizer).__name__
    for key in ("name", "initial_scale", "dynamic_growth_steps"):
        assert our_config[key] == their_config[key], key


_X3 = RNG.random((2, 5, 4)).astype("float32")
_X4 = RNG.random((2, 6, 6, 3)).astype("float32")
# What Keras 3.15 gives for each under "mixed_float16": float16 outputs, float32 weights.
_LAYERS = {
    "LSTM": (lambda: mk.layers.LSTM(3), _X3),
    "GRU": (lambda: mk.layers.GRU(3, return_sequences=True), _X3),
    "Conv2D": (lambda: mk.layers.Conv2D(2, 3), _X4),
    "BatchNormalization": (lambda: mk.layers.BatchNormalization(), _X4),
    "LayerNormalization": (lambda: mk.layers.LayerNormalization(), _X3),
    "EinsumDense": (lambda: mk.layers.EinsumDense("abc,cd->abd", (None, 2)), _X3),
    "MultiHeadAttention": (lambda: mk.layers.MultiHeadAttention(2, 2), _X3),
    "MaxPooling2D": (lambda: mk.layers.MaxPooling2D(), _X4),
}


@pytest.mark.parametrize("name", sorted(_LAYERS))
def test_layers_under_the_global_mixed_policy_output_float16_from_float32_weights(name):
    mk.mixed_precision.set_global_policy("mixed_float16")
    make, x = _LAYERS[name]
    layer = make()
    y = layer(x, x) if name == "MultiHeadAttention" else layer(x, training=True)
    assert y.dtype == np.float16
    assert all(w.dtype == np.float32 for w in layer.weights)


def _trained_mixed_model():
    mk.mixed_precision.set_global_policy("mixed_float16")
    model = mk.Sequential([mk.Input((3,)), mk.layers.Dense(4), mk.layers.Dense(1)])
    model.compile("adam", "mse")
    x, y = _regression_data()
    model.fit(x, y, epochs=2, batch_size=16, verbose=0)
    return model


def test_a_saved_mixed_model_keeps_its_loss_scale_state(tmp_path):
    model = _trained_mixed_model()
    path = str(tmp_path / "mixed.keras")
    model.save(path)
    mk.mixed_precision.set_global_policy("float32")  # (the file's layers keep theirs)
    loaded = mk.saving.load_model(path)
    assert isinstance(loaded.optimizer, LossScaleOptimizer)
    for name in ("dynamic_scale", "step_counter", "iterations"):
        mine, theirs = getattr(model.optimizer, name), getattr(loaded.optimizer, name)
        assert mine.numpy() == theirs.numpy(), name


def test_keras_loads_our_mixed_file_and_we_load_theirs(tmp_path):
    keras = pytest.importorskip("keras")
    model = _trained_mixed_model()
    ours_path = str(tmp_path / "ours.keras")
    model.save(ours_path)
    theirs = keras.saving.load_model(ours_path)
    assert theirs.layers[0].dtype_policy.name == "mixed_float16"
    assert float(theirs.optimizer.dynamic_scale.numpy()) == float(
        model.optimizer.dynamic_scale.numpy()
    )
    assert int(theirs.optimizer.iterations.numpy()) == int(model.optimizer.iterations.numpy())
    x, y = _regression_data()
    theirs.fit(x, y, epochs=1, batch_size=16, verbose=0)
    their_path = str(tmp_path / "theirs.keras")
    theirs.save(their_path)
    again = mk.saving.load_model(their_path)
    assert isinstance(again.optimizer, LossScaleOptimizer)
    assert float(again.optimizer.dynamic_scale.numpy()) == float(
        theirs.optimizer.dynamic_scale.numpy()
    )
    assert int(again.optimizer.iterations.numpy()) == int(theirs.optimizer.iterations.numpy())


def test_a_mixed_functional_model_gives_a_float32_input_its_data_unrounded():
    # As Keras's Functional: each Input converts the data to its own dtype; the model
    # does not round it to its float16 compute dtype first (70000 overflows float16).
    mk.mixed_precision.set_global_policy("mixed_float16")
    x = mk.Input((1,))
    head = mk.layers.Dense(1, use_bias=False, kernel_initializer="ones", dtype="float32")
    model = mk.Model(x, head(x))
    data = np.array([[1.0001], [70000.0]], "float32")
    np.testing.assert_array_equal(model(data).numpy(), data)
    np.testing.assert_array_equal(model.predict(data, verbose=0), data)


def test_a_float64_input_of_a_float32_model_keeps_its_precision():
    x = mk.Input((1,), dtype="float64")
    model = mk.Model(x, mk.layers.Dense(1, use_bias=False, kernel_initializer="ones",
                                        dtype="float64")(x))  # fmt: skip
    out = model(np.array([[1 + 1e-12]]))
    assert out.dtype == np.float64 and out.numpy()[0, 0] == 1 + 1e-12
