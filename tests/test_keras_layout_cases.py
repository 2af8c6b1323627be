"""Three layouts of Keras 3's weights files that minikeras once refused, both ways.

- An attribute set twice (`self.proj = Dense(3)`, then `self.proj = Dense(4)`):
  Keras's tracker keeps the first layer in the model's `layers`, so its
  `layers` container names shift (`dense` for the first, never built and
  written as an empty group, `dense_2` for the second).
- Nested lists, dicts and tuples of layers: `blocks/container_1/dense`.
- A functional subclass holding a layer outside its graph: at its attribute,
  after the graph's `layers`.

The expected paths are written out by hand (as Keras 3.15.1 writes them,
`keras/src/saving/saving_lib.py`); the files are crossed with Keras itself
(save_weights / load_weights and `.keras`) when it is importable.
"""

import functools
import os
import zipfile

import numpy as np
import pytest

import minikeras as mk
from minikeras.saving import keras_layout

X = np.linspace(-1.0, 1.0, 6, dtype="float32").reshape(3, 2)


@functools.cache
def _classes(api):
    """The three models, written once for minikeras and once for Keras (same code)."""
    register = api.saving.register_keras_serializable(package="layout_cases")

    @register
    class Replaced(api.Model):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.proj = api.layers.Dense(3)
            self.head = api.layers.Dense(2)
            self.proj = api.layers.Dense(4)  # the first `proj` stays tracked, never built

        def call(self, inputs):
            return self.head(self.proj(inputs))

    @register
    class Nested(api.Model):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            dense = api.layers.Dense
            self.blocks = [
                [dense(2), dense(3)],
                [dense(4)],
                dense(1),
                {"x": dense(2), "y": (dense(1),)},
            ]

        def call(self, inputs):
            b = self.blocks
            for layer in (b[0][0], b[0][1], b[1][0], b[2], b[3]["x"], b[3]["y"][0]):
                inputs = layer(inputs)
            return inputs

    @register
    class WithAux(api.Model):
        def __init__(self, **kwargs):
            inputs = api.Input((2,))
            super().__init__(inputs, api.layers.Dense(3)(inputs), **kwargs)
            self.aux = api.layers.Dense(5)  # outside the graph
            self.aux.build((None, 3))

    return {"replaced": Replaced, "nested": Nested, "with_aux": WithAux}


def _model(api, name):
    model = _classes(api)[name]()
    model(X)
    return model


