"""`Wrapper` (the base of TimeDistributed and SpectralNormalization) and `SpectralNormalization`:
values by hand and by numpy's SVD, training against inference, configs, and Keras 3 with the
same weights (`.keras` files both ways) when `keras` is installed."""

import os

import numpy as np
import pytest
from op_graphs import assert_saves_and_crosses_to_keras

import minikeras as mk
from minikeras import layers


class Doubled(layers.Wrapper):
    def call(self, inputs):
        return 2.0 * self.layer(inputs)

    def compute_output_shape(self, input_shape):
        return self.layer.compute_output_shape(input_shape)


def _keras():
    os.environ.setdefault("KERAS_BACKEND", "jax")
    return pytest.importorskip("keras")


# ------------------------------------------------------------------------------- Wrapper


def test_a_wrapper_keeps_builds_and_configures_its_layer():
    dense = layers.Dense(3, name="inner")
    wrapper = Doubled(dense, name="outer")
    assert wrapper.layer is dense and not dense.built
    out = wrapper(np.ones((2, 4), "float32"))
    assert dense.built and dense.kernel.shape == (4, 3)
    np.testing.assert_allclose(
        out.numpy(), 2.0 * (np.ones((2, 4)) @ dense.kernel.numpy()), rtol=1e-6, atol=1e-7
    )
    config = wrapper.get_config()
    assert config["name"] == "outer" and config["layer"]["class_name"] == "Dense"
    clone = Doubled.from_config(config)
    assert type(clone.layer) is layers.Dense and clone.layer.name == "inner"
    assert not clone.layer.built  # (built by the wrapper, so its weights come in order)
    clone(np.ones((2, 4), "float32"))
    assert clone.get_config() == config


def test_the_base_refuses_a_non_layer_and_has_no_call():
    with pytest.raises(ValueError, match=r"Wrapper: `layer` must be a Layer instance"):
        layers.Wrapper("dense")
    with pytest.raises(ValueError, match=r"TimeDistributed: `layer` must be a Layer"):
        layers.TimeDistributed(np.ones(3))
    with pytest.raises(NotImplementedError, match="abstract base class"):
        layers.Wrapper(layers.Dense(2))(np.ones((1, 2), "float32"))


def test_which_layers_are_wrappers_is_as_in_keras():
    assert issubclass(layers.TimeDistributed, layers.Wrapper)
    assert issubclass(layers.SpectralNormalization, layers.Wrapper)
    assert not issubclass(layers.Bidirectional, layers.Wrapper)
    keras = _keras()
    for name in ("TimeDistributed", "SpectralNormalization", "Bidirectional"):
        assert issubclass(getattr(keras.layers, name), keras.layers.Wrapper) == issubclass(
            getattr(layers, name), layers.Wrapper
        )


def test_time_distributed_writes_the_config_keras_writes():
    keras = _keras()
    ours = layers.TimeDistributed(layers.Dense(3, name="d"), name="td").get_config()
    theirs = keras.layers.TimeDistributed(keras.layers.Dense(3, name="d"), name="td").get_config()
    assert list(ours) == [key for key in theirs if key in ours]
    assert ours["layer"]["config"]["units"] == theirs["layer"]["config"]["units"] == 3


# ------------------------------------------------------------------ SpectralNormalization


def _spectral(layer, kernel, vector_u, bias=None, power_iterations=1):
    wrapper = layers.SpectralNormalization(layer, power_iterations=power_iterations)
    return _set(wrapper, kernel, vector_u, bias)


def _set(wrapper, kernel, vector_u, bias=None):
    wrapper.build((None, *kernel.shape[:-1]) if kernel.ndim == 2 else (None, 6, 6, 2))
    wrapper.kernel.assign(kernel)
    wrapper.vector_u.assign(vector_u)
    if bias is not None:
        wrapper.layer.bias.assign(bias)
    return wrapper


