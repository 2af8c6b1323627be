""".keras files of models with ops on symbolic tensors, both ways against Keras 3.

The same graph is built with `keras.ops` and with `minikeras.ops` (their
functions share names); a file written by one is loaded by the other and
must give the same outputs. Needs Keras (skipped without it), except the
refusal of an op Keras has no operation for.
"""

import json
import zipfile

import numpy as np
import pytest

import minikeras as mk

RNG = np.random.default_rng(0)
X = RNG.normal(size=(5, 4)).astype("float32")
Z = (RNG.normal(size=(5, 4)) + 3.0).astype("float32")  # (positive: log and sqrt of it)


def _graph(ops, x, z):
    """Every op of the Keras mapping the assignment lists, on two inputs of shape (None, 4)."""
    a = (x + z) * 2.0 - z / 3.0
    a = -a + abs(x) ** 2.0
    a = ops.add(ops.divide(a, z), ops.multiply(ops.negative(x), ops.abs(z)))
    a = ops.subtract(a, ops.power(z, 0.5)) + ops.greater(x, z) + ops.less(x, 0.0)
    b = ops.mean(a, axis=-1, keepdims=True) + ops.sum(x, axis=1, keepdims=True)
    b = b + ops.max(z, axis=-1, keepdims=True) - ops.min(z, axis=-1, keepdims=True)
    c = ops.concatenate([a, b], axis=-1)  # (None, 5)
    d = ops.stack([x, z], axis=1)  # (None, 2, 4)
    d = ops.transpose(d, (0, 2, 1))  # (None, 4, 2)
    d = ops.reshape(d, (-1, 8))
    e = ops.squeeze(ops.expand_dims(x, 1), axis=1)
    e = ops.relu(e) + ops.sigmoid(e) + ops.tanh(e) + ops.softmax(e, axis=-1)
    f = ops.exp(x / 4.0) + ops.log(z) + ops.sqrt(z) + ops.square(x)
    g = ops.maximum(e, f) - ops.minimum(e, 0.5)
    h = ops.where(x > 0.0, g, ops.cast(x < z, "float32"))
    k = ops.cast(ops.equal(x, z), "float32") + ops.cast(ops.not_equal(x, 0.0), "float32")
    k = k + ops.cast(ops.greater_equal(z, x), "float32") + ops.cast(ops.less_equal(x, z), "float32")
    m = ops.reshape(ops.matmul(ops.expand_dims(h + k, 1), ops.expand_dims(x, 2)), (-1, 1))
    m = m + (ops.expand_dims(x, 1) @ ops.expand_dims(z, 2))[:, :, 0]
    return ops.concatenate([c, d, m, x[:, 1:3], z[..., :1]], axis=-1)


def _keras_model(keras):
    x, z = keras.Input((4,), name="x"), keras.Input((4,), name="z")
    out = keras.layers.Dense(2, name="head")(_graph(keras.ops, x, z))
    return keras.Model([x, z], out)


def _minikeras_model():
    x, z = mk.Input((4,), name="x"), mk.Input((4,), name="z")
    out = mk.layers.Dense(2, name="head")(_graph(mk.ops, x, z))
    return mk.Model([x, z], out)


def test_a_keras_model_of_ops_loads_with_the_same_outputs(tmp_path):
    keras = pytest.importorskip("keras")
    model = _keras_model(keras)
    path = tmp_path / "keras_ops.keras"
    model.save(path)
    expected = np.asarray(model.predict([X, Z], verbose=0))
    loaded = mk.saving.load_model(path)
    np.testing.assert_allclose(loaded([X, Z]).numpy(), expected, rtol=1e-5, atol=1e-5)
    assert [op.name for op in loaded.operations] == [op.name for op in model.operations]
    assert [type(op).__name__ for op in loaded.operations] == [
        type(op).__name__ for op in model.operations
    ]
    assert [layer.name for layer in loaded.layers] == [layer.name for layer in model.layers]


def test_a_minikeras_model_of_ops_loads_in_keras_with_the_same_outputs(tmp_path):
    keras = pytest.importorskip("keras")
    model = _minikeras_model()
    path = tmp_path / "minikeras_ops.keras"
    model.save(path)
    loaded = keras.saving.load_model(path)
    expected = model([X, Z]).numpy()
    np.testing.assert_allclose(
        np.asarray(loaded.predict([X, Z], verbose=0)), expected, rtol=1e-5, atol=1e-5
    )
    assert [type(op).__name__ for op in loaded.operations] == [
        type(op).__name__ for op in model.operations
    ]


def test_the_written_nodes_are_keras_s(tmp_path):
    x = mk.Input((3,), name="x")
    model = mk.Model(x, mk.ops.mean(x[:, 1:] * 2.0, axis=-1, keepdims=True))
    model.save(tmp_path / "m.keras")
    with zipfile.ZipFile(tmp_path / "m.keras") as archive:
        layers = json.loads(archive.read("config.json"))["config"]["layers"]
    item, multiply, mean = layers[1:]
    assert (item["module"], item["class_name"], item["registered_name"]) == (
        "keras.src.ops.numpy", "GetItem", "GetItem",
    )  # fmt: skip
    assert item["inbound_nodes"][0]["args"][1] == [
        {"class_name": "__slice__", "config": {"start": None, "stop": None, "step": None}},
        {"class_name": "__slice__", "config": {"start": 1, "stop": None, "step": None}},
    ]
    assert multiply["inbound_nodes"][0]["args"][1] == 2.0
    assert mean["config"] == {"name": mean["name"], "axis": -1, "keepdims": True}
    assert len(mean["inbound_nodes"][0]["args"]) == 1


def test_an_op_keras_has_no_operation_for_is_refused_at_save(tmp_path):
    x = mk.Input((3,))
    model = mk.Model(x, mk.ops.dense(x, np.ones((3, 2), "float32").tolist()))
    with pytest.raises(ValueError, match=r"minikeras\.ops\.dense .* Lambda layer"):
        model.save(tmp_path / "m.keras")
    model.save(tmp_path / "m.minikeras")  # (minikeras's own format holds it)
    loaded = mk.saving.load_model(tmp_path / "m.minikeras")
    np.testing.assert_allclose(loaded(X[:, :3]).numpy(), X[:, :3] @ np.ones((3, 2)), rtol=1e-6)


def test_constant_arrays_of_op_nodes_are_written_as_keras_writes_them(tmp_path):
    x = mk.Input((3,), name="x")
    scale = np.array([1.0, 2.0, 3.0], "float32")
    model = mk.Model(x, x * scale + mk.Tensor([0.5, 0.0, -0.5]))
    data = X[:, :3]
    expected = data * scale + np.array([0.5, 0.0, -0.5])
    for name in ("m.keras", "m.minikeras"):
        model.save(tmp_path / name)
        loaded = mk.saving.load_model(tmp_path / name)
        np.testing.assert_allclose(loaded(data).numpy(), expected, rtol=1e-6)
    with zipfile.ZipFile(tmp_path / "m.keras") as archive:
        layers = json.loads(archive.read("config.json"))["config"]["layers"]
    assert layers[1]["inbound_nodes"][0]["args"][1] == {
        "class_name": "__numpy__", "config": {"value": [1.0, 2.0, 3.0], "dtype": "float32"},
    }  # fmt: skip
    keras = pytest.importorskip("keras")
    in_keras = keras.saving.load_model(tmp_path / "m.keras")
    np.testing.assert_allclose(in_keras.predict(data, verbose=0), expected, rtol=1e-6)