# The groups Keras 3.15.1 writes for each (with the number of weights in each).
EXPECTED = {
    "replaced": {
        "vars": 0, "head/vars": 2, "layers/dense/vars": 0, "layers/dense_2/vars": 2,
    },
    "nested": {
        "vars": 0, "blocks/container/dense/vars": 2, "blocks/container/dense_1/vars": 2,
        "blocks/container_1/dense/vars": 2, "blocks/dense/vars": 2,
        "blocks/container_2/dense/vars": 2, "blocks/container_2/container/dense/vars": 2,
    },
    "with_aux": {
        "vars": 0, "layers/input_layer/vars": 0, "layers/dense/vars": 2, "aux/vars": 2,
    },
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_the_groups_are_where_keras_writes_them(name):
    groups = keras_layout.variable_groups(_model(mk, name))
    assert {path: len(variables) for path, variables in groups} == EXPECTED[name]


def test_a_replaced_layer_stays_in_layers_in_assignment_order_as_kerass_tracker_keeps_it():
    model = _model(mk, "replaced")
    first_proj = model.layers[0]
    assert model.layers == [first_proj, model.head, model.proj] and not first_proj.built
    assert first_proj.units == 3 and model.proj.units == 4
    # Weights in Keras's `_layers` order (head was assigned before the second proj).
    assert [w.shape for w in model.weights] == [(4, 2), (2,), (2, 4), (4,)]
    placed = {path: layer for path, _, layer in keras_layout.layer_groups(model)}
    assert placed["layers/dense/vars"] is first_proj
    assert placed["layers/dense_2/vars"] is model.proj


def test_deleting_keeps_a_layer_and_a_lists_own_removal_drops_it_as_in_keras():
    model = mk.Model()
    a, b, c = mk.layers.Dense(1), mk.layers.Dense(2), mk.layers.Dense(3)
    model.a = a
    model.blocks = [b, c]
    del model.a  # (Keras's __delattr__ untracks Variables only)
    model.blocks.pop()  # (Keras's TrackedList.pop untracks)
    assert model.layers == [a, b]


def test_a_plain_layer_saves_only_what_it_holds_now():
    # Keras's walk skips a Layer's private `_layers`: the replaced layer of a layer
    # that is not a model is in no group.
    class Block(mk.layers.Layer):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.proj = mk.layers.Dense(3)
            self.proj = mk.layers.Dense(4)

        def call(self, inputs):
            return self.proj(inputs)

    inputs = mk.Input((2,))
    model = mk.Model(inputs, Block()(inputs))
    paths = [path for path, _, _ in keras_layout.layer_groups(model)]
    assert paths == [
        "vars", "layers/input_layer/vars", "layers/block/vars", "layers/block/proj/vars",
    ]  # fmt: skip


def test_a_file_written_with_the_flat_container_names_still_loads(tmp_path):
    """minikeras wrote nested containers' layers in one flat container before."""
    h5py = pytest.importorskip("h5py")
    model = _model(mk, "nested")
    rng = np.random.default_rng(0)
    values = [rng.normal(size=w.shape).astype("float32") for w in model.weights]
    flat = ["dense", "dense_1", "dense_2", "dense_3", "dense_4", "dense_5"]
    with h5py.File(tmp_path / "flat.weights.h5", "w") as file:
        file.create_group("vars")
        for index, name in enumerate(flat):
            group = file.create_group(f"blocks/{name}/vars")
            group["0"], group["1"] = values[2 * index], values[2 * index + 1]
    fresh = _model(mk, "nested")
    fresh.load_weights(tmp_path / "flat.weights.h5")
    for weight, value in zip(fresh.weights, values):
        np.testing.assert_array_equal(weight.numpy(), value)


def test_a_layer_placed_before_still_counts_in_a_containers_names():
    # Keras 3.15.1 writes alpha/vars and blocks/dense_1/vars for this model.
    model, shared = mk.Model(), mk.layers.Dense(2)
    model.alpha = shared
    model.blocks = [shared, mk.layers.Dense(3)]
    model.call = lambda inputs: model.blocks[1](model.alpha(inputs))
    model(X)
    paths = [path for path, variables in keras_layout.variable_groups(model) if variables]
    assert paths == ["alpha/vars", "blocks/dense_1/vars"]


def test_a_file_written_before_a_replaced_layer_kept_its_place_still_loads(tmp_path):
    """minikeras wrote the second `proj` at layers/dense before (Keras: layers/dense_2)."""
    h5py = pytest.importorskip("h5py")
    model = _model(mk, "replaced")
    rng = np.random.default_rng(4)
    values = [rng.normal(size=w.shape).astype("float32") for w in model.weights]
    with h5py.File(tmp_path / "before.weights.h5", "w") as file:
        file.create_group("vars")
        for path, (kernel, bias) in (("head", values[:2]), ("layers/dense", values[2:])):
            group = file.create_group(f"{path}/vars")
            group["0"], group["1"] = kernel, bias
    fresh = _model(mk, "replaced")
    fresh.load_weights(tmp_path / "before.weights.h5")
    for weight, value in zip(fresh.weights, values):
        np.testing.assert_array_equal(weight.numpy(), value)


# --------------------------------------------------------------- against Keras


def _keras():
    os.environ.setdefault("KERAS_BACKEND", "jax")
    return pytest.importorskip("keras")


def _datasets(path):
    import h5py

    found = {}
    with h5py.File(path, "r") as file:
        file.visititems(lambda key, item: found.setdefault(key, getattr(item, "shape", None)))
    return found


def _same(ours, theirs, keras):
    assert len(ours.weights) == len(theirs.weights)
    for mine, keras_weight in zip(ours.weights, theirs.weights):
        np.testing.assert_array_equal(mine.numpy(), keras.ops.convert_to_numpy(keras_weight))
    expected = keras.ops.convert_to_numpy(theirs(X))
    np.testing.assert_allclose(ours(X).numpy(), expected, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_keras_writes_the_same_file_and_weights_files_cross_both_ways(name, tmp_path):
    keras = _keras()
    theirs, ours = _model(keras, name), _model(mk, name)
    rng = np.random.default_rng(1)
    theirs.set_weights([rng.normal(size=w.shape).astype("float32") for w in theirs.weights])
    theirs.save_weights(tmp_path / "keras.weights.h5")
    ours.load_weights(tmp_path / "keras.weights.h5")
    _same(ours, theirs, keras)
    ours.save_weights(tmp_path / "ours.weights.h5")
    assert _datasets(tmp_path / "ours.weights.h5") == _datasets(tmp_path / "keras.weights.h5")
    fresh = _model(keras, name)
    fresh.load_weights(tmp_path / "ours.weights.h5")
    _same(ours, fresh, keras)


def _weights_h5(path, tmp_path, name):
    with zipfile.ZipFile(path) as archive:
        (tmp_path / name).write_bytes(archive.read("model.weights.h5"))
    return _datasets(tmp_path / name)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_keras_files_cross_both_ways_with_the_optimizers_state(name, tmp_path):
    keras = _keras()
    theirs = _model(keras, name)
    theirs.compile(optimizer=keras.optimizers.Adam(0.01), loss="mse")
    y = np.linspace(0.5, 1.5, 3 * theirs(X).shape[-1], dtype="float32").reshape(3, -1)
    theirs.fit(X, y, epochs=1, verbose=0)
    theirs.save(tmp_path / "keras.keras")
    _classes(mk)  # (registers minikeras's twins of the classes the file names)
    ours = mk.models.load_model(tmp_path / "keras.keras")
    _same(ours, theirs, keras)
    ours.save(tmp_path / "ours.keras")
    assert _weights_h5(tmp_path / "ours.keras", tmp_path, "a.h5") == _weights_h5(
        tmp_path / "keras.keras", tmp_path, "b.h5"
    )
    again = keras.models.load_model(tmp_path / "ours.keras")
    _same(ours, again, keras)
    # The optimizer's state came across both ways: one more step gives the same weights.
    for model in (theirs, ours, again):
        model.fit(X, y, epochs=1, verbose=0, shuffle=False)
    for mine, one, other in zip(ours.weights, theirs.weights, again.weights):
        expected = keras.ops.convert_to_numpy(one)
        np.testing.assert_allclose(mine.numpy(), expected, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(keras.ops.convert_to_numpy(other), expected, rtol=1e-6)