def test_one_power_iteration_by_hand():
    # W = diag(3, 1) with u = (1, 0): v = unit(u W^T) = (1, 0), u = unit(v W) = (1, 0),
    # sigma = v W u^T = 3, so the kernel becomes diag(1, 1/3)
    wrapper = _spectral(layers.Dense(2), np.diag([3.0, 1.0]), np.array([[1.0, 0.0]]))
    out = wrapper(np.array([[1.0, 1.0]], "float32"), training=True)
    np.testing.assert_allclose(wrapper.kernel.numpy(), np.diag([1.0, 1 / 3]), rtol=1e-6)
    np.testing.assert_allclose(wrapper.vector_u.numpy(), [[1.0, 0.0]])
    np.testing.assert_allclose(out.numpy(), [[1.0, 1 / 3]], rtol=1e-6)


def test_power_iterations_reach_the_largest_singular_value():
    rng = np.random.default_rng(0)
    kernel = rng.standard_normal((5, 4)).astype("float32")
    u = rng.standard_normal((1, 4)).astype("float32")
    wrapper = _spectral(layers.Dense(4), kernel, u, power_iterations=50)
    wrapper(np.ones((1, 5), "float32"), training=True)
    sigma = np.linalg.svd(kernel.astype(np.float64), compute_uv=False)[0]
    np.testing.assert_allclose(wrapper.kernel.numpy(), kernel / sigma, rtol=1e-4, atol=1e-6)
    right = np.linalg.svd(kernel.astype(np.float64))[2][0]  # first right singular vector
    np.testing.assert_allclose(np.abs(wrapper.vector_u.numpy()[0]), np.abs(right), atol=1e-4)


def test_a_conv_kernel_is_seen_as_a_matrix_of_its_last_axis():
    rng = np.random.default_rng(1)
    kernel = rng.standard_normal((3, 3, 2, 4)).astype("float32")
    wrapper = _spectral(
        layers.Conv2D(4, 3), kernel, np.ones((1, 4), "float32"), power_iterations=60
    )
    out = wrapper(np.ones((1, 6, 6, 2), "float32"), training=True)
    sigma = np.linalg.svd(kernel.reshape(-1, 4).astype(np.float64), compute_uv=False)[0]
    np.testing.assert_allclose(wrapper.kernel.numpy(), kernel / sigma, rtol=1e-4, atol=1e-6)
    assert out.shape == (1, 4, 4, 4) == wrapper.compute_output_shape((1, 6, 6, 2))
    assert wrapper.compute_output_shape((None, 6, 6, 2)) == (None, 4, 4, 4)


def test_inference_uses_the_weights_as_they_are():
    rng = np.random.default_rng(2)
    kernel, u = rng.standard_normal((3, 2)), rng.standard_normal((1, 2))
    wrapper = _spectral(layers.Dense(2, use_bias=False), kernel, u)
    x = rng.standard_normal((4, 3)).astype("float32")
    for training in (None, False):
        np.testing.assert_allclose(wrapper(x, training=training).numpy(), x @ kernel, rtol=1e-5)
    np.testing.assert_allclose(wrapper.kernel.numpy(), kernel.astype("float32"))
    np.testing.assert_allclose(wrapper.vector_u.numpy(), u.astype("float32"))
    model = mk.Sequential([mk.Input((3,)), wrapper])
    np.testing.assert_allclose(model.predict(x, verbose=0), x @ kernel, rtol=1e-5)


def test_a_zero_kernel_is_left_alone():
    wrapper = _spectral(layers.Dense(2), np.zeros((3, 2)), np.array([[0.5, 0.5]]))
    wrapper(np.ones((1, 3), "float32"), training=True)
    np.testing.assert_array_equal(wrapper.kernel.numpy(), np.zeros((3, 2)))
    np.testing.assert_array_equal(wrapper.vector_u.numpy(), [[0.5, 0.5]])


def test_an_embedding_is_normalized_and_its_outputs_stay_floating():
    rng = np.random.default_rng(3)
    table = rng.standard_normal((6, 3)).astype("float32")
    wrapper = layers.SpectralNormalization(layers.Embedding(6, 3), power_iterations=80)
    wrapper.build((None, 2))
    wrapper.layer.embeddings.assign(table)
    out = wrapper(np.array([[1, 4]]), training=True)
    sigma = np.linalg.svd(table.astype(np.float64), compute_uv=False)[0]
    assert wrapper.kernel is wrapper.layer.embeddings
    assert out.dtype == np.float32
    np.testing.assert_allclose(out.numpy()[0], table[[1, 4]] / sigma, rtol=1e-4)


