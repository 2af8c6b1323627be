"""Gaps keras-io's vision examples (Keras 3 versions) ran into, each reproduced small.

Each test is our own minimal model of what an example does, not the example.
"""

import numpy as np
import pytest

import minikeras as keras


def test_compute_loss_override_without_training_argument():
    # The knowledge-distillation example overrides compute_loss with the
    # signature Keras had before 3.3; fit and evaluate call it without `training`.
    class Scaled(keras.Model):
        def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, allow_empty=False):
            return 3.0 * keras.ops.mean(keras.ops.square(y - y_pred))

    inputs = keras.Input((2,))
    model = Scaled(inputs, keras.layers.Dense(1, kernel_initializer="zeros")(inputs))
    model.compile(keras.optimizers.SGD(0.0), metrics=["mae"], report_unchanged=False)
    x, y = np.ones((4, 2), "float32"), np.full((4, 1), 2.0, "float32")
    history = model.fit(x, y, epochs=1, verbose=0).history
    assert history["loss"] == [12.0] and history["mae"] == [2.0]
    assert model.evaluate(x, y, verbose=0) == [12.0, 2.0]


def test_functional_model_is_named_functional_as_in_keras():
    # keras-io's summaries print `Model: "functional_1"` for Model(inputs, outputs).
    inputs = keras.Input((3,))
    outputs = keras.layers.Dense(2)(inputs)
    first, second = keras.Model(inputs, outputs), keras.Model(inputs, outputs)
    assert first.name.startswith("functional") and second.name.startswith("functional")
    assert first.name != second.name
    assert keras.Model(inputs, outputs, name="net").name == "net"

    class Net(keras.Model):
        pass

    assert Net(inputs, outputs).name.startswith("net")


def test_adapted_normalization_has_kerass_three_weights():
    # An adapted Normalization in a Keras 3 file holds mean, variance and an int32 count.
    layer = keras.layers.Normalization()
    layer.adapt(np.array([[1.0, 2.0], [3.0, 6.0]], "float32"))
    assert [w.name for w in layer.weights] == ["mean", "variance", "count"]
    assert layer.count.dtype == "int32" and int(layer.count.numpy()) == 0
    assert layer.non_trainable_weights == layer.weights
    np.testing.assert_allclose(layer(np.array([[3.0, 6.0]])).numpy(), [[1.0, 1.0]])


def test_keras_file_with_adapted_normalization_loads(tmp_path):
    k = pytest.importorskip("keras")
    layer = k.layers.Normalization()
    layer.adapt(np.array([[1.0, 2.0], [3.0, 6.0]], "float32"))
    k.Sequential([k.Input((2,)), layer]).save(tmp_path / "norm.keras")
    loaded = keras.models.load_model(tmp_path / "norm.keras")
    np.testing.assert_allclose(loaded(np.array([[3.0, 6.0]])).numpy(), [[1.0, 1.0]], rtol=1e-6)
    loaded.save(tmp_path / "back.keras")
    back = k.models.load_model(tmp_path / "back.keras")
    assert [w.name for w in back.weights] == ["mean", "variance", "count"]


def test_one_output_given_in_a_list_takes_plain_targets_and_metrics():
    # keras-io's involution example builds Model(inputs=[x], outputs=[y]) with metrics.
    inputs = keras.Input((3,))
    outputs = keras.layers.Dense(2, kernel_initializer="zeros")(inputs)
    for model in (keras.Model([inputs], [outputs]), keras.Model([inputs], {"out": outputs})):
        loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
        model.compile(keras.optimizers.SGD(0.0), loss, metrics=["accuracy"], report_unchanged=False)
        x, y = np.ones((4, 3), "float32"), np.zeros((4, 1), "float32")
        history = model.fit(x, y, verbose=0).history
        np.testing.assert_allclose(history["loss"], [np.log(2.0)], rtol=1e-6)
        assert history["accuracy"] == [1.0]  # logits tie: argmax picks class 0


def _one_in_lists(lib):
    inputs = lib.Input((3,))
    outputs = lib.layers.Dense(2, kernel_initializer="ones")(inputs)
    return lib.Model([inputs], [outputs])


def test_model_of_one_output_in_a_list_gives_that_output_on_data():
    # keras-io's involution example probes a layer with Model(model.inputs, [layer.output]).
    model = _one_in_lists(keras)
    x = np.ones((2, 3), "float32")
    assert isinstance(model(x), keras.ops.convert_to_tensor(x).__class__)
    np.testing.assert_allclose(model(x).numpy(), np.full((2, 2), 3.0))
    assert isinstance(model.predict(x, verbose=0), np.ndarray)
    assert model.output_shape == (None, 2) and model.input_shape == (None, 3)
    symbolic = model(keras.Input((3,)))  # (symbolic calls keep the list, as Keras's do)
    assert isinstance(symbolic, list) and symbolic[0].shape == (None, 2)


def test_model_of_one_output_in_a_list_matches_keras():
    k = pytest.importorskip("keras")
    x = np.ones((2, 3), "float32")
    theirs, ours = _one_in_lists(k), _one_in_lists(keras)
    assert type(ours.predict(x, verbose=0)) is type(theirs.predict(x, verbose=0))
    assert ours.output_shape == theirs.output_shape
    assert type(ours(keras.Input((3,)))) is type(theirs(k.Input((3,))))


def _identity(shape, dtype=None):
    return np.eye(shape[-1], dtype="float32").reshape(shape)


def test_activation_set_to_none_after_construction_is_linear():
    # keras-io's Grad-CAM removes the last layer's softmax with `layer.activation = None`.
    x = np.array([[1.0, -2.0]], "float32")
    for layer, inputs in (
        (keras.layers.Dense(2, activation="softmax", kernel_initializer="identity"), x),
        (keras.layers.Conv1D(2, 1, activation="softmax", kernel_initializer=_identity), x[None]),
        (keras.layers.EinsumDense("ab,bc->ac", (2,), activation="softmax",
                                  kernel_initializer="identity"), x),
    ):  # fmt: skip
        layer.activation = None
        np.testing.assert_allclose(layer(inputs).numpy().reshape(x.shape), x)


def test_history_params_hold_verbose_as_given():
    # keras-io's MNIST convnet fits with the default verbose="auto"; Keras keeps "auto".
    model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
    model.compile("sgd", "mse")
    x, y = np.ones((4, 2), "float32"), np.ones((4, 1), "float32")
    assert model.fit(x, y).params == {"epochs": 1, "steps": 1, "verbose": "auto"}
    assert model.fit(x, y, verbose=0).params["verbose"] == 0


def test_output_of_a_layer_with_several_outputs_is_a_flat_list():
    # keras-io's involution example probes `get_layer(name).output` of a two-output layer.
    class Two(keras.layers.Layer):
        def call(self, x):
            return x * 2.0, {"plus": x + 1.0}

    inputs = keras.Input((3,))
    layer = Two()
    doubled, rest = layer(inputs)
    assert isinstance(layer.output, list) and len(layer.output) == 2
    assert layer.output[0] is doubled and layer.output[1] is rest["plus"]
    dense = keras.layers.Dense(2)
    assert dense(inputs) is dense.output