def test_one_fit_step_trains_the_normalized_kernel():
    # SGD on the mean squared error of x @ (W / sigma) + b: the gradient is taken at the
    # normalized kernel, which the step then moves (Keras's TensorFlow and PyTorch backends).
    rng = np.random.default_rng(4)
    kernel, bias = rng.standard_normal((4, 3)), rng.standard_normal(3)
    u = np.array([[1.0, 0.0, 0.0]])
    x, y = rng.standard_normal((8, 4)), rng.standard_normal((8, 3))
    wrapper = layers.SpectralNormalization(layers.Dense(3))
    model = mk.Sequential([mk.Input((4,)), wrapper])
    _set(wrapper, kernel, u, bias)
    model.compile(optimizer=mk.optimizers.SGD(0.1), loss="mse")
    model.fit(x.astype("float32"), y.astype("float32"), batch_size=8, epochs=1, verbose=0)
    v = u @ kernel.T / np.linalg.norm(u @ kernel.T)
    new_u = v @ kernel / np.linalg.norm(v @ kernel)
    normalized = kernel / (v @ kernel @ new_u.T).item()
    error = x @ normalized + bias - y
    expected = normalized - 0.1 * 2 * x.T @ error / error.size
    np.testing.assert_allclose(wrapper.kernel.numpy(), expected, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(wrapper.vector_u.numpy(), new_u, rtol=1e-5)


def test_bad_arguments_are_refused():
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="power_iterations"):
            layers.SpectralNormalization(layers.Dense(2), power_iterations=bad)
    with pytest.raises(ValueError, match=r"needs a layer with a `kernel` or `embeddings`"):
        layers.SpectralNormalization(layers.LayerNormalization())(np.ones((1, 2), "float32"))
    wrapper = layers.SpectralNormalization(layers.Dense(2))
    wrapper(np.ones((1, 3), "float32"))
    with pytest.raises(ValueError):
        wrapper(np.ones((1, 4), "float32"))


def test_config_round_trip_and_a_saved_model(tmp_path):
    wrapper = layers.SpectralNormalization(layers.Dense(3), power_iterations=2, name="sn")
    config = wrapper.get_config()
    assert config["power_iterations"] == 2 and config["layer"]["class_name"] == "Dense"
    assert layers.SpectralNormalization.from_config(config).get_config() == config
    model = mk.Sequential([mk.Input((4,)), wrapper])
    x = np.random.default_rng(5).standard_normal((2, 4)).astype("float32")
    model(x, training=True)  # (vector_u and the kernel move)
    model.save(tmp_path / "m.keras")
    loaded = mk.saving.load_model(tmp_path / "m.keras")
    for ours, back in zip(model.weights, loaded.weights):
        np.testing.assert_array_equal(back.numpy(), ours.numpy())
    np.testing.assert_allclose(loaded.predict(x, verbose=0), model.predict(x, verbose=0))


def test_weights_come_in_keras_order_kernel_vector_u_then_the_rest():
    # Keras lists the wrapper's own variables (the kernel it tracks, vector_u) before
    # the wrapped layer's others, in a model too.
    model = mk.Sequential(
        [mk.Input((5, 4)), layers.Dense(3), layers.SpectralNormalization(layers.Conv1D(2, 3))]
    )
    wrapper = model.layers[1]
    assert [w.name for w in wrapper.weights] == ["kernel", "vector_u", "bias"]
    assert [w.name for w in wrapper.trainable_weights] == ["kernel", "bias"]
    shapes = [(4, 3), (3,), (3, 3, 2), (1, 2), (2,)]
    assert [w.shape for w in model.get_weights()] == shapes
    arrays = [np.full(w.shape, i + 1.0, "float32") for i, w in enumerate(wrapper.weights)]
    wrapper.set_weights(arrays)
    assert wrapper.layer.kernel.numpy().min() == 1.0 and wrapper.vector_u.numpy().min() == 2.0
    assert wrapper.layer.bias.numpy().min() == 3.0


def test_get_weights_cross_to_keras_and_back():
    keras = _keras()
    rng = np.random.default_rng(8)
    x = rng.standard_normal((2, 5, 4)).astype("float32")

    def build(api):
        sn = api.layers.SpectralNormalization(api.layers.Conv1D(2, 3))
        return api.Sequential([api.Input((5, 4)), api.layers.Dense(4), sn])

    ours, theirs = build(mk), build(keras)
    assert [w.shape for w in ours.get_weights()] == [w.shape for w in theirs.get_weights()]
    theirs.set_weights(ours.get_weights())
    for got, want in zip(theirs.get_weights(), ours.get_weights()):
        np.testing.assert_array_equal(got, want)
    np.testing.assert_allclose(
        np.asarray(theirs(x, training=True)), ours(x, training=True).numpy(), rtol=1e-5, atol=1e-6
    )
    ours.set_weights([rng.standard_normal(w.shape) for w in ours.weights])
    theirs = build(keras)
    ours.set_weights(theirs.get_weights())
    np.testing.assert_allclose(
        ours(x, training=True).numpy(), np.asarray(theirs(x, training=True)), rtol=1e-5, atol=1e-6
    )


def test_a_functional_model_saves_and_crosses_to_keras(tmp_path):
    def build(api):
        inputs = api.Input((5, 4))
        outputs = api.layers.SpectralNormalization(api.layers.Conv1D(2, 3))(inputs)
        return api.Model(inputs, outputs)

    x = np.random.default_rng(9).standard_normal((2, 5, 4)).astype("float32")
    # (an output near 0 computed from outputs near 1: an absolute tolerance too; its
    # rounding depends on the random vector_u each library draws)
    assert_saves_and_crosses_to_keras(build, x, tmp_path, atol=1e-6)


def test_keras_computes_the_same_training_call():
    keras = _keras()
    rng = np.random.default_rng(6)
    kernel = rng.standard_normal((4, 3)).astype("float32")
    bias = rng.standard_normal(3).astype("float32")
    u = rng.standard_normal((1, 3)).astype("float32")
    x = rng.standard_normal((2, 4)).astype("float32")
    ours = _spectral(layers.Dense(3), kernel, u, bias, power_iterations=2)
    theirs = keras.layers.SpectralNormalization(keras.layers.Dense(3), power_iterations=2)
    theirs.build((None, 4))
    theirs.layer.kernel.assign(kernel)
    theirs.layer.bias.assign(bias)
    theirs.vector_u.assign(u)
    for training in (False, True, True):
        np.testing.assert_allclose(
            ours(x, training=training).numpy(), np.asarray(theirs(x, training=training)), rtol=1e-5
        )
        np.testing.assert_allclose(ours.kernel.numpy(), np.asarray(theirs.kernel), rtol=1e-5)
        np.testing.assert_allclose(ours.vector_u.numpy(), np.asarray(theirs.vector_u), rtol=1e-5)


def test_keras_files_cross_both_ways(tmp_path):
    keras = _keras()
    rng = np.random.default_rng(7)
    x = rng.standard_normal((2, 4)).astype("float32")
    weights = [rng.standard_normal(s).astype("float32") for s in ((4, 3), (3,), (1, 3))]

    def build(api):
        model = api.Sequential(
            [api.Input((4,)), api.layers.SpectralNormalization(api.layers.Dense(3))]
        )
        sn = model.layers[-1]
        for variable, value in zip((sn.layer.kernel, sn.layer.bias, sn.vector_u), weights):
            variable.assign(value)
        return model, sn

    ours, _ = build(mk)
    ours.save(tmp_path / "ours.keras")
    loaded = keras.saving.load_model(tmp_path / "ours.keras")
    sn = loaded.layers[-1]
    for variable, value in zip((sn.layer.kernel, sn.layer.bias, sn.vector_u), weights):
        np.testing.assert_array_equal(np.asarray(variable), value)
    np.testing.assert_allclose(
        np.asarray(loaded(x, training=True)), ours(x, training=True).numpy(), rtol=1e-5
    )

    theirs, _ = build(keras)
    theirs.save(tmp_path / "theirs.keras")
    back = mk.saving.load_model(tmp_path / "theirs.keras")
    sn = back.layers[-1]
    for variable, value in zip((sn.layer.kernel, sn.layer.bias, sn.vector_u), weights):
        np.testing.assert_array_equal(variable.numpy(), value)
    np.testing.assert_allclose(
        back(x, training=True).numpy(), np.asarray(theirs(x, training=True)), rtol=1e-5
    )
